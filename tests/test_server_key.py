"""Only otbench's clients use the embedded server: a random key per start, handed to the server privately and
to the LMs that call it; a server of one's own gets the key given with --api-key or $OTBENCH_API_KEY, which
no run logs, saves or prints. The real server's answers are checked in test_embedded.py."""

import dataclasses
import json
import sys
from pathlib import Path

import mlflow
import pytest
from chat_server import chat_server
from test_optimize_cli import scripted_lms  # noqa: F401 - the scripted LMs fixture

from otbench import compare, evaluate, optimize
from otbench.exits import run_main
from otbench.llm import server, session
from otbench.llm.metering import TokenLedger
from otbench.llm.server import NO_BROWSER_ORIGIN, EmbeddedServer, ServerSettings, guarded
from otbench.llm.session import API_KEY_VARIABLE, LMOptions, open_lms
from otbench.study import comparing

REPLY = '{"calls":[{"name":"function_1","arguments":{"n":3}}]}'


@dataclasses.dataclass(frozen=True)
class EchoingSettings(ServerSettings):
    """Runs a stand-in for the model server as the child: it reports whether its key reached it, and how."""

    def argv(self) -> list[str]:
        child = (f"import os, sys\nkey = os.environ.get({server._KEY_VARIABLE!r}, '')\n"
                 "print('otbench-llm-url http://127.0.0.1:1/' + str(len(key)) + '/' + str(key in ' '.join(sys.argv)),"
                 " flush=True)\nsys.stdin.read()\n")
        return [sys.executable, "-c", child]


def test_every_start_gets_its_own_key_handed_over_in_the_environment_not_the_command_line():
    settings = EchoingSettings(Path("model.gguf"))
    with EmbeddedServer(settings) as first_url, EmbeddedServer(settings) as second_url:
        pass
    first, second = EmbeddedServer(settings), EmbeddedServer(settings)
    assert first.api_key != second.api_key and len(first.api_key) >= 32
    assert first_url == second_url == f"http://127.0.0.1:1/{len(first.api_key)}/False"  # the child had it, argv not
    assert first.api_key not in " ".join(settings.argv())


def test_the_server_is_set_to_answer_only_its_key_and_no_browser_origin():
    xllamacpp = pytest.importorskip("xllamacpp")
    params = guarded(xllamacpp.CommonParams(), "the-key")
    assert params.api_keys == ["the-key"]
    assert params.cors_credentials is False and params.cors_origins == NO_BROWSER_ORIGIN


def test_the_lms_of_a_command_carry_the_key_of_the_server_it_started(monkeypatch):
    class Started:
        def __init__(self, settings):
            self.api_key = "fresh-key"

        def __enter__(self):
            return "http://127.0.0.1:1"

        def __exit__(self, *exc_info):
            pass

    monkeypatch.setattr(session, "EmbeddedServer", Started)
    monkeypatch.setattr(session, "embedded_identity", lambda options: (Path("model.gguf"), "model"))
    with open_lms(LMOptions(api_key="not-this-one"), TokenLedger(), ("agent", "editor")) as lms:
        assert lms["agent"].kwargs["api_key"] == lms["editor"].kwargs["api_key"] == "fresh-key"


@pytest.mark.parametrize("by_environment", [False, True])
def test_a_shared_server_is_reached_with_its_key_and_refused_without_it(by_environment, monkeypatch, capsys):
    monkeypatch.setattr(session, "EmbeddedServer", None)  # a running server is named: none is started
    with chat_server(lambda body: REPLY, api_key="shared-key") as (url, bodies):
        given = ["--api-key", "shared-key"]
        if by_environment:
            monkeypatch.setenv(API_KEY_VARIABLE, "shared-key")
            given = []
        with pytest.raises(SystemExit) as stop:
            run_main(evaluate.main, ["--api-base", url, "--limit", "1", "--no-cache", "--json", "--quiet", *given])
        assert stop.value.code == 0, capsys.readouterr().err
        assert len(bodies) == 1
        monkeypatch.delenv(API_KEY_VARIABLE, raising=False)
        with pytest.raises(SystemExit) as refused:
            run_main(evaluate.main, ["--api-base", url, "--limit", "1", "--no-cache", "--json", "--quiet",
                                     "--api-key", "wrong-key"])
        err = capsys.readouterr().err
        assert refused.value.code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        assert len(bodies) == 1


def test_the_key_is_never_logged_saved_or_passed_on_a_printed_command_line(scripted_lms, tmp_path, capsys):  # noqa: F811
    with pytest.raises(SystemExit) as stop:
        run_main(optimize.main, ["--limit", "1", "--iterations", "1", "--api-key", "the-secret", "--json", "--quiet",
                                 "--out", str(tmp_path)])
    assert stop.value.code == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    run = mlflow.get_run(run_id)
    checkpoint = mlflow.artifacts.load_dict(f"runs:/{run_id}/checkpoint.json")
    assert "the-secret" not in json.dumps([run.data.params, run.data.tags, checkpoint])

    parser = compare.build_parser()
    options = compare.options_from(vars(parser.parse_args(["--api-key", "the-secret", "--api-base",
                                                           "http://127.0.0.1:1"])))

    class Bfcl:
        name, setting, learning = "bfcl", "names_only", "online"

        def tasks(self, split="test"):
            return [None] * 150

    rows = comparing.plan_rows(options, Bfcl())
    assert options.settings().lm.api_key == "the-secret"  # the rows' runs reach the server with it
    assert rows and not any("the-secret" in row.definition.canonical() for row in rows)
