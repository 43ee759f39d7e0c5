"""When an MCP server misbehaves: each case, with a deliberately bad fixture server, and what the user sees.

A crash, a hang, a protocol error or a huge result fails the one call, with a one-line error the agent and the
editor read, and the run goes on (a dead or hung server is started again); a server that cannot be brought back
stops the run on one line, keeping what it finished, and ``--resume`` continues it. Nothing a server returns is
run.
"""

import json
import sys
from pathlib import Path

import mlflow
import pytest
from test_mcp_env import TESTS, TOY, TOY_TASKS, write_tasks

from otbench import MCPEnvironment, evaluate, mlflow_store
from otbench.core.calls import ToolCall
from otbench.exits import run_main

RAW = f"{sys.executable} {TESTS / 'mcp_raw_server.py'}"
EXECUTED = Path("/tmp/otbench-mcp-was-executed")


def _env(tmp_path, flags, **options):
    return MCPEnvironment(f"{TOY} {flags}", write_tasks(tmp_path), **options)


def test_a_server_that_crashes_during_a_call_fails_that_call_and_is_started_again(tmp_path):
    with _env(tmp_path, "--crash-on add") as env:
        crashed = env.execute("mcp", ToolCall("add", {"a": 1, "b": 2}))
        assert not crashed.ok
        assert crashed.error == ("ServerStopped: the MCP server stopped during add() (the connection closed); its last "
                                 "words: toy server: crashing on purpose; it is started again for the next call")
        assert env.execute("mcp", ToolCall("price", {"item": "pear"})).output == 0.75
        assert env.connection.restarts == 1


def test_a_server_that_hangs_fails_the_call_after_the_timeout_and_is_restarted(tmp_path):
    with _env(tmp_path, "--hang-on echo", timeout=1.0) as env:
        hung = env.execute("mcp", ToolCall("echo", {"text": "hi"}))
        assert hung.error == ("TimeoutError: echo() gave no answer within 1 s; the server was restarted and the call "
                              "not made again")
        assert env.execute("mcp", ToolCall("add", {"a": 1, "b": 2})).output == 3
        assert env.connection.restarts == 1


def test_a_huge_result_is_refused_with_its_size(tmp_path):
    with _env(tmp_path, "--huge-on echo") as env:
        huge = env.execute("mcp", ToolCall("echo", {"text": "hi"}))
        assert huge.error == ("ResultTooLarge: the tool returned 5,000,002 characters, more than the 100,000 a result "
                              "may take; ask it for less")
        assert env.connection.restarts == 0


def test_a_json_rpc_error_is_the_calls_error_and_the_session_stays(tmp_path):
    with _env(tmp_path, "--refuse add", setting="names_only") as env:
        shown = env.shown_of["add"]
        refused = env.execute("mcp", ToolCall(shown, {"a": 1, "b": 2}))
        assert refused.error == "MCPError -32603: the toy server refuses this call"
        assert env.execute("mcp", ToolCall(env.shown_of["echo"], {"text": "x"})).output == "x"
        assert env.connection.restarts == 0


def test_a_reply_that_is_not_mcp_is_a_protocol_error_and_nothing_the_server_sends_is_run(tmp_path):
    EXECUTED.unlink(missing_ok=True)
    tasks = [{"question": "Look up a.", "answer": "a", "split": split} for split in ("train", "test")]
    with MCPEnvironment(RAW, write_tasks(tmp_path, tasks)) as env:
        lookup = env.toolbox().toolset("mcp")[0]
        assert lookup.description.startswith("__import__")  # shown as the text it is
        broken = env.execute("mcp", ToolCall("lookup", {"key": "a"}))
        assert broken.error.startswith("ProtocolError: lookup() answered with a result that is not valid MCP "
                                       "(1 problems; first: Input should be a valid list)")
        assert "not MCP" in broken.error  # the stray line it wrote is named too
    assert not EXECUTED.exists()


def _evaluate(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        run_main(evaluate.main, argv)
    out, err = capsys.readouterr()
    return stop.value.code, out, err


def test_a_server_that_cannot_be_brought_back_stops_the_run_on_one_line_and_resume_finishes_it(tmp_path, capsys):
    marker = tmp_path / "server-is-broken"
    echo = {"question": "Say {word}.", "answer": "{word}", "calls": [{"name": "echo", "arguments": {"text": "{word}"}}]}
    tasks = [json.loads(json.dumps(echo).replace("{word}", word)) | {"split": "test"}
             for word in ("one", "two", "three", "four", "five")]
    tasks += [{**TOY_TASKS[1], "split": "test"}]  # add: crashes the server, which then cannot start again
    tasks += [json.loads(json.dumps(echo).replace("{word}", word)) | {"split": "test"} for word in ("six", "seven")]
    tasks += [{**TOY_TASKS[0], "split": "train"}]
    # a sample of 7 of the 8 (seed 0 leaves out "five"): the sample is the same before and after the environment is
    # opened, as --resume compares it
    argv = ["--env", "mcp", "--mcp", f"{TOY} --crash-on add --no-restart-after-crash {marker}", "--tasks",
            str(write_tasks(tmp_path, tasks)), "--agent", "oracle", "--limit", "7", "--json", "--quiet"]
    code, _, err = _evaluate(argv, capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "stopped while starting" in err and "its last words: toy server: cannot start" in err
    mlflow_store.configure()
    stopped = mlflow.search_runs(experiment_names=[mlflow_store.EXPERIMENT], output_format="list")[0]
    assert stopped.info.status != "FINISHED"
    marker.unlink()  # the server is fixed
    code, out, err = _evaluate([*argv, "--resume", stopped.info.run_id], capsys)
    assert code == 0, err
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["run_id"] == stopped.info.run_id and summary["n"] == 7
    assert summary["score"] == 6 / 7  # the call the crash took failed; every other task was answered
