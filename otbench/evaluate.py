"""``python -m otbench.evaluate``: score an agent on an environment and log one MLflow run.

Reference agents bound the metrics: ``--agent oracle`` emits the gold calls (must score 1.0),
``--agent null`` calls nothing (must score 0). ``--docs`` swaps in learned documentation; ``--resume RUN_ID``
continues an interrupted evaluation from the tasks it finished.

This module is the command's face: :class:`EvaluateOptions` (the command line, or the Python API) is turned into
a run's definition and settings once, and :mod:`otbench.run.evaluation` executes them.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from otbench.arguments import OneLineParser, positive_int, seed
from otbench.cli import add_tracking_arguments
from otbench.core.tables import format_table, server_table
from otbench.envs.registry import (
    EnvironmentOptions,
    add_environment_arguments,
    options_from_values,
    refuse_other_environments,
    resolve,
)
from otbench.evals.robustness import ROBUSTNESS_METRICS
from otbench.exits import run_main
from otbench.llm.session import LMOptions
from otbench.outputs import check_outputs
from otbench.run import definition as defining
from otbench.run.definition import RunDefinition
from otbench.run.settings import RunSettings, TrackingOptions, add_lm_arguments, lm_from_values, tracking_from_values

if TYPE_CHECKING:  # what runs an evaluation is imported when one runs (it loads DSPy): --help answers at once
    from otbench.evals.stats import Interval
    from otbench.run.evaluation import EvaluateResult


@dataclass(frozen=True)
class EvaluateOptions:
    """One evaluation: which agent, with which docs, on which tasks; and how it is carried out."""

    environment: EnvironmentOptions = field(default_factory=EnvironmentOptions)
    agent: str = "llm"
    """``llm`` (the function-calling agent), ``openai-agents`` (the OpenAI Agents SDK's agent, over Chat Completions
    with tool calling), ``oracle`` (the gold calls) or ``null`` (calls nothing)."""
    docs: str | None = None
    """Docs to use instead of the setting's: a docs file, ``runs:/RUN_ID``, ``prompts:/NAME@latest`` or ``gold``."""
    limit: int | None = None
    """A seeded sample of this many tasks (None: all)."""
    seed: int = 0
    lm: LMOptions = field(default_factory=LMOptions)
    tracking: TrackingOptions = field(default_factory=TrackingOptions)
    num_threads: int = 1
    resume: str | None = None
    """The MLflow run id of an interrupted evaluation of the same definition to continue."""
    progress: bool = True

    def definition(self) -> RunDefinition:
        """What this evaluation computes (:mod:`otbench.run.definition`)."""
        from otbench.run.ledger import canonical_docs

        return defining.evaluation(resolve(self.environment), agent=self.agent, docs=canonical_docs(self.docs),
                                   limit=self.limit, seed=self.seed, lm=self.lm)

    def settings(self) -> RunSettings:
        """How this evaluation is carried out."""
        return RunSettings(lm=self.lm, tracking=self.tracking, num_threads=self.num_threads,
                           sandbox_workers=self.environment.sandbox_workers, progress=self.progress)


def options_from(values: Mapping[str, Any]) -> EvaluateOptions:
    """Options from their command-line names (an argparse namespace's)."""
    refuse_other_environments(values)
    return EvaluateOptions(
        environment=options_from_values(values), agent=values.get("agent", "llm"), docs=values.get("docs"),
        limit=values.get("limit"), seed=values.get("seed", 0), lm=lm_from_values(values),
        tracking=tracking_from_values(values), num_threads=values.get("num_threads", 1), resume=values.get("resume"),
        progress=not values.get("quiet", False))


def run(options: EvaluateOptions) -> EvaluateResult:
    """Score the agent on a seeded sample of tasks, tracked as one MLflow run; bad options are refused before
    anything slow (data, model, MLflow store) loads."""
    from otbench.run.evaluation import check, execute

    definition, settings = options.definition(), options.settings()
    check(definition, settings)
    return execute(definition, settings, resume=options.resume)


# -- the command line ----------------------------------------------------------------------------------------
def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The command's options; ``argv``: the command line, whose ``--env`` decides which environment's options are
    shown."""
    parser = OneLineParser(prog="python -m otbench.evaluate", description=__doc__.splitlines()[0])
    add_environment_arguments(parser, argv=argv)
    parser.add_argument("--agent", default="llm",
                        help="llm (default), openai-agents (the OpenAI Agents SDK's agent, on BFCL), oracle or null")
    parser.add_argument("--docs", default=None,
                        help="docs to use: a file, runs:/RUN_ID of an optimize run, ledger:KEY (an optimize run's entry "
                             "of the results ledger), or gold (the true docs) (default: the setting's own)")
    parser.add_argument("--limit", type=positive_int, default=None,
                        help="evaluate a seeded sample of N tasks (default: every task)")
    parser.add_argument("--seed", type=seed, default=0, help="seed of the task sample (default 0)")
    parser.add_argument("--num-threads", type=positive_int, default=1,
                        help="tasks run concurrently, each on a slot of the embedded server of its own (default 1)")
    parser.add_argument("--resume", default=None, metavar="RUN_ID",
                        help="continue an interrupted evaluation of the same definition from the tasks it finished "
                             "(default: start a new one)")
    parser.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_lm_arguments(parser)
    add_tracking_arguments(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    check_outputs(parser, args)
    result = run(options_from(vars(args)))
    if args.json:
        print(json.dumps(result.to_dict()))
    else:
        _print(result)
    return 0


def _print(result: EvaluateResult) -> None:
    summary = result.summary
    print(_interval_table(result.metric_names, summary, result.intervals))
    robust = {k: summary[k] for k in ROBUSTNESS_METRICS if k in summary}
    print(format_table([robust]), file=sys.stdout)
    rows = [{"phase": phase, **row} for phase, row in result.tokens_by_phase.items()]
    print(format_table(rows, ["phase", "prompt_tokens", "completion_tokens", "total_tokens", "calls", "paid_calls",
                              "cached_tokens"]))
    for name, table in result.tables.items():
        print(f"{name}:")
        print(format_table(table))
    server = server_table(result.server)
    if server:
        print(server)
    print(f"seconds: {summary['seconds']}   MLflow run: {result.run_id}")


def _interval_table(metric_names: Sequence[str], values: Mapping[str, Any], intervals: Mapping[str, Interval]) -> str:
    """One line per metric: its value, 95% interval, the tasks behind it and how the interval was computed."""
    rows = []
    for name in metric_names:
        found = intervals.get(name)
        if found is None and name not in values:
            continue
        value = found.value if found is not None else values[name]
        rows.append({"metric": name, "value": float(value), "95% interval": found.bounds_text() if found else "[-]",
                     "n": found.n if found else int(values.get("n", 0)),
                     "interval": found.method if found else "none"})
    return format_table(rows, ["metric", "value", "95% interval", "n", "interval"])


if __name__ == "__main__":
    run_main(main)
