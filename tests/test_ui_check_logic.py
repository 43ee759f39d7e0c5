"""The UI check's comparison of shown and stored numbers, without a browser: the UI shows 4 significant digits."""

import pytest

from otbench.ui_check import _shows, check_page


@pytest.mark.parametrize("shown, stored", [
    ("160.4", 160.396), ("0.6667", 2 / 3), ("0.667", 2 / 3), ("12,290", 12286.0), ("12286", 12286.0),
    ("0.05", 0.05), ("0", 0.0), ("1.235e+4", 12345.0),
])
def test_a_number_the_ui_rounds_for_display_matches_the_stored_one(shown, stored):
    assert _shows(shown, stored)


@pytest.mark.parametrize("shown, stored", [("160.5", 160.396), ("0.5", 0.6), ("12,300", 12286.0), ("n/a", 1.0)])
def test_a_different_number_does_not(shown, stored):
    assert not _shows(shown, stored)


def _run(name, metrics):
    return {"info": {"run_name": name}, "data": {"metrics": [{"key": k, "value": v} for k, v in metrics.items()]}}


def _page(names, keys, values):
    cells = "".join(f'<span tooltip-data-state="closed">{value}</span>' for value in values)
    rows = "".join(f'<a title="Plot chart">{key}</a>' for key in keys)
    return f"<div>{' '.join(names)}</div><div>Metrics</div>{rows}{cells}<div>Artifacts</div>"


def test_a_healthy_page_passes_and_a_wrong_value_is_reported():
    runs = [_run("toolobserver-bfcl-names_only-n10-qwen-1.5b-1124-0513", {"E": 0.6667, "seconds": 160.396}),
            _run("easytool-bfcl-names_only-n10-qwen-1.5b-1124-0520", {"E": 0.1, "seconds": 1234.5})]
    names = [run["info"]["run_name"] for run in runs]
    assert check_page(_page(names, ["E", "seconds"], ["0.6667", "0.1", "160.4", "1,235"]), runs) == []
    problems = check_page(_page(names, ["E", "seconds"], ["0.6667", "0.1", "161", "1,235"]), runs)
    assert problems == [f"{names[0]}: seconds shows '161', the store holds 160.396"]


def test_an_opened_trace_must_show_its_spans_task_and_question(monkeypatch):
    import mlflow
    from scripted_lm import scripted_lm
    from toy_env import ToyEnvironment, docs_aware_agent_reply

    from evals.harness import run_rollouts
    from modules.agent import FunctionCallingAgent
    from otbench import tracing, tracking
    from otbench.ui_check import check_trace_page

    monkeypatch.setenv(tracing.SWITCH, "1")
    tracking.configure()
    env, agent = ToyEnvironment(1), FunctionCallingAgent()
    agent.lm = scripted_lm(docs_aware_agent_reply)
    with tracking.tracked_run("traced", tags={}, params={}) as run:
        run_rollouts(env, agent, env.toolbox(), env.tasks(), progress=False)
    (trace,) = mlflow.search_traces(run_id=run.info.run_id, return_type="list")
    shown = "<div>rollout</div><div>agent call</div><p>t0</p><p>add 2 and 3</p>"
    assert check_trace_page(shown, trace) == []
    problems = check_trace_page(shown.replace("agent call", "a span"), trace)
    assert problems == [f"trace {trace.info.trace_id}: span 'agent call' ('agent call') is not on the page"]
