"""`grade autograder`: build a Gradescope autograder zip for one homework.

The zip holds, at its root:

    setup.sh                        installs attngrade from the wheel (templates/setup.sh)
    run_autograder                  grades one submission (templates/run_autograder)
    attngrade-autograder.json       the manifest `grade gradescope` reads (manifest.py)
    wheels/attngrade-<v>-*.whl      attngrade itself, built from the source tree
    solutions/<homework>/keys.yaml  the instructor keys, when the homework has keys
    gold/<NAME>/<file>              instructor gold given as --gold NAME=PATH

Keys and gold go into the zip (Gradescope keeps it from students), never into the wheel:
the wheel is what students may install for `grade check`, so it is checked for them.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import zipfile
from importlib import metadata
from importlib.resources import files
from pathlib import Path
from typing import Any, Mapping

import attngrade

from .. import __version__
from ..checkers import REGISTRY
from ..checkers.accuracy import PACKAGED, load_gold
from ..checkers.accuracy import gold_names as accuracy_gold_names
from ..errors import ConfigError
from ..grading import assignment
from ..grading.assignment import reference_of
from ..problems import BUNDLED, HOMEWORK_FILE, Bank, HomeworkFolder
from ..problems.keys import keys_path, load_keys
from ..records import Homework
from ..sandbox import TORCH_CPU_INDEX, TORCH_REQUIREMENT
from .manifest import DEFAULT_VENV, MANIFEST_NAME, NAME, Manifest, check_visibility

# What is copied from the source tree to build the wheel; nothing else can end up in it.
_TREE_FILES = ("pyproject.toml", "setup.py", "setup.cfg", "MANIFEST.in")
_TREE_GLOBS = ("README*", "LICENSE*", "LICENCE*", "COPYING*", "NOTICE*")
_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", "*.egg-info", ".*")
_SAFE_PATH = re.compile(r"^/[A-Za-z0-9_./-]+$")
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # fixed, so the same inputs give the same entries


def build_autograder(homework_id: str, out_path: Path, *, solutions: Path = Path("solutions"),
                     gold: Mapping[str, Path] | None = None, source: Path | None = None,
                     visibility: Mapping[str, str] | None = None, venv: str = DEFAULT_VENV,
                     bank: Bank = BUNDLED) -> Path:
    """Write the autograder zip for `homework_id` to `out_path` and return its path.

    `source` is the attngrade source tree to build the wheel from; by default the tree the
    running attngrade is installed from (an editable install). `visibility` overrides
    when students see parts: {"property": ..., "key": ...} (see manifest.DEFAULT_VISIBILITY).
    """
    homework = bank.load_homework(homework_id)
    solutions = Path(solutions)
    keys = load_keys(solutions, homework)
    assignment(homework, keys, solutions=solutions)  # keys that do not cover every key check: ConfigError
    gold = _check_gold(homework, dict(gold or {}))
    shown = check_visibility(visibility)
    if not _SAFE_PATH.match(venv):
        raise ConfigError(f"venv {venv!r}: use an absolute path of plain characters")
    tree = find_source_tree(source) if source is not None or _installed_from_tree() else None

    with tempfile.TemporaryDirectory(prefix="attngrade-autograder-") as tmp:
        # From a checkout: build the wheel. Installed from a wheel: pack the installed files.
        wheel = build_wheel(tree, Path(tmp)) if tree is not None else wheel_from_installed(Path(tmp))
        check_wheel(wheel, _forbidden(solutions, gold))
        manifest = Manifest(
            homework=homework.id, attngrade=__version__, wheel=f"wheels/{wheel.name}", solutions="solutions",
            gold={name: f"gold/{name}/{_file_name(path)}" for name, path in gold.items()}, visibility=shown,
            homework_folder="homework" if isinstance(bank, HomeworkFolder) else None,
        )
        context = {"homework": homework.id, "version": __version__, "venv": venv, "wheel": manifest.wheel,
                   "torch": _torch_requirement(homework), "torch_index": TORCH_CPU_INDEX,
                   "homework_folder": manifest.homework_folder or ""}
        entries: list[tuple[str, bytes, int]] = [
            ("setup.sh", render("setup.sh", context).encode(), 0o755),
            ("run_autograder", render("run_autograder", context).encode(), 0o755),
            (MANIFEST_NAME, manifest.to_json().encode(), 0o644),
            (manifest.wheel, wheel.read_bytes(), 0o644),
        ]
        if keys is not None:
            entries.append((f"solutions/{homework.id}/keys.yaml", keys_path(solutions, homework.id).read_bytes(),
                            0o644))
        entries += _reference_entries(homework, solutions)
        for name, path in gold.items():
            entries.append((manifest.gold[name], path.read_bytes(), 0o644))
        if isinstance(bank, HomeworkFolder):  # its problem files, never its keys or gold (added above)
            entries += [(f"homework/{rel}", (bank.root / rel).read_bytes(), 0o644) for rel in bank.problem_files()]
        _write_zip(Path(out_path), entries)
    return Path(out_path)


# -- checks before anything is built -----------------------------------------------------
def gold_names(homework: Homework) -> dict[str, list[int]]:
    """Instructor gold the homework's checks can use (the packaged dev gold is not instructor gold)."""
    return {name: lines for name, lines in accuracy_gold_names(homework.parts).items() if name not in PACKAGED}


