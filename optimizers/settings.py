"""What each optimizer lets a user set, declared apart from the optimizers themselves.

The commands build their options (``--variant``, ``--no-per-tool``, ``--p2p-samples``...), check
them and pick sweep spaces from these declarations alone, so ``--help`` and a refused option
answer without importing DSPy: the optimizers' modules import DSPy, this one only dataclasses.
Each optimizer takes its defaults and bounds from here (:mod:`optimizers.knobs`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from optimizers.knobs import MODES, knob


def _knob(help_text: str, modes: tuple[str, ...] = MODES, *, always_logged: bool = False) -> Any:
    return field(default=False, metadata={"help": help_text, "modes": modes, "always_logged": always_logged})


@dataclass(frozen=True)
class Improvements:
    """What ToolObserver adds to the paper's protocol; each field is one ablation.

    Offline mode (one toolset shared by all tasks) uses ``facts`` (per-tool usage counts: sources of
    results, outcome per situation, compared with the other tools), ``per_tool`` (one editor call
    per tool from those counts instead of batch analyses and a merge), ``cite_facts``, ``drop_contradicted``,
    ``spread_calls`` (exploration that calls every tool in turn) and ``replay_calls`` (each call
    repeated on the other tools); the other
    knobs are about hidden parameter schemas and per-task edits, which only online mode has.
    """

    probe: bool = _knob("before the first attempt, call each tool whose parameters are not shown once with no "
                        "arguments: the tool's error names its required parameters", modes=("online",))
    facts: bool = _knob("give the editor facts read by code from the tools' answers (parameters, accepted types, "
                        "what worked and failed; offline: each tool's result sources and outcome per situation "
                        "against the other tools) instead of leaving it to infer them from transcripts")
    learned_schema: bool = _knob("where the setting shows no parameter schema, show the agent the one the facts "
                                 "support", modes=("online",))
    per_tool: bool = _knob("one editor call per tool with only that tool's evidence, answered as a structured doc "
                           "(description and each parameter's meaning); asked again only on new evidence")
    accept_check: bool = _knob("undo an edit when the attempt with it has more failed calls than the one before",
                               modes=("online",))
    cite_facts: bool = _knob("offline: open each tool's learned description with where it was clearly the best or "
                             "the worst tool and close it with where its results come from, stated by code, so "
                             "they reach the agent even when the editor leaves them out",
                             modes=("offline",))
    drop_contradicted: bool = _knob("offline: drop each sentence of the editor's description that ties its tool to "
                                    "a situation where another tool did better in the usage counts, so the agent "
                                    "does not read prose that contradicts the facts",
                                    modes=("offline",), always_logged=True)
    spread_calls: bool = _knob("offline: while exploring, send each call the agent makes to a tool of the set to "
                               "the next tool in turn (with the agent's arguments), so the usage facts cover every "
                               "tool in every situation instead of the one tool a small agent keeps calling",
                               modes=("offline",))
    replay_calls: bool = _knob("offline: after exploring, repeat each call that worked on every other tool of the "
                               "set with the same arguments, so the usage facts compare the tools on the very "
                               "positions or queries each met, not only on the few the agent sent each",
                               modes=("offline",), always_logged=True)

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def help(cls, name: str) -> str:
        return next(str(f.metadata["help"]) for f in fields(cls) if f.name == name)

    @classmethod
    def always_logged(cls) -> tuple[str, ...]:
        """Improvements added to the improved variant after runs of it were logged: a run logs their value
        wherever they act, so an older run, which lacks the parameter, reads as one without them."""
        return tuple(f.name for f in fields(cls) if f.metadata["always_logged"])

    @classmethod
    def acting_in(cls, mode: str) -> tuple[str, ...]:
        """The improvements that change what a run in ``mode`` does: the ones an ablation of that mode switches off."""
        return tuple(f.name for f in fields(cls) if mode in f.metadata["modes"])


@dataclass(frozen=True)
class ToolObserverKnobs:
    """ToolObserver's budget knobs (command line, sweeps and checks derive from them: :mod:`optimizers.knobs`)."""

    flag_prefix: ClassVar[str] = ""
    iterations: int | None = knob(None, "max editor iterations (default: 10 online, 3 offline)", minimum=1,
                                  sweep={"online": (1, 10), "offline": (1, 5)})
    batch_size: int = knob(10, "offline mini-batch size", minimum=1, sweep={"offline": (5, 20)}, modes=("offline",))


PAPER = Improvements()
IMPROVED = Improvements(probe=True, facts=True, learned_schema=True, per_tool=True, accept_check=True, cite_facts=True,
                        drop_contradicted=True, spread_calls=True, replay_calls=True)
VARIANTS = {"paper": PAPER, "improved": IMPROVED}


@dataclass(frozen=True)
class Play2PromptKnobs:
    """Play2Prompt's budget; the defaults are the smallest that still keeps a beam of docs (command line,
    sweeps and checks derive from these declarations: :mod:`optimizers.knobs`)."""

    flag_prefix: ClassVar[str] = "p2p"
    samples: int = knob(3, "tool-play samples per tool", minimum=1, sweep=(1, 4))
    retries: int = knob(2, "retries after a failed call", minimum=0, sweep=(0, 3))
    top_k: int = knob(3, "examples kept per tool", minimum=1, sweep=(1, 4))
    beam_width: int = knob(2, "docs kept per round", minimum=1, sweep=(1, 3))
    expansions: int = knob(2, "rewrites per beam doc", minimum=1, sweep=(1, 3))
    iterations: int = knob(1, "beam rounds", minimum=1, sweep=(1, 3))


@dataclass(frozen=True)
class GEPAKnobs:
    """GEPA's budget (command line, sweeps and checks derive from it: :mod:`optimizers.knobs`)."""

    flag_prefix: ClassVar[str] = "gepa"
    budget: int = knob(8, "attempts GEPA may spend searching, per task searched over (it starts no "
                              "iteration once they are spent)", minimum=2, sweep=(4, 16))
    minibatch: int = knob(3, "tasks per reflection (offline; online there is one)", minimum=1, sweep=(1, 5),
                          modes=("offline",))
