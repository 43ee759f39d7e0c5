"""``otbench serve-docs``: learned docs advertised over MCP (stdio and streamable HTTP), every call forwarded to the
original server, results and errors passed through untouched; the SDK's own client on the other end."""

import json
import re
import socket
import subprocess
import sys
import time

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from test_mcp_env import TOY, TOY_TASKS, write_tasks

from otbench import MCPEnvironment, evaluate
from otbench.envs.mcp.proxy import advertised_tools
from otbench.errors import DataError
from otbench.exits import run_main
from otbench.modules.tool_docs import DocumentedTool, ParameterSpec, Toolbox
from otbench.serve_docs import main as serve_docs

PRICE = "The unit price of one fruit in euros; for several fruits at once use {total}."


def _tool(name, properties=None):
    return types.Tool(name=name, description=f"{name}.", input_schema={"type": "object", "properties": properties or {}})


def _docs(tmp_path, setting="names_only"):
    """Docs as an optimize run writes them: the toy server's, with price's learned under the setting's names."""
    with MCPEnvironment(TOY, write_tasks(tmp_path), setting=setting) as env:
        docs = env.toolbox()
        price = docs.get("mcp", env.shown_of["price"])
        if price.parameters is None:  # names_only shows none: the optimizer learned the one it found
            price.learn_parameters([ParameterSpec("item", "string")])
        price.with_docs(description=PRICE.format(total=env.shown_of["total"]), returns="A number.",
                        parameter_descriptions={"item": "apple, pear, melon or plum"})
    return docs, docs.write(tmp_path / "docs.json")


def test_the_learned_words_go_on_the_servers_tools_under_their_own_names():
    listed = [_tool("price", {"item": {"type": "string", "description": "Item."}}), _tool("total"), _tool("echo")]
    docs = Toolbox({"mcp": [DocumentedTool("function_2", description="Price of one fruit; see function_1.",
                                           parameters=[], returns="A number."),
                            DocumentedTool("function_1", description="")]},
                   meta={"mcp_tools": {"function_1": "total", "function_2": "price", "function_3": "echo"}})
    docs.tools["mcp::function_2"].learn_parameters([])
    shown = {tool.name: tool for tool in advertised_tools(listed, docs)}
    assert list(shown) == ["price", "total", "echo"]
    assert shown["price"].description == "Price of one fruit; see total. Returns: A number."
    assert shown["price"].input_schema == listed[0].input_schema  # the server's schema: nothing learned for item
    assert shown["total"].description == "total." and shown["echo"] is listed[2]  # blank or undocumented: the server's
    with pytest.raises(DataError, match="'nope', which the server does not list"):
        advertised_tools(listed, Toolbox({"mcp": [DocumentedTool("nope")]}))
    with pytest.raises(DataError, match="2 toolsets"):
        advertised_tools(listed, Toolbox({"a": [DocumentedTool("price")], "b": [DocumentedTool("echo")]}))


async def _through(server, work):
    async with Client(server, mode="legacy") as client:
        return await work(client)


def _stdio_proxy(docs_file, flags=""):
    return StdioServerParameters(command=sys.executable, args=["-m", "otbench.serve_docs", "--mcp", f"{TOY} {flags}",
                                                               "--docs", str(docs_file), "--ungated"])


def test_over_stdio_a_client_reads_the_learned_docs_and_calls_go_through_untouched(tmp_path):
    _, docs_file = _docs(tmp_path)
    direct_server = StdioServerParameters(command=sys.executable, args=TOY.split()[1:] + ["--refuse", "add"])

    async def session(client):
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        answers = [await client.call_tool("price", {"item": "melon"}), await client.call_tool("price", {"item": "kiwi"})]
        try:
            await client.call_tool("add", {"a": 1, "b": 2})
        except MCPError as error:
            answers.append((error.code, error.message))
        return tools, [answer if isinstance(answer, tuple) else answer.model_dump(exclude={"meta"})
                       for answer in answers]

    tools, through_proxy = anyio.run(_through, _stdio_proxy(docs_file, "--refuse add"), session)
    _, direct = anyio.run(_through, direct_server, session)
    assert tools["price"].description == PRICE.format(total="total") + " Returns: A number."
    assert tools["price"].input_schema["properties"]["item"]["description"] == "apple, pear, melon or plum"
    assert tools["price"].input_schema["required"] == ["item"] and tools["add"].description == "Adds."
    assert through_proxy == direct  # a result, a tool's error and a JSON-RPC error, each as the server gave it
    assert through_proxy[1]["is_error"] and through_proxy[2] == (-32603, "the toy server refuses this call")


