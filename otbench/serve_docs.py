"""``python -m otbench.serve_docs``: serve learned docs over MCP, every call forwarded to the original server.

``otbench serve-docs --mcp "COMMAND ARGS" --docs SOURCE`` starts an MCP server on standard input and output
(``--http PORT``: streamable HTTP at ``http://127.0.0.1:PORT/mcp``) that lists the original server's tools with
the learned descriptions and input schemas, and forwards each call to it, returning its reply untouched
(:mod:`otbench.envs.mcp.proxy`). SOURCE is what ``evaluate --docs`` takes (a docs file, ``runs:/RUN_ID`` of an
optimize run, ``prompts:/NAME@latest``) or the key of a results-ledger entry (``python -m otbench.results``
lists them; a unique prefix of eight or more characters will do). Standard output is the MCP channel: what
this command says goes to standard error.

It serves only docs that passed the gate (:mod:`otbench.optimizers.gate`): before it starts it says, tool by tool,
whether the learned doc was kept or the server's own given back, and on what evidence; docs that carry no gate record
(learned with ``--no-gate``, or before the gate existed) are refused unless ``--ungated`` says to serve them anyway.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from typing import TYPE_CHECKING, Any

from otbench.arguments import OneLineParser, port_number, positive_float
from otbench.cli import add_tracking_arguments, refuse_unusable_address
from otbench.envs.mcp import DEFAULT_TIMEOUT
from otbench.errors import ConfigError, DataError, OtbenchError, SetupError
from otbench.exits import run_main

if TYPE_CHECKING:  # the SDK and DSPy load once the options are read: --help answers at once
    from otbench.modules.tool_docs import Toolbox

LEDGER_KEY_MIN = 8
"""The shortest prefix of a ledger key taken for the key."""


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m otbench.serve_docs", description=__doc__.splitlines()[0])
    server = parser.add_argument_group("the original server (one of)")
    server.add_argument("--mcp", default=None, metavar='"COMMAND ARGS"', help="the command line that starts it (stdio)")
    server.add_argument("--mcp-url", default=None, metavar="URL", help="its streamable HTTP endpoint")
    server.add_argument("--mcp-server", default=None, metavar="NAME",
                        help="a shipped third-party server (time, sqlite, git, calculator), on its fixture")
    parser.add_argument("--docs", required=True, metavar="SOURCE",
                        help="the learned docs: a docs file, runs:/RUN_ID, prompts:/NAME@latest or a results-ledger key")
    parser.add_argument("--http", type=port_number, default=None, metavar="PORT",
                        help="serve streamable HTTP on 127.0.0.1:PORT (path /mcp) instead of stdio")
    parser.add_argument("--mcp-timeout", type=positive_float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                        help="a call the original server does not answer in this time fails, and the server is "
                             f"started again for the next call (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--ungated", action="store_true",
                        help="serve docs that carry no gate record (learned with --no-gate, or before the gate "
                             "existed): nothing then says they are no worse than the server's own")
    add_tracking_arguments(parser)
    return parser


def gate_report(docs: Toolbox, *, ungated: bool) -> list[str]:
    """What is said of the docs before they are served: each tool whose doc was learned, whether the gate kept it or
    gave the tool its starting doc back, and on what evidence. Docs with no gate record are refused on one line,
    unless ``ungated``."""
    from otbench.optimizers.gate import META_KEY

    record = docs.meta.get(META_KEY)
    if not isinstance(record, dict):
        if not ungated:
            raise ConfigError("--docs: these docs carry no gate record (learned with --no-gate, or before the gate "
                              "existed), so nothing says they are no worse than the server's own; learn them again, "
                              "or serve them anyway with --ungated")
        return ["serving docs that no gate checked (--ungated)"]
    if not record:
        return ["the gate found no learned doc to check: every tool is served with the doc it started with"]
    lines = []
    for key, decision in record.items():
        name = str(key).split("::", 1)[-1]
        kept = decision.get("kept") if isinstance(decision, dict) else None
        what = "learned doc" if kept == "learned" else "starting doc, given back"
        lines.append(f"{name}: {what} ({decision.get('evidence', '') if isinstance(decision, dict) else ''})")
    return lines


def read_docs(source: str, *, tracking_uri: str | None = None, mlruns: Any = None) -> Toolbox:
    """The docs ``source`` names: a ledger entry's final docs when it is a key (or a unique prefix) of one, else what
    :func:`otbench.run.docs_io.load_docs` reads (a file, a run's final docs, a registered prompt)."""
    from otbench.modules.tool_docs import Toolbox
    from otbench.run import ledger
    from otbench.run.docs_io import RUN_DOCS_ARTIFACT, load_docs

    if len(source) >= LEDGER_KEY_MIN and all(char in "0123456789abcdef" for char in source):
        found = ledger.starting_with(source)
        if len(found) > 1:
            raise ConfigError(f"--docs {source}: {len(found)} ledger entries start with it; give more of the key")
        if found:
            docs = found[0].artifacts.get(RUN_DOCS_ARTIFACT)
            if not isinstance(docs, dict):
                raise DataError(f"--docs {source}: that ledger entry kept no final docs (an evaluation has none)")
            return Toolbox.from_json(docs)
    if source.startswith(("runs:/", "prompts:/")):
        from otbench import mlflow_store

        mlflow_store.configure(tracking_uri, directory=mlruns)
    return load_docs(source)


def main(argv: list[str] | None = None, *, ready: Any = None) -> int:
    """Serve until stopped (Ctrl-C, or the client closing standard input); ``ready`` (tests) is told the tools."""
    parser = build_parser()
    args = parser.parse_args(argv)
    given = [name for name in ("mcp", "mcp_url", "mcp_server") if getattr(args, name)]
    if len(given) != 1:
        raise ConfigError("serve-docs needs one original server: --mcp \"COMMAND ARGS\", --mcp-url URL or --mcp-server "
                          "NAME")
    if args.http is not None:
        refuse_unusable_address("127.0.0.1", args.http, "--http")
    from otbench.envs.mcp import proxy
    from otbench.envs.mcp.launch import http, stdio

    docs = read_docs(args.docs, tracking_uri=args.tracking_uri, mlruns=args.mlruns)
    for line in gate_report(docs, ungated=args.ungated):
        print(line, file=sys.stderr, flush=True)
    if args.mcp_server:
        return _serve_shipped(args.mcp_server, docs, args.http, args.mcp_timeout, ready)
    upstream = http(args.mcp_url) if args.mcp_url else stdio(args.mcp)
    _serve(partial(proxy.serve, upstream, docs, port=args.http, timeout=args.mcp_timeout,
                   ready=_announce(args.http, ready)), upstream)
    return 0


def _serve(serving: Any, upstream: Any) -> None:
    """Run the proxy until it stops; what stopped it is one line: otbench's own error as it is, the original server's
    failure to start or answer as a :class:`~otbench.errors.SetupError` (the SDK's task groups wrap both)."""
    import anyio

    from otbench.envs.mcp.replies import one_line

    try:
        try:
            anyio.run(serving)
        except BaseExceptionGroup as group:
            raise _first_leaf(group) from None
    except (OtbenchError, KeyboardInterrupt):
        raise
    except Exception as error:  # noqa: BLE001 - whatever the SDK raised: the original server could not be served
        raise SetupError(f"the MCP server {upstream.describe()} could not be served: {type(error).__name__}: "
                         f"{one_line(str(error), 300)}") from None


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first


def _serve_shipped(name: str, docs: Toolbox, port: int | None, timeout: float, ready: Any) -> int:
    """A shipped server, on a fresh copy of its fixture for as long as it is served."""
    import shutil
    import tempfile
    from pathlib import Path

    from otbench.envs.mcp import proxy
    from otbench.envs.mcp.env import within
    from otbench.envs.mcp.servers import SERVERS

    if name not in SERVERS:
        raise ConfigError(f"unknown --mcp-server {name!r}; choose from {', '.join(SERVERS)}")
    shipped = SERVERS[name]
    launch = shipped.launch()
    folder = Path(tempfile.mkdtemp(prefix="otbench-serve-docs-"))
    try:
        if shipped.fixture is not None:
            shipped.fixture(folder)
        upstream = within(launch, folder)
        _serve(partial(proxy.serve, upstream, docs, port=port, timeout=timeout, ready=_announce(port, ready)), upstream)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


def _announce(port: int | None, ready: Any) -> Any:
    def announce(tools: list[Any]) -> None:
        where = f"http://127.0.0.1:{port}/mcp" if port is not None else "standard input and output"
        print(f"serving {len(tools)} tools with learned docs on {where}; Ctrl-C stops it", file=sys.stderr, flush=True)
        if ready is not None:
            ready(tools)

    return announce


if __name__ == "__main__":
    run_main(main)
