import json
from functools import partial

import mlflow
import pytest
from scripted_lm import scripted_lm
from toy_env import ToyEnvironment, docs_aware_agent_reply, truthful_editor_reply

from otbench import mlflow_store
from otbench.llm.metering import TokenLedger
from otbench.modules.agent import FunctionCallingAgent
from otbench.modules.editor import DocEditor
from otbench.modules.program import ToolAgentProgram
from otbench.optimizers.toolobserver.knobs import PAPER
from otbench.optimizers.toolobserver.teleprompter import ToolObserver
from otbench.run import checkpoints, naming, tracking, views

# the paper's protocol: these tests pin its exact behaviour
PaperTO = partial(ToolObserver, improvements=PAPER)


def test_every_iteration_is_logged_with_docs_trajectories_editor_and_checkpoint():
    mlflow_store.configure()
    env, ledger = ToyEnvironment(2), TokenLedger()
    agent, editor = FunctionCallingAgent(), DocEditor()
    agent.lm = scripted_lm(docs_aware_agent_reply, ledger=ledger, phase="agent")
    editor.lm = scripted_lm(truthful_editor_reply, ledger=ledger, phase="editor")
    tracker = tracking.MlflowIterationTracker(ledger, learned=env.metric_names, extra_checkpoint={"args": {"env": "toy"}})
    with tracking.tracked_run("toy", tags={"optimizer": "toolobserver"}, params={"n": 2}) as run:
        PaperTO(env=env, editor=editor, tracker=tracker, progress=False).compile(
            ToolAgentProgram(env.toolbox(), agent), trainset=env.tasks())
    client = mlflow.MlflowClient()
    history = client.get_metric_history(run.info.run_id, "learning/E")  # the learning split's, not the result
    assert [(m.step, m.value) for m in sorted(history, key=lambda m: m.step)] == [(0, 0.0), (1, 1.0), (2, 1.0)]
    assert "E" not in client.get_run(run.info.run_id).data.metrics
    editor_tokens = sorted(client.get_metric_history(run.info.run_id, "tokens_editor_total"), key=lambda m: m.step)
    assert editor_tokens[0].value > 0 and editor_tokens[-1].value >= editor_tokens[0].value
    step_files = {a.path for a in client.list_artifacts(run.info.run_id, "iterations/step_01")}
    assert {"iterations/step_01/docs.json", "iterations/step_01/trajectories.jsonl",
            "iterations/step_01/editor.md"} <= step_files
    checkpoint = checkpoints.load_checkpoint(run.info.run_id)
    assert checkpoint["args"] == {"env": "toy"} and checkpoint["next_step"] == 3
    assert json.dumps(checkpoint["tokens"])


