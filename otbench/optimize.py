"""``python -m otbench.optimize --optimizer toolobserver``: learn tool docs, tracked in MLflow.

With no other argument: BFCL-Opaque, names_only, the embedded model, a 10-test sample, online
ToolObserver; ``--optimizer play2prompt|easytool|gepa`` runs the competing optimizers the same way,
with the same tracking and token accounting. Every iteration is logged (metrics by step, docs, trajectories, editor exchanges)
with a checkpoint, so an interrupted run continues with ``--resume RUN_ID``. The final docs are
written as an otbench docs file and as DSPy state, locally and as run artefacts.

:func:`run` does the work from typed options (:class:`OptimizeOptions`) and returns an
:class:`OptimizeResult`; ``compare`` and sweeps call it directly, the command line only fills the
options and prints the result.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from otbench.cli import OneLineParser, add_lm_arguments, add_tracking_arguments, positive_int, run_main
from otbench.core.faults import phase_of
from otbench.core.tables import format_table, server_table
from otbench.envs.base import sample_tasks
from otbench.envs.registry import (
    EnvironmentOptions,
    add_environment_arguments,
    make_environment,
    options_from_values,
    resolve,
)
from otbench.errors import ConfigError, RunError
from otbench.evals.outcomes import rules_of
from otbench.evals.robustness import robustness
from otbench.llm.session import LMOptions, check_models, open_lms
from otbench.optimizers import knobs as knob_rules
from otbench.optimizers.registry import OPTIMIZERS, RunChoices, improvements_of
from otbench.optimizers.settings import MODES, Improvements
from otbench.run import definition as defining
from otbench.run import outcomes as run_outcomes
from otbench.run import tracking
from otbench.run.options import TrackingOptions, definition, lm_from_values, lm_values, tracking_from_values
from otbench.run.outcomes import RunOutcomes
from otbench.run.outputs import DATABASE_URL, OUTPUT_DIRECTORY, check_outputs
from otbench.study.sweep import Study, SweepOptions, SweepResult, Trial, knobs_to_sweep, print_sweep, tune

if TYPE_CHECKING:  # what runs an optimization is imported when one runs (it loads DSPy): --help answers at once
    from otbench.core.trajectory import Trajectory
    from otbench.evals.stats import Interval
    from otbench.llm.metering import TokenLedger
    from otbench.modules.program import ToolAgentProgram
    from otbench.optimizers.base import DocOptimizer
    from otbench.run.definition import RunDefinition

DEFAULT_LIMIT = 10
PHASES = ("agent", "editor", "exploration")


@dataclass(frozen=True)
class OptimizeOptions:
    """One optimize run: the optimizer and its knobs, the environment, the tasks; and how it is carried out."""

    optimizer: str = "toolobserver"
    environment: EnvironmentOptions = field(default_factory=EnvironmentOptions)
    mode: str | None = None
    """``online`` or ``offline`` (None: as the environment learns)."""
    limit: int = DEFAULT_LIMIT
    """Optimize on a seeded sample of this many tasks."""
    seed: int = 0
    test_limit: int = DEFAULT_LIMIT
    """Offline environments: score the learned docs on a seeded sample of this many test tasks."""
    val_limit: int | None = None
    """Offline environments: choose among the starting, each iteration's and the final docs on a seeded sample of
    this many train tasks outside the ones learned on (None: keep the final docs)."""
    oracle_feedback: bool = False
    variant: str = "improved"
    """ToolObserver's variant: ``improved`` or ``paper``."""
    switches: Mapping[str, bool] = field(default_factory=dict)
    """Improvements turned on or off whatever the variant (``probe``, ``facts``...); ``probe`` also reaches the
    other optimizers that offer it."""
    knobs: Any = None
    """The optimizer's knobs (its knob dataclass, :mod:`otbench.optimizers.knobs`); None: their declared defaults."""
    lm: LMOptions = field(default_factory=LMOptions)
    tracking: TrackingOptions = field(default_factory=TrackingOptions)
    num_threads: int = 1
    resume: str | None = None
    """The MLflow run id of an interrupted run to continue: what defines the run comes from its checkpoint."""
    out: Path = Path("learned_docs")
    progress: bool = True

    def definition(self, *, learning: str) -> RunDefinition:
        """What this run computes (:mod:`otbench.run.definition`), in the mode ``learning`` names unless ``mode`` is set:
        the environment resolved, the optimizer with the knobs that act in that mode."""
        return defining.optimization(resolve(self.environment), optimizer=self.optimizer, mode=self.mode or learning,
                                     limit=self.limit, seed=self.seed, test_limit=self.test_limit,
                                     val_limit=self.val_limit,
                                     oracle_feedback=self.oracle_feedback, variant=self.variant,
                                     switches=self.switches, knobs=self.knobs, lm=self.lm)

    def chosen_knobs(self) -> Any:
        """The optimizer's knobs, its declared defaults when none were given (None without knobs)."""
        spec = OPTIMIZERS[self.optimizer]
        return self.knobs if self.knobs is not None or spec.knobs is None else spec.knobs()

    def values(self) -> dict[str, Any]:
        """Every option by its command-line name, with every optimizer's knobs (the others' at their defaults,
        as runs logged them before a run logged only its own)."""
        knobs: dict[str, Any] = {}
        for name, spec in OPTIMIZERS.items():
            if spec.knobs is not None:
                knobs |= knob_rules.values(self.knobs if name == self.optimizer and self.knobs is not None
                                           else spec.knobs())
        return {"optimizer": self.optimizer, **self.environment.values(), "mode": self.mode, "limit": self.limit,
                "seed": self.seed, "test_limit": self.test_limit, "val_limit": self.val_limit,
                "oracle_feedback": self.oracle_feedback,
                "variant": self.variant, **{name: self.switches.get(name) for name in Improvements.names()},
                **knobs, **lm_values(self.lm), **self.tracking.values(), "num_threads": self.num_threads,
                "resume": self.resume, "out": self.out, "quiet": not self.progress}


