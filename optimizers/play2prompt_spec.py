"""Play2Prompt as the commands see it: its flags, from its budget knobs
(:mod:`otbench.optimizers.play2prompt_knobs`), and how it is built (no DSPy here:
:mod:`otbench.optimizers.spec`; the teleprompter is :class:`otbench.optimizers.play2prompt.Play2Prompt`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from otbench.optimizers.play2prompt_knobs import Play2PromptKnobs
from otbench.optimizers.spec import Built, OptimizerSpec

if TYPE_CHECKING:
    from otbench.optimizers.base import DocOptimizer


def _build(knobs: Any, lms: Mapping[str, Any], built: Built) -> DocOptimizer:
    """Play and scoring before any task are exploration: the scoring agent is charged to that phase."""
    from otbench.modules.agent import FunctionCallingAgent
    from otbench.optimizers.play2prompt import Play2Prompt

    scorer = FunctionCallingAgent(instructions=built.env.agent_instructions)
    scorer.lm = lms["agent"].for_phase("exploration")
    return Play2Prompt(explorer_lm=lms["exploration"], editor_lm=lms["editor"], scorer=scorer,
                       initial_samples=knobs.samples, retries=knobs.retries, top_k=knobs.top_k,
                       beam_width=knobs.beam_width, expansions=knobs.expansions, iterations=knobs.iterations,
                       probe=knobs.probe, experiment=knobs.experiment, **built.common)


SPEC = OptimizerSpec("play2prompt", "+P2P", Play2PromptKnobs, _build,
                     teleprompter="otbench.optimizers.play2prompt.Play2Prompt")
