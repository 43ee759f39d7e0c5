"""python -m otbench.serve: the embedded model on its own, shared by several commands.

It loads the model once (the same llama.cpp server a command starts for itself), prints the
server's URL, and serves until Ctrl-C. Point any command at it with ``--api-base URL`` (or
``OTBENCH_API_BASE=URL``) and the default ``--lm embedded``; give it ``--slots N`` to answer N
commands at a time, and ``--host 0.0.0.0`` to let other machines use it.

It speaks OpenAI's Chat Completions API, tool calling included: a request with ``tools`` gets structured
``tool_calls`` (``tool_choice``, several calls a reply, ``role: "tool"`` results, streaming), so the OpenAI SDK and
the agent frameworks built on it run on the embedded model with learned docs (``otbench export --format openai``);
see :mod:`otbench.llm.tool_calls`.

It answers only requests that carry its API key: a new random one unless ``--api-key`` gives one
(to restart it without telling its clients again). The key is printed under the URL; clients pass it
with ``--api-key KEY`` or ``OTBENCH_API_KEY=KEY``, except on this machine, where the server is in the
record of running embedded servers (:mod:`otbench.llm.running`) and ``--api-base`` alone finds its key.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from otbench.arguments import OneLineParser, port_number, positive_int
from otbench.cli import refuse_unusable_address
from otbench.errors import ConfigError
from otbench.exits import run_main
from otbench.llm.server import EmbeddedServer, ServerSettings, new_api_key
from otbench.llm.session import API_BASE_VARIABLE, API_KEY_VARIABLE, LMOptions, embedded_identity
from otbench.outputs import check_outputs


def build_parser() -> OneLineParser:
    parser = OneLineParser(prog="python -m otbench.serve", description=__doc__.splitlines()[0])
    parser.add_argument("--embedded-model", default="qwen-1.5b",
                        help="embedded weights: qwen-1.5b or qwen-0.5b (default qwen-1.5b)")
    parser.add_argument("--gguf", type=Path, default=None, help="serve this local GGUF file instead (default: the "
                                                                "embedded weights)")
    parser.add_argument("--threads", type=positive_int, default=None, help="CPU threads (default: all cores)")
    parser.add_argument("--slots", type=positive_int, default=1,
                        help="requests answered at a time (default 1; each gets its own context)")
    parser.add_argument("--context-per-slot", type=positive_int, default=ServerSettings.context_per_slot,
                        help=f"context tokens per slot (default {ServerSettings.context_per_slot})")
    parser.add_argument("--host", default=ServerSettings.host,
                        help="address to listen on (default 127.0.0.1; 0.0.0.0 for other machines)")
    parser.add_argument("--port", type=port_number, default=None, help="port (default: a free one)")
    parser.add_argument("--api-key", default=None, metavar="KEY",
                        help="the key clients must send (default: a new random one, printed)")
    return parser


def settings_of(argv: list[str] | None) -> tuple[ServerSettings, str]:
    """The server settings the command line asks for, and the API key to serve with; the weights are checked
    (and assembled) here."""
    parser = build_parser()
    args = parser.parse_args(argv)
    check_outputs(parser, args, cache=args.gguf is None)  # the embedded weights are assembled in the cache
    if args.api_key is not None and not args.api_key.strip():
        raise ConfigError("--api-key: expected a key, got an empty one")
    refuse_unusable_address(args.host, args.port or 0, "--host/--port")  # before the model loads, not after
    path, _ = embedded_identity(LMOptions(embedded_model=args.embedded_model, gguf=args.gguf))
    settings = ServerSettings(path, threads=args.threads or ServerSettings.threads, slots=args.slots,
                              context_per_slot=args.context_per_slot, host=args.host, port=args.port or 0,
                              tool_calls=True)
    settings.check()
    return settings, args.api_key or new_api_key()


def main(argv: list[str] | None = None, *, until: threading.Event | None = None) -> int:
    """Serve until Ctrl-C (or until ``until`` is set). Standard output: the URL, then the API key."""
    settings, api_key = settings_of(argv)
    with EmbeddedServer(settings, api_key, shared=True) as url:
        print(url, flush=True)
        print(api_key, flush=True)
        print(f"serving; use it with --api-base {url} --api-key KEY (the key above; or export "
              f"{API_BASE_VARIABLE}={url} {API_KEY_VARIABLE}=KEY; on this machine --api-base alone finds the key); "
              "Ctrl-C stops it", file=sys.stderr, flush=True)
        (until or threading.Event()).wait()
    return 0


if __name__ == "__main__":
    run_main(main)