def options_from(values: Mapping[str, Any]) -> OptimizeOptions:
    """Options from their command-line names: an argparse namespace's, or a checkpoint's saved definition."""
    optimizer = values.get("optimizer", "toolobserver")
    known = OPTIMIZERS.get(optimizer)
    return OptimizeOptions(
        optimizer=optimizer, environment=options_from_values(values), mode=values.get("mode"),
        limit=values.get("limit", DEFAULT_LIMIT), seed=values.get("seed", 0),
        test_limit=values.get("test_limit", DEFAULT_LIMIT), val_limit=values.get("val_limit"),
        oracle_feedback=bool(values.get("oracle_feedback")),
        variant=values.get("variant", "improved"),
        switches={name: values[name] for name in Improvements.names() if values.get(name) is not None},
        knobs=known.knob_values(values) if known is not None else None, lm=lm_from_values(values),
        tracking=tracking_from_values(values), num_threads=values.get("num_threads", 1), resume=values.get("resume"),
        out=Path(values.get("out", "learned_docs")), progress=not values.get("quiet", False))


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

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Workbench:
    """What the runs of one command share (a sweep's trials): the environment and the LMs by phase,
    metered by one ledger."""

    env: Any
    lms: Mapping[str, Any]
    ledger: TokenLedger


def prepare(options: OptimizeOptions) -> tuple[OptimizeOptions, dict[str, Any]]:
    """The options a run goes by, checked before anything slow loads, and the checkpoint it resumes (empty for a
    new run): a resumed run takes what defines it from its checkpoint."""
    checkpoint: dict[str, Any] = {}
    if options.resume:
        tracking.configure(options.tracking.uri, directory=options.tracking.directory)
        checkpoint = tracking.resumable_checkpoint(options.resume)
        saved = dict(checkpoint["args"])
        if saved.get("toolset") is not None:  # saved before --setting named chess's and BrowseComp's settings
            saved["setting"] = saved["toolset"]
        options = options_from({**options.values(), **saved})
        _check_resumed(options)
        if "docs" not in checkpoint:  # stopped before its first iteration finished: it starts over, in the same run
            checkpoint = {}
    spec = OPTIMIZERS.get(options.optimizer)
    if spec is None:
        raise ConfigError(f"unknown optimizer {options.optimizer!r}; choose from {', '.join(OPTIMIZERS)}")
    if options.mode is not None and options.mode not in MODES:
        raise ConfigError(f"unknown mode {options.mode!r}; choose from {', '.join(MODES)}")
    improvements_of(options.variant, options.switches)
    if options.knobs is not None and (spec.knobs is None or not isinstance(options.knobs, spec.knobs)):
        raise ConfigError(f"{options.optimizer} takes {spec.knobs.__name__ if spec.knobs else 'no knobs'}, "
                          f"not {type(options.knobs).__name__}")
    if options.knobs is not None:
        knob_rules.check(options.knobs)
    options = replace(options, environment=resolve(options.environment))
    check_models(options.lm)  # a missing key is refused before the store, data or model load
    return options, checkpoint


