"""Every figure evaluate and optimize report carries its interval: printed, in ``--json``, in MLflow under
``result/METRIC_ci_low``/``_ci_high``/``_n``, and recomputable from the per-task outcomes the run keeps."""

import json

import mlflow
import pytest
from test_optimize_cli import scripted_lms  # noqa: F401  (a fixture)

from otbench import evaluate, optimize
from otbench.evals import stats
from otbench.evals.outcomes import Mean, interval
from otbench.exits import run_main
from otbench.run import outcomes as run_outcomes


def _main(main, argv, capsys):
    with pytest.raises(SystemExit) as stop:
        run_main(main, argv)
    captured = capsys.readouterr()
    assert stop.value.code == 0, captured.err
    return captured.out


def test_evaluate_prints_logs_and_keeps_every_metric_with_its_interval(capsys):
    out = _main(evaluate.main, ["--agent", "oracle", "--limit", "12", "--quiet"], capsys)
    assert "E       1.000  [0.758, 1.000]  12  wilson" in out
    printed = json.loads(_main(evaluate.main, ["--agent", "oracle", "--limit", "12", "--quiet", "--json"], capsys))
    assert printed["intervals"]["E"] == stats.wilson(12, 12).as_dict()
    run = mlflow.get_run(printed["run_id"])
    metrics = run.data.metrics
    assert (metrics["result/E"], metrics["result/E_n"]) == (1.0, 12.0)
    assert metrics["result/E_ci_low"] == pytest.approx(0.758, abs=1e-3) and metrics["result/P_ci_high"] == 1.0
    kept = run_outcomes.read(run)
    assert kept.result == "result" and len(kept.row.tasks) == 12 and kept.row.samples == (0,)
    assert interval(kept.row, Mean("E")) == stats.wilson(12, 12)


def test_optimize_reports_before_after_and_its_result_with_intervals(scripted_lms, tmp_path, capsys):  # noqa: F811
    argv = ["--limit", "3", "--iterations", "1", "--variant", "paper", "--quiet", "--out", str(tmp_path)]
    summary = json.loads(_main(optimize.main, [*argv, "--json"], capsys))
    assert set(summary["intervals"]) == {"before", "after"}
    after = summary["intervals"]["after"]["E"]
    assert after["n"] == 3 and after["method"] == "wilson" and after["value"] == summary["after"]["E"]
    run = mlflow.get_run(summary["run_id"])
    assert run.data.metrics["result/E_n"] == 3.0 and "result/A_ci_low" in run.data.metrics
    kept = run_outcomes.read(run)
    assert set(kept.splits) == {"before", "after"} and kept.result == "after"
    assert [t.task for t in kept.splits["before"].tasks] == [t.task for t in kept.row.tasks]
    printed = _main(optimize.main, argv, capsys)
    assert "after" in printed and f"{summary['after']['E']:.3f} [" in printed


def test_runs_logged_before_outcomes_were_kept_are_read_from_what_they_kept(tmp_path):
    from otbench import mlflow_store
    from otbench.run import tracking

    mlflow_store.configure()
    with mlflow.start_run(tags={"command": "evaluate"}) as run:
        mlflow.log_param("seed", "4")
        tracking.log_table([{"task_id": "a", "E": 1.0, "calls": 1, "parse_error": ""},
                            {"task_id": "b", "E": 0.0, "calls": 0, "parse_error": "no call"}], "per_task.json")
    kept = run_outcomes.read(mlflow.get_run(run.info.run_id))
    assert [(t.task, t.sample, dict(t.metrics)) for t in kept.row.tasks] == [("a", 4, {"E": 1.0}), ("b", 4, {"E": 0.0})]
    with mlflow.start_run(tags={"command": "optimize"}) as bare:
        pass
    assert run_outcomes.read(mlflow.get_run(bare.info.run_id)) is None  # an online optimize run of then kept none
