"""``python -m otbench.envs.browsecomp.generate``: build the BrowseComp Domains corpus, questions and indexes.

Deterministic: the same seed and sizes give byte-identical files on every machine with the
pinned packages (the default world is checked against its reference fingerprint). Data goes
under ``$OTBENCH_CACHE/browsecomp/<spec key>/``; ``python -m otbench.prepare`` runs this with defaults.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time

from otbench.arguments import OneLineParser, positive_int
from otbench.envs.browsecomp.dataset import DEFAULT_SPEC, GenerationSpec, build_dataset, load_dataset
from otbench.envs.browsecomp.retrieval import RETRIEVERS, open_retriever
from otbench.envs.browsecomp.world import TINY, WorldSize
from otbench.errors import ConfigError
from otbench.exits import run_main


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m otbench.envs.browsecomp.generate", description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=DEFAULT_SPEC.seed, help="world seed (default 0)")
    parser.add_argument("--train", type=positive_int, default=DEFAULT_SPEC.train, help="train questions (default 83)")
    parser.add_argument("--test", type=positive_int, default=DEFAULT_SPEC.test, help="test questions (default 747)")
    parser.add_argument("--confounders", type=int, default=DEFAULT_SPEC.confounders,
                        help="namesake pages per fictional evidence page (default 5)")
    parser.add_argument("--tiny", action="store_true", help="a tiny world (for trying things out)")
    parser.add_argument("--no-news", action="store_true", help="leave out the real news articles")
    parser.add_argument("--index", default="bm25", help="indexes to build: bm25, dense, bm25,dense or none")
    parser.add_argument("--force", action="store_true", help="regenerate even if the data exists")
    return parser


def spec_from(args: argparse.Namespace) -> GenerationSpec:
    size = TINY if args.tiny else WorldSize()
    return GenerationSpec(seed=args.seed, size=size, confounders=args.confounders, train=args.train, test=args.test,
                          news=not args.no_news)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    indexes = [] if args.index == "none" else args.index.split(",")
    if any(kind not in RETRIEVERS for kind in indexes):
        raise ConfigError(f"unknown index {args.index!r}; use bm25, dense, bm25,dense or none")
    spec = spec_from(args)
    started = time.perf_counter()
    if args.force:
        build_dataset(spec)
    dataset = load_dataset(spec)
    report = json.loads((dataset.directory / "meta.json").read_text())
    report["load_or_generate_seconds"] = round(time.perf_counter() - started, 1)
    for kind in indexes:
        started = time.perf_counter()
        open_retriever(kind, dataset.documents, dataset.directory / "index", dataset.fingerprint)
        report[f"{kind}_index_seconds"] = round(time.perf_counter() - started, 1)
    report["directory"] = str(dataset.directory)
    report["spec"] = dataclasses.asdict(spec)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    run_main(main)