def _check_resumed(options: OptimizeOptions) -> None:
    """Refuse to resume a run whose checkpoint defines another run than the one the run was logged as: its key
    tag says what the run is (runs logged before definitions carry none, and are resumed as their checkpoint
    says)."""
    import mlflow

    from otbench.run.definition import DEFINITION_TAG, RunDefinition

    try:
        stored = mlflow.get_run(str(options.resume)).data.tags.get(DEFINITION_TAG)
    except mlflow.exceptions.MlflowException:  # only a checkpoint to go by (its run is read when it resumes)
        return
    if stored is None or options.mode is None:
        return
    logged = RunDefinition.from_json(json.loads(stored))
    if options.definition(learning=options.mode).key != logged.key:
        raise ConfigError(f"--resume {options.resume}: its checkpoint defines another run than the one logged "
                          f"({logged.key}); start a new run instead")


@contextmanager
def open_workbench(options: OptimizeOptions) -> Iterator[Workbench]:
    """The environment and LMs an optimize run (or a sweep's trials) work with, closed when the block ends."""
    from otbench.llm.metering import TokenLedger

    ledger = TokenLedger()
    with ExitStack() as stack:
        env = stack.enter_context(make_environment(options.environment, workers=options.num_threads))
        if (options.mode or env.learning) == "offline" and env.learning == "online":
            raise ConfigError(f"{env.name} has no train split: its docs are learned per task, in online mode")
        if options.val_limit and env.learning == "online":  # before the model loads
            raise ConfigError(f"--val-limit: {env.name} learns docs per task (online), so no docs learned here "
                              "apply to other tasks; drop --val-limit")
        lms = stack.enter_context(open_lms(replace(options.lm, slots=options.num_threads), ledger, PHASES))
        yield Workbench(env, lms, ledger)


def run(options: OptimizeOptions, *, workbench: Workbench | None = None, nested: bool = False) -> OptimizeResult:
    """One optimizer run on fresh docs (or a checkpoint's), tracked as one MLflow run.

    With a ``workbench`` the run uses its environment and LMs (a sweep's trials share them); ``nested``
    makes the run a child of the active MLflow run.
    """
    options, checkpoint = prepare(options)
    tracking.configure(options.tracking.uri, directory=options.tracking.directory)
    if workbench is not None:
        return _optimize(options, workbench, checkpoint, nested=nested)
    with open_workbench(options) as opened:
        return _optimize(options, opened, checkpoint, nested=nested)


