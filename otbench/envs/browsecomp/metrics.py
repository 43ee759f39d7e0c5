"""Scores of one BrowseComp Domains attempt: answer accuracy, effort, evidence and tool choice.

Pure functions of what the environment recorded (the answer given, the documents seen, the
domains searched), so they are testable without a corpus:

- ``accuracy``: normalised exact match of the answer (case, accents, punctuation, articles ignored);
- ``f1``: token F1 of the answer against the gold answer (partial credit: "Kabul city" vs "Kabul");
- ``calls``: search calls made (the answer call is not counted);
- ``evidence_recall``: share of the question's evidence pages that appeared in any result;
- ``sequence_match``: similarity of the searched domains to the optimal domain sequence,
  2·LCS / (len(called) + len(optimal)): 1 only for exactly the optimal sequence.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

METRIC_NAMES = ("accuracy", "f1", "calls", "evidence_recall", "sequence_match")
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalise_answer(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()
    plain = "".join(" " if ch in string.punctuation else ch for ch in plain)
    # an answer that is only an article (Teresina's airport code is THE) keeps it
    return " ".join(_ARTICLES.sub(" ", plain).split()) or " ".join(plain.split())


def exact_match(prediction: str | None, gold: str) -> float:
    return float(prediction is not None and normalise_answer(prediction) == normalise_answer(gold))


def token_f1(prediction: str | None, gold: str) -> float:
    predicted = normalise_answer(prediction or "").split()
    expected = normalise_answer(gold).split()
    common = sum((Counter(predicted) & Counter(expected)).values())
    if not predicted or not expected or common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def evidence_recall(seen: Iterable[str], evidence: Sequence[str]) -> float:
    needed = set(evidence)
    return len(needed & set(seen)) / len(needed) if needed else 1.0


def _lcs(a: Sequence[str], b: Sequence[str]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        previous_diagonal = 0
        for j, y in enumerate(b, start=1):
            previous_diagonal, row[j] = row[j], previous_diagonal + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


def sequence_match(called: Sequence[str], optimal: Sequence[str]) -> float:
    if not called and not optimal:
        return 1.0
    return 2 * _lcs(called, optimal) / (len(called) + len(optimal))


@dataclass(frozen=True)
class AttemptScore:
    accuracy: float
    f1: float
    calls: float
    evidence_recall: float
    sequence_match: float

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def score_attempt(*, answer: str | None, gold: str, seen: Iterable[str], evidence: Sequence[str],
                  called_domains: Sequence[str], optimal_domains: Sequence[str]) -> AttemptScore:
    return AttemptScore(exact_match(answer, gold), token_f1(answer, gold), float(len(called_domains)),
                        evidence_recall(seen, evidence), sequence_match(called_domains, optimal_domains))


def summarise(scores: list[dict[str, float]]) -> dict[str, float]:
    """Means of every metric over attempts, with ``n``."""
    n = len(scores)
    summary = {name: sum(s[name] for s in scores) / n if n else 0.0 for name in METRIC_NAMES}
    summary["n"] = float(n)
    return summary
