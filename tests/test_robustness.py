"""Robustness metrics and doc contamination, and how evaluate, optimize and compare report them under faults."""

import json
import sys
import types
from contextlib import contextmanager

import dspy
import mlflow
import pytest
from scripted_lm import prompt_text, scripted_lm

from otbench import FunctionEnvironment, compare, evaluate, optimize
from otbench.core.calls import CallResult, ToolCall
from otbench.core.trajectory import Trajectory
from otbench.envs import registry
from otbench.evals.contamination import contamination, sentences
from otbench.evals.robustness import robustness
from otbench.exits import run_main
from otbench.modules.tool_docs import DocumentedTool, Toolbox
from otbench.run import checkpoints, evaluation, optimization
from otbench.study import comparing


def _step(name, ok=True, injected=None, error=None, problem=None, **arguments):
    return CallResult(ToolCall(name, arguments, problem), ok, output=1 if ok else None,
                      error=None if ok else error or "ValueError: bad", injected=injected)


def test_recovery_flexibility_and_schema_compliance():
    timeout = _step("f", ok=False, injected="timeout", error="TimeoutError: f() timed out")
    trajectories = [
        Trajectory("a", "s", "q", steps=[timeout, _step("f")]),                        # retried the same call: recovered
        Trajectory("b", "s", "q", steps=[timeout, _step("g", ok=False), _step("g", x=1)]),  # switched tools, then fixed
        Trajectory("c", "s", "q", steps=[_step("h", ok=False, error="NameError: no tool named 'h'"),
                                         _step("f", ok=False, problem="arguments must be an object")]),
    ]
    metrics = robustness(trajectories)
    assert metrics["schema_compliance"] == pytest.approx(5 / 7)  # the unknown tool and the malformed call do not fit
    assert metrics["recovery_rate"] == pytest.approx(2 / 4)
    assert metrics["injected_recovery_rate"] == pytest.approx(1 / 2)
    assert metrics["flexibility"] == pytest.approx(1 / 2)
    assert metrics["injected_faults"] == pytest.approx(2 / 3) and metrics["injected_share"] == pytest.approx(2 / 7)
    assert metrics["tool_calls"] == pytest.approx(7 / 3)


def test_rates_with_nothing_to_count_are_left_out():
    assert robustness([Trajectory("a", "s", "q", steps=[_step("f")])]) == {
        "injected_faults": 0.0, "tool_calls": 1.0, "schema_compliance": 1.0, "injected_share": 0.0}


def _toolbox(*descriptions):
    return Toolbox({"tools": [DocumentedTool(f"function_{i + 1}", description=text)
                              for i, text in enumerate(descriptions)]})


def test_contamination_counts_new_sentences_that_state_faults_or_repeat_their_messages():
    start = _toolbox("Adds numbers.", "")
    learned = _toolbox("Adds numbers. Often times out; retry later.",
                       "Multiplies a and b. The service said it is over capacity now and then!")
    messages = ["ServiceUnavailable: 503 function_2() said it is over capacity"]
    measured = contamination(learned, start, messages)
    assert measured.sentences == 3 and measured.tools == 2  # "Adds numbers." was there before: not learned
    assert measured.sentence_share == pytest.approx(2 / 3) and measured.tool_share == 1.0
    assert measured.quotes == {"tools/function_1": ["Often times out; retry later."],
                               "tools/function_2": ["The service said it is over capacity now and then!"]}
    clean = contamination(_toolbox("Adds numbers.", "Multiplies a and b."), start, messages)
    assert clean.metrics() == {"doc_contamination": 0.0, "doc_contaminated_tools": 0.0}


def test_sentences_split_on_ends_and_lines():
    assert sentences("One. Two!\nThree") == ["One.", "Two!", "Three"]


# -- the commands, end to end on FunctionEnvironment with scripted models ---------------------------------------
def add(a: int, b: int) -> int:
    return a + b


def _function_env():
    examples = [dspy.Example(question=f"add {a} and 3", answer=a + 3) for a in range(2, 8)]
    return FunctionEnvironment([add], examples,
                               metric=lambda example, trajectory: example.answer in trajectory.outputs)


@pytest.fixture()
def function_env(monkeypatch):
    """``--env fn`` builds a FunctionEnvironment through the registry, so ``--faults`` reaches it."""
    options = types.ModuleType("fn_options")
    options.DEFAULT_SETTING, options.LEARNING = "given", "offline"
    options.add_arguments = lambda group: None
    options.settings = lambda: "the one setting"
    options.check = lambda args: None
    options.build = lambda args, workers=1: _function_env()
    monkeypatch.setitem(sys.modules, "fn_options", options)
    monkeypatch.setitem(registry.ENVIRONMENTS, "fn", "fn_options")


def _agent(messages):
    a = int(prompt_text(messages).split("add ")[-1].split(" ")[0])
    return json.dumps({"calls": [{"name": "add", "arguments": {"a": a, "b": 3}}]})


