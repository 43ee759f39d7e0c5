"""ToolObserver's knobs, variants and improvements, as values: what its spec (:mod:`otbench.optimizers.toolobserver.spec`)
turns into flags and rows, and its teleprompter (:mod:`otbench.optimizers.toolobserver.teleprompter`) runs with. No DSPy here."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from otbench.errors import ConfigError
from otbench.optimizers.knobs import MODES, knob
from otbench.optimizers.spec import SharedKnobs


def _knob(help_text: str, modes: tuple[str, ...] = MODES, *, always_logged: bool = False,
          opt_in: bool = False) -> Any:
    """An improvement: off by default (the paper's protocol), with its help and the modes it acts in; ``opt_in``: off
    in the improved variant too until the runs the results rest on are made again with it (switching it on there
    changes the definition of every run of the variant where it acts)."""
    return field(default=False, metadata={"help": help_text, "modes": modes, "always_logged": always_logged,
                                          "opt_in": opt_in})


@dataclass(frozen=True)
class Improvements:
    """What ToolObserver adds to the paper's protocol; each field is one ablation.

    Every improvement acts in both modes: what is hidden decides what is learned, not whether docs are
    learned per task (online) or across a batch of tasks sharing their tools (offline). Where a tool's
    parameters are not shown it is probed and its schema learned (``probe``, ``learned_schema``); where
    several tools take the same parameters their calls are spread and repeated over each other, and the
    usage facts that tell them apart are kept (``spread_calls``, ``replay_calls``, ``judge_replays``,
    ``cite_facts``, ``drop_contradicted``); the editor writes one tool at a time from facts read by code
    (``facts``, ``per_tool``), states what the tools' errors said (``error_rules``) and requests they answered
    (``cite_requests``), and nothing the observed calls do not support (``grounded``); an edit
    that makes the next attempt worse is undone (``accept_check``); a toolset that already works is left
    alone (``settle``), where "works" online, with no success bit, also asks that each call fits its request
    (``request_values``), and a refused call that fits it no better marks its tool as not for such requests
    (``refused_requests``); offline, where calls are scored, a tool with an interface of its own, or whose rivals
    answer in other kinds of value, is still described from its calls (``describe_from_calls``: online editing
    always shows them, so this one acts offline only). An attempt that repeats calls that failed is made again without
    their tools (``vary_repeats``), and a tool whose latest calls were made to the wrong tool is left out of the next
    attempt before it is repeated (``set_aside_misfits``). Six cut what the model processes and generates without
    changing what is learned from: the first attempts, made with the starting docs, are the run's "before" score
    (``start_docs_first``); what code writes from an attempt is tried before the editor is asked (``code_first``); the
    agent reads tools as signature lines (``compact_tools``) without what a line already says (``terse_tools``) and
    the request before them (``request_first``); the editor answers briefly (``short_replies``). They act online, where each task's docs are learned and scored on their
    own; an offline run's definition, and so the runs kept of it, stay as they were. An improvement with nothing to act on (no hidden schema, no tools
    sharing an interface) changes nothing.
    """

    probe: bool = _knob("before the first attempt, call each tool whose parameters are not shown once with no "
                        "arguments: the tool's error names its required parameters")
    facts: bool = _knob("give the editor facts read by code from the tools' answers (parameters, accepted types, "
                        "what worked and failed, which requests each tool answered; where tools share an interface, "
                        "each one's result sources and outcome per situation against the others) instead of "
                        "leaving it to infer them from transcripts")
    learned_schema: bool = _knob("where the setting shows no parameter schema, show the agent the one the facts "
                                 "support; where it shows a parameter with no type (unannotated Python), the type "
                                 "the facts support")
    per_tool: bool = _knob("one editor call per tool with only that tool's evidence, answered as a structured doc "
                           "(description and each parameter's meaning); asked again only on new evidence")
    accept_check: bool = _knob("undo an edit when the attempts with it fail more calls (or, where the outcome is "
                               "known, answer fewer requests) than the ones before it")
    cite_facts: bool = _knob("open each tool's learned description with where it was clearly the best or the worst "
                             "of the tools sharing its interface and close it with where its results come from, "
                             "stated by code, so they reach the agent even when the editor leaves them out")
    drop_contradicted: bool = _knob("drop each sentence of the editor's description that ties its tool to a situation "
                                    "where another tool of its interface did better in the usage counts, so the "
                                    "agent does not read prose that contradicts the facts", always_logged=True)
    spread_calls: bool = _knob("while exploring a shared toolset, send each call the agent makes to the next tool "
                               "sharing its interface in turn (with the agent's arguments), so the usage facts "
                               "cover every such tool in every situation instead of the one tool a small agent "
                               "keeps calling; not where judged repeats already cover them")
    replay_calls: bool = _knob("after each attempt, repeat each call that worked on every other tool sharing its "
                               "interface with the same arguments, so the facts compare those tools on the very "
                               "inputs each met, not only on the few the agent sent each", always_logged=True)
    judge_replays: bool = _knob("where an attempt is one reply and its outcome may be known (train tasks, or "
                                "--oracle-feedback), play each repeat as the attempt's call and let the task's "
                                "metric say whether that tool answered the request", always_logged=True)
    grounded: bool = _knob("state only what the observed calls support: a tool no call has worked on gets no "
                           "editor prose (it keeps the schema its errors taught), and the editor's sentences that "
                           "the observed calls contradict are dropped", always_logged=True)
    error_rules: bool = _knob("write what the tools' own errors said into the docs: each rule an error stated for a "
                              "parameter (a type, allowed values, a format) in that parameter's description and, where "
                              "the schema is learned, its type; the argument names a tool refused, where nothing else "
                              "is known of it", always_logged=True)
    cite_requests: bool = _knob("where requests were judged, close each tool's learned description with a request it "
                                "answered and the call that answered it, quoted by code: an agent matches a new "
                                "request to a worked example more surely than to a small editor's paraphrase; an offline run "
                                "that stops with every train attempt answered still writes these into blank docs",
                                always_logged=True)
    request_values: bool = _knob("online, with no success bit: an attempt whose working call took no value from the "
                                 "request (nor from an earlier call's output) and uses none of the request's words in "
                                 "its argument names (a ticker 'AAPL' for a density question), or uses none while the "
                                 "request names every parameter of another tool, is not taken as working: the call "
                                 "counts as failed in the accept check, the attempt is not settled, the editor describes "
                                 "the called tool without that request (which would lend it a purpose), and its doc "
                                 "says, by code, that it was not for that request, so the agent's next attempt looks "
                                 "at the other tools", modes=("online",), always_logged=True)
    refused_requests: bool = _knob("online, with no success bit, among several tools: a refused call that fits its "
                                   "request no better by the same signs (no value the request gives and none of its "
                                   "words in the argument names, or none of its words while the request names every "
                                   "parameter of another tool) gets the same closing sentence in its tool's doc, so "
                                   "the agent's next attempt turns to the other tools instead of repeating the call; "
                                   "a refusal alone says nothing of the choice (the right tool refuses a wrong date "
                                   "format)", modes=("online",), always_logged=True)
    vary_repeats: bool = _knob("online, where an attempt is one reply: an attempt that only repeats, word for word, "
                               "calls that already failed on its task (refused, or working but not fitting the "
                               "request) is made again without the tools whose calls only ever failed there, where "
                               "its toolset has others: a small agent at temperature 0 repeats a refused call word "
                               "for word whatever its doc now says, and a repeat teaches nothing",
                               modes=("online",), always_logged=True)
    set_aside_misfits: bool = _knob("online, where an attempt is one reply: a task's next attempt is shown its "
                                    "toolset without the tools whose latest calls on it were made to the wrong tool "
                                    "(naming only parameters the tool takes, working or refused, they fit the request "
                                    "no better by refused_requests' signs) and none of whose calls answered it, where "
                                    "others remain: the small agent repeats such a call whatever the doc's closing "
                                    "sentence says, and vary_repeats makes that attempt again only after the repeat "
                                    "is paid for",
                                    modes=("online",), always_logged=True)
    experiment: bool = _knob("where every call the agent made to a tool failed, call it within a budget of 6 calls a "
                             "run: the request's values (its numbers, its quoted texts, the ones the agent wrapped) in "
                             "the kind the tool's errors point to, then simple probes; the first call that works is "
                             "evidence, its input goes to every tool that takes it (the same parameters, or one parameter "
                             "for a one-argument call), and each doc closes with the call that worked and what the "
                             "others returned for the same input, stated by code",
                             always_logged=True)
    repair_calls: bool = _knob("offline, where calls are judged: for a failed attempt whose toolset answered other "
                               "requests, the editor proposes the one call the request needed, written from the calls "
                               "tried on it and those that answered others (each request asked about once, at most 10 "
                               "a toolset a run); the call is made and played as the attempt's reply, and where the "
                               "task's metric says it answered, the answering tool's doc closes with the correction "
                               "(the call tried and how it failed, and the call that answered), stated by code: a "
                               "small agent copies a worked correction of its own mistake more surely than a rule",
                               modes=("offline",), always_logged=True, opt_in=True)
    contrast_attempts: bool = _knob("offline: a request one attempt failed and another (an iteration earlier or later) "
                                    "answered with one call closes the answering tool's doc with both calls, the one "
                                    "tried and how it failed and the one that answered, stated by code as "
                                    "repair_calls' corrections are, with no editor call: the agent's own correction "
                                    "of its mistake, on the same request", modes=("offline",), always_logged=True,
                                    opt_in=True)
    runtime_errors: bool = _knob("read runtime errors that name no parameter (operand types, conversions, attributes, "
                                 "missing keys) for what the code used the one argument they concern as (\"is used as a "
                                 "number: given a dict the runtime said ...\"), stated as observed, as errors that name "
                                 "a parameter already are", always_logged=True)
    settle: bool = _knob("leave alone what already works: an attempt that succeeded (where the outcome is known), or "
                         "in which every call worked and no tool sharing a called tool's interface answered the same "
                         "arguments otherwise, gets no editor call; an offline run stops once every train attempt "
                         "succeeded", always_logged=True)
    describe_from_calls: bool = _knob("offline, where calls are scored: a tool whose parameters no other tool shares, "
                                      "or whose rivals answer with other kinds of value (an object where it returns "
                                      "text), is described from its calls (the arguments and what they returned) as "
                                      "well as its counts; counts tell alike tools apart but say nothing of what a tool "
                                      "does, and an editor shown only them invents a purpose (online editing always "
                                      "shows the calls)", modes=("offline",), always_logged=True)
    start_docs_first: bool = _knob("online: the first attempt at each task is made with the starting docs, so it is "
                                   "the run's \"before\" score as well as evidence, and no second pass scores those docs "
                                   "again; what probing found is shown from the second attempt on, with what the first "
                                   "attempt's calls and errors added", modes=("online",), always_logged=True)
    code_first: bool = _knob("online: an attempt after which code wrote something new into its docs (a learned schema, "
                             "an error's rule, an experiment's working call, a not-for sentence) is made again with that "
                             "before the editor is asked; the editor writes only where code had nothing new and the "
                             "attempt is still not settled, so what code states costs no editor call",
                             modes=("online",), always_logged=True)
    compact_tools: bool = _knob("online: show the agent each tool as a signature line (name, parameters with their "
                                "types and defaults, then the description and each parameter's meaning) instead of "
                                "OpenAI's JSON tools format: the same docs in fewer prompt tokens; the starting docs are "
                                "scored the same way, so before and after differ by the docs alone",
                                modes=("online",), always_logged=True)
    terse_tools: bool = _knob("online, with compact_tools: the agent's signature lines leave out of the docs what "
                              "the line already says (the form of a call, a rule that only names a type it shows) "
                              "and the note of which error each rule came from: fewer prompt tokens processed at "
                              "every attempt after the first; the docs learned keep every sentence",
                              modes=("online",), always_logged=True)
    request_first: bool = _knob("online: the agent reads the request before the tools; each task has tools of its "
                                "own and is attempted again as its docs change, so what its attempts share is the "
                                "request, which llama.cpp's prefix cache then serves instead of processing it again",
                                modes=("online",), always_logged=True)
    short_replies: bool = _knob("online: the editor writes a tool's doc in one sentence and each parameter's meaning "
                                "in a few words, bounded by the reply's grammar: a long reply costs generated tokens, "
                                "the slowest a small local model makes, and a small agent reads a short doc as well",
                                modes=("online",), always_logged=True)

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def help(cls, name: str) -> str:
        return next(str(f.metadata["help"]) for f in fields(cls) if f.name == name)

    @classmethod
    def summary(cls, name: str) -> str:
        """An improvement's help up to its first colon or semicolon: one line of ``--help`` (the docs' table has the
        whole text)."""
        text, depth = cls.help(name), 0
        for place, character in enumerate(text):
            depth += {"(": 1, ")": -1}.get(character, 0)
            if character in ":;" and depth == 0:
                return text[:place].strip()
        return text

    @classmethod
    def always_logged(cls) -> tuple[str, ...]:
        """Improvements added to the improved variant after runs of it were logged: a run logs their value
        wherever they act, so an older run, which lacks the parameter, reads as one without them."""
        return tuple(f.name for f in fields(cls) if f.metadata["always_logged"])

    @classmethod
    def opt_in(cls) -> tuple[str, ...]:
        """Improvements the improved variant leaves off for now (:func:`_knob`'s ``opt_in``)."""
        return tuple(f.name for f in fields(cls) if f.metadata["opt_in"])

    @classmethod
    def acting_in(cls, mode: str) -> tuple[str, ...]:
        """The improvements that change what a run in ``mode`` does: the ones an ablation of that mode switches off."""
        return tuple(f.name for f in fields(cls) if mode in f.metadata["modes"])


PAPER = Improvements()
IMPROVED = Improvements(**{name: name not in Improvements.opt_in() for name in Improvements.names()})
VARIANTS = {"paper": PAPER, "improved": IMPROVED}


ITERATIONS = {"online": 10, "offline": 3}
"""Editor iterations by learning mode when ``--iterations`` is not given."""


@dataclass(frozen=True)
class ToolObserverKnobs(SharedKnobs):
    """ToolObserver's knobs: its budget (command line, sweeps and checks derive from it:
    :mod:`otbench.optimizers.knobs`), its variant, the improvements switched away from it, and oracle feedback,
    beside the choices every optimizer shares (:class:`~otbench.optimizers.spec.SharedKnobs`)."""

    flag_prefix: ClassVar[str] = ""
    iterations: int | None = knob(None, f"max editor iterations (default: {ITERATIONS['online']} online, "
                                        f"{ITERATIONS['offline']} offline)", minimum=1,
                                  sweep={"online": (1, 10), "offline": (1, 5)})
    batch_size: int = knob(10, "offline mini-batch size", minimum=1, sweep={"offline": (5, 20)}, modes=("offline",))
    variant: str = "improved"
    """``improved`` (every improvement on but the opt-in ones) or ``paper`` (the paper's protocol, as published)."""
    switches: Mapping[str, bool] = field(default_factory=dict)
    """Improvements turned on or off whatever the variant (``{"facts": False}``: an ablation)."""
    oracle_feedback: bool = False
    """Online: show the editor whether each attempt succeeded, as the authors' released code did (off in the paper)."""

    @property
    def improvements(self) -> Improvements:
        """The variant with the switches on top; an unknown variant or improvement is refused on one line."""
        if self.variant not in VARIANTS:
            raise ConfigError(f"unknown variant {self.variant!r}; choose from {', '.join(VARIANTS)}")
        unknown = [name for name in self.switches if name not in Improvements.names()]
        if unknown:
            raise ConfigError(f"unknown improvement {unknown[0]!r}; choose from {', '.join(Improvements.names())}")
        return dataclasses.replace(VARIANTS[self.variant], **{name: bool(on) for name, on in self.switches.items()})
