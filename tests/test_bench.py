"""The benchmark command runs the oracle on any environment and reports perfect scores with timings."""

import json
import shutil
from pathlib import Path

import pytest

from otbench import bench
from otbench.errors import ConfigError


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, float]:
    assert bench.main(list(argv)) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_oracle_on_bfcl_is_perfect_and_timed(capsys: pytest.CaptureFixture[str]) -> None:
    result = _run(capsys, "oracle", "--env", "bfcl", "--limit", "4")
    assert (result["E"], result["n"]) == (1.0, 4.0)
    assert result["seconds_per_task_max"] >= result["seconds_per_task_median"] > 0


def test_oracle_on_chess_exploration_rollouts(capsys: pytest.CaptureFixture[str]) -> None:
    result = _run(capsys, "oracle", "--env", "chess", "--setting", "phase", "--split", "train", "--limit", "1",
                  "--exploration-moves", "2")
    assert result["optimal_pct"] == 100.0 and result["n"] == 1.0


def test_unknown_benchmark_is_a_user_error() -> None:
    with pytest.raises(ConfigError, match="unknown benchmark"):
        bench.main(["nonsense"])


def _summary(tmp_path, **tokens_by_phase) -> str:
    rows = {phase: {"calls": calls, "server_calls": calls, "server_prompt_processed": processed,
                    "server_prompt_cached": cached, "server_generated": generated}
            for phase, (calls, processed, cached, generated) in tokens_by_phase.items()}
    summary = {"run_id": "r", "optimizer": "toolobserver", "env": "bfcl", "setting": "names_only", "n": 10,
               "before": {"E": 0.0}, "after": {"E": 0.8}, "test": None, "seconds": 300.0, "tokens_by_phase": rows}
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(summary))
    return str(path)


def test_learning_prices_an_optimize_runs_tokens_by_phase_at_the_speed_given(tmp_path, capsys) -> None:
    path = _summary(tmp_path, agent=(22, 4239, 3888, 807), start_docs=(10, 865, 1748, 362), all=(32, 5104, 5636, 1169))
    report = _run(capsys, "learning", "--summary", path, "--speeds", "34,10", "--quiet")
    assert list(report["by_phase"]) == ["agent", "start_docs", "all"]
    overall = report["by_phase"]["all"]
    assert overall["model_seconds"] == round(5104 / 34 + 1169 / 10, 1)
    assert (overall["calls"], overall["prompt_processed"], overall["prompt_cached"], overall["generated"]) == (
        32, 5104, 5636, 1169)
    assert overall["generated_per_task"] == 116.9 and report["speeds"]["source"] == "given"
    assert (report["before"], report["after"]) == ({"E": 0.0}, {"E": 0.8})


@pytest.mark.parametrize("argv, message", [
    (["--speeds", "34"], "give prompt and generated tokens a second"),
    (["--speeds", "0,10"], "above 0"),
    (["--summary", "missing.json", "--speeds", "34,10"], "not an optimize --json output"),
    (["--resume", "abc", "--speeds", "34,10"], "drop --sweep and --resume"),
])
def test_learning_refuses_bad_options_on_one_line(argv, message, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=message):
        bench.main(["learning", *argv])


def test_learning_reports_a_ledger_entry_and_keeps_the_report_for_the_pages(tmp_path, capsys, monkeypatch) -> None:
    """``--summary ledger:KEY`` prices what the main job's entry spent; ``--keep`` files it as ``bench/NAME``."""
    results = tmp_path / "results"
    (results / "runs").mkdir(parents=True)
    kept_entry = next((Path(__file__).parents[1] / "results" / "runs").glob("3e47d193*.json"))
    shutil.copy(kept_entry, results / "runs" / kept_entry.name)
    monkeypatch.setenv("OTBENCH_RESULTS", str(results))
    report = _run(capsys, "learning", "--summary", "ledger:3e47d193", "--speeds", "34,10", "--keep", "learning-main",
                  "--quiet")
    overall, spent = report["by_phase"]["all"], json.loads(kept_entry.read_text())["tokens_by_phase"]["all"]
    assert (overall["calls"], overall["prompt_processed"], overall["generated"]) == (
        spent["server_calls"], spent["server_prompt_processed"], spent["server_generated"])
    assert overall["model_seconds"] == round(spent["server_prompt_processed"] / 34 + spent["server_generated"] / 10, 1)
    kept = json.loads((results / "benchmarks" / "learning-main.json").read_text())
    assert kept["output"] == report
    assert kept["command"].startswith("python -m otbench.bench learning --summary ledger:3e47d193")


def test_learning_refuses_a_ledger_key_that_names_no_summary(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("OTBENCH_RESULTS", str(tmp_path))
    with pytest.raises(ConfigError, match="0 ledger entries with a summary"):
        bench.main(["learning", "--summary", "ledger:00000000", "--speeds", "34,10"])
