"""An evaluation's execution: score an agent with some docs on a task sample, logged as one MLflow run.

It takes the run's definition (:class:`otbench.run.definition.RunDefinition`, ``command == "evaluate"``) and
its settings (:class:`otbench.run.settings.RunSettings`); the ``evaluate`` command only makes them from its
options and prints the result. Reference agents bound the metrics: the ``oracle`` agent emits the gold calls
(must score 1.0), the ``null`` agent calls nothing (must score 0).

Each finished task is kept as the evaluation goes (``partial_trajectories.jsonl``, every few tasks and when it
stops), so an interrupted evaluation continues where it stopped (``resume``): its finished tasks are read back,
only the others are run, and the result is that of every task, as if it had run at once. An optimize run's scoring
of its learned docs on the test tasks is kept the same way (:class:`TaskKeeper`, :func:`kept_scoring`).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from otbench import mlflow_store
from otbench.core.faults import phase_of
from otbench.core.trajectory import Trajectory
from otbench.envs.base import sample_tasks, task_key
from otbench.envs.registry import make_environment
from otbench.errors import ConfigError, OtbenchError, RunError
from otbench.evals.robustness import robustness
from otbench.llm.session import EMBEDDED, OpenAIEndpoint, check_models, open_lms, openai_endpoint
from otbench.run import naming, tracking, views
from otbench.run import outcomes as run_outcomes
from otbench.run.definition import DEFINITION_TAG, KEY_TAG, TOOL_CALLING_AGENTS, RunDefinition, split_sizes
from otbench.run.outcomes import PARTIAL, SPENT
from otbench.run.settings import RunSettings

if TYPE_CHECKING:  # what runs an evaluation is imported when one runs (it loads DSPy)
    from otbench.evals.stats import Interval
    from otbench.llm.metering import TokenLedger

AGENTS = ("llm", *TOOL_CALLING_AGENTS, "oracle", "null")
KEEP_EVERY = 5
"""Finished tasks between two writes of :data:`PARTIAL` (and one when the evaluation stops)."""


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


def _refuse_unreplayable(env: Any) -> None:
    """Refuse an agent framework's agent where its calls, run again to be scored, may give other results."""
    if not (env.one_reply and getattr(env, "replayable_calls", False)):
        raise ConfigError(f"an agent framework's agent runs its calls itself, and they are run again to be scored: "
                          f"{env.name}'s calls may give another result when run again (BFCL's do not)")


def _framework_agent(env: Any, tasks: list[Any], endpoint: OpenAIEndpoint, ledger: TokenLedger, cache: bool) -> Any:
    """The OpenAI Agents SDK's agent on ``tasks`` (:mod:`otbench.modules.agents_sdk`), its calls to ``endpoint``
    metered in ``ledger`` (and kept in the cache, unless ``cache`` is off: a run again pays nothing)."""
    from otbench.llm.openai_client import metered_client
    from otbench.modules.agents_sdk import AgentsSdkAgent
    from otbench.paths import cache_dir

    kept = cache_dir() / "openai-replies" if cache else None
    return AgentsSdkAgent(env.execute, {task.question: env.toolset_of(task) for task in tasks},
                          lambda: metered_client(endpoint.base_url, endpoint.api_key, ledger, "agent", kept),
                          endpoint.model)


def check(definition: RunDefinition, settings: RunSettings) -> None:
    """Refuse, on one line and before anything slow loads, an evaluation that cannot run."""
    if definition.command != "evaluate":
        raise ConfigError(f"not an evaluation: a run of {definition.command}")
    if definition.agent not in AGENTS:
        raise ConfigError(f"unknown agent {definition.agent!r}; choose from {', '.join(AGENTS)}")
    if definition.agent in ("llm", *TOOL_CALLING_AGENTS):
        check_models(definition.lm_options(settings.lm), ("agent",))
        if definition.agent in TOOL_CALLING_AGENTS:
            from otbench.modules.agents_sdk import sdk

            sdk()
    elif settings.lm.lm != EMBEDDED or settings.lm.api_base is not None:
        raise ConfigError(f"the {definition.agent} agent calls no model: drop --lm and --api-base")
    if definition.docs not in (None, "gold"):
        from otbench.run.docs_io import check_source

        check_source(str(definition.docs), settings.tracking)


