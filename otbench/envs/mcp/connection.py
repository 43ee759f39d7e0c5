"""One MCP session with a server, usable from any thread, that survives the server hanging or dying.

The MCP SDK is asynchronous and otbench's rollouts run on threads, so the session lives on an event loop
of its own thread, and every call is handed to it and waited for with a timeout. The SDK's session must
be opened and closed by one task: a keeper task holds it open until told to close it.

What the user sees when the server misbehaves (each a failed call whose error the agent and the editor
read, never an exception that stops the run):

- a call that gets no answer within the timeout fails with ``TimeoutError: ...``; the server is then
  stopped and started again for the next call (a hung server answers nothing more), and the call is not
  made again: it may have acted;
- a server that dies during a call fails it with ``ServerStopped: ...`` and the last line it wrote to its
  standard error; it is started again for the next call;
- a JSON-RPC error (an unknown tool, arguments the server refuses) fails the call with ``MCPError CODE: ...``;
  a result that is not valid MCP fails it with ``ProtocolError: ...``; the session stays open;
- lines on the server's standard output that are not MCP are noted, and a timeout that follows says so.

Only a server that cannot be started (or, behind a URL, reached) stops the run, with a one-line
:class:`~otbench.errors.SetupError`; what the run finished is kept and ``--resume`` continues it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import io
import logging
import os
import sys
import tempfile
import threading
from collections.abc import Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO, TypeVar

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT, CallToolResult, Implementation, Tool
from pydantic import ValidationError

from otbench.envs.mcp.launch import ServerLaunch
from otbench.envs.mcp.replies import one_line, read_result
from otbench.errors import SetupError

# The SDK logs a server's non-MCP output and its own shutdown with tracebacks; the connection reports what matters
# in its errors, so those lines must not break a command's one-line output.
logging.getLogger("mcp").addHandler(logging.NullHandler())
logging.getLogger("mcp").propagate = False

START_SECONDS = 60.0
"""How long a server may take to start and answer the MCP handshake and the tool listing."""
GRACE_SECONDS = 5.0
"""Waited beyond the SDK's own timeout before a call is given up from this side."""
MAX_TOOL_PAGES = 100
"""Pages of a tool listing read at most: a server whose listing never ends cannot hang the start."""
CLIENT = Implementation(name="otbench", version="1")

_T = TypeVar("_T")


@dataclass
class _Session:
    """An open session: the SDK's client, the tools it listed, and how to close it."""

    client: Client
    tools: list[Tool]
    stop: asyncio.Event
    keeper: asyncio.Task[None]


