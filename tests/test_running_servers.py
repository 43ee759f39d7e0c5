"""This machine's record of embedded servers: a second one is warned about before it loads, with the one to use
instead; records of servers that are gone are dropped; ``--api-base`` alone reaches a recorded server."""

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_server_key import EchoingSettings

from otbench.llm import running
from otbench.llm.running import RunningServer, crowding_warning, key_for, running_servers
from otbench.llm.server import EmbeddedServer
from otbench.llm.session import DEFAULT_API_KEY, server_key


@pytest.fixture
def two_cores(monkeypatch):
    monkeypatch.setattr(running, "usable_cores", lambda: 2)


def test_a_running_server_is_recorded_and_forgotten_when_it_stops(two_cores):
    settings = EchoingSettings(Path("model.gguf"), threads=2, slots=2)
    with EmbeddedServer(settings, shared=True) as url:
        (recorded,) = running_servers()
        assert (recorded.url, recorded.slots, recorded.threads, recorded.shared) == (url, 2, 2, True)
        assert oct(os.stat(running.registry_dir() / f"{recorded.pid}.json").st_mode & 0o777) == "0o600"
    assert running_servers() == []


def test_a_second_server_on_the_same_cores_is_warned_about_before_it_loads_with_the_one_to_use(two_cores, capsys):
    settings = EchoingSettings(Path("model.gguf"), threads=2, slots=2)
    with EmbeddedServer(settings, shared=True) as first:
        capsys.readouterr()
        with EmbeddedServer(settings):
            pass
        err = capsys.readouterr().err
    warning, loading = err.splitlines()[:2]
    assert warning.startswith("warning: the embedded model already runs on this machine")
    assert warning.endswith(f"pass --api-base {first} instead") and "2 slots" in warning
    assert loading.startswith("loading the embedded model")  # the warning comes before the load
    with EmbeddedServer(settings):
        pass
    assert "warning" not in capsys.readouterr().err  # nothing runs any more: no warning


def test_servers_whose_threads_fit_the_cores_together_are_not_warned_about(two_cores, capsys):
    one_thread = EchoingSettings(Path("model.gguf"), threads=1)
    with EmbeddedServer(one_thread), EmbeddedServer(one_thread):
        pass
    assert "warning" not in capsys.readouterr().err


def test_a_commands_own_server_is_named_with_both_fixes(two_cores):
    with EmbeddedServer(EchoingSettings(Path("model.gguf"), threads=2)) as url:
        warning = crowding_warning(2)
    assert f"pass --api-base {url} to use it while that command runs" in warning
    assert "python -m otbench.serve --slots 2" in warning


def test_records_of_gone_or_reused_processes_and_unreadable_ones_are_dropped(two_cores):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    alive = os.getpid()
    base = RunningServer(0, "", "http://127.0.0.1:1", 1, 2, "model.gguf", True, "key")
    running.record(dataclasses.replace(base, pid=int(gone.stdout), started="1"))
    running.record(dataclasses.replace(base, pid=alive, started="not when it started"))  # a reused pid
    (running.registry_dir() / "999999999.json").write_text("{not json")
    assert running_servers() == [] and crowding_warning(2) is None
    assert list(running.registry_dir().glob("*.json")) == []
    running.record(dataclasses.replace(base, pid=alive, started=running.start_time(alive)))
    assert [found.pid for found in running_servers()] == [alive]


def test_api_base_alone_reaches_a_recorded_server_with_its_key():
    alive = os.getpid()
    running.record(RunningServer(alive, running.start_time(alive), "http://127.0.0.1:8123", 2, 2, "model.gguf", True,
                                 "its-key"))
    assert key_for("http://127.0.0.1:8123/v1") == "its-key"
    assert server_key("http://127.0.0.1:8123", DEFAULT_API_KEY) == "its-key"
    assert server_key("http://127.0.0.1:8123", "given-key") == "given-key"  # a key given wins
    assert server_key("http://127.0.0.1:9999", DEFAULT_API_KEY) == DEFAULT_API_KEY


def test_the_server_process_records_itself_under_its_own_pid(two_cores):
    with EmbeddedServer(EchoingSettings(Path("model.gguf"))):
        (recorded,) = running_servers()
        assert recorded.pid != os.getpid() and running.start_time(recorded.pid) == recorded.started
