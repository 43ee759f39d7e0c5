"""End to end: optimizer runs appear side by side, with their metrics, in the MLflow UI a person opens."""

import copy

import mlflow
import pytest

from otbench import mlflow_store
from otbench.run import tracking, views
from otbench.ui_check import check_page, check_runs_view, check_ui, find_browser, free_port, running_ui

pytestmark = [
    pytest.mark.ui,
    pytest.mark.skipif(find_browser() is None,
                       reason="chromium is not installed (scripts/setup.sh installs it with apt-get)"),
]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _optimize_run(optimizer, history, tokens):
    with tracking.tracked_run(f"optimize-{optimizer}-bfcl-names_only",
                              tags={"command": "optimize", "optimizer": optimizer, "env": "bfcl"},
                              params={"limit": 10, "seed": 404}) as run:
        for step, value in enumerate(history):
            mlflow.log_metrics({"E": value, "tokens_all_total": tokens * (step + 1)}, step=step)
        mlflow.log_metrics({"final_E": history[-1], "final_P": history[-1] / 2, "final_A": 0.8})
        tracking.log_result({"E": history[-1], "P": history[-1] / 2, "A": 0.8}, tokens * len(history))
    return run.info.run_id


def test_the_compare_page_shows_every_run_with_its_stored_metrics(tmp_path):
    mlflow_store.configure()
    views.share_view("bfcl", ("E", "P", "A"), "E")
    run_ids = [_optimize_run("toolobserver", [0.0, 0.4, 0.6], 1200),
               _optimize_run("play2prompt", [0.0, 0.5], 9100),
               _optimize_run("easytool", [0.1234], 800)]
    screenshot = tmp_path / "compare.png"
    with running_ui(None, free_port()) as url:
        result = check_ui(url, find_browser(), run_ids, screenshot)
        view, view_problems = check_runs_view(url, find_browser(), result.runs, tmp_path / "table.png",
                                              tmp_path / "charts.png")
    assert result.problems == []
    assert view is not None and "viewStateShareKey=otbench-bfcl" in view and view_problems == []
    assert (tmp_path / "table.png").read_bytes().startswith(PNG_SIGNATURE)
    assert result.run_names == ["optimize-toolobserver-bfcl-names_only", "optimize-play2prompt-bfcl-names_only",
                                "optimize-easytool-bfcl-names_only"]
    assert {"E", "final_E", "final_P", "final_A"} <= set(result.metric_keys)
    assert screenshot.read_bytes().startswith(PNG_SIGNATURE)

    # the check has teeth: a value the page does not show, or a run it does not list, is reported
    tampered = copy.deepcopy(result.runs)
    next(m for m in tampered[1]["data"]["metrics"] if m["key"] == "final_E")["value"] = 0.9
    tampered[2]["info"]["run_name"] = "a run nobody logged"
    problems = check_page(result.dom, tampered)
    assert any("final_E shows '0.5'" in problem for problem in problems)
    assert any("'a run nobody logged' is not on the page" in problem for problem in problems)
