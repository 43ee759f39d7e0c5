"""How the commands see one optimizer: its name and row label, its knobs, and how it is built.

Every command reads an optimizer through its spec, and nothing else of it: the command-line flags
(:meth:`OptimizerSpec.add_arguments`), the knobs a command line, a checkpoint or a grid sets
(:meth:`~OptimizerSpec.knobs_from`), the part of a run's definition the knobs make in a learning mode
(:meth:`~OptimizerSpec.define`, read back by :meth:`~OptimizerSpec.knobs_of`), the MLflow params that tell
its runs apart, its comparison rows and row labels, its sweep space, its knob tables in the docs and the
teleprompter itself (:meth:`~OptimizerSpec.build`). The defaults here serve an optimizer whose knobs are whole
numbers (:mod:`otbench.optimizers.knobs`), with the shared probe where it is offered; an optimizer with choices
of another kind (ToolObserver's variant and improvements) overrides the hooks in its own spec.

A spec module imports no DSPy: ``--help`` builds every flag from the specs alone, and the teleprompter's
module is imported by :meth:`~OptimizerSpec.build` when a run starts.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, TypeVar

from otbench.errors import ConfigError
from otbench.optimizers import knobs as knob_rules
from otbench.optimizers.knobs import MODES

if TYPE_CHECKING:
    from otbench.envs.base import Environment
    from otbench.optimizers.base import DocOptimizer

PROBE_HELP = ("before learning, call each tool whose parameters are not shown once with no arguments: the tool's "
              "error names its required parameters, and the agent is shown the schema learned that way")
"""The shared probe, offered to every optimizer that declares ``offers_probe``: the same help for the same help."""

EXPERIMENT_HELP = ("before learning, where a request takes one reply, call each tool no call has worked on with the "
                   "requests' values in the kind its errors point to (at most 6 calls a tool, judged by the train "
                   "tasks' metric offline): the docs then show the types those calls support and close with the call "
                   "that worked; tool calls, no tokens")
"""The shared experiment, offered beside the probe (ToolObserver's ``experiment`` improvement does the same from the
agent's own failed attempts)."""

COVERAGE_HELP = ("offline: before learning, a pass over every tool of the toolset: each tool no call has worked on is "
                 "called with the train requests' values in the kind its errors point to until one works (tool calls, no "
                 "tokens), what its results show it computes is stated by code, and the editor describes several tools "
                 "a call from their calls, keeping what a starting description says that the calls do not contradict; "
                 "under the learning budget, one logged step per batch")
"""The shared coverage pass (:mod:`otbench.optimizers.coverage`), offered to every optimizer alike."""

WORDED_ERRORS_HELP = ("read an answer that is an error in words (a text opening with Error:, Invalid ...:, an "
                      "{\"error\": ...} object) as the failed call it is, its words the error, wherever the "
                      "optimizer reads calls")
"""The shared reading of errors in words (:func:`otbench.core.calls.worded_error`), on by default for every optimizer."""

REQUEST_SCALES_HELP = ("offline: read a task's call against its request: one that passes a number of the request on another "
                       "scale than the request states it (0.15 or 1500 where the request says 15%) is read as a "
                       "failed call whose error says so, so the learner tries the value as written and the editor "
                       "sees both answers; so is one that returns the whole where the request asks for a part (what "
                       "each of 4 pays of 120, answered 120)")
"""The shared reading of calls against their requests (:func:`otbench.core.calls.read_against_request`), off by
default: many tools take a rate as a fraction (the Wild dialogues' mortgage and binomial functions, from BFCL, take
0.045 for the request's 4.5%), and there the doubt marks right calls failed."""

GATE_HELP = ("offline: keep a learned doc only where the evidence says it is no worse than the doc its tool started "
             "with: the starting and the learned docs are scored on the same train tasks, and each tool keeps its "
             "learned doc where the calls it guided worked more often, else where the toolset scored at least "
             "as well; the others get their starting doc back")
"""The shared gate (:mod:`otbench.optimizers.gate`), on by default for every optimizer."""

KEEP_EVIDENCE_HELP = ("offline, with coverage: the sentences the coverage pass wrote by code from a tool's calls (a "
                      "request it answered, opening its doc; what its results showed it computes and the call that "
                      "worked, closing it) stay in a doc the optimizer rewrote afterwards, where the pass placed them; "
                      "the optimizer's own words take the rest")
"""The shared keeping of the pass's evidence (:func:`otbench.optimizers.coverage.keep_evidence`), on by default for every
optimizer: a rewrite in an optimizer's own words tended to drop a tool's answered request, the words it is found by."""

LEARN_TOKENS_HELP = ("learning budget in tokens, the same for every optimizer: stop starting learning work (an "
                     "iteration, a tool, an editor call) once the compile has spent this many, paid and cache-served, "
                     "in every phase; each optimizer chooses what to spend them on")
"""The shared ``--learn-tokens`` option's help (:mod:`otbench.optimizers.budget`)."""


def _switch(default: bool, help: str, modes: tuple[str, ...]) -> Any:
    """A shared switch: its default, its flag's help, and the learning modes it acts in."""
    return field(default=default, metadata={"switch": help, "modes": modes})


@dataclass(frozen=True, kw_only=True)
class SharedKnobs:
    """The choices every optimizer offers alike, declared once: an optimizer's knobs dataclass derives from this one
    (or from :class:`ProbingKnobs`) and declares only its own fields, which alone are its constructor's positional
    ones. A switch's flag, its place in a run's definition and its row label all follow from its field here."""

    coverage: bool = _switch(False, COVERAGE_HELP, ("offline",))
    """The shared coverage pass: it needs a shared toolset and train tasks."""
    worded_errors: bool = _switch(True, WORDED_ERRORS_HELP, MODES)
    """The shared reading of errors in words."""
    request_scales: bool = _switch(False, REQUEST_SCALES_HELP, ("offline",))
    """The shared reading of calls against their requests' scales: a doubt about a call's scale is tested by
    experiments and settled by the gate, so it acts where the gate does."""
    gate: bool = _switch(True, GATE_HELP, ("offline",))
    """The shared gate: it needs a shared toolset and train tasks."""
    keep_evidence: bool = _switch(True, KEEP_EVIDENCE_HELP, ("offline",))
    """The shared keeping of the coverage pass's sentences: it acts where the pass does."""
    learn_tokens: int | None = None
    """The shared learning budget in tokens (:mod:`otbench.optimizers.budget`); None, no budget."""


@dataclass(frozen=True, kw_only=True)
class ProbingKnobs(SharedKnobs):
    """The shared choices with the shared probe and experiment, for an optimizer that offers them
    (:attr:`OptimizerSpec.offers_probe`; ToolObserver has its own, as improvements)."""

    probe: bool = False
    """The shared probe (:data:`PROBE_HELP`)."""
    experiment: bool = False
    """The shared experiment (:data:`EXPERIMENT_HELP`)."""


SHARED_SWITCHES = {part.name: part.default for part in fields(SharedKnobs) if "switch" in part.metadata}
"""The switches every optimizer's knobs have, with their defaults: a definition keeps one only where it departs from
its default and acts in the run's learning mode (:data:`SWITCH_MODES`), so runs defined before it existed keep their
definition."""

SWITCH_MODES = {part.name: part.metadata["modes"] for part in fields(SharedKnobs) if "switch" in part.metadata}
"""Where each shared switch acts (:class:`SharedKnobs`)."""


@dataclass(frozen=True)
class Built:
    """What every teleprompter is built with besides its knobs and LMs."""

    env: Environment
    mode: str
    """``online`` or ``offline``, resolved."""
    seed: int
    """The run's seed (an optimizer that draws at random takes it)."""
    common: Mapping[str, Any]
    """Keyword arguments every teleprompter takes: ``env``, ``tracker``, ``num_threads``, ``progress``."""


KnobsT = TypeVar("KnobsT")

Build = Callable[[Any, Mapping[str, Any], Built], "DocOptimizer"]
"""``build(knobs, LMs by phase, what every teleprompter is built with)``."""


@dataclass(frozen=True)
class OptimizerSpec:
    """One optimizer as the commands see it (see the module's docstring for each hook)."""

    name: str
    label: str
    """The comparison row of its default knobs (``+P2P``); :meth:`row_label` adds what departs from them."""
    knobs: type[knob_rules.Knobs]
    """Its knobs: a frozen dataclass; fields declared with :func:`otbench.optimizers.knobs.knob` are whole-number
    budget knobs (flags, bounds, sweeps derive from them), other fields are the spec's own choices."""
    build_with: Build
    teleprompter: str = ""
    """Where its teleprompter class is (``otbench.optimizers.gepa.GEPA``): the API reference documents it there."""
    seeded: bool = False
    """Whether it draws at random with the run's seed: its runs on a full task sample still differ by seed."""

    @property
    def offers_probe(self) -> bool:
        """Whether its knobs have the ``probe`` field that the shared ``--probe`` sets (compare's ``(probe)`` rows):
        they derive from :class:`ProbingKnobs`."""
        return issubclass(self.knobs, ProbingKnobs)

    # -- command line ---------------------------------------------------------------------------------------------
    def idle_in(self, mode: str) -> dict[str, tuple[str, ...]]:
        """Its flags (by destination) that do nothing in learning mode ``mode``, each with the modes it acts in: a
        command refuses one given for a run in ``mode`` rather than ignore it."""
        return {knob_rules.dest(self.knobs, name): declaration.modes
                for name, declaration, _ in knob_rules.declared(self.knobs) if mode not in declaration.modes}

    def add_arguments(self, group: argparse._ArgumentGroup, taken: set[str], *, budget_only: bool = False) -> None:
        """Its flags in ``group``: the budget knobs with the shared ``--learn-tokens``, and (unless ``budget_only``,
        as compare's) the shared ``--[no-]probe``; a flag another optimizer already added (``taken``: their dests) is
        not added twice."""
        if "learn_tokens" not in taken:
            group.add_argument("--learn-tokens", dest="learn_tokens", type=_token_count, default=None, metavar="N",
                               help=knob_rules.help_text(f"{LEARN_TOKENS_HELP} (default: no budget)"))
            taken.add("learn_tokens")
        if not budget_only and self.offers_probe and "probe" not in taken:
            group.add_argument("--probe", dest="probe", action=argparse.BooleanOptionalAction, default=None,
                               help=knob_rules.help_text(f"{PROBE_HELP} (default off)"))
            taken.add("probe")
        if not budget_only and self.offers_probe and "experiment" not in taken:
            group.add_argument("--experiment", dest="experiment", action=argparse.BooleanOptionalAction, default=None,
                               help=knob_rules.help_text(f"{EXPERIMENT_HELP} (default off)"))
            taken.add("experiment")
        for switch, text in ((part.name, part.metadata["switch"]) for part in fields(SharedKnobs)
                             if "switch" in part.metadata):
            if not budget_only and switch not in taken:
                default = "on" if SHARED_SWITCHES[switch] else "off"
                group.add_argument(f"--{switch.replace('_', '-')}", dest=switch, action=argparse.BooleanOptionalAction,
                                   default=None, help=knob_rules.help_text(f"{text} (default {default})"))
                taken.add(switch)
        fresh = [name for name, _, _ in knob_rules.declared(self.knobs)
                 if knob_rules.dest(self.knobs, name) not in taken]
        knob_rules.add_arguments(group, self.knobs, only=fresh)
        taken.update(knob_rules.dest(self.knobs, name) for name in fresh)

    def knobs_from(self, values: Mapping[str, Any]) -> Any:
        """Its knobs as ``values`` set them by option name (a command line's, a grid's; defaults for the rest),
        checked; refused on one line when they cannot be."""
        chosen = knob_rules.from_values(self.knobs, values)
        for shared in ("probe", "experiment") if self.offers_probe else ():
            if values.get(shared) is not None:
                chosen = dataclasses.replace(chosen, **{shared: bool(values[shared])})
        return with_learn_tokens(with_switches(chosen, values), values.get("learn_tokens"))

    def check(self, knobs: Any) -> None:
        """Refuse knobs of another optimizer's type, or out of their bounds."""
        if not isinstance(knobs, self.knobs):
            raise ConfigError(f"{self.name} takes {self.knobs.__name__}, not {type(knobs).__name__}")
        knob_rules.check(knobs)

    # -- the run's definition -------------------------------------------------------------------------------------
    def define(self, knobs: Any, mode: str) -> dict[str, Any]:
        """The knobs as a run's definition keeps them: those that act in ``mode``, by option name, the probe, the
        experiment where it is on and the learning budget where one is set (absent, it was off: runs defined before
        either existed keep their definition)."""
        part = {knob_rules.dest(self.knobs, name): getattr(knobs, name)
                for name, declaration, _ in knob_rules.declared(self.knobs) if mode in declaration.modes}
        if self.offers_probe:
            part["probe"] = bool(knobs.probe)
            if knobs.experiment:
                part["experiment"] = True
        if getattr(knobs, "learn_tokens", None) is not None:  # absent, none: earlier runs keep their definition
            part["learn_tokens"] = int(knobs.learn_tokens)
        return {**part, **switches_part(knobs, mode)}

    def knobs_of(self, part: Mapping[str, Any], mode: str) -> Any:
        """The knobs a definition's part stands for (what does not act in ``mode`` at its default)."""
        return self.knobs_from(part)

    def params(self, part: Mapping[str, Any], mode: str, *, swept: bool) -> dict[str, Any]:
        """What its runs log as MLflow params beside the shared ones: the knobs that depart from their declared
        defaults (all the drawn ones in a sweep's trial, ``swept``), and the probe where it is on."""
        declared = {knob_rules.dest(self.knobs, name): default for name, _, default in knob_rules.declared(self.knobs)}
        params = {name: value for name, value in part.items() if name in declared
                  and (swept or value != declared[name])}
        for shared in ("probe", "experiment"):
            if part.get(shared):
                params[shared] = True
        if part.get("learn_tokens") is not None:
            params["learn_tokens"] = part["learn_tokens"]
        return {**params, **{switch: part[switch] for switch in SHARED_SWITCHES if switch in part}}

    def row_label(self, part: Mapping[str, Any], mode: str) -> str:
        """The comparison row a run with this definition part is: ``+P2P``, ``+P2P (probe)`` with the probe,
        ``+P2P (probe, experiment)`` with both, ``+P2P (coverage)`` with the coverage pass."""
        help_taken = [shared for shared in ("probe", "experiment", "coverage") if part.get(shared)]
        return (self.label + (f" ({', '.join(help_taken)})" if help_taken else "") + switches_label(part, own=False)
                + budget_label(part))

    def from_earlier_format(self, optimizer: Mapping[str, Any]) -> dict[str, Any]:
        """A definition's optimizer part from the first format (knobs, and the probe beside them)."""
        part = dict(optimizer.get("knobs", {}))
        if self.offers_probe:
            part["probe"] = bool(optimizer.get("probe"))
        return part

    def earlier_values(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Option values of a run logged before definitions were, with what such runs meant where they logged
        nothing (here: nothing to add)."""
        return dict(values)

    # -- comparisons, sweeps, docs ---------------------------------------------------------------------------------
    def rows(self, knobs: Any, mode: str, *, probe: bool, probe_only: bool, ablations: bool) -> list[Any]:
        """``compare``'s rows of this optimizer (each a knobs value): its own, and with the shared probe when asked
        (only that one with ``probe_only``); an optimizer with no improvements has no ablations."""
        if not self.offers_probe:
            return [knobs]
        probed = [dataclasses.replace(knobs, probe=True)] if probe or probe_only else []
        return ([] if probe_only else [dataclasses.replace(knobs, probe=False)]) + probed

    @property
    def has_ablations(self) -> bool:
        """Whether ``compare --ablations`` adds rows of it."""
        return False

    def search_space(self, trial: Any, mode: str) -> dict[str, Any]:
        """An optuna trial's values of the knobs swept in ``mode``, by option name."""
        return knob_rules.search_space(self.knobs, trial, mode)

    @property
    def sweepable(self) -> bool:
        return any(declaration.sweep for _, declaration, _ in knob_rules.declared(self.knobs))

    def knob_tables(self) -> str:
        """Its knobs as Markdown tables for its docs page (the site writes them at build time)."""
        return knob_rules.markdown_table(self.knobs, self.label)

    def build(self, knobs: Any, lms: Mapping[str, Any], built: Built) -> DocOptimizer:
        """The teleprompter, with its knobs, its LMs charged to the right phases, the shared learning budget and the
        shared switches."""
        tokens = getattr(knobs, "learn_tokens", None)
        common = {**built.common, **{switch: bool(getattr(knobs, switch)) for switch in SHARED_SWITCHES
                                     if hasattr(knobs, switch)}}
        common = {**common, "token_budget": tokens} if tokens is not None else common
        return self.build_with(knobs, lms, dataclasses.replace(built, common=common))


def with_learn_tokens(knobs: KnobsT, value: Any) -> KnobsT:
    """``knobs`` with the shared learning budget ``value`` (None: left as it is), checked."""
    if value is None:
        return knobs
    if "learn_tokens" not in getattr(knobs, "__dataclass_fields__", {}):
        raise ConfigError(f"{type(knobs).__name__} has no learn_tokens field: this optimizer takes no --learn-tokens")
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"--learn-tokens must be a whole number of tokens >= 1, not {value!r}")
    return dataclasses.replace(knobs, learn_tokens=value)  # type: ignore[type-var]  # a knobs dataclass


def with_switches(knobs: KnobsT, values: Mapping[str, Any]) -> KnobsT:
    """``knobs`` with the shared switches ``values`` sets (None or absent: left as they are); refused on one line for
    an optimizer whose knobs have no such switch."""
    chosen = {switch: bool(values[switch]) for switch in SHARED_SWITCHES if values.get(switch) is not None}
    for switch, on in chosen.items():
        if not hasattr(knobs, switch) and on != SHARED_SWITCHES[switch]:
            raise ConfigError(f"{type(knobs).__name__} has no {switch} field: this optimizer takes no "
                              f"--{'' if on else 'no-'}{switch.replace('_', '-')}")
    chosen = {switch: on for switch, on in chosen.items() if hasattr(knobs, switch)}
    return dataclasses.replace(knobs, **chosen) if chosen else knobs  # type: ignore[type-var]  # a knobs dataclass


def switches_part(knobs: Any, mode: str) -> dict[str, bool]:
    """The shared switches a definition keeps: those that depart from their defaults and act in ``mode``."""
    return {switch: bool(getattr(knobs, switch, default)) for switch, default in SHARED_SWITCHES.items()
            if bool(getattr(knobs, switch, default)) != default and mode in SWITCH_MODES[switch]}


def switches_label(part: Mapping[str, Any], *, own: bool) -> str:
    """What a row label adds for the shared switches away from their defaults: `` --no-worded-errors``, and with
    ``own`` (an optimizer whose label has no help list) `` --coverage``."""
    shown = [switch for switch in SHARED_SWITCHES if switch in part and (own or switch != "coverage")]
    return "".join(f" --{'' if part[switch] else 'no-'}{switch.replace('_', '-')}" for switch in shown)


def budget_label(part: Mapping[str, Any]) -> str:
    """What a row label adds for the shared learning budget: `` [60k tokens]``, nothing without one."""
    tokens = part.get("learn_tokens")
    if tokens is None:
        return ""
    shown = f"{tokens / 1000:g}k" if tokens % 1000 == 0 else str(tokens)
    return f" [{shown} tokens]"


def _token_count(text: str) -> int:
    """``--learn-tokens``'s value: a whole number of tokens, ``60000`` or ``60k``."""
    scaled = text.strip().lower()
    factor = 1000 if scaled.endswith("k") else 1
    try:
        value = int(scaled.removesuffix("k")) * factor
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of tokens such as 60000 or 60k, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of tokens >= 1, got {text!r}")
    return value


def load(module: str) -> OptimizerSpec:
    """The ``SPEC`` a spec module declares (a registry line names the module)."""
    spec = getattr(importlib.import_module(module), "SPEC", None)
    if not isinstance(spec, OptimizerSpec):
        raise ConfigError(f"{module} declares no SPEC (an OptimizerSpec)")
    return spec
