"""The load stage: find submissions on disk and read their YAML safely.

A submission is a YAML file, or a folder holding one YAML file plus the files its
parts name. YAML is read with a safe loader that also refuses aliases (the
"billion laughs" bomb) and is size-limited before it is parsed.
"""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import Any, Iterator

import yaml

from .errors import SubmissionError
from .records import Submission

MAX_YAML_BYTES = 2_000_000
YAML_SUFFIXES = (".yaml", ".yml")


_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: same rules, faster


def _refuse_aliases(text: str) -> None:
    """Answers never need anchors or aliases, and aliases are how YAML bombs explode."""
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.AliasEvent):
            raise SubmissionError(
                f"line {event.start_mark.line + 1}: YAML aliases (*name) are not allowed in submissions; "
                "write each answer out in full"
            )


def _decode(data: bytes, path: Path) -> str:
    for bom, codec in ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if data.startswith(bom):
            return data.decode(codec)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise SubmissionError(
            f"byte {err.start} is not UTF-8 text; save the file as UTF-8 and submit it again", path=str(path)
        ) from None


def read_yaml(path: Path) -> Any:
    """Parse one YAML file of untrusted origin."""
    if path.is_symlink():
        raise SubmissionError("is a link; submit the answers file itself", path=str(path))
    if not path.is_file():
        raise SubmissionError("is not a regular file (a folder, pipe or device); submit the answers file itself",
                              path=str(path))
    size = path.stat().st_size
    if size > MAX_YAML_BYTES:
        raise SubmissionError(f"the file is {size} bytes; at most {MAX_YAML_BYTES} are read", path=str(path))
    text = _decode(path.read_bytes(), path)
    if "\x00" in text:
        raise SubmissionError("the file contains NUL bytes: it is binary, or text saved as UTF-16/UTF-32 "
                              "without a byte-order mark; save it as UTF-8 and submit it again", path=str(path))
    try:
        _refuse_aliases(text)
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - the safe loader (C or Python)
    except SubmissionError as err:
        raise SubmissionError(str(err), path=str(path)) from None
    except ValueError:  # an integer literal too long for Python to convert
        raise SubmissionError("a number in the file is too long to read (over 4300 digits); "
                              "shorten it, or put it in quotes", path=str(path)) from None
    except RecursionError:
        raise SubmissionError("the file is nested too deeply", path=str(path)) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(err, "problem", None) or str(err)
        raise SubmissionError(f"{where}not valid YAML ({problem}); fix the file and submit it again",
                              path=str(path)) from None


def load_submission(path: Path) -> Submission:
    """One submission from a YAML file or a submission folder."""
    folder = None
    if path.is_symlink():
        raise SubmissionError("is a link; submit the file or folder itself", path=str(path))
    if path.is_dir():
        yamls = _yaml_files(path)
        if len(yamls) != 1:
            raise SubmissionError(
                f"a submission folder holds exactly one YAML answers file; found {len(yamls)}", path=str(path)
            )
        folder, file = path, yamls[0]
        default_student = path.name
    else:
        file, default_student = path, path.stem
    data = read_yaml(file)
    if not isinstance(data, dict):
        raise SubmissionError("expected a mapping with 'homework' and 'answers'", path=str(file))
    unknown = sorted(set(map(str, data)) - {"homework", "student", "answers"})
    homework = data.get("homework")
    if not isinstance(homework, str) or not homework.strip():
        raise SubmissionError("the file does not say which homework it answers (add 'homework: <id>')",
                              path=str(file))
    answers = data.get("answers")
    if answers is None:
        answers = {}
    if not isinstance(answers, dict):
        raise SubmissionError("'answers' must be a mapping from part id to answer", path=str(file))
    student = data.get("student", default_student)
    notes = tuple(f"unknown top-level key '{k}' was ignored" for k in unknown)
    return Submission(
        student=str(student).strip() or default_student,
        homework=homework.strip(),
        answers={str(k): v for k, v in answers.items()},
        path=file,
        folder=folder,
        notes=notes,
    )


def _yaml_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in YAML_SUFFIXES and not p.name.startswith("."))


def discover(paths: list[Path]) -> Iterator[Path]:
    """Every submission under `paths`: files, submission folders, and class folders.

    A folder is one submission when it holds exactly one YAML file and no
    sub-folders; otherwise each YAML file and each sub-folder in it is one.
    """
    for path in paths:
        if not path.exists():
            raise SubmissionError("no such file or folder", path=str(path))
        if path.is_file():
            yield path
            continue
        subdirs = sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))
        yamls = _yaml_files(path)
        if not subdirs and len(yamls) == 1:
            yield path
            continue
        yield from yamls
        yield from subdirs
