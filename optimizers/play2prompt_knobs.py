"""Play2Prompt's budget knobs, as a value: what its spec (:mod:`otbench.optimizers.play2prompt_spec`) turns into flags
and its teleprompter (:mod:`otbench.optimizers.play2prompt`) runs with. No DSPy here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from otbench.optimizers.knobs import knob
from otbench.optimizers.spec import ProbingKnobs


@dataclass(frozen=True)
class Play2PromptKnobs(ProbingKnobs):
    """Play2Prompt's budget; the defaults are the smallest that still keeps a beam of docs (command line,
    sweeps and checks derive from these declarations: :mod:`otbench.optimizers.knobs`), beside the choices every
    optimizer shares (:class:`~otbench.optimizers.spec.ProbingKnobs`)."""

    flag_prefix: ClassVar[str] = "p2p"
    samples: int = knob(3, "tool-play samples per tool", minimum=1, sweep=(1, 4))
    retries: int = knob(2, "retries after a failed call", minimum=0, sweep=(0, 3))
    top_k: int = knob(3, "examples kept per tool", minimum=1, sweep=(1, 4))
    beam_width: int = knob(2, "docs kept per round", minimum=1, sweep=(1, 3))
    expansions: int = knob(2, "rewrites per beam doc", minimum=1, sweep=(1, 3))
    iterations: int = knob(1, "beam rounds", minimum=1, sweep=(1, 3))
