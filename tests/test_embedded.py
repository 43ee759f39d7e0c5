"""The real embedded model end to end (marked: slow, CI runs them)."""

import json

import mlflow
import pytest

from otbench import evaluate, optimize
from otbench.cli import run_main

pytestmark = pytest.mark.embedded


def _run_json(main, argv, capsys):
    with pytest.raises(SystemExit) as stop:
        run_main(main, argv)
    captured = capsys.readouterr()
    assert stop.value.code == 0, captured.err
    return json.loads(captured.out)


def test_the_embedded_model_answers_three_bfcl_tests(capsys):
    summary = _run_json(evaluate.main, ["--setting", "gold", "--limit", "3", "--seed", "1", "--json", "--quiet"], capsys)
    assert summary["n"] == 3 and 0.0 <= summary["E"] <= 1.0 and 0.0 <= summary["A"] <= 1.0
    agent = summary["tokens_by_phase"]["agent"]
    assert agent["calls"] == 3 and agent["prompt_tokens"] > 0 and agent["completion_tokens"] > 0
    path = mlflow.artifacts.download_artifacts(artifact_uri=f"runs:/{summary['run_id']}/trajectories.jsonl")
    for line in open(path):
        trajectory = json.loads(line)
        assert trajectory["steps"] or trajectory["parse_error"]  # a call, or a scored failure with its reason


def test_toolobserver_runs_one_online_iteration_with_the_embedded_model(tmp_path, capsys):
    summary = _run_json(optimize.main, ["--limit", "2", "--iterations", "1", "--seed", "3", "--json", "--quiet",
                                        "--out", str(tmp_path)], capsys)
    assert summary["n"] == 2 and summary["steps"] >= 1
    assert summary["tokens_by_phase"]["agent"]["calls"] >= 2
    assert (tmp_path / summary["run_id"] / "final_docs.json").exists()
