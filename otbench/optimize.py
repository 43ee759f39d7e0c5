"""``python -m otbench.optimize --optimizer toolobserver``: learn tool docs, tracked in MLflow.

With no other argument: BFCL-Opaque, names_only, the embedded model, a 10-test sample, online
ToolObserver; ``--optimizer play2prompt|easytool`` runs the competing baselines the same way,
with the same tracking and token accounting. Every iteration is logged (metrics by step, docs, trajectories, editor exchanges)
with a checkpoint, so an interrupted run continues with ``--resume RUN_ID``. The final docs are
written as an otbench docs file and as DSPy state, locally and as run artefacts.
"""

from __future__ import annotations

import argparse
import json
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from evals.contamination import contamination
from evals.harness import run_rollouts
from evals.robustness import robustness
from modules.agent import FunctionCallingAgent
from modules.program import ToolAgentProgram
from modules.tool_docs import OPTIMIZED_TOOLSETS
from optimizers import knobs as knob_rules
from optimizers.base import DocOptimizer
from optimizers.registry import OPTIMIZERS, improvements_of
from optimizers.toolobserver import MODES, Improvements
from otbench import tracking
from otbench.cli import OneLineParser, add_lm_arguments, add_tracking_arguments, lm_options, positive_int, run_main
from otbench.docs_io import RUN_DOCS_ARTIFACT
from otbench.envs.base import sample_tasks
from otbench.envs.registry import (
    add_environment_arguments,
    check_environment_arguments,
    make_environment,
    other_environments_options,
)
from otbench.errors import ConfigError, RunError
from otbench.faults import phase_of
from otbench.llm.metering import TokenLedger
from otbench.llm.session import EMBEDDED, check_models, open_lms
from otbench.parallel import MapInterrupted
from otbench.report import format_table, server_table
from otbench.sweep import add_sweep_arguments, check_sweep_arguments, print_sweep, run_sweep

DEFAULT_LIMIT = 10
# Options that say how a command carries out its work, not what it computes. Every other option
# defines the run: it is logged, saved in the checkpoint, and taken from there by --resume.
HOW_IT_RUNS = frozenset({"num_threads", "threads", "no_cache", "engine_cache", "quiet", "json", "mlruns",
                         "tracking_uri", "resume", "out", "sweep", "token_budget", "storage", "study_name",
                         "api_base", "editor_api_base"})


def own_options(optimizer: str) -> frozenset[str]:
    """The options only ``optimizer`` reads: its knobs (from the registry), ToolObserver's mode, variant and
    improvements, and ``--probe`` where it is offered. A run logs its own, not other optimizers'."""
    spec = OPTIMIZERS[optimizer]
    knobs = {knob_rules.dest(spec.knobs, name) for name, _, _ in knob_rules.declared(spec.knobs)} if spec.knobs else set()
    if optimizer == "toolobserver":
        return frozenset(knobs | {"mode", "oracle_feedback", "variant", *Improvements.names()})
    return frozenset(knobs | ({"probe"} if spec.offers_probe else set()))


