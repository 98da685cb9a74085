"""`grade gradescope`: grade inside a Gradescope container (what run_autograder calls)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import ConfigError
from ..gradescope import run_gradescope
from ..gradescope.prove import prove_autograder

CONTAINER_ROOT = Path("/autograder")


def main(args: argparse.Namespace) -> int:
    root = args.root
    if root is None:
        root = CONTAINER_ROOT
        if not (root / "source").is_dir():
            raise ConfigError("this is not a Gradescope container (/autograder/source does not exist), so nothing "
                              "was written; to try the autograder here, pass --root FOLDER laid out like "
                              "Gradescope's (source/, submission/)")
    if args.prove:
        return prove_autograder(root)
    return run_gradescope(root)
