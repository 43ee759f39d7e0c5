"""The commands as a user meets them: one-line errors with exit 2, JSON output, MLflow runs."""

import json

import mlflow
import pytest

from otbench import evaluate, export, optimize
from otbench.exits import run_main
from otbench.modules.tool_docs import DocumentedTool, ParameterSpec, Toolbox


def _run(main, argv, capsys):
    with pytest.raises(SystemExit) as stop:
        run_main(main, argv)
    captured = capsys.readouterr()
    return stop.value.code, captured.out, captured.err


def _command(tmp_path, name, source):
    """A command of its own process: ``source`` defines ``main``, run through ``exits.run_main`` as every command is;
    returns its argv and environment (this checkout importable)."""
    import os
    import sys

    script = tmp_path / f"{name}.py"
    script.write_text(f"from otbench import exits\n{source}exits.run_main(main, [])\n")
    return [sys.executable, str(script)], {**os.environ, "PYTHONPATH": os.getcwd()}


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--env", "atari"], "unknown environment 'atari'"),
        (["--setting", "names_everything"], "unknown setting 'names_everything'"),
        (["--agent", "genius"], "unknown agent 'genius'"),
        (["--docs", "/no/such/docs.json", "--agent", "null"], "no such file"),
        (["--lm", "no-such-provider-model"], "unknown model 'no-such-provider-model'"),
        (["--limit", "zero"], "expected a whole number"),
        (["--gguf", "/no/such/model.gguf"], "no such file"),
        (["--call-timeout", "0"], "argument --call-timeout: expected a finite number > 0, got 0"),
        (["--call-timeout", "inf"], "argument --call-timeout: expected a finite number > 0, got inf"),
        (["--agent", "null", "--lim", "3"], "unrecognized arguments: --lim 3"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(argv, message, capsys):
    code, _out, err = _run(evaluate.main, argv, capsys)
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_docs_file_that_is_not_json_is_a_user_error(tmp_path, capsys):
    bad = tmp_path / "docs.json"
    bad.write_text("{not json")
    code, _, err = _run(evaluate.main, ["--agent", "null", "--docs", str(bad)], capsys)
    assert code == 2 and "not valid JSON" in err


@pytest.mark.parametrize("setting", ["gold", "names_only", "names_desc", "names_params"])
def test_oracle_scores_perfectly_and_logs_a_run(setting, capsys):
    code, out, _ = _run(evaluate.main, ["--setting", setting, "--agent", "oracle", "--limit", "25", "--json",
                                        "--quiet"], capsys)
    summary = json.loads(out)
    assert code == 0 and (summary["E"], summary["P"], summary["A"], summary["n"]) == (1.0, 1.0, 1.0, 25)
    run = mlflow.get_run(summary["run_id"])
    assert run.data.metrics["E"] == 1.0 and run.data.tags["agent"] == "oracle"
    artifacts = {a.path for a in mlflow.MlflowClient().list_artifacts(summary["run_id"])}
    assert {"trajectories.jsonl", "tokens.json", "per_task.json"} <= artifacts


def test_null_agent_scores_zero(capsys):
    _code, out, _ = _run(evaluate.main, ["--agent", "null", "--limit", "10", "--json", "--quiet"], capsys)
    summary = json.loads(out)
    assert (summary["E"], summary["P"], summary["A"]) == (0.0, 0.0, 0.0)


def test_learned_docs_reach_the_agent_through_evaluate(tmp_path, capsys):
    docs = Toolbox({"exec_simple_0": [DocumentedTool("function_1", description="Binomial probability of k in n.")]})
    path = docs.write(tmp_path / "docs.json")
    code, out, _ = _run(evaluate.main, ["--agent", "oracle", "--docs", str(path), "--json", "--quiet"], capsys)
    assert code == 0 and json.loads(out)["E"] == 1.0
    run = mlflow.get_run(json.loads(out)["run_id"])
    assert run.data.metrics["docs_matched"] == 1 and run.data.params["method"] == "oracle"  # its agent, not "docs"


def test_export_writes_openai_schemas_and_round_trips_json(tmp_path, capsys):
    docs = Toolbox({"t1": [DocumentedTool("function_1", description="Adds.",
                                          parameters=[ParameterSpec("a", "integer")],
                                          parameter_descriptions={"a": "first"})]})
    path = docs.write(tmp_path / "docs.json")
    code, out, _ = _run(export.main, [str(path), "--format", "openai"], capsys)
    assert code == 0
    assert json.loads(out)[0]["function"]["parameters"]["properties"]["a"] == {"type": "integer",
                                                                               "description": "first"}
    target = tmp_path / "again.json"
    _run(export.main, [str(path), "--format", "json", "--out", str(target)], capsys)
    assert Toolbox.read(target).to_json() == docs.to_json()
    code, _, err = _run(export.main, [str(path), "--toolset", "nope"], capsys)
    assert code == 2 and "no toolset" in err


def test_downstream_dspy_tools_carry_the_learned_docs(tmp_path):
    docs = Toolbox({"t1": [DocumentedTool("function_1", description="Adds a and b.",
                                          parameters=[ParameterSpec("a", "integer"), ParameterSpec("b", "integer")])]})
    tools = Toolbox.read(docs.write(tmp_path / "d.json")).as_dspy_tools("t1", {"function_1": lambda a, b: a + b})
    assert tools[0].name == "function_1" and tools[0].desc == "Adds a and b." and tools[0](a=2, b=3) == 5


def test_optimize_rejects_an_unknown_optimizer_and_an_unknown_run(capsys):
    code, _, err = _run(optimize.main, ["--optimizer", "magic"], capsys)
    assert code == 2 and "unknown optimizer 'magic'" in err
    code, _, err = _run(optimize.main, ["--resume", "0123456789abcdef"], capsys)
    assert code == 2 and "no checkpoint" in err
    code, _, err = _run(optimize.main, ["--no-request-value"], capsys)  # a typo, not --no-request-values
    assert code == 2 and "unrecognized arguments: --no-request-value" in err


def test_sigterm_is_handled_like_ctrl_c_so_the_run_ends_killed_not_running(tmp_path):
    """``kill`` or a scheduler's preemption must leave a KILLED run (resumable), not one RUNNING for ever."""
    import subprocess

    argv, environment = _command(tmp_path, "terminated", (
        "import os, signal, sys\n"
        "from otbench import mlflow_store\n"
        "from otbench.run import tracking\n"
        "def main(argv):\n"
        "    mlflow_store.configure(None)  # the store this test session isolates (its environment is inherited)\n"
        "    with tracking.tracked_run('terminated', tags={'command': 'test'}, params={}) as run:\n"
        "        print(run.info.run_id, flush=True)\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "    return 0\n"
    ))
    finished = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False, env=environment)
    assert finished.returncode == 130 and "interrupted: finished work was kept" in finished.stderr
    from otbench import mlflow_store

    mlflow_store.configure(None)
    assert mlflow.get_run(finished.stdout.split()[-1]).info.status == "KILLED"


