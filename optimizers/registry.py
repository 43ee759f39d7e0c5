"""Every documentation optimizer the commands offer, declared once.

A spec names the optimizer, its row label in comparisons (the paper's ``+TO``, ``+P2P``, ``+ET``),
its knobs (a dataclass, see :mod:`optimizers.knobs`), the extra rows ``compare`` shows for it, and
how the commands build it from their options and LMs. The commands derive their ``--optimizer``
choices, knob flags, sweep spaces and comparison rows from :data:`OPTIMIZERS`: a new optimizer is
its own module plus one entry here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from modules.agent import FunctionCallingAgent
from optimizers import knobs as knob_rules
from optimizers.base import DocOptimizer
from optimizers.easytool import EasyTool
from optimizers.gepa import GEPA, GEPAKnobs
from optimizers.play2prompt import Play2Prompt, Play2PromptKnobs
from optimizers.toolobserver import VARIANTS, Improvements, ToolObserver, ToolObserverKnobs
from otbench.envs.base import Environment
from otbench.errors import ConfigError

Build = Callable[[Environment, Any, Mapping[str, Any], Any, dict[str, Any]], DocOptimizer]
"""``build(env, knob values, LMs by phase, the command's options, common settings)``; ``common`` holds what
every optimizer takes (``env`` among them, tracker, threads, progress, probe)."""


@dataclass(frozen=True)
class OptimizerSpec:
    """One optimizer as the commands see it.

    ``rows`` are ``compare``'s rows for it: a label suffix and the extra ``optimize`` options of each.
    ``offers_probe`` says whether the shared ``--probe`` option reaches it (ToolObserver has its own).
    """

    name: str
    label: str
    build: Build
    knobs: type[knob_rules.Knobs] | None = None
    rows: tuple[tuple[str, tuple[str, ...]], ...] = (("", ()),)
    offers_probe: bool = True

    def knob_values(self, options: Any) -> Any:
        return knob_rules.from_arguments(self.knobs, options) if self.knobs is not None else None


def improvements_of(options: Any) -> Improvements:
    """ToolObserver's variant with any ``--[no-]KNOB`` the user gave applied on top."""
    if options.variant not in VARIANTS:
        raise ConfigError(f"unknown variant {options.variant!r}; choose from {', '.join(VARIANTS)}")
    chosen = {name: getattr(options, name) for name in Improvements.names() if getattr(options, name, None) is not None}
    return dataclasses.replace(VARIANTS[options.variant], **chosen)


def _toolobserver(env: Environment, knobs: Any, lms: Mapping[str, Any], options: Any,
                  common: dict[str, Any]) -> DocOptimizer:
    return ToolObserver(editor_lm=lms["editor"], mode=options.mode, max_iterations=knobs.iterations,
                        batch_size=knobs.batch_size, improvements=improvements_of(options),
                        oracle_feedback=options.oracle_feedback, **common)


def _play2prompt(env: Environment, knobs: Any, lms: Mapping[str, Any], options: Any,
                 common: dict[str, Any]) -> DocOptimizer:
    """Play and scoring before any task are exploration: the scoring agent is charged to that phase."""
    scorer = FunctionCallingAgent(instructions=env.agent_instructions)
    scorer.lm = lms["agent"].for_phase("exploration")
    return Play2Prompt(explorer_lm=lms["exploration"], editor_lm=lms["editor"], scorer=scorer,
                       initial_samples=knobs.samples, retries=knobs.retries, top_k=knobs.top_k,
                       beam_width=knobs.beam_width, expansions=knobs.expansions, iterations=knobs.iterations, **common)


def _gepa(env: Environment, knobs: Any, lms: Mapping[str, Any], options: Any, common: dict[str, Any]) -> DocOptimizer:
    """Attempts made while searching are exploration, as Play2Prompt's scoring runs are."""
    scorer = FunctionCallingAgent(instructions=env.agent_instructions)
    scorer.lm = lms["agent"].for_phase("exploration")
    return GEPA(reflection_lm=lms["editor"], scorer=scorer, budget=knobs.budget, minibatch=knobs.minibatch,
                seed=options.seed, **common)


def _easytool(env: Environment, knobs: Any, lms: Mapping[str, Any], options: Any,
              common: dict[str, Any]) -> DocOptimizer:
    return EasyTool(editor_lm=lms["editor"], **common)


OPTIMIZERS: dict[str, OptimizerSpec] = {
    "toolobserver": OptimizerSpec("toolobserver", "+TO", _toolobserver, ToolObserverKnobs,
                                  rows=((" (paper)", ("--variant", "paper")), ("", ())), offers_probe=False),
    "play2prompt": OptimizerSpec("play2prompt", "+P2P", _play2prompt, Play2PromptKnobs),
    "easytool": OptimizerSpec("easytool", "+ET", _easytool),
    "gepa": OptimizerSpec("gepa", "+GEPA", _gepa, GEPAKnobs),
}
