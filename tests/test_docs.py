"""The documentation keeps working: its runnable command examples run, its links and anchors
resolve, every command and flag of `grade` is in the reference, and the MkDocs site builds
with --strict.

A fenced `sh` block right after the line `<!-- runnable -->` (or `<!-- runnable exit=N -->`)
is run with bash (-e, pipefail) in a temporary copy of the repository's examples, solutions and
test homeworks, each page's blocks in order in one copy, and must exit 0 (or N).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest

from attngrade.cli import parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
COPIED = ("examples", "solutions", "tests/data/homeworks", "tests/data/banks", "tests/data/rosters")
_MARK = re.compile(r"^<!-- runnable(?: exit=(\d+))? -->$")
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


@dataclass(frozen=True)
class Example:
    page: Path
    line: int
    code: str
    exit: int


def runnable(page: Path) -> list[Example]:
    """The runnable examples of a page, in order."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found = []
    for i, line in enumerate(lines):
        mark = _MARK.match(line.strip())
        if not mark:
            continue
        assert i + 1 < len(lines) and lines[i + 1].strip() == "```sh", \
            f"{page}:{i + 1}: a runnable mark must stand right above a ```sh fence"
        end = next(j for j in range(i + 2, len(lines)) if lines[j].strip() == "```")
        found.append(Example(page, i + 2, "\n".join(lines[i + 2:end]), int(mark.group(1) or 0)))
    return found


WITH_EXAMPLES = [p for p in PAGES if runnable(p)]


def test_the_documentation_has_runnable_examples():
    assert {p.relative_to(DOCS).as_posix() for p in WITH_EXAMPLES} >= {
        "tutorial/first-class.md", "how-to/own-homework.md", "how-to/templates.md", "how-to/gradescope.md",
        "how-to/lms-export.md"}


@pytest.mark.slow
@pytest.mark.parametrize("page", WITH_EXAMPLES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_the_command_examples_of_the_docs_run(page, tmp_path):
    work = tmp_path / "work"
    for rel in COPIED:
        shutil.copytree(ROOT / rel, work / rel)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    for example in runnable(page):
        done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", example.code], cwd=work, env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == example.exit, (f"{page.relative_to(ROOT)}:{example.line}: exit {done.returncode}, "
                                                 f"expected {example.exit}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


# -- links ---------------------------------------------------------------------------------------------------
def slug(heading: str) -> str:
    """A heading's anchor as Python-Markdown's toc extension makes it (MkDocs' default)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(page: Path) -> set[str]:
    text = re.sub(r"(?ms)^```.*?^```", "", page.read_text(encoding="utf-8"))
    return {slug(m.group(1)) for m in re.finditer(r"(?m)^#{1,6}\s+(.+?)\s*#*$", text)}


def links(page: Path) -> list[tuple[int, str]]:
    text = page.read_text(encoding="utf-8")
    found = []
    in_code = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        for match in _LINK.finditer(re.sub(r"`[^`]*`", "", line)):
            found.append((number, match.group(1) or match.group(2)))
    return found


@pytest.mark.parametrize("page", [*PAGES, ROOT / "README.md"], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_link_and_anchor_of_the_docs_resolves(page):
    broken = []
    for number, target in links(page):
        if re.match(r"^[a-z]+:", target):
            continue  # an address on the web: not this repository's to check
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(f"{page.relative_to(ROOT)}:{number}: {target} (no such file)")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{page.relative_to(ROOT)}:{number}: {target} (no heading '{anchor}' there)")
    assert broken == []


def test_every_page_of_the_docs_is_in_the_site_navigation():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert [p.relative_to(DOCS).as_posix() for p in PAGES if f" {p.relative_to(DOCS).as_posix()}" not in nav] == []


# -- the commands reference ------------------------------------------------------------------------------
def test_every_command_and_flag_is_in_the_reference():
    text = (DOCS / "reference" / "commands.md").read_text(encoding="utf-8")
    sub = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    missing = []
    for name, command in sub.choices.items():
        if f"## grade {name}\n" not in text:
            missing.append(f"grade {name}")
            continue
        section = text.split(f"## grade {name}\n", 1)[1].split("\n## ", 1)[0]
        for action in command._actions:
            for flag in action.option_strings:
                if flag not in ("-h", "--help") and f"`{flag}" not in section and f" {flag}" not in section:
                    missing.append(f"grade {name} {flag}")
    assert missing == []


# -- the site ------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_the_documentation_site_builds_with_strict(tmp_path):
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or shutil.which("mkdocs")
    if mkdocs is None:
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]')")
    done = subprocess.run([mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (tmp_path / "site" / "reference" / "keys" / "index.html").is_file()