def _optimize(options: OptimizeOptions, bench: Workbench, checkpoint: dict[str, Any], *,
              nested: bool) -> OptimizeResult:
    from otbench.core.parallel import MapInterrupted
    from otbench.modules.agent import FunctionCallingAgent
    from otbench.modules.program import ToolAgentProgram
    from otbench.modules.tool_docs import OPTIMIZED_TOOLSETS
    from otbench.optimizers.base import START_DOCS

    env, ledger = bench.env, bench.ledger
    tracking.share_view(env.name, env.metric_names, env.primary_metric)
    options = replace(options, mode=options.mode or env.learning)
    ledger.restore(checkpoint["tokens"] if checkpoint else {})
    controller = getattr(env, "faults", None)
    if controller is not None:
        if checkpoint and "faults" in checkpoint:
            controller.restore(checkpoint["faults"])
        else:
            controller.reset()
    trainset = sample_tasks(env.tasks("test" if env.learning == "online" else "train"), options.limit, options.seed)
    valset = _validation_tasks(env, trainset, options)
    toolbox = env.toolbox()
    toolbox.meta[OPTIMIZED_TOOLSETS] = list(dict.fromkeys(env.toolset_of(task) for task in trainset))
    if checkpoint:
        checkpoint.setdefault(START_DOCS, toolbox.to_json())  # a checkpoint logged before it kept its start: fresh
        toolbox.adopt_docs(type(toolbox).from_json(checkpoint["docs"]))
    agent = FunctionCallingAgent(instructions=env.agent_instructions)
    agent.lm = bench.lms["agent"]
    program = ToolAgentProgram(toolbox, agent)
    tracker = tracking.MlflowIterationTracker(ledger, extra_checkpoint={"args": definition(options.values())},
                                              earlier_seconds=checkpoint.get("elapsed_seconds", 0.0),
                                              start_docs=toolbox.to_json(), start_step=checkpoint.get(tracking.CHECKPOINT_STEP),
                                              live_state=(lambda: {"faults": controller.snapshot()})
                                              if controller is not None else None,
                                              logged_steps=tracking.logged_steps(options.resume) if options.resume else None)
    optimizer = _build_optimizer(options, env, bench.lms, tracker)
    lm = options.lm
    # what defines the run names it, tags it and is its params (a sweep's trial logs every knob it draws)
    defined = options.definition(learning=env.learning)
    models = dict.fromkeys(tracking.model_label(model, embedded_model=lm.embedded_model, gguf=lm.gguf)
                           for model in (lm.lm, lm.editor_lm or lm.lm))
    name = tracking.run_name(defined.run_name(len(trainset), "+".join(models), env.setting))
    params = defined.params(env.setting, learning=env.learning, swept=nested)
    with _run(options.resume, name, defined.tags(env.setting), params, nested) as tracked:
        if not options.resume:
            tracking.log_definition(definition(options.values()))
        # a stop while learning or while scoring what was learned keeps every finished iteration (and the model's
        # cache the scored tasks): --resume picks up from there
        try:
            with phase_of(env, "exploration"):
                learned = optimizer.compile(program, trainset=trainset, valset=valset, resume=checkpoint or None)
            tested = None
            if env.learning == "offline":
                tested = _evaluate_on_test(options, env, learned, sample_tasks(env.tasks("test"), options.test_limit,
                                                                             options.seed))
            elif controller is not None:  # learned under faults: the final docs are also scored in the test phase
                tested = _evaluate_on_test(options, env, learned, trainset)
            started = None
            scored_first = optimizer.evaluates_start_docs
            if not scored_first and not nested:  # a sweep's trials share one start: not paid per trial
                started = _score_start_docs(options, env, learned, trainset)
        except MapInterrupted as stop:
            hint = f"finished iterations are kept; continue with --resume {tracked.info.run_id}"
            if isinstance(stop.cause, KeyboardInterrupt):
                raise KeyboardInterrupt(hint) from None
            raise RunError(f"optimization stopped ({stop}); {hint}") from stop.cause
        return _finish(options, env, learned, scored_first, ledger, tracked.info.run_id, tracker.elapsed_seconds(),
                       tested, register=not nested, started=started)


def sweep(options: OptimizeOptions, sweeping: SweepOptions) -> SweepResult:
    """``--sweep N``: tune the optimizer's knobs with optuna (:func:`otbench.study.sweep.tune`), every trial a run of this
    module on one shared environment and LM server, nested under the sweep's MLflow run."""
    base, _ = prepare(options)
    if base.resume:
        raise ConfigError("--sweep and --resume do not mix: rerun the sweep with the same --storage to continue it")
    knobs = knobs_to_sweep(base.optimizer)
    tracking.configure(base.tracking.uri, directory=base.tracking.directory)
    with open_workbench(base) as bench:
        env, lm = bench.env, base.lm
        base = replace(base, mode=base.mode or env.learning)

        def trial(drawn: Any) -> Trial:
            result = run(replace(base, knobs=drawn), workbench=bench, nested=True)
            return Trial(float((result.test or result.after)[env.primary_metric]),
                         int(result.tokens_by_phase.get("all", {}).get("total_tokens", 0)), result.run_id)

        model = tracking.model_label(lm.lm, embedded_model=lm.embedded_model, gguf=lm.gguf)
        study = Study(name=sweeping.study_name or f"otbench-{base.optimizer}-{env.name}-{env.setting}-{lm.lm}",
                      knobs=knobs, start=base.chosen_knobs(), mode=str(base.mode), seed=base.seed,
                      metric=env.primary_metric,
                      tags={"command": "sweep", "optimizer": base.optimizer, "env": env.name, "setting": env.setting,
                            "lm": lm.lm},
                      run_name="-".join(["sweep", base.optimizer, env.name, env.setting, f"n{base.limit}", model]))
        return tune(sweeping, study, trial)


