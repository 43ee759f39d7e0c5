"""What each tool did across many attempts, counted by code, so a small editor compares tools from facts.

Offline environments share one toolset across all tasks, and what distinguishes its tools is
statistical: which sources a search tool's results come from, in which situations an engine's
suggestions held the evaluation and in which they lost it. A 1.5B editor reading ten raw
transcripts restates the generic description for every tool; given these counts as short fact
lines it names each tool's domain or phase. Everything here is read from the calls the agent made
and the environment's per-call outcome signal (:attr:`CallResult.value`), nothing else.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from otbench.calls import CallResult
from otbench.trajectory import Trajectory

_HOST = re.compile(r"https?://(?:www\.)?([A-Za-z0-9.-]+\.[A-Za-z]{2,})")
_TOP_SOURCES = 3       # sources named per tool: enough to name a domain, short enough for a small model
_MIN_SITUATION_CALLS = 2  # a situation with fewer calls says nothing about a tool
_MIN_CITED_CALLS = 4  # a claim the agent reads as fact ("best in the endgame") needs more calls on every side


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
    by_situation: dict[str, list[float]] = field(default_factory=lambda: defaultdict(lambda: [0.0, 0.0]))
    """Situation -> [sum of values, calls with a value]."""

    def add(self, step: CallResult) -> None:
        self.calls += 1
        if not step.ok:
            self.failed += 1
        elif _empty(step.output):
            self.empty += 1
        elif not isinstance(step.output, (int, float, bool)):
            text = step.output if isinstance(step.output, str) else json.dumps(step.output, default=str)
            self.sources.update(host.lower() for host in _HOST.findall(text))
        if step.value is not None:
            self.value_sum += step.value
            self.valued += 1
            if step.situation:
                totals = self.by_situation[step.situation]
                totals[0] += step.value
                totals[1] += 1

    @property
    def mean_value(self) -> float | None:
        return self.value_sum / self.valued if self.valued else None

    def situation_means(self, minimum: int = _MIN_SITUATION_CALLS) -> dict[str, float]:
        """Average outcome per situation where the tool has at least ``minimum`` calls."""
        return {situation: total / count for situation, (total, count) in self.by_situation.items()
                if count >= minimum}

    def to_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "failed": self.failed, "empty": self.empty, "sources": dict(self.sources),
                "value_sum": self.value_sum, "valued": self.valued,
                "by_situation": {situation: list(totals) for situation, totals in self.by_situation.items()}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolUsage:
        usage = cls(calls=data["calls"], failed=data["failed"], empty=data["empty"], sources=Counter(data["sources"]),
                    value_sum=data["value_sum"], valued=data["valued"])
        for situation, totals in data["by_situation"].items():
            usage.by_situation[situation] = list(totals)
        return usage


def _signed(value: float) -> str:
    return f"{value:+.2f}"


class UsageBook:
    """Per-tool usage counts of one toolset, kept across iterations (a checkpoint holds them)."""

    def __init__(self, tools: dict[str, ToolUsage] | None = None) -> None:
        self.tools: dict[str, ToolUsage] = tools or {}

    def add(self, trajectories: list[Trajectory], names: set[str]) -> None:
        """Count every call of these attempts to a tool in ``names`` (calls to unknown names say nothing)."""
        for trajectory in trajectories:
            for step in trajectory.steps:
                if step.call.name in names:
                    self.tools.setdefault(step.call.name, ToolUsage()).add(step)

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
        for situation, value, calls, rivals in self._standings(name):
            rank = ""
            if rivals:
                better = sum(rival > value for rival in rivals)
                rank = ("; the best tool there" if better == 0 else
                        "; the worst tool there" if better == len(rivals) else f"; {better} tools did better there")
            lines.append(f"in the {situation}: {calls} calls, average outcome {_signed(value)}{rank}")
        return lines

    def _standings(self, name: str, minimum: int = _MIN_SITUATION_CALLS) -> list[tuple[str, float, int, list[float]]]:
        """Each situation where the tool has at least ``minimum`` calls, in order: its average outcome there,
        its calls there, and the other tools' averages in that situation (those with as many calls)."""
        usage = self.tools[name]
        rivals = [u.situation_means(minimum) for other, u in self.tools.items() if other != name]
        return [(situation, value, int(usage.by_situation[situation][1]),
                 [means[situation] for means in rivals if situation in means])
                for situation, value in sorted(usage.situation_means(minimum).items())]

    def summary(self, name: str) -> str:
        """The facts that tell this tool from the others, as one or two plain sentences for its doc:
        where its results come from, and the situations where it was the best or the worst of the set, each
        claim resting on at least ``_MIN_CITED_CALLS`` calls of every tool compared (the editor's facts show
        thinner counts, with their numbers)."""
        usage = self.tools.get(name)
        if usage is None:
            return ""
        sentences = []
        if usage.sources:
            hosts = [host for host, _ in usage.sources.most_common(_TOP_SOURCES)]
            sentences.append(f"Results seen came from {', '.join(hosts)}.")
        best, worst = [], []
        for situation, value, _, rivals in self._standings(name, _MIN_CITED_CALLS):
            if rivals and all(value > rival for rival in rivals):
                best.append(situation)
            elif rivals and all(value < rival for rival in rivals):
                worst.append(situation)
        if best:
            sentences.append(f"Best of the tools in the {' and the '.join(best)}.")
        if worst:
            sentences.append(f"Worst of the tools in the {' and the '.join(worst)}.")
        return " ".join(sentences)

    def to_dict(self) -> dict[str, Any]:
        return {name: usage.to_dict() for name, usage in self.tools.items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> UsageBook:
        return cls({name: ToolUsage.from_dict(usage) for name, usage in data.items()})
