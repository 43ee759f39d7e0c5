"""Bad command-line input found by ``benchmarks/bad_cli_inputs.py``, by class: each is one line on stderr and
exit 2 before any work (no environment built, no model server started), never a traceback, a hang, a
silently different run or exit 0."""

import socket

import pytest

from otbench import bench, compare, console, evaluate, exits, optimize, serve, ui
from otbench.errors import RunError
from otbench.exits import run_main
from otbench.llm import server
from otbench.run import evaluation, optimization
from otbench.study import comparing, grid


@pytest.fixture(autouse=True)
def nothing_starts(monkeypatch):
    def reached(*args, **kwargs):
        raise AssertionError("work started: the input was not refused first")

    for module in (evaluation, optimization, comparing, grid, bench):
        monkeypatch.setattr(module, "make_environment", reached)
    for module in (evaluation, optimization):
        monkeypatch.setattr(module, "open_lms", reached)
    monkeypatch.setattr(server.EmbeddedServer, "__enter__", reached)
    monkeypatch.setattr(serve, "embedded_identity", reached)
    monkeypatch.setattr(ui.subprocess, "Popen", reached)
    monkeypatch.setattr(comparing, "run_missing", reached)


@pytest.fixture
def busy_port():
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        yield held.getsockname()[1]


def _refused(main, argv, capsys):
    with pytest.raises(SystemExit) as stop:
        run_main(main, argv)
    captured = capsys.readouterr()
    assert stop.value.code == 2, captured.err
    assert len(captured.err.strip().splitlines()) == 1 and "Traceback" not in captured.err, captured.err
    assert captured.out == ""
    return captured.err


COMMANDS = [evaluate.main, optimize.main, compare.main]


@pytest.mark.parametrize("main", COMMANDS)
@pytest.mark.parametrize("value", ["nan", "inf", "-1", "hot"])
def test_a_temperature_that_is_not_a_finite_number_of_at_least_0_is_refused(main, value, capsys):
    assert "argument --temperature" in _refused(main, ["--temperature", value], capsys)


@pytest.mark.parametrize("main", [*COMMANDS, bench.main])
def test_chess_has_no_bfcl_setting(main, capsys):
    argv = ["oracle"] if main is bench.main else []
    err = _refused(main, [*argv, "--env", "chess", "--setting", "gold"], capsys)
    assert "unknown chess setting 'gold'" in err


@pytest.mark.parametrize("argv, message", [
    (["--optimizers", ","], "--optimizers names no optimizer"),
    (["--embedded-model", "qwen-70b"], "unknown embedded model 'qwen-70b'"),
    (["--gguf", "/no/such/model.gguf"], "--gguf /no/such/model.gguf: no such file"),
])
def test_compare_refuses_what_its_rows_would_refuse_before_running_any(argv, message, capsys):
    err = _refused(compare.main, argv, capsys)
    assert err.startswith(f"error: {message}")  # not "row base: ..." after a line saying it runs the row


@pytest.mark.parametrize("argv, message", [
    (["retrieval", "--retriever", "nope"], "unknown retriever 'nope'"),  # whatever --env says
    (["nope", "--env", "chess", "--setting", "gold"], "unknown benchmark 'nope'"),
    (["oracle", "--split", "validation"], "unknown split 'validation'"),
])
def test_bench_refuses_a_name_before_anything_runs(argv, message, capsys):
    assert message in _refused(bench.main, argv, capsys)


@pytest.mark.parametrize("main", [ui.main, serve.main])
def test_a_port_out_of_range_or_held_by_another_process_is_refused_before_a_server_starts(main, busy_port, capsys):
    assert "expected a port from 1 to 65535, got 70000" in _refused(main, ["--port", "70000"], capsys)
    assert "Address already in use" in _refused(main, ["--port", str(busy_port)], capsys)


@pytest.mark.parametrize("host, message", [("", "expected an address to listen on"),
                                           ("no-such-host.invalid", "cannot listen on no-such-host.invalid")])
def test_serve_refuses_an_address_it_cannot_listen_on_before_the_model_loads(host, message, capsys):
    assert message in _refused(serve.main, ["--host", host], capsys)


def test_the_otbench_command_serves_too(monkeypatch, capsys):
    assert "serve" in console.COMMANDS
    with pytest.raises(SystemExit) as stop:
        console.main(["serve", "--slots", "0"])
    assert stop.value.code == 2 and "argument --slots" in capsys.readouterr().err


def test_a_user_error_of_several_lines_is_printed_on_one(capsys):
    def main(argv):
        raise RunError("a library's message\n\n  To fix:\n    - something")

    with pytest.raises(SystemExit):
        exits.run_main(main, [])
    assert capsys.readouterr().err == "error: a library's message To fix: - something\n"


def test_a_model_call_that_failed_for_good_ends_the_command_on_one_line(capsys):
    """A model server that stops answering mid-run (a timeout after the retries) is neither a user's mistake nor a
    bug of the command: one line saying so, and how the run's kept work goes on."""
    from dspy.utils.exceptions import LMTimeoutError

    def main(argv):
        raise LMTimeoutError("litellm.Timeout: APITimeoutError - Request timed out.\n", model="qwen")

    with pytest.raises(SystemExit) as stop:
        exits.run_main(main, [])
    err = capsys.readouterr().err
    assert stop.value.code == exits.MODEL_FAILED_EXIT and len(err.strip().splitlines()) == 1
    assert err.startswith("error: a model call failed (LMTimeoutError: ") and "--resume" in err


def test_any_other_exception_is_still_raised_as_the_bug_it_is():
    def main(argv):
        raise ValueError("a bug")

    with pytest.raises(ValueError, match="a bug"):
        exits.run_main(main, [])
