"""What defines a run, as one frozen value, and the stable key that finds it again.

A run is defined by its environment (with its setting and own options, faults included), the task
sample it is judged on, the models it uses, and either the docs and agent it evaluates or the
optimizer it runs with the knobs that act in its learning mode. Two runs with equal definitions
compute the same thing, whatever else differed (:class:`otbench.run.settings.RunSettings`: threads, caches,
where they logged), so a finished run is reused wherever its definition is wanted again: by ``compare``, by
``reproduce``'s grid, by ``--resume`` and from the results ledger (:mod:`otbench.run.ledger`).

A command turns its options into a definition once (:func:`evaluation`, :func:`optimization`); from then
on everything takes the definition: execution (:mod:`otbench.run.evaluation`, :mod:`otbench.run.optimization`),
its checkpoint, the MLflow params shown in the UI (:meth:`RunDefinition.params`), the tags, the run name, and
two tags that make it findable: :data:`KEY_TAG` (:attr:`RunDefinition.key`, a hash of the canonical JSON) and
:data:`DEFINITION_TAG` (the JSON itself, so a later version reads what an earlier one logged).

What an optimizer's knobs make of a definition is its spec's to say
(:meth:`otbench.optimizers.spec.OptimizerSpec.define`): only the knobs that act in the run's mode. A sample that
holds every task of its split is the same sample whatever the seed (:meth:`RunDefinition.sized`), so its seed is
left out. Definitions logged by an earlier format are read by one adapter, :mod:`otbench.run.logged`.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from dataclasses import InitVar, asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from otbench.envs.base import sample_tasks, task_key
from otbench.envs.registry import EnvironmentOptions
from otbench.errors import ConfigError, DataError
from otbench.llm.session import EMBEDDED, LMOptions
from otbench.optimizers.registry import spec_of
from otbench.optimizers.spec import OptimizerSpec
from otbench.run.settings import HOW_IT_RUNS, as_logged

KEY_TAG = "otbench.key"
"""The tag holding a run's definition key."""
DEFINITION_TAG = "otbench.definition"
"""The tag holding a run's definition as canonical JSON."""
COVERAGE_FROM = "coverage_from"
"""Part of an optimize run's definition (in its ``extra``) and a param: the run whose finished coverage pass it goes on
from, so a second optimizer is given the first's pass (the same help) without paying for it again."""
VERSION = 2
"""The definition format's version, part of the JSON (1: an optimizer's variant, improvements and probe sat beside
its knobs; 2: every choice of an optimizer is one of its knobs, and a full sample has no seed)."""


@dataclass(frozen=True)
class Sample:
    """The tasks a run is judged on."""

    limit: int | None
    """Tasks in the seeded sample: learned on (optimize), judged on (evaluate, and optimize online)."""
    seed: int | None
    """The sample's seed; None where every sample of the run holds its whole split (any seed draws it)."""
    test_limit: int | None = None
    """Offline optimize runs: test tasks the learned docs are scored on (None for any other run)."""
    val_limit: int | None = None
    """Offline optimize runs: train tasks the docs are chosen on (``--val-limit``; None: none, the final docs kept)."""

    @property
    def drawn_with(self) -> int:
        """The seed tasks are drawn with (any seed draws a whole split: 0)."""
        return self.seed if self.seed is not None else 0


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
    prefill: bool = False
    """Whether each constrained reply's fixed opening was written into the embedded model's prompt (``--prefill``;
    kept in the definition only when on, so definitions made before it existed keep their keys)."""


