"""The embedded LLM server: llama.cpp (xllamacpp) serving an OpenAI-compatible API (on 127.0.0.1 by default).

It runs in a child process (``python -m otbench.llm.server``) for as long as a command needs it.
Stopping it is ending that process, which takes no lock of ours: a native server released from
Python while client threads still waited on it deadlocked on Ctrl-C or SIGTERM during a reply
(the release held the GIL that the waiting client thread needed). The child reads its standard
input until the parent closes it or dies, then exits, so no stray server outlives a run.

Only otbench's clients may use it: each start gets a random API key (:attr:`EmbeddedServer.api_key`,
handed to the child in its environment, never on a command line other users can read), and every
endpoint but ``/health`` and the model list answers 401 without it. That key is also what stops a web
page in the user's browser, including one that rebinds its own host name to 127.0.0.1 (llama.cpp
checks no Host header): it cannot know the key. No browser origin is allowed either, and no
credentialed cross-origin request (llama.cpp's default reflects any origin with credentials).
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from otbench.errors import SetupError
from otbench.llm import running

_STOP_SECONDS = 5
_READY = "otbench-llm-url "
_FAILED = "otbench-llm-error "
_KEY_VARIABLE = "OTBENCH_LLM_SERVER_KEY"
"""How the parent hands the child its API key: the child's environment is readable by this user only."""
NO_BROWSER_ORIGIN = "https://otbench.invalid"
"""The one origin the server allows cross-origin requests from: ``.invalid`` is reserved (RFC 2606), so no page has it."""


KV_BYTES_PER_TOKEN = 30_000
"""Memory a token of context takes in the server (measured: 1, 2 and 4 slots of 8192 tokens of the 1.5B model peaked
at 2,059, 2,313 and 2,796 MB, about 245 MB a slot; the 0.5B model takes less, so this errs on the safe side)."""
BASE_OVERHEAD_BYTES = 700 * 2**20
"""The server's memory beside the weights and the context (measured: one slot peaked at 2,059 MB with 1,066 MB of
weights and 235 MB of context)."""
AVAILABLE_SHARE = 0.9
"""The share of the available memory a server may plan to take."""


