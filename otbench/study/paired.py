"""Entries of the ledger compared in pairs, task by task, one pair at a time and pooled over the pairs.

A claim such as "the learned docs beat the docs the servers advertise" rests on several pairs of runs (one per server:
its advertised docs' evaluation and its learned docs' run, scored on the same test tasks). Each pair is a paired
difference on its shared tasks; pooled, the pairs' tasks are one sample (every task an independent unit, kept apart
by its pair), so the claim gets one difference with one interval and one test, computed the way every table computes
its differences (:func:`otbench.evals.outcomes.difference`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from otbench.errors import ConfigError
from otbench.evals.outcomes import Mean, Outcomes, difference, per_task_differences, value_of
from otbench.evals.stats import Difference


@dataclass(frozen=True)
class Pair:
    """Two entries' outcomes on the tasks they share: the reference and the row compared with it."""

    label: str
    """``REFERENCE:ROW`` by the entries' first eight characters, or ``pooled``."""
    where: str
    """The environment the tasks come from (``mcp/time``), or ``pooled``."""
    reference: Outcomes
    """The reference entry's tasks (those the row was scored on too)."""
    row: Outcomes
    """The row's tasks (those the reference was scored on too)."""


@dataclass(frozen=True)
class PairedFigures:
    """What one pair (or the pooled pairs) shows on one per-task score."""

    label: str
    """As :attr:`Pair.label`."""
    where: str
    """As :attr:`Pair.where`."""
    tasks: int
    """Tasks both were scored on."""
    reference: float
    """The reference's mean score on them."""
    row: float
    """The row's mean score on them."""
    difference: Difference
    """Row minus reference, with its paired bootstrap interval and test."""
    wins: int
    """Tasks the row scored higher on."""
    losses: int
    """Tasks the row scored lower on."""
    calls: tuple[float, float] | None
    """Tool calls a task, reference then row (None where either run did not count them)."""

    def to_dict(self) -> dict[str, Any]:
        return {"pair": self.label, "where": self.where, "tasks": self.tasks, "reference": round(self.reference, 3),
                "row": round(self.row, 3), "difference": round(self.difference.value, 3),
                "interval_95": [round(self.difference.low, 3), round(self.difference.high, 3)],
                "p_value": round(self.difference.p_value, 3), "test": self.difference.test, "wins": self.wins,
                "losses": self.losses,
                "calls_per_task": [round(value, 2) for value in self.calls] if self.calls is not None else None}


def pair_of(reference: Any, row: Any) -> Pair:
    """The pair of two ledger entries (:class:`otbench.run.ledger.Entry`), refused on one line where they share no
    task."""
    label = f"{reference.key[:8]}:{row.key[:8]}"
    kept_reference, kept_row = _outcomes(reference), _outcomes(row)
    shared = {task.task for task in kept_reference.tasks} & {task.task for task in kept_row.tasks}
    if not shared:
        raise ConfigError(f"{label}: the two entries were scored on no common task; pair entries of the same "
                          "environment and test tasks")
    places = {_where(reference), _where(row)}
    return Pair(label, " / ".join(sorted(places)), _only(kept_reference, shared), _only(kept_row, shared))


def figures(pair: Pair, metric: str) -> PairedFigures:
    """The pair's figures on the per-task score ``metric``."""
    rule = Mean(metric)
    if not any(metric in task.metrics for task in pair.row.tasks):
        raise ConfigError(f"{pair.label}: no task has a {metric!r} score; choose --metric among "
                          f"{', '.join(sorted({name for task in pair.row.tasks for name in task.metrics}))}")
    per_task = per_task_differences(pair.row, pair.reference, rule)
    return PairedFigures(pair.label, pair.where, len(per_task), value_of(pair.reference, rule), value_of(pair.row, rule),
                         difference(pair.row, pair.reference, rule), sum(value > 0 for value in per_task),
                         sum(value < 0 for value in per_task), _calls(pair))


def pooled(pairs: list[Pair], where: str = "pooled") -> Pair:
    """The pairs' tasks as one sample, each task named by its pair so that equal task ids of two pairs stay two
    tasks; ``where`` names the sample (``pooled``: every pair's; else the one environment the pairs share)."""
    def tagged(index: int, outcomes: Outcomes) -> Outcomes:
        return Outcomes(tuple(replace(task, task=f"{index}/{task.task}") for task in outcomes.tasks))

    return Pair("pooled", where, Outcomes.pooled(tagged(i, pair.reference) for i, pair in enumerate(pairs)),
                Outcomes.pooled(tagged(i, pair.row) for i, pair in enumerate(pairs)))


def pooled_lines(pairs: list[Pair]) -> list[Pair]:
    """What a comparison of several pairs pools: each environment's pairs where one has several (its task sets
    side by side) and others are compared too, then every pair's."""
    if len(pairs) < 2:
        return []
    places = {pair.where: [other for other in pairs if other.where == pair.where] for pair in pairs}
    by_place = [pooled(mine, where) for where, mine in places.items() if len(mine) > 1] if len(places) > 1 else []
    return [*by_place, pooled(pairs)]


def _outcomes(entry: Any) -> Outcomes:
    outcomes = entry.result_outcomes()
    if outcomes is None:
        raise ConfigError(f"entry {entry.key[:8]} keeps no per-task outcomes (it was logged before they were kept); "
                          "run its command again")
    return outcomes


def _only(outcomes: Outcomes, tasks: set[str]) -> Outcomes:
    return Outcomes(tuple(task for task in outcomes.tasks if task.task in tasks))


def _where(entry: Any) -> str:
    """``env`` or ``env/server`` for an entry whose environment names a shipped MCP server."""
    server = dict(entry.definition.environment).get("mcp_server")
    return f"{entry.definition.env}/{server}" if server else entry.definition.env


def _calls(pair: Pair) -> tuple[float, float] | None:
    sides = (pair.reference, pair.row)
    counted = [[task.usage["tool_calls"] for task in side.tasks if "tool_calls" in task.usage] for side in sides]
    if any(not calls or len(calls) != len(side.tasks) for calls, side in zip(counted, sides, strict=True)):
        return None
    return sum(counted[0]) / len(counted[0]), sum(counted[1]) / len(counted[1])
