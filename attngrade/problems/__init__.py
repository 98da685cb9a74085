"""The problem bank: homeworks and problems as data files, loaded into records.

Problems live in `library/` and can be reused by several homeworks (`homeworks/`).
Loading reads YAML with the safe loader and validates every key; it never runs code.
Every check's params are validated against what the check declares, and the check
prepares what it can (keys of the problem parsed, targets built) once, here: a
broken problem file is a ConfigError naming the file, the part and the parameter,
raised before any student is graded.

The bundled bank is the package's own folder; `Bank(path)` reads one laid out the
same way anywhere on disk.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any, Mapping

import yaml

from ..checkers import REGISTRY
from ..checkers.instances import check_functions
from ..errors import ConfigError
from ..mathlang import SymbolTable
from ..records import FIELD_KINDS, CheckSpec, Field, Homework, Part, Problem, Unreadable
from ..runtime.text import did_you_mean
from .lines import with_line

SCHEMA = 1


class Bank:
    """A folder with `homeworks/` and `library/` of YAML problem files."""

    def __init__(self, root: Path | None = None):
        self.external = root is not None
        self.root: Any = Path(root) if root is not None else files(__package__)
        self.load_homework = lru_cache(maxsize=None)(self._load_homework)
        self.load_problem = lru_cache(maxsize=None)(self._load_problem)

    def where(self, kind: str, name: str) -> str:
        """How a message names a file of this bank."""
        rel = f"{kind}/{name}.yaml"
        return str(self.root / rel) if self.external else rel

    def _path(self, kind: str, name: str) -> Any:
        return self.root.joinpath(kind, f"{name}.yaml")

    def _read(self, kind: str, name: str) -> dict[str, Any]:
        path = self._path(kind, name)
        where = self.where(kind, name)
        if not path.is_file():
            raise ConfigError(f"no {kind[:-1] if kind.endswith('s') else kind} named '{name}' in the bank "
                              f"({where} does not exist)")
        try:
            data = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except yaml.YAMLError as err:
            raise ConfigError(f"{where} is not valid YAML: {err}") from None
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise ConfigError(f"{where}: expected a mapping with 'schema: {SCHEMA}'")
        return data

    def rubric(self, problem: str, part_id: str) -> list[dict[str, Any]]:
        """The rubric items ({points, text}) a problem file gives one part, if it gives any."""
        try:
            data = self._read("library", problem)
        except (ConfigError, OSError):
            return []
        for raw in data.get("parts") or ():
            if isinstance(raw, dict) and str(raw.get("id")) == part_id and isinstance(raw.get("rubric"), list):
                return [i for i in raw["rubric"] if isinstance(i, dict) and "points" in i and "text" in i]
        return []

    def problem_ids(self) -> list[str]:
        """Every problem a homework of this bank can name."""
        folder = self.root.joinpath("library")
        return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".yaml")) if folder.is_dir() else []

    def homework_ids(self) -> list[str]:
        folder = self.root.joinpath("homeworks")
        if not folder.is_dir():
            return []
        return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".yaml"))

    def _load_homework(self, homework_id: str) -> Homework:
        if homework_id not in self.homework_ids():
            known = ", ".join(self.homework_ids())
            raise ConfigError(f"unknown homework '{homework_id}'; the bank has: {known}")
        data = self._read("homeworks", homework_id)
        where = self.where("homeworks", homework_id)
        only(data, "homework", where)
        problems = []
        for entry in data.get("problems", []):
            entry = {"id": entry} if isinstance(entry, str) else dict(entry)
            only(entry, "problem entry", where)
            selected = entry.get("parts")
            points = entry.get("points", {})
            if "id" not in entry:
                raise ConfigError(f"{where}: every problem entry names its problem with 'id'")
            if not self._path("library", str(entry["id"])).is_file():
                known = self.problem_ids()
                hint = did_you_mean(str(entry["id"]), known)
                raise ConfigError(with_line(f"{where}: no problem '{entry['id']}'{hint}; the problems are: "
                                            + ", ".join(known), where, self._path("homeworks", homework_id)
                                            .read_text(encoding="utf-8")))
            problem = self.load_problem(entry["id"])
            if isinstance(points, (int, float)) and not isinstance(points, bool):  # "2 per question"
                points = {p.id: points for p in problem.parts}
            if not isinstance(points, dict):
                raise ConfigError(f"{where}: problem {entry['id']}: points must be a number or a mapping from part "
                                  "id to points")
            unknown = sorted(set(map(str, points)) - {p.id for p in problem.parts})
            if unknown:
                raise ConfigError(f"{where}: problem {entry['id']} has no parts {unknown} to give points to; its "
                                  "parts are: " + ", ".join(p.id for p in problem.parts))
            overrides = tuple(sorted((str(k), number(v, f"{where}: problem {entry['id']}, part {k}: points"))
                                     for k, v in points.items()))
            problem = self.load_problem(entry["id"], overrides)
            if selected is not None:
                unknown = set(map(str, selected)) - {p.id for p in problem.parts}
                if unknown:
                    raise ConfigError(f"{where}: problem {entry['id']} has no parts {sorted(unknown)}")
                problem = Problem(problem.id, problem.title, problem.source, problem.intro,
                                  tuple(p for p in problem.parts if p.id in set(map(str, selected))))
            problems.append(problem)
        return Homework(id=data["id"], title=data.get("title", ""), course=data.get("course", ""),
                        problems=tuple(problems), unreadable=_unreadable(data.get("unreadable", "pending"), where),
                        anonymous=_anonymous(data.get("anonymous", False), where),
                        ignore=_ignore(data.get("ignore", []), where))

    def _load_problem(self, problem_id: str, points: tuple[tuple[str, float], ...] = ()) -> Problem:
        data = self._read("library", problem_id)
        where = self.where("library", problem_id)
        only(data, "problem", where)
        sets = data.get("symbol_sets", {})
        overrides = dict(points)
        try:
            parts = tuple(_part(raw, sets, overrides, problem_id, where) for raw in data.get("parts", []))
        except ConfigError as err:  # point at the line, as an editor expects
            text = self._path("library", problem_id).read_text(encoding="utf-8")
            raise ConfigError(with_line(str(err), where, text)) from None
        ids = [p.id for p in parts]
        repeated = sorted({pid for pid in ids if ids.count(pid) > 1})
        if repeated:
            raise ConfigError(f"{where}: part ids repeat: {', '.join(repeated)}; give each part an id of its own")
        return Problem(id=data["id"], title=data.get("title", ""), source=data.get("source", ""),
                       intro=data.get("intro", ""), parts=parts)


BUNDLED = Bank()


class HomeworkFolder(Bank):
    """One homework an instructor keeps anywhere on disk.

        DIR/homework.yaml     the homework: id, title, course, problems (as in the bank)
        DIR/problems/*.yaml   its own problem files (a problem not found here comes from the
                              bundled library, so bundled problems can be reused)
        DIR/keys.yaml         the keys (never given to students)
        DIR/gold/NAME.*       instructor gold files, one per gold name (optional)

    The folder is its own solutions folder: `keys_path(DIR, id)` is DIR/keys.yaml.
    """

    def __init__(self, root: Path):
        super().__init__(Path(root))
        self.file = self.root / HOMEWORK_FILE
        if not self.file.is_file():
            raise ConfigError(f"{self.root}: not a homework folder (no {HOMEWORK_FILE} in it)")
        data = self._read("homeworks", "")
        if not isinstance(data.get("id"), str) or not data["id"]:
            raise ConfigError(f"{self.file}: 'id' must name the homework (letters, digits, - and _)")
        self.id = data["id"]

    def _path(self, kind: str, name: str) -> Any:
        if kind == "homeworks":
            return self.file
        own = self.root / "problems" / f"{name}.yaml"
        return own if own.is_file() else BUNDLED._path(kind, name)

    def where(self, kind: str, name: str) -> str:
        return str(self._path(kind, name))

    def homework_ids(self) -> list[str]:
        return [self.id] if hasattr(self, "id") else []

    def problem_ids(self) -> list[str]:
        own = self.root / "problems"
        mine = [p.stem for p in own.glob("*.yaml")] if own.is_dir() else []
        return sorted({*mine, *BUNDLED.problem_ids()})

    def problem_files(self) -> list[str]:
        """The folder's homework and problem files, relative to it (what students may see)."""
        own = sorted(p.relative_to(self.root).as_posix() for p in (self.root / "problems").glob("*.yaml"))
        return [HOMEWORK_FILE, *own]

    def gold(self) -> dict[str, Path]:
        """NAME -> file for every file in DIR/gold (the name is the file's stem)."""
        folder = self.root.absolute() / "gold"  # read where the checks run (a Dask worker)
        return ({p.stem: p for p in sorted(folder.iterdir()) if p.is_file() and not p.name.startswith(".")}
                if folder.is_dir() else {})  # hidden files (.DS_Store) are no one's gold


HOMEWORK_FILE = "homework.yaml"


def open_homework(spec: str) -> tuple[Bank, str | None]:
    """`--homework SPEC`: a homework folder (or its homework.yaml) on disk, else a bundled id."""
    path = Path(spec)
    if path.name == HOMEWORK_FILE and path.is_file():
        path = path.parent
    if path.is_dir():
        folder = HomeworkFolder(path)
        return folder, folder.id
    if spec.endswith((".yaml", ".yml")) or "/" in spec or path.exists():
        raise ConfigError(f"--homework {spec}: not a homework folder (a folder with {HOMEWORK_FILE}) "
                          "nor a homework id (see `grade problems`)")
    return BUNDLED, spec


def homework_ids() -> list[str]:
    return BUNDLED.homework_ids()


def load_homework(homework_id: str) -> Homework:
    """The bundled homework with this id, with its problems loaded."""
    return BUNDLED.load_homework(homework_id)


def load_problem(problem_id: str, points: tuple[tuple[str, float], ...] = ()) -> Problem:
    return BUNDLED.load_problem(problem_id, points)


# What each mapping of a homework or problem file may hold: any other key is a typo (`pionts`,
# `statment`) that would otherwise be dropped without a word, or crash the run later.
KEYS = {
    "homework": ("schema", "id", "title", "course", "problems", "unreadable", "anonymous", "ignore"),
    "problem entry": ("id", "parts", "points"),
    "problem": ("schema", "id", "title", "source", "intro", "symbol_sets", "parts"),
    "part": ("id", "points", "statement", "symbols", "free_scalar", "juxtaposed_inner", "fields", "checks", "rubric"),
    "field": ("kind", "expect", "shape", "options", "percent", "filename", "binary", "max_bytes", "symbols",
              "free_scalar"),
    "check": ("check", "fields", "points", "params", "optional"),
}


def only(data: Mapping[str, Any], what: str, where: str) -> None:
    """Refuse a key `what` does not take, with the likeliest one meant."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}: a {what} must be a mapping")
    for key in data:
        if str(key) not in KEYS[what]:
            hint = did_you_mean(str(key), KEYS[what])
            raise ConfigError(f"{where}: unknown key '{key}' in a {what}{hint}; a {what} takes: "
                              + ", ".join(KEYS[what]))


def number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{what} must be a number, not {value!r}")
    return float(value)


def _part(raw: Mapping[str, Any], sets: Mapping[str, Any], overrides: Mapping[str, float],
          problem_id: str, where: str) -> Part:
    if not isinstance(raw, Mapping) or "id" not in raw:
        raise ConfigError(f"{where}: every part is a mapping with an 'id'")
    pid = str(raw["id"])
    where = f"{where}, part {pid}"
    only(raw, "part", where)
    if "points" not in raw:
        raise ConfigError(f"{where}: the part has no 'points'")
    symbols = _symbols(raw.get("symbols"), sets, where)
    table = SymbolTable.from_data(symbols, free_scalar=bool(raw.get("free_scalar", False)),
                                  juxtaposed_inner=bool(raw.get("juxtaposed_inner", False)))

    check_functions(table, where)
    fields = tuple(_field(name, spec or {}, sets, where) for name, spec in (raw.get("fields") or {}).items())
    names = {f.name for f in fields}
    checks = []
    for c in raw.get("checks", []):
        only(c, "check", where)
        for key in ("check", "fields", "points"):
            if key not in c:
                raise ConfigError(f"{where}: a check without '{key}'")
        unknown = set(c.get("fields", [])) - names
        if unknown:
            raise ConfigError(f"{where}: check {c.get('check')} names unknown fields {sorted(unknown)}")
        optional = tuple(c.get("optional", ()))
        if set(optional) - set(c.get("fields", [])):
            raise ConfigError(f"{where}: check {c.get('check')}: optional fields must be among its fields")
        checks.append(CheckSpec(check=c["check"], fields=tuple(c["fields"]),
                                points=number(c["points"], f"{where}: check {c['check']}: points"),
                                params=c.get("params") or {}, optional=optional))
    points = number(raw["points"], f"{where}: points")
    total = sum(c.points for c in checks)
    if abs(total - points) > 1e-9:
        raise ConfigError(f"{where}: checks add up to {total} points, the part says {points}")
    if pid in overrides:
        scale = float(overrides[pid]) / points if points else 0.0
        checks = [replace(c, points=c.points * scale, scale=c.scale * scale) for c in checks]
        points = float(overrides[pid])
    part = Part(id=pid, points=points, statement=str(raw.get("statement", "")).strip(), fields=fields,
                checks=tuple(checks), table=table, problem=problem_id)
    return prepare_part(part, where)


def prepare_part(part: Part, where: str = "") -> Part:
    """The part with every check's params validated and prepared (ConfigError naming `where`)."""
    where = where or f"part {part.id}"
    return replace(part, checks=tuple(prepare_check(part, spec, where) for spec in part.checks))


def prepare_check(part: Part, spec: CheckSpec, where: str) -> CheckSpec:
    """The spec with its params validated and its check's preparation stored."""
    check = REGISTRY.get(spec.check)
    if check is None:
        hint = did_you_mean(str(spec.check), REGISTRY)
        raise ConfigError(f"{where}: unknown check '{spec.check}'{hint}; the checks are: {', '.join(REGISTRY)}")
    return replace(spec, prepared=check.validate(spec.params, part, spec, where))


def _symbols(ref: Any, sets: Mapping[str, Any], where: str) -> Any:
    if isinstance(ref, str):
        if ref not in sets:
            raise ConfigError(f"{where}: no symbol set '{ref}'")
        return sets[ref]
    return ref


def _field(name: str, spec: Mapping[str, Any], sets: Mapping[str, Any], where: str) -> Field:
    only(spec, "field", f"{where}, field {name}")
    kind = spec.get("kind", "math")
    if kind not in FIELD_KINDS:
        raise ConfigError(f"{where}: field {name} has unknown kind '{kind}'")
    options = {str(k): tuple(str(s) for s in (v or ())) for k, v in (spec.get("options") or {}).items()}
    shape = spec.get("shape")
    table = None
    if spec.get("symbols") is not None:
        table = SymbolTable.from_data(_symbols(spec["symbols"], sets, f"{where}, field {name}"),
                                      free_scalar=bool(spec.get("free_scalar", False)))
    max_bytes = spec.get("max_bytes", Field.max_bytes)
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or not 0 < max_bytes <= 1 << 30:
        raise ConfigError(f"{where}: field {name}: max_bytes must be a whole number of bytes, at most 1 GiB")
    binary = spec.get("binary", False)
    if not isinstance(binary, bool):
        raise ConfigError(f"{where}: field {name}: binary: {binary!r} is not true or false")
    if binary and kind != "file":
        raise ConfigError(f"{where}: field {name}: only a file field may be binary")
    return Field(name=str(name), kind=kind, expect=spec.get("expect"),
                 shape=tuple(shape) if shape else None, options=options,
                 percent=bool(spec.get("percent", False)), filename=spec.get("filename"), table=table,
                 max_bytes=max_bytes, binary=binary)


def _anonymous(value: Any, where: str) -> bool:
    """A homework's `anonymous:`: whether staff grade it without student ids. A YAML boolean as
    written; anything else (a quoted "true", a 1) is refused, never taken for one or the other."""
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: anonymous: {value!r} is not true or false; write 'anonymous: true' (course "
                          "staff grade without student ids in grade review) or leave it out")
    return value


def _ignore(value: Any, where: str) -> tuple[str, ...]:
    """A homework's `ignore:`: file-name patterns (fnmatch: `*.png`, `wandb/*`) of files a submission may
    hold that no part reads and the student is not told of."""
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ConfigError(f"{where}: ignore: {value!r} is not a list of file-name patterns; write e.g. "
                          "ignore: ['*.png', 'wandb/*']")
    return tuple(v.strip() for v in value)


def _unreadable(value: Any, where: str) -> Unreadable:
    """A homework's `unreadable:` policy: what an answer the machine cannot read gets."""
    try:
        return Unreadable(str(value))
    except ValueError:
        raise ConfigError(f"{where}: unreadable: {value!r} is not a policy; write 'pending' (course staff "
                          "grade an unreadable answer) or 'zero' (it gets 0, with the reason)") from None
