"""The toolkit families as :class:`Toolkit` values: tools, generated requests, metric and state (:func:`load`)."""

from __future__ import annotations

import importlib
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import dspy

from otbench.envs.functions import FunctionEnvironment, Metric, StateFactory
from otbench.envs.toolkits import FAMILIES
from otbench.envs.toolkits.generation import fingerprint
from otbench.errors import ConfigError


@dataclass(frozen=True)
class Toolkit:
    """One family: its tools, its generated train and test requests, its metric and, if stateful, its state."""

    name: str
    """The family's name, also the id of its toolset (learned docs are filed under it)."""
    tools: tuple[Callable[..., Any], ...]
    """The functions, under their true names and with their true docstrings."""
    train: tuple[dspy.Example, ...]
    """Requests an optimizer learns from: ``question``, ``answer``, gold ``calls`` (and the family's fields)."""
    test: tuple[dspy.Example, ...]
    """Requests the learned docs are scored on; phrased, and valued, unlike the train ones."""
    metric: Metric
    """``(example, trajectory) -> dspy.Prediction(score, feedback)``."""
    state: StateFactory | None
    """The state stateful tools run against (inventory's store), None for the others."""
    expected_fingerprint: str
    """The digest the generated requests must have (a test checks it)."""

    @property
    def fingerprint(self) -> str:
        """The digest of the requests as generated here."""
        return fingerprint({"train": list(self.train), "test": list(self.test)})

    def environment(self, presentation: str = "names_only", *, seed: int = 0, **options: Any) -> FunctionEnvironment:
        """The family as opaque tools ``function_1..N`` (order shuffled by ``seed``) under ``presentation``
        (``names_only``, ``names_params`` or ``gold``); ``options`` are :class:`FunctionEnvironment`'s."""
        return FunctionEnvironment.opaque(self.tools, self.train, self.metric, test_examples=self.test,
                                          presentation=presentation, seed=seed, state=self.state,
                                          name=f"toolkit-{self.name}", toolset=self.name, **options)


def load(name: str) -> Toolkit:
    """The family called ``name`` (one of :data:`FAMILIES`)."""
    if name not in FAMILIES:
        raise ConfigError(f"unknown toolkit {name!r}; choose from {', '.join(FAMILIES)}")
    module: types.ModuleType = importlib.import_module(f"otbench.envs.toolkits.{name}")
    splits = module.examples()
    return Toolkit(name, tuple(module.TOOLS), tuple(splits["train"]), tuple(splits["test"]), module.metric,
                   getattr(module, "state", None), module.FINGERPRINT)
