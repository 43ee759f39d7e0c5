"""GEPA's budget knobs, as a value: what its spec (:mod:`otbench.optimizers.gepa_spec`) turns into flags and its
teleprompter (:mod:`otbench.optimizers.gepa`) runs with. No DSPy here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from otbench.optimizers.knobs import knob


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
