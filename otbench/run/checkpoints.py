"""What an interrupted optimize run continues from (``--resume``): its definition, logged when it starts, and the
checkpoint of its last finished iteration with the calls its iterations saw, as :mod:`otbench.run.tracking` wrote
them (:func:`~otbench.run.tracking.log_definition`, :class:`~otbench.run.tracking.MlflowIterationTracker`);
:func:`resumable` reads them back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from otbench.run.definition import RunDefinition

DEFINITION = "definition.json"
OBSERVED = "observed_calls.jsonl"
"""Artefact of each iteration: the calls the optimizer saw since the iteration before, one JSON object a line."""
COVERAGE_CHECKPOINT = "coverage_checkpoint.json"
"""Artefact of a run whose coverage pass was checkpointed: the checkpoint of the pass's last step, kept when the
optimizer's own steps overwrite ``checkpoint.json``, so another optimizer can go on from the same pass
(``optimize --coverage-from RUN_ID``)."""
CHECKPOINT_STEP = "step"
"""Checkpoint entry: the iteration it was written after, so a resume reads the calls of the iterations up to it."""


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


def resumable(run_id: str) -> tuple[RunDefinition, dict[str, Any]]:
    """The definition an interrupted run continues, and its checkpoint (empty for a run stopped before its first
    iteration finished, which starts over in the same MLflow run); a finished run, or a checkpoint that defines
    another run than the one logged, is refused on one line."""
    import json

    import mlflow

    from otbench.errors import ConfigError
    from otbench.run.definition import DEFINITION_TAG, same_run
    from otbench.run.logged import definition_from_json, definition_from_values

    checkpoint = resumable_checkpoint(run_id)
    if "definition" in checkpoint:
        definition = definition_from_json(checkpoint["definition"])
    else:  # written before checkpoints kept the definition: the options, by command-line name
        saved = dict(checkpoint["args"])
        if saved.get("toolset") is not None:  # saved before --setting named chess's and BrowseComp's settings
            saved["setting"] = saved["toolset"]
        definition = definition_from_values("optimize", saved)
    try:
        stored = mlflow.get_run(run_id).data.tags.get(DEFINITION_TAG)
    except mlflow.exceptions.MlflowException:  # only a checkpoint to go by
        stored = None
    if stored is not None:
        logged = definition_from_json(json.loads(stored))
        if not (same_run(logged, definition) or same_run(definition, logged)):
            raise ConfigError(f"--resume {run_id}: its checkpoint defines another run than the one logged "
                              f"({logged.key}); start a new run instead")
    return definition, (checkpoint if "docs" in checkpoint else {})


def load_checkpoint(run_id: str) -> dict[str, Any]:
    """The last finished iteration of an optimize run, for ``--resume``, with the calls its finished iterations
    saw (``observed_calls``); for a run stopped before its first iteration finished, only its definition
    (``{"definition": ...}``, or ``{"args": ...}`` as runs logged it before definitions; no ``docs``)."""
    from otbench.errors import DataError

    for artifact in ("checkpoint.json", DEFINITION):
        checkpoint = _json_artifact(run_id, artifact)
        if checkpoint is None:
            continue
        if CHECKPOINT_STEP in checkpoint:
            from otbench.optimizers.base import OBSERVED_CALLS

            checkpoint[OBSERVED_CALLS] = _observed_calls(run_id, int(checkpoint[CHECKPOINT_STEP]))
        return checkpoint
    raise DataError(f"--resume {run_id}: no checkpoint in that run (is it an optimize run?)")


def coverage_checkpoint(run_id: str) -> dict[str, Any]:
    """The checkpoint of the coverage pass of optimize run ``run_id`` (:data:`COVERAGE_CHECKPOINT`, or its
    ``checkpoint.json`` where that is still the pass's), with the calls its steps saw; refused on one line where the
    run has no coverage pass checkpointed."""
    from otbench.errors import ConfigError
    from otbench.optimizers.base import COVERAGE_EVIDENCE, OBSERVED_CALLS

    for artifact in (COVERAGE_CHECKPOINT, "checkpoint.json"):
        checkpoint = _json_artifact(run_id, artifact)
        if checkpoint is not None and COVERAGE_EVIDENCE in checkpoint and CHECKPOINT_STEP in checkpoint:
            checkpoint[OBSERVED_CALLS] = _observed_calls(run_id, int(checkpoint[CHECKPOINT_STEP]))
            return checkpoint
    raise ConfigError(f"--coverage-from {run_id}: no coverage pass is checkpointed in that run (an optimize run "
                      "with --coverage keeps one; an entry of the results ledger is first made a run with "
                      "`python -m otbench.results load`)")


def _json_artifact(run_id: str, artifact: str) -> dict[str, Any] | None:
    """A JSON object artefact of run ``run_id``, None where the run or the artefact is not there."""
    import mlflow

    try:
        path = mlflow.artifacts.download_artifacts(artifact_uri=f"runs:/{run_id}/{artifact}")
    except Exception:  # noqa: BLE001 - MLflow raises several types for a missing run or artefact
        return None
    return dict(json.loads(Path(path).read_text()))


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
        read = (json.loads(line) for line in Path(path).read_text().splitlines() if line)
        # a line that is no call was written as a text alone, its output once too large to print
        calls.extend(entry for entry in read if isinstance(entry, dict))
    return calls
