"""An MCP server that advertises learned docs and forwards every call to the server they were learned on.

Any MCP client then gets the learned docs where it already gets its tools, unchanged. The proxy lists the
original server's tools under their own names with the learned descriptions and parameter descriptions in
their input schemas; everything else about a tool (its schema's types and constraints, its output schema,
annotations, title) is the server's. A tool learned under an opaque name (``function_3``) is found by the
name map the docs carry, and other opaque names its description mentions are written as the real ones. A
tool the docs leave blank, or do not document, keeps the server's own words.

A call is forwarded as it came (the tool's name, its arguments) and the server's reply is returned as it
came: the result, or the JSON-RPC error. The proxy never changes what a call does, and never makes one again.
When the original server dies during a call, that call fails with a JSON-RPC error saying so (code -32000, the
SDK's "connection closed") and the server is started again (a URL's session opened again) for the next call,
as ``--env mcp`` does (:mod:`.connection`). A call the server does not answer within the timeout (``--mcp-timeout``)
fails the same way (code -32001, "request timeout"), and the hung server is stopped and started again for the next
call: a server stuck on one call answers no other.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import TaskGroup
from mcp import Client
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

from otbench.envs.mcp import DEFAULT_TIMEOUT
from otbench.envs.mcp.connection import CLIENT, listed_tools, transport
from otbench.envs.mcp.env import TOOL_NAMES
from otbench.envs.mcp.launch import ServerLaunch
from otbench.envs.mcp.replies import one_line
from otbench.envs.mcp.shown import scrubbed
from otbench.errors import DataError
from otbench.modules.tool_docs import DocumentedTool, Toolbox

HOST = "127.0.0.1"
PATH = "/mcp"


def _learned_by_real_name(docs: Toolbox, real_names: list[str]) -> tuple[dict[str, DocumentedTool], dict[str, str]]:
    """The learned docs by the server's tool name, and the name map (shown -> real) their words are rewritten by."""
    toolsets = docs.toolset_ids()
    if len(toolsets) != 1:
        raise DataError(f"the docs hold {len(toolsets)} toolsets ({', '.join(toolsets)}): serve-docs takes the docs of "
                        "one server")
    named = docs.meta.get(TOOL_NAMES)
    real_of = {str(shown): str(real) for shown, real in named.items()} if isinstance(named, dict) else {}
    learned = {}
    for tool in docs.toolset(toolsets[0]):
        real = real_of.get(tool.name, tool.name)
        if real not in real_names:
            raise DataError(f"the docs document {tool.name!r}, which the server does not list "
                            f"({', '.join(real_names)}): were they learned on another server?")
        learned[real] = tool
    return learned, real_of


def _with_learned_words(tool: types.Tool, learned: DocumentedTool, real_of: dict[str, str]) -> types.Tool:
    description = learned.description.strip()
    if description and learned.returns.strip():
        description = f"{description} Returns: {learned.returns.strip()}"
    schema = copy.deepcopy(tool.input_schema)
    properties = schema.get("properties") if isinstance(schema, dict) else None
    for name, text in learned.parameter_descriptions.items():
        if text.strip() and isinstance(properties, dict) and isinstance(properties.get(name), dict):
            properties[name]["description"] = scrubbed(text, real_of)
    return tool.model_copy(update={"description": scrubbed(description, real_of) if description else tool.description,
                                   "input_schema": schema})


def advertised_tools(listed: list[types.Tool], docs: Toolbox) -> list[types.Tool]:
    """The server's tools with the learned docs' words (see the module's docstring), in the server's order."""
    learned, real_of = _learned_by_real_name(docs, [tool.name for tool in listed])
    return [_with_learned_words(tool, learned[tool.name], real_of) if tool.name in learned else tool
            for tool in listed]


