"""What several commands take the same way: the homework, its bank, keys and gold."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError
from ..problems import BUNDLED, Bank, HomeworkFolder, open_homework


@dataclass(frozen=True)
class Source:
    """Where a command's homework comes from: the bank, the homework id (None: each file names
    its own), the keys' folder and the gold files by name."""

    bank: Bank
    homework: str | None
    solutions: Path
    gold: dict[str, Path]


def homework_source(args: argparse.Namespace) -> Source:
    """The Source named by --homework, --bank, --solutions and --gold.

    A homework folder brings its own problems, keys (its keys.yaml) and gold (its gold/).
    """
    gold = parse_gold(getattr(args, "gold", []))
    solutions = getattr(args, "solutions", None)
    spec = getattr(args, "homework", None)
    bank_path = getattr(args, "bank", None)
    if spec is None:
        return Source(open_bank(bank_path), None, solutions or Path("solutions"), gold)
    bank, homework = open_homework(spec)
    if isinstance(bank, HomeworkFolder):
        if bank_path is not None:
            raise ConfigError(f"--homework {spec} is a homework folder with its own problems; leave out --bank")
        return Source(bank, homework, solutions or bank.root, {**bank.gold(), **gold})
    return Source(open_bank(bank_path), homework, solutions or Path("solutions"), gold)


def open_bank(path: Path | None) -> Bank:
    """The bank at `path` (a folder with homeworks/ and library/), or the bundled one."""
    if path is None:
        return BUNDLED
    if not (path / "homeworks").is_dir():
        raise ConfigError(f"{path}: not a problem bank (no homeworks/ folder in it)")
    return Bank(path)


def parse_gold(items: list[str]) -> dict[str, Path]:
    """--gold NAME=PATH options, each file checked to be there."""
    gold = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise ConfigError(f"--gold takes NAME=PATH, got {item!r}")
        if not Path(path).is_file():
            raise ConfigError(f"--gold {name}: no file at {path}")
        gold[name] = Path(path).absolute()  # read where the checks run: a Dask worker elsewhere
    return gold
