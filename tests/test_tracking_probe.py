"""A tracking server or database that does not answer is refused on one line before any work (MLflow's
client would retry for minutes and then print a traceback); one that answers is used."""

import http.server
import socket
import threading

import pytest

from otbench import evaluate, export, optimize, store
from otbench.errors import SetupError
from otbench.exits import run_main


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _refused(main, argv, capsys):
    with pytest.raises(SystemExit) as stop:
        run_main(main, argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("main, extra", [(evaluate.main, ["--agent", "null"]), (optimize.main, []),
                                         (export.main, ["runs:/0123456789abcdef"])])
def test_a_tracking_server_that_refuses_connections_is_one_line_before_work(main, extra, capsys):
    uri = f"http://127.0.0.1:{_closed_port()}"
    err = _refused(main, [*extra, "--tracking-uri", uri], capsys)
    assert f"--tracking-uri {uri}: nothing answers there" in err and "Connection refused" in err


def test_a_server_that_accepts_but_never_answers_is_refused_after_the_probe_timeout(monkeypatch, capsys):
    monkeypatch.setattr(store, "PROBE_SECONDS", 0.5)
    with socket.socket() as silent:  # the kernel accepts the connection; nobody ever replies
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        uri = f"http://127.0.0.1:{silent.getsockname()[1]}"
        with pytest.raises(SetupError, match="nothing answers there within 0 s"):
            store.check_reachable(uri, "--tracking-uri", timeout=store.PROBE_SECONDS)


def test_a_database_that_accepts_no_connection_is_refused(capsys):
    port = _closed_port()
    err = _refused(optimize.main, ["--optimizer", "play2prompt", "--sweep", "2",
                                   "--storage", f"postgresql://nobody@127.0.0.1:{port}/optuna"], capsys)
    assert "--storage postgresql://" in err and "nothing answers there" in err


@pytest.mark.parametrize("uri", ["mlruns", "ftp://host/store", "http://"])
def test_a_uri_of_no_kind_mlflow_takes_is_refused(uri, capsys):
    err = _refused(evaluate.main, ["--agent", "null", "--tracking-uri", uri], capsys)
    assert f"--tracking-uri {uri}:" in err


def test_a_server_that_answers_passes_the_probe():
    class Answering(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(404)  # any HTTP answer means a server is there
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answering)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        store.check_reachable(f"http://127.0.0.1:{server.server_address[1]}", "--tracking-uri")
    finally:
        server.shutdown()
        server.server_close()
