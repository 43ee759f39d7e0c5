"""The finished run of a definition, found by its key: in the store, else in the results ledger.

A run's definition is read through :mod:`otbench.run.logged` (any format ever logged, in the current one), so a run
logged before definitions were, or by an earlier format, is found like any other.
"""

from __future__ import annotations

from typing import Any

from otbench import mlflow_store
from otbench.errors import ConfigError
from otbench.run.definition import KEY_TAG, RunDefinition, same_run
from otbench.run.logged import definition_of


def find(definition: RunDefinition) -> Any | None:
    """The latest finished run of ``definition`` (not a sweep's trial), or None: by its key first, then through
    :func:`definition_of` among the runs of the same command, environment and sample; else the results ledger's
    finished entry of it, loaded into the store (:func:`otbench.run.ledger.load`)."""
    found = find_in_store(definition)
    return found if found is not None else _from_ledger(definition, "finished")


def _from_ledger(definition: RunDefinition, status: str) -> Any | None:
    """The ledger's entry of ``definition`` with ``status``, loaded into the store as a run (None: no such entry)."""
    import mlflow

    from otbench.run import ledger

    entry = ledger.find(definition)
    if entry is None or entry.status != status:
        return None
    return mlflow.get_run(ledger.load(entry))


def find_in_store(definition: RunDefinition) -> Any | None:
    """The latest finished run of ``definition`` in the current store (the ledger is not read)."""
    import mlflow

    experiment = mlflow.get_experiment_by_name(mlflow_store.EXPERIMENT)
    if experiment is None:  # nothing was ever logged to this store
        return None
    client = mlflow.MlflowClient()
    finished = "attributes.status = 'FINISHED'"
    for run in client.search_runs([experiment.experiment_id], f"tags.`{KEY_TAG}` = {quoted(definition.key)} AND "
                                  f"{finished}", order_by=["attributes.start_time DESC"]):
        if not _aside(run):
            return run
    clauses = [f"tags.command = {quoted(definition.command)}", f"tags.env = {quoted(definition.env)}", finished]
    if definition.sample.seed is not None:
        clauses.append(f"params.seed = {quoted(str(definition.sample.seed))}")
    if definition.sample.limit is not None:
        clauses.append(f"params.limit = {quoted(str(definition.sample.limit))}")
    for run in client.search_runs([experiment.experiment_id], " AND ".join(clauses),
                                  order_by=["attributes.start_time DESC"]):
        if _aside(run):
            continue
        found = definition_of(run)
        if found is not None and same_run(found, definition):
            return run
    return None


def unfinished(definition: RunDefinition) -> list[Any]:
    """Runs of ``definition`` that did not finish (stopped, failed, or left running by a process that died),
    newest first: an interrupted cell of a grid resumes the newest of them. Runs logged by an earlier format are
    read through :func:`definition_of`; with none in the store, the results ledger's interrupted entry of it
    (run elsewhere as far as it got) is loaded as one."""
    found = unfinished_in_store(definition)
    if found:
        return found
    loaded = _from_ledger(definition, "interrupted")
    return [loaded] if loaded is not None else []


def unfinished_in_store(definition: RunDefinition) -> list[Any]:
    """The runs of ``definition`` in the current store that did not finish, newest first (the ledger is not read)."""
    import mlflow

    experiment = mlflow.get_experiment_by_name(mlflow_store.EXPERIMENT)
    found = []
    if experiment is not None:
        searched = mlflow.MlflowClient().search_runs(
            [experiment.experiment_id], f"tags.command = {quoted(definition.command)} AND "
            f"tags.env = {quoted(definition.env)} AND attributes.status != 'FINISHED'",
            order_by=["attributes.start_time DESC"])
        for run in searched:
            if _aside(run):
                continue
            if run.data.tags.get(KEY_TAG) == definition.key or (
                    (logged := definition_of(run)) is not None and same_run(logged, definition)):
                found.append(run)
    return found


def _aside(run: Any) -> bool:
    """Whether a run is no row of its definition: a sweep's trial (part of a tuning study), or a ledger entry whose
    loading did not finish (:func:`otbench.run.ledger.half_loaded`)."""
    from otbench.run.ledger import half_loaded

    return "mlflow.parentRunId" in run.data.tags or half_loaded(run)


def quoted(value: str) -> str:
    """A value in an MLflow search filter."""
    if "'" in value:
        raise ConfigError(f"cannot search MLflow for a value with a quote in it: {value!r}")
    return f"'{value}'"
