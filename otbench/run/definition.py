"""What defines a run, as one frozen value, and the stable key that finds it again.

A run is defined by its environment (with its setting and own options, faults included), the task
sample it is judged on, the models it uses, and either the docs and agent it evaluates or the
optimizer it runs with the knobs that act in its learning mode. Two runs with equal definitions
compute the same thing, whatever else differed (threads, caches, where they logged), so a finished
run is reused wherever its definition is wanted again: by ``compare``, by ``reproduce``'s grid and by
``--resume``'s check. Everything else a run logs derives from its definition: the MLflow params
shown in the UI (:meth:`RunDefinition.params`), the tags, the run name, and two tags that make it
findable: :data:`KEY_TAG` (:attr:`RunDefinition.key`, a hash of the canonical JSON) and
:data:`DEFINITION_TAG` (the JSON itself, so a later version reads what an earlier one logged).

Which knobs act is read from their declarations (:class:`otbench.optimizers.settings.Improvements`'
``acting_in``, each knob's ``modes``): a knob that does not act in a run's mode is not part of its
definition. ToolObserver's improvements are kept as the set of those switched on that act, so a
``--variant paper`` run (none on) has the same definition however the declarations change.

Runs logged before definitions were (and definitions logged by an earlier version, where they lack
something added since) are read by one adapter, :mod:`otbench.run.lookup`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from otbench.envs.registry import EnvironmentOptions
from otbench.llm.session import EMBEDDED, LMOptions
from otbench.optimizers import knobs as knob_rules
from otbench.optimizers.registry import OPTIMIZERS, improvements_of
from otbench.optimizers.settings import VARIANTS, Improvements
from otbench.run.options import HOW_IT_RUNS, as_logged

KEY_TAG = "otbench.key"
"""The tag holding a run's definition key."""
DEFINITION_TAG = "otbench.run.definition"
"""The tag holding a run's definition as canonical JSON."""
VERSION = 1
"""The definition format's version, part of the JSON (not of the key)."""


@dataclass(frozen=True)
class Sample:
    """The tasks a run is judged on."""

    limit: int | None
    """Tasks in the seeded sample: learned on (optimize), judged on (evaluate, and optimize online)."""
    seed: int
    test_limit: int | None = None
    """Offline optimize runs: test tasks the learned docs are scored on (None for any other run)."""
    val_limit: int | None = None
    """Offline optimize runs: train tasks the docs are chosen on (``--val-limit``; None: none, the final docs kept)."""


@dataclass(frozen=True)
class Models:
    """The models a run calls (none for a reference agent)."""

    agent: str | None
    """The agent's model (``--lm``), None for the oracle and null agents."""
    editor: str | None = None
    """Optimize runs: the editor's (and exploration's) model."""
    embedded: str | None = None
    """The embedded weights (``qwen-1.5b``, or a GGUF file) when a model is the embedded one."""
    grammar: bool | None = None
    """Whether the embedded model's replies are constrained by grammars (None for hosted models)."""
    temperature: float | None = None


@dataclass(frozen=True)
class Optimizer:
    """The optimizer of an optimize run and what it was set to, as far as it acts."""

    name: str
    mode: str
    """``online`` or ``offline``, resolved."""
    variant: str | None = None
    """ToolObserver's variant (None for the other optimizers)."""
    improvements: tuple[str, ...] = ()
    """ToolObserver: the improvements switched on that act in ``mode``, sorted."""
    oracle_feedback: bool | None = None
    """ToolObserver: whether the editor is shown each attempt's success."""
    probe: bool | None = None
    """The other optimizers offered the shared probe: whether it is on (None where it is not offered)."""
    knobs: tuple[tuple[str, Any], ...] = ()
    """The optimizer's knobs that act in ``mode``, by option name (``p2p_samples``), sorted."""


