"""Realise planned Wild tasks from BFCL's data: requests phrased from the catalogue, with BFCL's gold values.

A :class:`Realiser` builds one dialogue's tasks left to right. A task with everything stated is a BFCL
question as BFCL wrote it, a request phrased from a function's :class:`~otbench.envs.wild.catalogue.Phrasing`
with the arguments of one of BFCL's gold calls, a chain seeded with BFCL's values, a clarification (subject
left out, then given) or small talk. A task with a hidden intention builds on an earlier one: the same request
with a new value, or another function of the same family about the earlier subject. Every gold call is run
with the project's implementations and its output kept; a realisation that cannot be made returns None and
the caller tries again.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from otbench.envs.bfcl.data import BfclTest
from otbench.envs.bfcl.functions import FUNCTIONS
from otbench.envs.bfcl.gold import parse_call
from otbench.envs.wild.catalogue import (
    ANSWERS,
    CHAINS,
    CHITCHAT,
    CHITCHAT_ABOUT,
    OPENERS,
    PHRASINGS,
    Chain,
    Given,
    Phrasing,
    Read,
    fill,
    render_value,
)
from otbench.envs.wild.metrics import resolve
from otbench.envs.wild.scenario import GoldCall, Task

_ENTITY_FAMILIES = frozenset({"stock", "movie", "city", "country", "product", "ip", "zipcode"})
"""Families whose subject is a thing people chat about (small talk names one of them, never a list of numbers)."""

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


def realise(bank: Bank, split: str, rng: random.Random, kinds: list[str], intentions: list[str]) -> list[Made] | None:
    """One attempt at the planned tasks; a planned intention no construction carries falls back to none."""
    realiser = Realiser(bank, split, rng)
    for kind, intention in zip(kinds, intentions, strict=True):
        tries = [partial(realiser.hidden, kind, intention)] * 4 if intention != "none" else []
        tries += [partial(realiser.fresh, kind)] * 6
        if not any((made := attempt()) is not None and realiser.add(made) for attempt in tries):
            return None
    return realiser.made