def test_a_stop_that_lands_in_a_finalizer_still_stops_the_command_without_a_traceback(tmp_path):
    """Python swallows an exception raised in a weak reference's callback or a ``__del__``: a Ctrl-C whose handler ran
    there (MLflow's connection pool has such callbacks) must still stop the command, quietly."""
    import subprocess

    argv, environment = _command(tmp_path, "finalized", (
        "import gc, os, signal, time\n"
        "class Pooled:\n"
        "    def __del__(self):\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "        for _ in range(1000):  # the stop's handler runs here, inside the finalizer\n"
        "            time.sleep(0.001)\n"
        "def main(argv):\n"
        "    Pooled()\n"
        "    gc.collect()\n"
        "    for _ in range(600):\n"
        "        time.sleep(0.1)\n"
        "    print('never stopped', flush=True)\n"
        "    return 0\n"
    ))
    finished = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False, env=environment)
    assert finished.returncode == 130 and "never stopped" not in finished.stdout
    assert finished.stderr == "interrupted: finished work was kept\n"


def test_a_stop_whose_cleanup_hangs_still_ends_the_command_and_says_where_it_hung(tmp_path):
    """A cleanup stuck on a tracking server or a native call must not keep a stopped run alive for ever."""
    import signal
    import subprocess

    argv, environment = _command(tmp_path, "stuck", (
        "import sys, time\n"
        "exits.STOP_GRACE_SECONDS = 1.0\n"
        "def main(argv):\n"
        "    try:\n"
        "        print('working', flush=True)\n"
        "        time.sleep(600)\n"
        "    finally:\n"
        "        while True:\n"
        "            time.sleep(0.1)  # the cleanup that never ends\n"
    ))
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
    assert process.stdout is not None and process.stdout.readline() == "working\n"
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=120)  # a hang guard: without the watchdog it never returns
    assert process.returncode != 0 and "Timeout (0:00:01)!" in err and "in main" in err


def test_a_command_whose_reader_leaves_early_ends_quietly(tmp_path):
    """``otbench results show KEY | head``: the reader closing the pipe is not the command's error, so no traceback."""
    import subprocess

    from otbench.exits import BROKEN_PIPE_EXIT

    argv, environment = _command(tmp_path, "talkative", (
        "def main(argv):\n"
        "    for number in range(200_000):\n"
        "        print(f'line {number}')\n"
        "    return 0\n"
    ))
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline() == "line 0\n"
    process.stdout.close()
    err = process.stderr.read()
    assert process.wait(timeout=120) == BROKEN_PIPE_EXIT and err == ""
