"""``python -m otbench.evaluate``: score an agent on an environment and log one MLflow run.

Reference agents bound the metrics: ``--agent oracle`` emits the gold calls (must score 1.0),
``--agent null`` calls nothing (must score 0). ``--docs`` swaps in learned documentation.
:func:`run` does the work from typed options; the command line only fills them and prints the result.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from otbench.cli import OneLineParser, add_lm_arguments, add_tracking_arguments, positive_int, run_main
from otbench.core.faults import phase_of
from otbench.core.tables import format_table, interval_table, server_table
from otbench.core.trajectory import Trajectory
from otbench.envs.base import sample_tasks
from otbench.envs.registry import (
    EnvironmentOptions,
    add_environment_arguments,
    make_environment,
    options_from_values,
    resolve,
)
from otbench.errors import ConfigError, OtbenchError, RunError
from otbench.evals.robustness import ROBUSTNESS_METRICS, robustness
from otbench.llm.session import LMOptions, check_models, open_lms
from otbench.run import definition as defining
from otbench.run import outcomes as run_outcomes
from otbench.run import tracking
from otbench.run.options import TrackingOptions, lm_from_values, lm_values, tracking_from_values
from otbench.run.outputs import check_outputs

if TYPE_CHECKING:  # what runs an evaluation is imported when one runs (it loads DSPy): --help answers at once
    from otbench.evals.stats import Interval
    from otbench.llm.metering import TokenLedger
    from otbench.run.definition import RunDefinition

AGENTS = ("llm", "oracle", "null")

@dataclass(frozen=True)
class EvaluateOptions:
    """One evaluation: which agent, with which docs, on which tasks; and how it is carried out."""

    environment: EnvironmentOptions = field(default_factory=EnvironmentOptions)
    agent: str = "llm"
    """``llm`` (the function-calling agent), ``oracle`` (the gold calls) or ``null`` (calls nothing)."""
    docs: str | None = None
    """Docs to use instead of the setting's: a docs file, ``runs:/RUN_ID``, ``prompts:/NAME@latest`` or ``gold``."""
    limit: int | None = None
    """A seeded sample of this many tasks (None: all)."""
    seed: int = 0
    lm: LMOptions = field(default_factory=LMOptions)
    tracking: TrackingOptions = field(default_factory=TrackingOptions)
    num_threads: int = 1
    progress: bool = True

    def values(self) -> dict[str, Any]:
        """Every option by its command-line name."""
        return {**self.environment.values(), "agent": self.agent, "docs": self.docs, "limit": self.limit,
                "seed": self.seed, **lm_values(self.lm), **self.tracking.values(), "num_threads": self.num_threads,
                "quiet": not self.progress}

    def definition(self, *, tasks: int) -> RunDefinition:
        """What this evaluation computes (:mod:`otbench.run.definition`): its sample is ``limit`` tasks, or all
        ``tasks`` there are without a limit."""
        return defining.evaluation(resolve(self.environment), agent=self.agent, docs=self.docs,
                                   tasks=self.limit if self.limit is not None else tasks, seed=self.seed, lm=self.lm)


def options_from(values: Mapping[str, Any]) -> EvaluateOptions:
    """Options from their command-line names (an argparse namespace's)."""
    return EvaluateOptions(
        environment=options_from_values(values), agent=values.get("agent", "llm"), docs=values.get("docs"),
        limit=values.get("limit"), seed=values.get("seed", 0), lm=lm_from_values(values),
        tracking=tracking_from_values(values), num_threads=values.get("num_threads", 1),
        progress=not values.get("quiet", False))


@dataclass(frozen=True)
class EvaluateResult:
    """What an evaluation measured, as logged to its MLflow run."""

    run_id: str
    summary: dict[str, Any]
    """The environment's metrics and the robustness ones, ``n``, ``seconds``, token and server figures."""
    metric_names: tuple[str, ...]
    tokens_by_phase: dict[str, Any]
    server: dict[str, Any]
    """The LM server's own figures by phase (empty for hosted models)."""
    intervals: dict[str, Interval] = field(default_factory=dict)
    """Each of the environment's metrics with its 95% interval (:mod:`otbench.evals.stats`)."""
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """The environment's own tables by name (Wild: accuracy and errors by hidden intention and switches)."""

    def to_dict(self) -> dict[str, Any]:
        """The summary as ``--json`` prints it."""
        return {**self.summary, "run_id": self.run_id, "tokens_by_phase": self.tokens_by_phase,
                "intervals": {name: value.as_dict() for name, value in self.intervals.items()},
                **({"tables": self.tables} if self.tables else {})}


def _agent(kind: str, env: Any, tasks: list[Any]) -> Any:
    from otbench.modules.agent import FunctionCallingAgent
    from otbench.modules.reference_agents import NullAgent

    if kind == "oracle":
        return env.oracle_agent(tasks)
    if kind == "null":
        return NullAgent()
    return FunctionCallingAgent(instructions=env.agent_instructions)