def point_split(homework: Homework, gold: Mapping[str, Path] | None = None) -> dict[str, float]:
    """The homework's points by who grades them in the autograder: `now` (checked by their
    properties, shown at once), `published` (against a key or instructor gold, shown when grades
    are published), `written` (text answers: Gradescope's manual grading) and `no_gold` (shares
    scored against gold the zip does not hold: they wait for course staff too)."""
    given = set(gold or {}) | set(PACKAGED)
    split = {"now": 0.0, "published": 0.0, "written": 0.0, "no_gold": 0.0}
    for part in homework.parts:
        for spec in part.checks:
            name = (spec.params or {}).get("gold") if spec.check == "accuracy_file" else None
            if spec.check == "manual":
                split["written"] += spec.points
            elif isinstance(name, str) and name not in given:
                split["no_gold"] += spec.points
            elif REGISTRY[spec.check].needs_key or (isinstance(name, str) and name not in PACKAGED):
                split["published"] += spec.points
            else:
                split["now"] += spec.points
    return {kind: round(points, 6) for kind, points in split.items()}


def _check_gold(homework: Homework, gold: dict[str, Path]) -> dict[str, Path]:
    usable = gold_names(homework)
    for name, path in gold.items():
        if name in PACKAGED:
            raise ConfigError(f"--gold {name}: the {name} gold ships with attngrade; it cannot be replaced")
        if not NAME.match(name):
            raise ConfigError(f"--gold {name}: a gold name is letters, digits, '.', '_' or '-'")
        if name not in usable:
            known = ", ".join(sorted(usable)) or "none"
            raise ConfigError(f"--gold {name}: no check of {homework.id} uses a gold named {name!r} "
                              f"(the ones it uses: {known})")
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"--gold {name}: no file at {path}")
        places = load_gold(name, {name: path})  # a broken gold file: ConfigError with the line
        for lines in usable[name]:
            if places is not None and len(places) != lines:
                raise ConfigError(f"--gold {name}: {path} has {len(places)} lines, but the checks of "
                                  f"{homework.id} expect {lines}")
        gold[name] = path
    return gold


def _file_name(path: Path) -> str:
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(path).name).lstrip(".")
    return name or "gold"


