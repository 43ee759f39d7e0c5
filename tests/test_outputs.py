"""Places a command writes are checked before it works: a wrong type, an unwritable place or a full
file system is one line and exit 2, before the store, the data or a model is touched."""

import os
import tempfile
from pathlib import Path

import pytest

from otbench import bench, compare, evaluate, export, mlflow_store, optimize, outputs, prepare, serve, ui, ui_check
from otbench.errors import ConfigError
from otbench.exits import run_main
from otbench.modules.tool_docs import DocumentedTool, Toolbox
from otbench.outputs import problem
from otbench.run import evaluation, optimization
from otbench.study import comparing, grid


@pytest.fixture
def nothing_starts(monkeypatch):
    """The store, the environments and the LMs must not be reached: the refusal comes first."""

    def reached(*args, **kwargs):
        raise AssertionError("work started before the outputs were checked")

    monkeypatch.setattr(mlflow_store, "configure", reached)
    for module in (evaluation, optimization, comparing, grid, bench):
        monkeypatch.setattr(module, "make_environment", reached)
    for module in (evaluation, optimization):
        monkeypatch.setattr(module, "open_lms", reached)
    monkeypatch.setattr(serve, "embedded_identity", reached)
    monkeypatch.setattr(prepare, "ensure_gguf", reached)


def _refused(main, argv, capsys):
    with pytest.raises(SystemExit) as stop:
        run_main(main, argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.fixture
def places(tmp_path):
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "a-directory").mkdir()
    Toolbox({"t1": [DocumentedTool("function_1", description="Adds.")]}).write(tmp_path / "docs.json")
    return tmp_path


WRONG_TYPES = [
    (evaluate.main, ["--mlruns", "{f}"], "--mlruns", "is a file, not a directory"),
    (evaluate.main, ["--mlruns", "{f}/store"], "--mlruns", "a-file is a file, not a directory"),
    (evaluate.main, ["--env", "chess", "--engine-cache", "{d}"], "--engine-cache", "is a directory, not a file"),
    (optimize.main, ["--out", "{f}"], "--out", "is a file, not a directory"),
    (optimize.main, ["--out", "{f}/docs"], "--out", "is a file, not a directory"),
    (optimize.main, ["--mlruns", "{f}"], "--mlruns", "is a file, not a directory"),
    (optimize.main, ["--optimizer", "play2prompt", "--sweep", "2", "--storage", "sqlite:///{d}"], "--storage",
     "is a directory, not a file"),
    (compare.main, ["--plots", "{f}"], "--plots", "is a file, not a directory"),
    (compare.main, ["--mlruns", "{f}"], "--mlruns", "is a file, not a directory"),
    (export.main, ["{docs}", "--out", "{d}"], "--out", "is a directory, not a file"),
    (export.main, ["{docs}", "--out", "{f}/tools.json"], "--out", "a-file is a file, not a directory"),
    (export.main, ["runs:/0123", "--mlruns", "{f}"], "--mlruns", "is a file, not a directory"),
    (ui.main, ["--mlruns", "{f}"], "--mlruns", "is a file, not a directory"),
    (ui_check.main, ["--screenshot", "{d}"], "--screenshot", "is a directory, not a file"),
    (ui_check.main, ["--trace-screenshot", "{d}"], "--trace-screenshot", "is a directory, not a file"),
    (ui_check.main, ["--mlruns", "{f}"], "--mlruns", "is a file, not a directory"),
]


@pytest.mark.parametrize("main, argv, option, message", WRONG_TYPES)
def test_a_path_of_the_wrong_type_is_refused_before_work(main, argv, option, message, places, nothing_starts, capsys):
    filled = [arg.format(f=places / "a-file", d=places / "a-directory", docs=places / "docs.json") for arg in argv]
    err = _refused(main, filled, capsys)
    assert option in err and message in err


@pytest.mark.parametrize("main, argv", [(evaluate.main, []), (optimize.main, []), (compare.main, []),
                                        (bench.main, ["oracle"]), (prepare.main, []), (serve.main, [])])