def execute(definition: RunDefinition, settings: RunSettings, *, resume: str | None = None) -> EvaluateResult:
    """Score the agent on the definition's tasks, tracked as one MLflow run; ``resume``: an interrupted evaluation
    of the same definition to continue (in the same MLflow run)."""
    check(definition, settings)
    import mlflow

    from otbench.llm.metering import TokenLedger
    from otbench.run.docs_io import STORED, apply_docs

    store_first = bool(resume) or (definition.docs is not None and definition.docs.startswith(STORED))
    if store_first:  # read from the store; other docs are checked against the tools before it is written
        mlflow_store.configure(settings.tracking.uri, directory=settings.tracking.directory)
    finished = _finished_tasks(resume, definition) if resume else {}
    ledger = TokenLedger()
    earlier_seconds = _restore_spend(resume, ledger) if resume else 0.0
    with ExitStack() as stack:
        env = stack.enter_context(make_environment(
            dataclasses.replace(definition.options, sandbox_workers=settings.sandbox_workers), workers=settings.num_threads))
        definition = definition.sized(split_sizes(env))
        tasks = sample_tasks(env.tasks(), definition.sample.limit, definition.sample.drawn_with)
        toolbox = env.toolbox("gold" if definition.docs == "gold" else None)
        docs_matched = (apply_docs(toolbox, definition.docs, translate=getattr(env, "docs_from", None),
                                   restore=getattr(env, "restore_memory", None))
                        if definition.docs not in (None, "gold") else 0)
        if not store_first:
            mlflow_store.configure(settings.tracking.uri, directory=settings.tracking.directory)
        views.share_view(env.name, env.metric_names, env.primary_metric)
        lm = dataclasses.replace(definition.lm_options(settings.lm), slots=settings.num_threads)
        if definition.agent in TOOL_CALLING_AGENTS:
            _refuse_unreplayable(env)
            agent = _framework_agent(env, tasks, stack.enter_context(openai_endpoint(lm)), ledger, lm.cache)
        else:
            agent = _agent(str(definition.agent), env, tasks)
        if definition.agent == "llm":
            agent.lm = stack.enter_context(open_lms(lm, ledger))["agent"]
        started = time.perf_counter() - earlier_seconds  # a resumed run's seconds count its earlier segments
        used = definition.lm_options(settings.lm)
        model = naming.model_label(used.lm, embedded_model=used.embedded_model, gguf=used.gguf)
        name = naming.run_name(definition.run_name(len(tasks), model, env.setting))
        tags = definition.tags(env.setting)
        # a resumed run may have been logged by an earlier format (or unsized): it is tagged as its definition reads now
        opened = (tracking.resumed_run(resume, tags={tag: tags[tag] for tag in (KEY_TAG, DEFINITION_TAG)}) if resume
                  else tracking.tracked_run(name, tags=tags, params=definition.params(env.setting, learning=env.learning)))
        with opened as tracked:
            trajectories = _rollouts(env, agent, toolbox, tasks, finished, settings, ledger, started,
                                     definition.sample.drawn_with)
            summary, found = _log_results(env, trajectories, ledger, time.perf_counter() - started,
                                          definition.sample.drawn_with, final=True)
            tables = tracking.log_environment_tables(env, trajectories)
            mlflow.log_metric("docs_matched", docs_matched)  # how many tools the given docs documented
    return EvaluateResult(tracked.info.run_id, summary, tuple(env.metric_names), ledger.snapshot(),
                          ledger.server_figures(), found, tables)


def _rollouts(env: Any, agent: Any, toolbox: Any, tasks: list[Any], finished: dict[str, Trajectory],
              settings: RunSettings, ledger: TokenLedger, started: float, sample: int) -> list[Trajectory]:
    """Every task's trajectory, in task order: the ``finished`` ones read back, the others run here, each kept in
    :data:`PARTIAL` as it finishes; a stop logs what finished, so ``resume`` continues from there."""
    from otbench.evals.harness import run_rollouts

    missing = [task for task in tasks if task_key(task) not in finished]
    keeper = TaskKeeper(list(finished.values()), ledger, lambda: time.perf_counter() - started)
    try:
        with phase_of(env, "test"):
            ran = run_rollouts(env, agent, toolbox, missing, num_threads=settings.num_threads,
                               description="evaluate", progress=settings.progress, on_finished=keeper.add)
    except Exception as stop:
        from otbench.core.parallel import MapInterrupted

        if not isinstance(stop, MapInterrupted):
            raise
        done = [*finished.values(), *(stop.finished[i] for i in sorted(stop.finished))]
        tracking.log_trajectories(done, PARTIAL)
        _log_results(env, done, ledger, time.perf_counter() - started, sample)
        if isinstance(stop.cause, (KeyboardInterrupt, OtbenchError)):
            raise stop.cause from None
        raise RunError(f"evaluation stopped after {len(done)} tasks: {stop}") from stop.cause
    by_task = {**finished, **{trajectory.task_id: trajectory for trajectory in ran}}
    return [by_task[task_key(task)] for task in tasks]


