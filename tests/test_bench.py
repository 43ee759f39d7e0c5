"""The benchmark command runs the oracle on any environment and reports perfect scores with timings."""

import json

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
