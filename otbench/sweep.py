"""``optimize --sweep N``: tune an optimizer's knobs with optuna under a token budget.

Each trial is a full optimize run, nested under one sweep run in MLflow, scored by the
environment's primary metric (the test split's for offline environments). Trials stop once
the study has spent ``--token-budget`` tokens. The best trial is the highest score, the
cheaper one on a tie.

Scale-out uses existing engines: ``--storage`` is an optuna RDB URL that workers on several
machines share (each runs the same command and joins the study by name), and
``--tracking-uri`` points every worker at one MLflow server.
"""

from __future__ import annotations

import argparse
import copy
import time
from collections.abc import Callable
from typing import Any

from optimizers import knobs as knob_rules
from optimizers.registry import OPTIMIZERS
from otbench import tracking
from otbench.cli import positive_int
from otbench.errors import ConfigError, RunError
from otbench.report import format_table


def sweepable() -> list[str]:
    """The optimizers with at least one knob declared with a sweep range."""
    return [name for name, spec in OPTIMIZERS.items()
            if spec.knobs is not None and any(knob.sweep for _, knob, _ in knob_rules.declared(spec.knobs))]


def add_sweep_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("sweep")
    group.add_argument("--sweep", type=positive_int, default=None, metavar="N",
                       help="tune the optimizer's knobs with N optuna trials")
    group.add_argument("--token-budget", type=positive_int, default=500_000,
                       help="stop starting trials once the study has spent this many tokens (default 500000)")
    group.add_argument("--storage", default=None,
                       help="optuna RDB storage URL shared by sweep workers (default: in memory)")
    group.add_argument("--study-name", default=None, help="optuna study to create or join")


def knobs_to_sweep(optimizer: str) -> type[knob_rules.Knobs]:
    knobs = OPTIMIZERS[optimizer].knobs
    if knobs is None or optimizer not in sweepable():
        raise ConfigError(f"{optimizer} has no knobs to sweep; sweep one of: {', '.join(sweepable())}")
    return knobs


def check_sweep_arguments(args: argparse.Namespace) -> None:
    knobs_to_sweep(args.optimizer)


def _score(summary: dict[str, Any], metric: str) -> float:
    results = summary["test"] if summary.get("test") else summary["after"]
    return float(results[metric])


def _tokens(summary: dict[str, Any]) -> int:
    return int(summary["tokens_by_phase"].get("all", {}).get("total_tokens", 0))


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


def run_sweep(args: argparse.Namespace, env: Any, optimize: Callable[[argparse.Namespace], dict[str, Any]]) -> dict[str, Any]:
    """Run the trials (``optimize`` runs one configuration) and return the sweep's summary."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    name = args.study_name or f"otbench-{args.optimizer}-{env.name}-{env.setting}-{args.lm}"
    try:
        study = _join_study(name, args.storage, args.seed)
    except (ValueError, ImportError, optuna.exceptions.OptunaError) as error:
        raise ConfigError(f"--storage {args.storage}: {error}".splitlines()[0]) from error
    knobs = knobs_to_sweep(args.optimizer)

    def spent() -> int:
        return sum(int(t.user_attrs.get("tokens", 0)) for t in study.get_trials(deepcopy=False))

    def objective(trial: Any) -> float:
        if spent() >= args.token_budget:
            study.stop()
            raise optuna.TrialPruned("token budget spent")
        trial_args = copy.copy(args)
        for key, value in knob_rules.search_space(knobs, trial, args.mode).items():
            setattr(trial_args, key, value)
        summary = optimize(trial_args)
        trial.set_user_attr("tokens", _tokens(summary))
        trial.set_user_attr("run_id", summary["run_id"])
        return _score(summary, env.primary_metric)

    def stop_when_spent(study: Any, trial: Any) -> None:
        if spent() >= args.token_budget:
            study.stop()

    tags = {"command": "sweep", "optimizer": args.optimizer, "env": env.name, "setting": env.setting, "lm": args.lm,
            "study": name}
    params = {"trials": args.sweep, "token_budget": args.token_budget, "storage": args.storage or "memory"}
    model = tracking.model_label(args.lm, embedded_model=args.embedded_model, gguf=args.gguf)
    run_name = tracking.run_name("sweep", args.optimizer, env.name, env.setting, f"n{args.limit}", model)
    with tracking.tracked_run(run_name, tags=tags, params=params) as run:
        study.optimize(objective, n_trials=args.sweep, callbacks=[stop_when_spent])
        rows = _trial_rows(study, env.primary_metric)
        if not any(row["state"] == "COMPLETE" for row in rows):
            raise RunError("no sweep trial finished within the token budget; raise --token-budget")
        best = max((row for row in rows if row["state"] == "COMPLETE"),
                   key=lambda row: (row[env.primary_metric], -row["tokens"]))
        tracking.log_table(rows, "sweep_trials.json")
        import mlflow

        mlflow.log_metrics({f"best_{env.primary_metric}": best[env.primary_metric], "tokens_spent": spent()})
        mlflow.log_dict(best, "best_configuration.json")
        return {"sweep_run_id": run.info.run_id, "study": name, "trials": rows, "best": best, "tokens_spent": spent()}


def _trial_rows(study: Any, metric: str) -> list[dict[str, Any]]:
    return [
        {"trial": t.number, "state": t.state.name, metric: t.value if t.value is not None else float("nan"),
         "tokens": int(t.user_attrs.get("tokens", 0)), "run_id": t.user_attrs.get("run_id", ""), **t.params}
        for t in study.get_trials(deepcopy=False)
    ]


def print_sweep(summary: dict[str, Any]) -> None:
    print(format_table(summary["trials"]))
    best = summary["best"]
    knobs = {k: v for k, v in best.items() if k not in ("trial", "state", "run_id")}
    print(f"best trial {best['trial']}: {knobs}   MLflow run: {best['run_id']}")
    print(f"tokens spent: {summary['tokens_spent']}   sweep run: {summary['sweep_run_id']}   study: {summary['study']}")
