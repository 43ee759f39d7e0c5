"""One embedded server for several commands: what ``compare`` relies on when it runs missing rows."""

from pathlib import Path

from otbench.llm import session
from otbench.llm.metering import TokenLedger
from otbench.llm.session import LMOptions, one_embedded_server, open_lms


class CountingServer:
    """Stands in for the llama.cpp server: counts starts and stops."""

    started = stopped = 0
    api_key = "key"

    def __init__(self, settings):
        self.settings = settings

    def __enter__(self):
        CountingServer.started += 1
        return "http://127.0.0.1:1"

    def __exit__(self, *exc_info):
        CountingServer.stopped += 1


def _open_twice():
    for _ in range(2):
        with open_lms(LMOptions(), TokenLedger(), ("agent", "editor")) as lms:
            assert lms["agent"].kwargs["api_base"] == "http://127.0.0.1:1/v1"


def test_commands_inside_one_embedded_server_share_it(monkeypatch):
    monkeypatch.setattr(session, "EmbeddedServer", CountingServer)
    monkeypatch.setattr(session, "embedded_identity", lambda options: (Path("model.gguf"), "model"))
    CountingServer.started = CountingServer.stopped = 0
    _open_twice()
    assert (CountingServer.started, CountingServer.stopped) == (2, 2)
    with one_embedded_server():
        _open_twice()
        with one_embedded_server():
            _open_twice()
        assert (CountingServer.started, CountingServer.stopped) == (3, 2)
    assert CountingServer.stopped == 3