def _own_store(tmp_path, monkeypatch):
    """A store of this test's own (MLflow keeps the last tracking URI in MLFLOW_TRACKING_URI, which configure
    reads first: it is restored after the test)."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("OTBENCH_MLRUNS", str(tmp_path))
    mlflow_store.configure()


def test_a_new_run_takes_the_palette_colour_the_latest_runs_use_least(tmp_path, monkeypatch):
    _own_store(tmp_path, monkeypatch)
    monkeypatch.setattr(naming, "RUN_COLORS", ("#111111", "#222222", "#333333"))
    client, experiment = mlflow.MlflowClient(), mlflow.get_experiment_by_name(mlflow_store.EXPERIMENT).experiment_id

    def run_at(start: int, colour: str | None) -> str:
        tags = {naming.RUN_COLOR_TAG: colour} if colour else {}
        return client.create_run(experiment, start_time=start, tags=tags).info.run_id

    run_at(1, "#111111")
    run_at(2, "#222222")
    assert naming.run_color(experiment, run_at(3, None)) == "#333333"  # not used by the latest two
    run_at(4, "#333333")
    assert naming.run_color(experiment, run_at(5, None)) == "#111111"  # the latest two use 2 and 3
    run_at(6, "#111111")
    run_at(7, "#654321")  # a colour picked in the UI
    assert naming.run_color(experiment, run_at(8, None)) == "#222222"
    with tracking.tracked_run("coloured", tags={}, params={}) as run:
        pass
    assert mlflow.get_run(run.info.run_id).data.tags[naming.RUN_COLOR_TAG] in naming.RUN_COLORS


def test_each_environment_gets_a_saved_view_of_its_results(tmp_path, monkeypatch):
    _own_store(tmp_path, monkeypatch)
    assert views.share_view("bfcl", ("E", "P", "A"), "E") == "otbench-bfcl"
    tags = mlflow.get_experiment_by_name(mlflow_store.EXPERIMENT).tags
    assert views.viewed_environments(tags) == ["bfcl"]
    envelope = json.loads(tags["mlflow.sharedViewState.otbench-bfcl"])  # as MLflow's UI saves a view
    assert envelope["name"] == "otbench: bfcl runs compared" and isinstance(envelope["createdAt"], int)
    state = json.loads(envelope["state"])
    assert state["searchFilter"] == "tags.env = 'bfcl' AND tags.command != 'compare'"
    assert state["selectedColumns"] == ["metrics.`result/E`", "metrics.`result/P`", "metrics.`result/A`",
                                        "metrics.`result/tokens`", "params.`method`", "params.`setting`",
                                        "params.`limit`", "params.`seed`", "params.`lm`"]
    charts = {chart["type"]: chart for chart in state["compareRunCharts"]}
    assert charts["PARALLEL"]["selectedParams"] == ["method"]
    assert charts["PARALLEL"]["selectedMetrics"] == ["result/E", "result/tokens"]
    assert charts["SCATTER"]["yaxis"]["key"] == "result/E"
    assert views.view_url("http://ui", "7", "bfcl") == "http://ui/#/experiments/7/runs?viewStateShareKey=otbench-bfcl"


def test_a_view_already_current_is_not_written_again(tmp_path, monkeypatch):
    _own_store(tmp_path, monkeypatch)
    views.share_view("bfcl", ("E",), "E")
    created = json.loads(mlflow.get_experiment_by_name(mlflow_store.EXPERIMENT).tags["mlflow.sharedViewState.otbench-bfcl"])
    writes = []
    monkeypatch.setattr(mlflow.MlflowClient, "set_experiment_tag", lambda self, *args: writes.append(args))
    views.share_view("bfcl", ("E",), "E")
    assert writes == []
    monkeypatch.undo()
    _own_store(tmp_path, monkeypatch)
    views.share_view("bfcl", ("E", "P"), "E")  # a changed view is rewritten, keeping when it was created
    tags = mlflow.get_experiment_by_name(mlflow_store.EXPERIMENT).tags
    refreshed = json.loads(tags["mlflow.sharedViewState.otbench-bfcl"])
    assert refreshed["createdAt"] == created["createdAt"] and refreshed["state"] != created["state"]


def test_a_write_that_loses_the_race_to_another_workers_identical_view_is_not_an_error(tmp_path, monkeypatch):
    """A SQL store refuses the second insert of a tag key; the distributed set runs the real race."""
    _own_store(tmp_path, monkeypatch)
    views.share_view("chess", ("A",), "A")
    write = mlflow.MlflowClient.set_experiment_tag

    def other_worker_first(self, experiment_id, key, value):
        write(self, experiment_id, key, value)
        raise mlflow.exceptions.MlflowException("duplicate key value violates unique constraint")

    monkeypatch.setattr(mlflow.MlflowClient, "set_experiment_tag", other_worker_first)
    assert views.share_view("bfcl", ("E",), "E") == "otbench-bfcl"
    assert "mlflow.sharedViewState.otbench-bfcl" in mlflow.get_experiment_by_name(mlflow_store.EXPERIMENT).tags


def test_a_write_refused_for_another_reason_is_still_an_error(tmp_path, monkeypatch):
    _own_store(tmp_path, monkeypatch)
    views.share_view("chess", ("A",), "A")

    def refused(self, experiment_id, key, value):
        raise mlflow.exceptions.MlflowException("permission denied")

    monkeypatch.setattr(mlflow.MlflowClient, "set_experiment_tag", refused)
    with pytest.raises(mlflow.exceptions.MlflowException, match="permission denied"):
        views.share_view("bfcl", ("E",), "E")
