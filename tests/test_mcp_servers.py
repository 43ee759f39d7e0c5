"""The three shipped third-party MCP servers: their task files, fixtures and gold docs; and, with the servers
installed (scripts/setup.sh does it; skipped without), every task's calls answering it on the real server, in every
setting, with no real tool name reaching the agent under opaque names."""

import json
import re
import sqlite3
import subprocess
from contextlib import closing

import pytest

from otbench.core.calls import ToolCall
from otbench.envs.mcp import fixtures
from otbench.envs.mcp.metrics import found_answer
from otbench.envs.mcp.servers import SERVERS
from otbench.envs.registry import EnvironmentOptions, make_environment
from otbench.evals.harness import run_rollouts

NAMES = tuple(SERVERS)


def _tasks(name):
    return [json.loads(line) for line in SERVERS[name].tasks.read_text().splitlines()]


def _gold(name):
    return json.loads(SERVERS[name].gold_docs.read_text())["tools"]


@pytest.mark.parametrize("name", NAMES)
def test_each_server_has_thirty_tasks_with_calls_and_gold_docs_for_every_tool_they_call(name):
    tasks = _tasks(name)
    assert len(tasks) >= 30 and {task["split"] for task in tasks} == {"train", "test"}
    assert sum(task["split"] == "train" for task in tasks) == 10
    assert len({task["id"] for task in tasks}) == len({task["question"] for task in tasks}) == len(tasks)
    gold = _gold(name)
    assert {call["name"] for task in tasks for call in task["calls"]} <= set(gold)
    assert all(doc["description"] and doc["returns"] for doc in gold.values())


def test_the_fixtures_come_out_the_same_every_time(tmp_path):
    for folder in (tmp_path / "a", tmp_path / "b"):
        fixtures.build_repository(folder)
        fixtures.build_shop(folder)

    def history(folder):
        return subprocess.run(["git", "log", "--all", "--format=%H %an %s"], cwd=folder / fixtures.REPOSITORY,
                              capture_output=True, text=True, check=True).stdout

    assert history(tmp_path / "a") == history(tmp_path / "b") and len(history(tmp_path / "a").splitlines()) == 8
    dumps = []
    for folder in (tmp_path / "a", tmp_path / "b"):
        with closing(sqlite3.connect(folder / "shop.db")) as database:
            dumps.append("\n".join(database.iterdump()))
    assert dumps[0] == dumps[1]
    named = {sha for task in _tasks("git") for sha in re.findall(r"\b[0-9a-f]{7,40}\b", json.dumps(task))}
    assert named and all(any(line.startswith(short) for line in history(tmp_path / "a").splitlines()) for short in named)


def test_the_sqlite_answers_come_from_the_shop_database(tmp_path):
    fixtures.build_shop(tmp_path)
    with closing(sqlite3.connect(tmp_path / "shop.db")) as database:
        database.row_factory = sqlite3.Row
        for task in _tasks("sqlite"):
            call = task["calls"][0]
            if call["name"] != "read_query":
                continue
            rows = str([dict(row) for row in database.execute(call["arguments"]["query"])])  # as the server writes them
            assert found_answer(task.get("metric", "contains"), task["answer"], [rows], 1e-6), task["id"]


installed = pytest.mark.skipif(not all(server.installed() for server in SERVERS.values()),
                               reason="the shipped MCP servers are installed by scripts/setup.sh")


@installed
@pytest.mark.parametrize("name", NAMES)
def test_every_tasks_calls_answer_it_on_the_real_server_and_opaque_names_hide_the_real_ones(name):
    gold = _gold(name)
    for setting in ("base", "names_only"):
        with make_environment(EnvironmentOptions("mcp", setting, own={"mcp_server": name}), workers=4) as env:
            assert set(env.tools) == set(gold)  # the gold docs document every tool the server lists
            for tool, doc in gold.items():
                assert set(doc["parameters"]) == set(env.tools[tool].input_schema.get("properties", {})), tool
            tasks = env.tasks("train") + env.tasks("test")
            trajectories = run_rollouts(env, env.oracle_agent(tasks), env.toolbox(), tasks, num_threads=4,
                                        progress=False)
            assert env.summarise(trajectories) == {"score": 1.0, "n": float(len(tasks))}
            if setting == "names_only":
                shown = json.dumps([tool.openai_schema() for tool in env.toolbox().toolset(env.toolset)])
                errors = [env.execute(env.toolset, ToolCall(tool, {})).error or "" for tool in env.shown]
                named = re.compile("|".join(rf"\b{re.escape(real)}\b" for real in env.tools))
                assert not named.search(shown) and not named.search(" ".join(errors)), errors


@installed
def test_the_gold_setting_shows_the_true_docs_under_the_servers_names():
    with make_environment(EnvironmentOptions("mcp", "gold", own={"mcp_server": "time"})) as env:
        shown = {tool.name: tool for tool in env.toolbox().toolset(env.toolset)}
        assert shown["convert_time"].description == _gold("time")["convert_time"]["description"]
        assert shown["convert_time"].parameters[1].name == "time"
