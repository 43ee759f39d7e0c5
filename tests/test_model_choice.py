"""Choosing models: a model that cannot be reached is refused in one line before anything slow, and
``otbench.serve`` shares one loaded embedded model (its server is stood in for: no model is loaded here)."""

import threading
from pathlib import Path

import pytest
from chat_server import chat_server

from otbench import compare, evaluate, optimize, serve
from otbench.exits import run_main
from otbench.run import evaluation, optimization
from otbench.study import comparing

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

    for module in (evaluation, optimization, comparing):
        monkeypatch.setattr(module, "make_environment", refuse)
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
    with chat_server(lambda body: "{}") as (url, _), pytest.raises(AssertionError, match="environment was built"):
        evaluate.main(["--lm", "openai/gpt-5-mini", "--api-base", url])  # the check passed: on to the environment


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.__name__)
def test_a_server_that_does_not_answer_or_refuses_the_key_is_refused_before_the_environment_is_built(
        command, nothing_slow, capsys):
    code, _, err = _run(command.main, ["--api-base", "http://127.0.0.1:9"], capsys)
    assert code == 2 and err.startswith("error: --api-base http://127.0.0.1:9/v1: nothing answers there") \
        and len(err.splitlines()) == 1
    with chat_server(lambda body: "{}", api_key="its-key") as (url, bodies):
        code, _, err = _run(command.main, ["--api-base", url, "--api-key", "another-key"], capsys)
        assert code == 2 and "the server refuses the API key (HTTP 401)" in err and len(err.splitlines()) == 1
        if command is not evaluate:  # evaluate has no editor
            code, _, err = _run(command.main, ["--editor-lm", "openai/gpt-5-mini", "--editor-api-base", url,
                                               "--api-key", "another-key"], capsys)
            assert code == 2 and err.startswith(f"error: --editor-api-base {url}/v1: the server refuses")
        assert not bodies


def test_serve_prints_the_url_to_share_and_how_to_use_it(monkeypatch, capsys):
    started = []

    class Served:
        def __init__(self, settings, api_key, *, shared):
            assert shared  # recorded as a server for other commands
            started.append((settings, api_key))

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
    url, key = out.splitlines()
    assert url == "http://127.0.0.1:8123" and "--api-base http://127.0.0.1:8123 --api-key KEY" in err
    (settings, served_key), = started
    assert (settings.slots, settings.host, settings.port) == (3, "0.0.0.0", 8123)
    assert served_key == key and len(key) >= 32  # the key the server takes is the one printed, and not guessable
    assert serve.main(["--api-key", "shared-key"], until=stop) == 0  # a key given stays the key (a restart)
    assert capsys.readouterr().out.splitlines()[1] == "shared-key" and started[-1][1] == "shared-key"