@dataclass(frozen=True)
class Optimizer:
    """The optimizer of an optimize run and what its knobs were set to, as far as they act."""

    name: str
    mode: str
    """``online`` or ``offline``, resolved."""
    knobs: tuple[tuple[str, Any], ...] = ()
    """Its spec's part of the definition (:meth:`~otbench.optimizers.spec.OptimizerSpec.define`), sorted; lists
    are kept as tuples."""
    resolved: InitVar[OptimizerSpec | None] = None
    """Its spec where the maker has it at hand; None: found by its name."""
    spec: OptimizerSpec = field(init=False, compare=False, repr=False)
    """Its spec, resolved once, when the definition is made: everything a run asks of its optimizer is asked of
    it."""

    def __post_init__(self, resolved: OptimizerSpec | None) -> None:
        object.__setattr__(self, "spec", resolved if resolved is not None else spec_of(self.name))

    @property
    def part(self) -> dict[str, Any]:
        """The knobs as their spec reads them (tuples back to lists)."""
        return {name: list(value) if isinstance(value, tuple) else value for name, value in self.knobs}

    @functools.cached_property
    def chosen(self) -> Any:
        """The optimizer's knobs value this definition stands for, made once, when first asked for."""
        return self.spec.knobs_of(self.part, self.mode)