def available_memory() -> int | None:
    """Bytes of memory available to start a process (``MemAvailable`` of ``/proc/meminfo``; None where unknown)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


@dataclass(frozen=True)
class ServerSettings:
    """How to run the embedded model.

    ``context_per_slot`` is the context each concurrent request gets; llama.cpp splits ``n_ctx``
    evenly across ``slots``. 8192 fits an offline editor prompt of ten chess attempts (~6k tokens).
    ``threads`` defaults to the core count; two threads collapse when other processes share the
    cores, so it must stay configurable.
    """

    model_path: Path
    threads: int = max(1, os.cpu_count() or 1)
    slots: int = 1
    context_per_slot: int = 8192
    verbose: bool = False
    host: str = "127.0.0.1"
    """Where it listens: only this machine by default; ``otbench.serve --host 0.0.0.0`` shares it."""
    port: int = 0
    """0: any free port."""
    tool_calls: bool = False
    """Answer OpenAI tool calling (``tools`` in a chat request) with structured ``tool_calls``: a front
    (:mod:`otbench.llm.front`) listens at ``host``/``port`` and llama.cpp on 127.0.0.1 behind it (``otbench serve``)."""

    def check(self) -> None:
        """Refuse, on one line and before the model loads, settings this machine cannot run: more threads than
        usable cores (llama.cpp only slows down), or slots and context that need more memory than is available
        (llama.cpp would allocate, then die seconds later)."""
        from otbench.errors import ConfigError

        cores = max(1, os.cpu_count() or 1)
        if self.threads > cores:
            raise ConfigError(f"--threads {self.threads}: this machine has {cores} cores; give at most {cores}")
        needed, available = self.memory_needed(), available_memory()
        if available is not None and needed > AVAILABLE_SHARE * available:
            room = AVAILABLE_SHARE * available - self._base_memory()
            fits = max(0, int(room / (KV_BYTES_PER_TOKEN * self.context_per_slot)))
            raise ConfigError(f"--slots {self.slots} x --context-per-slot {self.context_per_slot}: about "
                              f"{needed / 2**30:.1f} GB of memory, and {available / 2**30:.1f} GB is available; give at "
                              f"most {fits} slots of this context (or a smaller --context-per-slot)")

    def _base_memory(self) -> int:
        size = self.model_path.stat().st_size if self.model_path.is_file() else 0
        return size + BASE_OVERHEAD_BYTES

    def memory_needed(self) -> int:
        """Bytes the server is expected to hold: the weights, llama.cpp's own, and the key-value cache of every slot's
        context."""
        return self._base_memory() + KV_BYTES_PER_TOKEN * self.slots * self.context_per_slot

    def argv(self) -> list[str]:
        return [sys.executable, "-m", "otbench.llm.server", str(self.model_path), "--threads", str(self.threads),
                "--slots", str(self.slots), "--context-per-slot", str(self.context_per_slot),
                "--host", self.host, "--port", str(self.port), *(["--verbose"] if self.verbose else []),
                *(["--tool-calls"] if self.tool_calls else [])]


def new_api_key() -> str:
    return secrets.token_urlsafe(32)


class EmbeddedServer:
    """Context manager: ``with EmbeddedServer(settings) as url: ...`` gives ``http://127.0.0.1:PORT``, which
    answers only requests that carry :attr:`api_key` (given, or a new random one).

    While it runs it is in this machine's record of embedded servers (:mod:`otbench.llm.running`), ``shared``
    when it serves other commands (``otbench serve``); before it loads, one already running on the cores it
    needs is named in a one-line warning, with how to use that one instead.
    """

    def __init__(self, settings: ServerSettings, api_key: str | None = None, *, shared: bool = False) -> None:
        self.settings = settings
        self.api_key = api_key or new_api_key()
        self.shared = shared
        self.url: str | None = None
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> str:
        crowded = running.crowding_warning(self.settings.threads)
        if crowded is not None:
            print(f"warning: {crowded}", file=sys.stderr, flush=True)
        # Loading takes seconds to a minute on a busy machine: say what is happening meanwhile.
        print(f"loading the embedded model {self.settings.model_path.name} ({self.settings.threads} thread(s), "
              f"{self.settings.slots} slot(s))...", file=sys.stderr, flush=True)
        # Its own process group: a Ctrl-C reaches the command, which then stops the server in order.
        self._process = subprocess.Popen(self.settings.argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         text=True, start_new_session=True,
                                         env={**os.environ, _KEY_VARIABLE: self.api_key})
        line = "-"
        try:
            while line and not line.startswith((_READY, _FAILED)):  # skip anything the native code printed first
                line = self._process.stdout.readline() if self._process.stdout else ""
        except BaseException:
            self.stop()
            raise
        if line.startswith(_READY):
            self.url = line.removeprefix(_READY).strip()
            self._record()
            return self.url
        self.stop()
        raise SetupError(line.removeprefix(_FAILED).strip() if line.startswith(_FAILED)
                        else "the embedded LLM server process ended while starting")

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()

    def _record(self) -> None:
        assert self._process is not None and self.url is not None
        started = running.start_time(self._process.pid)
        if started is not None:  # else it ended at once: nothing runs to be recorded
            running.record(running.RunningServer(
                self._process.pid, started, self.url, self.settings.slots, self.settings.threads,
                self.settings.model_path.name, self.shared, self.api_key))

    def stop(self) -> None:
        """End the server process: its input closed first (it exits), then terminated, then killed.

        A server still loading reads no input yet: it is terminated at once."""
        process, self._process, ready, self.url = self._process, None, self.url is not None, None
        if process is None:
            return
        running.forget(process.pid)
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()
        for end in ((None, process.terminate, process.kill) if ready else (process.terminate, process.kill)):
            if end is not None:
                end()
            try:
                process.wait(_STOP_SECONDS)
                return
            except subprocess.TimeoutExpired:
                continue


def guarded(params: Any, api_key: str) -> Any:
    """``params`` (xllamacpp's CommonParams) set so that only holders of ``api_key`` are answered and no
    browser origin may read a reply, with or without credentials."""
    params.api_keys = [api_key]
    params.cors_origins = NO_BROWSER_ORIGIN
    params.cors_origins_explicit = True
    params.cors_credentials = False
    return params


def serve(settings: ServerSettings, api_key: str) -> None:
    """The child's side: start the server, print its address, serve until standard input closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    if not api_key:
        print(f"{_FAILED}no API key for the embedded LLM server (${_KEY_VARIABLE})", flush=True)
        return
    try:
        import xllamacpp
    except ImportError:
        print(f"{_FAILED}the embedded model is not installed: pip install 'otbench[embedded]'", flush=True)
        return
    params = guarded(xllamacpp.CommonParams(), api_key)
    params.model.path = str(settings.model_path)
    params.n_parallel = settings.slots
    params.n_ctx = settings.context_per_slot * settings.slots
    params.cpuparams.n_threads = settings.threads
    params.cpuparams_batch.n_threads = settings.threads
    params.hostnames = ["127.0.0.1" if settings.tool_calls else settings.host]
    params.port = 0 if settings.tool_calls else settings.port
    params.verbosity = 1 if settings.verbose else -1
    params.warmup = False
    # Every request looks up the longest cached prefix among the prompts llama.cpp keeps in RAM, not only the one its
    # slot holds: with a slot chosen by prompt similarity, llama.cpp saves and searches that cache only when a new
    # prompt would drop more than half the slot's, so a task attempted again after other tasks' short prompts re-read
    # the part its attempts share. Similarity 0 turns that choice off: a slot is taken least recently used, and its
    # prompt is saved and the best cached one restored each time (milliseconds for prompts of this size).
    params.slot_prompt_similarity = 0.0
    try:
        server = xllamacpp.Server(params)
    except Exception as exc:  # noqa: BLE001 - the native server raises plain exceptions for a bad model
        print(f"{_FAILED}the embedded LLM could not start: {exc}", flush=True)
        return
    url = str(server.listening_address).rstrip("/")
    if settings.tool_calls:
        from otbench.llm.front import ToolFront

        try:
            url = ToolFront(url, api_key, settings.host, settings.port).start()
        except OSError as exc:
            print(f"{_FAILED}cannot listen at {settings.host}:{settings.port}: {exc.strerror or exc}", flush=True)
            return
    print(f"{_READY}{url}", flush=True)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # nobody reads the pipe from now on: it must never fill
    sys.stdin.read()  # returns when the parent closes the pipe or dies
    os._exit(0)  # the OS frees the model; no native teardown that could wait on a request in flight


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m otbench.llm.server", description="serve a GGUF model on 127.0.0.1")
    parser.add_argument("model_path", type=Path)
    parser.add_argument("--threads", type=int, default=ServerSettings.threads)
    parser.add_argument("--slots", type=int, default=ServerSettings.slots)
    parser.add_argument("--context-per-slot", type=int, default=ServerSettings.context_per_slot)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--host", default=ServerSettings.host)
    parser.add_argument("--port", type=int, default=ServerSettings.port)
    parser.add_argument("--tool-calls", action="store_true")
    args = parser.parse_args()
    serve(ServerSettings(args.model_path, args.threads, args.slots, args.context_per_slot, args.verbose, args.host,
                         args.port, args.tool_calls), os.environ.pop(_KEY_VARIABLE, ""))


if __name__ == "__main__":
    main()