def run(options: EvaluateOptions) -> EvaluateResult:
    """Score the agent on a seeded sample of tasks, tracked as one MLflow run; bad options are refused before
    anything slow (data, model, MLflow store) loads."""
    if options.agent not in AGENTS:
        raise ConfigError(f"unknown agent {options.agent!r}; choose from {', '.join(AGENTS)}")
    environment = resolve(options.environment)
    uses_lm = options.agent == "llm"
    if uses_lm:
        check_models(options.lm, ("agent",))
    import mlflow

    from otbench.core.parallel import MapInterrupted
    from otbench.evals.harness import run_rollouts
    from otbench.llm.metering import TokenLedger
    from otbench.run.docs_io import apply_docs

    tracking.configure(options.tracking.uri, directory=options.tracking.directory)
    ledger = TokenLedger()
    with ExitStack() as stack:
        env = stack.enter_context(make_environment(environment, workers=options.num_threads))
        tracking.share_view(env.name, env.metric_names, env.primary_metric)
        tasks = sample_tasks(env.tasks(), options.limit, options.seed)
        toolbox = env.toolbox("gold" if options.docs == "gold" else None)
        docs_matched = (apply_docs(toolbox, options.docs, translate=getattr(env, "docs_from", None))
                        if options.docs not in (None, "gold") else 0)
        agent = _agent(options.agent, env, tasks)
        if uses_lm:
            lm = dataclasses.replace(options.lm, slots=options.num_threads)
            agent.lm = stack.enter_context(open_lms(lm, ledger))["agent"]
        # what defines the run names it, tags it and is its params: runs of a comparison differ only in what sets
        # them apart (RunDefinition.params says why that matters)
        defined = dataclasses.replace(options, environment=environment).definition(tasks=len(tasks))
        started = time.perf_counter()
        model = tracking.model_label(options.lm.lm, embedded_model=options.lm.embedded_model, gguf=options.lm.gguf)
        name = tracking.run_name(defined.run_name(len(tasks), model, env.setting))
        with tracking.tracked_run(name, tags=defined.tags(env.setting),
                                  params=defined.params(env.setting, learning=env.learning)) as tracked:
            try:
                with phase_of(env, "test"):
                    trajectories = run_rollouts(env, agent, toolbox, tasks, num_threads=options.num_threads,
                                                description="evaluate", progress=options.progress)
            except MapInterrupted as stop:
                finished = [stop.finished[i] for i in sorted(stop.finished)]
                _log_results(env, finished, ledger, time.perf_counter() - started, options.seed)
                if isinstance(stop.cause, (KeyboardInterrupt, OtbenchError)):
                    raise stop.cause from None
                raise RunError(f"evaluation stopped after {len(finished)} tasks: {stop}") from stop.cause
            summary, found = _log_results(env, trajectories, ledger, time.perf_counter() - started, options.seed)
            tables = tracking.log_environment_tables(env, trajectories)
            mlflow.log_metric("docs_matched", docs_matched)  # how many tools the given docs documented
            total = ledger.snapshot()["all"]
            tracking.log_result({metric: summary[metric] for metric in env.metric_names if metric in summary},
                                int(total["total_tokens"] + total["cached_tokens"]), found)
    return EvaluateResult(tracked.info.run_id, summary, tuple(env.metric_names), ledger.snapshot(),
                          ledger.server_figures(), found, tables)


def _log_results(env: Any, trajectories: list[Trajectory], ledger: TokenLedger, seconds: float,
                 sample: int) -> tuple[dict[str, Any], dict[str, Interval]]:
    """Log metrics (the environment's and the robustness ones), tokens and per-task results and outcomes to the
    active run; returns the summary and each metric's interval."""
    import mlflow

    from otbench.evals.outcomes import Outcomes, rules_of

    # the environment's metrics first: MLflow's compare page plots the first metric the first run logged
    summary: dict[str, Any] = {**env.summarise(trajectories), **robustness(trajectories)} if trajectories else {"n": 0}
    summary["seconds"] = round(seconds, 2)
    summary.update(ledger.flat_metrics())
    summary.update(ledger.server_metrics())
    mlflow.log_metrics({k: float(v) for k, v in summary.items() if isinstance(v, (int, float))})
    mlflow.log_dict({"tokens_by_phase": ledger.snapshot()}, "tokens.json")
    tracking.log_trajectories(trajectories, "trajectories.jsonl")
    if trajectories:
        tracking.log_table([{"task_id": t.task_id, **t.metrics, "calls": len(t.steps),
                             "parse_error": t.parse_error or ""} for t in trajectories], "per_task.json")
    outcomes = Outcomes.of(trajectories, sample)
    run_outcomes.log(run_outcomes.RunOutcomes({run_outcomes.RESULT: outcomes}, run_outcomes.RESULT))
    return summary, run_outcomes.intervals(outcomes, rules_of(env))


# -- the command line ----------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m otbench.evaluate", description=__doc__.splitlines()[0])
    add_environment_arguments(parser)
    parser.add_argument("--agent", default="llm", help="llm (default), oracle or null")
    parser.add_argument("--docs", default=None, help="docs to use: a file, runs:/RUN_ID of an optimize run, or gold (the true docs)")
    parser.add_argument("--limit", type=positive_int, default=None, help="evaluate a seeded sample of N tasks")
    parser.add_argument("--seed", type=int, default=0, help="seed of the task sample (default 0)")
    parser.add_argument("--num-threads", type=positive_int, default=1, help="tasks run concurrently")
    parser.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_lm_arguments(parser)
    add_tracking_arguments(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
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
    print(interval_table(result.metric_names, summary, result.intervals))
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


if __name__ == "__main__":
    run_main(main)
