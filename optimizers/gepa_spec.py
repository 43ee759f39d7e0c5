"""GEPA as the commands see it: its flags, from its budget knobs
(:mod:`otbench.optimizers.gepa_knobs`), and how it is built (no DSPy here:
:mod:`otbench.optimizers.spec`; the teleprompter is :class:`otbench.optimizers.gepa.GEPA`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from otbench.optimizers.gepa_knobs import GEPAKnobs
from otbench.optimizers.spec import Built, OptimizerSpec

if TYPE_CHECKING:
    from otbench.optimizers.base import DocOptimizer


def _build(knobs: Any, lms: Mapping[str, Any], built: Built) -> DocOptimizer:
    """Attempts made while searching are exploration, as Play2Prompt's scoring runs are."""
    from otbench.modules.agent import FunctionCallingAgent
    from otbench.optimizers.gepa import GEPA

    scorer = FunctionCallingAgent(instructions=built.env.agent_instructions)
    scorer.lm = lms["agent"].for_phase("exploration")
    return GEPA(reflection_lm=lms["editor"], scorer=scorer, budget=knobs.budget, minibatch=knobs.minibatch,
                seed=built.seed, probe=knobs.probe, experiment=knobs.experiment, **built.common)


SPEC = OptimizerSpec("gepa", "+GEPA", GEPAKnobs, _build,
                     teleprompter="otbench.optimizers.gepa.GEPA", seeded=True)
