"""Choosing models: a model that cannot be reached is refused in one line before anything slow, and
``otbench.serve`` shares one loaded embedded model (its server is stood in for: no model is loaded here)."""

import threading
from pathlib import Path

import pytest

from otbench import compare, evaluate, optimize, serve
from otbench.cli import run_main

COMMANDS = [evaluate, optimize, compare]


def _run(main, argv, capsys):
    with pytest.raises(SystemExit) as stop:
        run_main(main, argv)
    captured = capsys.readouterr()
    return stop.value.code, captured.out, captured.err


@pytest.fixture
def nothing_slow(monkeypatch):
    """Building an environment (BFCL's data, a chess engine, a search index) is what takes seconds."""
    def refuse(*args, **kwargs):
        raise AssertionError("the environment was built before the model was checked")

    for command in COMMANDS:
        monkeypatch.setattr(command, "make_environment", refuse)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("argv, message", [
    (["--lm", "openai/gpt-5-mini"], "error: model 'openai/gpt-5-mini' needs OPENAI_API_KEY in the environment"),
    (["--lm", "no-such-provider-model"], "error: unknown model 'no-such-provider-model'"),
    (["--api-base", "gpu-box:8000"], "error: --api-base 'gpu-box:8000': expected an http(s) URL"),
])
def test_an_unreachable_model_is_refused_in_one_line_before_the_environment_is_built(command, argv, message,
                                                                                     nothing_slow, capsys):
    code, out, err = _run(command.main, argv, capsys)
    assert code == 2 and out == "" and err.startswith(message) and len(err.splitlines()) == 1


def test_a_model_on_ones_own_server_needs_no_provider_key(nothing_slow, capsys):
    with pytest.raises(AssertionError, match="environment was built"):  # the check passed: on to the environment
        evaluate.main(["--lm", "openai/gpt-5-mini", "--api-base", "http://127.0.0.1:9"])


def test_serve_prints_the_url_to_share_and_how_to_use_it(monkeypatch, capsys):
    started = []

    class Served:
        def __init__(self, settings):
            started.append(settings)

        def __enter__(self):
            return "http://127.0.0.1:8123"

        def __exit__(self, *exc_info):
            pass

    monkeypatch.setattr(serve, "EmbeddedServer", Served)
    monkeypatch.setattr(serve, "embedded_identity", lambda options: (Path("model.gguf"), "model"))
    stop = threading.Event()
    stop.set()
    assert serve.main(["--slots", "3", "--host", "0.0.0.0", "--port", "8123"], until=stop) == 0
    out, err = capsys.readouterr()
    assert out == "http://127.0.0.1:8123\n" and "--api-base http://127.0.0.1:8123" in err
    (settings,) = started
    assert (settings.slots, settings.host, settings.port) == (3, "0.0.0.0", 8123)
