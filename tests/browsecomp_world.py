"""A tiny BrowseComp Domains world for tests, generated once per test session (a few seconds)."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

from otbench.envs.browsecomp.anchors import NewsArticle
from otbench.envs.browsecomp.dataset import Dataset, GenerationSpec, generate
from otbench.envs.browsecomp.env import BrowseCompEnvironment
from otbench.envs.browsecomp.world import TINY

TINY_SPEC = GenerationSpec(seed=3, size=TINY, train=6, test=14, news=False)
FIXTURE_NEWS = [
    NewsArticle("https://www.bbc.co.uk/news/world-1", "Harbour reopens", "The harbour reopened on Monday.", "2017/1/2"),
    NewsArticle("https://www.aljazeera.com/news/2017/2/3/rain", "Heavy rain", "Rain fell across the region.", "2017/2/3"),
]


@functools.cache
def tiny_dataset() -> Dataset:
    documents, questions, _ = generate(TINY_SPEC, FIXTURE_NEWS)
    directory = Path(tempfile.mkdtemp(prefix="otbench-browsecomp-"))
    return Dataset(documents, questions[: TINY_SPEC.train], questions[TINY_SPEC.train :], "tiny-fixture", directory)


def tiny_env(**options) -> BrowseCompEnvironment:  # BrowseCompEnvironment's options
    return BrowseCompEnvironment(dataset=tiny_dataset(), **options)