@dataclass(frozen=True)
class RunDefinition:
    """What a run computes: equal definitions are the same run."""

    command: str
    """``evaluate`` or ``optimize``."""
    env: str
    setting: str
    """The setting as chosen (resolved to the environment's default)."""
    environment: tuple[tuple[str, Any], ...]
    """The environment's own options and ``faults``, by option name, sorted."""
    sample: Sample
    models: Models
    agent: str | None = None
    """Evaluate runs: ``llm``, ``oracle`` or ``null``."""
    docs: str | None = None
    """Evaluate runs: docs given instead of the setting's (``gold``, a file, ``runs:/ID``); None: the setting's."""
    optimizer: Optimizer | None = None
    """Optimize runs: the optimizer."""
    extra: tuple[tuple[str, Any], ...] = field(default=())
    """Reserved for what a later version adds; empty here."""

    def to_json(self) -> dict[str, Any]:
        """The definition as canonical JSON data (the key hashes it)."""
        data = asdict(self)
        if self.sample.val_limit is None:  # as runs defined before --val-limit: their keys stay what they were
            del data["sample"]["val_limit"]
        data["environment"] = dict(self.environment)
        data["extra"] = dict(self.extra)
        if self.optimizer is not None:
            data["optimizer"]["knobs"] = dict(self.optimizer.knobs)
            data["optimizer"]["improvements"] = list(self.optimizer.improvements)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunDefinition:
        """Read :meth:`to_json`'s data back."""
        optimizer = data.get("optimizer")
        return cls(
            command=data["command"], env=data["env"], setting=data["setting"],
            environment=tuple(sorted(dict(data["environment"]).items())), sample=Sample(**data["sample"]),
            models=Models(**data["models"]), agent=data.get("agent"), docs=data.get("docs"),
            optimizer=None if optimizer is None else Optimizer(
                name=optimizer["name"], mode=optimizer["mode"], variant=optimizer.get("variant"),
                improvements=tuple(sorted(optimizer.get("improvements", ()))),
                oracle_feedback=optimizer.get("oracle_feedback"), probe=optimizer.get("probe"),
                knobs=tuple(sorted(dict(optimizer.get("knobs", {})).items()))),
            extra=tuple(sorted(dict(data.get("extra", {})).items())))

    def canonical(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"), default=str)

    @property
    def key(self) -> str:
        """A stable short hash of the definition: equal definitions, equal keys."""
        return hashlib.sha256(self.canonical().encode()).hexdigest()[:20]

    # -- what runs log, derived ---------------------------------------------------------------------------------
    @property
    def method(self) -> str:
        """The comparison row the run is: ``base``, ``gold``, ``docs`` for an evaluation by the LLM agent, and a
        reference agent's name (``oracle``, ``null``: they read no docs, so no docs row fits them); the optimizer's
        row label (``+TO (paper)``, ``+TO --no-facts``, ``+ET (probe)``) for an optimize run, with
        ``--val-limit N`` where the docs were chosen on a validation sample."""
        if self.optimizer is None:
            if self.agent not in (None, "llm"):
                return self.agent
            return "gold" if "gold" in (self.docs, self.setting) else docs_kind(self.docs)
        optimizer = self.optimizer
        spec = OPTIMIZERS[optimizer.name]
        if optimizer.variant is None:
            label = spec.row_label("improved", {"probe": bool(optimizer.probe)})
        else:
            label = spec.row_label(optimizer.variant, self.switches())
        return f"{label} --val-limit {self.sample.val_limit}" if self.sample.val_limit else label

    def switches(self) -> dict[str, bool]:
        """ToolObserver: the acting improvements that depart from its variant, as ``--[no-]KNOB`` switches."""
        optimizer = self.optimizer
        if optimizer is None or optimizer.variant is None:
            return {}
        variant = VARIANTS[optimizer.variant]
        return {name: name in optimizer.improvements for name in Improvements.acting_in(optimizer.mode)
                if (name in optimizer.improvements) != getattr(variant, name)}

    def tags(self, setting_name: str) -> dict[str, Any]:
        """The run's tags: what groups runs in MLflow (``setting_name``: the environment's name for its setting,
        which BrowseComp extends with its retrieval options), and the definition with its key."""
        common = {"command": self.command, "env": self.env, "setting": setting_name, KEY_TAG: self.key,
                  DEFINITION_TAG: self.canonical()}
        if self.optimizer is None:
            return {**common, "agent": self.agent, "lm": self.models.agent or "-", "optimizer": docs_kind(self.docs)}
        return {**common, "optimizer": self.optimizer.name, "mode": self.optimizer.mode, "lm": self.models.agent,
                "editor_lm": self.models.editor, "seed": self.sample.seed}

    def params(self, setting_name: str, *, learning: str, swept: bool = False) -> dict[str, Any]:
        """The run's MLflow params: what sets it apart from the runs it is compared with, and no more.

        MLflow's compare page plots the first three params by name whose values differ between the runs it shows,
        one a run lacks counting as a difference: defaults that only one optimizer's runs logged would push what
        tells the rows of a comparison apart (method, optimizer, setting) off that plot. So a run logs its
        optimizer's options only where they depart from their defaults (a sweep's trial, ``swept``, all the knobs
        it draws), ToolObserver's variant always and the improvements switched away from it, its mode where it
        is not the environment's ``learning``, and nothing unset. (Runs from before definitions were logged also
        logged the improvements declared ``always_logged`` wherever they acted: the definition tag carries every
        improvement now, and :mod:`otbench.run.lookup` reads those older runs.)
        """
        models = self.models
        shared: dict[str, Any] = {**{k: v for k, v in self.environment if v is not None}, "seed": self.sample.seed}
        if models.agent is not None:
            shared |= {"lm": models.agent, "temperature": models.temperature}
            if models.embedded is not None:
                shared |= _embedded_params(models)
        if self.optimizer is None:
            evaluated = {"method": self.method, **shared, "docs": self.docs, "optimizer": docs_kind(self.docs),
                         "env": self.env, "setting": setting_name, "limit": self.sample.limit,
                         "lm": models.agent or "-"}
            return {name: value for name, value in evaluated.items() if value is not None}
        optimizer = self.optimizer
        params = {"method": self.method, "optimizer": optimizer.name, "env": self.env, "setting": self.setting,
                  **shared, "limit": self.sample.limit}
        if self.sample.test_limit is not None:
            params["test_limit"] = self.sample.test_limit
        if self.sample.val_limit is not None:
            params["val_limit"] = self.sample.val_limit
        if models.editor != models.agent:
            params["editor_lm"] = models.editor
        if optimizer.mode != learning:
            params["mode"] = optimizer.mode
        spec = OPTIMIZERS[optimizer.name]
        declared = {knob_rules.dest(spec.knobs, name): default
                    for name, _, default in knob_rules.declared(spec.knobs)} if spec.knobs is not None else {}
        params |= {name: value for name, value in optimizer.knobs if swept or value != declared.get(name)}
        if optimizer.variant is not None:
            params["variant"] = optimizer.variant
            params |= self.switches()
            if optimizer.oracle_feedback:
                params["oracle_feedback"] = True
        elif optimizer.probe:
            params["probe"] = True
        return {name: value for name, value in params.items() if value is not None}

    def run_name(self, tasks: int, model_label: str, setting_name: str) -> str:
        """``toolobserver-paper-bfcl-names_only-n10-qwen-1.5b`` (the time is added when the run starts):
        ``model_label`` names the agent's model (joined with the editor's when that differs)."""
        parts: tuple[str | None, ...]
        if self.optimizer is None:
            docs = {None: None, "gold": "gold-docs"}.get(self.docs, "learned-docs")
            parts = ("evaluate", self.env, setting_name, self.agent, docs, f"n{tasks}",
                     model_label if self.models.agent else None)
        else:
            variant = self.optimizer.variant if self.optimizer.variant not in (None, "improved") else None
            validated = f"val{self.sample.val_limit}" if self.sample.val_limit else None
            parts = (self.optimizer.name, variant, self.env, setting_name, f"n{tasks}", validated, model_label)
        return "-".join(str(part) for part in parts if part)


def _embedded_params(models: Models) -> dict[str, Any]:
    weights = models.embedded or ""
    by_file = weights.endswith(".gguf") or "/" in weights
    return {"gguf" if by_file else "embedded_model": weights, "no_grammar": not models.grammar}


def docs_kind(docs: str | None) -> str:
    """The docs an evaluation scores, as its ``optimizer`` tag says: base (the setting's own), gold, or docs."""
    return {None: "base", "gold": "gold"}.get(docs, "docs")


def environment_options(options: EnvironmentOptions) -> tuple[tuple[str, Any], ...]:
    own = {name: as_plain(value) for name, value in options.own.items() if name not in HOW_IT_RUNS}
    return tuple(sorted({**own, "faults": options.faults}.items()))


def as_plain(value: Any) -> Any:
    """A value as JSON keeps it (paths as text)."""
    return value if isinstance(value, (str, int, float, bool)) or value is None else str(value)


def _models(lm: LMOptions, *, editor: bool) -> Models:
    editor_model = (lm.editor_lm or lm.lm) if editor else None
    uses_embedded = EMBEDDED in (lm.lm, editor_model)
    weights = (str(lm.gguf) if lm.gguf else lm.embedded_model) if uses_embedded else None
    return Models(lm.lm, editor_model, weights, lm.grammar if uses_embedded else None, lm.temperature)


def evaluation(environment: EnvironmentOptions, *, agent: str, docs: str | None, tasks: int, seed: int,
               lm: LMOptions) -> RunDefinition:
    """The definition of an evaluation of ``agent`` with ``docs`` on ``tasks`` tasks of sample ``seed``
    (``environment`` resolved)."""
    models = _models(lm, editor=False) if agent == "llm" else Models(None)
    return RunDefinition("evaluate", environment.env, str(environment.setting), environment_options(environment),
                         Sample(tasks, seed), models, agent=agent, docs=docs)


def optimization(environment: EnvironmentOptions, *, optimizer: str, mode: str, limit: int, seed: int,
                 test_limit: int, oracle_feedback: bool, variant: str, switches: Mapping[str, bool | None],
                 knobs: Any, lm: LMOptions, val_limit: int | None = None) -> RunDefinition:
    """The definition of an optimize run (``environment`` resolved, ``mode`` too): only what acts in ``mode``."""
    spec = OPTIMIZERS[optimizer]
    acting_knobs: tuple[tuple[str, Any], ...] = ()
    if spec.knobs is not None:
        chosen = knobs if knobs is not None else spec.knobs()
        acting_knobs = tuple(sorted((knob_rules.dest(spec.knobs, name), getattr(chosen, name))
                                    for name, declaration, _ in knob_rules.declared(spec.knobs)
                                    if mode in declaration.modes))
    if optimizer == "toolobserver":
        used = improvements_of(variant, switches)
        defined = Optimizer(optimizer, mode, variant=variant,
                            improvements=tuple(sorted(name for name in Improvements.acting_in(mode)
                                                      if getattr(used, name))),
                            oracle_feedback=oracle_feedback, knobs=acting_knobs)
    else:
        defined = Optimizer(optimizer, mode, probe=bool(switches.get("probe")) if spec.offers_probe else None,
                            knobs=acting_knobs)
    sample = Sample(limit, seed, test_limit if mode == "offline" else None, val_limit if mode == "offline" else None)
    return RunDefinition("optimize", environment.env, str(environment.setting), environment_options(environment),
                         sample, _models(lm, editor=True), optimizer=defined)


def params_as_logged(params: Mapping[str, Any]) -> dict[str, str]:
    """Params as MLflow keeps them (text)."""
    return {name: as_logged(value) for name, value in params.items()}
