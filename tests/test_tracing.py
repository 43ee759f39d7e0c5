"""Every LM call is an MLflow trace of its run: a rollout is one trace with a span per LM call, a call
outside a rollout is a trace of its own, and nothing is traced outside a run or when switched off."""

import mlflow
import pytest
from scripted_lm import scripted_lm
from toy_env import ToyEnvironment, docs_aware_agent_reply

from otbench import mlflow_store
from otbench.evals.harness import run_rollouts
from otbench.llm import tracing
from otbench.llm.metering import TokenLedger
from otbench.modules.agent import FunctionCallingAgent
from otbench.run import optimization, tracking


@pytest.fixture(autouse=True)
def _traced(monkeypatch):
    monkeypatch.setenv(tracing.SWITCH, "1")


def _traces(run_id):
    mlflow.flush_trace_async_logging(terminate=False)
    return mlflow.search_traces(run_id=run_id, return_type="list")


def _run_rollouts_and_one_editor_call(name):
    mlflow_store.configure()
    env, ledger = ToyEnvironment(3), TokenLedger()
    agent = FunctionCallingAgent()
    agent.lm = scripted_lm(docs_aware_agent_reply, ledger=ledger, phase="agent")
    editor = scripted_lm(lambda messages: '{"updates": []}', ledger=ledger, phase="editor")
    with tracking.tracked_run(name, tags={}, params={}) as run:
        trajectories = run_rollouts(env, agent, env.toolbox(), env.tasks(), num_threads=2, progress=False)
        editor(messages=[{"role": "user", "content": "Rewrite the docs of function_1."}])
    return run.info.run_id, trajectories


def test_each_rollout_is_a_trace_with_its_lm_calls_and_an_editor_call_is_one_of_its_own():
    run_id, trajectories = _run_rollouts_and_one_editor_call("traced")
    traces = _traces(run_id)
    rollouts = [t for t in traces if t.data.spans[0].name == "rollout"]
    assert sorted(t.info.tags["task_id"] for t in rollouts) == sorted(t.task_id for t in trajectories)
    for trace in rollouts:
        root, *calls = trace.data.spans
        assert root.span_type == "AGENT" and root.inputs["question"].startswith("add ")
        assert root.outputs["steps"][0]["call"]["name"] in ("function_1", "function_2")
        (call,) = calls
        assert call.name == "agent call" and call.parent_id == root.span_id and call.span_type == "CHAT_MODEL"
        assert call.attributes["phase"] == "agent" and call.attributes["prompt_tokens"] > 0
        assert call.attributes["completion_tokens"] > 0 and call.attributes["seconds"] >= 0
        assert "Tools:" in call.inputs["messages"][1]["content"] and '"calls"' in call.outputs[0]
    (editor,) = [t for t in traces if t.data.spans[0].name == "editor call"]
    assert editor.data.spans[0].attributes["phase"] == "editor" and len(traces) == 4


def test_nothing_is_traced_when_switched_off_or_outside_a_run(monkeypatch):
    monkeypatch.setenv(tracing.SWITCH, "0")
    run_id, _ = _run_rollouts_and_one_editor_call("untraced")
    assert _traces(run_id) == []
    monkeypatch.delenv(tracing.SWITCH)
    assert tracing.current_run() is None  # library use, no run: spans are not even opened
    with tracing.lm_call("agent", "m", []) as span:
        assert span is None


def test_an_optimize_run_holds_the_traces_of_its_agent_and_editor_calls(monkeypatch, tmp_path, capsys):
    import json
    from contextlib import contextmanager

    from test_optimize_cli import any_role_reply

    from otbench import optimize
    from otbench.exits import run_main

    @contextmanager
    def open_scripted(options, ledger, phases=("agent",)):
        yield {phase: scripted_lm(any_role_reply, ledger=ledger, phase=phase) for phase in phases}

    monkeypatch.setattr(optimization, "open_lms", open_scripted)
    with pytest.raises(SystemExit):
        run_main(optimize.main, ["--limit", "2", "--iterations", "1", "--no-grounded", "--no-code-first", "--json",
                                 "--quiet", "--out", str(tmp_path)])  # no scripted call works: the editor is asked
    traces = _traces(json.loads(capsys.readouterr().out)["run_id"])
    phases = {span.attributes.get("phase") for trace in traces for span in trace.data.spans}
    assert {"agent", "editor"} <= phases
    assert any(trace.data.spans[0].name == "rollout" for trace in traces)


def test_traces_are_held_back_while_mlflow_has_too_many_unwritten():
    """MLflow discards traces that arrive when its export queue is full: a new trace waits instead."""
    _run_rollouts_and_one_editor_call("queue")
    assert tracing.export_queue() is not None  # this MLflow's queue is found: the wait is live, not skipped

    class Behind:
        def __init__(self):
            self.sizes = [tracing.UNWRITTEN_TRACES + 3, tracing.UNWRITTEN_TRACES + 1, tracing.UNWRITTEN_TRACES]

        def qsize(self):
            return self.sizes.pop(0)

    waits = []
    behind = Behind()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tracing, "export_queue", lambda: behind)
        patch.setattr(tracing.time, "sleep", waits.append)
        tracing._wait_for_the_store()
    assert len(waits) == 2 and behind.sizes == []
