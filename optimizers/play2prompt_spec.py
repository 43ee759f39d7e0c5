"""Play2Prompt as the commands see it: its budget knobs and how it is built (no DSPy here:
:mod:`otbench.optimizers.spec`; the teleprompter is :class:`otbench.optimizers.play2prompt.Play2Prompt`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from otbench.optimizers.knobs import knob
from otbench.optimizers.spec import Built, OptimizerSpec

if TYPE_CHECKING:
    from otbench.optimizers.base import DocOptimizer


@dataclass(frozen=True)
class Play2PromptKnobs:
    """Play2Prompt's budget; the defaults are the smallest that still keeps a beam of docs (command line,
    sweeps and checks derive from these declarations: :mod:`otbench.optimizers.knobs`)."""

    flag_prefix: ClassVar[str] = "p2p"
    samples: int = knob(3, "tool-play samples per tool", minimum=1, sweep=(1, 4))
    retries: int = knob(2, "retries after a failed call", minimum=0, sweep=(0, 3))
    top_k: int = knob(3, "examples kept per tool", minimum=1, sweep=(1, 4))
    beam_width: int = knob(2, "docs kept per round", minimum=1, sweep=(1, 3))
    expansions: int = knob(2, "rewrites per beam doc", minimum=1, sweep=(1, 3))
    iterations: int = knob(1, "beam rounds", minimum=1, sweep=(1, 3))
    probe: bool = False
    """The shared probe (:data:`otbench.optimizers.spec.PROBE_HELP`)."""
    experiment: bool = False
    """The shared experiment (:data:`otbench.optimizers.spec.EXPERIMENT_HELP`)."""
    coverage: bool = False
    """The shared coverage pass (:data:`otbench.optimizers.spec.COVERAGE_HELP`)."""
    worded_errors: bool = True
    """The shared reading of errors in words (:data:`otbench.optimizers.spec.WORDED_ERRORS_HELP`)."""
    request_scales: bool = False
    """The shared reading of calls against their requests' scales (:data:`otbench.optimizers.spec.REQUEST_SCALES_HELP`)."""
    gate: bool = True
    """The shared gate (:data:`otbench.optimizers.spec.GATE_HELP`)."""
    learn_tokens: int | None = None
    """The shared learning budget in tokens (:mod:`otbench.optimizers.budget`); None, no budget."""


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
                     teleprompter="otbench.optimizers.play2prompt.Play2Prompt", offers_probe=True)