class ServerConnection:
    """A session with the server ``launch`` names; ``timeout`` is the seconds a tool call may take.

    :meth:`open` starts it and lists the tools; :meth:`call` makes one call from any thread; :meth:`close` stops
    it. ``restarts`` counts the times a hung or dead server was started again.
    """

    def __init__(self, launch: ServerLaunch, *, timeout: float) -> None:
        self.launch = launch
        self.timeout = timeout
        self.restarts = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mcp-session", daemon=True)
        self._thread.start()
        self._lock = threading.Lock()
        self._session: _Session | None = None
        self._ever_opened = False
        descriptor, name = tempfile.mkstemp(prefix="otbench-mcp-", suffix=".stderr")
        os.close(descriptor)
        self._stderr_path = Path(name)
        # appended to: the server writes at the end whatever this side reads (a shared offset would interleave them)
        self._stderr = self._stderr_path.open("a", encoding="utf-8", errors="replace")
        self._not_mcp: str | None = None

    # -- the session's life ----------------------------------------------------------------------------------
    def open(self) -> list[Tool]:
        """The server's tools, starting it first when it is not running."""
        return self._current().tools

    def close(self) -> None:
        """Stop the server (a URL's session is closed) and the session's thread."""
        with self._lock:
            session, self._session = self._session, None
        if session is not None:
            self._stop(session)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=GRACE_SECONDS)
        if not self._thread.is_alive():
            self._loop.close()
        self._stderr.close()
        self._stderr_path.unlink(missing_ok=True)

    def _current(self) -> _Session:
        with self._lock:
            if self._session is None:
                self._session = self._start()
                if self._ever_opened:
                    self.restarts += 1
                self._ever_opened = True
            return self._session

    def _start(self) -> _Session:
        try:
            try:
                return self._run(self._open(), START_SECONDS + GRACE_SECONDS)
            except BaseExceptionGroup as group:  # the SDK's task groups wrap what went wrong
                raise _first_leaf(group) from None
        except TimeoutError:
            raise SetupError(f"the MCP server {self.launch.describe()} gave no answer to the handshake within "
                             f"{START_SECONDS:.0f} s{self._last_words()}") from None
        except (MCPError, EOFError, ConnectionError) as error:
            raise SetupError(f"the MCP server {self.launch.describe()} stopped while starting "
                             f"({type(error).__name__}: {one_line(str(error))}){self._last_words()}") from None
        except (OSError, ValueError) as error:
            raise SetupError(f"the MCP server {self.launch.describe()} could not start: {one_line(str(error))}"
                             f"{self._last_words()}") from None
        except Exception as error:  # noqa: BLE001 - whatever the SDK raised on the way, the start failed
            raise SetupError(f"the MCP server {self.launch.describe()} could not be reached: "
                             f"{type(error).__name__}: {one_line(str(error))}{self._last_words()}") from None

    async def _open(self) -> _Session:
        opened: asyncio.Future[tuple[Client, list[Tool]]] = self._loop.create_future()
        stop = asyncio.Event()
        keeper = asyncio.ensure_future(self._keep(opened, stop))
        try:
            client, tools = await asyncio.wait_for(asyncio.shield(opened), START_SECONDS)
        except BaseException:
            keeper.cancel()
            await asyncio.gather(keeper, return_exceptions=True)
            raise
        return _Session(client, tools, stop, keeper)

    async def _keep(self, opened: asyncio.Future[tuple[Client, list[Tool]]], stop: asyncio.Event) -> None:
        """Open the session, hand it over through ``opened``, hold it until ``stop``: one task enters and leaves it."""
        try:
            async with Client(transport(self.launch, self._stderr), mode="legacy", client_info=CLIENT,
                              message_handler=self._note, cache=None) as client:
                tools = await listed_tools(client)
                opened.set_result((client, tools))
                await stop.wait()
        except Exception as error:  # noqa: BLE001 - before the hand-over it is the start's failure; after it, a
            if not opened.done():  # dead server's teardown, which the calls already report
                opened.set_exception(error)

    async def _note(self, message: Any) -> None:
        """The SDK hands over what the server wrote that is not MCP as an exception: noted for the errors."""
        if isinstance(message, Exception):
            self._not_mcp = one_line(str(message), 200)

    def _discard(self, session: _Session) -> None:
        """Stop a hung or dead session; the next call starts a new one."""
        with self._lock:
            if self._session is not session:
                return  # another thread got there first
            self._session = None
        self._stop(session)

    def _stop(self, session: _Session) -> None:
        self._loop.call_soon_threadsafe(session.stop.set)
        try:
            self._run(asyncio.wait_for(asyncio.shield(session.keeper), START_SECONDS), START_SECONDS + GRACE_SECONDS)
        except Exception:  # noqa: BLE001 - a session that will not close cleanly is dropped all the same
            self._loop.call_soon_threadsafe(session.keeper.cancel)

    def _run(self, work: Awaitable[_T], seconds: float) -> _T:
        async def awaited() -> _T:
            return await work

        future = asyncio.run_coroutine_threadsafe(awaited(), self._loop)
        try:
            return future.result(seconds)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError from None

    # -- calls -----------------------------------------------------------------------------------------------
    def call(self, name: str, arguments: dict[str, Any], *, shown: str | None = None) -> tuple[Any, str | None]:
        """``(output, None)``, or ``(None, error)`` with a one-line error that names the tool as ``shown``."""
        label = shown or name
        session = self._current()
        try:
            result: CallToolResult = self._run(
                session.client.call_tool(name, arguments, read_timeout_seconds=self.timeout),
                self.timeout + GRACE_SECONDS)
        except TimeoutError:
            return None, self._hung(session, label)
        except MCPError as error:
            if error.code == REQUEST_TIMEOUT:
                return None, self._hung(session, label)
            if error.code == CONNECTION_CLOSED:
                return None, self._died(session, label)
            return None, f"MCPError {error.code}: {one_line(error.message)}"
        except ValidationError as error:
            problems = error.errors()
            first = problems[0]["msg"] if problems else "unreadable"
            return None, (f"ProtocolError: {label}() answered with a result that is not valid MCP "
                          f"({len(problems)} problems; first: {one_line(first, 200)}){self._noted()}")
        except RuntimeError as error:  # the SDK's check of a result against the tool's output schema
            return None, f"ProtocolError: {label}() answered with a result its own schema refuses ({one_line(str(error), 300)})"
        except Exception as error:  # noqa: BLE001 - the transport broke under the call: the server is gone
            return None, self._died(session, label, f"{type(error).__name__}: {one_line(str(error), 200)}")
        return read_result(result)

    def _hung(self, session: _Session, label: str) -> str:
        self._discard(session)
        restarted = "restarted" if self.launch.owned else "reconnected"
        return (f"TimeoutError: {label}() gave no answer within {self.timeout:g} s{self._noted()}; the server was "
                f"{restarted} and the call not made again")

    def _noted(self) -> str:
        """The output that was not MCP since the last error said so, as a clause of an error."""
        noted, self._not_mcp = self._not_mcp, None
        return f"; the server wrote output that is not MCP ({noted})" if noted else ""

    def _died(self, session: _Session, label: str, how: str = "the connection closed") -> str:
        self._discard(session)
        return (f"ServerStopped: the MCP server stopped during {label}() ({how}){self._last_words()}; it is "
                f"{'started' if self.launch.owned else 'reconnected'} again for the next call")

    def _last_words(self) -> str:
        """The last line the server wrote to its standard error, as a clause of an error."""
        try:
            with self._stderr_path.open("rb") as written:
                size = written.seek(0, io.SEEK_END)
                written.seek(max(0, size - 4_096))
                lines = [line for line in written.read().decode("utf-8", "replace").splitlines() if line.strip()]
        except OSError:
            return ""
        return f"; its last words: {one_line(lines[-1], 300)}" if lines else ""


def transport(launch: ServerLaunch, errlog: TextIO = sys.stderr) -> Any:
    """The SDK's transport to the server ``launch`` names; a started server's standard error goes to ``errlog``
    (undecodable bytes it writes are read as U+FFFD, not a failure)."""
    if launch.url is not None:
        return streamable_http_client(launch.url)
    program, *arguments = launch.command
    parameters = StdioServerParameters(command=program, args=arguments, env=dict(launch.env) or None, cwd=launch.cwd,
                                       encoding_error_handler="replace")
    return stdio_client(parameters, errlog=errlog)


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first exception an exception group holds, however deeply nested."""
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first


async def listed_tools(client: Client) -> list[Tool]:
    """Every tool the server lists, page by page."""
    page = await client.list_tools()
    tools = list(page.tools)
    for _ in range(MAX_TOOL_PAGES):
        if page.next_cursor is None:
            break
        page = await client.list_tools(cursor=page.next_cursor)
        tools.extend(page.tools)
    return tools