# -- the wheel ----------------------------------------------------------------------------
def find_source_tree(source: Path | None = None) -> Path:
    """The attngrade source tree to build the wheel from (a folder with pyproject.toml)."""
    if source is None:
        package = Path(attngrade.__file__).resolve().parent
        tree = package.parent
        if not _is_source_tree(tree):
            raise ConfigError(
                f"attngrade is installed at {package}, not from a source tree, so there is nothing to build "
                "the autograder's wheel from; install attngrade from a checkout (`pip install -e .`) "
                "or pass the checkout with --source DIR")
        return tree
    tree = Path(source).resolve()
    if not _is_source_tree(tree):
        raise ConfigError(f"--source {source}: not an attngrade source tree (expected pyproject.toml naming "
                          "attngrade and the attngrade/ package next to it)")
    return tree


def _installed_from_tree() -> bool:

    return _is_source_tree(Path(attngrade.__file__).resolve().parent.parent)


def wheel_from_installed(workdir: Path) -> Path:
    """A wheel of the installed attngrade, packed from the files its installation recorded.

    So `grade autograder` works from a plain `pip install attngrade`, with no checkout.
    The RECORD is written anew (hashes of what is packed); byte code and installer
    bookkeeping are left out.
    """
    try:
        dist = metadata.distribution("attngrade")
    except metadata.PackageNotFoundError:
        raise ConfigError("attngrade is neither installed as a distribution nor run from a checkout; "
                          "pass the checkout with --source DIR") from None
    info = f"attngrade-{dist.version}.dist-info"
    skip = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}
    wheel = workdir / f"attngrade-{dist.version}-py3-none-any.whl"
    rows = []
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for entry in sorted(dist.files or [], key=str):
            name = str(entry).replace("\\", "/")
            top = name.split("/")[0]
            if (top != "attngrade" and top != info) or "__pycache__" in name or name.endswith(".pyc") \
                    or (top == info and entry.name in skip):
                continue
            data = Path(entry.locate()).read_bytes()
            archive.writestr(zipfile.ZipInfo(name, date_time=_ZIP_DATE), data, zipfile.ZIP_DEFLATED)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            rows.append((name, f"sha256={digest}", str(len(data))))
        if not any(r[0].startswith("attngrade/") for r in rows) or not any(r[0] == f"{info}/WHEEL" for r in rows):
            raise ConfigError(f"the installed attngrade {dist.version} did not record its files; reinstall it with "
                              "pip, or pass a checkout with --source DIR")
        record = io.StringIO()
        csv.writer(record, lineterminator="\n").writerows([*rows, (f"{info}/RECORD", "", "")])
        archive.writestr(zipfile.ZipInfo(f"{info}/RECORD", date_time=_ZIP_DATE), record.getvalue())
    return wheel


def _is_source_tree(tree: Path) -> bool:
    pyproject = tree / "pyproject.toml"
    if not pyproject.is_file() or not (tree / "attngrade" / "__init__.py").is_file():
        return False
    text = pyproject.read_text(encoding="utf-8", errors="replace")
    return re.search(r"""(?m)^\s*name\s*=\s*["']attngrade["']""", text) is not None


def build_wheel(tree: Path, workdir: Path) -> Path:
    """Build the attngrade wheel from a clean copy of the package files of `tree`.

    Only the build files and the `attngrade/` package are copied, so nothing else in the
    checkout (solutions/, tests/, a stale build/ folder) can reach the wheel, and the
    checkout itself is left untouched.
    """
    stage = workdir / "src"
    stage.mkdir(parents=True)
    for name in _TREE_FILES:
        if (tree / name).is_file():
            shutil.copy2(tree / name, stage / name)
    for pattern in _TREE_GLOBS:
        for path in tree.glob(pattern):
            if path.is_file():
                shutil.copy2(path, stage / path.name)
    shutil.copytree(tree / "attngrade", stage / "attngrade", ignore=_IGNORE)
    out = workdir / "wheel"
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(stage)]
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=900, env=env)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise ConfigError(f"building the attngrade wheel failed: {err}") from None
    wheels = sorted(out.glob("attngrade-*.whl"))
    if done.returncode != 0 or len(wheels) != 1:
        tail = "\n".join((done.stderr or done.stdout or "").strip().splitlines()[-15:])
        raise ConfigError(f"building the attngrade wheel from {tree} failed ({' '.join(command)}):\n{tail}")
    return wheels[0]


