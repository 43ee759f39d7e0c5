"""Doc contamination: how much of the learned docs states injected faults as the tools' behaviour.

An editor that learns from what tools did can write a transient failure into the docs ("this tool is
unavailable") and the error then outlives the fault. A learned sentence is *contaminated* when it is
new (not in the docs the optimizer started from) and either speaks the vocabulary of faults
(:data:`otbench.core.faults.FAULT_VOCABULARY`: "timed out", "rate limit", "retry after"...) or repeats a
run of :data:`SHARED_WORDS` words of a fault message the optimizer was shown. Numbers and tool names
are words like any other, so a message quoted with another tool's name still matches on the rest.

Reported: the share of learned sentences that are contaminated, the share of tools whose docs hold
one, and the contaminated sentences themselves (quoted, for reading what an optimizer wrote).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from otbench.core.faults import FAULT_VOCABULARY
from otbench.evals.fidelity import doc_text
from otbench.modules.tool_docs import Toolbox

SHARED_WORDS = 4
"""Words in a row a learned sentence must share with a fault message to be taken from it."""

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[a-z0-9_]+")
_VOCABULARY = [re.compile(r"(?<![a-z0-9])" + re.escape(term) + r"(?![a-z0-9])") for term in FAULT_VOCABULARY]


@dataclass(frozen=True)
class Contamination:
    """``sentence_share`` of learned sentences and ``tool_share`` of tools are contaminated; ``quotes`` are
    the contaminated sentences by tool (``toolset/tool``)."""

    sentence_share: float
    tool_share: float
    sentences: int
    tools: int
    quotes: dict[str, list[str]] = field(default_factory=dict)

    def metrics(self) -> dict[str, float]:
        return {"doc_contamination": self.sentence_share, "doc_contaminated_tools": self.tool_share}


def sentences(text: str) -> list[str]:
    return [part.strip() for part in _SENTENCE.split(text) if part and part.strip()]


def _ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def states_fault(sentence: str, message_grams: set[tuple[str, ...]]) -> bool:
    """Whether ``sentence`` speaks of faults, or repeats part of an injected fault message."""
    lowered = sentence.lower()
    return any(term.search(lowered) for term in _VOCABULARY) or bool(_ngrams(sentence, SHARED_WORDS) & message_grams)


def contamination(learned: Toolbox, start: Toolbox, fault_messages: Iterable[str],
                  toolsets: Sequence[str] | None = None) -> Contamination:
    """Contamination of ``learned`` (over ``toolsets``, default all) against the ``start`` docs it was learned
    from and the messages of the faults injected while it was learned."""
    grams: set[tuple[str, ...]] = set()
    for message in fault_messages:
        grams |= _ngrams(message, SHARED_WORDS)
    total = contaminated_sentences = tools = contaminated_tools = 0
    quotes: dict[str, list[str]] = {}
    for toolset in toolsets if toolsets is not None else learned.toolset_ids():
        for tool in learned.toolset(toolset):
            before = start.get(toolset, tool.name)
            known = set(sentences(doc_text(before))) if before is not None else set()
            new = [sentence for sentence in sentences(doc_text(tool)) if sentence not in known]
            found = [sentence for sentence in new if states_fault(sentence, grams)]
            tools += 1
            total += len(new)
            contaminated_sentences += len(found)
            if found:
                contaminated_tools += 1
                quotes[f"{toolset}/{tool.name}"] = found
    return Contamination(contaminated_sentences / total if total else 0.0,
                         contaminated_tools / tools if tools else 0.0, total, tools, quotes)
