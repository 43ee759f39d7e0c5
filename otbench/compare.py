"""``python -m otbench.compare``: documentation optimizers side by side (the paper's Table 2).

Rows: the environment's own (opaque) docs ``base``, the true docs ``gold``, and each optimizer's rows
(``+TO (paper)``, ``+TO``, ``+P2P``, ``+ET``...): the environment's metrics with their 95% intervals, each row's
paired difference to base and to ``+TO``, the tokens the row cost and how close its docs are to the gold docs.
A finished run of a row's definition is reused (from the local store or the results ledger); a missing one is run.
``--seeds`` pools several task samples, and ``--plan`` says what a comparison of a given size can detect before
any model time is spent.

This module is the command's face (arguments, printing); the comparison itself is
:mod:`otbench.study.comparing`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from otbench.arguments import OneLineParser, positive_float, positive_int, seed, seed_list
from otbench.cli import add_tracking_arguments
from otbench.core.tables import format_table
from otbench.envs.registry import add_environment_arguments, options_from_values, refuse_other_environments
from otbench.errors import ConfigError
from otbench.exits import run_main
from otbench.optimizers.registry import OPTIMIZERS
from otbench.outputs import OUTPUT_DIRECTORY, check_outputs, refuse
from otbench.run.settings import add_lm_arguments, lm_from_values, tracking_from_values
from otbench.study.comparing import DEFAULT_LIMIT, CompareOptions, CompareResult, plan, run

__all__ = ["CompareOptions", "CompareResult", "main", "plan", "run"]


def chosen_optimizers(text: str) -> tuple[str, ...]:
    names = [name.strip() for name in text.split(",")]
    if not any(names):
        raise ConfigError(f"--optimizers names no optimizer; choose from {', '.join(OPTIMIZERS)}")
    if not all(names):
        raise ConfigError(f"--optimizers {text!r} has an empty name between its commas; choose from "
                          f"{', '.join(OPTIMIZERS)}")
    unknown = [name for name in names if name not in OPTIMIZERS]
    if unknown:
        raise ConfigError(f"unknown optimizer {unknown[0]!r}; choose from {', '.join(OPTIMIZERS)}")
    return tuple(dict.fromkeys(names))


# -- the command line ----------------------------------------------------------------------------------------
def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The command's options; ``argv``: the command line, whose ``--env`` decides which environment's options are
    shown."""
    parser = OneLineParser(prog="python -m otbench.compare", description=__doc__.splitlines()[0])
    add_environment_arguments(parser, argv=argv)
    parser.add_argument("--optimizers", default=",".join(OPTIMIZERS),
                        help=f"comma-separated optimizer rows (default all: {','.join(OPTIMIZERS)})")
    parser.add_argument("--limit", type=positive_int, default=DEFAULT_LIMIT,
                        help=f"tasks optimized on (online: also evaluated on) (default {DEFAULT_LIMIT})")
    parser.add_argument("--test-limit", type=positive_int, default=DEFAULT_LIMIT,
                        help=f"offline environments: test tasks every row is scored on (default {DEFAULT_LIMIT})")
    parser.add_argument("--val-limit", type=positive_int, default=None, metavar="N",
                        help="offline environments: every optimizer row keeps the docs (starting, each iteration's or "
                             "final) that score best on N other train tasks (default: the final docs)")
    parser.add_argument("--seed", type=seed, default=None, help="seed of the task samples (default 0)")
    parser.add_argument("--seeds", type=seed_list, default=None, metavar="S1,S2,...",
                        help="run every row on each of these task samples and pool them (a sample is a cluster) "
                             "(default: the one sample --seed)")
    taken: set[str] = set()
    for name, spec in OPTIMIZERS.items():  # each optimizer's budget knobs, passed on to its own rows
        spec.add_arguments(parser.add_argument_group(name), taken, budget_only=True)
    parser.add_argument("--probe", dest="probe_rows", action="store_true",
                        help="also a '(probe)' row for each optimizer offered the shared --probe (the same help "
                             "every optimizer with probing of its own has)")
    parser.add_argument("--probe-only", action="store_true",
                        help="the rows of the optimizers offered the shared --probe only with it (no row without it)")
    parser.add_argument("--ablations", action="store_true",
                        help="also a row of each optimizer with improvements of its own with each of them that its "
                             "learning mode uses switched off, one at a time ('+TO --no-facts'...): what each buys")
    parser.add_argument("--num-threads", type=positive_int, default=4,
                        help="tasks run concurrently in missing runs, each on a slot of the embedded server of its own (default 4: on 2 cores, 4 slots give about 1.7x the tokens an hour of 1; python -m otbench.bench slots)")
    parser.add_argument("--plots", type=OUTPUT_DIRECTORY, default=Path("reports"), help="directory for the PNG plots (default reports/)")
    planning = parser.add_argument_group("power, before spending (--plan runs nothing)")
    planning.add_argument("--plan", action="store_true",
                          help="print the smallest difference this comparison can detect and the tasks a wanted "
                               "difference needs, then stop")
    planning.add_argument("--base-rate", type=share, default=None,
                          help="assumed base rate of the primary metric (default: the finished base row's)")
    planning.add_argument("--difference", type=float, default=None,
                          help="the difference to detect (e.g. 0.015 for 18.8%% -> 20.3%%) (default: none, only the "
                               "smallest difference the size detects)")
    planning.add_argument("--spread", type=positive_float, default=None,
                          help="continuous metrics: standard deviation of per-task differences between two rows "
                               "(default: observed between the finished base and +TO rows)")
    parser.add_argument("--json", action="store_true", help="print the comparison as one JSON object")
    parser.add_argument("--quiet", action="store_true", help="no progress bars in missing runs")
    add_lm_arguments(parser, editor=True)
    add_tracking_arguments(parser)
    return parser


