"""Command-line options of BrowseComp Domains (see :mod:`otbench.envs.registry`); its settings are which search
tools there are."""

from __future__ import annotations

from typing import TYPE_CHECKING

from otbench.envs.browsecomp import defaults
from otbench.envs.browsecomp.settings import DEFAULT_SETTING, SETTINGS
from otbench.envs.registry import add_refuse_repeats
from otbench.errors import ConfigError

if TYPE_CHECKING:
    from otbench.envs.registry import ArgumentGroup, EnvironmentOptions



LEARNING = "offline"
"""Its docs are learned on a train split and scored on a test split (its environment's ``learning``)."""


def add_arguments(group: ArgumentGroup) -> None:
    group.add_argument("--retriever", default="bm25", help="BrowseComp: search backend, bm25 (default) or dense")
    group.add_argument("--snippet-chars", type=int, default=defaults.SNIPPET_CHARS,
                       help=f"BrowseComp: characters of page text shown per search result (default {defaults.SNIPPET_CHARS})")
    group.add_argument("--max-calls", type=int, default=defaults.MAX_CALLS,
                       help=f"BrowseComp: searches per question before the agent must answer (default {defaults.MAX_CALLS})")
    add_refuse_repeats(group, defaults.REPEATS_REFUSED)


def settings() -> str:
    """The settings ``--setting`` chooses from, for its help."""
    return f"{', '.join(SETTINGS)} (default {DEFAULT_SETTING}): which search tools"


def check(options: EnvironmentOptions) -> None:
    from otbench.envs.browsecomp.retrieval import RETRIEVERS

    own = options.own
    if options.setting not in SETTINGS:
        raise ConfigError(f"unknown setting {options.setting!r}; choose from {', '.join(SETTINGS)}")
    if own["retriever"] not in RETRIEVERS:
        raise ConfigError(f"unknown retriever {own['retriever']!r}; choose from {', '.join(RETRIEVERS)}")
    if own["snippet_chars"] < 20:
        raise ConfigError("--snippet-chars must be at least 20")
    if own["max_calls"] < 1:
        raise ConfigError("--max-calls must be at least 1")


def build(options: EnvironmentOptions, *, workers: int = 1):  # a BrowseCompEnvironment
    from otbench.envs.browsecomp.env import BrowseCompEnvironment

    own = options.own
    return BrowseCompEnvironment(setting=str(options.setting), retriever=own["retriever"],
                                 snippet_chars=own["snippet_chars"], max_calls=own["max_calls"],
                                 repeats_refused=own["refuse_repeats"])
