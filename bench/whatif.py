#!/usr/bin/env python3
"""Run `grade ...` with experimental speed-ups monkeypatched in, and print wall and CPU time.

    /tmp/venv/bin/python bench/whatif.py noplots,canon,yaml run CLASS -o OUT --solutions solutions --workers 1
    /tmp/venv/bin/python bench/whatif.py none run CLASS -o OUT --solutions solutions --workers 1

Patches (what bench/README.md proposes; none of them is part of attngrade):

* noplots: heatmaps and the histogram become an empty inline SVG, as a stand-in for a
  hand-written SVG grid (no matplotlib import, no savefig);
* canon:   Value.canonical computed once per Value (functools.cached_property) instead of
           sympy.srepr on every memo lookup;
* yaml:    submissions are parsed with libyaml (yaml.CSafeLoader), aliases still refused
           by a first pass over the C parser's events.

It patches attngrade internals by name, so it may need updating when they change.
"""

from __future__ import annotations

import sys
import time


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    which = set(argv[0].split(",")) - {"none", ""}
    unknown = which - {"noplots", "canon", "yaml"}
    if unknown:
        print(f"unknown patches: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    if "noplots" in which:
        from markupsafe import Markup

        import attngrade.reports.plots as plots
        import attngrade.reports.views as views

        empty = Markup("<svg width='10' height='10'></svg>")
        plots.heatmap = views.heatmap = lambda weights, target, title: empty
        plots.histogram = views.histogram = lambda scores, maximum: empty
    if "canon" in which:
        import functools

        import sympy

        from attngrade.mathlang import nodes

        prop = functools.cached_property(lambda self: f"{self.kind}:{sympy.srepr(self.expr)}")
        prop.__set_name__(nodes.Value, "canonical")
        nodes.Value.canonical = prop
    if "yaml" in which:
        import yaml

        import attngrade.submissions as submissions
        from attngrade.errors import SubmissionError

        real_load = yaml.load

        class FastYaml:
            YAMLError = yaml.YAMLError
            SafeLoader = yaml.SafeLoader
            AliasEvent = yaml.AliasEvent

            @staticmethod
            def load(text, Loader=None):  # noqa: N803, ARG004 - the signature read_yaml uses
                for event in yaml.parse(text, Loader=yaml.CSafeLoader):
                    if isinstance(event, yaml.AliasEvent):
                        raise SubmissionError("YAML aliases (*name) are not allowed in submissions")
                return real_load(text, Loader=yaml.CSafeLoader)

        submissions.yaml = FastYaml
    from attngrade.cli import main as cli_main

    try:
        return cli_main(argv[1:])
    finally:
        print(f"whatif {','.join(sorted(which)) or 'none'}: wall {time.perf_counter() - start_wall:.2f} s, "
              f"CPU {time.process_time() - start_cpu:.2f} s (main process)", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