def share(text: str) -> float:
    """A rate between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text}")
    return value


def options_from(values: Mapping[str, Any]) -> CompareOptions:
    """Options from their command-line names (an argparse namespace's)."""
    refuse_other_environments(values)
    seed, seeds = values.get("seed"), values.get("seeds")
    if seed is not None and seeds:
        raise ConfigError("give --seed or --seeds, not both")
    return CompareOptions(
        environment=options_from_values(values), optimizers=chosen_optimizers(values["optimizers"]),
        limit=values["limit"], test_limit=values["test_limit"], val_limit=values.get("val_limit"), seed=seed or 0, seeds=tuple(seeds or ()),
        knobs={name: spec.knobs_from(values) for name, spec in OPTIMIZERS.items()},
        probe=values["probe_rows"], probe_only=values["probe_only"], ablations=values["ablations"], lm=lm_from_values(values), tracking=tracking_from_values(values),
        num_threads=values["num_threads"], plots=values["plots"], progress=not values["quiet"],
        sandbox_workers=values.get("sandbox_workers"))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    check_outputs(parser, args)
    options = options_from(vars(args))
    if args.plan:
        planned = plan(options, base_rate=args.base_rate, wanted=args.difference, spread=args.spread)
        print(json.dumps(planned.to_dict()) if args.json else "\n".join(planned.lines()))
        return 0
    refuse("optimize --out (the learned docs of missing rows)", options.out, "directory")
    result = run(options)
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.json:
        print(json.dumps(result.to_dict()))
        return 0
    print_result(result)
    return 0


def print_result(result: CompareResult) -> None:
    """The table as the command prints it: what the columns mean, the rows, the legend of its marks."""
    columns = result.columns
    samples = f" on samples {','.join(str(seed) for seed in result.seeds)} pooled" if len(result.seeds) > 1 else ""
    print(f"{result.env} / {result.setting}{samples}: {', '.join(result.metrics)}; tokens = optimization + evaluation "
          "(paid + cache-served)" + ("; tokens_vs_to = tokens / +TO's" if "tokens_vs_to" in columns else "")
          + "; docs_sem / docs_lex = similarity of the row's docs to the gold docs"
          + "; docs_faults = share of learned sentences stating faults as tool behaviour")
    print(format_table(result.printed, columns))
    print(result.legend)
    print(f"plots: {', '.join(result.plots)}   MLflow run: {result.run_id}")


if __name__ == "__main__":
    run_main(main)