AGAIN = "; it is started again for the next call"


@pytest.mark.parametrize(("misbehaving", "code", "said"), [
    ("--crash-on add", -32000, r"the original MCP server stopped during add\(\) \(.*\)" + AGAIN),
    ("--hang-on add", -32001, r"the original MCP server did not answer add\(\) within 2 s" + AGAIN),
])
def test_a_call_the_original_server_dies_or_hangs_on_fails_and_the_server_is_started_again(tmp_path, misbehaving,
                                                                                           code, said):
    _, docs_file = _docs(tmp_path)
    proxy = _stdio_proxy(docs_file, misbehaving)
    proxy.args += ["--mcp-timeout", "2"]

    async def session(client):
        try:
            await client.call_tool("add", {"a": 1, "b": 2})
        except MCPError as error:
            failed = (error.code, error.message)
        return failed, await client.call_tool("price", {"item": "pear"})

    failed, priced = anyio.run(_through, proxy, session)
    assert failed[0] == code and re.fullmatch(said, failed[1]), failed
    assert priced.content[0].text == "0.75" and not priced.is_error  # the next call, on the server started again


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_over_http_any_client_and_an_mcp_environment_use_the_proxy(tmp_path, capsys):
    _, docs_file = _docs(tmp_path, setting="base")
    port = _free_port()
    proxy = subprocess.Popen([sys.executable, "-m", "otbench.serve_docs", "--mcp", TOY, "--docs", str(docs_file),
                              "--http", str(port), "--ungated"], stderr=subprocess.PIPE, text=True)
    try:
        assert proxy.stderr.readline().strip() == "serving docs that no gate checked (--ungated)"
        assert "serving 6 tools with learned docs on http://127.0.0.1:" in proxy.stderr.readline()
        url = f"http://127.0.0.1:{port}/mcp"
        for _ in range(50):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)

        async def session(client):
            tools = (await client.list_tools()).tools
            return tools, await client.call_tool("add", {"a": 20, "b": 22})

        tools, added = anyio.run(_through, url, session)
        assert {tool.name: tool.description for tool in tools}["price"].startswith("The unit price of one fruit")
        assert added.content[0].text == "42"
        with pytest.raises(SystemExit) as stop:
            run_main(evaluate.main, ["--env", "mcp", "--mcp-url", url, "--tasks", str(write_tasks(tmp_path, TOY_TASKS)),
                                     "--agent", "oracle", "--json", "--quiet"])
        out = capsys.readouterr().out
        assert stop.value.code == 0 and json.loads(out.strip().splitlines()[-1])["score"] == 1.0
    finally:
        proxy.terminate()
        proxy.wait(timeout=30)


@pytest.mark.parametrize(("argv", "message"), [
    (["--docs", "docs.json"], "needs one original server"),
    (["--mcp", TOY, "--docs", "/nonexistent/docs.json"], "no such file"),
    (["--mcp", TOY, "--docs", "0123456789abcdef"], "no such file"),  # no ledger entry: read as a file name
])
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as stop:
        run_main(serve_docs, argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_docs_of_another_server_are_refused_before_serving(tmp_path, capsys):
    stranger = Toolbox({"mcp": [DocumentedTool("convert_time", description="Converts.")]})
    stranger.write(tmp_path / "time.json")
    with pytest.raises(SystemExit) as stop:
        run_main(serve_docs, ["--mcp", TOY, "--docs", str(tmp_path / "time.json"), "--ungated"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "'convert_time', which the server does not list" in err
