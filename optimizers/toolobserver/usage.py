"""What each tool did across many attempts, counted by code, so a small editor compares tools from facts.

Offline environments share one toolset across all tasks, and what distinguishes its tools is
statistical: which sources a search tool's results come from, in which situations an engine's
suggestions held the evaluation and in which they lost it. A 1.5B editor reading ten raw
transcripts restates the generic description for every tool; given these counts as short fact
lines it names each tool's domain or phase. Everything here is read from the calls the agent made
(and, with :meth:`UsageBook.replay`, the same calls repeated on the set's other tools) and the
environment's per-call outcome signal (:attr:`CallResult.value`), nothing else.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from otbench.core.calls import CallResult, ToolCall
from otbench.core.trajectory import Trajectory, json_text

_HOST = re.compile(r"https?://(?:www\.)?([A-Za-z0-9.-]+\.[A-Za-z]{2,})")
_TOP_SOURCES = 3       # sources named per tool: enough to name a domain, short enough for a small model
_MIN_SITUATION_CALLS = 2  # a situation with fewer calls says nothing about a tool
_MIN_CITED_CALLS = 4  # a claim the agent reads as fact ("best in the endgame") needs more calls on every side
_CLEAR_MARGIN = 2.0  # standard errors by which "the best" / "the worst" must lead every other tool


def _empty(output: Any) -> bool:
    return output is None or (isinstance(output, (list, dict, str, tuple)) and not output)


@dataclass
class ToolUsage:
    """Counts for one tool across every attempt seen so far."""

    calls: int = 0
    """Calls made to it."""
    failed: int = 0
    """Calls that failed."""
    empty: int = 0
    """Calls that worked and returned nothing."""
    sources: Counter[str] = field(default_factory=Counter)
    """Web hosts named in its outputs, with how often."""
    value_sum: float = 0.0
    """Sum of the per-call outcome signal over calls that have one."""
    valued: int = 0
    """Calls that have an outcome signal."""
    replayed: set[str] = field(default_factory=set)
    """Arguments (as JSON) of the calls repeated on it from other tools' calls (:meth:`UsageBook.replay`)."""
    by_situation: dict[str, list[float]] = field(default_factory=lambda: defaultdict(lambda: [0.0, 0.0, 0.0]))
    """Situation -> [sum of values, calls with a value, sum of squared values]."""

    def add(self, step: CallResult) -> None:
        self.calls += 1
        if not step.ok:
            self.failed += 1
        elif _empty(step.output):
            self.empty += 1
        elif not isinstance(step.output, (int, float, bool)):
            text = step.output if isinstance(step.output, str) else json_text(step.output)
            self.sources.update(host.lower() for host in _HOST.findall(text))
        if step.value is not None:
            self.value_sum += step.value
            self.valued += 1
            if step.situation:
                totals = self.by_situation[step.situation]
                totals[0] += step.value
                totals[1] += 1
                totals[2] += step.value ** 2

    @property
    def mean_value(self) -> float | None:
        return self.value_sum / self.valued if self.valued else None

    def situation_outcomes(self, minimum: int = _MIN_SITUATION_CALLS) -> dict[str, Outcome]:
        """Outcome per situation where the tool has at least ``minimum`` calls."""
        return {situation: Outcome(*totals) for situation, totals in self.by_situation.items()
                if totals[1] >= minimum}

    def to_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "failed": self.failed, "empty": self.empty, "sources": dict(self.sources),
                "value_sum": self.value_sum, "valued": self.valued,
                "by_situation": {situation: list(totals) for situation, totals in self.by_situation.items()},
                "replayed": sorted(self.replayed)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolUsage:
        usage = cls(calls=data["calls"], failed=data["failed"], empty=data["empty"], sources=Counter(data["sources"]),
                    value_sum=data["value_sum"], valued=data["valued"], replayed=set(data.get("replayed", ())))
        for situation, totals in data["by_situation"].items():  # a checkpoint from before squares were kept:
            usage.by_situation[situation] = [*totals, math.inf][:3]  # spread unknown, so no clear lead
        return usage


