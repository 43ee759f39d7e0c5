"""The finished run of a definition, found by its key; and the one adapter that reads any run's definition.

A run logged with its definition (:mod:`otbench.run.definition`) is found by the key tag at once. A run
logged before definitions were, or by an earlier format that lacks something added since, is read
here and nowhere else: its params and tags are filled with what such runs meant (:data:`MEANT_WHEN_ABSENT`
and the rules below), turned back into the command's options and defined again, so its key can be
compared with the one wanted. Nothing else in otbench interprets what older runs logged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from otbench import evaluate, optimize
from otbench.envs.registry import EnvironmentOptions, own_defaults, resolve
from otbench.errors import ConfigError, OtbenchError
from otbench.optimizers.registry import OPTIMIZERS
from otbench.optimizers.settings import Improvements
from otbench.run import tracking
from otbench.run.definition import DEFINITION_TAG, KEY_TAG, RunDefinition, environment_options

MEANT_WHEN_ABSENT: dict[str, Any] = {"faults": None, "board_diagram": True, "phase_name": False,
                                     "refuse_repeats": False, "answer_cue": False}
"""Environment options added after runs were logged without them, with the value those runs had in effect: no
faults before ``--faults``; Chess showed the board diagram before ``--board-diagram`` and named no phase
before ``--phase-name``; BrowseComp and Wild ran every repeated call before ``--refuse-repeats``, and Wild's prompts
had no answer cue before ``--answer-cue``. (Any other option a run lacks had its current default.)"""


def definition_of(run: Any) -> RunDefinition | None:
    """The definition of an MLflow run (``mlflow.entities.Run``) of ``evaluate`` or ``optimize``; None for any
    other run, or one whose logged values no longer make a valid run."""
    stored = run.data.tags.get(DEFINITION_TAG)
    try:
        if stored is not None:
            return _completed(RunDefinition.from_json(json.loads(stored)))
        return _from_params(run.data.tags, run.data.params)
    except (OtbenchError, KeyError, TypeError, ValueError):
        return None


def _completed(definition: RunDefinition) -> RunDefinition:
    """A logged definition with the environment options added since it was logged, at the value they meant."""
    defaults = dict(environment_options(resolve(EnvironmentOptions(definition.env))))
    meant = {name: MEANT_WHEN_ABSENT[name] for name in defaults if name in MEANT_WHEN_ABSENT}
    filled = {**defaults, **meant, **dict(definition.environment)}
    return replace(definition, environment=tuple(sorted(filled.items())))


def _decoded(value: str) -> Any:
    """A param as logged (``json.dumps`` of anything not text) back to its value."""
    try:
        return json.loads(value)
    except ValueError:
        return value


def _from_params(tags: Mapping[str, str], logged: Mapping[str, str]) -> RunDefinition | None:
    """A run logged before definitions were: its params, with what it did not log filled as it meant."""
    command = tags.get("command")
    params = {name: _decoded(value) for name, value in logged.items()}
    env = str(params.get("env", tags.get("env", "")))
    if command not in ("evaluate", "optimize") or not env:
        return None
    values: dict[str, Any] = {**{name: MEANT_WHEN_ABSENT[name] for name in own_defaults(env)
                                 if name in MEANT_WHEN_ABSENT}, "faults": None, **params, "env": env}
    if "toolset" in params:  # saved before --setting named Chess's and BrowseComp's settings
        values["setting"] = params["toolset"]
    values.pop("toolset", None)
    if command == "evaluate":
        # evaluate logged the environment's name for its setting (BrowseComp appends changed retrieval options)
        values["setting"] = str(params.get("setting", tags.get("setting", ""))).split(" ")[0]
        values["agent"] = tags.get("agent", "llm")
        values["lm"] = params["lm"] if params.get("lm", "-") != "-" else tags.get("lm", "embedded")
        evaluated = evaluate.options_from(values)
        evaluated = replace(evaluated, environment=resolve(evaluated.environment))
        return evaluated.definition(tasks=int(params["limit"]))
    name = str(tags.get("optimizer", params.get("optimizer", "")))
    if name not in OPTIMIZERS:
        return None
    values |= {"optimizer": name, "setting": values.get("setting", tags.get("setting")),
               "lm": params.get("lm", tags.get("lm", "embedded")), "editor_lm": tags.get("editor_lm")}
    mode = str(tags.get("mode", params.get("mode", "")))
    if name == "toolobserver":
        values.setdefault("variant", "paper")  # logged before --variant existed: the paper's protocol
        for improvement in Improvements.always_logged():  # logged wherever they act once they existed
            values.setdefault(improvement, False)
    optimized = optimize.options_from(values)
    optimized = replace(optimized, environment=resolve(optimized.environment), mode=mode or optimized.mode)
    return optimized.definition(learning=mode)


def find(definition: RunDefinition) -> Any | None:
    """The latest finished run of ``definition`` (not a sweep's trial), or None: by its key first, then through
    :func:`definition_of` among the runs of the same command, environment and sample."""
    import mlflow

    experiment = mlflow.get_experiment_by_name(tracking.EXPERIMENT)
    if experiment is None:  # nothing was ever logged to this store
        return None
    client = mlflow.MlflowClient()
    finished = "attributes.status = 'FINISHED'"
    for run in client.search_runs([experiment.experiment_id], f"tags.`{KEY_TAG}` = {quoted(definition.key)} AND "
                                  f"{finished}", order_by=["attributes.start_time DESC"]):
        if "mlflow.parentRunId" not in run.data.tags:
            return run
    clauses = [f"tags.command = {quoted(definition.command)}", f"tags.env = {quoted(definition.env)}",
               f"params.seed = {quoted(str(definition.sample.seed))}", finished]
    if definition.sample.limit is not None:
        clauses.append(f"params.limit = {quoted(str(definition.sample.limit))}")
    for run in client.search_runs([experiment.experiment_id], " AND ".join(clauses),
                                  order_by=["attributes.start_time DESC"]):
        if "mlflow.parentRunId" in run.data.tags:  # a sweep's trial: part of a tuning study, not a row
            continue
        found = definition_of(run)
        if found is not None and found.key == definition.key:
            return run
    return None


def unfinished(definition: RunDefinition) -> list[Any]:
    """Runs of ``definition`` that did not finish (stopped, failed, or left running by a process that died),
    newest first: an interrupted cell of a grid resumes the newest of them."""
    import mlflow

    experiment = mlflow.get_experiment_by_name(tracking.EXPERIMENT)
    if experiment is None:
        return []
    return [run for run in mlflow.MlflowClient().search_runs(
        [experiment.experiment_id], f"tags.`{KEY_TAG}` = {quoted(definition.key)} AND "
        "attributes.status != 'FINISHED'", order_by=["attributes.start_time DESC"])
        if "mlflow.parentRunId" not in run.data.tags]


def quoted(value: str) -> str:
    """A value in an MLflow search filter."""
    if "'" in value:
        raise ConfigError(f"cannot search MLflow for a value with a quote in it: {value!r}")
    return f"'{value}'"