def _forbidden(solutions: Path, gold: Mapping[str, Path]) -> dict[str, str]:
    """sha256 -> a file that must never be inside the wheel: every solution file and the gold."""
    found: dict[str, str] = {}
    paths = [p for p in sorted(solutions.rglob("*")) if p.is_file()] if solutions.is_dir() else []
    public: set[str] = set()
    if (solutions / HOMEWORK_FILE).is_file():  # a homework folder: its problem files are not secret,
        shown = [solutions / rel for rel in HomeworkFolder(solutions).problem_files()] + [solutions / "README.md"]
        # nor are their copies (the bundled problems they were started from) or what is handed out
        public = {hashlib.sha256(p.read_bytes()).hexdigest() for p in shown if p.is_file()}
        handout = solutions / "handout"
        paths = [p for p in paths if not (p.is_relative_to(handout) and p.name != "keys.yaml")]
    paths += [Path(p) for p in gold.values()]
    for path in paths:
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if data.strip() and (digest not in public or path in gold.values()):
            found[digest] = str(path)
    return found


def check_wheel(wheel: Path, forbidden: Mapping[str, str]) -> None:
    """Refuse a wheel that holds keys, solutions or gold (by name or by content)."""
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            if info.is_dir():
                continue
            parts = info.filename.split("/")
            if "solutions" in parts or parts[-1] == "keys.yaml":
                raise ConfigError(f"the attngrade wheel contains {info.filename}: keys and solutions must never "
                                  "be in it (students install it); the autograder was not written")
            digest = hashlib.sha256(archive.read(info)).hexdigest()
            if digest in forbidden:
                raise ConfigError(f"the attngrade wheel contains {info.filename}, a copy of {forbidden[digest]}: "
                                  "keys, solutions and gold must never be in it; the autograder was not written")


# -- the zip ------------------------------------------------------------------------------
def _reference_entries(homework: Homework, solutions: Path) -> list[tuple[str, bytes, int]]:
    """The reference solution, for a homework whose parts run student code: setup.sh's self-check and every
    run grade it first, to prove the container can run code (setup.sh makes the source folder root's alone)."""
    if not _torch_requirement(homework):
        return []
    reference = reference_of(solutions, homework.id)
    if reference is None:
        return []
    files = [reference] if reference.is_file() else sorted(p for p in reference.rglob("*") if p.is_file()
                                                           and not p.is_symlink())
    base = Path(solutions)
    return [(f"solutions/{path.relative_to(base).as_posix()}", path.read_bytes(), 0o600) for path in files]


def _needs_code(spec: Any) -> bool:
    check = REGISTRY[spec.check]
    if not check.runs_code:
        return False
    fields = check.code_fields(spec) if check.code_fields is not None else spec.fields
    return not all(name in spec.optional for name in fields)


def _torch_requirement(homework: Homework) -> str:
    """The PyTorch the container needs, or "" when no part runs student code. A check whose code is optional
    (a checkpoint beside the predictions) does not make a homework need it: without PyTorch that check says
    so, and the rest of the part is graded."""
    runs_code = any(_needs_code(spec) for part in homework.parts for spec in part.checks)
    return TORCH_REQUIREMENT if runs_code else ""


def render(template: str, context: Mapping[str, str]) -> str:
    """One of templates/ rendered with jinja2 (strict: a missing value is an error)."""
    import jinja2

    text = files(__package__).joinpath("templates", template).read_text(encoding="utf-8")
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)
    env.filters["shquote"] = lambda value: shlex.quote(str(value))
    return env.from_string(text).render(**context)


def _write_zip(out: Path, entries: list[tuple[str, bytes, int]]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    os.close(fd)
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for name, data, mode in entries:
                info = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
                info.create_system = 3  # unix, so that the modes below count
                info.external_attr = (0o100000 | mode) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, data)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
