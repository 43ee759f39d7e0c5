"""Whether a working call fits the request it was made for, read by code.

With no success bit (test-time learning), a call that worked says only that the tool accepted its
arguments: a small agent that picks the wrong tool fills it with values of its own (a ticker ``AAPL``
for a density question, ``n=5, k=3, p=0.7`` for a question that gives coordinates), and the call
still works. A call that answers a request nearly always carries something the request said (a
name, a number, a date) or something an earlier call returned. So a working call none of whose
values can be found there, and whose argument names the request does not use either (``stock_name`` for
a question that never says "stock"), is a sign of a wrong choice, found with no LLM call; so is a call whose
argument names the request does not use while it uses every parameter name of another tool (``a, b`` called for
"a base of 500 meters and a height of 300 meters" beside a tool taking ``base`` and ``height``).

Values are matched leniently, to err only in the safe direction (taking a made-up value for one the
request gave): text by its words, numbers as written in digits or words, as a percentage, or as the ratio
of two numbers said ("one in six" gives 1/6).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise, permutations
from typing import Any

from otbench.core.trajectory import Trajectory, json_text

_WORD = re.compile(r"[^\W_]+")
_NUMBER = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|-?\.\d+")
_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
    "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000,
    "million": 1_000_000, "billion": 1_000_000_000, "dozen": 12, "half": 0.5, "quarter": 0.25,
    "once": 1, "twice": 2, "single": 1, "double": 2, "triple": 3, "pair": 2,
}
_MAX_RATIO_NUMBERS = 40  # ratios are tried between this many numbers at most: a long output has thousands


def leaf_values(value: Any) -> Iterator[Any]:
    """The plain values inside an argument (nested lists and objects opened); flags and nulls say nothing of
    where a value came from and are left out."""
    if isinstance(value, dict):
        for item in value.values():
            yield from leaf_values(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from leaf_values(item)
    elif value is not None and not isinstance(value, bool) and str(value).strip():
        yield value


class Sources:
    """The texts a call's values may come from (the request, earlier outputs), read once for lookups."""

    def __init__(self, texts: Iterable[str]) -> None:
        self.text = " ".join(text.casefold() for text in texts)
        said_words = _WORD.findall(self.text)
        self.words = set(said_words)
        # adjacent words run together: a request that says "zip code" uses the name ``zipcode``
        self.compounds = {first + second for first, second in pairwise(said_words)}
        said = [float(number.replace(",", "")) for number in _NUMBER.findall(self.text)]
        said += [float(_NUMBER_WORDS[word]) for word in self.words if word in _NUMBER_WORDS]
        plain = list(dict.fromkeys(said))
        self.numbers = set(plain) | {n / 100 for n in plain} | {n * 100 for n in plain}
        few = plain[:_MAX_RATIO_NUMBERS]
        self.numbers |= {a / b for a, b in permutations(few, 2) if b}

    def gives(self, value: Any) -> bool:
        """Whether ``value`` can be read in these texts."""
        number = _as_number(value)
        if number is not None:
            return any(math.isclose(number, said, rel_tol=1e-3, abs_tol=1e-9) for said in self.numbers)
        text = str(value).casefold().strip()
        words = _WORD.findall(text)
        return text in self.text or (bool(words) and all(word in self.words for word in words))


def _as_number(value: Any) -> float | None:
    """``value`` as a float, None where it is not a number or is one no float holds (read as text then)."""
    try:
        return float(value) if isinstance(value, (int, float)) else float(str(value).replace(",", "").strip())
    except (ValueError, OverflowError):
        return None


def _name_words(names: Iterable[str]) -> set[str]:
    """The words of argument names that can be looked for in a request (``stock`` of ``stock_name``; three letters or
    more: ``n`` or ``p`` say nothing)."""
    return {word for name in names for word in _WORD.findall(name.casefold().replace("_", " ")) if len(word) > 2}


def _used(word: str, request: Sources) -> bool:
    return word in request.words or f"{word}s" in request.words or word in request.compounds


@dataclass(frozen=True)
class OffRequest:
    """A working call that does not fit the request it was made for."""

    step: int
    """Its index among the attempt's steps."""
    reason: str
    """Why, as the end of a sentence: "with no value the request gives", "while the request names the parameters of
    function_3 (base, height)"."""


def calls_off_request(trajectory: Trajectory, parameters: Mapping[str, Sequence[str]]) -> list[OffRequest]:
    """The attempt's working calls that do not fit its request: a call none of whose values can be read in the
    request or an earlier call's output and none of whose argument names the request uses; or a call none of whose
    argument names the request uses while it uses every parameter name of another tool (``parameters``: each tool's
    parameter names, as shown or learned)."""
    return _off_request(trajectory, parameters, refused=False)


def refused_off_request(trajectory: Trajectory, parameters: Mapping[str, Sequence[str]]) -> list[OffRequest]:
    """The attempt's refused calls that do not fit its request: by the same two signs as :func:`calls_off_request`,
    or to a tool some of whose parameters the request never names while it names every parameter of another tool
    (``year, country`` refused for a question on a country's deaths beside a tool taking ``country``). A refusal alone
    does not say the tool was the wrong one (the right tool refuses a date in the wrong format); with one of these
    signs, the call was made to the wrong tool."""
    return _off_request(trajectory, parameters, refused=True)


def _off_request(trajectory: Trajectory, parameters: Mapping[str, Sequence[str]], *,
                 refused: bool) -> list[OffRequest]:
    """The calls (working ones, or refused ones) that do not fit the request."""
    texts = [trajectory.question]
    request = Sources(texts)
    fitting = {name: names for name, names in parameters.items()
               if (words := _name_words(names)) and all(_used(word, request) for word in words)}
    found = []
    for index, step in enumerate(trajectory.steps):
        arguments = step.call.arguments if isinstance(step.call.arguments, dict) else {}
        values = list(leaf_values(arguments))
        named = any(_used(word, request) for word in _name_words(arguments))
        if step.ok != refused and values and (not named or refused):
            other = next((name for name in fitting if name != step.call.name), None)
            refusal = "which it refused, " if refused else ""
            if not named and not any(Sources(texts).gives(value) for value in values):
                found.append(OffRequest(index, f"{refusal}with no value the request gives"))
            elif other is not None and (not named or step.call.name not in fitting):
                found.append(OffRequest(index, f"{refusal}while the request names the parameters of {other} "
                                               f"({', '.join(fitting[other])})"))
        if step.ok:
            texts.append(json_text(step.output))
    return found