def _build_optimizer(options: OptimizeOptions, env: Any, lms: Mapping[str, Any], tracker: Any) -> DocOptimizer:
    """The teleprompter the options name, with its knobs and its LMs charged to the right phases."""
    spec = OPTIMIZERS[options.optimizer]
    common = {"env": env, "num_threads": options.num_threads, "tracker": tracker, "progress": options.progress}
    if spec.offers_probe:  # probing is not specific to ToolObserver: offered to every optimizer
        common["probe"] = bool(options.switches.get("probe"))
    choices = RunChoices(mode=options.mode, seed=options.seed, oracle_feedback=options.oracle_feedback,
                         improvements=improvements_of(options.variant, options.switches))
    return spec.build(env, options.chosen_knobs(), lms, choices, common)


def _run(resume: str | None, name: str, tags: dict[str, Any], params: dict[str, Any], nested: bool) -> Any:
    if resume:
        return tracking.resumed_run(resume)
    return tracking.tracked_run(name, tags=tags, params=params, nested=nested)


def _validation_tasks(env: Any, trainset: list[Any], options: OptimizeOptions) -> list[Any] | None:
    """``--val-limit`` train tasks outside the ones learned on, sampled with the run's seed (None without it;
    :func:`open_workbench` has refused it for an environment that learns online)."""
    from otbench.envs.base import task_key

    if not options.val_limit:
        return None
    learned_on = {task_key(task) for task in trainset}
    rest = [task for task in env.tasks("train") if task_key(task) not in learned_on]
    if not rest:
        raise ConfigError(f"--val-limit: every train task of {env.name} is learned on (--limit {options.limit}); "
                          "lower --limit to leave some for validation")
    return sample_tasks(rest, options.val_limit, options.seed)


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


def _evaluate_on_test(options: OptimizeOptions, env: Any, program: ToolAgentProgram,
                      tasks: list[Any]) -> tuple[dict[str, float], list[Trajectory]]:
    """The learned docs scored on ``tasks`` in the test phase: offline learning is judged on held-out tasks
    (a seeded test sample); online learning under faults on its own tasks again, with the test phase's faults
    (none, for a policy of the exploration phase) instead of those it learned under."""
    import mlflow

    from otbench.evals.harness import run_rollouts

    with phase_of(env, "test"):
        trajectories = run_rollouts(env, program.agent, program.toolbox, tasks, num_threads=options.num_threads,
                                    description="test: learned docs", progress=options.progress)
    metrics = {**robustness(trajectories), **env.summarise(trajectories)}
    mlflow.log_metrics({f"test_{k}": float(v) for k, v in metrics.items()})
    tracking.log_environment_tables(env, trajectories, prefix="test_")
    tracking.log_trajectories(trajectories, "test_trajectories.jsonl")
    return metrics, trajectories