def add_optimizer_arguments(parser: argparse.ArgumentParser) -> dict[str, argparse._ArgumentGroup]:
    """One option group per optimizer with its knobs (:data:`optimizers.registry.OPTIMIZERS`); ToolObserver's
    group also holds its variant and, for ablations, each of its improvements on or off."""
    groups = {name: parser.add_argument_group(name) for name in OPTIMIZERS}
    groups["toolobserver"].description = ("ToolObserver's budget, variant and improvements; --probe (probing and "
                                          "the learned schema) applies to play2prompt and easytool too")
    groups["toolobserver"].add_argument(
        "--variant", default="improved",
        help="improved (default: every improvement on) or paper (the paper's protocol, as published)")
    for name in Improvements.names():
        groups["toolobserver"].add_argument(
            f"--{name.replace('_', '-')}", dest=name, action=argparse.BooleanOptionalAction, default=None,
            help=f"this improvement on or off, whatever the variant: {Improvements.help(name)}")
    for name, spec in OPTIMIZERS.items():
        if spec.knobs is not None:
            knob_rules.add_arguments(groups[name], spec.knobs)
    return groups


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m otbench.optimize", description=__doc__.splitlines()[0])
    parser.add_argument("--optimizer", default="toolobserver", help=f"one of: {', '.join(OPTIMIZERS)}")
    add_environment_arguments(parser)
    parser.add_argument("--mode", default=None, help="toolobserver mode: online (BFCL default) or offline")
    parser.add_argument("--limit", type=positive_int, default=DEFAULT_LIMIT,
                        help=f"optimize on a seeded sample of N tasks (default {DEFAULT_LIMIT})")
    parser.add_argument("--seed", type=int, default=0, help="seed of the task sample (default 0)")
    parser.add_argument("--test-limit", type=positive_int, default=DEFAULT_LIMIT,
                        help=f"offline environments: score the learned docs on N test tasks (default {DEFAULT_LIMIT})")
    parser.add_argument("--oracle-feedback", action="store_true",
                        help="online: show the editor whether each attempt succeeded (off in the paper)")
    add_optimizer_arguments(parser)
    parser.add_argument("--num-threads", type=positive_int, default=1, help="tasks run concurrently")
    parser.add_argument("--resume", default=None, metavar="RUN_ID", help="continue an interrupted run")
    parser.add_argument("--out", type=Path, default=Path("learned_docs"), help="where final docs are written")
    add_sweep_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the final summary as one JSON object")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    add_lm_arguments(parser, editor=True)
    add_tracking_arguments(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    checkpoint: dict[str, Any] = {}
    if args.resume:
        tracking.configure(args.tracking_uri, directory=args.mlruns)
        checkpoint = tracking.load_checkpoint(args.resume)
        for name, value in checkpoint["args"].items():
            setattr(args, name, value)
    if args.optimizer not in OPTIMIZERS:
        raise ConfigError(f"unknown optimizer {args.optimizer!r}; choose from {', '.join(OPTIMIZERS)}")
    if args.mode is not None and args.mode not in MODES:
        raise ConfigError(f"unknown mode {args.mode!r}; choose from {', '.join(MODES)}")
    try:  # an unknown variant, or a knob a checkpoint set out of bounds, is refused before anything loads
        improvements_of(args)
        OPTIMIZERS[args.optimizer].knob_values(args)
    except ValueError as error:
        raise ConfigError(str(error)) from None
    check_environment_arguments(args)
    check_models(lm_options(args))  # a missing key is refused before the store, data or model load

    if args.sweep and args.resume:
        raise ConfigError("--sweep and --resume do not mix: rerun the sweep with the same --storage to continue it")
    if args.sweep:
        check_sweep_arguments(args)

    tracking.configure(args.tracking_uri, directory=args.mlruns)
    ledger = TokenLedger()
    if checkpoint:
        ledger.restore(checkpoint["tokens"])
    with ExitStack() as stack:
        env = stack.enter_context(make_environment(args, workers=args.num_threads))
        args.mode = args.mode or env.learning
        if args.mode == "offline" and env.learning == "online":
            raise ConfigError(f"{env.name} has no train split: its docs are learned per task, in online mode")
        lms = stack.enter_context(open_lms(lm_options(args, slots=args.num_threads), ledger,
                                           ("agent", "editor", "exploration")))
        if args.sweep:
            sweep = run_sweep(args, env, lambda trial_args: optimize_once(trial_args, env, lms, ledger, nested=True))
        else:
            summary = optimize_once(args, env, lms, ledger, checkpoint)
    if args.json:
        print(json.dumps(sweep if args.sweep else summary))
    elif args.sweep:
        print_sweep(sweep)
    else:
        _print(summary)
    return 0


def optimize_once(args: argparse.Namespace, env: Any, lms: dict[str, Any], ledger: TokenLedger,
                  checkpoint: dict[str, Any] | None = None, *, nested: bool = False) -> dict[str, Any]:
    """One optimizer run on fresh docs (or a checkpoint's), tracked as one MLflow run; its summary.

    The environment and LM server are the caller's, so a sweep's trials share them.
    """
    if not checkpoint:
        ledger.restore({})
    controller = getattr(env, "faults", None)
    if controller is not None:
        if checkpoint and "faults" in checkpoint:
            controller.restore(checkpoint["faults"])
        else:
            controller.reset()
    trainset = sample_tasks(env.tasks("test" if env.learning == "online" else "train"), args.limit, args.seed)
    toolbox = env.toolbox()
    toolbox.meta[OPTIMIZED_TOOLSETS] = list(dict.fromkeys(env.toolset_of(task) for task in trainset))
    if checkpoint:
        toolbox.adopt_docs(type(toolbox).from_json(checkpoint["docs"]))
    agent = FunctionCallingAgent(instructions=env.agent_instructions)
    agent.lm = lms["agent"]
    program = ToolAgentProgram(toolbox, agent)
    saved_args = {name: str(value) if isinstance(value, Path) else value
                  for name, value in vars(args).items() if name not in HOW_IT_RUNS}
    tracker = tracking.MlflowIterationTracker(ledger, extra_checkpoint={"args": saved_args},
                                              earlier_seconds=(checkpoint or {}).get("elapsed_seconds", 0.0),
                                              start_docs=toolbox.to_json(),
                                              live_state=(lambda: {"faults": controller.snapshot()})
                                              if controller is not None else None)
    optimizer = _build_optimizer(args, env, lms, tracker)
    tags = {"command": "optimize", "optimizer": args.optimizer, "mode": args.mode, "env": env.name,
            "setting": env.setting, "lm": args.lm, "editor_lm": args.editor_lm or args.lm, "seed": args.seed}
    models = dict.fromkeys(tracking.model_label(lm, embedded_model=args.embedded_model, gguf=args.gguf)
                           for lm in (args.lm, args.editor_lm or args.lm))
    variant = args.variant if args.optimizer == "toolobserver" and args.variant != "improved" else None
    name = tracking.run_name(args.optimizer, variant, env.name, env.setting, f"n{len(trainset)}", "+".join(models))
    with _run(args.resume, name, tags, {**run_params(saved_args, args), "n_tasks": len(trainset)}, nested) as run:
        try:
            with phase_of(env, "exploration"):
                learned = optimizer.compile(program, trainset=trainset, resume=checkpoint or None)
        except MapInterrupted as stop:
            hint = f"finished iterations are kept; continue with --resume {run.info.run_id}"
            if isinstance(stop.cause, KeyboardInterrupt):
                raise KeyboardInterrupt(hint) from None
            raise RunError(f"optimization stopped ({stop}); {hint}") from stop.cause
        test = None
        if env.learning == "offline":
            test = _evaluate_on_test(args, env, learned, sample_tasks(env.tasks("test"), args.test_limit, args.seed))
        elif getattr(env, "faults", None) is not None:  # learned under faults: the final docs are also scored in the test phase
            test = _evaluate_on_test(args, env, learned, trainset)
        return _finish(args, env, learned, optimizer, ledger, run.info.run_id, tracker.elapsed_seconds(), test,
                       register=not nested)


def run_params(saved_args: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """The options that define this run, as logged: not other optimizers' or environments' knobs,
    nor options that do not apply (an offline batch size online, embedded-model options for hosted models)."""
    others = set().union(*(own_options(name) for name in OPTIMIZERS)) - own_options(args.optimizer)
    others |= other_environments_options(args.env)
    if args.mode != "offline":
        others |= {"batch_size", "test_limit"}
    if EMBEDDED not in (args.lm, args.editor_lm or args.lm):
        others |= {"embedded_model", "gguf", "no_grammar"}
    unset = {name for name in ("toolset", "gguf", "editor_lm") if saved_args.get(name) is None}
    return {name: value for name, value in saved_args.items() if name not in others | unset}


def _build_optimizer(args: argparse.Namespace, env: Any, lms: dict[str, Any], tracker: Any) -> DocOptimizer:
    """The teleprompter ``--optimizer`` names, with its knobs and its LMs charged to the right phases."""
    spec = OPTIMIZERS[args.optimizer]
    common = {"env": env, "num_threads": args.num_threads, "tracker": tracker, "progress": not args.quiet}
    if spec.offers_probe:  # probing is not specific to ToolObserver: offered to every optimizer
        common["probe"] = bool(args.probe)
    return spec.build(env, spec.knob_values(args), lms, args, common)


def _run(resume: str | None, name: str, tags: dict[str, Any], params: dict[str, Any], nested: bool) -> Any:
    if resume:
        return tracking.resumed_run(resume)
    return tracking.tracked_run(name, tags=tags, params=params, nested=nested)


def _evaluate_on_test(args: argparse.Namespace, env: Any, program: ToolAgentProgram, tasks: list[Any]) -> dict[str, float]:
    """The learned docs scored on ``tasks`` in the test phase: offline learning is judged on held-out tasks
    (a seeded test sample); online learning under faults on its own tasks again, with the test phase's faults
    (none, for a policy of the exploration phase) instead of those it learned under."""
    import mlflow

    with phase_of(env, "test"):
        trajectories = run_rollouts(env, program.agent, program.toolbox, tasks, num_threads=args.num_threads,
                                    description="test: learned docs", progress=not args.quiet)
    metrics = {**robustness(trajectories), **env.summarise(trajectories)}
    mlflow.log_metrics({f"test_{k}": float(v) for k, v in metrics.items()})
    mlflow.log_text("\n".join(json.dumps(t.to_dict(), default=str) for t in trajectories), "test_trajectories.jsonl")
    return metrics


def _finish(args: argparse.Namespace, env: Any, program: ToolAgentProgram, optimizer: DocOptimizer,
            ledger: TokenLedger, run_id: str, seconds: float, test: dict[str, float] | None, *,
            register: bool) -> dict[str, Any]:
    """Save final docs, log the summary table and return the summary.

    With ``register``, each optimized toolset's docs become a new version of its prompt in MLflow's
    registry (a sweep's trials do not: ``@latest`` would then be whichever trial ended last).
    """
    import mlflow

    from otbench.prompts import register_docs

    client = mlflow.tracking.MlflowClient()
    history = {key: sorted(client.get_metric_history(run_id, key), key=lambda m: m.step)
               for key in (*env.metric_names, "docs_changed", "tokens_all_total")}
    results = program.detailed_results
    before = {key: values[0].value for key, values in history.items()
              if values and key in env.metric_names and optimizer.evaluates_start_docs}
    if results.final_trajectories:
        after = {k: v for k, v in env.summarise(list(results.final_trajectories)).items() if k != "n"}
    else:  # a resumed run with nothing left to do: its last logged step is final
        after = {key: values[-1].value for key, values in history.items() if values and key in env.metric_names}
    out = args.out / run_id
    out.mkdir(parents=True, exist_ok=True)
    program.toolbox.write(out / "final_docs.json")
    program.toolbox.save(str(out / "final_state.json"))
    mlflow.log_artifact(str(out / "final_docs.json"), Path(RUN_DOCS_ARTIFACT).parent.as_posix())
    mlflow.log_artifact(str(out / "final_state.json"), Path(RUN_DOCS_ARTIFACT).parent.as_posix())
    prompts: dict[str, str] = {}
    if register:
        prompts = register_docs(program.toolbox, program.toolbox.meta[OPTIMIZED_TOOLSETS], env=env.name,
                                setting=env.setting, tags={"run_id": run_id, "optimizer": args.optimizer})
        mlflow.log_dict(prompts, "docs/prompts.json")
    contaminated = _log_contamination(env, program)
    rounds = list(results.editor_rounds.values())
    tokens = ledger.snapshot()
    llm_seconds = sum(row["seconds"] for phase, row in tokens.items() if phase != "all")
    summary = {
        "run_id": run_id, "optimizer": args.optimizer, "env": env.name, "setting": env.setting,
        "mode": args.mode, "n": len(results.final_trajectories), "before": before, "after": after, "test": test,
        "mean_editor_iterations": round(sum(rounds) / len(rounds), 2) if rounds else 0.0,
        "steps": len(history["tokens_all_total"]),
        "tokens_by_phase": tokens, "server": ledger.server_figures(), "seconds": round(seconds, 1),
        "share_of_time_outside_llm": round(max(0.0, 1 - llm_seconds / seconds), 4) if seconds else 0.0,
        "docs": str(out / "final_docs.json"), "prompts": prompts, "contamination": contaminated,
    }
    mlflow.log_metrics({f"final_{k}": v for k, v in after.items()} | ledger.server_metrics() |
                       {"mean_editor_iterations": summary["mean_editor_iterations"], "seconds": seconds})
    tracking.log_table(_summary_rows(summary), "summary_table.json")
    mlflow.log_dict(summary, "summary.json")
    return summary


def _log_contamination(env: Any, program: ToolAgentProgram) -> dict[str, Any]:
    """How much of the final docs states injected faults as tool behaviour (:mod:`evals.contamination`): logged
    as metrics, with the contaminated sentences and the injected faults as an artefact; also measured without
    faults, where it counts fault vocabulary an optimizer wrote on its own."""
    import mlflow

    controller = getattr(env, "faults", None)
    faults = controller.injected if controller is not None else []
    explored = [fault for fault in faults if fault.phase == "exploration"]
    measured = contamination(program.toolbox, env.toolbox(), [fault.message for fault in explored],
                             program.toolbox.meta.get(OPTIMIZED_TOOLSETS))
    mlflow.log_metrics(measured.metrics() | {"injected_exploration_faults": float(len(explored))})
    by_kind: dict[str, int] = {}
    for fault in explored:
        by_kind[fault.kind] = by_kind.get(fault.kind, 0) + 1
    report = {**measured.metrics(), "sentences": measured.sentences, "tools": measured.tools,
              "quotes": measured.quotes, "injected_by_kind": by_kind,
              "policy": controller.policy.describe() if controller is not None else None}
    mlflow.log_dict({**report, "injected": [vars(fault) for fault in faults]}, "doc_contamination.json")
    return report


def _summary_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    rows = [{"docs": "before", **summary["before"]}] if summary["before"] else []
    rows.append({"docs": "after", **summary["after"]})
    if summary["test"] is not None:
        rows.append({"docs": "after, test split", **{k: v for k, v in summary["test"].items() if k != "n"}})
    return rows


def _print(summary: dict[str, Any]) -> None:
    print(format_table(_summary_rows(summary)))
    rows = [{"phase": phase, **row} for phase, row in summary["tokens_by_phase"].items()]
    print(format_table(rows, ["phase", "prompt_tokens", "completion_tokens", "total_tokens", "calls", "paid_calls",
                              "cached_tokens", "seconds"]))
    server = server_table(summary["server"])
    if server:
        print(server)
    print(f"mean editor iterations: {summary['mean_editor_iterations']}   seconds: {summary['seconds']}   "
          f"outside LLM calls: {summary['share_of_time_outside_llm']:.1%}")
    shown = summary["contamination"]
    print(f"doc contamination: {shown['doc_contamination']:.1%} of learned sentences, "
          f"{shown['doc_contaminated_tools']:.1%} of tools ({sum(shown['injected_by_kind'].values())} faults injected "
          "while learning)")
    print(f"final docs: {summary['docs']}   MLflow run: {summary['run_id']}")
    if summary["prompts"]:
        first = next(iter(summary["prompts"].values()))
        print(f"in MLflow's prompt registry: {len(summary['prompts'])} toolset(s), e.g. {first}")


if __name__ == "__main__":
    run_main(main)
