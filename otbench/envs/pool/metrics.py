"""Scores of one pool attempt: was it answered right, and how well did its searches find the tools it needs.

Pure functions of what the environment recorded, so they are testable with hand-made attempts:

- ``accuracy``: the final answer is the task's answer (:func:`answer_matches`) *and* a tool the agent called
  returned it. The second condition keeps the metric about tool use: a capital city or a conversion factor an
  agent knows by heart answers nothing about whether it found and used the tools.
- ``recall_at_1``, ``recall_at_5``, ``recall_at_10``: the share of the tools the task needs that ranked within the
  top k of at least one of the agent's searches; ``ndcg_at_10``: the mean over the tools needed of 1 / log2(1 + r),
  r the best rank the tool reached in any search (0 past 10).
- ``calls``: calls of pool tools (neither searches nor the answer); ``searches``: ``search_tools`` calls.

Why the best rank over the union of the agent's searches, and not its first search: a workflow needs two or three
tools, and an agent looks for each with a search of its own, so no single search is meant to find them all; the
search that found a tool is the one that let the agent load it. Each tool needed is thus the one relevant item of
the search meant for it, whose ideal rank is 1, hence the per-tool mean for nDCG. Ranks are the index's ranks for
the agent's query to depth 10, whatever ``k`` the agent asked to see, so recall@10 does not depend on how many
results the agent chose to read. More searches give a tool more chances: ``searches`` sits beside the recalls so a
reader can tell docs that are found from an agent that searched a lot.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from otbench.envs.toolkits.metrics import matches
from otbench.evals.outcomes import Mean, MetricRule

METRIC_NAMES = ("accuracy", "recall_at_1", "recall_at_5", "recall_at_10", "ndcg_at_10", "calls", "searches")
METRIC_RULES: dict[str, MetricRule] = {name: Mean(name) for name in METRIC_NAMES}
"""Every metric is the mean over tasks of the task's own score (a task is the unit, as a query is in retrieval)."""
DEPTH = 10
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_TRUE, _FALSE = {"true", "yes"}, {"false", "no"}


def _plain(text: str) -> str:
    return " ".join(text.strip().strip("\"'`").rstrip(".").casefold().split())


def _number_in(text: str) -> float | None:
    """The one number a text holds (thousands separators and a currency sign allowed), else None."""
    found = _NUMBER.findall(text.replace(",", ""))
    return float(found[0]) if len(found) == 1 else None


def answer_matches(expected: Any, given: Any) -> bool:
    """Whether an answer the agent gave (any JSON value) is ``expected``: numbers within 0.1% (an integer exactly;
    written in a text, its one number counts), yes/no as booleans, texts equal ignoring case, spacing, quotes and a
    final full stop, lists item by item (a text's items split at commas)."""
    if isinstance(expected, bool):
        if isinstance(given, bool):
            return given == expected
        return isinstance(given, str) and _plain(given) in (_TRUE if expected else _FALSE)
    if isinstance(expected, (int, float)):
        value = given if isinstance(given, (int, float)) and not isinstance(given, bool) else \
            _number_in(given) if isinstance(given, str) else None
        if value is None:
            return False
        if isinstance(expected, int):
            return value == expected
        return math.isclose(value, expected, rel_tol=1e-3, abs_tol=1e-9)
    if isinstance(expected, list):
        items = given if isinstance(given, list) else [part for part in str(given).strip("[]").split(",")
                                                        if part.strip()] if isinstance(given, str) else None
        return items is not None and len(items) == len(expected) and all(
            answer_matches(e, g) for e, g in zip(expected, items, strict=True))
    return isinstance(given, (str, int, float)) and _plain(str(given)) == _plain(str(expected))


def best_ranks(needed: Iterable[str], rankings: Sequence[Sequence[str]]) -> dict[str, int | None]:
    """Each needed tool's best rank (from 1) over the rankings, None when no ranking holds it."""
    ranks: dict[str, int | None] = {}
    for tool in needed:
        found = [ranking.index(tool) + 1 for ranking in rankings if tool in ranking]
        ranks[tool] = min(found) if found else None
    return ranks


def retrieval_scores(needed: Sequence[str], rankings: Sequence[Sequence[str]]) -> dict[str, float]:
    """Recall@1, @5, @10 and nDCG@10 of the tools ``needed`` over the agent's search ``rankings`` (module docstring)."""
    ranks = best_ranks(needed, rankings)
    share = 1 / len(ranks) if ranks else 0.0

    def within(k: int) -> float:
        return share * sum(rank is not None and rank <= k for rank in ranks.values())

    gain = share * sum(1 / math.log2(1 + rank) for rank in ranks.values() if rank is not None and rank <= DEPTH)
    return {"recall_at_1": within(1), "recall_at_5": within(5), "recall_at_10": within(10), "ndcg_at_10": gain}


def score_attempt(*, answer: Any, answered: bool, expected: Any, outputs: Iterable[Any], needed: Sequence[str],
                  rankings: Sequence[Sequence[str]], calls: int) -> dict[str, float]:
    """A task's scores: ``answered`` says whether a final answer was given at all (None is an answer too),
    ``outputs`` are what the agent's successful tool calls returned, ``rankings`` each search's ranking to depth 10."""
    right = answered and answer_matches(expected, answer) and any(matches(expected, out) for out in outputs)
    return {"accuracy": float(right), **retrieval_scores(needed, rankings), "calls": float(calls),
            "searches": float(len(rankings))}


def summarise(scores: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Means of every metric over attempts, with ``n``."""
    n = len(scores)
    summary = {name: sum(score[name] for score in scores) / n if n else 0.0 for name in METRIC_NAMES}
    summary["n"] = float(n)
    return summary
