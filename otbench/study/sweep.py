"""``optimize --sweep N``: tune an optimizer's knobs with optuna under a token budget.

Each trial is a full optimize run (:func:`sweep_optimizer` hands :func:`tune` a function that runs one, sharing
one environment and one LM server; :func:`tune` itself knows nothing of optimize), nested under one sweep run in MLflow, scored by the environment's primary metric (the
test split's for offline environments). Trials stop once the study has spent the token budget. The
best trial is the highest score, the cheaper one on a tie.

Scale-out uses existing engines: ``storage`` is an optuna RDB URL that workers on several
machines share (each runs the same command and joins the study by name), and a tracking URI
points every worker at one MLflow server.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from otbench.core.tables import format_table
from otbench.errors import ConfigError, RunError
from otbench.optimizers import knobs as knob_rules
from otbench.optimizers.registry import OPTIMIZERS
from otbench.run import naming, tracking

if TYPE_CHECKING:
    from otbench.run.definition import RunDefinition
    from otbench.run.settings import RunSettings


@dataclass(frozen=True)
class SweepOptions:
    """A sweep: how many trials, the token budget, the study workers share."""

    trials: int
    token_budget: int = 500_000
    """Stop starting trials once the study has spent this many tokens."""
    storage: str | None = None
    """An optuna RDB storage URL that sweep workers share (None: in memory)."""
    study_name: str | None = None


@dataclass(frozen=True)
class Study:
    """What a sweep tunes: the knobs of one optimizer in one learning mode, scored by one metric."""

    name: str
    knobs: type[knob_rules.Knobs]
    start: Any
    """The knobs trials start from (what a trial does not draw keeps its value)."""
    mode: str
    seed: int
    metric: str
    tags: Mapping[str, Any] = field(default_factory=dict)
    run_name: str = "sweep"


@dataclass(frozen=True)
class Trial:
    """What one trial (one optimize run with the drawn knobs) scored and cost."""

    score: float
    tokens: int
    run_id: str


@dataclass(frozen=True)
class SweepResult:
    """The study's trials (one row each: state, score, tokens, knobs, run id), the best one and what it cost."""

    sweep_run_id: str
    study: str
    trials: list[dict[str, Any]]
    best: dict[str, Any]
    tokens_spent: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def sweepable() -> list[str]:
    """The optimizers with at least one knob declared with a sweep range."""
    return [name for name, spec in OPTIMIZERS.items() if spec.sweepable]


def knobs_to_sweep(optimizer: str) -> type[knob_rules.Knobs]:
    """The knobs class of an optimizer that has knobs to sweep; refused on one line otherwise."""
    if optimizer not in sweepable():
        raise ConfigError(f"{optimizer} has no knobs to sweep; sweep one of: {', '.join(sweepable())}")
    return OPTIMIZERS[optimizer].knobs


def _join_study(name: str, storage: str | None, seed: int, attempts: int = 3) -> Any:
    """Create the study, or join it when it exists. Workers started together on a fresh database race
    to create optuna's tables and the study; the loser's error means the winner made them: try again."""
    import optuna
    import sqlalchemy.exc  # optuna's RDB storage is SQLAlchemy's

    def create() -> Any:
        return optuna.create_study(study_name=name, storage=storage, direction="maximize", load_if_exists=True,
                                   sampler=optuna.samplers.TPESampler(seed=seed))

    for attempt in range(attempts - 1):
        try:
            return create()
        except sqlalchemy.exc.DBAPIError:
            time.sleep(1 + attempt)
    return create()


