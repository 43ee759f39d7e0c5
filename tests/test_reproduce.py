"""``otbench reproduce`` at a small size with scripted LMs: every cell run once (an interrupted one resumed), the
report written once and reused, each setting's comparison a child of the report's MLflow run, the paper beside."""

import json

import mlflow
import pytest
from test_compare import _script_models, every_role_reply

from otbench import reproduce
from otbench.errors import ConfigError
from otbench.exits import run_main
from otbench.run import lookup as run_lookup
from otbench.run import optimization
from otbench.run.settings import RunSettings
from otbench.study import comparing, grid

ROWS = ("base", "gold", "+TO (paper)", "+TO", "+ET (probe)")


@pytest.fixture()
def scripted(monkeypatch):
    return _script_models(monkeypatch, {phase: every_role_reply for phase in ("agent", "editor", "exploration")})


def _options(tmp_path, **changes):
    section = grid.Section("bfcl", "names_only", ROWS, limit=2,
                                knobs={"toolobserver": {"iterations": 2}})
    return reproduce.ReproduceOptions(sections=(section,), seeds=(5,), report=tmp_path / "report", progress=False,
                                      wait_seconds=0.1, **changes)


def _interrupt_first_checkpoint(monkeypatch):
    real = mlflow.log_dict

    def log_dict(data, artifact_file, *args, **kwargs):
        if artifact_file == "checkpoint.json":
            monkeypatch.setattr(mlflow, "log_dict", real)
            raise KeyboardInterrupt
        return real(data, artifact_file, *args, **kwargs)

    monkeypatch.setattr(mlflow, "log_dict", log_dict)


def test_a_grid_runs_each_cell_once_resumes_an_interrupted_one_and_reports_once(scripted, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # optimize writes learned_docs/ here
    options = _options(tmp_path)
    with grid.open_grid(options) as (_, cells):
        assert [cell.plan.label for cell in cells] == list(ROWS)
        paper = next(cell for cell in cells if cell.plan.label == "+TO (paper)")
    _interrupt_first_checkpoint(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        optimization.execute(paper.plan.definition, RunSettings(progress=False))
    stopped = run_lookup.unfinished(paper.plan.definition)
    assert [run.info.status for run in stopped] == ["KILLED"]
    assert [row["state"] for row in reproduce.status(options)] == ["missing", "missing", "interrupted", "missing",
                                                                  "missing"]

    result = reproduce.run(options)
    assert [row["state"] for row in result.cells] == ["finished"] * len(ROWS)
    rows = {row["row"]: row for row in result.cells}
    assert rows["+TO (paper)"]["run_id"] == stopped[0].info.run_id  # resumed, not run again
    assert mlflow.get_run(stopped[0].info.run_id).info.status == "FINISHED"
    assert all(row["tokens"] > 0 and row["hours"] >= 0 for row in result.cells)
    text = (tmp_path / "report" / "REPORT.md").read_text()
    assert "## bfcl / names_only" in text and "## Beside the paper (GPT-5" in text and "## Cost of every cell" in text
    assert "| +TO (paper) |" in text and "0.674" in text  # the paper's +TO closes (0.62 - 0) / (0.92 - 0) of the gap
    children = mlflow.search_runs(experiment_names=["otbench"], output_format="list",
                                  filter_string=f"tags.`mlflow.parentRunId` = '{result.run_id}'")
    assert [child.data.tags["command"] for child in children] == ["compare"]
    assert result.sections[0]["rows"][0]["row"] == "base" and len(result.paper) == len(ROWS)
    sessions = len(scripted)

    monkeypatch.setattr(comparing, "run_missing", lambda plan, settings: pytest.fail(f"ran {plan.label}"))  # nothing may run again
    again = reproduce.run(options)
    assert [row["run_id"] for row in again.cells] == [row["run_id"] for row in result.cells]
    assert again.run_id == result.run_id and len(scripted) == sessions  # the same runs: the same report


def test_the_command_lists_cells_and_refuses_a_grid_it_does_not_have(scripted, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        run_main(reproduce.main, ["--size", "small", "--only", "bfcl/names_desc", "--limits", "bfcl=1", "--status",
                                  "--json"])
    cells = json.loads(capsys.readouterr().out)
    assert stop.value.code == 0 and [(c["row"], c["state"]) for c in cells] == [("base", "missing"),
                                                                              ("gold", "missing"), ("+TO", "missing")]
    for argv, message in ((["--only", "atari"], "--only 'atari' is in no section"),
                          (["--only", ""], "--only '' names nothing between its commas"),
                          (["--size", "huge"], "unknown size 'huge'"),
                          (["--limits", "bfcl"], "expected ENV=N pairs"),
                          (["--only", "bfcl", "--limits", "go=3"], "--limits names 'go'")):
        with pytest.raises(SystemExit) as stop:
            run_main(reproduce.main, [*argv, "--status"])
        err = capsys.readouterr().err
        assert stop.value.code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_every_size_asks_only_for_rows_compare_makes():
    for sections in grid.SIZES.values():
        for section in sections:
            assert section.optimizers()
    with pytest.raises(ConfigError, match="no optimizer makes the row"):
        grid.Section("bfcl", "names_only", ("base", "gold", "+XYZ"), limit=1).optimizers()