def _score_start_docs(options: OptimizeOptions, env: Any, program: ToolAgentProgram,
                      trainset: list[Any]) -> tuple[dict[str, float], list[Trajectory]]:
    """The starting docs (the setting's) scored on the tasks the final docs were scored on, for the "before" row
    of an optimizer whose first step does not score them (ToolObserver's improved variant where it probed the tools
    first, so its step 0 already shows learned schemas; EasyTool, Play2Prompt and GEPA rewrite before they score).
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
        trajectories = run_rollouts(env, agent, env.toolbox(), tasks, num_threads=options.num_threads,
                                    description="before: starting docs", progress=options.progress)
    tracking.log_trajectories(trajectories, "start_docs_trajectories.jsonl")
    return {k: v for k, v in env.summarise(trajectories).items() if k != "n"}, trajectories


def _finish(options: OptimizeOptions, env: Any, program: ToolAgentProgram, scored_first: bool,
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
    from otbench.run.docs_io import RUN_DOCS_ARTIFACT
    from otbench.run.prompts import register_docs

    client = mlflow.tracking.MlflowClient()
    history = {key: sorted(client.get_metric_history(run_id, key), key=lambda m: m.step)
               for key in (*env.metric_names, "docs_changed", "tokens_all_total")}
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
    out = options.out / run_id
    out.mkdir(parents=True, exist_ok=True)
    program.toolbox.write(out / "final_docs.json")
    program.toolbox.save(str(out / "final_state.json"))
    mlflow.log_artifact(str(out / "final_docs.json"), Path(RUN_DOCS_ARTIFACT).parent.as_posix())
    mlflow.log_artifact(str(out / "final_state.json"), Path(RUN_DOCS_ARTIFACT).parent.as_posix())
    prompts: dict[str, str] = {}
    if register:
        prompts = register_docs(program.toolbox, program.toolbox.meta[OPTIMIZED_TOOLSETS], env=env.name,
                                setting=env.setting, tags={"run_id": run_id, "optimizer": options.optimizer})
        mlflow.log_dict(prompts, "docs/prompts.json")
    contaminated = _log_contamination(env, program)
    validation = _log_validation(env, program)
    invented = results.invented
    mlflow.log_metrics(invented.metrics())
    mlflow.log_dict({**invented.metrics(), "sentences": invented.sentences, "quotes": dict(invented.quotes)},
                    "invented_claims.json")
    rounds = list(results.editor_rounds.values())
    tokens = ledger.snapshot()
    kept = _log_outcomes(options, env, run_id, history, list(results.final_trajectories),
                         tested[1] if tested is not None else None, scored_first,
                         started[1] if started is not None else None)
    rules = rules_of(env)
    intervals = {split: run_outcomes.intervals(part, rules) for split, part in kept.splits.items()}
    tracking.log_result({k: v for k, v in (test or after).items() if k in env.metric_names},
                        tracking.cost_tokens(tokens), intervals.get(kept.result))
    llm_seconds = sum(row["seconds"] for phase, row in tokens.items() if phase != "all")
    result = OptimizeResult(
        run_id=run_id, optimizer=options.optimizer, env=env.name, setting=env.setting, mode=str(options.mode),
        n=len(results.final_trajectories), before=before, after=after, test=test,
        mean_editor_iterations=round(sum(rounds) / len(rounds), 2) if rounds else 0.0,
        steps=len(history["tokens_all_total"]), tokens_by_phase=tokens, server=ledger.server_figures(),
        seconds=round(seconds, 1),
        share_of_time_outside_llm=round(max(0.0, 1 - llm_seconds / seconds), 4) if seconds else 0.0,
        docs=str(out / "final_docs.json"), prompts=prompts, contamination=contaminated,
        invented={**invented.metrics(), "sentences": invented.sentences, "quotes": dict(invented.quotes)},
        intervals=intervals, validation=validation)
    mlflow.log_metrics({f"final_{k}": v for k, v in after.items()} | ledger.server_metrics() |
                       {"mean_editor_iterations": result.mean_editor_iterations, "seconds": seconds})
    tracking.log_table(_summary_rows(result), "summary_table.json")
    mlflow.log_dict(result.to_dict(), "summary.json")
    return result


def _log_outcomes(options: OptimizeOptions, env: Any, run_id: str, history: Mapping[str, list[Any]],
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
            splits["before"] = run_outcomes.from_trajectory_lines(lines.splitlines(), options.seed)
    if started:
        splits["before"] = Outcomes.of(started, options.seed)
    if final:
        splits["after"] = Outcomes.of(final, options.seed)
    if test is not None:
        splits["test"] = Outcomes.of(test, options.seed)
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


def _summary_rows(result: OptimizeResult, *, text: bool = False) -> list[dict[str, Any]]:
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


# -- the command line ----------------------------------------------------------------------------------------
def add_optimizer_arguments(parser: argparse.ArgumentParser) -> dict[str, argparse._ArgumentGroup]:
    """One option group per optimizer with its knobs (:data:`otbench.optimizers.registry.OPTIMIZERS`); ToolObserver's
    group also holds its variant and, for ablations, each of its improvements on or off."""
    groups = {name: parser.add_argument_group(name) for name in OPTIMIZERS}
    groups["toolobserver"].description = ("ToolObserver's budget, variant and improvements; --probe (probing and "
                                          "the learned schema) applies to play2prompt, easytool and gepa too")
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


def add_sweep_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("sweep")
    group.add_argument("--sweep", type=positive_int, default=None, metavar="N",
                       help="tune the optimizer's knobs with N optuna trials")
    group.add_argument("--token-budget", type=positive_int, default=500_000,
                       help="stop starting trials once the study has spent this many tokens (default 500000)")
    group.add_argument("--storage", type=DATABASE_URL, default=None,
                       help="optuna RDB storage URL shared by sweep workers (default: in memory)")
    group.add_argument("--study-name", default=None, help="optuna study to create or join")


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
    parser.add_argument("--val-limit", type=positive_int, default=None, metavar="N",
                        help="offline environments: score the starting, each iteration's and the final docs on N "
                             "other train tasks and keep the best (default: keep the final docs)")
    parser.add_argument("--oracle-feedback", action="store_true",
                        help="online: show the editor whether each attempt succeeded (off in the paper)")
    add_optimizer_arguments(parser)
    parser.add_argument("--num-threads", type=positive_int, default=1, help="tasks run concurrently")
    parser.add_argument("--resume", default=None, metavar="RUN_ID", help="continue an interrupted run")
    parser.add_argument("--out", type=OUTPUT_DIRECTORY, default=Path("learned_docs"), help="where final docs are written")
    add_sweep_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the final summary as one JSON object")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    add_lm_arguments(parser, editor=True)
    add_tracking_arguments(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_outputs(parser, args)
    options = options_from(vars(args))
    if args.sweep:
        swept = sweep(options, SweepOptions(trials=args.sweep, token_budget=args.token_budget, storage=args.storage,
                                            study_name=args.study_name))
        if args.json:
            print(json.dumps(swept.to_dict()))
        else:
            print_sweep(swept)
        return 0
    result = run(options)
    if args.json:
        print(json.dumps(result.to_dict()))
    else:
        _print(result)
    return 0


def _print(result: OptimizeResult) -> None:
    print(format_table(_summary_rows(result, text=True)))
    rows = [{"phase": phase, **row} for phase, row in result.tokens_by_phase.items()]
    print(format_table(rows, ["phase", "prompt_tokens", "completion_tokens", "total_tokens", "calls", "paid_calls",
                              "cached_tokens", "seconds"]))
    server = server_table(result.server)
    if server:
        print(server)
    print(f"mean editor iterations: {result.mean_editor_iterations}   seconds: {result.seconds}   "
          f"outside LLM calls: {result.share_of_time_outside_llm:.1%}")
    shown = result.contamination
    print(f"doc contamination: {shown['doc_contamination']:.1%} of learned sentences, "
          f"{shown['doc_contaminated_tools']:.1%} of tools ({sum(shown['injected_by_kind'].values())} faults injected "
          "while learning)")
    if result.validation is not None:
        chosen = result.validation
        scores = ", ".join(f"{name} {value:.3f}" for name, value in chosen["metrics"].items() if name != "n")
        print(f"docs kept: {chosen['chosen']}, the best on {chosen['n']} validation tasks ({scores})")
        for label, candidate in chosen["candidates"].items():
            print(f"  {label}: " + ", ".join(f"{name} {value:.3f}" for name, value in candidate.items()))
    invented = result.invented
    print(f"invented claims: {int(invented['invented_claims'])} of {invented['sentences']} learned sentences state "
          "behaviour no observed call supports (invented_claims.json quotes them)")
    print(f"final docs: {result.docs}   MLflow run: {result.run_id}")
    if result.prompts:
        first = next(iter(result.prompts.values()))
        print(f"in MLflow's prompt registry: {len(result.prompts)} toolset(s), e.g. {first}")


if __name__ == "__main__":
    run_main(main)
