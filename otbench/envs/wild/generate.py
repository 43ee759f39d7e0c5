"""``python -m otbench.envs.wild.generate``: build Wild's dialogues from BFCL's tests, deterministically.

Each dialogue is planned first: a number of task-kind switches (the dialogue's index modulo 4, so every
count from 0 to 3 is equally common), then a sequence of four task kinds with exactly that many switches,
then a hidden intention for each later tool task. It is then realised task by task from BFCL's data:

- a task with everything stated is a BFCL question as BFCL wrote it (single or parallel calls, with its
  gold calls), or a request phrased from a function's :class:`~otbench.envs.wild.catalogue.Phrasing`
  with the arguments of one of BFCL's gold calls, or a :class:`~otbench.envs.wild.catalogue.Chain`
  (calls feeding each other) seeded with BFCL's gold values;
- a task with a hidden intention builds on an earlier task: the same request again with a new value
  ("Now do the same for 12", "And over 15 years?"), or another function of the same family about the
  earlier subject ("What's the company name behind that stock?", "And the age rating?"); said one or two
  turns later it is partial information (value left unsaid) or coreference (value referred to), three or
  more turns later a long-range dependency;
- a clarification request leaves its subject out ("Can you find the current price of a stock?") and the
  user's next turn gives it; chitchat is small talk, sometimes about something named earlier.

Every gold call is run (in this process, with the project's implementations) and its output stored; a
realisation whose calls fail, repeat an earlier call, or cannot carry a planned intention is tried again,
and a planned intention no attempt could carry falls back to another (the stored label is what the task
is). The offered functions are the ones the tasks need plus the most confusable others (same family,
same parameter names, similar names), numbered ``function_1..N`` once for the whole environment in a
seeded order. ``--check`` regenerates and compares with the committed files.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from evals.wild_metrics import TOOL_KINDS, resolve
from otbench.envs.bfcl.data import ALL_CATEGORIES, BfclTest, load_tests
from otbench.envs.bfcl.functions import FUNCTIONS
from otbench.envs.bfcl.gold import parse_call
from otbench.envs.wild.catalogue import (
    ANSWERS,
    CHAINS,
    CHITCHAT,
    CHITCHAT_ABOUT,
    EQUIVALENT,
    OPENERS,
    PHRASINGS,
    Chain,
    Given,
    Phrasing,
    Read,
    fill,
    render_value,
)
from otbench.envs.wild.scenario import Dialogue, GoldCall, Task, count_switches

TOOLSET_FORMAT = "otbench.wild.toolset/1"
DATA_DIRECTORY = Path(__file__).parent / "data"
TOOLSET_FILE, DIALOGUES_FILE = "toolset.json", "dialogues.jsonl"
_KIND_WEIGHTS = {"single": 3.0, "series": 2.0, "parallel": 2.0, "series_parallel": 1.5, "clarification": 1.5,
                 "chitchat": 1.5}
_ATTEMPTS = 80
_ENTITY_FAMILIES = frozenset({"stock", "movie", "city", "country", "product", "ip", "zipcode"})
"""Families whose subject is a thing people chat about (small talk names one of them, never a list of numbers)."""


@dataclass(frozen=True)
class GenerationSpec:
    """Everything the generated data depends on (besides BFCL's wheel and the function implementations)."""

    seed: int = 0
    train: int = 32
    test: int = 48
    distractors: int = 4
    """Functions offered besides those the tasks need: the most confusable ones but one, and one at random."""


DEFAULT_SPEC = GenerationSpec()


# -- BFCL's data, as the generator reads it ------------------------------------------------------------------
@dataclass
class Bank:
    """BFCL's tests and gold values, by function; BFCL's questions are split between train and test."""

    singles: dict[str, list[BfclTest]]
    parallels: dict[str, list[BfclTest]]
    gold: dict[str, list[dict[str, Any]]]
    schemas: dict[str, dict[str, Any]]

    @classmethod
    def from_tests(cls, tests: Sequence[BfclTest]) -> Bank:
        singles: dict[str, list[BfclTest]] = {"train": [], "test": []}
        parallels: dict[str, list[BfclTest]] = {"train": [], "test": []}
        gold: dict[str, list[dict[str, Any]]] = {}
        schemas: dict[str, dict[str, Any]] = {}
        questions: set[str] = set()
        for test in tests:
            for function in test.functions:
                schemas.setdefault(function["name"], function)
            calls = [parse_call(text) for text in test.ground_truth]
            for call in calls:
                if call.arguments not in gold.setdefault(call.name, []):
                    gold[call.name].append(call.arguments)
            text = " ".join(test.question.split())
            if text in questions or not text:
                continue
            questions.add(text)
            split = "train" if _stable(test.id) % 3 == 0 else "test"
            (singles if len(calls) == 1 else parallels)[split].append(test)
        return cls(singles, parallels, gold, schemas)


def _stable(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def _run(steps: Sequence[tuple[str, dict[str, Any]]]) -> tuple[GoldCall, ...] | None:
    """The gold calls of ``steps`` (references resolved against earlier outputs), run; None if one fails."""
    calls: list[GoldCall] = []
    for function, arguments in steps:
        try:
            output = FUNCTIONS[function](**resolve(arguments, [call.output for call in calls]))
            json.dumps(output)
        except Exception:  # noqa: BLE001 - a value BFCL's functions refuse: this realisation is dropped
            return None
        calls.append(GoldCall(function, arguments, output))
    return tuple(calls)


# -- what later tasks can build on ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Made:
    """A realised task and what later turns may refer back to."""

    task: Task
    turn: int
    """The user turn that stated its values (a clarification's answer)."""
    function: str | None = None
    """The one function it asked about (a single request, one function twice, a clarification)."""
    arguments: dict[str, Any] | None = None
    """That function's arguments (a single request)."""
    chain: str | None = None
    seeds: tuple[dict[str, Any], ...] = ()
    extras: dict[str, Any] = field(default_factory=dict)
    mentions: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Family -> the one subject of that family it named, as parameter values."""
    subject_text: str = ""


def _subject(phrasing: Phrasing, arguments: dict[str, Any]) -> dict[str, Any]:
    return {name: arguments[name] for name in phrasing.subject_parameters}


def _mentions(calls: Sequence[GoldCall]) -> dict[str, dict[str, Any]]:
    """Families whose subject the calls name exactly one of."""
    found: dict[str, list[dict[str, Any]]] = {}
    for call in calls:
        phrasing = PHRASINGS.get(call.function)
        if phrasing and phrasing.family and all(p in call.arguments for p in phrasing.subject_parameters) \
                and not any(isinstance(call.arguments[p], dict) for p in phrasing.subject_parameters):
            subject = _subject(phrasing, call.arguments)
            if subject not in found.setdefault(phrasing.family, []):
                found[phrasing.family].append(subject)
    return {family: subjects[0] for family, subjects in found.items() if len(subjects) == 1}


def _request(rng: random.Random, phrasing: Phrasing, arguments: dict[str, Any]) -> str:
    noun_phrase = f"{phrasing.noun} {phrasing.prep} {fill(phrasing.subject, arguments)}{fill(phrasing.extra, arguments)}"
    return rng.choice(OPENERS).format(what=phrasing.what, what_lower=phrasing.what.lower(), request=noun_phrase)


def _stated(phrasing: Phrasing, arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments a phrased request states (its subject and extra slots)."""
    return {name: arguments[name] for name in [*phrasing.subject_parameters, *phrasing.extra_parameters]}


def _phrasable(bank: Bank, function: str) -> bool:
    """A function a request can be phrased for: BFCL has gold values and they state every required parameter."""
    phrasing = PHRASINGS.get(function)
    if phrasing is None or not bank.gold.get(function):
        return False
    required = set(bank.schemas[function].get("parameters", {}).get("required", []))
    return required <= {*phrasing.subject_parameters, *phrasing.extra_parameters}


class Realiser:
    """Realises one dialogue's planned tasks, left to right, from the bank."""

    def __init__(self, bank: Bank, split: str, rng: random.Random) -> None:
        self.bank, self.split, self.rng = bank, split, rng
        self.made: list[Made] = []
        self.turn = 0
        self.calls_so_far: set[str] = set()

    # -- bookkeeping -------------------------------------------------------------------------------------------
    def add(self, made: Made) -> bool:
        keys = [_call_key(call) for call in made.task.calls]
        if len(set(keys)) < len(keys) or self.calls_so_far & set(keys):
            return False
        self.calls_so_far |= set(keys)
        self.made.append(made)
        self.turn += len(made.task.messages)
        return True

    def _last_with_calls(self) -> Made | None:
        return next((m for m in reversed(self.made) if m.task.calls), None)

    def _values_used(self, function: str) -> list[dict[str, Any]]:
        return [call.arguments for m in self.made for call in m.task.calls if call.function == function]

    # -- tasks with everything stated -------------------------------------------------------------------------
    def fresh(self, kind: str) -> Made | None:
        build: dict[str, Callable[[], Made | None]] = {
            "single": self._fresh_single, "parallel": self._fresh_parallel, "series": lambda: self._fresh_chain(False),
            "series_parallel": lambda: self._fresh_chain(True), "clarification": self._clarification,
            "chitchat": self._chitchat,
        }
        return build[kind]()

    def _verbatim(self, tests: list[BfclTest], kind: str) -> Made | None:
        if not tests:
            return None
        test = self.rng.choice(tests)
        steps = [(call.name, call.arguments) for call in (parse_call(text) for text in test.ground_truth)]
        calls = _run(steps)
        if calls is None:
            return None
        message = " ".join(test.question.split())
        task = Task(kind, "none", (message,), calls, origin=f"bfcl:{test.id}")
        single = calls[0] if kind == "single" else None
        phrased = single is not None and _phrasable(self.bank, single.function)
        return Made(task, self.turn, function=single.function if phrased and single else None,
                    arguments=dict(single.arguments) if phrased and single else None, mentions=_mentions(calls),
                    subject_text=fill(PHRASINGS[single.function].subject, single.arguments)
                    if phrased and single else "")

    def _fresh_single(self) -> Made | None:
        if self.rng.random() < 0.5:
            return self._verbatim(self.bank.singles[self.split], "single")
        function = self.rng.choice(sorted(f for f in PHRASINGS if _phrasable(self.bank, f)))
        phrasing = PHRASINGS[function]
        arguments = _stated(phrasing, self.rng.choice(self.bank.gold[function]))
        calls = _run([(function, arguments)])
        if calls is None:
            return None
        task = Task("single", "none", (_request(self.rng, phrasing, arguments),), calls,
                    origin=f"template:{function}")
        return Made(task, self.turn, function=function, arguments=arguments, mentions=_mentions(calls),
                    subject_text=fill(phrasing.subject, arguments))

    def _fresh_parallel(self) -> Made | None:
        roll = self.rng.random()
        if roll < 0.4:
            return self._verbatim(self.bank.parallels[self.split], "parallel")
        if roll < 0.7:  # one function, two subjects
            function = self.rng.choice(sorted(f for f in PHRASINGS if _phrasable(self.bank, f)))
            phrasing = PHRASINGS[function]
            first, second = self._two_subjects(function, {})
            if second is None:
                return None
            calls = _run([(function, first), (function, second)])
            if calls is None:
                return None
            message = (f"{phrasing.what} {phrasing.noun} {phrasing.prep} {fill(phrasing.subject, first)}, and "
                       f"{phrasing.prep} {fill(phrasing.subject, second)}{fill(phrasing.extra, first)}?")
            return Made(Task("parallel", "none", (message,), calls, origin=f"template:{function}*2"), self.turn,
                        function=function, mentions=_mentions(calls))
        family = self.rng.choice(sorted({p.family for p in PHRASINGS.values() if p.family}))
        members = sorted(f for f, p in PHRASINGS.items() if p.family == family and not p.extra_parameters)
        seeds = [f for f in members if self.bank.gold.get(f)]
        if len(members) < 2 or not seeds:
            return None
        one, other = self.rng.sample(members, 2)
        source = self.rng.choice(seeds)
        subject = _subject(PHRASINGS[source], self.rng.choice(self.bank.gold[source]))
        built = [self._about(name, subject) for name in (one, other)]
        if any(arguments is None for arguments in built):
            return None
        calls = _run([(name, arguments) for name, arguments in zip((one, other), built, strict=True)
                      if arguments is not None])
        if calls is None:
            return None
        text = fill(PHRASINGS[one].subject, built[0] or {})
        message = f"For {text}: {PHRASINGS[one].noun} and {PHRASINGS[other].noun}, please."
        return Made(Task("parallel", "none", (message,), calls, origin=f"template:{one}+{other}"), self.turn,
                    mentions=_mentions(calls), subject_text=text)

    def _fresh_chain(self, both: bool) -> Made | None:
        names = sorted(n for n, c in CHAINS.items() if (_fans_out(c) if both else not _fans_out(c)))
        if both:
            names += sorted(n for n, c in CHAINS.items() if c.pairable and not _fans_out(c))
        name = self.rng.choice(names)
        chain = CHAINS[name]
        pair = both and not _fans_out(chain)
        seeds = self._seeds(chain, 2 if pair else 1, [])
        if seeds is None:
            return None
        extras = self._extras(chain, seeds[0])
        made = self._chain_task(name, seeds, extras, "none", self._chain_message(chain, seeds, extras), None)
        return made

    def _clarification(self) -> Made | None:
        named = {family for m in self.made for family in m.mentions}
        options = sorted(f for f, p in PHRASINGS.items() if _phrasable(self.bank, f) and p.kind
                         and p.family not in named)
        if not options:
            return None
        function = self.rng.choice(options)
        phrasing = PHRASINGS[function]
        arguments = _stated(phrasing, self.rng.choice(self.bank.gold[function]))
        calls = _run([(function, arguments)])
        if calls is None:
            return None
        subject = fill(phrasing.subject, arguments)
        request = f"Can you find {phrasing.noun} {phrasing.prep} {phrasing.some}{fill(phrasing.extra, arguments)}?"
        answer = self.rng.choice(ANSWERS).format(subject=subject)
        task = Task("clarification", "none", (request, answer), calls, origin=f"template:{function}")
        return Made(task, self.turn + 1, function=function, arguments=arguments, mentions=_mentions(calls),
                    subject_text=subject)

    def _chitchat(self) -> Made | None:
        said = {m.task.messages[0] for m in self.made}
        earlier = [m.subject_text for m in self.made if m.subject_text and set(m.mentions) & _ENTITY_FAMILIES]
        if earlier and self.rng.random() < 0.35:
            message = self.rng.choice(CHITCHAT_ABOUT).format(subject=earlier[-1])
        else:
            message = self.rng.choice([line for line in CHITCHAT if line not in said])
        return Made(Task("chitchat", "none", (message,), origin="template:chitchat"), self.turn)

    # -- tasks that build on an earlier one -------------------------------------------------------------------
    def hidden(self, kind: str, intention: str) -> Made | None:
        sources = [m for m in self.made if m.task.calls]
        last = self._last_with_calls()
        options: list[Callable[[], Made | None]] = []
        for source in sources:
            distance = self.turn - source.turn
            if intention == "long_range" and distance < 3:
                continue
            if intention != "long_range" and not 1 <= distance <= 2:
                continue
            latest = source is last
            if latest or (intention == "long_range" and not self._asked_again_since(source)):
                options.append(partial(self._again, kind, intention, source))
            for family in sorted(source.mentions):
                if self._family_clear(source, family, intention):
                    options.append(partial(self._other, kind, intention, source, family, latest))
        self.rng.shuffle(options)
        for option in options:
            made = option()
            if made is not None:
                return made
        return None

    def _asked_again_since(self, source: Made) -> bool:
        """A later task made the same request (function or chain): "going back to it" would not reach back."""
        later = [m for m in self.made if m.turn > source.turn]
        return any((m.chain or m.function) == (source.chain or source.function) for m in later)

    def _family_clear(self, source: Made, family: str, intention: str) -> bool:
        """No other task names a subject of ``family`` after ``source`` (none at all, for a long-range one):
        "that stock" is unambiguous."""
        others = [m for m in self.made if m is not source and family in m.mentions]
        if intention == "long_range":
            return not others
        return all(m.turn < source.turn for m in others)

    def _again(self, kind: str, intention: str, source: Made) -> Made | None:
        """The source's request again with new values."""
        if source.chain is not None:
            chain = CHAINS[source.chain]
            fans = _fans_out(chain)
            count = 2 if kind == "series_parallel" and not fans else 1
            wanted = "series_parallel" if (fans or count == 2) else "series"
            if wanted != kind or (count == 2 and not chain.pairable):
                return None
            seeds = self._seeds(chain, count, list(source.seeds))
            if seeds is None:
                return None
            change = "for " + " and for ".join(fill(chain.subject, seed) for seed in seeds)
            message = _again_message(intention, change, chain.topic)
            return self._chain_task(source.chain, seeds, dict(source.extras), intention, message, source.turn)
        if (source.function is None or source.arguments is None or kind not in ("single", "parallel")
                or not self.bank.gold.get(source.function)):  # new values come from BFCL's gold calls of it
            return None
        function, phrasing = source.function, PHRASINGS[source.function]
        if kind == "parallel":
            first, second = self._two_subjects(function, source.arguments)
            if second is None:
                return None
            variants = [first, second]
            change = "for " + " and for ".join(fill(phrasing.subject, v) for v in variants)
        else:
            variant, change = self._variant(function, source.arguments)
            if variant is None:
                return None
            variants = [variant]
        calls = _run([(function, v) for v in variants])
        if calls is None:
            return None
        task = Task(kind, intention, (_again_message(intention, change, phrasing.noun),), calls, source.turn,
                    origin=f"template:{function}:again")
        return Made(task, self.turn, function=function if kind == "single" else None,
                    arguments=variants[0] if kind == "single" else None, mentions=_mentions(calls),
                    subject_text=fill(phrasing.subject, variants[0]))

    def _variant(self, function: str, arguments: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
        """``arguments`` with a new subject, or one changed extra value; and how the user says so."""
        phrasing = PHRASINGS[function]
        used = self._values_used(function)
        options: list[tuple[dict[str, Any], str]] = []
        for gold in self.bank.gold[function]:
            candidate = {**arguments, **_subject(phrasing, gold)}
            if _subject(phrasing, gold) != _subject(phrasing, arguments) and candidate not in used:
                options.append((candidate, "for " + fill(phrasing.subject, candidate)))
            for parameter, text in phrasing.changes.items():
                value = gold.get(parameter)
                changed = {**arguments, parameter: value}
                if value is not None and value != arguments.get(parameter) and changed not in used:
                    options.append((changed, text.format(value=render_value(value))))
        if not options:
            return None, ""
        return self.rng.choice(options)

    def _other(self, kind: str, intention: str, source: Made, family: str, latest: bool) -> Made | None:
        """Another function (or chain) of the family, about the source's subject."""
        subject = source.mentions[family]
        asked = {call.function for call in source.task.calls}
        example = next(p for p in PHRASINGS.values() if p.family == family)
        ref = example.ref
        if kind in ("series", "series_parallel"):
            if intention == "partial_information":
                return None
            names = sorted(n for n, c in CHAINS.items() if c.family == family
                           and _fans_out(c) == (kind == "series_parallel") and c.steps[0].function not in asked)
            if not names:
                return None
            name = self.rng.choice(names)
            chain = CHAINS[name]
            seed = {p: subject[p] for p in chain.seed_parameters if p in subject}
            if len(seed) != len(chain.seed_parameters):
                return None
            extras = self._extras(chain, seed)
            message = chain.ask.replace("{subject}", chain.ref).format(**{k: render_value(v) for k, v in extras.items()})
            message = _long(intention, chain.kind, message)
            return self._chain_task(name, (seed,), extras, intention, message, source.turn)
        members = sorted(f for f, p in PHRASINGS.items() if p.family == family and f not in asked)
        count = 2 if kind == "parallel" else 1
        if len(members) < count or (intention == "partial_information" and not latest):
            return None
        chosen = self.rng.sample(members, count)
        built = [self._about(name, subject) for name in chosen]
        if any(arguments is None for arguments in built):
            return None
        calls = _run([(name, arguments) for name, arguments in zip(chosen, built, strict=True) if arguments])
        if calls is None:
            return None
        phrasings = [PHRASINGS[name] for name in chosen]
        extra = fill(phrasings[0].extra, built[0] or {}) if count == 1 else ""
        nouns = " and ".join(p.noun for p in phrasings)
        if intention == "partial_information":
            message = f"And {nouns}{extra}?"
        else:
            what = phrasings[0].what if count == 1 else "What are"
            message = _long(intention, example.kind, f"{what} {nouns} {phrasings[0].prep} {ref}{extra}?")
        task = Task(kind, intention, (message,), calls, source.turn, origin=f"template:{'+'.join(chosen)}:about")
        return Made(task, self.turn, function=chosen[0] if count == 1 else None,
                    arguments=built[0] if count == 1 else None, mentions=_mentions(calls),
                    subject_text=fill(phrasings[0].subject, built[0] or {}))

    # -- helpers ---------------------------------------------------------------------------------------------
    def _about(self, function: str, subject: dict[str, Any]) -> dict[str, Any] | None:
        """Arguments of ``function`` about ``subject`` (by parameter name, else by position), its other stated
        values from one of BFCL's gold calls of it."""
        phrasing = PHRASINGS[function]
        names = phrasing.subject_parameters
        if set(names) == set(subject):
            mapped = dict(subject)
        elif len(names) == len(subject):
            mapped = dict(zip(names, subject.values(), strict=True))
        else:
            return None
        if phrasing.extra_parameters:
            if not self.bank.gold.get(function):
                return None
            gold = self.rng.choice(self.bank.gold[function])
            mapped.update({name: gold[name] for name in phrasing.extra_parameters})
        return mapped

    def _two_subjects(self, function: str, base: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
        phrasing = PHRASINGS[function]
        used = self._values_used(function)
        subjects = [_subject(phrasing, g) for g in self.bank.gold[function]]
        taken = [_subject(phrasing, base)] if base else []
        distinct = [s for i, s in enumerate(subjects) if s not in subjects[:i] and s not in taken]
        if len(distinct) < 2:
            return {}, None
        first, second = self.rng.sample(distinct, 2)
        template = base or _stated(phrasing, self.rng.choice(self.bank.gold[function]))
        pair = ({**template, **first}, {**template, **second})
        return (pair[0], pair[1]) if not ({*map(_freeze, pair)} & {*map(_freeze, used)}) else ({}, None)

    def _seeds(self, chain: Chain, count: int, taken: list[dict[str, Any]]) -> tuple[dict[str, Any], ...] | None:
        names = chain.seed_parameters
        pool = [{n: g[n] for n in names} for g in self.bank.gold.get(chain.seed_function, []) if all(n in g for n in names)]
        distinct = [s for i, s in enumerate(pool) if s not in pool[:i] and s not in taken]
        if len(distinct) < count:
            return None
        return tuple(self.rng.sample(distinct, count))

    def _extras(self, chain: Chain, seed: dict[str, Any]) -> dict[str, Any]:
        extras: dict[str, Any] = {}
        for name, where in chain.extras.items():
            function, parameter = where.split(".")
            golds = [g for g in self.bank.gold[function] if parameter in g]
            # from the seed's own gold call where there is one: values that belong together
            same = [g for g in golds if function == chain.seed_function and all(g.get(k) == v for k, v in seed.items())]
            extras[name] = self.rng.choice(same or golds)[parameter]
        for name, choices in chain.constants.items():
            extras[name] = self.rng.choice(choices)
        return extras

    def _chain_message(self, chain: Chain, seeds: Sequence[dict[str, Any]], extras: dict[str, Any]) -> str:
        subject = " and ".join(fill(chain.subject, seed) for seed in seeds)
        return chain.ask.replace("{subject}", subject).format(**{k: render_value(v) for k, v in extras.items()})

    def _chain_task(self, name: str, seeds: Sequence[dict[str, Any]], extras: dict[str, Any], intention: str,
                    message: str, source_turn: int | None) -> Made | None:
        chain = CHAINS[name]
        steps: list[tuple[str, dict[str, Any]]] = []
        for seed in seeds:
            offset = len(steps)
            values = {**seed, **extras}
            steps.extend((step.function, _arguments(step.arguments, values, offset)) for step in chain.steps)
        calls = _run(steps)
        if calls is None:
            return None
        kind = "series_parallel" if len(seeds) > 1 or _fans_out(chain) else "series"
        task = Task(kind, intention, (message,), calls, source_turn,
                    origin=f"template:{name}" + (f"*{len(seeds)}" if len(seeds) > 1 else ""))
        mentions = {chain.family: dict(seeds[0])} if chain.family and len(seeds) == 1 else {}
        return Made(task, self.turn, chain=name, seeds=tuple(seeds), extras=extras, mentions=mentions,
                    subject_text=fill(chain.subject, seeds[0]))


def _freeze(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, sort_keys=True)


def _call_key(call: GoldCall) -> str:
    return f"{call.function}:{_freeze(call.arguments)}:{json.dumps(call.output, sort_keys=True)}"


def _arguments(template: dict[str, Any], values: dict[str, Any], offset: int) -> dict[str, Any]:
    def value(item: Any) -> Any:
        if isinstance(item, Given):
            return values[item.name]
        if isinstance(item, Read):
            return item.to_ref(offset)
        if isinstance(item, list):
            return [value(element) for element in item]
        return item

    return {name: value(item) for name, item in template.items()}


def _fans_out(chain: Chain) -> bool:
    """Some step's output feeds more than one later step: the chain has calls side by side."""
    readers: dict[int, int] = {}
    for step in chain.steps:
        for read in {r.step for r in _reads(step.arguments)}:
            readers[read] = readers.get(read, 0) + 1
    return any(count > 1 for count in readers.values())


def _reads(value: Any) -> list[Read]:
    if isinstance(value, Read):
        return [value]
    if isinstance(value, dict):
        return [r for item in value.values() for r in _reads(item)]
    if isinstance(value, list):
        return [r for item in value for r in _reads(item)]
    return []


def _again_message(intention: str, change: str, topic: str) -> str:
    if intention == "partial_information":
        return f"And {change}?"
    if intention == "coreference":
        return f"Now do the same {change}."
    return f"Going back to {topic} from earlier: now do the same {change}."


def _long(intention: str, kind: str, message: str) -> str:
    return f"Going back to the {kind} from earlier: {message[0].lower()}{message[1:]}" \
        if intention == "long_range" else message


# -- dialogues -----------------------------------------------------------------------------------------------------
def plan_kinds(rng: random.Random, switches: int) -> list[str]:
    """Four task kinds with exactly ``switches`` changes between neighbours, at least two of them tool tasks."""
    kinds = list(_KIND_WEIGHTS)
    weights = list(_KIND_WEIGHTS.values())
    while True:
        if switches == 0:
            plan = [rng.choices(["single", "series", "parallel"], [4, 3, 3])[0]] * 4
        else:
            positions = set(rng.sample(range(3), switches))
            plan = [rng.choices(kinds, weights)[0]]
            for boundary in range(3):
                if boundary in positions:
                    others = [k for k in kinds if k != plan[-1]]
                    plan.append(rng.choices(others, [_KIND_WEIGHTS[k] for k in others])[0])
                else:
                    plan.append(plan[-1])
        if sum(kind in TOOL_KINDS for kind in plan) >= 2:
            return plan


def plan_intentions(rng: random.Random, kinds: list[str]) -> list[str]:
    """A hidden intention for each tool task after the first (none for the others): a long-range dependency
    only where an earlier task's values lie three or more turns back, and twice as likely there (it is
    possible in few places); stating everything half as likely as each hidden intention."""
    starts = [sum(2 if k == "clarification" else 1 for k in kinds[:index]) for index in range(len(kinds))]
    stated = [start + (1 if kind == "clarification" else 0) for start, kind in zip(starts, kinds, strict=True)]
    plan = []
    for index, kind in enumerate(kinds):
        if not index or kind not in TOOL_KINDS:
            plan.append("none")
            continue
        far = any(starts[index] - stated[j] >= 3 for j in range(index) if kinds[j] != "chitchat")
        options = {"none": 0.5, "partial_information": 1.0, "coreference": 1.0, "long_range": 2.0 if far else 0.0}
        plan.append(rng.choices(list(options), list(options.values()))[0])
    return plan


def realise(bank: Bank, split: str, rng: random.Random, kinds: list[str], intentions: list[str]) -> list[Made] | None:
    """One attempt at the planned tasks; a planned intention no construction carries falls back to none."""
    realiser = Realiser(bank, split, rng)
    for kind, intention in zip(kinds, intentions, strict=True):
        tries = [partial(realiser.hidden, kind, intention)] * 4 if intention != "none" else []
        tries += [partial(realiser.fresh, kind)] * 6
        if not any((made := attempt()) is not None and realiser.add(made) for attempt in tries):
            return None
    return realiser.made


def make_dialogue(bank: Bank, spec: GenerationSpec, split: str, index: int, openings: set[str]) -> Dialogue:
    """Dialogue ``index`` of ``split``; its first message is none of ``openings`` (a reference agent and a
    reader tell dialogues apart by it), and is added to them."""
    rng = random.Random(f"wild:{spec.seed}:{split}:{index}")
    switches = index % 4
    kinds = plan_kinds(rng, switches)
    intentions = plan_intentions(rng, kinds)
    best: list[Made] | None = None
    for _ in range(_ATTEMPTS):
        made = realise(bank, split, rng, kinds, intentions)
        if made is None or made[0].task.messages[0] in openings:
            continue
        if best is None or _carried(made, intentions) > _carried(best, intentions):
            best = made
        if _carried(best, intentions) == len(kinds):
            break
    if best is None:
        raise RuntimeError(f"no realisation of {split} dialogue {index}: {kinds}")
    tasks = tuple(m.task for m in best)
    openings.add(tasks[0].messages[0])
    needed = sorted({call.function for task in tasks for call in task.calls})
    functions = tuple(sorted({*needed, *distractors(rng, bank, needed, spec.distractors)}))
    return Dialogue(f"wild-{split}-{index:03d}", split, count_switches([t.kind for t in tasks]), functions, tasks)


def _carried(made: list[Made], intentions: list[str]) -> int:
    return sum(m.task.intention == wanted for m, wanted in zip(made, intentions, strict=True))


_NAME_TOKEN = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_COMMON_TOKENS = {"get", "by", "calculate", "calc", "the", "of", "from", "based", "on", "to", "name"}


def _tokens(name: str) -> set[str]:
    return {t.lower() for t in _NAME_TOKEN.findall(name)} - _COMMON_TOKENS


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def confusability(bank: Bank, a: str, b: str) -> float:
    """How easily one function is taken for another: same family, same parameter names, similar names."""
    family = PHRASINGS[a].family if a in PHRASINGS else ""
    same_family = bool(family) and b in PHRASINGS and PHRASINGS[b].family == family
    parameters = [set(bank.schemas[name].get("parameters", {}).get("properties", {})) for name in (a, b)]
    return 3.0 * same_family + 2.0 * _jaccard(*parameters) + _jaccard(_tokens(a), _tokens(b))


def distractors(rng: random.Random, bank: Bank, needed: list[str], count: int) -> list[str]:
    """``count`` functions besides ``needed``: the most confusable with any of them, and one at random."""
    candidates = sorted(name for name in bank.schemas if name not in needed and name in FUNCTIONS
                        and not any(frozenset({name, other}) in EQUIVALENT for other in needed))
    ties = {name: rng.random() for name in candidates}
    ranked = sorted(candidates, key=lambda g: (-max(confusability(bank, f, g) for f in needed), ties[g]))
    chosen = ranked[: max(count - 1, 0)]
    rest = [name for name in candidates if name not in chosen]
    return chosen + ([rng.choice(rest)] if count and rest else [])


def generate(tests: Sequence[BfclTest], spec: GenerationSpec = DEFAULT_SPEC) -> tuple[list[dict[str, Any]], list[Dialogue]]:
    """The toolset (BFCL's docs of every function offered, in the order that numbers them) and the dialogues
    (train first)."""
    bank = Bank.from_tests(tests)
    openings: set[str] = set()
    dialogues = [make_dialogue(bank, spec, split, index, openings)
                 for split, size in (("train", spec.train), ("test", spec.test)) for index in range(size)]
    used = sorted({name for dialogue in dialogues for name in dialogue.functions})
    random.Random(f"wild:{spec.seed}:names").shuffle(used)
    return [bank.schemas[name] for name in used], dialogues


def render_files(toolset: list[dict[str, Any]], dialogues: list[Dialogue]) -> tuple[bytes, bytes]:
    """The two data files' bytes, exactly as committed."""
    # keys keep their order: BFCL's parameters are shown in the order BFCL lists them
    toolset_bytes = (json.dumps({"format": TOOLSET_FORMAT, "functions": toolset}, indent=1, ensure_ascii=False)
                     + "\n").encode()
    dialogue_bytes = "".join(json.dumps(d.to_dict(), ensure_ascii=False) + "\n" for d in dialogues).encode()
    return toolset_bytes, dialogue_bytes


def fingerprint_of(toolset_bytes: bytes, dialogue_bytes: bytes) -> str:
    return hashlib.sha256(toolset_bytes + b"\0" + dialogue_bytes).hexdigest()


def statistics(dialogues: list[Dialogue]) -> dict[str, Any]:
    """Counts by split, task kind, hidden intention and switches (what PROVENANCE.md reports)."""
    from collections import Counter

    tasks = [task for d in dialogues for task in d.tasks]
    return {
        "dialogues": dict(Counter(d.split for d in dialogues)),
        "kinds": dict(Counter(t.kind for t in tasks)),
        "intentions": dict(Counter(t.intention for t in tasks)),
        "switches": dict(sorted(Counter(d.switches for d in dialogues).items())),
        "origins": dict(Counter(t.origin.split(":")[0] for t in tasks)),
        "turns": dict(sorted(Counter(len(d.messages) for d in dialogues).items())),
        "functions_offered": dict(sorted(Counter(len(d.functions) for d in dialogues).items())),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m otbench.envs.wild.generate", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DATA_DIRECTORY, help="where to write the files (default: the package)")
    parser.add_argument("--check", action="store_true", help="regenerate and compare with the files in --out")
    args = parser.parse_args(argv)
    toolset, dialogues = generate(load_tests(ALL_CATEGORIES))
    toolset_bytes, dialogue_bytes = render_files(toolset, dialogues)
    if args.check:
        same = ((args.out / TOOLSET_FILE).read_bytes() == toolset_bytes
                and (args.out / DIALOGUES_FILE).read_bytes() == dialogue_bytes)
        print("the committed data is what the generator makes" if same else "the committed data DIFFERS")
        return 0 if same else 1
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / TOOLSET_FILE).write_bytes(toolset_bytes)
    (args.out / DIALOGUES_FILE).write_bytes(dialogue_bytes)
    print(json.dumps({"fingerprint": fingerprint_of(toolset_bytes, dialogue_bytes), "functions": len(toolset),
                      **statistics(dialogues)}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
