"""MLflow plumbing: a sqlite store under ``./mlruns`` and helpers every command uses.

NOTES.md: the file store refuses to start without a flag and sqlite is MLflow's default, so the
store is ``mlruns/mlflow.db`` with artefacts in ``mlruns/artifacts``. ``--tracking-uri`` (or
``MLFLOW_TRACKING_URI``) points at any other MLflow server instead.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import otbench  # noqa: F401  (offline-safe environment before mlflow loads)
from otbench.paths import mlruns_dir

EXPERIMENT = "otbench"


def store_uris(directory: Path | None = None) -> tuple[str, str]:
    """``(backend_store_uri, artifact_root)`` of the local store."""
    root = (directory or mlruns_dir()).resolve()
    root.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{root / 'mlflow.db'}", str(root / "artifacts")


def configure(tracking_uri: str | None = None, *, directory: Path | None = None, experiment: str = EXPERIMENT) -> str:
    """Point MLflow at the chosen store and experiment; returns the tracking URI in use."""
    import mlflow

    uri = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI")
    artifact_root = None
    if not uri:
        uri, artifact_root = store_uris(directory)
    mlflow.set_tracking_uri(uri)
    if mlflow.get_experiment_by_name(experiment) is None:
        location = f"{artifact_root}/{experiment}" if artifact_root else None
        mlflow.create_experiment(experiment, artifact_location=location)
    mlflow.set_experiment(experiment)
    return uri


def _scalar(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


@contextmanager
def tracked_run(name: str, *, tags: dict[str, Any], params: dict[str, Any]) -> Iterator[Any]:
    """A run that ends FAILED (keeping what it logged) if the block raises or is interrupted."""
    import mlflow

    with mlflow.start_run(run_name=name, tags={k: _scalar(v) for k, v in tags.items()}) as run:
        mlflow.log_params({k: _scalar(v)[:500] for k, v in params.items()})
        try:
            yield run
        except BaseException:
            mlflow.end_run(status="KILLED")
            raise


def log_table(rows: list[dict[str, Any]], artifact_file: str) -> None:
    """Log rows as an MLflow table artefact (JSON that the UI renders as a table)."""
    import mlflow
    import pandas as pd

    mlflow.log_table(pd.DataFrame(rows), artifact_file=artifact_file)
