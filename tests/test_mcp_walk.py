"""The user's walk of docs/environments/mcp.md, end to end with a scripted LM: ten tasks, ``otbench optimize --env
mcp``, then ``otbench serve-docs`` and the SDK's client listing the learned descriptions and calling a tool through
the proxy. On the page's own server (mcp-server-time, as setup installs it; skipped without it), with the page's
tasks, commands and client as printed; and on the test server, from docs learned by a run and kept in the results
ledger."""

import json
import os
import re
import shlex
import sys
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from scripted_lm import prompt_text, scripted_lm
from test_mcp_env import TOY, TOY_TASKS, write_tasks
from test_optimize_cli import any_role_reply

from otbench import optimize, results
from otbench.envs.mcp.servers import SERVERS
from otbench.envs.mcp.shown import shown_names
from otbench.exits import run_main
from otbench.run import evaluation, optimization

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "environments" / "mcp.md"
TIME_TOOLS = ["get_current_time", "convert_time"]
# the page's ten questions, answered by a scripted agent the way a good one would: the call each needs
ZONES = {"Tokyo": "Asia/Tokyo", "Kolkata": "Asia/Kolkata", "Nairobi": "Africa/Nairobi", "Lima": "America/Lima",
         "Bogota": "America/Bogota", "Jakarta": "Asia/Jakarta", "Dubai": "Asia/Dubai", "Singapore": "Asia/Singapore",
         "Kathmandu": "Asia/Kathmandu", "UTC": "UTC", "Riyadh": "Asia/Riyadh", "Yangon": "Asia/Yangon",
         "Dhaka": "Asia/Dhaka"}


def page_blocks(language):
    return re.findall(rf"```{language}[^\n]*\n(.*?)```", PAGE.read_text(), re.DOTALL)


def command(starting):
    """The page's shell command that starts with ``starting``, its lines joined, ``$HOME`` expanded, as arguments."""
    text = next(block for block in page_blocks("bash") if block.startswith(starting))
    return shlex.split(os.path.expandvars(text.replace("\\\n", " ")))


def time_call(question):
    """The call that answers one of the page's questions."""
    places = [name for name in re.findall(r"[A-Z][a-z]+|UTC", question) if name in ZONES]
    time = re.search(r"\b(\d\d:\d\d)\b", question)
    if time:
        return "convert_time", {"source_timezone": ZONES[places[0]], "time": time.group(1),
                                "target_timezone": ZONES[places[1]]}
    if "ahead of" in question:
        return "convert_time", {"source_timezone": ZONES[places[1]], "time": "12:00", "target_timezone": ZONES[places[0]]}
    return "get_current_time", {"timezone": ZONES[next(place for place in places if place != "UTC")]}


def scripted_agent(answer, shown_of):
    def reply(messages):
        text = prompt_text(messages)
        request = re.search(r"Request: (.*)$", text, re.MULTILINE)
        if '{"calls"' in text and request:
            name, arguments = answer(request.group(1).strip())
            return json.dumps({"calls": [{"name": shown_of[name], "arguments": arguments}]})
        return any_role_reply(messages)

    return reply


@contextmanager
def scripted(monkeypatch, reply):
    @contextmanager
    def open_scripted(options, ledger, phases=("agent",)):
        yield {phase: scripted_lm(reply, ledger=ledger, phase=phase) for phase in phases}

    monkeypatch.setattr(evaluation, "open_lms", open_scripted)
    monkeypatch.setattr(optimization, "open_lms", open_scripted)
    yield


