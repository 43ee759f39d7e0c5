"""Retrieval with no agent: each request itself as the query, against the index of one docs source.

An agent's searches mix two things, the docs and the queries the agent writes; this measures the docs alone, as
ToolRet and EasyTool measure tool retrieval: the request is the query, and the tools it needs are the relevant
items. Per task: recall@1, @5, @10 and nDCG@10 (:func:`otbench.envs.pool.metrics.retrieval_scores`, one ranking).
A workflow's request names only its first tool's inputs, so its later tools are harder to find from it: the
scores are also given per kind of task.

The usage-based index is scored the same way, given the requests each tool answered (:func:`train_usage`: the train
split's requests, each credited to the tools its gold calls use, as Tool2Vec builds its index from labelled usage).
Train and test requests never share a framing or a call's arguments, but a tool's requests are worded from one
phrase, so a usage index scores what an index of *answered* requests can reach, not what the agent's own
successes give it: those are what ``--pool-index usage`` remembers during learning.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from otbench.envs.pool import metrics
from otbench.envs.pool.index import Snapshot, ToolIndex, Usage
from otbench.envs.pool.tasks import PoolTask
from otbench.evals.outcomes import Mean, Outcomes, difference, interval
from otbench.evals.stats import Difference, Interval

SCORES = ("recall_at_1", "recall_at_5", "recall_at_10", "ndcg_at_10")


@dataclass
class Scored:
    """One task's retrieval scores (shaped like a trajectory for :class:`~otbench.evals.outcomes.Outcomes`)."""

    task_id: str
    metrics: dict[str, float] = field(default_factory=dict)


def rankings(snapshot: Snapshot, index: ToolIndex, queries: Sequence[str], depth: int = metrics.DEPTH) -> list[list[str]]:
    """The index's ranking to ``depth`` for each query, the queries encoded in one batch (and kept in the store)."""
    if not queries:
        return []
    vectors = index.store.vectors(list(queries))
    _, rows = snapshot.index.search(np.ascontiguousarray(vectors), min(depth, len(snapshot.names)))
    return [[snapshot.names[row] for row in found if row >= 0] for found in rows]


def score_requests(snapshot: Snapshot, index: ToolIndex, tasks: Sequence[PoolTask],
                   to_shown: dict[str, str]) -> list[Scored]:
    """Each task's retrieval scores with its request as the one query."""
    ranked = rankings(snapshot, index, [task.text for task in tasks])
    return [Scored(task.id, {**metrics.retrieval_scores([to_shown[real] for real in task.needs], [ranking]),
                             "tools_needed": float(len(task.needs))})
            for task, ranking in zip(tasks, ranked, strict=True)]


@dataclass(frozen=True)
class WonSearch:
    """A request whose needed tool learned docs brought into the top k, where the docs they started from left it
    out: what learning a tool's docs bought, one search at a time."""

    tool: str
    """The tool needed, by its shown name."""
    request: str
    """The request, which is the query."""
    before: int | None
    """Its rank with the start docs (None: below the ranking's depth)."""
    after: int
    """Its rank with the learned docs."""
    passed: tuple[str, ...]
    """Tools ranked above it before and below it now: the neighbours it beat."""


def won_searches(tasks: Sequence[PoolTask], before: Sequence[Sequence[str]], after: Sequence[Sequence[str]],
                 to_shown: dict[str, str], k: int = 5) -> list[WonSearch]:
    """The searches learned docs won: each needed tool in the top ``k`` of ``after`` and not of ``before`` (the
    rankings of each task's request with the start and the learned docs)."""
    won = []
    for task, start, learned in zip(tasks, before, after, strict=True):
        for tool in (to_shown[real] for real in task.needs):
            if tool in learned[:k] and tool not in start[:k]:
                rank = learned.index(tool)
                was = start.index(tool) if tool in start else len(start)
                passed = tuple(other for other in start[:was] if other not in learned[:rank])
                won.append(WonSearch(tool, task.text, was + 1 if tool in start else None, rank + 1, passed))
    return won


def train_usage(tasks: Iterable[PoolTask], to_shown: dict[str, str], kept: int = 16) -> dict[str, list[str]]:
    """Shown tool name -> the first ``kept`` train requests whose gold calls use it."""
    usage: dict[str, list[str]] = {}
    for task in tasks:
        if task.split != "train":
            raise ValueError(f"task {task.id} is a {task.split} task: only train requests may build the index")
        for real in task.needs:
            if real in to_shown:
                requests = usage.setdefault(to_shown[real], [])
                if len(requests) < kept:
                    requests.append(task.text)
    return usage


def summary(scored: Sequence[Scored]) -> dict[str, Interval]:
    """Each score's mean with its 95% interval (Wilson for recall, which is 0 or 1 on a one-tool task, else the
    cluster-robust interval the project uses for means)."""
    outcomes = Outcomes.of(scored, 0)
    return {name: interval(outcomes, Mean(name)) for name in SCORES}


def paired(row: Sequence[Scored], reference: Sequence[Scored], name: str) -> Difference:
    """``row`` minus ``reference`` on score ``name``, task by task (exact McNemar where both are pass/fail)."""
    return difference(Outcomes.of(row, 0), Outcomes.of(reference, 0), Mean(name))


def by_kind(scored: Sequence[Scored]) -> dict[str, list[Scored]]:
    """Scores split into one-tool requests and workflows."""
    groups: dict[str, list[Scored]] = {"single": [], "workflow": []}
    for item in scored:
        groups["single" if item.metrics["tools_needed"] == 1 else "workflow"].append(item)
    return groups


def snapshot_of(index: ToolIndex, entries: Sequence[tuple[str, str]], usage: Usage | None = None) -> Snapshot:
    """The index of ``(name, doc text)`` entries (with the requests each answered, for a usage index)."""
    return index.snapshot(entries, usage)


def as_row(values: dict[str, Interval]) -> dict[str, Any]:
    """A summary as a JSON row: each score's value and interval."""
    return {name: {"value": round(value.value, 4), "low": round(value.low, 4), "high": round(value.high, 4)}
            for name, value in values.items()}
