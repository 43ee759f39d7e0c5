"""python -m otbench.serve: the embedded model on its own, shared by several commands.

It loads the model once (the same llama.cpp server a command starts for itself), prints the
server's URL, and serves until Ctrl-C. Point any command at it with ``--api-base URL`` (or
``OTBENCH_API_BASE=URL``) and the default ``--lm embedded``; give it ``--slots N`` to answer N
commands at a time, and ``--host 0.0.0.0`` to let other machines use it.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from otbench.cli import API_BASE_VARIABLE, OneLineParser, positive_int, run_main
from otbench.llm.server import EmbeddedServer, ServerSettings
from otbench.llm.session import LMOptions, embedded_identity
from otbench.outputs import check_outputs


def build_parser() -> OneLineParser:
    parser = OneLineParser(prog="python -m otbench.serve", description=__doc__.splitlines()[0])
    parser.add_argument("--embedded-model", default="qwen-1.5b", help="embedded weights: qwen-1.5b or qwen-0.5b")
    parser.add_argument("--gguf", type=Path, default=None, help="serve this local GGUF file instead")
    parser.add_argument("--threads", type=positive_int, default=None, help="CPU threads (default: all cores)")
    parser.add_argument("--slots", type=positive_int, default=1,
                        help="requests answered at a time (default 1; each gets its own context)")
    parser.add_argument("--context-per-slot", type=positive_int, default=ServerSettings.context_per_slot,
                        help=f"context tokens per slot (default {ServerSettings.context_per_slot})")
    parser.add_argument("--host", default=ServerSettings.host,
                        help="address to listen on (default 127.0.0.1; 0.0.0.0 for other machines)")
    parser.add_argument("--port", type=positive_int, default=None, help="port (default: a free one)")
    return parser


def settings_of(argv: list[str] | None) -> ServerSettings:
    """The server settings the command line asks for; the weights are checked (and assembled) here."""
    parser = build_parser()
    args = parser.parse_args(argv)
    check_outputs(parser, args, cache=args.gguf is None)  # the embedded weights are assembled in the cache
    path, _ = embedded_identity(LMOptions(embedded_model=args.embedded_model, gguf=args.gguf))
    return ServerSettings(path, threads=args.threads or ServerSettings.threads, slots=args.slots,
                          context_per_slot=args.context_per_slot, host=args.host, port=args.port or 0)


def main(argv: list[str] | None = None, *, until: threading.Event | None = None) -> int:
    """Serve until Ctrl-C (or until ``until`` is set)."""
    settings = settings_of(argv)
    with EmbeddedServer(settings) as url:
        print(url, flush=True)
        print(f"serving; use it with --api-base {url} (or export {API_BASE_VARIABLE}={url}); Ctrl-C stops it",
              file=sys.stderr, flush=True)
        (until or threading.Event()).wait()
    return 0


if __name__ == "__main__":
    run_main(main)
