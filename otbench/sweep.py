"""``optimize --sweep N``: tune an optimizer's knobs with optuna under a token budget.

Each trial is a full optimize run (:func:`otbench.optimize.run`, sharing one environment and one
LM server), nested under one sweep run in MLflow, scored by the environment's primary metric (the
test split's for offline environments). Trials stop once the study has spent the token budget. The
best trial is the highest score, the cheaper one on a tie.

Scale-out uses existing engines: ``storage`` is an optuna RDB URL that workers on several
machines share (each runs the same command and joins the study by name), and a tracking URI
points every worker at one MLflow server.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, replace
from typing import Any

from optimizers import knobs as knob_rules
from optimizers.registry import OPTIMIZERS
from otbench import optimize, tracking
from otbench.errors import ConfigError, RunError
from otbench.report import format_table


@dataclass(frozen=True)
class SweepOptions:
    """A sweep: the optimize run whose knobs are tuned, how many trials, the token budget, the shared study."""

    optimize: optimize.OptimizeOptions
    trials: int
    token_budget: int = 500_000
    """Stop starting trials once the study has spent this many tokens."""
    storage: str | None = None
    """An optuna RDB storage URL that sweep workers share (None: in memory)."""
    study_name: str | None = None


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
    return [name for name, spec in OPTIMIZERS.items()
            if spec.knobs is not None and any(knob.sweep for _, knob, _ in knob_rules.declared(spec.knobs))]


def knobs_to_sweep(optimizer: str) -> type[knob_rules.Knobs]:
    knobs = OPTIMIZERS[optimizer].knobs
    if knobs is None or optimizer not in sweepable():
        raise ConfigError(f"{optimizer} has no knobs to sweep; sweep one of: {', '.join(sweepable())}")
    return knobs


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


def run(options: SweepOptions) -> SweepResult:
    """Run the trials (each an :func:`otbench.optimize.run` of one configuration) and return the sweep's result."""
    base, _ = optimize.prepare(options.optimize)
    if base.resume:
        raise ConfigError("--sweep and --resume do not mix: rerun the sweep with the same --storage to continue it")
    knobs = knobs_to_sweep(base.optimizer)
    tracking.configure(base.tracking.uri, directory=base.tracking.directory)
    with optimize.open_workbench(base) as bench:
        return _sweep(options, replace(base, mode=base.mode or bench.env.learning), knobs, bench)


def _sweep(options: SweepOptions, base: optimize.OptimizeOptions, knobs: type[knob_rules.Knobs],
           bench: optimize.Workbench) -> SweepResult:
    import mlflow
    import optuna

    env, lm = bench.env, base.lm
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    name = options.study_name or f"otbench-{base.optimizer}-{env.name}-{env.setting}-{lm.lm}"
    try:
        study = _join_study(name, options.storage, base.seed)
    except (ValueError, ImportError, optuna.exceptions.OptunaError) as error:
        raise ConfigError(f"--storage {options.storage}: {error}".splitlines()[0]) from error

    def spent() -> int:
        return sum(int(t.user_attrs.get("tokens", 0)) for t in study.get_trials(deepcopy=False))

    def objective(trial: Any) -> float:
        if spent() >= options.token_budget:
            study.stop()
            raise optuna.TrialPruned("token budget spent")
        chosen = knob_rules.search_space(knobs, trial, str(base.mode))
        trial_knobs = knob_rules.from_values(knobs, {**knob_rules.values(base.chosen_knobs()), **chosen})
        result = optimize.run(replace(base, knobs=trial_knobs), workbench=bench, nested=True)
        trial.set_user_attr("tokens", int(result.tokens_by_phase.get("all", {}).get("total_tokens", 0)))
        trial.set_user_attr("run_id", result.run_id)
        return float((result.test or result.after)[env.primary_metric])

    def stop_when_spent(study: Any, trial: Any) -> None:
        if spent() >= options.token_budget:
            study.stop()

    tags = {"command": "sweep", "optimizer": base.optimizer, "env": env.name, "setting": env.setting, "lm": lm.lm,
            "study": name}
    params = {"trials": options.trials, "token_budget": options.token_budget, "storage": options.storage or "memory"}
    model = tracking.model_label(lm.lm, embedded_model=lm.embedded_model, gguf=lm.gguf)
    run_name = tracking.run_name("sweep", base.optimizer, env.name, env.setting, f"n{base.limit}", model)
    with tracking.tracked_run(run_name, tags=tags, params=params) as tracked:
        study.optimize(objective, n_trials=options.trials, callbacks=[stop_when_spent])
        rows = _trial_rows(study, env.primary_metric)
        if not any(row["state"] == "COMPLETE" for row in rows):
            raise RunError("no sweep trial finished within the token budget; raise --token-budget")
        best = max((row for row in rows if row["state"] == "COMPLETE"),
                   key=lambda row: (row[env.primary_metric], -row["tokens"]))
        tracking.log_table(rows, "sweep_trials.json")
        mlflow.log_metrics({f"best_{env.primary_metric}": best[env.primary_metric], "tokens_spent": spent()})
        mlflow.log_dict(best, "best_configuration.json")
        return SweepResult(tracked.info.run_id, name, rows, best, spent())


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
