"""Every documentation optimizer the commands offer, declared once.

A spec names the optimizer, its row label in comparisons (the paper's ``+TO``, ``+P2P``, ``+ET``),
its knobs (a dataclass, see :mod:`otbench.optimizers.knobs`), the extra rows ``compare`` shows for it, and
how the commands build it from their choices and LMs. The commands derive their ``--optimizer``
choices, knob flags, sweep spaces and comparison rows from :data:`OPTIMIZERS`: a new optimizer is
its own module, its knobs in :mod:`otbench.optimizers.settings`, and one entry here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from otbench.errors import ConfigError
from otbench.optimizers import knobs as knob_rules
from otbench.optimizers.settings import IMPROVED, VARIANTS, GEPAKnobs, Improvements, Play2PromptKnobs, ToolObserverKnobs

if TYPE_CHECKING:  # each optimizer is imported when it is built: its module loads DSPy, --help need not
    from otbench.envs.base import Environment
    from otbench.optimizers.base import DocOptimizer


@dataclass(frozen=True)
class RunChoices:
    """What a run chose besides the knobs, for the optimizers that read it."""

    mode: str | None = None
    """``online`` or ``offline`` (None: as the environment learns)."""
    seed: int = 0
    oracle_feedback: bool = False
    improvements: Improvements = IMPROVED
    """ToolObserver's variant with any improvement switched on or off (:func:`improvements_of`)."""


Build = Callable[["Environment", Any, Mapping[str, Any], RunChoices, dict[str, Any]], "DocOptimizer"]
"""``build(env, knob values, LMs by phase, the run's choices, common settings)``; ``common`` holds what
every optimizer takes (``env`` among them, tracker, threads, progress, probe)."""


@dataclass(frozen=True)
class OptimizerSpec:
    """One optimizer as the commands see it.

    ``rows`` are ``compare``'s rows for it: the ``optimize`` options each sets, by command-line name
    (``{"variant": "paper"}``); each row is labelled by :meth:`row_label`.
    ``offers_probe`` says whether the shared ``--probe`` option reaches it (ToolObserver has its own).
    """

    name: str
    label: str
    build: Build
    knobs: type[knob_rules.Knobs] | None = None
    rows: tuple[Mapping[str, Any], ...] = ({},)
    offers_probe: bool = True

    def row_label(self, variant: str, switches: Mapping[str, bool | None]) -> str:
        """The comparison row a run of this optimizer is, as ``compare`` labels it: ``+TO``; ``+TO (paper)`` for a
        variant other than ToolObserver's default; ``+TO --no-facts`` for an improvement switched away from its
        variant (an ablation); ``+P2P (probe)`` with the shared probing."""
        if self.name != "toolobserver":
            return self.label + (" (probe)" if self.offers_probe and switches.get("probe") else "")
        label = self.label + (f" ({variant})" if variant != "improved" else "")
        chosen = improvements_of(variant, switches)
        for name in Improvements.names():
            if getattr(chosen, name) != getattr(VARIANTS[variant], name):
                label += f" --{'' if getattr(chosen, name) else 'no-'}{name.replace('_', '-')}"
        return label

    def ablations(self, mode: str) -> tuple[dict[str, bool], ...]:
        """``compare --ablations``' rows for it: each improvement of ToolObserver's default variant that acts in
        ``mode``, switched off one at a time; none for an optimizer without improvements."""
        if self.name != "toolobserver":
            return ()
        return tuple({name: False} for name in Improvements.acting_in(mode) if getattr(IMPROVED, name))

    def knob_values(self, values: Mapping[str, Any]) -> Any:
        """Its knobs as ``values`` set them by option name (declared defaults for those left out), checked;
        None for an optimizer without knobs."""
        return knob_rules.from_values(self.knobs, values) if self.knobs is not None else None


def improvements_of(variant: str, switches: Mapping[str, bool | None]) -> Improvements:
    """ToolObserver's variant with the improvements ``switches`` turns on or off (``--[no-]KNOB``) on top."""
    if variant not in VARIANTS:
        raise ConfigError(f"unknown variant {variant!r}; choose from {', '.join(VARIANTS)}")
    chosen = {name: bool(switches[name]) for name in Improvements.names() if switches.get(name) is not None}
    return dataclasses.replace(VARIANTS[variant], **chosen)


def _toolobserver(env: Environment, knobs: Any, lms: Mapping[str, Any], choices: RunChoices,
                  common: dict[str, Any]) -> DocOptimizer:
    from otbench.optimizers.toolobserver import ToolObserver

    return ToolObserver(editor_lm=lms["editor"], mode=choices.mode, max_iterations=knobs.iterations,
                        batch_size=knobs.batch_size, improvements=choices.improvements,
                        oracle_feedback=choices.oracle_feedback, **common)


def _play2prompt(env: Environment, knobs: Any, lms: Mapping[str, Any], choices: RunChoices,
                 common: dict[str, Any]) -> DocOptimizer:
    """Play and scoring before any task are exploration: the scoring agent is charged to that phase."""
    from otbench.modules.agent import FunctionCallingAgent
    from otbench.optimizers.play2prompt import Play2Prompt

    scorer = FunctionCallingAgent(instructions=env.agent_instructions)
    scorer.lm = lms["agent"].for_phase("exploration")
    return Play2Prompt(explorer_lm=lms["exploration"], editor_lm=lms["editor"], scorer=scorer,
                       initial_samples=knobs.samples, retries=knobs.retries, top_k=knobs.top_k,
                       beam_width=knobs.beam_width, expansions=knobs.expansions, iterations=knobs.iterations, **common)


def _gepa(env: Environment, knobs: Any, lms: Mapping[str, Any], choices: RunChoices,
          common: dict[str, Any]) -> DocOptimizer:
    """Attempts made while searching are exploration, as Play2Prompt's scoring runs are."""
    from otbench.modules.agent import FunctionCallingAgent
    from otbench.optimizers.gepa import GEPA

    scorer = FunctionCallingAgent(instructions=env.agent_instructions)
    scorer.lm = lms["agent"].for_phase("exploration")
    return GEPA(reflection_lm=lms["editor"], scorer=scorer, budget=knobs.budget, minibatch=knobs.minibatch,
                seed=choices.seed, **common)


def _easytool(env: Environment, knobs: Any, lms: Mapping[str, Any], choices: RunChoices,
              common: dict[str, Any]) -> DocOptimizer:
    from otbench.optimizers.easytool import EasyTool

    return EasyTool(editor_lm=lms["editor"], **common)


OPTIMIZERS: dict[str, OptimizerSpec] = {
    "toolobserver": OptimizerSpec("toolobserver", "+TO", _toolobserver, ToolObserverKnobs,
                                  rows=({"variant": "paper"}, {}), offers_probe=False),
    "play2prompt": OptimizerSpec("play2prompt", "+P2P", _play2prompt, Play2PromptKnobs),
    "easytool": OptimizerSpec("easytool", "+ET", _easytool),
    "gepa": OptimizerSpec("gepa", "+GEPA", _gepa, GEPAKnobs),
}
