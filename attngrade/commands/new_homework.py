"""`grade new-homework ID -o DIR`: start a homework folder of one's own from a bundled homework."""

from __future__ import annotations

import argparse

from ..errors import EXIT_OK
from ..problems.scaffold import scaffold


def main(args: argparse.Namespace) -> int:
    written = scaffold(args.homework, args.out, args.solutions)
    print(f"wrote {args.out}: " + ", ".join(written))
    print(f"edit it, then: grade validate {args.out}; grade run SUBMISSIONS -o OUT --homework {args.out}")
    return EXIT_OK
