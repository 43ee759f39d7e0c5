"""What the results ledger refuses: entries checked by their content (a misfiled or edited entry is refused by
render and reproduce, naming its file), a bad file is one named problem, a load is whole or nothing, and a first use
of a store stopped at any moment leaves one every command accepts."""

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import mlflow
import pytest

from otbench import mlflow_store, reproduce
from otbench.errors import DataError
from otbench.exits import run_main
from otbench.paths import results_dir
from otbench.run import ledger, lookup
from otbench.run.settings import TrackingOptions
from otbench.study.rendered import _dirty_note, table

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "results" / "runs"
NAMES_DESC = {"base": "cee3501bc2065f1fd896", "gold": "bff58e1c762776603751", "+TO": "3a1eefe083ab735abd1b"}
"""The grid's bfcl/names_desc cells, each finished in the committed ledger."""
OLD_OPTIMIZE = "59c139ac30ce14abbc15"
"""A committed optimize entry kept before the learning split's scores were named apart (names_desc +TO, run before
ToolObserver's cost improvements)."""
SMALL = ("52211ec9cb5ef291534c", "0c47479576ce319e361c", "309cf03cb7c0777eaaa3")
"""Small committed entries: an interrupted optimize run, then two finished evaluations."""


def _ledger(*keys: str) -> Path:
    """This test's ledger holding copies of committed entries."""
    runs = results_dir() / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    for key in keys:
        shutil.copy(COMMITTED / f"{key}.json", runs / f"{key}.json")
    return runs


def _flip_an_outcome(path: Path) -> None:
    data = json.loads(path.read_text())
    kept = data["artifacts"]["outcomes.json"]
    task = kept["splits"][kept["result"]][0]
    task["metrics"]["E"] = 1.0 - task["metrics"]["E"]
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def _run(main, argv, capsys):
    with pytest.raises(SystemExit) as stop:
        run_main(main, argv)
    out, err = capsys.readouterr()
    return stop.value.code, out, err


@pytest.mark.parametrize("damage", ["misfiled", "edited"])
def test_a_misfiled_or_edited_entry_is_refused_by_render_and_reproduce_naming_its_file(damage, tmp_path, capsys):
    runs = _ledger(*NAMES_DESC.values())
    base = runs / f"{NAMES_DESC['base']}.json"
    if damage == "misfiled":  # gold's entry saved under base's key: its 0.927 would be shown as base's
        shutil.copy(COMMITTED / f"{NAMES_DESC['gold']}.json", base)
    else:  # one outcome flipped: the entry's own E no longer follows from its outcomes
        _flip_an_outcome(base)
    reason = "misfiled or edited" if damage == "misfiled" else "does not match its digest"
    with pytest.raises(DataError, match=reason) as refused:
        table("grid/full/bfcl/names_desc", results_dir())
    assert str(base) in str(refused.value)
    store = tmp_path / "store"
    options = reproduce.ReproduceOptions(only=("bfcl/names_desc",), report=tmp_path / "report", progress=False,
                                         tracking=TrackingOptions(directory=store))
    with pytest.raises(DataError, match=reason):
        reproduce.run(options)
    assert not store.exists()  # refused before anything was written
    rows = {row["row"]: row for row in reproduce.status(options)}
    assert rows["base"]["state"] == "refused" and str(base) in rows["base"]["problem"]
    assert rows["+TO"]["state"] == "finished" and not store.exists()
    code, out, err = _run(reproduce.main, ["--status", "--only", "bfcl/names_desc", "--mlruns", str(store)], capsys)
    assert code == 1 and "+TO" in out and err.count("\n") == 1 and str(base) in err


def test_verify_reports_every_problem_of_every_file_at_once():
    runs = _ledger(*SMALL, NAMES_DESC["base"])
    _flip_an_outcome(runs / f"{NAMES_DESC['base']}.json")
    misfiled = runs / "0123456789abcdef0123.json"
    shutil.copy(COMMITTED / f"{SMALL[0]}.json", misfiled)
    data = json.loads((runs / f"{SMALL[1]}.json").read_text())
    data["code"]["commit"] = "0" * 40
    data["digest"] = ledger.digest_of(data)
    (runs / f"{SMALL[1]}.json").write_text(json.dumps(data))
    (runs / "notes.txt").write_text("x")
    problems = ledger.verify()
    named = {problem.split(":")[0] for problem in problems}
    assert named == {f"{NAMES_DESC['base']}.json", misfiled.name, f"{SMALL[1]}.json", "notes.txt"}
    edited = [problem for problem in problems if problem.startswith(NAMES_DESC["base"])]
    assert any("digest" in problem for problem in edited) and any("tasks' outcomes give" in problem for problem in edited)
    assert any("which this repository does not have" in problem for problem in problems)


BAD_FILES = {
    "empty": b"", "a list": b"[]", "null": b"null", "an object": b"{}", "not UTF-8": b'{"schema": "\xff"}',
    "nested 100k deep": b"[" * 100_000 + b"]" * 100_000,
}


