"""A tiny MCP server over stdio, written with the installed SDK: the hermetic tests' stand-in for a real one.

``python tests/mcp_toy_server.py`` serves four tools of a price list and two that keep notes in ``notes.txt`` of
its working folder (a file a fixture builds). A flag makes one tool misbehave on purpose, as real servers do, so the
tests see what a user sees:

- ``--crash-on TOOL``: calling it kills the server (exit code 3) after a line on standard error;
- ``--no-restart-after-crash FILE``: a crash also writes FILE, and a server started while FILE exists dies at once
  (a server that cannot be brought back);
- ``--hang-on TOOL``: calling it never answers;
- ``--huge-on TOOL``: it returns five million characters;
- ``--refuse TOOL``: it answers with a JSON-RPC error (a protocol error, not a tool error);
- ``--crash-at-start``: the server dies before the handshake.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError

PRICES = {"apple": 0.5, "pear": 0.75, "melon": 3.2, "plum": 0.3}


def build(misbehaving: dict[str, str], marker: str | None = None) -> MCPServer:
    server = MCPServer("toy-shop")

    def misbehave(tool: str) -> str | None:
        how = misbehaving.get(tool)
        if how == "crash":
            print("toy server: crashing on purpose", file=sys.stderr, flush=True)
            if marker:
                Path(marker).touch()
            os._exit(3)
        if how == "hang":
            time.sleep(3600)
        if how == "huge":
            return "x" * 5_000_000
        if how == "refuse":
            raise MCPError(code=-32603, message="the toy server refuses this call")
        return None

    @server.tool(description="Adds.")
    def add(a: int, b: int) -> int:
        return int(misbehave("add") or a + b)

    @server.tool(description="Price.")
    def price(item: str) -> float:
        odd = misbehave("price")
        if odd is not None:
            return len(odd)
        if item not in PRICES:
            raise ToolError(f"unknown item {item!r}; known: {', '.join(sorted(PRICES))}")
        return PRICES[item]

    @server.tool(description="Total.")
    def total(items: list[str], quantity: int = 1) -> float:
        misbehave("total")
        return round(sum(PRICES[item] for item in items) * quantity, 2)

    @server.tool(description="Echo.")
    def echo(text: str) -> str:
        return misbehave("echo") or text

    @server.tool(description="Note.")
    def write_note(text: str) -> str:
        with Path("notes.txt").open("a") as notes:
            notes.write(text + "\n")
        return "noted"

    @server.tool(description="Notes.")
    def read_notes() -> str:
        return Path("notes.txt").read_text()

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    for how in ("crash", "hang", "huge"):
        parser.add_argument(f"--{how}-on", action="append", default=[])
    parser.add_argument("--refuse", action="append", default=[])
    parser.add_argument("--crash-at-start", action="store_true")
    parser.add_argument("--no-restart-after-crash", default=None)
    args = parser.parse_args()
    if args.crash_at_start or (args.no_restart_after_crash and Path(args.no_restart_after_crash).exists()):
        print("toy server: cannot start", file=sys.stderr, flush=True)
        raise SystemExit(4)
    misbehaving = {tool: how for how in ("crash", "hang", "huge") for tool in getattr(args, f"{how}_on")}
    misbehaving |= dict.fromkeys(args.refuse, "refuse")
    build(misbehaving, args.no_restart_after_crash).run()


if __name__ == "__main__":
    main()