class Upstream:
    """The session with the original server, held open by one task of ``tasks`` (the SDK's session must be entered
    and left by one task), and opened again for the next call once the server died."""

    def __init__(self, launch: ServerLaunch, tasks: TaskGroup, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.launch, self._tasks, self.timeout = launch, tasks, timeout
        self.restarts = 0
        self._started = False
        self._client: Client | None = None
        self._closed = anyio.Event()
        self._opening: anyio.Event | None = None
        self._failure: BaseException | None = None

    async def open(self) -> list[types.Tool]:
        """Start the session; the server's tools (what kept it from starting, raised as it came)."""
        try:
            client = await self._reopen()
        except MCPError:
            if self._failure is not None:
                raise self._failure from None
            raise
        return await listed_tools(client)

    async def _reopen(self) -> Client:
        if self._opening is not None:  # another call is opening it: wait for that
            await self._opening.wait()
        elif self._client is None:
            if self._started:
                self.restarts += 1
            self._started = True
            self._opening, self._failure, self._closed = anyio.Event(), None, anyio.Event()
            self._tasks.start_soon(self._keep, self._opening, self._closed)
            await self._opening.wait()
            self._opening = None
        if self._client is None:
            failure = self._failure
            raise MCPError(code=CONNECTION_CLOSED, message=f"the original MCP server {self.launch.describe()} could not "
                           f"be started again: {type(failure).__name__}: {one_line(str(failure), 300)}")
        return self._client

    async def _keep(self, opened: anyio.Event, closed: anyio.Event) -> None:
        try:
            async with Client(transport(self.launch), mode="legacy", client_info=CLIENT, cache=None) as client:
                self._client = client
                opened.set()
                await closed.wait()
        except Exception as error:  # noqa: BLE001 - a start that failed is the waiting call's error; a dead server's
            self._failure = error  # teardown, which its call reported
        finally:
            self._client = None
            opened.set()

    async def call(self, params: types.CallToolRequestParams) -> types.CallToolResult:
        """The call forwarded as it came, the reply returned as it came; a server that died is started again for the
        next call (this one is not made again: it may have acted)."""
        client = self._client or await self._reopen()
        request = types.CallToolRequest(params=types.CallToolRequestParams(name=params.name, arguments=params.arguments))
        again = "started" if self.launch.owned else "reconnected"
        try:
            with anyio.fail_after(self.timeout):
                # the session's own send: a result goes back as it came, without the client's output-schema checks
                return await client.session.send_request(request, types.CallToolResult)
        except TimeoutError:
            self._drop(client)
            raise MCPError(code=REQUEST_TIMEOUT, message=f"the original MCP server did not answer {params.name}() "
                           f"within {self.timeout:g} s; it is {again} again for the next call") from None
        except MCPError as error:
            if error.code != CONNECTION_CLOSED:
                raise
            self._drop(client)
            raise MCPError(code=CONNECTION_CLOSED, message=f"the original MCP server stopped during {params.name}() "
                           f"({one_line(error.message, 200)}); it is {again} again for the next call") from None

    def _drop(self, client: Client) -> None:
        """Close the session (a server this side started is stopped with it): the next call opens a new one."""
        if self._client is client:
            self._client = None
            self._closed.set()

    def close(self) -> None:
        self._closed.set()


def proxy_server(upstream: Upstream, tools: list[types.Tool]) -> Server[Any]:
    """A server advertising ``tools`` that forwards each call to ``upstream``, reply untouched."""

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await upstream.call(params)

    return Server("otbench-docs", version="1", instructions="Tools of another MCP server, documented by otbench "
                  "from how they behaved; every call is forwarded to that server.", on_list_tools=list_tools,
                  on_call_tool=call_tool)


async def serve(upstream: ServerLaunch, docs: Toolbox, *, port: int | None = None, timeout: float = DEFAULT_TIMEOUT,
                ready: Callable[[list[types.Tool]], None] | None = None) -> None:
    """Serve the docs over stdio (or streamable HTTP on ``port`` of 127.0.0.1) until stopped, each call given up after
    ``timeout`` seconds; ``ready`` is told the tools once the original server is connected and the docs apply to it."""
    async with anyio.create_task_group() as tasks:
        original = Upstream(upstream, tasks, timeout=timeout)
        try:
            tools = advertised_tools(await original.open(), docs)
            server = proxy_server(original, tools)
            if ready is not None:
                ready(tools)
            if port is None:
                async with stdio_server() as (read_stream, write_stream):
                    await server.run(read_stream, write_stream, server.create_initialization_options())
                return
            import uvicorn

            app = server.streamable_http_app(streamable_http_path=PATH, host=HOST)
            await uvicorn.Server(uvicorn.Config(app, host=HOST, port=port, log_level="warning")).serve()
        finally:
            original.close()