class TaskKeeper:
    """Keeps a scoring's finished trajectories in :data:`PARTIAL` on the active run, every :data:`KEEP_EVERY` tasks
    (:meth:`add`) and when asked (:meth:`keep`), with the tokens and seconds spent so far (:data:`SPENT`): a run
    killed outright is resumed with its spend. ``seconds`` gives the run's wall time so far."""

    def __init__(self, kept: list[Trajectory], ledger: TokenLedger, seconds: Callable[[], float]) -> None:
        self.kept = kept
        self.ledger = ledger
        self.seconds = seconds

    def add(self, trajectory: Trajectory) -> None:
        self.kept.append(trajectory)
        if len(self.kept) % KEEP_EVERY == 0:
            self.keep()

    def keep(self) -> None:
        import mlflow

        seconds = round(self.seconds(), 2)
        tracking.log_trajectories(self.kept, PARTIAL)
        mlflow.log_dict({"tokens_by_phase": self.ledger.snapshot(), "seconds": seconds}, SPENT)
        mlflow.log_metric("seconds", seconds)


def kept_scoring(run_id: str) -> tuple[dict[str, Trajectory], dict[str, Any] | None]:
    """What an interrupted scoring of run ``run_id`` kept: its finished trajectories by task id (:data:`PARTIAL`)
    and what the run had spent then (:data:`SPENT`, None where it kept none)."""
    spent = run_outcomes.artifact_text(run_id, SPENT)
    return _by_task(run_outcomes.artifact_text(run_id, PARTIAL)), json.loads(spent) if spent else None


def _by_task(text: str | None) -> dict[str, Trajectory]:
    found = [Trajectory.from_dict(json.loads(line)) for line in (text or "").splitlines() if line.strip()]
    return {trajectory.task_id: trajectory for trajectory in found}


def _restore_spend(run_id: str, ledger: TokenLedger) -> float:
    """Count on from what an interrupted evaluation spent before (tokens into ``ledger``; its seconds returned):
    a resumed run's figures are those of the whole run, not of its last segment."""
    import mlflow

    kept = [json.loads(text) for name in (SPENT, "tokens.json")
            if (text := run_outcomes.artifact_text(run_id, name))]
    if kept:  # the newer of the two: the stop's tokens.json, or the last keep's when the process was killed
        ledger.restore(max(kept, key=lambda spent: spent["tokens_by_phase"].get("all", {}).get("calls", 0))
                       ["tokens_by_phase"])
    return float(mlflow.get_run(run_id).data.metrics.get("seconds", 0.0))


def _finished_tasks(run_id: str, definition: RunDefinition) -> dict[str, Trajectory]:
    """The tasks an interrupted evaluation finished, by task id, read from its run; refused on one line when the
    run is not an unfinished evaluation of ``definition``."""
    import mlflow

    from otbench.run.logged import definition_of
    from otbench.run.lookup import same_run

    try:
        run = mlflow.get_run(run_id)
    except mlflow.exceptions.MlflowException:
        raise ConfigError(f"--resume {run_id}: no such run in this store") from None
    if run.info.status == "FINISHED":
        raise ConfigError(f"--resume {run_id}: that run finished; there is nothing to continue")
    logged = definition_of(run)
    if logged is None or logged.command != "evaluate" or not (same_run(logged, definition)
                                                               or logged.key == definition.key):
        raise ConfigError(f"--resume {run_id}: that run is not an evaluation of the same definition")
    finished = run_outcomes.artifact_text(run_id, PARTIAL) or run_outcomes.artifact_text(run_id, "trajectories.jsonl")
    return _by_task(finished)


def _log_results(env: Any, trajectories: list[Trajectory], ledger: TokenLedger, seconds: float,
                 sample: int, *, final: bool = False) -> tuple[dict[str, Any], dict[str, Interval]]:
    """Log metrics (the environment's and the robustness ones), tokens and per-task results and outcomes to the
    active run, and with ``final`` the run's result first (:func:`otbench.run.tracking.log_result`); returns the
    summary and each metric's interval."""
    import mlflow

    from otbench.evals.outcomes import Outcomes, rules_of

    summary: dict[str, Any] = {**env.summarise(trajectories), **robustness(trajectories)} if trajectories else {"n": 0}
    outcomes = Outcomes.of(trajectories, sample)
    found = run_outcomes.intervals(outcomes, rules_of(env))
    if final:  # the result first: MLflow's compare page plots the first metric the first run logged that all share
        total = ledger.snapshot()["all"]
        tracking.log_result({metric: summary[metric] for metric in env.metric_names if metric in summary},
                            int(total["total_tokens"] + total["cached_tokens"]), found)
    summary["seconds"] = round(seconds, 2)
    summary.update(ledger.flat_metrics())
    summary.update(ledger.server_metrics())
    mlflow.log_metrics({k: float(v) for k, v in summary.items() if isinstance(v, (int, float))})
    mlflow.log_dict({"tokens_by_phase": ledger.snapshot()}, "tokens.json")
    tracking.log_trajectories(trajectories, "trajectories.jsonl")
    if trajectories:
        tracking.log_table([{"task_id": t.task_id, **t.metrics, "calls": len(t.steps),
                             "parse_error": t.parse_error or ""} for t in trajectories], "per_task.json")
    run_outcomes.log(run_outcomes.RunOutcomes({run_outcomes.RESULT: outcomes}, run_outcomes.RESULT))
    return summary, found