@dataclass(frozen=True)
class Outcome:
    """A tool's outcome signal in one situation, summed over its calls there."""

    total: float
    """Sum of the values."""
    calls: float
    """Calls with a value."""
    squares: float
    """Sum of the squared values."""

    @property
    def mean(self) -> float:
        return self.total / self.calls

    @property
    def variance_of_mean(self) -> float:
        """The squared standard error of :attr:`mean` (sample variance over calls)."""
        if self.calls < 2:
            return math.inf
        variance = max(0.0, (self.squares - self.total ** 2 / self.calls) / (self.calls - 1))
        return variance / self.calls

    def clearly_above(self, other: Outcome) -> bool:
        """Ahead of ``other`` by more than ``_CLEAR_MARGIN`` standard errors of the difference: a lead that a
        handful of lucky calls does not give (four random moves can average better than four strong ones)."""
        return self.mean - other.mean > _CLEAR_MARGIN * math.sqrt(self.variance_of_mean + other.variance_of_mean)


def _signed(value: float) -> str:
    return f"{value:+.2f}"


def _arguments_key(call: ToolCall) -> str:
    return json.dumps(call.arguments, sort_keys=True, default=str)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _situation_name(situation: str) -> str:
    """The words a text would use for a situation: ``"endgame (10-15 pieces)"`` -> ``"endgame"``."""
    return situation.split(" (")[0].lower()


def _named_in(sentence: str, names: list[str]) -> set[str]:
    """The situation names ``sentence`` uses, the longer matched first so that "late endgame" is not also
    read as "endgame" (hyphens and underscores read as spaces)."""
    text = re.sub(r"[-_]", " ", sentence.lower())
    found = set()
    for name in sorted(names, key=len, reverse=True):
        pattern = rf"\b{re.escape(name)}\b"
        if re.search(pattern, text):
            found.add(name)
            text = re.sub(pattern, " ", text)
    return found


def _ahead_of(outcome: Outcome, rivals: list[Outcome]) -> int:
    """How many of the other tools averaged better in the situation (by any margin)."""
    return sum(rival.mean > outcome.mean for rival in rivals)


def _leads(outcome: Outcome, rivals: list[Outcome]) -> bool:
    return bool(rivals) and all(outcome.clearly_above(rival) for rival in rivals)


def _trails(outcome: Outcome, rivals: list[Outcome]) -> bool:
    return bool(rivals) and all(rival.clearly_above(outcome) for rival in rivals)


