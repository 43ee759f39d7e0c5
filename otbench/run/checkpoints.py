"""What an interrupted optimize run continues from (``--resume``): its definition, logged when it starts, and the
checkpoint of its last finished iteration with the calls its iterations saw (written by
:class:`otbench.run.tracking.MlflowIterationTracker`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DEFINITION = "definition.json"
OBSERVED = "observed_calls.jsonl"
"""Artefact of each iteration: the calls the optimizer saw since the iteration before, one JSON object a line."""
CHECKPOINT_STEP = "step"
"""Checkpoint entry: the iteration it was written after, so a resume reads the calls of the iterations up to it."""


def log_definition(definition: dict[str, Any]) -> None:
    """What defines an optimize run (its definition's JSON), logged when it starts: a run stopped before its first
    checkpoint can still be resumed (it starts over in the same MLflow run; the LM cache serves the calls it had
    made)."""
    import mlflow

    mlflow.log_dict({"definition": definition}, DEFINITION)


def resumable_checkpoint(run_id: str) -> dict[str, Any]:
    """:func:`load_checkpoint` of a run that has not finished; a finished one is refused, on one line and
    untouched (resuming it would log its final results and register its docs again)."""
    import mlflow

    from otbench.errors import ConfigError

    try:
        status = mlflow.get_run(run_id).info.status
    except Exception:  # noqa: BLE001 - MLflow raises several types for a run that is not there
        status = None
    if status == "FINISHED":
        raise ConfigError(f"--resume {run_id}: that run finished; there is nothing to continue")
    return load_checkpoint(run_id)


def load_checkpoint(run_id: str) -> dict[str, Any]:
    """The last finished iteration of an optimize run, for ``--resume``, with the calls its finished iterations
    saw (``observed_calls``); for a run stopped before its first iteration finished, only its definition
    (``{"definition": ...}``, or ``{"args": ...}`` as runs logged it before definitions; no ``docs``)."""
    import mlflow

    from otbench.errors import DataError

    for artifact in ("checkpoint.json", DEFINITION):
        try:
            path = mlflow.artifacts.download_artifacts(artifact_uri=f"runs:/{run_id}/{artifact}")
        except Exception:  # noqa: BLE001, S112 - MLflow raises several types for a missing run or artefact
            continue
        checkpoint = dict(json.loads(Path(path).read_text()))
        if CHECKPOINT_STEP in checkpoint:
            from otbench.optimizers.base import OBSERVED_CALLS

            checkpoint[OBSERVED_CALLS] = _observed_calls(run_id, int(checkpoint[CHECKPOINT_STEP]))
        return checkpoint
    raise DataError(f"--resume {run_id}: no checkpoint in that run (is it an optimize run?)")


def _observed_calls(run_id: str, last_step: int) -> list[dict[str, Any]]:
    """The calls logged with the iterations up to ``last_step``, in order (a step after it was logged but not
    finished, and is done again by the resumed run)."""
    import mlflow

    client = mlflow.tracking.MlflowClient()
    steps = sorted((int(folder.path.rsplit("_", 1)[1]), folder.path)
                   for folder in client.list_artifacts(run_id, "iterations") if folder.is_dir)
    calls: list[dict[str, Any]] = []
    for step, folder in steps:
        if step > last_step:
            break
        try:
            path = mlflow.artifacts.download_artifacts(artifact_uri=f"runs:/{run_id}/{folder}/{OBSERVED}")
        except Exception:  # noqa: BLE001, S112 - a step logged before calls were kept has none
            continue
        calls.extend(json.loads(line) for line in Path(path).read_text().splitlines() if line)
    return calls
