"""The embedded LLM server: llama.cpp (xllamacpp) serving an OpenAI-compatible API on 127.0.0.1.

It runs in-process for as long as a command needs it and stops when the context exits (the
native server shuts down when its object is released), so no stray process outlives a run.
"""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from otbench.errors import UserError


@dataclass(frozen=True)
class ServerSettings:
    """How to run the embedded model.

    ``context_per_slot`` is the context each concurrent request gets; llama.cpp splits ``n_ctx``
    evenly across ``slots``. 8192 fits an offline editor prompt of ten chess attempts (~6k tokens). ``threads`` defaults to the core count: NOTES.md measured that two
    threads collapse when other processes share the cores, so it must stay configurable.
    """

    model_path: Path
    threads: int = max(1, os.cpu_count() or 1)
    slots: int = 1
    context_per_slot: int = 8192
    verbose: bool = False


class EmbeddedServer:
    """Context manager: ``with EmbeddedServer(settings) as url: ...`` gives ``http://127.0.0.1:PORT``."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self._server: object | None = None
        self.url: str | None = None

    def __enter__(self) -> str:
        try:
            import xllamacpp
        except ImportError as exc:
            raise UserError("the embedded LLM needs the xllamacpp package: pip install -e . (or run .ci/run)") from exc
        params = xllamacpp.CommonParams()
        params.model.path = str(self.settings.model_path)
        params.n_parallel = self.settings.slots
        params.n_ctx = self.settings.context_per_slot * self.settings.slots
        params.cpuparams.n_threads = self.settings.threads
        params.cpuparams_batch.n_threads = self.settings.threads
        params.hostnames = ["127.0.0.1"]
        params.port = 0
        params.verbosity = 1 if self.settings.verbose else -1
        params.warmup = False
        self._server = xllamacpp.Server(params)
        self.url = str(self._server.listening_address).rstrip("/")
        return self.url

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()

    def stop(self) -> None:
        """Release the native server; its destructor stops the HTTP loop and frees the model."""
        self._server = None
        self.url = None
        gc.collect()
