"""The ``otbench`` command: one entry point for every command (``otbench optimize ...``).

Each command stays a module of its own (``python -m otbench.optimize`` keeps working); this face
only picks one by name and hands it the rest of the arguments, importing it only then, so
``otbench --help`` and ``otbench --version`` answer without loading DSPy or MLflow.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from importlib.metadata import PackageNotFoundError, version
from typing import NoReturn

from otbench import arguments
from otbench.arguments import OneLineParser
from otbench.exits import run_main

COMMANDS: dict[str, tuple[str, str]] = {
    "optimize": ("otbench.optimize", "learn tool docs with an optimizer, tracked in MLflow"),
    "evaluate": ("otbench.evaluate", "score an agent (with given docs) on an environment"),
    "compare": ("otbench.compare", "compare optimizers side by side: metrics with intervals, paired tests, tokens"),
    "reproduce": ("otbench.reproduce", "the paper's Table 2 as one resumable grid, on one machine or several"),
    "results": ("otbench.results", "the results ledger: keep runs with the code, load them anywhere, render tables"),
    "export": ("otbench.export", "write learned docs for other agents (OpenAI tools, JSON)"),
    "ui": ("otbench.ui", "the MLflow UI over otbench's store"),
    "bench": ("otbench.bench", "measurements: oracle rollouts, retrieval, the embedded model"),
    "prepare": ("otbench.prepare", "fetch or build what runs need offline (data, model, indexes)"),
    "serve": ("otbench.serve", "the embedded model on its own, shared by commands and machines"),
    "serve-docs": ("otbench.serve_docs", "an MCP server with learned docs, forwarding every call to the original"),
}


def package_version() -> str:
    try:
        return version("otbench")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    width = max(len(name) for name in COMMANDS) + 2  # every summary starts after the longest name and a gap
    listing = "\n".join(f"  {name:<{width}}{summary}" for name, (_, summary) in COMMANDS.items())
    parser = OneLineParser(prog="otbench", formatter_class=argparse.RawDescriptionHelpFormatter,
                           description="Make LLM agents learn opaque tools: optimize their docs, evaluate, compare.",
                           epilog=f"commands:\n{listing}\n\n'otbench COMMAND --help' shows a command's options.")
    parser.add_argument("--version", action="version", version=f"otbench {package_version()}")
    parser.add_argument("command", metavar="COMMAND", help=f"one of: {', '.join(COMMANDS)}")
    parser.add_argument("arguments", nargs=argparse.REMAINDER, help="the command's own options")
    return parser


def main(argv: list[str] | None = None) -> NoReturn:
    """Run ``otbench COMMAND ARGS...``; exits with the command's code (2 for an unknown command)."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        parser.error(f"no command given; choose from {', '.join(COMMANDS)}")
    args = parser.parse_args(argv)
    if args.command not in COMMANDS:
        parser.error(f"unknown command {args.command!r}; choose from {', '.join(COMMANDS)}")
    command = importlib.import_module(COMMANDS[args.command][0])
    arguments.THROUGH_CONSOLE = True
    run_main(command.main, args.arguments)


if __name__ == "__main__":
    main()
