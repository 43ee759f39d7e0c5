"""``optimize --resume`` whatever moment a stop lands: every step logged once, a run stopped again KILLED
(resumable), a finished run left as it was. Scripted LMs; the stop is a KeyboardInterrupt raised where
a Ctrl-C or SIGTERM would land (both reach the command as one)."""

import json

import mlflow
import pytest
from test_optimize_cli import scripted_lms  # noqa: F401 - the scripted LMs fixture

from otbench import optimize
from otbench.exits import run_main
from otbench.run import optimization

ARGV = ["--optimizer", "play2prompt", "--limit", "1", "--p2p-samples", "1", "--p2p-iterations", "2", "--json",
        "--quiet"]
STEPS = [0, 1, 2, 3]  # play, two beam rounds, the train tasks scored with the final docs


@pytest.fixture
def stop_before_checkpoint(monkeypatch):
    """``stop(step)``: the next run is stopped after step ``step``'s metrics, before its checkpoint is written."""
    real = mlflow.log_dict
    where: dict[str, int | None] = {"step": None}

    def log_dict(data, artifact_file, *args, **kwargs):
        if artifact_file == "checkpoint.json" and where["step"] is not None and data.get("step") == where["step"]:
            where["step"] = None  # once
            raise KeyboardInterrupt
        return real(data, artifact_file, *args, **kwargs)

    monkeypatch.setattr(mlflow, "log_dict", log_dict)

    def stop(step):
        where["step"] = step

    return stop


def _stopped_run(argv, capsys):
    with pytest.raises(KeyboardInterrupt):
        optimize.main(argv)
    capsys.readouterr()
    run = mlflow.search_runs(experiment_names=["otbench"], order_by=["attributes.start_time DESC"],
                             output_format="list")[0]
    return run.info.run_id


def _steps_by_metric(run_id):
    client = mlflow.MlflowClient()
    keys = [key for key in client.get_run(run_id).data.metrics if not key.startswith(("final_", "doc_", "injected_"))
            and key not in ("seconds", "mean_editor_iterations")]
    return {key: sorted(m.step for m in client.get_metric_history(run_id, key)) for key in keys}


def _resumed_to_the_end(run_id, tmp_path, capsys):
    """Resume ``run_id`` until it finishes; every step's metrics are then logged exactly once. Its summary."""
    with pytest.raises(SystemExit) as done:
        run_main(optimize.main, ["--resume", run_id, "--json", "--quiet", "--out", str(tmp_path)])
    assert done.value.code == 0, capsys.readouterr().err
    steps = _steps_by_metric(run_id)
    assert steps["tokens_all_total"] == STEPS and all(logged == sorted(set(logged)) for logged in steps.values()), steps
    assert mlflow.get_run(run_id).info.status == "FINISHED"
    return json.loads(capsys.readouterr().out)


def test_a_stop_between_a_steps_metrics_and_its_checkpoint_logs_that_step_once(scripted_lms, stop_before_checkpoint,  # noqa: F811
                                                                              tmp_path, capsys):
    stop_before_checkpoint(1)
    run_id = _stopped_run([*ARGV, "--out", str(tmp_path)], capsys)
    assert mlflow.get_run(run_id).info.status == "KILLED"
    assert _steps_by_metric(run_id)["tokens_all_total"] == [0, 1]  # step 1's metrics, but no checkpoint after it

    assert _resumed_to_the_end(run_id, tmp_path, capsys)["steps"] == len(STEPS)


def test_a_run_stopped_before_its_first_checkpoint_starts_over_in_the_same_run(scripted_lms, stop_before_checkpoint,  # noqa: F811
                                                                                tmp_path, capsys):
    stop_before_checkpoint(0)
    run_id = _stopped_run([*ARGV, "--out", str(tmp_path)], capsys)
    artifacts = {a.path for a in mlflow.MlflowClient().list_artifacts(run_id)}
    assert "definition.json" in artifacts and "checkpoint.json" not in artifacts

    assert _resumed_to_the_end(run_id, tmp_path, capsys)["run_id"] == run_id


