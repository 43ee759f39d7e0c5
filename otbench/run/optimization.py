"""An optimize run's execution: learn tool docs with one optimizer, every iteration tracked in MLflow.

It takes the run's definition (:class:`otbench.run.definition.RunDefinition`, ``command == "optimize"``: the
environment, the task sample, the models, the optimizer with its knobs) and its settings
(:class:`otbench.run.settings.RunSettings`); the ``optimize`` command only makes them from its options and prints
the result, and ``compare``, ``reproduce`` and sweeps call :func:`execute` with the definitions they plan.

Every iteration is logged (metrics by step, docs, trajectories, editor exchanges) with a checkpoint that holds the
run's definition, so an interrupted run continues with ``resume`` (:func:`otbench.run.checkpoints.resumable` reads
what it continues). The final docs are written as an otbench docs file and as DSPy state, locally and as run
artefacts.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from otbench import mlflow_store
from otbench.core.faults import phase_of
from otbench.envs.registry import learning_of, make_environment
from otbench.errors import ConfigError, RunError
from otbench.evals.outcomes import rules_of
from otbench.evals.robustness import robustness
from otbench.llm.session import LMOptions, check_models, open_lms
from otbench.optimizers.knobs import MODES
from otbench.optimizers.spec import Built
from otbench.run import checkpoints, naming, tracking, views
from otbench.run import outcomes as run_outcomes
from otbench.run.definition import DEFINITION_TAG, KEY_TAG, Optimizer, RunDefinition, split_sizes
from otbench.run.evaluation import TaskKeeper, kept_scoring
from otbench.run.outcomes import RunOutcomes
from otbench.run.settings import RunSettings

if TYPE_CHECKING:  # what runs an optimization is imported when one runs (it loads DSPy)
    from otbench.core.trajectory import Trajectory
    from otbench.evals.stats import Interval
    from otbench.llm.metering import TokenLedger
    from otbench.modules.program import ToolAgentProgram

PHASES = ("agent", "editor", "exploration")


@dataclass(frozen=True)
class OptimizeResult:
    """What one optimize run learned and cost, as logged to its MLflow run (``summary.json``)."""

    run_id: str
    optimizer: str
    env: str
    setting: str
    mode: str
    n: int
    before: dict[str, float]
    """The starting docs' metrics on the tasks ``after`` is scored on: the optimizer's first step where it scores
    them, else a scoring of the starting docs made after learning (not in a sweep's trials)."""
    after: dict[str, float]
    test: dict[str, float] | None
    """The learned docs scored in the test phase: on held-out tasks offline, again after learning under faults."""
    mean_editor_iterations: float
    steps: int
    tokens_by_phase: dict[str, Any]
    server: dict[str, Any]
    seconds: float
    share_of_time_outside_llm: float
    docs: str
    """The final docs file written locally."""
    prompts: dict[str, str]
    """Toolset -> the prompt version in MLflow's registry holding its docs."""
    contamination: dict[str, Any]
    invented: dict[str, Any]
    """Learned sentences that state behaviour no call the optimizer saw supports (:mod:`otbench.evals.invented`)."""
    intervals: dict[str, dict[str, Interval]] = field(default_factory=dict)
    """``before``, ``after`` and ``test`` (where scored): each metric with its 95% interval (:mod:`otbench.evals.stats`)."""
    validation: dict[str, Any] | None = None
    """With ``--val-limit``: the docs chosen (``start``, ``step N`` or ``final``), on how many tasks, and their
    metrics there."""
    tools_learned: int = 0
    """Tools whose docs the run changed (:attr:`otbench.optimizers.results.DocOptimizationResult.tools_learned`)."""
    gate: dict[str, dict[str, str]] = field(default_factory=dict)
    """Tool key -> whether it kept its learned doc or got its starting one back, and on what evidence (offline, where
    the gate ran: :mod:`otbench.optimizers.gate`)."""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Workbench:
    """What the runs of one command share (a sweep's trials): the environment and the LMs by phase,
    metered by one ledger."""

    env: Any
    lms: Mapping[str, Any]
    ledger: TokenLedger
    lm: LMOptions
    """The LM options of the definition's models, reached as the settings say (:meth:`RunDefinition.lm_options`)."""


def optimizer_of(definition: RunDefinition) -> Optimizer:
    """The optimizer of an optimize run's definition; refused on one line for any other run."""
    if definition.command != "optimize" or definition.optimizer is None:
        raise ConfigError(f"not an optimize run: a run of {definition.command}")
    return definition.optimizer


def check(definition: RunDefinition, lm: LMOptions) -> None:
    """Refuse, on one line and before anything slow loads, an optimize run that cannot run: an unknown optimizer or
    mode, knobs out of their bounds, a model without its key (``lm``: the LM options of its models,
    :meth:`RunDefinition.lm_options`)."""
    optimizer = optimizer_of(definition)
    if optimizer.mode not in MODES:
        raise ConfigError(f"unknown mode {optimizer.mode!r}; choose from {', '.join(MODES)}")
    if optimizer.mode == "offline" and learning_of(definition.env) == "online":
        raise ConfigError(f"{definition.env} has no train split: its docs are learned per task, in online mode")
    optimizer.spec.check(optimizer.chosen)
    check_models(lm)  # a missing key is refused before the store, data or model load


@contextmanager
def open_workbench(definition: RunDefinition, settings: RunSettings, lm: LMOptions) -> Iterator[Workbench]:
    """The environment and LMs an optimize run (or a sweep's trials) work with, closed when the block ends; the run
    is checked first (:func:`check`), the MLflow store is opened once the environment is built (what building it
    refuses, a server that does not start, tasks that cannot be read, is refused before anything is written) and
    before the model loads. ``lm``: the LM options of the definition's models (:meth:`RunDefinition.lm_options` of
    the settings' ``lm``)."""
    from otbench.llm.metering import TokenLedger

    optimizer = optimizer_of(definition)
    check(definition, lm)
    ledger = TokenLedger()
    with ExitStack() as stack:
        env = stack.enter_context(make_environment(
            dataclasses.replace(definition.options, sandbox_workers=settings.sandbox_workers), workers=settings.num_threads))
        if optimizer.mode == "offline" and env.learning == "online":
            raise ConfigError(f"{env.name} has no train split: its docs are learned per task, in online mode")
        if definition.sample.val_limit and env.learning == "online":  # before the model loads
            raise ConfigError(f"--val-limit: {env.name} learns docs per task (online), so no docs learned here "
                              "apply to other tasks; drop --val-limit")
        mlflow_store.configure(settings.tracking.uri, directory=settings.tracking.directory)
        lm = dataclasses.replace(lm, slots=settings.num_threads)
        lms = stack.enter_context(open_lms(lm, ledger, PHASES))
        yield Workbench(env, lms, ledger, lm)


def execute(definition: RunDefinition, settings: RunSettings, *, workbench: Workbench | None = None,
            nested: bool = False) -> OptimizeResult:
    """One optimizer run on fresh docs, tracked as one MLflow run.

    With a ``workbench`` the run uses its environment and LMs (a sweep's trials share them); ``nested``
    makes the run a child of the active MLflow run.
    """
    lm = definition.lm_options(settings.lm)
    started: dict[str, Any] = {}
    if definition.coverage_from:  # read before anything slow loads: a run with no pass to go on from is refused
        mlflow_store.configure(settings.tracking.uri, directory=settings.tracking.directory,
                               existing=f"--coverage-from {definition.coverage_from}")
        started = checkpoints.coverage_checkpoint(definition.coverage_from)
    if workbench is not None:  # its store was opened with it
        check(definition, lm)
        return _optimize(definition, settings, workbench, started, resumed=None, nested=nested)
    with open_workbench(definition, settings, lm) as opened:
        return _optimize(definition, settings, opened, started, resumed=None, nested=False)


def resume(run_id: str, settings: RunSettings) -> OptimizeResult:
    """An interrupted run continued from its checkpoint, in the same MLflow run: its definition is the
    checkpoint's (:func:`otbench.run.checkpoints.resumable`), its settings the ones given here."""
    mlflow_store.configure(settings.tracking.uri, directory=settings.tracking.directory, existing=f"--resume {run_id}")
    definition, checkpoint = checkpoints.resumable(run_id)
    lm = definition.lm_options(settings.lm)
    with open_workbench(definition, settings, lm) as opened:
        return _optimize(definition, settings, opened, checkpoint, resumed=run_id, nested=False)


def _optimize(definition: RunDefinition, settings: RunSettings, bench: Workbench, checkpoint: dict[str, Any], *,
              resumed: str | None, nested: bool) -> OptimizeResult:
    from otbench.core.parallel import MapInterrupted
    from otbench.modules.agent import FunctionCallingAgent
    from otbench.modules.program import ToolAgentProgram
    from otbench.modules.tool_docs import OPTIMIZED_TOOLSETS
    from otbench.optimizers.base import START_DOCS

    env, ledger = bench.env, bench.ledger
    chosen = optimizer_of(definition)
    definition = definition.sized(split_sizes(env))
    if definition.coverage_from and not resumed:
        same_pass(definition, checkpoint)
    defined = definition.to_json()
    views.share_view(env.name, env.metric_names, env.primary_metric)
    # a scoring on the test tasks under way when the run stopped kept its tasks and spend, later than any checkpoint
    tested_before, spent = kept_scoring(resumed) if resumed else ({}, None)
    ledger.restore(spent["tokens_by_phase"] if spent else checkpoint["tokens"] if checkpoint else {})
    controller = getattr(env, "faults", None)
    if controller is not None:
        if checkpoint and "faults" in checkpoint:
            controller.restore(checkpoint["faults"])
        else:
            controller.reset()
    # what defines the run names it (its sized sample: as many tasks as it learns on), tags it and is its params (a
    # sweep's trial logs every knob it draws)
    lm = bench.lm
    models = dict.fromkeys(naming.model_label(model, embedded_model=lm.embedded_model, gguf=lm.gguf)
                           for model in (lm.lm, lm.editor_lm or lm.lm))
    name = naming.run_name(definition.run_name(int(definition.sample.limit or 0), "+".join(models), env.setting))
    params = definition.params(env.setting, learning=env.learning, swept=nested)
    tags = definition.tags(env.setting)
    trainset, valset, testset = definition.tasks(env, faults=controller is not None)
    toolbox = env.toolbox()
    toolbox.meta[OPTIMIZED_TOOLSETS] = list(dict.fromkeys(env.toolset_of(task) for task in trainset))
    if checkpoint:
        checkpoint.setdefault(START_DOCS, toolbox.to_json())  # a checkpoint logged before it kept its start: fresh
        toolbox.adopt_docs(type(toolbox).from_json(checkpoint["docs"]))
    agent = FunctionCallingAgent(instructions=env.agent_instructions)
    agent.lm = bench.lms["agent"]
    program = ToolAgentProgram(toolbox, agent)
    tracker = tracking.MlflowIterationTracker(ledger, learned=env.metric_names,
                                              extra_checkpoint={"definition": defined},
                                              earlier_seconds=(spent or {}).get(
                                                  "seconds", checkpoint.get("elapsed_seconds", 0.0)),
                                              start_docs=toolbox.to_json(),
                                              start_step=checkpoint.get(checkpoints.CHECKPOINT_STEP),
                                              live_state=(lambda: {"faults": controller.snapshot()})
                                              if controller is not None else None,
                                              logged_steps=tracking.logged_steps(resumed) if resumed else None)
    # the teleprompter the definition names, with its knobs and its LMs charged to the right phases
    common = {"env": env, "num_threads": settings.num_threads, "tracker": tracker, "progress": settings.progress}
    optimizer = chosen.spec.build(chosen.chosen, bench.lms, Built(env, chosen.mode, definition.sample.drawn_with, common))
    # a resumed run may have been logged by an earlier format (or unsized): it is tagged as its definition reads now
    opened = (tracking.resumed_run(resumed, tags={tag: tags[tag] for tag in (KEY_TAG, DEFINITION_TAG)}) if resumed
              else tracking.tracked_run(name, tags=tags, params=params, nested=nested))
    with opened as tracked:
        if not resumed:
            tracking.log_definition(defined)
        tracking.keep_coverage_checkpoint(checkpoint)  # a pass gone on from stays one to go on from
        # a stop while learning or while scoring what was learned keeps every finished iteration and every scored
        # test task: --resume picks up from there
        keeper = TaskKeeper(list(tested_before.values()), ledger, tracker.elapsed_seconds)
        try:
            with phase_of(env, "exploration"):
                learned = optimizer.compile(program, trainset=trainset, valset=valset, resume=checkpoint or None)
            tested = _evaluate_on_test(settings, env, learned, testset, keeper) if testset is not None else None
            started = None
            scored_first = optimizer.evaluates_start_docs
            if not scored_first and not nested:  # a sweep's trials share one start: not paid per trial
                started = _score_start_docs(settings, env, learned, trainset)
        except MapInterrupted as stop:
            hint = f"finished iterations are kept; continue with --resume {tracked.info.run_id}"
            if isinstance(stop.cause, KeyboardInterrupt):
                raise KeyboardInterrupt(hint) from None
            raise RunError(f"optimization stopped ({stop}); {hint}") from stop.cause
        return _finish(definition, settings, env, learned, scored_first, ledger, tracked.info.run_id,
                       tracker.elapsed_seconds(), tested, register=not nested, started=started)


def same_pass(definition: RunDefinition, checkpoint: dict[str, Any]) -> None:
    """Refuse, on one line, to go on from a coverage pass (``checkpoint``, of the run ``coverage_from`` names) made on
    other tasks, tools or models than ``definition``'s (sized). Gone on from, the pass's docs, calls, tokens and seconds
    are the new run's, counted in its spend and budget as if it had made the pass."""
    from otbench.run.logged import definition_from_json

    made = definition_from_json(checkpoint["definition"])
    for part in ("env", "setting", "environment", "sample", "models"):
        if getattr(made, part) != getattr(definition, part):
            raise ConfigError(f"--coverage-from {definition.coverage_from}: that run's pass was made with another "
                              f"{part} ({_shown_part(getattr(made, part))}); define this run as that one was, but for "
                              "its optimizer")


def _shown_part(value: Any) -> str:
    return ", ".join(f"{name}={item}" for name, item in value) if isinstance(value, tuple) else str(value)


def _log_validation(env: Any, program: ToolAgentProgram) -> dict[str, Any] | None:
    """The valset's choice among the docs, logged: metrics ``val_*``, the chosen docs as a tag, the attempts."""
    import mlflow

    results = program.detailed_results
    if results.val_metrics is None:
        return None
    candidates = {label: {k: float(v) for k, v in scores.items() if k in env.metric_names}
                  for label, scores in results.val_candidates.items()}
    metrics = candidates[results.chosen_docs]
    mlflow.log_metrics({f"val_{k}": v for k, v in metrics.items()})
    mlflow.set_tag("chosen_docs", results.chosen_docs)
    tracking.log_trajectories(list(results.val_trajectories), "val_trajectories.jsonl")
    mlflow.log_dict(candidates, "val_candidates.json")
    return {"chosen": results.chosen_docs, "n": len(results.val_trajectories), "metrics": metrics,
            "candidates": candidates}


def _evaluate_on_test(settings: RunSettings, env: Any, program: ToolAgentProgram, tasks: list[Any],
                      keeper: TaskKeeper) -> tuple[dict[str, float], list[Trajectory]]:
    """The learned docs scored on ``tasks`` in the test phase: offline learning is judged on held-out tasks
    (a seeded test sample); online learning under faults on its own tasks again, with the test phase's faults
    (none, for a policy of the exploration phase) instead of those it learned under. Tasks ``keeper`` holds (kept
    before a stop) are not run again; each task run here is kept by it as it finishes, and all of them on a stop."""
    import mlflow

    from otbench.core.parallel import MapInterrupted
    from otbench.envs.base import task_key
    from otbench.evals.harness import run_rollouts

    scored = {trajectory.task_id: trajectory for trajectory in keeper.kept}
    keys = [task_key(task) for task in tasks]
    missing = [task for task, key in zip(tasks, keys, strict=True) if key not in scored]
    with phase_of(env, "test"):
        try:
            ran = run_rollouts(env, program.agent, program.toolbox, missing, num_threads=settings.num_threads,
                               description="test: learned docs", progress=settings.progress, on_finished=keeper.add)
        except MapInterrupted:
            keeper.keep()
            raise
    scored |= {trajectory.task_id: trajectory for trajectory in ran}
    trajectories = [scored[key] for key in keys]
    metrics = {**robustness(trajectories), **env.summarise(trajectories)}
    mlflow.log_metrics({f"test_{k}": float(v) for k, v in metrics.items()})
    tracking.log_environment_tables(env, trajectories, prefix="test_")
    tracking.log_trajectories(trajectories, "test_trajectories.jsonl")
    return metrics, trajectories


def _score_start_docs(settings: RunSettings, env: Any, program: ToolAgentProgram,
                      trainset: list[Any]) -> tuple[dict[str, float], list[Trajectory]]:
    """The starting docs (the setting's) scored on the tasks the final docs were scored on, for the "before" row
    of an optimizer whose first step does not score them (its ``evaluates_start_docs`` is false: one that probes the
    tools first, so its step 0 already shows learned schemas, or one that rewrites the docs before it scores).
    In the phase the final attempts were made in, so both rows meet the same injected faults policy; charged to
    :data:`otbench.run.tracking.START_DOCS_PHASE`."""

    from otbench.envs.base import task_key
    from otbench.evals.harness import run_rollouts

    finals = {trajectory.task_id for trajectory in program.detailed_results.final_trajectories}
    tasks = [task for task in trainset if task_key(task) in finals] or trainset
    agent = copy.copy(program.agent)
    lm = getattr(agent, "lm", None)
    if lm is not None and hasattr(lm, "for_phase"):
        agent.lm = lm.for_phase(tracking.START_DOCS_PHASE)
    with phase_of(env, "exploration"):
        trajectories = run_rollouts(env, agent, env.toolbox(), tasks, num_threads=settings.num_threads,
                                    description="before: starting docs", progress=settings.progress)
    tracking.log_trajectories(trajectories, "start_docs_trajectories.jsonl")
    return {k: v for k, v in env.summarise(trajectories).items() if k != "n"}, trajectories


def _finish(definition: RunDefinition, settings: RunSettings, env: Any, program: ToolAgentProgram, scored_first: bool,
            ledger: TokenLedger, run_id: str, seconds: float,
            tested: tuple[dict[str, float], list[Trajectory]] | None, *, register: bool,
            started: tuple[dict[str, float], list[Trajectory]] | None = None) -> OptimizeResult:
    """Save final docs, log the summary table and return the result; ``started``: the starting docs' scores where
    the optimizer's own first step does not give them.

    With ``register``, each optimized toolset's docs become a new version of its prompt in MLflow's
    registry (a sweep's trials do not: ``@latest`` would then be whichever trial ended last).
    """
    import mlflow

    from otbench.modules.tool_docs import OPTIMIZED_TOOLSETS
    from otbench.run.docs_io import RUN_DOCS_ARTIFACT, keep_memory
    from otbench.run.prompts import register_docs

    optimizer = optimizer_of(definition)
    client = mlflow.tracking.MlflowClient()
    history = {key: tracking.learning_history(run_id, key) for key in env.metric_names} | {
        key: sorted(client.get_metric_history(run_id, key), key=lambda m: m.step)
        for key in ("docs_changed", "tokens_all_total")}
    results = program.detailed_results
    test = tested[0] if tested is not None else None
    if started is not None:
        before = {key: value for key, value in started[0].items() if key in env.metric_names}
    else:
        before = {key: values[0].value for key, values in history.items()
                  if values and key in env.metric_names and scored_first}
    if results.final_trajectories:
        after = {k: v for k, v in env.summarise(list(results.final_trajectories)).items() if k != "n"}
    else:  # a resumed run with nothing left to do: its last logged step is final
        after = {key: values[-1].value for key, values in history.items() if values and key in env.metric_names}
    out = settings.out / run_id
    out.mkdir(parents=True, exist_ok=True)
    keep_memory(program.toolbox, env)
    program.toolbox.write(out / "final_docs.json")
    program.toolbox.save(str(out / "final_state.json"))
    mlflow.log_artifact(str(out / "final_docs.json"), Path(RUN_DOCS_ARTIFACT).parent.as_posix())
    mlflow.log_artifact(str(out / "final_state.json"), Path(RUN_DOCS_ARTIFACT).parent.as_posix())
    contaminated = _log_contamination(env, program)
    validation = _log_validation(env, program)
    gate = {key: dict(decision) for key, decision in results.gate.items()}
    if gate:
        mlflow.log_dict(gate, "gate.json")
        mlflow.log_metrics({f"gate_kept_{kept}": float(sum(d["kept"] == kept for d in gate.values()))
                            for kept in ("learned", "start")})
    invented = results.invented
    mlflow.log_metrics(invented.metrics())
    mlflow.log_dict({**invented.metrics(), "sentences": invented.sentences, "quotes": dict(invented.quotes)},
                    "invented_claims.json")
    rounds = list(results.editor_rounds.values())
    tokens = ledger.snapshot()
    kept = _log_outcomes(definition.sample.drawn_with, env, run_id, history, list(results.final_trajectories),
                         tested[1] if tested is not None else None, scored_first,
                         started[1] if started is not None else None)
    rules = rules_of(env)
    intervals = {split: run_outcomes.intervals(part, rules) for split, part in kept.splits.items()}
    tracking.log_result({k: v for k, v in (test or after).items() if k in env.metric_names},
                        tracking.cost_tokens(tokens), intervals.get(kept.result))
    prompts: dict[str, str] = {}
    if register:
        prompts = register_docs(program.toolbox, program.toolbox.meta[OPTIMIZED_TOOLSETS], env=env.name,
                                setting=env.setting, tags={"run_id": run_id, "optimizer": optimizer.name})
        mlflow.log_dict(prompts, "docs/prompts.json")
    llm_seconds = sum(row["seconds"] for phase, row in tokens.items() if phase != "all")
    result = OptimizeResult(
        run_id=run_id, optimizer=optimizer.name, env=env.name, setting=env.setting, mode=optimizer.mode,
        n=len(results.final_trajectories), before=before, after=after, test=test,
        mean_editor_iterations=round(sum(rounds) / len(rounds), 2) if rounds else 0.0,
        steps=len(history["tokens_all_total"]), tokens_by_phase=tokens, server=ledger.server_figures(),
        seconds=round(seconds, 1),
        share_of_time_outside_llm=round(max(0.0, 1 - llm_seconds / seconds), 4) if seconds else 0.0,
        docs=str(out / "final_docs.json"), prompts=prompts, contamination=contaminated,
        invented={**invented.metrics(), "sentences": invented.sentences, "quotes": dict(invented.quotes)},
        intervals=intervals, validation=validation, tools_learned=results.tools_learned, gate=gate)
    mlflow.log_metrics({f"final_{k}": v for k, v in after.items()} | ledger.server_metrics() |
                       {"mean_editor_iterations": result.mean_editor_iterations, "seconds": seconds,
                        "tools_learned": float(results.tools_learned)} |
                       ({} if results.evidence_kept is None else {"evidence_kept": float(results.evidence_kept)}))
    tracking.log_table(summary_rows(result), "summary_table.json")
    mlflow.log_dict(result.to_dict(), "summary.json")
    return result


def _log_outcomes(sample: int, env: Any, run_id: str, history: Mapping[str, list[Any]],
                  final: list[Trajectory], test: list[Trajectory] | None, scores_start: bool,
                  started: list[Trajectory] | None = None) -> RunOutcomes:
    """Keep the per-task outcomes of the starting docs (the first step's attempts, read back from the run, so a
    resumed run has them too; or ``started``, where they were scored apart), of the final docs and of the test
    split; the row is the test split's where there is one."""
    from otbench.evals.outcomes import Outcomes

    splits: dict[str, Outcomes] = {}
    first = history.get(env.primary_metric) or []
    if scores_start and first:
        lines = run_outcomes.artifact_text(run_id, f"iterations/step_{first[0].step:02d}/trajectories.jsonl")
        if lines is not None:
            splits["before"] = run_outcomes.from_trajectory_lines(lines.splitlines(), sample)
    if started:
        splits["before"] = Outcomes.of(started, sample)
    if final:
        splits["after"] = Outcomes.of(final, sample)
    if test is not None:
        splits["test"] = Outcomes.of(test, sample)
    kept = RunOutcomes(splits, "test" if test is not None else "after")
    if kept.result in splits:
        run_outcomes.log(kept)
    return kept


def _log_contamination(env: Any, program: ToolAgentProgram) -> dict[str, Any]:
    """How much of the final docs states injected faults as tool behaviour (:mod:`otbench.evals.contamination`): logged
    as metrics, with the contaminated sentences and the injected faults as an artefact; also measured without
    faults, where it counts fault vocabulary an optimizer wrote on its own."""
    import mlflow

    from otbench.evals.contamination import contamination
    from otbench.modules.tool_docs import OPTIMIZED_TOOLSETS

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


def summary_rows(result: OptimizeResult, *, text: bool = False) -> list[dict[str, Any]]:
    """Before, after and on the test split: each metric and its interval's ends (``text``: as one printed cell,
    ``0.667 [0.488, 0.808]``)."""
    splits = [("before", "before", result.before), ("after", "after", result.after),
              ("after, test split", "test", result.test)]
    rows = []
    for label, split, values in splits:
        if not values and split != "after":
            continue
        found = result.intervals.get(split, {})
        row: dict[str, Any] = {"docs": label}
        for name, value in (values or {}).items():
            if name == "n":
                continue
            shown = found.get(name)
            if text:
                row[name] = f"{value:.3f} {shown.bounds_text(3)}" if shown is not None else value
            else:
                row[name] = value
                if shown is not None and shown.known:
                    row |= {f"{name}_ci_low": shown.low, f"{name}_ci_high": shown.high}
        rows.append(row)
    return rows


