"""The commands as a user meets them: one-line errors with exit 2, JSON output, MLflow runs."""

import json

import mlflow
import pytest

from modules.tool_docs import DocumentedTool, ParameterSpec, Toolbox
from otbench import evaluate, export, optimize
from otbench.cli import run_main


def _run(main, argv, capsys):
    with pytest.raises(SystemExit) as stop:
        run_main(main, argv)
    captured = capsys.readouterr()
    return stop.value.code, captured.out, captured.err


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
    assert run.data.params["docs_matched"] == "1"


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


def test_sigterm_is_handled_like_ctrl_c_so_the_run_ends_killed_not_running(capsys):
    """``kill`` or a scheduler's preemption must leave a KILLED run (resumable), not one RUNNING for ever."""
    import os
    import signal

    from otbench import tracking

    def terminated_main(argv):
        tracking.configure(None)
        with tracking.tracked_run("terminated", tags={"command": "test"}, params={}) as run:
            terminated_main.run_id = run.info.run_id
            os.kill(os.getpid(), signal.SIGTERM)
        return 0

    before = signal.getsignal(signal.SIGTERM)
    code, _, err = _run(terminated_main, None, capsys)
    assert code == 130 and err.startswith("interrupted:")
    assert mlflow.get_run(terminated_main.run_id).info.status == "KILLED"
    assert signal.getsignal(signal.SIGTERM) is before  # the handler is the command's, not left behind