def test_a_cache_that_is_a_file_is_refused_before_work(main, argv, places, nothing_starts, monkeypatch, capsys):
    monkeypatch.setenv("OTBENCH_CACHE", str(places / "a-file"))
    err = _refused(main, argv, capsys)
    assert "the otbench cache ($OTBENCH_CACHE)" in err and "is a file, not a directory" in err


def test_the_default_store_is_checked_too(places, nothing_starts, monkeypatch, capsys):
    monkeypatch.setenv("OTBENCH_MLRUNS", str(places / "a-file"))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    err = _refused(evaluate.main, [], capsys)
    assert "the MLflow store" in err and "is a file, not a directory" in err


def _unwritable_directory(tmp_path: Path) -> Path:
    """A directory nothing can be created in: read-only bits for a user; as root (who ignores them), /sys."""
    if os.geteuid() != 0:
        locked = tmp_path / "read-only"
        locked.mkdir()
        locked.chmod(0o555)
        return locked
    try:
        handle, name = tempfile.mkstemp(dir="/sys")
    except OSError:
        return Path("/sys")
    os.close(handle)
    os.unlink(name)
    pytest.skip("/sys is writable here and root ignores permission bits: no unwritable directory to try")


@pytest.mark.parametrize("main, argv, option", [
    (evaluate.main, ["--mlruns", "{r}/mlruns"], "--mlruns"),
    (optimize.main, ["--out", "{r}/learned"], "--out"),
    (compare.main, ["--plots", "{r}/plots"], "--plots"),
    (export.main, ["{docs}", "--out", "{r}/tools.json"], "--out"),
    (ui.main, ["--mlruns", "{r}"], "--mlruns"),
])
def test_an_unwritable_place_is_refused_before_work(main, argv, option, places, nothing_starts, capsys):
    unwritable = _unwritable_directory(places)
    err = _refused(main, [arg.format(r=unwritable, docs=places / "docs.json") for arg in argv], capsys)
    assert option in err and f"cannot write in {unwritable}" in err


@pytest.mark.parametrize("main, argv, option", [
    (evaluate.main, ["--mlruns", "{t}/mlruns"], "--mlruns"),
    (optimize.main, ["--out", "{t}/learned"], "--out"),
    (compare.main, ["--plots", "{t}/plots"], "--plots"),
    (export.main, ["{docs}", "--out", "{t}/tools.json"], "--out"),
])
def test_a_file_system_without_room_is_refused_before_work(main, argv, option, places, nothing_starts, monkeypatch,
                                                           capsys):
    """The real free space of the test's file system, against a need no disk meets."""
    monkeypatch.setattr(outputs, "MIN_FREE_BYTES", 2**62)
    err = _refused(main, [arg.format(t=places, docs=places / "docs.json") for arg in argv], capsys)
    assert option in err and "MB free on the file system of" in err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_a_write_that_fails_at_the_end_is_still_one_line(places, capsys):
    err = _refused(export.main, [str(places / "docs.json"), "--out", "/dev/full"], capsys)
    assert "--out /dev/full: No space left on device" in err


def test_a_writable_place_passes_and_the_check_leaves_nothing_behind(tmp_path):
    assert problem(tmp_path / "new" / "deeper", "directory") is None
    assert problem(tmp_path / "new" / "tools.json", "file") is None
    assert list(tmp_path.iterdir()) == []  # neither created nor littered with the write probe


def test_with_a_tracking_uri_the_store_directory_is_not_where_the_command_writes(places, nothing_starts):
    """--tracking-uri wins over --mlruns: a --mlruns that is a file is not refused, the URI's database is checked."""
    from otbench.outputs import check_outputs

    parser = evaluate.build_parser()
    args = parser.parse_args(["--mlruns", str(places / "a-file"), "--tracking-uri", f"sqlite:///{places}/other.db"])
    check_outputs(parser, args, cache=False)
    args.tracking_uri = f"sqlite:///{places}/a-file/other.db"
    with pytest.raises(ConfigError, match="--tracking-uri .*a-file: is a file, not a directory"):
        check_outputs(parser, args, cache=False)
