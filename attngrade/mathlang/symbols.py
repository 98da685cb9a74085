"""Per-part symbol tables: the whitelist of names an answer may use.

A table maps every spelling a student may use (`\\beta`, `beta`, `β`; `u_{a}`, `u_a`)
to one canonical symbol with a kind and a shape. Nothing outside the table is ever
turned into a sympy object, except the one free "large constant" a part may allow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Mapping

import sympy

from ..errors import ConfigError

KINDS = ("scalar", "vector", "matrix", "identity", "function")

# Greek letters may be typed as LaTeX commands, ASCII words or Unicode characters.
_GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon",
    "ζ": "zeta", "η": "eta", "θ": "theta", "κ": "kappa", "λ": "lambda",
    "μ": "mu", "µ": "mu", "ν": "nu", "ξ": "xi", "π": "pi", "ρ": "rho",
    "σ": "sigma", "τ": "tau", "φ": "phi", "ϕ": "phi", "χ": "chi", "ψ": "psi",
    "ω": "omega", "Σ": "Sigma", "Ω": "Omega", "Φ": "Phi", "Θ": "Theta",
    "Λ": "Lambda", "Γ": "Gamma", "Δ": "Delta", "Π": "Pi", "Ψ": "Psi",
}
GREEK_NAMES = frozenset(_GREEK.values()) | {"varphi", "varepsilon", "Beta", "ell"}

# Greek letters students use for the Latin letter of a vector (the keys k as kappa).
_TRANSLITERATED = {"kappa": "k", "nu": "v", "upsilon": "u", "chi": "x"}
_MEMBER = re.compile(r"^([^\W\d_]+)_([A-Za-z0-9]{1,3})$")
_NAME = re.compile(r"^(\\?[^\W\d_]+)(?:_\{?(\\?[^\W_]+)\}?)?(?:\^\{\((\w+)\)\})?$")
_LABEL_FIRST = re.compile(r"^(\\?[^\W\d_]+)(\^\{\(\w+\)\})(_\{?\\?[^\W_]+\}?)$")  # q^{(i)}_j is q_j^{(i)}


def normalize_name(text: str) -> str:
    """One spelling per name: `\\mu_{a}`, `mu_a`, `μ_a` all become `mu_a`; a label written before
    the index (`q^{(pos)}_i`) is the label after it (`q_i^{(pos)}`)."""
    text = text.strip()
    if "^{(" in text and not text.endswith(")}"):
        text = _LABEL_FIRST.sub(lambda m: m.group(1) + m.group(3) + m.group(2), text)
    m = _NAME.match(text)
    if not m:
        return text.strip()
    base, sub, label = m.group(1), m.group(2), m.group(3)
    if base.startswith("\\") and base[1:] in GREEK_NAMES:
        base = base[1:]  # \beta is beta; an unknown command such as \x stays unknown
    base = "".join(_GREEK.get(ch, ch) for ch in base) if not base.isascii() else base
    if base == "varphi":
        base = "phi"
    suffix = f"^{label}" if label else ""
    if sub:
        sub = sub[1:] if sub.startswith("\\") and sub[1:] in GREEK_NAMES else sub
        sub = "".join(_GREEK.get(ch, ch) for ch in sub)
        return f"{base}_{sub}{suffix}"
    return base + suffix


def _dim(value: Any) -> sympy.Expr:
    if isinstance(value, int):
        return sympy.Integer(value)
    return sympy.Symbol(str(value), integer=True, positive=True)


@dataclass(frozen=True)
class SymbolSpec:
    """One declared name. `shape` is (rows, cols) for vectors and matrices."""

    name: str
    kind: str = "scalar"
    shape: tuple[Any, Any] | None = None
    aliases: tuple[str, ...] = ()
    assumptions: frozenset[str] = frozenset()
    family: str | None = None  # an orthogonal family, e.g. the u's of one part
    norm: str | None = None  # the scalar that is the norm of every family member
    note: str | None = None  # said when this symbol was typed by an alias
    alias_note: Mapping[str, str] = field(default_factory=dict)
    define: str | None = None  # a shorthand, e.g. x_1 reads as `u_d + u_b`
    arity: int = 1  # functions only
    result: str = "scalar"  # functions only: scalar | vector | matrix | same (shape of its argument)
    params: Mapping[str, Any] = field(default_factory=dict)  # functions defined by `define`: name -> spec
    impl: str | None = None  # functions only: a built-in numeric implementation
    impl_params: Mapping[str, str] = field(default_factory=dict)  # impl parameter -> scalar symbol
    # A family with more members than the part names (keys k_1..k_n of which k_a and k_b
    # matter): other members a student may name (k_c, k_i), read with this note.
    others: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ConfigError(f"symbol {self.name}: kind must be one of {', '.join(KINDS)}")
        needs_shape = self.kind in ("vector", "matrix", "identity") or (
            self.kind == "function" and self.result in ("vector", "matrix"))
        if needs_shape and self.shape is None:
            raise ConfigError(f"symbol {self.name}: a {self.kind} needs a shape")
        if self.others is not None:
            try:
                self.others.format(name="x")  # used while grading: a broken note must fail here
            except (KeyError, IndexError, ValueError) as err:
                raise ConfigError(f"symbol {self.name}: 'others' may use only {{name}} (write {{{{ and }}}} for "
                                  f"braces): {err!r}") from None

    @cached_property
    def dims(self) -> tuple[sympy.Expr, sympy.Expr] | None:
        if self.shape is None:
            return None
        return (_dim(self.shape[0]), _dim(self.shape[1]))

    @cached_property
    def sympy(self) -> Any:
        """The sympy object this name reads as (built once per table)."""
        if self.kind == "scalar":
            kwargs = {a: True for a in self.assumptions if a in ("positive", "integer", "real")}
            if not kwargs:
                kwargs = {"real": True}
            return sympy.Symbol(self.name, **kwargs)
        if self.kind == "identity":
            return sympy.Identity(self.dims[0])
        if self.kind == "function":
            return sympy.Function(self.name)
        return sympy.MatrixSymbol(self.name, *self.dims)


class SymbolTable:
    """The names one answer field may use, resolved from any accepted spelling."""

    def __init__(self, specs: list[SymbolSpec], *, free_scalar: bool = False, juxtaposed_inner: bool = False):
        self.specs: dict[str, SymbolSpec] = {}
        # Where a course writes q_i k_j for a dot product, two juxtaposed column
        # vectors read as their inner product (with a note) instead of an error.
        self.juxtaposed_inner = juxtaposed_inner
        self._lookup: dict[str, tuple[str, str | None]] = {}
        self.free_scalar = free_scalar
        self._open = {name.split("_")[0]: spec for spec in specs if spec.others
                      for name in (spec.name, *spec.aliases)}
        self._others: dict[str, SymbolSpec] = {}
        for spec in specs:
            if spec.name in self.specs:
                raise ConfigError(f"symbol {spec.name} is declared twice")
            self.specs[spec.name] = spec
            self._lookup[normalize_name(spec.name)] = (spec.name, None)
        for spec in specs:
            for alias in spec.aliases:
                note = spec.alias_note.get(alias) or spec.note
                self._lookup.setdefault(normalize_name(alias), (spec.name, note))

    @classmethod
    def from_data(cls, data: Mapping[str, Any] | None, *, free_scalar: bool = False,
                  juxtaposed_inner: bool = False) -> "SymbolTable":
        """Build from the `symbols:` mapping of a problem file."""
        specs = []
        for name, raw in (data or {}).items():
            raw = dict(raw or {})
            kind = raw.pop("kind", "scalar")
            shape = raw.pop("shape", None)
            if kind == "vector" and shape is None:
                shape = ("d", 1)
            specs.append(
                SymbolSpec(
                    name=str(name),
                    kind=kind,
                    shape=tuple(shape) if shape is not None else None,
                    aliases=tuple(str(a) for a in raw.pop("aliases", ())),
                    assumptions=frozenset(raw.pop("assumptions", ())),
                    family=raw.pop("family", None),
                    norm=raw.pop("norm", None),
                    note=raw.pop("note", None),
                    define=raw.pop("define", None),
                    arity=int(raw.pop("arity", 1)),
                    result=raw.pop("result", "scalar"),
                    params=dict(raw.pop("params", {}) or {}),
                    impl=raw.pop("impl", None),
                    impl_params=dict(raw.pop("impl_params", {}) or {}),
                    others=raw.pop("others", None),
                )
            )
            if raw:
                raise ConfigError(f"symbol {name}: unknown keys {sorted(raw)}")
        return cls(specs, free_scalar=free_scalar, juxtaposed_inner=juxtaposed_inner)

    def resolve(self, text: str) -> tuple[SymbolSpec, str | None] | None:
        """The spec a spelling names, and a note if it was a lenient alias."""
        word = normalize_name(text)
        hit = self._lookup.get(word)
        if hit is None:
            return self._other_member(word) or self._respelled(word)
        name, note = hit
        return self.specs[name], note

    def _respelled(self, word: str) -> tuple[SymbolSpec, str | None] | None:
        """Two spellings the reader is sure of, each said in a note: a size in the other case (`m` where the
        part says `M`, when no free constant could be meant and no `m` is declared), and the keys written with
        the Greek letter of their Latin one (`\\kappa_a` for `k_a`, where no kappa is declared)."""
        base, sep, sub = word.partition("_")
        if len(base) == 1 and base.isascii() and base.isalpha() and not self.free_scalar:
            spec = self.specs.get(base.swapcase() + sep + sub)
            if spec is not None and spec.kind == "scalar" and spec.define is None:
                return spec, f"read {word} as {spec.name} (the part's name for it)"
        latin = _TRANSLITERATED.get(base)
        hit = self._lookup.get(latin + sep + sub) if latin and sep else None
        if hit is not None and self.specs[hit[0]].kind in ("vector", "matrix"):
            return self.specs[hit[0]], f"read \\{base}{sep}{sub} as {hit[0]}"
        return None

    def _other_member(self, word: str) -> tuple[SymbolSpec, str | None] | None:
        """k_c or k_i where the part names k_a, k_b of the keys k_1..k_n: one more member."""
        m = _MEMBER.match(word)
        template = self._open.get(m.group(1)) if m else None
        if template is None:
            return None
        if word not in self._others:
            self._others[word] = replace(template, name=word, aliases=(), alias_note={}, others=None,
                                         note=template.others.format(name=word))
        spec = self._others[word]
        return spec, spec.note

    def others(self, expr: Any) -> list[SymbolSpec]:
        """The undeclared family members an expression names, in name order.

        Found from the expression itself (not from what this table has resolved), so a
        worker process that did not parse the answer finds the same members.
        """
        if not self._open:
            return []
        found = []
        for name in sorted({str(s) for s in getattr(expr, "free_symbols", ()) if isinstance(s, sympy.MatrixSymbol)}):
            hit = None if name in self.specs else self._other_member(name)
            if hit is not None:
                found.append(hit[0])
        return found

    def names(self) -> list[str]:
        """Declared names, for 'this part declares: ...' messages."""
        return list(self.specs)

    def without(self, name: str) -> "SymbolTable":
        """The same table minus one name (used to expand shorthands safely)."""
        return SymbolTable([s for s in self.specs.values() if s.name != name], free_scalar=False)

    def by_family(self, family: str) -> list[SymbolSpec]:
        return [s for s in self.specs.values() if s.family == family]

    def scalars(self) -> list[SymbolSpec]:
        return [s for s in self.specs.values() if s.kind == "scalar"]
