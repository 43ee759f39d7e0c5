"""The UI check's comparison of shown and stored numbers, without a browser: the UI shows 4 significant digits."""

import pytest

from otbench.ui_check import _shows, check_page, check_plot, check_table, plot_axes, table_rows


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

    from otbench import mlflow_store
    from otbench.evals.harness import run_rollouts
    from otbench.llm import tracing
    from otbench.modules.agent import FunctionCallingAgent
    from otbench.run import tracking
    from otbench.ui_check import check_trace_page

    monkeypatch.setenv(tracing.SWITCH, "1")
    mlflow_store.configure()
    env, agent = ToyEnvironment(1), FunctionCallingAgent()
    agent.lm = scripted_lm(docs_aware_agent_reply)
    with tracking.tracked_run("traced", tags={}, params={}) as run:
        run_rollouts(env, agent, env.toolbox(), env.tasks(), progress=False)
    (trace,) = mlflow.search_traces(run_id=run.info.run_id, return_type="list")
    shown = "<div>rollout</div><div>agent call</div><p>t0</p><p>add 2 and 3</p>"
    assert check_trace_page(shown, trace) == []
    problems = check_trace_page(shown.replace("agent call", "a span"), trace)
    assert problems == [f"trace {trace.info.trace_id}: span 'agent call' ('agent call') is not on the page"]


def _table(rows):
    """The runs table as MLflow's grid renders it: a row per run (its colour in a colour input), a cell per column."""
    html = ""
    for run_id, colour, cells in rows:
        html += (f'<div role="row" row-index="0" row-id="{run_id}"><div class="ag-cell a" col-id="attributes.`Run Name`">'
                 f'<label><input type="color" list="colours" value="{colour}"></label><a>{run_id}</a></div>')
        html += "".join(f'<div class="ag-cell a" col-id="{column}"><span>{text}</span></div>'
                        for column, text in cells.items())
        html += "</div>"
    return f"<div>{html}</div>"


def _table_run(run_id, metrics):
    return {"info": {"run_name": f"name-{run_id}", "run_id": run_id},
            "data": {"metrics": [{"key": k, "value": v} for k, v in metrics.items()]}}


def test_the_runs_table_must_show_each_runs_results_in_a_colour_of_its_own():
    runs = [_table_run("aa11", {"result/E": 2 / 3, "result/tokens": 12286.0, "seconds": 3.0,
                                "result/E_ci_low": 0.49, "result/E_ci_high": 0.81, "result/E_n": 30.0}),
            _table_run("bb22", {"result/E": 0.1, "result/tokens": 800.0})]
    healthy = _table([("aa11", "#c83243", {"metrics.`result/E`": "0.6667", "metrics.`result/tokens`": "12286"}),
                      ("bb22", "#137dae", {"metrics.`result/E`": "0.1", "metrics.`result/tokens`": "800"})])
    assert table_rows(healthy)["aa11"] == {"attributes.`Run Name`": "aa11", "colour": "#c83243",
                                           "metrics.`result/E`": "0.6667", "metrics.`result/tokens`": "12286"}
    assert check_table(healthy, runs) == []  # only result metrics are columns, not their interval parts
    wrong = _table([("aa11", "#c83243", {"metrics.`result/E`": "0.5", "metrics.`result/tokens`": "12286"}),
                    ("bb22", "#c83243", {"metrics.`result/E`": "0.1", "metrics.`result/tokens`": "800"})])
    assert check_table(wrong, runs) == ["runs table: name-aa11: result/E shows '0.5', the store holds 0.6666666666666666",
                                        "runs table: runs share a colour (#c83243, #c83243)"]
    assert check_table(_table([]), runs[:1]) == ["runs table: 'name-aa11' is not listed"]


def test_the_parallel_plot_must_open_on_the_runs_method():
    def page(params):
        chosen = "".join(f'<span class="x-selection-item-content">{name}</span>' for name in params)
        return (f'<div>Parameters:</div><div>{chosen}</div><div>Metrics:</div>'
                f'<div><span class="x-selection-item-content">E</span></div><button>Clear All</button>')

    def run(method):
        return {"info": {}, "data": {"params": [{"key": "method", "value": method}]}}

    runs = [run("base"), run("+TO")]
    assert plot_axes(page(["method", "optimizer", "setting"])) == (["method", "optimizer", "setting"], ["E"])
    assert check_plot(page(["method", "optimizer", "setting"]), runs) == []
    assert check_plot(page(["accept_check", "agent", "call_timeout"]), runs) == [
        "the parallel-coordinates plot opens on ['accept_check', 'agent', 'call_timeout'], not on the runs' method"]
    # one run (a store with a single optimize run), or runs of one method: nothing differs, MLflow shows the first
    # params by name, and that is no problem
    assert check_plot(page(["accept_check", "agent", "call_timeout"]), runs[1:]) == []
    assert check_plot(page(["accept_check", "agent", "call_timeout"]), [run("+TO"), run("+TO")]) == []
