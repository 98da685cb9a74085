"""The normalization stage: the text a student wrote, made into the text the grammar reads.

Students write an answer inside a sentence (`q = C(k_a + k_b), C \\to \\infty.`), with the
typesetting of their write-up (`\\left(`, `\\big[`, `\\,`, `\\mathrm{softmax}`), in Unicode
(`√d`, `x²`, `β → ∞`) and in the spellings of their course (`\\mathcal{O}`, `I_{d \\times d}`).
This stage takes off what frames the answer, rewrites spellings into the ones the grammar
reads, and records what it did: every change keeps a map back to the original (so errors
still point at what was written), and a change that alters what a reader might take the
answer to be adds a note the student sees.

Each kind of change is one row of `ROWS`; docs/normalization.md is that table, and
tests/mathlang/test_normalize.py holds one test per row. A few rows are carried out where
the knowledge they need lives (the symbol table in the builder, the choice's options in the
reader); their rows say so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from . import frame, frontend, prose
from .macros import Definition
from .rewrite import Rewritten, Rule, apply_edits, run_rules, start
from .symbols import GREEK_NAMES

# Words that are a symbol wherever they stand (`beta` spelled out), never a remark after the answer.
_SPELLED = frozenset(GREEK_NAMES) | {"exp", "log", "sqrt", "sin", "cos", "max", "min"}


@dataclass(frozen=True)
class Row:
    """One row of docs/normalization.md."""

    name: str  # its test is tests/mathlang/test_normalize.py::test_<name>
    what: str  # what is removed or rewritten
    why: str
    written: str  # an example as a student writes it
    read: str  # how it is read
    where: str = "normalize"  # the module that carries it out


ROWS: tuple[Row, ...] = (
    # -- the LaTeX and Unicode front end (frontend.py, macros.py, prose.py), before everything else
    Row("student_macros", r"the student's own \newcommand, \renewcommand, \providecommand, \DeclareMathOperator and "
        r"\def, defined anywhere in the submission (a preamble, a notebook cell) or in the answer, expanded with "
        "their arguments (a note says so; bounded in depth, calls and length)", "students write their notation once",
        r"\newcommand{\vk}{\mathbf{k}} C \vk_a", "C k_a", "macros, frontend"),
    Row("display_environments", "aligned, align*, gather, split, equation (and their kin) as one chain of equalities: "
        "their & and \\\\ only lay it out; a line that does not go on with a relation or an operator is an error",
        "a derivation typeset over lines",
        r"\begin{aligned} V &= \frac{u_b u_b^T}{\beta^2} \\ &= \beta^{-2} u_b u_b^T \end{aligned}", "u_b u_b^T/beta^2",
        "frontend, chain"),
    Row("matrix_environments", r"array (its column spec dropped), smallmatrix, bmatrix*[r] as matrices, also inside "
        r"\left[ \right]; cases is not read (course staff read it)", "every usual matrix environment",
        r"\left[\begin{array}{c} x_1 \\ p_1 \end{array}\right]^T \begin{smallmatrix} p_2 \\ x_2 \end{smallmatrix}",
        "p_1^T x_2 + x_1^T p_2", "frontend"),
    Row("typesetting_wrappers", r"\boxed{...}, \fbox, \textcolor{c}{...} around the answer; \tag{}, \label{}, "
        r"\nonumber", "they frame or number the answer", r"\boxed{q = C k_b} \tag{1}", "C k_b",
        "frontend"),
    Row("unicode_subscripts", "subscript digits and letters as a subscript: q₁, dₖ, Qᵢ", "typed or pasted from a PDF",
        "√dₖ", "sqrt(d)", "frontend"),
    Row("unicode_accents", "a combining or precomposed accent on a letter as \\hat, \\tilde, \\bar: q̂, ĉ",
        "typed or pasted from a PDF", "ĉ k_a", "c k_a", "frontend"),
    Row("unicode_relations", "≈ ≃ ≤ ≥ ≠ … ∑ ⟨ ⟩ as their LaTeX; thin and other Unicode spaces as spaces",
        "typed or pasted from a PDF", "c₂ ≈ x₃", "u_b + u_c", "frontend"),
    Row("table_matrices", "a Markdown table, and rows split by `;` inside one bracket ([a, b; c, d]), as a matrix "
        "(a note says so for a table)", "a matrix written in Markdown or as in MATLAB", r"[x_1; p_1]^T [p_2; x_2]",
        "p_1^T x_2 + x_1^T p_2", "frontend"),
    Row("growth_words", "an order of growth said in words in one symbol of the part: linear, quadratic, cubic in it "
        "(a note says so)", "students answer a cost in words", "quadratic in the sequence length N", "O(N^2)", "prose"),
    Row("inline_math", "a sentence around the formula: `$...$`, `$$...$$`, `\\(...\\)`; words before it that only "
        "introduce it (`so`, `set`, `the answer is`, a numbering), and after it a condition or a remark that adds "
        "nothing (notes say so); words that may change the answer (a negation, a second option, a hedge, arithmetic or "
        "a size in words) make it an error, for course staff", "students answer in sentences",
        r"Set $q = \lambda \mu_a$ for a large $\lambda$.", "lambda mu_a", "prose, frame"),
    Row("leading_words", r"words in front of a formula written without `$`: in \text{...}, or bare words ending in "
        "a connector (`So`, `Set`, `we get`) (a note says so)", "a sentence around the answer",
        r"\text{So } c_2 = x_1", "u_b + u_d", "prose"),
    Row("remarks_after", r"a remark in brackets after the answer, in \text{(...)} or opening with a word such as "
        "`by`, `since` (a note says so), when it asserts nothing", "students say where the answer comes from",
        r"(k+2)^n \text{ (k heads plus two)}", "(2 + k)^n", "prose"),
    Row("bare_labels", r"a label in brackets without braces (q_i^(pos)), a label before the index (q^{(pos)}_i), "
        r"the optional part of a name in brackets (V[\text{soft}]\text{argmax}_\beta), where the part declares "
        "the name", "spellings of a declared name", "q_i^(pos) + k_j^(pos)", "kpos_j + qpos_i",
        "normalize, grammar, symbols"),
    Row("respelled_names", "a size in the other case (m where the part says M, where no constant of the student's "
        "own could be meant) and the Greek letter of a vector's Latin one (\\kappa_a for k_a) (notes say so)",
        "students' own spellings of the part's names", "O(m^2 n)", "O(N M^2)", "symbols"),
    Row("sums", "a sum with limits over the product after it: a summand without the index counted, a polynomial in "
        "the index summed, entries x_{1,k} of vectors over all their entries as inner products; in a chain, a sum in the "
        "student's own notation is a step (not compared); anything else is an error", "students write sums",
        r"\sum_{k=1}^{d} x_{1,k} p_{2,k}", "p_2^T x_1",
        "grammar, sums, parser"),
    Row("block_matrices", "vectors and matrices as the entries of a matrix (a 0 block takes its row's and column's "
        "sizes), [x_1, p_1] as the stacked column; the identity in blocks (I on the diagonal, 0 elsewhere) as I "
        "(a note says so)", "concatenation and block matrices", r"[x_1, p_1] \cdot [p_2, x_2]",
        "p_1^T x_2 + x_1^T p_2", "builder, blocks"),
    Row("divided_constant", "a vector scaled by a constant of the student's own that appears only divided "
        "(\\alpha^{-1/4}) with no condition saying which way it goes: not read (course staff read it)", "it grows the answer only as it tends "
        "to 0, and which way it goes is the student's to say", r"\alpha^{-1/4}(\mu_a + \mu_b)", "(not read)",
        "parser"),
    Row("number_spellings", r"a number as programs print it and people write it: 9.0 out of 500.0, 9 right of 500, "
        r"correct:25.0, total:500.0, 1.8\,\%, 1.8 per cent, words around it that only say what it is",
        "students paste their program's output", "Correct: 7.0 out of 500.0: 1.4000000000000001%", "7.0/500.0",
        "words, reading"),
    Row("referent_words", "a verdict on someone the question quotes (`the second student is wrong`): read by the "
        "part's own phrases for its options where it has them, else an unclear answer", "the question asks about "
        "a claim", "The second student is wrong; pretraining on novels is useful.", "yes", "words, reading, bank"),
    Row("final_period", "a sentence's final period", "answers are written as sentences",
        r"q = C(k_a + k_b).", "C (k_a + k_b)"),
    Row("unicode_symbols", "√ ∞ → ⟶ ≫ ≪ ∈ ℝ ⊗ ∥ ∣ ′ ∗ ∙ ÷ as their LaTeX", "typed or pasted from a PDF",
        "1/√d", "1/sqrt(d)"),
    Row("unicode_powers", "superscript digits, signs and n as a power", "typed or pasted from a PDF",
        "β⁻²", "beta^(-2)"),
    Row("micro_sign", r"\micro (the micro sign µ of siunitx and gensymb) as \mu (a note says so)",
        "students reach for µ's command when they mean μ", r"\micro_{a} + \micro_{b}", "mu_a + mu_b"),
    Row("unicode_transpose", "ᵀ as ^T (a note says so)", "typed or pasted from a PDF", "u_b u_bᵀ", "u_b u_b^T"),
    Row("sizing_macros", r"\left \right \big \Big \bigg \Bigg (and their l, r, m forms) before a bracket; "
        r"\left. and \right.", "they size a bracket and change nothing", r"C\Big(k_a + k_b\Big)", "C (k_a + k_b)"),
    Row("spacing_macros", r"\! \, \; \: \␣ \quad \qquad ~ \displaystyle \textstyle \scriptstyle",
        "spacing and display style carry no meaning", r"C\,(k_a + k_b)", "C (k_a + k_b)"),
    Row("conditions_large", "a condition after the answer that a constant is large: `, C \\to \\infty`, "
        "`(C \\gg 1)`, `\\text{where } C \\text{ is large}`, `for large C`, `where $C > 0$ is large`, of a decorated "
        "constant too (`\\hat{c}`, `C^*`) (a note says so)",
        "the check lets the constant grow anyway", r"C(k_a + k_b), C \to \infty", "C (k_a + k_b)"),
    Row("conditions_small", "a condition that the constant tends to 0: `\\lambda \\to 0^+` (a note says so)",
        "then 1/λ is the large constant, and the check lets it grow",
        r"\frac{1}{\lambda}(k_a + k_b), \lambda \to 0^+", "(1/lambda) (k_a + k_b)", "normalize, parser"),
    Row("words_after", "words after the answer that name no symbol of the part, such as a unit "
        "(a note says so)", "students name what the number counts", r"m(2T - 1) \text{ parameters}", "m (-1 + 2 T)"),
    Row("definition_name", "a name with sub- or superscripts or primes, and `=`, `:=`, `\\approx` after it, "
        "in front (a note says so)", "it names what is answered", r"\alpha_{i,j} = C(k_a + k_b)",
        "C (k_a + k_b)"),
    Row("definition_function", "a function of names and `=` in front, when the function is not one the "
        "part declares (a note says so)", "it names what is answered", r"f(x, y) = x_1^T x_2", "x_1^T x_2",
        "normalize, parser"),
    Row("definition_field_name", "the field's own name and a colon in front (a note says so)",
        "it names what is answered", "encoder: O(M k^2)", "O(M k^2)", "normalize, reading"),
    Row("equality_chain", "the other members of a chain of equalities: each is read and compared with "
        "the last by meaning, which is graded (a note says so; members that differ are an error)",
        "students show a step before the result",
        r"\frac{1}{\beta^2}(u_b u_b^T - u_c u_c^T) = \beta^{-2}u_b u_b^T - \beta^{-2}u_c u_c^T",
        "-u_c u_c^T/beta^2 + u_b u_b^T/beta^2", "normalize, parser, chain"),
    Row("chain_label", "a member in the middle of a chain that is a name the part does not declare "
        "(a note says so)", "it names the answer, as in `c_2 = v_2 = u_a`", "c_2 = v_2 = u_a", "u_a",
        "parser"),
    Row("text_macros", r"\text{} \mathrm{} \operatorname{} \mathit{} \mathsf{} \mathcal{} around a name "
        "(with its subscript)", "typesetting around a name the part declares",
        r"\mathrm{softargmax}_\beta(K^T Q)", "softargmax_beta(K^T Q)"),
    Row("label_superscripts", r"a label superscript in \text{}, or followed by a transpose",
        "the label names the vector; the transpose is the vector's",
        r"k_j^{(\text{pos})\top} q_i^{(\text{pos})}", "kpos_j^T qpos_i"),
    Row("decorated_constant", r"\hat{c}, \tilde{C}, \bar{c} as the letter (a note says so)",
        "a decorated letter is the student's own constant", r"\hat{c}(k_a + k_b)", "c (k_a + k_b)"),
    Row("starred_constant", r"C^*, C^{*}, C^\ast, C^\star, c^{\otimes} as the letter (a note says so)",
        "a starred letter is the student's own constant", "C^*(k_a + k_b)", "C (k_a + k_b)"),
    Row("python_spellings", "A @ B, A.T, x**2 (a note says so)", "written as in numpy",
        "V @ softmax(beta * K.T @ Q)", "V softmax(beta K^T Q)"),
    Row("bigo_spellings", r"\mathcal O, \mathcal{O}, {O}, \operatorname{O}, \mathrm{O}, and \Theta, \Omega "
        "(a note says so) before a bracket, as O", "an order of growth in any usual spelling",
        r"\mathcal O(M k^2)", "O(M k^2)"),
    Row("bigo_brackets", "any bracket after O: O[...], O{...}, O\\{...\\}, O\\left(...\\right)",
        "an order of growth with any bracket", "O[M k^2]", "O(M k^2)"),
    Row("brace_brackets", r"\{ \} as brackets", "a bracket students use for grouping",
        r"\{k + 1\}^n", "(1 + k)^n"),
    Row("function_brackets", "any bracket after a declared function, with its arguments",
        "the argument list of a function", r"K_Gauss[q, k]", "K_Gauss(q, k)", "builder"),
    Row("two_norm", r"the subscript 2 of \|x\|_2", "the norm is the 2-norm already",
        r"\|q\|_2^2", "q^T q"),
    Row("norm_bars", r"single bars |x|, \lvert x \rvert, \vert, \Vert and ‖x‖ as the norm of a vector "
        "(the absolute value of a scalar)", "every usual spelling of a vector's length",
        r"\lvert q \rvert", "sqrt(q^T q)", "parser"),
    Row("identity", r"the identity in any usual font (\mathbb{I}, \mathbf{I}, \mathrm{Id}) or with a size "
        r"subscript (I_d, I_{d \times d}) as I (a note names a size)", "the part declares one identity",
        r"\mathbb{I}_{d \times d}", "I"),
    Row("shape_after_value", r"\in \mathbb{R}^{...} after a value", "it states the value's shape",
        r"V softargmax_\beta(2 K^T Q) \in \mathbb{R}^{n \times t}", "V softargmax_beta(2 K^T Q)"),
    Row("slash_binding", "a product written without spaces after a slash as the denominator (a note says so)",
        "a/2\\sigma^2 means a/(2σ²), as in the homeworks", "m/2T", "m/(2 T)"),
    Row("tight_runs", "names written without spaces: u_bu_b^\\top, x^Tx, Ck_a", "the names are declared",
        r"u_bu_b^\top", "u_b u_b^T"),
    Row("outer_product", r"\otimes (⊗) between two vectors as the outer product", "u ⊗ v is u v^T",
        r"u_b \otimes u_b", "u_b u_b^T", "grammar, builder"),
    Row("max_min", r"\max and \min of scalars, with any bracket", "costs such as O(max(M, N)^2 k)",
        r"\max\{M, N\}", "Max(M, N)", "grammar, builder"),
    Row("choice_words", "a choice read by the words it contains: exactly one option's words (or synonyms) "
        "asserted, a denied option (`not X`, `X is wrong`) not counted; one asserted and denied, two asserted (`X or "
        "Y`, `not only X but Y`), a hedge, or only denied ones is an unclear answer",
        "students answer in a phrase", "an encoder-only network", "encoder", "words, reading"),
    Row("yes_no_words", "a yes/no read by its words, negations read as negations; every answer word in it must say "
        "the same, and anything that says both, hedges, denies twice or says neither is an unclear answer",
        "students answer in a sentence", "No — it can't.", "no",
        "words, reading"),
    Row("number_annotations", "other numbers written with a number, read when every one agrees with it",
        "students show the count behind a percentage", "12.0% (60/500)", "12.0%", "words, reading"),
    Row("shape_forms", "a shape written a-by-b, a \\times b or (a, b), with a remark after",
        "students explain the shape", r"t-by-n (one column per query)", "t × n", "words, reading"),
)

# -- rules before the frame is taken off: Unicode and layout -------------------------------
_UNICODE = {"√": r"\sqrt ", "∞": r"\infty ", "→": r"\to ", "⟶": r"\to ", "≫": r"\gg ", "≪": r"\ll ",
            "∈": r"\in ", "ℝ": r"\mathbb{R}", "⊗": r"\otimes ", "∥": r"\|", "∣": "|", "′": "'", "∗": "*",
            "∙": r"\cdot ", "÷": "/"}
_SUPERSCRIPTS = {"⁰": "0", "¹": "1", "²": "2", "³": "3", "⁴": "4", "⁵": "5", "⁶": "6", "⁷": "7", "⁸": "8",
                 "⁹": "9", "⁺": "+", "⁻": "-", "ⁿ": "n"}
_SIZED = (r"\\(?:left|right|[bB]igg?[lrm]?)\s*(\.|\\[{}|]|\\[lr]?[vV]ert(?![A-Za-z])|\\[lr]angle(?![A-Za-z])"
          r"|\\\||[()\[\]|])")


def _power(m: re.Match) -> str:
    digits = "".join(_SUPERSCRIPTS[ch] for ch in m.group(0))
    return f"^{digits}" if len(digits) == 1 else "^{" + digits + "}"


FRONT: list[Rule] = [
    Rule("unicode_symbols", re.compile("[" + "".join(_UNICODE) + "]"), lambda m: _UNICODE[m.group(0)],
         hint=tuple(_UNICODE)),
    Rule("unicode_powers", re.compile("[" + "".join(_SUPERSCRIPTS) + "]+"), _power,
         lambda m: f"read {m.group(0)} as a power", hint=tuple(_SUPERSCRIPTS)),
    Rule("micro_sign", re.compile(r"\\micro(?![A-Za-z])"), lambda m: r"\mu",
         lambda m: r"read \micro as \mu", hint=("\\micro",)),
    # ^{T}, not ^T: in φ(q)ᵀφ(k) the T must not run into the name after it
    Rule("unicode_transpose", re.compile("ᵀ"), lambda m: "^{T}", lambda m: "read ᵀ as ^T (a transpose)", hint=("ᵀ",)),
    Rule("sizing_macros", re.compile(_SIZED), lambda m: "" if m.group(1) == "." else m.group(1),
         hint=("\\left", "\\right", "\\big", "\\Big")),
    # `\\` (a matrix's row break) is matched first and kept, so `\\,` is never taken for `\,`
    Rule("spacing_macros", re.compile(r"\\\\|\\[,;:! ]|\\q?quad(?![A-Za-z])|~"
                                      r"|\\(?:display|text|script)style(?![A-Za-z])"),
         lambda m: m.group(0) if m.group(0) == "\\\\" else " ", hint=("\\", "~")),
]

# -- rules on the answer itself --------------------------------------------------------------
_NAME = r"[A-Za-z][A-Za-z0-9]*"
_GREEK = r"\\(?:alpha|beta|gamma|delta|epsilon|lambda|mu|sigma|tau|theta|omega)"
_POWER = r"(?:\^\{[A-Za-z0-9 ]*\}|\^[A-Za-z0-9])?"  # a power; a subscripted name may be a vector
_FACTOR = (r"(?:\d+(?:\.\d+)?(?![\d.])|(?:" + _GREEK + r"(?![A-Za-z])|[A-Za-z]+(?![A-Za-z])|[\u0391-\u03a9\u03b1-\u03c9]"
           r"(?![\u0391-\u03a9\u03b1-\u03c9]))" + _POWER + r")")
_SIZE = r"[A-Za-z0-9]+(?:_\{?[A-Za-z0-9]+\}?)?"
_TEXT = r"\\(?:text|textrm|textit|textsf|textnormal|mathrm|mathit|mathsf|mathtt|operatorname\*?|mathcal)"
_OPEN_AFTER = r"(?=\s*(?:[(\[{]|\\\{))"
_BIG_O = r"(?:\\mathcal\s*(?:\{\s*O\s*\}|O)|\\cal\s*O|\\(?:operatorname|mathrm|mathit|mathbf)\s*\{\s*O\s*\})"


def _bigo_brackets(out: Rewritten) -> None:
    """O[...], O{...}: the bracket after O and its match become parentheses."""
    edits = []
    for m in re.finditer(r"(?<![A-Za-z\\])O\s*([\[{])", out.text):
        close = _matching(out.text, m.start(1))
        if close is not None:
            edits += [(m.start(1), m.end(1), "("), (close, close + 1, ")")]
    if edits:
        apply_edits(out, sorted(edits))


def _matching(text: str, open_at: int) -> int | None:
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] in "([{":
            depth += 1
        elif text[i] in ")]}":
            depth -= 1
            if depth == 0:
                return i
    return None


RULES: list[Rule] = [
    # ^{\text{pos}} is the label (pos); ^{(pos)\top} is the label, then a transpose
    Rule("label_superscripts", re.compile(r"\^\s*\{\s*" + _TEXT + r"\s*\{\s*([A-Za-z]{2,})\s*\}\s*\}"),
         lambda m: "^{(" + m.group(1) + ")}", hint=("^",)),
    Rule("text_macros", re.compile(_TEXT + r"\s*\{\s*(\\?[A-Za-z][A-Za-z0-9]*(?:_\{?\s*\\?[A-Za-z0-9]+\s*\}?)?)\s*\}"),
         lambda m: m.group(1), hint=("\\text", "\\math", "\\operatorname")),
    Rule("label_superscripts", re.compile(r"\^\s*\{\s*\(\s*([A-Za-z]+)\s*\)\s*\^?\s*"
                                          r"(\\top|\\intercal|T|\{\s*\\top\s*\}|\{\s*T\s*\}|')?\s*\}"),
         lambda m: "^{(" + m.group(1) + ")}" + ("^{\\top}" if m.group(2) else ""), hint=("^",)),
    Rule("decorated_constant", re.compile(r"\\(?:hat|tilde|bar|widehat|widetilde|overline)\s*\{\s*([A-Za-z])\s*\}"),
         lambda m: m.group(1), lambda m: f"read {m.group(0)} as {m.group(1)}",
         hint=("\\hat", "\\tilde", "\\bar", "\\wide", "\\overline")),
    Rule("starred_constant", re.compile(r"(?<![A-Za-z\\])([A-Za-z])\^(?:\{\s*(?:\*|\\ast|\\star|\\otimes)\s*\}|\*"
                                        r"|\\ast(?![A-Za-z])|\\star(?![A-Za-z]))"),
         lambda m: m.group(1), lambda m: f"read {m.group(0)} as {m.group(1)}", hint=("*", "\\ast", "\\star", "\\otimes")),
    Rule("python_spellings", re.compile(r"(?<=[A-Za-z0-9)\]}'])\s*@\s*(?=[A-Za-z0-9(\[\\])"), lambda m: " ",
         lambda m: "read @ as a matrix product", hint=("@",)),
    Rule("python_spellings", re.compile(r"(?<=[A-Za-z0-9)\]}])\.T(?![A-Za-z0-9_])"), lambda m: "^T",
         lambda m: "read .T as ^T (a transpose)", hint=(".T",)),
    Rule("python_spellings", re.compile(r"\*\*"), lambda m: "^", lambda m: "read ** as ^ (a power)", hint=("**",)),
    Rule("bigo_spellings", re.compile(r"(?:\{\s*(?:" + _BIG_O + r"|O)\s*\}|" + _BIG_O + ")" + _OPEN_AFTER),
         lambda m: "O", hint=("O",)),
    Rule("bigo_spellings", re.compile(r"\\(?:Theta|Omega)" + _OPEN_AFTER + r"|[ΘΩ]" + _OPEN_AFTER),
         lambda m: "O", lambda m: f"read {m.group(0).strip()}(...) as O(...): the question asks for an order of growth",
         hint=("\\Theta", "\\Omega", "Θ", "Ω")),
    Rule("brace_brackets", re.compile(r"\\([{}])"), lambda m: "(" if m.group(1) == "{" else ")", hint=("\\{", "\\}")),
    # \|x\|_2, \|x\|^2_2: the Euclidean norm is the norm already
    Rule("two_norm", re.compile(r"(\\rVert|\\rvert|\\\||\|\||‖|\\Vert|\|)\s*(\^\s*(?:\{\s*2\s*\}|2))?\s*_\s*(?:\{\s*2\s*\}|2)"),
         lambda m: m.group(1) + (m.group(2) or ""), hint=("_",)),
    Rule("identity", re.compile(r"\\(?:mathbb|mathbf|mathrm|boldsymbol|bm|mathcal|mathds|mathit|textbf)\s*\{\s*I\s*\}"
                                r"|(?<![A-Za-z\\])Id(?![A-Za-z0-9_])"), lambda m: "I", hint=("I",)),
    Rule("identity", re.compile(r"(?<![A-Za-z\\])I_(?:\{\s*" + _SIZE + r"(?:\s*(?:\\times|x|,)\s*" + _SIZE + r")?\s*\}"
                                r"|[A-Za-z0-9](?![A-Za-z0-9_]))"),
         lambda m: "I", lambda m: f"read {m.group(0)} as the identity I", hint=("I_",)),
    # x \in \mathbb{R}^{m \times p} after a value: the shape it states is not part of the value
    Rule("shape_after_value", re.compile(r"\s*\\in\s*\\mathbb\s*\{\s*R\s*\}\s*\^\s*\{[^{}]*\}\s*$"), lambda m: "",
         hint=("\\in",)),
    # a/2\sigma^2 is a/(2 sigma^2): juxtaposition binds tighter than a slash, as in the homeworks
    Rule("slash_binding", re.compile(r"/\s*(" + _FACTOR + r"(?:" + _FACTOR + r")+)(?![A-Za-z0-9_{(\\\u0391-\u03a9\u03b1-\u03c9])"),
         lambda m: f"/({m.group(1)})", lambda m: f"read /{m.group(1).strip()} as /({m.group(1).strip()})",
         hint=("/",)),
    # tight runs: u_bu_b (two subscripted names), x^Tx and u^\top v (a transpose, then a name)
    Rule("tight_runs", re.compile(r"(?<![A-Za-z\\])([A-Za-z]_[A-Za-z0-9])(?=[A-Za-z]_[A-Za-z0-9])"),
         lambda m: m.group(1) + " ", passes=8, hint=("_",)),
    Rule("tight_runs", re.compile(r"(\^(?:T|\\top|\{T\}|\{\\top\}))(?=[A-Za-z])"), lambda m: m.group(1) + " ", passes=8,
         hint=("^",)),
    # Ck_a: a single capital juxtaposed with a subscripted name, as a constant times it
    Rule("tight_runs", re.compile(r"(?<![A-Za-z\\_])([A-Z])(?=[a-z]_[A-Za-z0-9])"), lambda m: m.group(1) + " ",
         passes=8, hint=("_",)),
]


def normalize(text: str, *, known: Callable[[str], bool] = lambda name: False,
              names: tuple[str, ...] = (), definitions: tuple[Definition, ...] = (),
              max_length: int = 8000) -> Rewritten:
    """The answer in `text` as the grammar reads it, with its frame set aside.

    `known` says whether a name is one the part declares (or a built-in function), so that
    `m(2T - 1) = ...` is a product and `f(x, y) = ...` a definition; `names` are the field's
    own names (`encoder:` in front of an encoder's cost); `definitions` are the macros the
    student defined in the submission; `max_length` bounds what their expansion may grow to.
    """
    out = start(text)
    frontend.prepare(out, definitions, max_length)
    prose.take_growth_words(out, known)
    prose.take_inline_math(out, known, frame.is_condition)
    run_rules(out, FRONT)
    frame.drop_final_period(out)
    prose.take_leading_words(out, known, _SPELLED)
    frame.take_conditions(out, text)
    prose.take_remark(out, known)
    frame.take_trailing_words(out, text, known, _SPELLED)
    frame.take_definitions(out, text, known, names)
    _bare_labels(out, known)
    _bracketed_prefix(out, known)
    run_rules(out, RULES)
    _bigo_brackets(out)
    return out


# q_i^(pos): a label in brackets without braces, read as q_i^{(pos)} where the part declares that name
_BARE_LABEL = re.compile(r"((?:\\)?[A-Za-z]+_\{?[A-Za-z0-9]{1,3}\}?)\^\(\s*([A-Za-z]{2,12})\s*\)")


def _bare_labels(out: Rewritten, known: Callable[[str], bool]) -> None:
    if "^(" not in out.text:
        return
    edits = [(m.start(), m.end(), f"{m.group(1)}^{{({m.group(2)})}}") for m in _BARE_LABEL.finditer(out.text)
             if known(f"{m.group(1)}^{{({m.group(2)})}}")]
    if edits:
        apply_edits(out, edits)


# V[\text{soft}]\text{argmax}_\beta: the optional part of a name in brackets, read as softargmax_beta
_PREFIX = re.compile(r"\[\s*\\text\s*\{\s*([A-Za-z]{2,12})\s*\}\s*\]\s*\\(?:text|mathrm|operatorname)\s*\{\s*([A-Za-z]{2,20})\s*\}"
                     r"(_(?:\\?[A-Za-z]+|\{\s*\\?[A-Za-z]+\s*\}))?")


def _bracketed_prefix(out: Rewritten, known: Callable[[str], bool]) -> None:
    if "]" not in out.text:
        return
    edits = []
    for m in _PREFIX.finditer(out.text):
        name = m.group(1) + m.group(2)
        if known(name + (m.group(3) or "")):
            edits.append((m.start(), m.end(), f" \\text{{{name}}}{m.group(3) or ''}"))
            out.note(f"read {m.group(0)} as {name}")
    if edits:
        apply_edits(out, edits)


def table_markdown() -> str:
    """The table of docs/normalization.md, from `ROWS`."""
    lines = ["| row | what is removed or rewritten | why | written | read as | where |", "|---|---|---|---|---|---|"]
    for row in ROWS:
        cells = [row.name, row.what, row.why, f"`{row.written}`", f"`{row.read}`", row.where]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)