def _shapes(entry: dict) -> dict[str, bytes]:
    """Entries with one field of a shape readers cannot take."""
    def changed(**fields):
        return json.dumps({**entry, **fields}).encode()

    return {"started 1e400": changed(started=1e400), "seconds as text": changed(seconds="abc"),
            "definition as a list": changed(definition=[]), "no digest": json.dumps(
                {name: value for name, value in entry.items() if name != "digest"}).encode(),
            "a NaN": changed(seconds=float("nan")), "metrics as a list": changed(metrics=[1]),
            "a history point of three": changed(history={"E": [[0, 1, 2]]})}


def test_each_malformed_file_is_one_named_problem_and_the_others_still_list(capsys):
    runs = _ledger(*SMALL)
    entry = json.loads((COMMITTED / f"{SMALL[0]}.json").read_text())
    shapes = {**BAD_FILES, **_shapes(entry)}
    for number, (name, content) in enumerate(shapes.items()):
        path = runs / f"{number:020d}.json"
        path.write_bytes(content)
        with pytest.raises(DataError) as refused:
            ledger.read(path)
        assert str(path) in str(refused.value) and "\n" not in str(refused.value), name
        code, out, err = _run(__import__("otbench.results").results.main, ["show", path.stem[:10]], capsys)
        assert code == 2 and "Traceback" not in err and err.count("\n") == 1, name
    os.mkfifo(runs / "fifo0000000000000000.json")  # a FIFO would block a reader for ever
    (runs / "dir00000000000000000.json").mkdir()
    (runs / "zero0000000000000000.json").symlink_to("/dev/zero")
    code, out, err = _run(__import__("otbench.results").results.main, ["list"], capsys)
    assert code == 1 and all(key in out for key in SMALL)
    lines = err.strip().splitlines()
    assert len(lines) == len(shapes) + 3 and all(line.startswith("error: ") and "/runs/" in line for line in lines)
    code, out, _ = _run(__import__("otbench.results").results.main, ["show", SMALL[1][:8]], capsys)
    assert code == 0 and json.loads(out)["key"] == SMALL[1]  # one entry does not depend on the others
    assert len(ledger.verify()) == len(shapes) + 3
    with pytest.raises(DataError, match="and .* more: otbench results verify"):
        ledger.entries()


def test_a_dirty_entry_is_marked_on_the_page_that_shows_it():
    kept = ledger.read(COMMITTED / f"{SMALL[1]}.json")
    assert ledger.is_dirty(kept)
    note = _dirty_note([("base", kept)])
    assert len(note) == 1 and "base (0c474795)" in note[0] and "9fe6586-dirty" in note[0]
    rendered = table(f"runs/{SMALL[1][:8]}.{SMALL[2][:8]}", ROOT / "results")
    assert "> dirty: " in rendered and "uncommitted changes to 9fe6586" in rendered


def test_results_load_and_add_check_their_store_before_writing(tmp_path, capsys):
    _ledger(SMALL[0])
    results = __import__("otbench.results").results
    afile = tmp_path / "a-file"
    afile.write_text("x")
    for store in (["--mlruns", str(afile)], ["--mlruns", "/proc/otbench-store"],
                  ["--tracking-uri", "sqlite:///:memory:"], ["--tracking-uri", "sqlite://"]):
        for verb in (["load", SMALL[0][:8]], ["add", "--all"]):
            code, out, err = _run(results.main, [*verb, *store], capsys)
            assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and not out, (verb, store)


def test_a_bad_entry_refuses_the_whole_load_before_the_store_is_made(tmp_path, capsys):
    runs = _ledger(*SMALL)
    (runs / f"{SMALL[2]}.json").write_text("[]")
    store = tmp_path / "store"
    code, _, err = _run(__import__("otbench.results").results.main, ["load", "--mlruns", str(store)], capsys)
    assert code == 2 and SMALL[2] in err and not store.exists()


def _runs_of(database: Path) -> list[tuple[str, str, str]]:
    """The store's runs (name, status, lifecycle), read without making a database where there is none."""
    if not database.exists():
        return []
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
        return connection.execute("SELECT name, status, lifecycle_stage FROM runs").fetchall()


def test_a_load_stopped_half_way_leaves_no_run_behind_and_the_next_load_finishes(tmp_path, monkeypatch):
    monkeypatch.setenv("OTBENCH_MLRUNS", str(tmp_path / "store"))
    mlflow_store.configure()
    entry = ledger.read(_ledger(SMALL[1]) / f"{SMALL[1]}.json")
    real = ledger._log

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(ledger, "_log", stopped)
    with pytest.raises(KeyboardInterrupt):
        ledger.load(entry)
    assert [(status, stage) for _, status, stage in _runs_of(tmp_path / "store" / "mlflow.db")] == [("KILLED", "deleted")]
    assert lookup.find_in_store(entry.definition) is None and lookup.unfinished_in_store(entry.definition) == []
    monkeypatch.setattr(ledger, "_log", real)
    loaded = mlflow.get_run(ledger.load(entry))
    assert loaded.info.status == "FINISHED" and ledger.LOADING_TAG not in loaded.data.tags
    assert ledger.load(entry) == loaded.info.run_id  # loaded once


