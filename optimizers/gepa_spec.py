"""GEPA as the commands see it: its budget knobs and how it is built (no DSPy here:
:mod:`otbench.optimizers.spec`; the teleprompter is :class:`otbench.optimizers.gepa.GEPA`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from otbench.optimizers.knobs import knob
from otbench.optimizers.spec import Built, OptimizerSpec

if TYPE_CHECKING:
    from otbench.optimizers.base import DocOptimizer


@dataclass(frozen=True)
class GEPAKnobs:
    """GEPA's budget (command line, sweeps and checks derive from it: :mod:`otbench.optimizers.knobs`)."""

    flag_prefix: ClassVar[str] = "gepa"
    budget: int = knob(8, "attempts GEPA may spend searching, per task searched over (it starts no "
                              "iteration once they are spent)", minimum=2, sweep=(4, 16))
    minibatch: int = knob(3, "tasks per reflection (offline; online there is one)", minimum=1, sweep=(1, 5),
                          modes=("offline",))
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
    """Attempts made while searching are exploration, as Play2Prompt's scoring runs are."""
    from otbench.modules.agent import FunctionCallingAgent
    from otbench.optimizers.gepa import GEPA

    scorer = FunctionCallingAgent(instructions=built.env.agent_instructions)
    scorer.lm = lms["agent"].for_phase("exploration")
    return GEPA(reflection_lm=lms["editor"], scorer=scorer, budget=knobs.budget, minibatch=knobs.minibatch,
                seed=built.seed, probe=knobs.probe, experiment=knobs.experiment, **built.common)


SPEC = OptimizerSpec("gepa", "+GEPA", GEPAKnobs, _build,
                     teleprompter="otbench.optimizers.gepa.GEPA", offers_probe=True, seeded=True)