def tune(options: SweepOptions, study: Study, trial: Callable[[Any], Trial]) -> SweepResult:
    """Run trials until ``options.trials`` or the token budget: each draws knob values in the study's mode and
    hands them to ``trial`` (an optimize run, nested under the sweep's MLflow run); the best is the highest
    score, the cheaper one on a tie."""
    import mlflow
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        shared = _join_study(study.name, options.storage, study.seed)
    except (ValueError, ImportError, optuna.exceptions.OptunaError) as error:
        raise ConfigError(f"--storage {options.storage}: {error}".splitlines()[0]) from error

    def spent() -> int:
        return sum(int(t.user_attrs.get("tokens", 0)) for t in shared.get_trials(deepcopy=False))

    def objective(drawn: Any) -> float:
        if spent() >= options.token_budget:
            shared.stop()
            raise optuna.TrialPruned("token budget spent")
        chosen = knob_rules.search_space(study.knobs, drawn, study.mode)
        outcome = trial(knob_rules.replaced(study.start, chosen))
        drawn.set_user_attr("tokens", outcome.tokens)
        drawn.set_user_attr("run_id", outcome.run_id)
        return outcome.score

    def stop_when_spent(current: Any, finished: Any) -> None:
        if spent() >= options.token_budget:
            current.stop()

    params = {"trials": options.trials, "token_budget": options.token_budget, "storage": options.storage or "memory"}
    with tracking.tracked_run(naming.run_name(study.run_name), tags={**study.tags, "study": study.name},
                              params=params) as tracked:
        shared.optimize(objective, n_trials=options.trials, callbacks=[stop_when_spent])
        rows = _trial_rows(shared, study.metric)
        if not any(row["state"] == "COMPLETE" for row in rows):
            raise RunError("no sweep trial finished within the token budget; raise --token-budget")
        best = max((row for row in rows if row["state"] == "COMPLETE"),
                   key=lambda row: (row[study.metric], -row["tokens"]))
        tracking.log_table(rows, "sweep_trials.json")
        mlflow.log_metrics({f"best_{study.metric}": best[study.metric], "tokens_spent": spent()})
        mlflow.log_dict(best, "best_configuration.json")
        return SweepResult(tracked.info.run_id, study.name, rows, best, spent())


def _trial_rows(study: Any, metric: str) -> list[dict[str, Any]]:
    return [
        {"trial": t.number, "state": t.state.name, metric: t.value if t.value is not None else float("nan"),
         "tokens": int(t.user_attrs.get("tokens", 0)), "run_id": t.user_attrs.get("run_id", ""), **t.params}
        for t in study.get_trials(deepcopy=False)
    ]


def print_sweep(result: SweepResult) -> None:
    print(format_table(result.trials))
    best = result.best
    knobs = {k: v for k, v in best.items() if k not in ("trial", "state", "run_id")}
    print(f"best trial {best['trial']}: {knobs}   MLflow run: {best['run_id']}")
    print(f"tokens spent: {result.tokens_spent}   sweep run: {result.sweep_run_id}   study: {result.study}")


def sweep_optimizer(definition: RunDefinition, settings: RunSettings, sweeping: SweepOptions) -> SweepResult:
    """``--sweep N``: tune the optimizer's knobs with optuna (:func:`tune`), every trial an optimize run
    (:func:`otbench.run.optimization.execute`) on one shared environment and LM server, nested under the sweep's
    MLflow run; each trial's definition is the base one with the knobs it draws."""
    import dataclasses

    from otbench.run import optimization
    from otbench.run.definition import Optimizer, frozen_part

    optimizer = optimization.optimizer_of(definition)
    knobs = knobs_to_sweep(optimizer.name)
    spec = optimizer.spec
    with optimization.open_workbench(definition, settings, definition.lm_options(settings.lm)) as bench:
        env, lm = bench.env, bench.lm

        def trial(drawn: Any) -> Trial:
            chosen = Optimizer(optimizer.name, optimizer.mode, frozen_part(spec.define(drawn, optimizer.mode)), spec)
            result = optimization.execute(dataclasses.replace(definition, optimizer=chosen), settings, workbench=bench, nested=True)
            return Trial(float((result.test or result.after)[env.primary_metric]),
                         int(result.tokens_by_phase.get("all", {}).get("total_tokens", 0)), result.run_id)

        model = naming.model_label(lm.lm, embedded_model=lm.embedded_model, gguf=lm.gguf)
        study = Study(name=sweeping.study_name or f"otbench-{optimizer.name}-{env.name}-{env.setting}-{lm.lm}",
                      knobs=knobs, start=optimizer.chosen, mode=optimizer.mode, seed=definition.sample.drawn_with,
                      metric=env.primary_metric,
                      tags={"command": "sweep", "optimizer": optimizer.name, "env": env.name, "setting": env.setting,
                            "lm": lm.lm},
                      run_name="-".join(["sweep", optimizer.name, env.name, env.setting,
                                         f"n{definition.sample.limit}", model]))
        return tune(sweeping, study, trial)
