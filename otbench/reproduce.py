"""``python -m otbench.reproduce``: the paper's Table 2 as one resumable grid, on one machine or several.

Each worker walks the grid's cells (a row of a setting on a task sample), reuses the finished ones (from the local
store or the results ledger), resumes an interrupted one and runs the missing ones; ``--status`` lists every cell's
state without running anything. Once every cell has finished, one worker writes the report. ``--size small`` (or
``--limits``) runs the same grid on a few tasks, to try it in minutes.

This module is the command's face (arguments, printing); the grid itself is :mod:`otbench.study.grid`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from otbench.arguments import OneLineParser, positive_float, positive_int, seed_list
from otbench.cli import add_tracking_arguments
from otbench.core.tables import format_table
from otbench.errors import ConfigError, RunError
from otbench.exits import run_main
from otbench.outputs import DATABASE_URL, OUTPUT_DIRECTORY, check_outputs, refuse
from otbench.run.settings import RunSettings, add_lm_arguments, lm_from_values, tracking_from_values
from otbench.study.grid import SIZES, ReproduceOptions, run, status

__all__ = ["ReproduceOptions", "main", "run", "status"]


# -- the command line ----------------------------------------------------------------------------------------
def limits_of(text: str) -> dict[str, int]:
    """``bfcl=30,chess=6``: tasks every row of an environment is judged on."""
    limits = {}
    for part in filter(None, (piece.strip() for piece in text.split(","))):
        env, _, value = part.partition("=")
        try:
            limits[env.strip()] = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected ENV=N pairs such as bfcl=30,chess=6, got {part!r}") from None
        if limits[env.strip()] < 1:
            raise argparse.ArgumentTypeError(f"expected a number >= 1 in {part!r}")
    return limits


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m otbench.reproduce", description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="full", help=f"the grid: {', '.join(SIZES)} (default full)")
    parser.add_argument("--only", default=None, help="comma-separated environments or settings to run "
                                                   "(bfcl, bfcl/names_only, chess/phase...); default all")
    parser.add_argument("--limits", type=limits_of, default={}, metavar="ENV=N,...",
                        help="tasks every row of an environment is judged on (online: also optimized on), "
                             "instead of the size's: bfcl=30,browsecomp=20,chess=4 (default: the size's)")
    parser.add_argument("--seeds", type=seed_list, default=(1,), metavar="S1,S2,...",
                        help="task samples every cell runs on, pooled as clusters (default 1)")
    parser.add_argument("--storage", type=DATABASE_URL, default=None,
                        help="PostgreSQL URL where workers on several machines claim cells (the sweeps' database); "
                             "default: file locks, one machine")
    parser.add_argument("--report", type=OUTPUT_DIRECTORY, default=Path("reports/reproduce"),
                        help="directory for REPORT.md and the plots (default reports/reproduce)")
    parser.add_argument("--status", action="store_true", help="list every cell's state (finished, interrupted, "
                                                              "missing) and stop; nothing runs")
    parser.add_argument("--wait-seconds", type=positive_float, default=30.0,
                        help="while other workers hold the last cells, look again after this long (default 30)")
    parser.add_argument("--num-threads", type=positive_int, default=4,
                        help="tasks run concurrently within a cell, each on a slot of the embedded server of its own (default 4: on 2 cores, 4 slots give about 1.7x the tokens an hour of 1; python -m otbench.bench slots)")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    add_lm_arguments(parser, editor=True)
    add_tracking_arguments(parser)
    return parser


def options_from(values: Mapping[str, Any]) -> ReproduceOptions:
    """Options from their command-line names (an argparse namespace's)."""
    given = values.get("only")
    only = tuple(part.strip() for part in given.split(",")) if given is not None else ()
    if given is not None and not all(only):
        raise ConfigError(f"--only {given!r} names nothing between its commas; give environments or settings such as "
                          "bfcl,chess/phase (or drop --only for the whole grid)")
    return ReproduceOptions(size=values["size"], only=only, limits=dict(values["limits"]), seeds=tuple(values["seeds"]),
                            storage=values["storage"], lm=lm_from_values(values), tracking=tracking_from_values(values),
                            num_threads=values["num_threads"], report=values["report"], progress=not values["quiet"],
                            wait_seconds=values["wait_seconds"])


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_outputs(parser, args)
    options = options_from(vars(args))
    if args.status:
        cells = status(options)
        print(json.dumps(cells) if args.json else format_table(cells, ["section", "row", "sample", "state", "from",
                                                                       "tokens", "hours", "run_id"]))
        for cell in cells:
            if "problem" in cell:
                print(f"error: {' '.join(cell['problem'].split())}", file=sys.stderr)
        return 1 if any("problem" in cell for cell in cells) else 0
    refuse("optimize --out (the learned docs of missing rows)", RunSettings().out, "directory")
    result = run(options)
    if args.json:
        print(json.dumps(result.to_dict(), default=str))
    elif result.report is not None:
        print(Path(result.report).read_text())
        print(f"report: {result.report}   MLflow run: {result.run_id}")
    else:
        print(format_table(result.cells, ["section", "row", "sample", "state", "tokens", "hours", "run_id"]))
    if result.failed:
        raise RunError(f"{len(result.failed)} cell(s) failed: {'; '.join(result.failed.values())}"[:1000])
    return 0


if __name__ == "__main__":
    run_main(main)