def _optimized(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        run_main(optimize.main, [*argv, "--json", "--quiet"])
    out, err = capsys.readouterr()
    assert stop.value.code == 0, err
    return json.loads(out.strip().splitlines()[-1])


def test_the_pages_ten_tasks_are_what_the_walk_says():
    tasks = [json.loads(line) for line in page_blocks("json")[0].splitlines()]
    assert len(tasks) == 10 and all(set(task) == {"question", "answer"} for task in tasks)
    assert command("otbench optimize")[:4] == ["otbench", "optimize", "--env", "mcp"]
    assert command("otbench serve-docs")[:2] == ["otbench", "serve-docs"]


@pytest.mark.skipif(not SERVERS["time"].installed(), reason="mcp-server-time is installed by scripts/setup.sh")
def test_the_walk_runs_as_printed_on_the_pages_server(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    home.mkdir()
    (home / "mcp-time").symlink_to(SERVERS["time"].environment)  # the page's ~/mcp-time: setup's environment
    monkeypatch.setenv("HOME", str(home))
    # the page's `otbench` command, as this checkout's (an installed console script may be another checkout's)
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    shim = bin_folder / "otbench"
    shim.write_text(f'#!/bin/sh\nPYTHONPATH={shlex.quote(str(ROOT))} exec {shlex.quote(sys.executable)} '
                    '-m otbench.console "$@"\n')
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_folder}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tasks.jsonl").write_text(page_blocks("json")[0])
    opaque = {real: shown for shown, real in shown_names(TIME_TOOLS, "names_only").items()}
    with scripted(monkeypatch, scripted_agent(time_call, opaque)):
        summary = _optimized(command("otbench optimize")[2:], capsys)
    assert summary["n"] == 4 and summary["test"]["score"] == 1.0  # learned on four tasks, scored on six
    client = page_blocks("python")[0].replace("RUN_ID", summary["run_id"])
    exec(compile(client, str(PAGE), "exec"), {"__name__": "__main__"})  # noqa: S102 - the page's client as printed
    printed = capsys.readouterr().out.splitlines()
    described = dict(line.split(" - ", 1) for line in printed[:2])
    assert set(described) == set(TIME_TOOLS)
    assert described["convert_time"] != "Convert time between timezones"  # the learned words, not the server's
    assert printed[2].endswith("09:00:00+05:30")  # the call went through to the server


TEN = [*TOY_TASKS, *[{"question": f"Say {word}.", "answer": word,
                      "calls": [{"name": "echo", "arguments": {"text": word}}]} for word in ("red", "green", "blue")],
       {"question": "What does a plum cost?", "answer": 0.3, "metric": "numeric",
        "calls": [{"name": "price", "arguments": {"item": "plum"}}]}]


def test_the_walk_on_the_test_server_with_docs_from_the_results_ledger(tmp_path, monkeypatch, capsys):
    by_question = {task["question"]: task["calls"][0] for task in TEN}
    tasks = write_tasks(tmp_path, TEN)
    opaque = {real: shown for shown, real in shown_names(["add", "price", "total", "echo", "write_note", "read_notes"],
                                                         "names_only").items()}
    with scripted(monkeypatch, scripted_agent(lambda q: (by_question[q]["name"], by_question[q]["arguments"]), opaque)):
        summary = _optimized(["--env", "mcp", "--mcp", TOY, "--tasks", str(tasks), "--setting", "names_only",
                              "--optimizer", "toolobserver", "--out", str(tmp_path / "learned_docs")], capsys)
    assert summary["test"]["score"] == 1.0
    with pytest.raises(SystemExit) as stop:
        run_main(results.main, ["add", summary["run_id"]])
    capsys.readouterr()
    assert stop.value.code == 0
    key = next((Path(os.environ["OTBENCH_RESULTS"]) / "runs").glob("*.json")).stem
    proxy = StdioServerParameters(command=sys.executable, args=["-m", "otbench.serve_docs", "--mcp", TOY,
                                                                "--docs", key[:8]],
                                  env={"OTBENCH_RESULTS": os.environ["OTBENCH_RESULTS"]})

    async def session():
        async with Client(proxy) as client:
            tools = {tool.name: tool.description for tool in (await client.list_tools()).tools}
            return tools, await client.call_tool("price", {"item": "melon"})

    tools, priced = anyio.run(session)
    assert set(tools) == set(opaque)  # the server's own names, not function_N
    assert tools["price"] not in ("Price.", "")  # learned under function_N, served under price
    assert not any(re.search(r"function_\d", text) for text in tools.values())
    assert priced.content[0].text == "3.2"