class UsageBook:
    """Per-tool usage counts of one toolset, kept across iterations (a checkpoint holds them)."""

    def __init__(self, tools: dict[str, ToolUsage] | None = None) -> None:
        self.tools: dict[str, ToolUsage] = tools or {}

    def add(self, trajectories: list[Trajectory], names: set[str]) -> None:
        """Count every call of these attempts to a tool in ``names`` (calls to unknown names say nothing)."""
        self.add_calls((step for trajectory in trajectories for step in trajectory.steps), names)

    def add_calls(self, steps: Iterable[CallResult], names: set[str]) -> None:
        """Count each of these calls made to a tool in ``names``."""
        for step in steps:
            if step.call.name in names:
                self.tools.setdefault(step.call.name, ToolUsage()).add(step)

    def replay(self, execute: Callable[[ToolCall], CallResult], steps: Iterable[CallResult],
               names: set[str], *, of: str | None = None) -> list[CallResult]:
        """Repeat each call in ``steps`` that worked on a tool in ``names`` once on every other tool of the set,
        with the same arguments (``execute`` makes one call outside any task), count the repeats and return
        them. Tools of one offline set take the same arguments, so every tool's outcome is counted in the very
        positions or queries the others met, not only in the few the agent happened to send it. A call that
        failed is not repeated (it would fail the same way), nor one already made or repeated: a repeat is
        outside any task, so it answers the same every time, and counting it twice would shrink the margins.
        With ``of``, only that tool's calls are repeated (on the others of ``names``, its rivals)."""
        made = {(step.call.name, _arguments_key(step.call)): step.call
                for step in steps if step.ok and step.call.name in names}
        repeats: list[CallResult] = []
        for (name, arguments), call in made.items():
            if of is not None and name != of:
                continue
            for other in sorted(names):
                usage = self.tools.setdefault(other, ToolUsage())
                if (other, arguments) not in made and arguments not in usage.replayed:
                    usage.replayed.add(arguments)
                    repeats.append(execute(replace(call, name=other)))
        self.add_calls(repeats, names)
        return repeats

    def facts(self, name: str) -> list[str]:
        """Short fact lines about one tool, each compared with the other tools where that means something."""
        usage = self.tools.get(name)
        if usage is None or not usage.calls:
            return ["not called yet"]
        lines = [f"called {usage.calls} times: {usage.failed} failed, {usage.empty} returned nothing"]
        if usage.sources:
            total = sum(usage.sources.values())
            named = ", ".join(f"{host} ({count} of {total})" for host, count in usage.sources.most_common(_TOP_SOURCES))
            lines.append(f"its results came from: {named}")
        others = [u for other, u in self.tools.items() if other != name and u.valued]
        mean = usage.mean_value
        if mean is not None:
            other_mean = (sum(u.value_sum for u in others) / sum(u.valued for u in others)) if others else None
            compared = f" (other tools: {_signed(other_mean)})" if other_mean is not None else ""
            lines.append(f"average outcome of its calls, higher is better: {_signed(mean)}{compared}")
        for situation, outcome, rivals in self._standings(name):
            rank = ""
            if rivals:
                better = _ahead_of(outcome, rivals)
                rank = ("; clearly the best tool there" if _leads(outcome, rivals) else
                        "; clearly the worst tool there" if _trails(outcome, rivals) else
                        "; the best tool there, not by a clear margin" if better == 0 else
                        f"; {better} {'tool' if better == 1 else 'tools'} did better there")
            lines.append(f"in the {situation}: {int(outcome.calls)} calls, average outcome "
                         f"{_signed(outcome.mean)}{rank}")
        return lines

    def _standings(self, name: str, minimum: int = _MIN_SITUATION_CALLS) -> list[tuple[str, Outcome, list[Outcome]]]:
        """Each situation where the tool has at least ``minimum`` calls, in order: its outcome there and the
        other tools' outcomes in that situation (those with as many calls)."""
        rivals = [u.situation_outcomes(minimum) for other, u in self.tools.items() if other != name]
        return [(situation, outcome, [outcomes[situation] for outcomes in rivals if situation in outcomes])
                for situation, outcome in sorted(self.tools[name].situation_outcomes(minimum).items())]

    def sources(self, name: str) -> str:
        """Where this tool's results came from, as one plain sentence for its doc ("" when none were named)."""
        usage = self.tools.get(name)
        if usage is None or not usage.sources:
            return ""
        return f"Results seen came from {', '.join(host for host, _ in usage.sources.most_common(_TOP_SOURCES))}."

    def standing(self, name: str) -> str:
        """Where this tool was clearly the best or the worst of the set, as plain sentences for its doc: each
        claim rests on at least ``_MIN_CITED_CALLS`` calls of every tool compared and a lead of
        ``_CLEAR_MARGIN`` standard errors over each (the editor's facts show thinner counts, with their
        numbers). "" when the counts support no claim."""
        if name not in self.tools:
            return ""
        best, worst = [], []
        for situation, outcome, rivals in self._standings(name, _MIN_CITED_CALLS):
            if _leads(outcome, rivals):
                best.append(situation)
            elif _trails(outcome, rivals):
                worst.append(situation)
        sentences = [f"Best of the tools in the {' and the '.join(best)}." if best else "",
                     f"Worst of the tools in the {' and the '.join(worst)}." if worst else ""]
        return " ".join(sentence for sentence in sentences if sentence)

    def without_contradictions(self, name: str, text: str) -> str:
        """``text`` without the sentences that tie the tool to a situation where another tool did better in the
        counts. A 1.5B editor given "in the opening: clearly the best tool there" still wrote "designed to
        play at the endgame stage"; beside the code-stated standing, such a sentence sends a small agent to
        the wrong tool. A sentence about a situation the counts do not cover is kept."""
        if name not in self.tools:
            return text
        beaten = {_situation_name(situation) for situation, outcome, rivals in self._standings(name)
                  if _ahead_of(outcome, rivals)}
        if not beaten:
            return text
        names = list({_situation_name(situation) for usage in self.tools.values() for situation in usage.by_situation})
        return " ".join(sentence for sentence in _SENTENCE_END.split(text.strip())
                        if not beaten & _named_in(sentence, names))

    def to_dict(self) -> dict[str, Any]:
        return {name: usage.to_dict() for name, usage in self.tools.items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> UsageBook:
        return cls({name: ToolUsage.from_dict(usage) for name, usage in data.items()})
