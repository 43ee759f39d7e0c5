"""GEPA's budget knobs, as a value: what its spec (:mod:`otbench.optimizers.gepa_spec`) turns into flags and its
teleprompter (:mod:`otbench.optimizers.gepa`) runs with. No DSPy here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from otbench.optimizers.knobs import knob
from otbench.optimizers.spec import ProbingKnobs


@dataclass(frozen=True)
class GEPAKnobs(ProbingKnobs):
    """GEPA's budget (command line, sweeps and checks derive from it: :mod:`otbench.optimizers.knobs`), beside the
    choices every optimizer shares (:class:`~otbench.optimizers.spec.ProbingKnobs`)."""

    flag_prefix: ClassVar[str] = "gepa"
    budget: int = knob(8, "attempts GEPA may spend searching, per task searched over (it starts no "
                              "iteration once they are spent)", minimum=2, sweep=(4, 16))
    minibatch: int = knob(3, "tasks per reflection (offline; online there is one)", minimum=1, sweep=(1, 5),
                          modes=("offline",))