def _credulous_editor(messages):
    """Writes whatever the tool answered into its docs, faults included (what an editor should not do)."""
    text = prompt_text(messages)
    said = "Adds a and b." + (" It is temporarily unavailable; try again later." if "503" in text else "")
    if '{"updates"' in text:
        return json.dumps({"updates": [{"name": "add", "description": said}]})
    return json.dumps({"description": said})


@pytest.fixture()
def scripted(monkeypatch):
    @contextmanager
    def open_scripted(options, ledger, phases=("agent",)):
        replies = {"agent": _agent, "exploration": _agent, "editor": _credulous_editor}
        yield {phase: scripted_lm(replies[phase], ledger=ledger, phase=phase) for phase in phases}

    monkeypatch.setattr(optimization, "open_lms", open_scripted)
    monkeypatch.setattr(evaluation, "open_lms", open_scripted)


def _main(command, argv, capsys):
    with pytest.raises(SystemExit) as stop:
        run_main(command, argv)
    captured = capsys.readouterr()
    assert stop.value.code == 0, captured.err
    return json.loads(captured.out.strip().splitlines()[-1])


def test_evaluate_logs_robustness_next_to_the_environments_metrics(function_env, scripted, capsys):
    clean = _main(evaluate.main, ["--env", "fn", "--json", "--quiet"], capsys)
    faulted = _main(evaluate.main, ["--env", "fn", "--faults", "unavailable-0.5", "--json", "--quiet"], capsys)
    assert clean["score"] == 1.0 and clean["schema_compliance"] == 1.0 and clean["injected_faults"] == 0.0
    assert faulted["score"] < 1.0 and faulted["injected_faults"] > 0
    run = mlflow.get_run(faulted["run_id"])
    assert run.data.params["faults"] == "unavailable-0.5" and "injected_share" in run.data.metrics
    # a policy for exploration only leaves evaluation (the test phase) clean
    explored = _main(evaluate.main, ["--env", "fn", "--faults", "unavailable-0.5@exploration", "--json", "--quiet"],
                     capsys)
    assert explored["score"] == 1.0 and explored["injected_faults"] == 0.0


def test_optimize_measures_the_faults_an_editor_wrote_into_the_docs(function_env, scripted, tmp_path, capsys):
    argv = ["--env", "fn", "--limit", "6", "--test-limit", "6", "--iterations", "1", "--variant", "paper",
            "--json", "--quiet", "--out", str(tmp_path)]
    clean = _main(optimize.main, argv, capsys)
    faulted = _main(optimize.main, [*argv, "--faults", "unavailable-0.5@exploration"], capsys)
    assert clean["contamination"]["doc_contamination"] == 0.0 and clean["contamination"]["injected_by_kind"] == {}
    assert faulted["contamination"]["injected_by_kind"]["unavailable"] > 0
    assert faulted["contamination"]["doc_contamination"] > 0.0
    assert faulted["contamination"]["quotes"] == {"tools/add": ["It is temporarily unavailable; try again later."]}
    assert faulted["test"]["score"] == 1.0 and faulted["test"]["injected_faults"] == 0.0  # a clean test phase
    run = mlflow.get_run(faulted["run_id"])
    assert run.data.metrics["doc_contamination"] > 0 and run.data.params["faults"] == "unavailable-0.5@exploration"
    assert checkpoints.load_checkpoint(run.info.run_id)["faults"]["attempts"]  # --resume continues the same faults
    assert "injected_share" in {m.key for m in mlflow.MlflowClient().get_metric_history(run.info.run_id, "injected_share")
                                } | set(run.data.metrics)


def test_compare_runs_every_row_under_the_policy_and_plots_the_metric_against_the_fault_rate(
        function_env, scripted, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = ["--env", "fn", "--limit", "6", "--test-limit", "6", "--optimizers", "toolobserver", "--iterations", "1",
            "--plots", str(tmp_path), "--json", "--quiet"]
    monkeypatch.setattr(comparing, "docs_fidelity", lambda plans, runs, env, toolsets: {
        plan.label: types.SimpleNamespace(semantic=0.0, lexical=0.0) for plan in plans})  # no embedding model here
    clean = _main(compare.main, argv, capsys)
    faulted = _main(compare.main, [*argv, "--faults", "unavailable-0.5@exploration"], capsys)
    clean_runs = {row["run_id"] for row in clean["rows"]}
    assert not clean_runs & {row["run_id"] for row in faulted["rows"]}  # no clean run stands in for a faulted row
    for row in faulted["rows"]:
        assert mlflow.get_run(row["run_id"]).data.params["faults"] == "unavailable-0.5@exploration"
    learned = {row["row"]: row for row in faulted["rows"]}["+TO (paper)"]  # the paper's editor keeps what it writes
    assert learned["docs_faults"] > 0 and {row["row"]: row for row in clean["rows"]}["+TO (paper)"]["docs_faults"] == 0.0
    assert {row["row"]: row["docs_faults"] for row in faulted["rows"]}.keys() >= {"base", "gold", "+TO"}
    plot = tmp_path / "functions-given-score-vs-fault-rate.png"
    assert str(plot) in faulted["plots"] and plot.stat().st_size > 0
