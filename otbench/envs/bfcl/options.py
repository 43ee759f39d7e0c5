"""Command-line options of BFCL-Opaque (see :mod:`otbench.envs.registry`)."""

from __future__ import annotations

import argparse

from otbench.calls import DEFAULT_MAX_CALLS_PER_REPLY
from otbench.cli import positive_float, positive_int
from otbench.errors import ConfigError
from otbench.sandbox import DEFAULT_MAX_OUTPUT_BYTES


def add_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--setting", default="names_only",
                       help="BFCL documentation setting: gold, names_only, names_desc, names_params")
    group.add_argument("--parallel", action="store_true",
                       help="BFCL: add the exec_parallel and exec_parallel_multiple categories")
    group.add_argument("--call-timeout", type=positive_float, default=5.0,
                       help="BFCL: CPU seconds a tool call may use (default 5)")
    group.add_argument("--max-calls-per-reply", type=positive_int, default=DEFAULT_MAX_CALLS_PER_REPLY,
                       help="BFCL: calls of one reply that are run; later ones are failed calls "
                            f"(default {DEFAULT_MAX_CALLS_PER_REPLY})")
    group.add_argument("--max-output-bytes", type=positive_int, default=DEFAULT_MAX_OUTPUT_BYTES,
                       help="BFCL: a tool call whose output is larger (pickled) fails "
                            f"(default {DEFAULT_MAX_OUTPUT_BYTES})")


def toolsets() -> str:
    """What ``--toolset`` means here, for its help: nothing to choose, every test brings its own tools."""
    return "none, every test brings its own tools; their docs are chosen with --setting"


def check(args: argparse.Namespace) -> None:
    from otbench.envs.bfcl.opacity import SETTINGS

    if args.setting not in SETTINGS:
        raise ConfigError(f"unknown setting {args.setting!r}; choose from {', '.join(SETTINGS)}")
    if args.toolset is not None:
        raise ConfigError("BFCL has one toolset per test; --toolset applies to chess and browsecomp")


def build(args: argparse.Namespace, *, workers: int = 1):  # a BfclEnvironment
    from otbench.envs.bfcl.data import ALL_CATEGORIES, DEFAULT_CATEGORIES
    from otbench.envs.bfcl.env import BfclEnvironment

    categories = ALL_CATEGORIES if args.parallel else DEFAULT_CATEGORIES
    return BfclEnvironment(setting=args.setting, categories=categories, call_timeout=args.call_timeout,
                           workers=workers, max_calls_per_reply=args.max_calls_per_reply,
                           max_output_bytes=args.max_output_bytes)