def test_a_load_killed_outright_is_skipped_by_lookups_and_deleted_by_a_later_load(tmp_path, monkeypatch):
    monkeypatch.setenv("OTBENCH_MLRUNS", str(tmp_path / "store"))
    mlflow_store.configure()
    entry = ledger.read(_ledger(SMALL[0]) / f"{SMALL[0]}.json")
    experiment = mlflow.get_experiment_by_name(mlflow_store.EXPERIMENT)
    stale = mlflow.MlflowClient().create_run(experiment.experiment_id, tags={  # what a SIGKILL mid-load leaves
        ledger.LEDGER_TAG: entry.key, ledger.LOADING_TAG: f"{time.time() - ledger.STALE_LOADING_SECONDS - 1:.0f}",
        "otbench.key": entry.key, "command": entry.definition.command, "env": entry.definition.env})
    assert lookup.unfinished_in_store(entry.definition) == []
    ledger.load(entry)
    assert mlflow.get_run(stale.info.run_id).info.lifecycle_stage == "deleted"


def test_a_new_store_stopped_during_its_migrations_leaves_none_and_the_next_command_makes_it(tmp_path, monkeypatch):
    import mlflow.store.db.utils as database_utils

    real = database_utils._upgrade_db

    def stopped(engine):
        raise KeyboardInterrupt  # tables made, migrations not: what a Ctrl-C seconds into a first use did

    monkeypatch.setattr(database_utils, "_upgrade_db", stopped)
    store = tmp_path / "store"
    with pytest.raises(KeyboardInterrupt):
        mlflow_store.configure(directory=store)
    assert not (store / "mlflow.db").exists()
    monkeypatch.setattr(database_utils, "_upgrade_db", real)
    mlflow_store.configure(directory=store)
    assert mlflow.get_experiment_by_name(mlflow_store.EXPERIMENT) is not None


def test_reproduce_status_writes_nothing(tmp_path, capsys):
    _ledger(*NAMES_DESC.values())
    store = tmp_path / "never-made"
    code, out, _ = _run(reproduce.main, ["--status", "--only", "bfcl/names_desc", "--mlruns", str(store)], capsys)
    assert code == 0 and out.count("finished") == 3 and "ledger" in out
    assert not store.exists()


def test_an_old_optimize_entry_loads_its_learning_scores_under_their_learning_names(tmp_path, monkeypatch):
    monkeypatch.setenv("OTBENCH_MLRUNS", str(tmp_path / "store"))
    mlflow_store.configure()
    entry = ledger.read(_ledger(OLD_OPTIMIZE) / f"{OLD_OPTIMIZE}.json")
    assert "E" in entry.history  # kept before the learning split's scores were named apart
    metrics = mlflow.get_run(ledger.load(entry)).data.metrics
    assert "E" not in metrics and metrics["learning/E"] == entry.metrics["E"]
    assert metrics["result/E"] == entry.metrics["result/E"]


@pytest.mark.slow
def test_a_sigint_at_each_second_of_a_first_results_load_leaves_a_store_every_command_accepts(tmp_path, monkeypatch,
                                                                                              capsys):
    """A real ``results load`` of two entries on a new store (MLflow's migrations, then the loads), stopped by
    SIGINT one second into its use of the store, two seconds in... until a load ends before its signal: every store
    left is taken by a second load and by ``reproduce --status``, and holds no RUNNING run."""
    _ledger(*SMALL[1:])
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "OTBENCH_RESULTS": str(results_dir())}
    second, finished = 0, False
    while not finished:
        second += 1
        store = tmp_path / f"store-{second}"
        first = subprocess.Popen([sys.executable, "-m", "otbench.results", "load"], cwd=tmp_path,
                                 env={**environment, "OTBENCH_MLRUNS": str(store)}, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
        while not store.exists() and first.poll() is None:  # the imports before the store's first use take a while
            time.sleep(0.05)
        try:
            first.wait(timeout=second)
            finished = True
        except subprocess.TimeoutExpired:
            first.send_signal(signal.SIGINT)
            first.wait(timeout=120)
        assert "Traceback" not in first.stderr.read(), second
        monkeypatch.setenv("OTBENCH_MLRUNS", str(store))
        monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)  # MLflow keeps the last store in use there
        results = __import__("otbench.results").results
        for main, argv in ((results.main, ["load"]), (reproduce.main, ["--status", "--only", "bfcl/names_desc"])):
            code, _, err = _run(main, argv, capsys)
            assert code == 0, (second, argv, err)
        running = [run for run in _runs_of(store / "mlflow.db") if run[1:] == ("RUNNING", "active")]
        assert running == [], second
