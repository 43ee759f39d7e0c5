"""``python -m otbench.evaluate``: score an agent on an environment and log one MLflow run.

Reference agents bound the metrics: ``--agent oracle`` emits the gold calls (must score 1.0),
``--agent null`` calls nothing (must score 0). ``--docs`` swaps in learned documentation.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import ExitStack
from typing import Any

from evals.harness import run_rollouts
from evals.robustness import ROBUSTNESS_METRICS, robustness
from modules.agent import FunctionCallingAgent
from modules.reference_agents import NullAgent
from otbench import tracking
from otbench.cli import OneLineParser, add_lm_arguments, add_tracking_arguments, lm_options, positive_int, run_main
from otbench.docs_io import apply_docs
from otbench.envs.base import sample_tasks
from otbench.envs.registry import add_environment_arguments, check_environment_arguments, make_environment
from otbench.errors import ConfigError, OtbenchError, RunError
from otbench.faults import phase_of
from otbench.llm.metering import TokenLedger
from otbench.llm.session import check_models, open_lms
from otbench.parallel import MapInterrupted
from otbench.report import format_table, server_table
from otbench.trajectory import Trajectory

AGENTS = ("llm", "oracle", "null")


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


def _agent(kind: str, env: Any, tasks: list[Any]) -> Any:
    if kind == "oracle":
        return env.oracle_agent(tasks)
    if kind == "null":
        return NullAgent()
    return FunctionCallingAgent(instructions=env.agent_instructions)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.agent not in AGENTS:
        raise ConfigError(f"unknown agent {args.agent!r}; choose from {', '.join(AGENTS)}")
    check_environment_arguments(args)
    uses_lm = args.agent == "llm"
    if uses_lm:
        check_models(lm_options(args), ("agent",))
    tracking.configure(args.tracking_uri, directory=args.mlruns)
    ledger = TokenLedger()
    with ExitStack() as stack:
        env = stack.enter_context(make_environment(args, workers=args.num_threads))
        tasks = sample_tasks(env.tasks(), args.limit, args.seed)
        toolbox = env.toolbox("gold" if args.docs == "gold" else None)
        docs_matched = apply_docs(toolbox, args.docs) if args.docs not in (None, "gold") else 0
        agent = _agent(args.agent, env, tasks)
        if uses_lm:
            agent.lm = stack.enter_context(open_lms(lm_options(args, slots=args.num_threads), ledger))["agent"]
        tags = {"command": "evaluate", "env": env.name, "setting": env.setting,
                "agent": args.agent, "lm": args.lm if uses_lm else "-", "optimizer": {None: "base", "gold": "gold"}.get(args.docs, "docs")}
        params = {**tags, "limit": args.limit or len(tasks), "seed": args.seed, "docs": args.docs or "",
                  "docs_matched": docs_matched, "faults": args.faults}  # what defines the run (not how it ran: --num-threads)
        started = time.perf_counter()
        model = tracking.model_label(args.lm, embedded_model=args.embedded_model, gguf=args.gguf) if uses_lm else None
        docs = {None: None, "gold": "gold-docs"}.get(args.docs, "learned-docs")
        name = tracking.run_name("evaluate", env.name, tags["setting"], args.agent, docs, f"n{len(tasks)}", model)
        with tracking.tracked_run(name, tags=tags, params=params) as run:
            try:
                with phase_of(env, "test"):
                    trajectories = run_rollouts(env, agent, toolbox, tasks, num_threads=args.num_threads,
                                                description="evaluate", progress=not args.quiet)
            except MapInterrupted as stop:
                finished = [stop.finished[i] for i in sorted(stop.finished)]
                _log_results(env, finished, ledger, time.perf_counter() - started)
                if isinstance(stop.cause, (KeyboardInterrupt, OtbenchError)):
                    raise stop.cause from None
                raise RunError(f"evaluation stopped after {len(finished)} tasks: {stop}") from stop.cause
            summary = _log_results(env, trajectories, ledger, time.perf_counter() - started)
        summary["run_id"] = run.info.run_id
    _print(summary, ledger, env.metric_names, as_json=args.json)
    return 0


def _log_results(env: Any, trajectories: list[Trajectory], ledger: TokenLedger, seconds: float) -> dict[str, Any]:
    """Log metrics (the environment's and the robustness ones), tokens and per-task results to the active run;
    returns the summary."""
    import mlflow

    summary: dict[str, Any] = {**robustness(trajectories), **env.summarise(trajectories)} if trajectories else {"n": 0}
    summary["seconds"] = round(seconds, 2)
    summary.update(ledger.flat_metrics())
    summary.update(ledger.server_metrics())
    mlflow.log_metrics({k: float(v) for k, v in summary.items() if isinstance(v, (int, float))})
    mlflow.log_dict({"tokens_by_phase": ledger.snapshot()}, "tokens.json")
    mlflow.log_text("\n".join(json.dumps(t.to_dict(), default=str) for t in trajectories), "trajectories.jsonl")
    if trajectories:
        tracking.log_table([{"task_id": t.task_id, **t.metrics, "calls": len(t.steps),
                             "parse_error": t.parse_error or ""} for t in trajectories], "per_task.json")
    return summary


def _print(summary: dict[str, Any], ledger: TokenLedger, metric_names: tuple[str, ...], *, as_json: bool) -> None:
    if as_json:
        print(json.dumps({**summary, "tokens_by_phase": ledger.snapshot()}))
        return
    metrics = {k: summary[k] for k in (*metric_names, "n") if k in summary}
    print(format_table([metrics]), file=sys.stdout)
    robust = {k: summary[k] for k in ROBUSTNESS_METRICS if k in summary}
    print(format_table([robust]), file=sys.stdout)
    rows = [{"phase": phase, **row} for phase, row in ledger.snapshot().items()]
    print(format_table(rows, ["phase", "prompt_tokens", "completion_tokens", "total_tokens", "calls", "paid_calls",
                              "cached_tokens"]))
    server = server_table(ledger.server_figures())
    if server:
        print(server)
    print(f"seconds: {summary['seconds']}   MLflow run: {summary['run_id']}")


if __name__ == "__main__":
    run_main(main)