def frozen_part(part: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """An optimizer's definition part as :class:`Optimizer` keeps it: sorted items, lists as tuples."""
    return tuple(sorted((name, tuple(value) if isinstance(value, list) else value) for name, value in part.items()))


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
    """Evaluate runs: ``llm``, an agent framework's agent (:data:`TOOL_CALLING_AGENTS`), ``oracle`` or ``null``."""
    docs: str | None = None
    """Evaluate runs: docs given instead of the setting's (``gold``, a file, ``runs:/ID``); None: the setting's."""
    optimizer: Optimizer | None = None
    """Optimize runs: the optimizer."""
    extra: tuple[tuple[str, Any], ...] = field(default=())
    """What a run starts from beside its docs: ``coverage_from``, the run whose coverage pass it goes on from
    (:data:`COVERAGE_FROM`); empty for most runs."""
    options: EnvironmentOptions = field(init=False, compare=False, repr=False)
    """The environment to open for it, made once from what defines it (a run adds how it is carried out:
    :attr:`~otbench.envs.registry.EnvironmentOptions.sandbox_workers`)."""

    def __post_init__(self) -> None:
        own = {name: value for name, value in self.environment if name != "faults"}
        object.__setattr__(self, "options", EnvironmentOptions(self.env, self.setting, own=own,
                                                               faults=dict(self.environment).get("faults")))

    def to_json(self) -> dict[str, Any]:
        """The definition as canonical JSON data (the key hashes it)."""
        data = {part.name: getattr(self, part.name) for part in fields(self) if part.compare}
        data |= {"sample": asdict(self.sample), "models": asdict(self.models), "environment": dict(self.environment),
                 "extra": dict(self.extra)}
        if self.sample.val_limit is None:
            del data["sample"]["val_limit"]
        if not self.models.prefill:
            del data["models"]["prefill"]
        if self.optimizer is not None:
            data["optimizer"] = {"name": self.optimizer.name, "mode": self.optimizer.mode,
                                 "knobs": self.optimizer.part}
        return {"version": VERSION, **data}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunDefinition:
        """Read :meth:`to_json`'s data back (an earlier format: :func:`otbench.run.logged.definition_from_json`)."""
        if data.get("version") != VERSION:
            raise DataError(f"a run definition of format {data.get('version', 1)}, not {VERSION}: read it with "
                            "otbench.run.logged.definition_from_json")
        optimizer = data.get("optimizer")
        return cls(
            command=data["command"], env=data["env"], setting=data["setting"],
            environment=tuple(sorted(dict(data["environment"]).items())), sample=Sample(**data["sample"]),
            models=Models(**data["models"]), agent=data.get("agent"), docs=data.get("docs"),
            optimizer=None if optimizer is None else Optimizer(optimizer["name"], optimizer["mode"],
                                                               frozen_part(dict(optimizer.get("knobs", {})))),
            extra=tuple(sorted(dict(data.get("extra", {})).items())))

    @property
    def coverage_from(self) -> str | None:
        """The run (an MLflow run id, or ``ledger:KEY``) whose coverage pass this optimize run goes on from, if any."""
        found = dict(self.extra).get(COVERAGE_FROM)
        return str(found) if found else None

    def canonical(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"), default=str)

    @property
    def key(self) -> str:
        """A stable short hash of the definition: equal definitions, equal keys."""
        return hashlib.sha256(self.canonical().encode()).hexdigest()[:20]

    # -- what it needs to run ------------------------------------------------------------------------------------
    def lm_options(self, connection: LMOptions) -> LMOptions:
        """The LM options of its models, reached as ``connection`` says (servers, key, CPU threads, cache)."""
        models = self.models
        if models.agent is None:
            return connection
        weights = models.embedded or ""
        by_file = weights.endswith(".gguf") or "/" in weights
        editor = models.editor if models.editor not in (None, models.agent) else None
        return replace(connection, lm=models.agent, editor_lm=editor,
                       embedded_model=connection.embedded_model if by_file or not weights else weights,
                       gguf=Path(weights) if by_file else None,
                       grammar=connection.grammar if models.grammar is None else models.grammar,
                       prefill=models.prefill,
                       temperature=connection.temperature if models.temperature is None else models.temperature)

    @property
    def learning(self) -> str | None:
        """Optimize runs: the mode docs are learned in."""
        return self.optimizer.mode if self.optimizer is not None else None

    def sized(self, available: Mapping[str, int]) -> RunDefinition:
        """The definition as its environment's splits size it (``available``: tasks per split, ``test`` and, where
        the environment learns offline, ``train``, which optimize runs learn on): a limit at or above a split's tasks is all of them, given as their number;
        and where every sample holds its whole split the seed is left out (all tasks in their order, whatever the
        seed), unless an optimizer draws at random with it (its spec's ``seeded``) or a validation sample is
        drawn."""
        sample = self.sample

        def whole(limit: int | None, split: str) -> int | None:
            return available[split] if limit is None or limit >= available[split] else limit

        learned_on = "train" if self.command == "optimize" and "train" in available else "test"
        limit = whole(sample.limit, learned_on)
        test_limit = whole(sample.test_limit, "test") if sample.test_limit is not None else None
        every = limit == available[learned_on] and test_limit in (None, available["test"]) and not sample.val_limit
        seeded = self.optimizer is not None and self.optimizer.spec.seeded
        seed = None if every and not seeded else sample.seed
        return replace(self, sample=replace(sample, limit=limit, test_limit=test_limit, seed=seed))

    def tasks(self, env: Any, *, faults: bool) -> tuple[list[Any], list[Any] | None, list[Any] | None]:
        """An optimize run's tasks in the opened environment ``env``, drawn with its sample's seed: those learned on
        (the test split's online, the train split's offline); the ``--val-limit`` train tasks outside them the docs
        are chosen on (None without it; refused for an environment that learns online before the model loads); and
        those the learned docs are scored on in the test phase: a sample of the test split offline, the learned tasks
        again online under ``faults``, else none."""
        sample, offline = self.sample, env.learning == "offline"
        trainset = sample_tasks(env.tasks("train" if offline else "test"), sample.limit, sample.drawn_with)
        testset = (sample_tasks(env.tasks("test"), sample.test_limit, sample.drawn_with) if offline
                   else trainset if faults else None)
        if not sample.val_limit:
            return trainset, None, testset
        learned_on = {task_key(task) for task in trainset}
        rest = [task for task in env.tasks("train") if task_key(task) not in learned_on]
        if not rest:
            raise ConfigError(f"--val-limit: every train task of {env.name} is learned on (--limit {sample.limit}); "
                              "lower --limit to leave some for validation")
        return trainset, sample_tasks(rest, sample.val_limit, sample.drawn_with), testset

    # -- what runs log, derived ---------------------------------------------------------------------------------
    @property
    def method(self) -> str:
        """The comparison row the run is: ``base``, ``gold``, ``docs`` for an evaluation by the LLM agent or an agent
        framework's (a comparison of one agent's rows), and a reference agent's name (``oracle``, ``null``: they read no docs, so no docs row fits them); the optimizer's
        row label (``+TO (paper)``, ``+TO --no-facts``, ``+ET (probe)``) for an optimize run, with
        ``--val-limit N`` where the docs were chosen on a validation sample; `` --prefill`` where replies' openings
        were written for the model (the same docs, another row)."""
        if self.optimizer is None:
            if self.agent not in (None, "llm", *TOOL_CALLING_AGENTS):
                return self.agent
            label = "gold" if "gold" in (self.docs, self.setting) else docs_kind(self.docs)
        else:
            label = self.optimizer.spec.row_label(self.optimizer.part, self.optimizer.mode)
            label = f"{label} --val-limit {self.sample.val_limit}" if self.sample.val_limit else label
        return f"{label} --prefill" if self.models.prefill else label

    def tags(self, setting_name: str) -> dict[str, Any]:
        """The run's tags: what groups runs in MLflow (``setting_name``: the environment's name for its setting,
        which BrowseComp extends with its retrieval options), and the definition with its key."""
        common = {"command": self.command, "env": self.env, "setting": setting_name, KEY_TAG: self.key,
                  DEFINITION_TAG: self.canonical()}
        if self.optimizer is None:
            return {**common, "agent": self.agent, "lm": self.models.agent or "-", "optimizer": docs_kind(self.docs)}
        return {**common, "optimizer": self.optimizer.name, "mode": self.optimizer.mode, "lm": self.models.agent,
                "editor_lm": self.models.editor, "seed": seed_text(self.sample.seed)}

    def params(self, setting_name: str, *, learning: str, swept: bool = False) -> dict[str, Any]:
        """The run's MLflow params: what sets it apart from the runs it is compared with, and no more.

        MLflow's compare page plots the first three params by name whose values differ between the runs it shows,
        one a run lacks counting as a difference: defaults that only one optimizer's runs logged would push what
        tells the rows of a comparison apart (method, optimizer, setting) off that plot. So a run logs its
        optimizer's knobs as its spec says (:meth:`~otbench.optimizers.spec.OptimizerSpec.params`: those that
        depart from their defaults, every knob a sweep's trial draws, ``swept``), its mode where it is not the
        environment's ``learning``, and nothing unset. A whole-split sample logs ``all`` as its seed.
        """
        models = self.models
        shared: dict[str, Any] = {**{k: v for k, v in self.environment if v is not None},
                                  "seed": seed_text(self.sample.seed)}
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
        params |= optimizer.spec.params(optimizer.part, optimizer.mode, swept=swept)
        params[COVERAGE_FROM] = self.coverage_from
        return {name: value for name, value in params.items() if value is not None}

    def run_name(self, tasks: int, model_label: str, setting_name: str) -> str:
        """``OPTIMIZER-VARIANT-bfcl-names_only-n10-qwen-1.5b`` (the time is added when the run starts):
        ``model_label`` names the agent's model (joined with the editor's when that differs)."""
        parts: tuple[str | None, ...]
        if self.optimizer is None:
            docs = {None: None, "gold": "gold-docs"}.get(self.docs, "learned-docs")
            parts = ("evaluate", self.env, setting_name, self.agent, docs, f"n{tasks}",
                     model_label if self.models.agent else None)
        else:
            variant = self.optimizer.part.get("variant")
            validated = f"val{self.sample.val_limit}" if self.sample.val_limit else None
            parts = (self.optimizer.name, variant if variant != "improved" else None, self.env, setting_name,
                     f"n{tasks}", validated, model_label)
        return "-".join(str(part) for part in parts if part)


def same_run(found: RunDefinition, wanted: RunDefinition) -> bool:
    """Whether ``found`` (a logged run's definition) is the run ``wanted`` defines: equal keys, or equal but for
    the seed of a sample that holds its whole split (``wanted`` says so by having none, and ``found`` was judged on
    as many tasks, so it drew the same ones)."""
    if found.key == wanted.key:
        return True
    whole, sample = wanted.sample, found.sample
    if whole.seed is not None or sample.seed is None:
        return False
    if (sample.limit, sample.test_limit, sample.val_limit) != (whole.limit, whole.test_limit, whole.val_limit):
        return False
    return replace(found, sample=replace(sample, seed=None)).key == wanted.key


TOOL_CALLING_AGENTS = ("openai-agents",)
"""Agents of other frameworks an evaluation runs (:mod:`otbench.modules.agents_sdk`): like the LLM agent they read
the docs and call a model, so their rows are named by the docs they read."""


def split_sizes(env: Any) -> dict[str, int]:
    """Tasks per split of an opened environment, as :meth:`RunDefinition.sized` takes them."""
    sizes = {"test": len(env.tasks("test"))}
    if env.learning == "offline":
        sizes["train"] = len(env.tasks("train"))
    return sizes


def seed_text(seed: int | None) -> str:
    """A sample's seed as runs log it: ``all`` for a whole-split sample."""
    return "all" if seed is None else str(seed)


def _embedded_params(models: Models) -> dict[str, Any]:
    weights = models.embedded or ""
    by_file = weights.endswith(".gguf") or "/" in weights
    return {"gguf" if by_file else "embedded_model": weights, "no_grammar": not models.grammar,
            **({"prefill": True} if models.prefill else {})}


def docs_kind(docs: str | None) -> str:
    """The docs an evaluation scores, as its ``optimizer`` tag says: base (the setting's own), gold, or docs."""
    return {None: "base", "gold": "gold"}.get(docs, "docs")


def environment_options(options: EnvironmentOptions) -> tuple[tuple[str, Any], ...]:
    own = {name: as_plain(value) for name, value in options.own.items() if name not in HOW_IT_RUNS}
    return tuple(sorted({**own, "faults": options.faults}.items()))


def as_plain(value: Any) -> Any:
    """A value as JSON keeps it (paths as text)."""
    return value if isinstance(value, (str, int, float, bool)) or value is None else str(value)


def models_of(lm: LMOptions, *, editor: bool) -> Models:
    """The models ``lm`` names (``editor``: an optimize run's, which also calls the editor's)."""
    editor_model = (lm.editor_lm or lm.lm) if editor else None
    uses_embedded = EMBEDDED in (lm.lm, editor_model)
    weights = (str(lm.gguf) if lm.gguf else lm.embedded_model) if uses_embedded else None
    return Models(lm.lm, editor_model, weights, lm.grammar if uses_embedded else None, lm.temperature,
                  prefill=uses_embedded and lm.grammar and lm.prefill)


def evaluation(environment: EnvironmentOptions, *, agent: str, docs: str | None, limit: int | None, seed: int,
               lm: LMOptions) -> RunDefinition:
    """The definition of an evaluation of ``agent`` with ``docs`` on ``limit`` tasks of sample ``seed`` (None: every
    task; ``environment`` resolved)."""
    models = models_of(lm, editor=False) if agent in ("llm", *TOOL_CALLING_AGENTS) else Models(None)
    return RunDefinition("evaluate", environment.env, str(environment.setting), environment_options(environment),
                         Sample(limit, seed), models, agent=agent, docs=docs)


def optimization(environment: EnvironmentOptions, *, optimizer: OptimizerSpec, knobs: Any, mode: str, limit: int,
                 seed: int, test_limit: int, lm: LMOptions, val_limit: int | None = None,
                 coverage_from: str | None = None) -> RunDefinition:
    """The definition of an optimize run (``environment`` resolved, ``mode`` too): the knobs as far as they act in
    ``mode``, as the optimizer's spec defines them (``knobs`` None: its declared defaults); ``coverage_from``: the
    run whose coverage pass it goes on from."""
    chosen = knobs if knobs is not None else optimizer.knobs_from({})
    optimizer.check(chosen)
    defined = Optimizer(optimizer.name, mode, frozen_part(optimizer.define(chosen, mode)), optimizer)
    sample = Sample(limit, seed, test_limit if mode == "offline" else None, val_limit if mode == "offline" else None)
    return RunDefinition("optimize", environment.env, str(environment.setting), environment_options(environment),
                         sample, models_of(lm, editor=True), optimizer=defined,
                         extra=((COVERAGE_FROM, coverage_from),) if coverage_from else ())


def params_as_logged(params: Mapping[str, Any]) -> dict[str, str]:
    """Params as MLflow keeps them (text)."""
    return {name: as_logged(value) for name, value in params.items()}