def test_a_resumed_run_stopped_again_ends_killed_and_resumes_again(scripted_lms, stop_before_checkpoint,  # noqa: F811
                                                                   tmp_path, capsys):
    stop_before_checkpoint(1)
    run_id = _stopped_run([*ARGV, "--out", str(tmp_path)], capsys)
    stop_before_checkpoint(2)
    assert _stopped_run(["--resume", run_id, "--json", "--quiet", "--out", str(tmp_path)], capsys) == run_id
    assert mlflow.get_run(run_id).info.status == "KILLED"
    _resumed_to_the_end(run_id, tmp_path, capsys)


def test_resuming_a_finished_run_says_so_and_changes_nothing(scripted_lms, tmp_path, capsys):  # noqa: F811
    with pytest.raises(SystemExit) as done:
        run_main(optimize.main, [*ARGV, "--out", str(tmp_path)])
    assert done.value.code == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    client = mlflow.MlflowClient()
    before = client.get_run(run_id)
    artifacts = sorted(a.path for a in client.list_artifacts(run_id))

    with pytest.raises(SystemExit) as again:
        run_main(optimize.main, ["--resume", run_id, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert again.value.code == 2 and err.strip() == f"error: --resume {run_id}: that run finished; there is nothing to continue"
    after = client.get_run(run_id)
    assert (after.info.status, after.info.end_time, after.data.metrics) == (
        before.info.status, before.info.end_time, before.data.metrics)
    assert sorted(a.path for a in client.list_artifacts(run_id)) == artifacts


def test_a_resumed_run_judges_invented_claims_as_the_run_that_never_stopped(scripted_lms, stop_before_checkpoint,  # noqa: F811
                                                                             tmp_path, capsys):
    # no scripted call works, so every sentence the editor is made to write is invented: the count shows the
    # resumed run judges the start docs' sentences and the calls made before the stop, not just what came after
    argv = ["--optimizer", "toolobserver", "--limit", "1", "--iterations", "2", "--no-grounded", "--json", "--quiet",
            "--out", str(tmp_path)]
    with pytest.raises(SystemExit):
        run_main(optimize.main, argv)
    whole = json.loads(capsys.readouterr().out)["invented"]
    stop_before_checkpoint(1)
    run_id = _stopped_run(argv, capsys)
    logged = mlflow.MlflowClient().list_artifacts(run_id, "iterations/step_00")
    assert "iterations/step_00/observed_calls.jsonl" in {artifact.path for artifact in logged}

    with pytest.raises(SystemExit) as done:
        run_main(optimize.main, ["--resume", run_id, "--json", "--quiet", "--out", str(tmp_path)])
    assert done.value.code == 0, capsys.readouterr().err
    resumed = json.loads(capsys.readouterr().out)["invented"]
    assert whole["sentences"] > 0 and resumed == whole


def test_a_stop_while_the_learned_docs_are_scored_is_a_clean_stop_that_resumes(scripted_lms, monkeypatch,  # noqa: F811
                                                                                tmp_path, capsys):
    from otbench.core.parallel import MapInterrupted

    real = optimization._score_start_docs

    def stopped(*args, **kwargs):
        monkeypatch.setattr(optimization, "_score_start_docs", real)  # once
        raise MapInterrupted({}, KeyboardInterrupt())

    monkeypatch.setattr(optimization, "_score_start_docs", stopped)
    with pytest.raises(KeyboardInterrupt) as stop:  # what run_main prints as one line, exiting 130
        optimize.main([*ARGV, "--out", str(tmp_path)])
    run_id = mlflow.search_runs(experiment_names=["otbench"], order_by=["attributes.start_time DESC"],
                                output_format="list")[0].info.run_id
    assert str(stop.value) == f"finished iterations are kept; continue with --resume {run_id}"
    assert mlflow.get_run(run_id).info.status == "KILLED"
    assert _resumed_to_the_end(run_id, tmp_path, capsys)["steps"] == len(STEPS)
