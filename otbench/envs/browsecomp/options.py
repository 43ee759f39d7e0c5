"""Command-line options of BrowseComp Domains (see :mod:`otbench.envs.registry`)."""

from __future__ import annotations

import argparse

from otbench.envs.browsecomp import defaults
from otbench.errors import ConfigError


def add_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--retriever", default="bm25", help="BrowseComp: search backend, bm25 (default) or dense")
    group.add_argument("--snippet-chars", type=int, default=defaults.SNIPPET_CHARS,
                       help=f"BrowseComp: characters of page text shown per search result (default {defaults.SNIPPET_CHARS})")
    group.add_argument("--max-calls", type=int, default=defaults.MAX_CALLS,
                       help=f"BrowseComp: searches per question before the agent must answer (default {defaults.MAX_CALLS})")


def toolsets() -> str:
    """The tool sets ``--toolset`` chooses from, for its help."""
    from otbench.envs.browsecomp.tools import TOOLSETS

    return f"{', '.join(TOOLSETS)} (default {TOOLSETS[0]})"


def check(args: argparse.Namespace) -> None:
    from otbench.envs.browsecomp.retrieval import RETRIEVERS
    from otbench.envs.browsecomp.tools import TOOLSETS

    if args.toolset is not None and args.toolset not in TOOLSETS:
        raise ConfigError(f"unknown toolset {args.toolset!r}; choose from {', '.join(TOOLSETS)}")
    if args.retriever not in RETRIEVERS:
        raise ConfigError(f"unknown retriever {args.retriever!r}; choose from {', '.join(RETRIEVERS)}")
    if args.snippet_chars < 20:
        raise ConfigError("--snippet-chars must be at least 20")
    if args.max_calls < 1:
        raise ConfigError("--max-calls must be at least 1")
    if args.setting != "names_only":
        raise ConfigError("--setting applies to BFCL; BrowseComp's tool sets are chosen with --toolset")


def build(args: argparse.Namespace, *, workers: int = 1):  # a BrowseCompEnvironment
    from otbench.envs.browsecomp.env import BrowseCompEnvironment
    from otbench.envs.browsecomp.tools import TOOLSETS

    return BrowseCompEnvironment(toolset=args.toolset or TOOLSETS[0], retriever=args.retriever,
                                 snippet_chars=args.snippet_chars, max_calls=args.max_calls)
