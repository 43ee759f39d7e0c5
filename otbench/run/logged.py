"""The one adapter that reads any run's definition, in whatever format it was logged.

A run logged with its definition (:mod:`otbench.run.definition`) carries it in a tag. A run logged before
definitions were, or by an earlier format (:data:`otbench.run.definition.VERSION`), is read here and nowhere else:
an earlier definition is brought to the current format (:func:`definition_from_json`); a run with none has its
params and tags filled with what such runs meant (:data:`MEANT_WHEN_ABSENT`, and each optimizer's own rules:
:meth:`otbench.optimizers.spec.OptimizerSpec.earlier_values`) and defined again (:func:`definition_from_values`), so
its key can be compared with the one wanted (:mod:`otbench.run.lookup`). Nothing else in otbench interprets what
older runs logged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from otbench.envs.registry import EnvironmentOptions, learning_of, options_from_values, own_defaults, resolve
from otbench.errors import OtbenchError
from otbench.optimizers.registry import OPTIMIZERS, spec_of
from otbench.run.definition import DEFINITION_TAG, VERSION, RunDefinition, environment_options, evaluation, optimization
from otbench.run.settings import lm_from_values

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
            return definition_from_json(json.loads(stored))
        return _from_params(run.data.tags, run.data.params)
    except (OtbenchError, KeyError, TypeError, ValueError):
        return None


def definition_from_json(data: Mapping[str, Any]) -> RunDefinition:
    """A definition in any format that was ever logged, in the current one, with the environment options added
    since it was logged at the value they meant."""
    if data.get("version", 1) == 1:
        data = _from_first_format(data)
    return _completed(RunDefinition.from_json(data))


def _from_first_format(data: Mapping[str, Any]) -> dict[str, Any]:
    """The first format kept an optimizer's variant, improvements, oracle feedback and probe beside its knobs:
    its spec makes them knobs (:meth:`~otbench.optimizers.spec.OptimizerSpec.from_earlier_format`)."""
    converted = {**data, "version": VERSION}
    optimizer = data.get("optimizer")
    if optimizer is not None:
        converted["optimizer"] = {"name": optimizer["name"], "mode": optimizer["mode"],
                                  "knobs": spec_of(optimizer["name"]).from_earlier_format(optimizer)}
    return converted


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


def definition_from_values(command: str, values: Mapping[str, Any], *, mode: str | None = None) -> RunDefinition:
    """The definition that option values by command-line name make (an older run's params, an older checkpoint's
    saved options): the environment resolved, an optimizer's knobs as its spec reads them."""
    environment = resolve(options_from_values(values))
    lm = lm_from_values(values)
    seed = int(values.get("seed") or 0)
    if command == "evaluate":
        limit = values.get("limit")
        return evaluation(environment, agent=str(values.get("agent") or "llm"), docs=values.get("docs"),
                          limit=int(limit) if limit is not None else None, seed=seed, lm=lm)
    name = str(values["optimizer"])
    spec = spec_of(name)
    knobs = spec.knobs_from(spec.earlier_values(values))
    return optimization(environment, optimizer=spec, knobs=knobs, mode=str(mode or values.get("mode") or learning_of(environment.env)),
                        limit=int(values.get("limit", 10)), seed=seed, test_limit=int(values.get("test_limit", 10)),
                        val_limit=values.get("val_limit"), lm=lm)


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
        return definition_from_values("evaluate", values)
    name = str(tags.get("optimizer", params.get("optimizer", "")))
    if name not in OPTIMIZERS:
        return None
    values |= {"optimizer": name, "setting": values.get("setting", tags.get("setting")),
               "lm": params.get("lm", tags.get("lm", "embedded")), "editor_lm": tags.get("editor_lm")}
    return definition_from_values("optimize", values, mode=str(tags.get("mode", params.get("mode", ""))) or None)
