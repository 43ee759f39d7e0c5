"""Build the LMs a command needs: the embedded model by default, any litellm model on request.

The embedded server is started only when some role uses it, shared by all roles, and stopped
when the command ends; inside :func:`one_embedded_server` (a command that runs other commands,
such as ``compare``) it is started once and kept for all of them.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from otbench.errors import UserError
from otbench.llm.metering import GrammarLM, MeteredLM, TokenLedger, UsageMemory
from otbench.llm.server import EmbeddedServer, ServerSettings
from otbench.llm.weights import EMBEDDED_MODELS, check_gguf_file, ensure_gguf
from otbench.paths import cache_dir

EMBEDDED = "embedded"


@dataclass(frozen=True)
class LMOptions:
    """What the user chose: ``lm``/``editor_lm`` are ``embedded`` or a litellm model string."""

    lm: str = EMBEDDED
    editor_lm: str | None = None
    embedded_model: str = "qwen-1.5b"
    gguf: Path | None = None
    threads: int | None = None
    slots: int = 1
    context_per_slot: int = 8192
    temperature: float = 0.0
    cache: bool = True
    grammar: bool = True
    """Send the embedded model each reply schema as a compact grammar (False: as ``response_format``)."""


def check_hosted_model(model: str) -> None:
    """Fail early, on one line, for a model litellm cannot route or whose API key is missing."""
    import litellm

    try:
        litellm.get_llm_provider(model)
    except Exception as exc:  # litellm raises several types for an unroutable name
        raise UserError(f"unknown model {model!r}: use 'embedded' or a litellm model such as openai/gpt-5-mini") from exc
    missing = litellm.validate_environment(model).get("missing_keys") or []
    if missing:
        raise UserError(f"model {model!r} needs {', '.join(missing)} in the environment")


def _embedded_identity(options: LMOptions) -> tuple[Path, str]:
    """The GGUF path and a model name that keys DSPy's cache to these exact weights."""
    if options.gguf is not None:
        path = check_gguf_file(options.gguf)
        stat = path.stat()
        digest = hashlib.sha256(f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()[:12]
        return path, f"gguf-{path.stem}-{digest}"
    if options.embedded_model not in EMBEDDED_MODELS:
        raise UserError(f"unknown embedded model {options.embedded_model!r}; choose from {', '.join(EMBEDDED_MODELS)}")
    model = EMBEDDED_MODELS[options.embedded_model]
    return ensure_gguf(model), model.name


class _ServerPool:
    """Embedded servers kept running across commands, one per server settings."""

    def __init__(self) -> None:
        self.stack = ExitStack()
        self.urls: dict[ServerSettings, str] = {}

    def url(self, settings: ServerSettings) -> str:
        if settings not in self.urls:
            self.urls[settings] = self.stack.enter_context(EmbeddedServer(settings))
        return self.urls[settings]


_pool: _ServerPool | None = None


@contextmanager
def one_embedded_server() -> Iterator[None]:
    """Within this block every :func:`open_lms` reuses one embedded server (per settings) instead of
    loading the model again; the server stops when the block ends."""
    global _pool
    if _pool is not None:  # already inside one: the outer block owns the servers
        yield
        return
    _pool = _ServerPool()
    try:
        with _pool.stack:
            yield
    finally:
        _pool = None


@contextmanager
def open_lms(options: LMOptions, ledger: TokenLedger, phases: tuple[str, ...] = ("agent",)) -> Iterator[dict[str, MeteredLM]]:
    """Yield one :class:`MeteredLM` per phase; ``editor`` and ``exploration`` use ``editor_lm``."""
    choice = {phase: (options.editor_lm or options.lm) if phase != "agent" else options.lm for phase in phases}
    for model in set(choice.values()) - {EMBEDDED}:
        check_hosted_model(model)
    with ExitStack() as stack:
        embedded: dict[str, Any] = {}
        if EMBEDDED in choice.values():
            path, name = _embedded_identity(options)
            settings = ServerSettings(path, slots=options.slots, context_per_slot=options.context_per_slot)
            if options.threads:
                settings = dataclasses.replace(settings, threads=options.threads)
            url = _pool.url(settings) if _pool is not None else stack.enter_context(EmbeddedServer(settings))
            # repeat_penalty: at temperature 0 the small Qwen models can loop until max_tokens. The litellm
            # engine forwards it (and a grammar) to llama.cpp and keeps the server's timings in each reply.
            embedded = {"model": f"openai/{name}", "api_base": f"{url}/v1", "api_key": "local",
                        "repeat_penalty": 1.15, "num_retries": 0, "engine": "litellm"}
        lms = {}
        memory = UsageMemory(cache_dir() / "usage") if options.cache else UsageMemory()
        for phase, model in choice.items():
            kwargs: dict[str, Any] = dict(embedded) if model == EMBEDDED else {"model": model}
            lm_class = GrammarLM if model == EMBEDDED and options.grammar else MeteredLM
            lms[phase] = lm_class(
                kwargs.pop("model"), ledger=ledger, phase=phase, temperature=options.temperature,
                max_tokens=1024, cache=options.cache, usage_memory=memory, **kwargs,
            )
        yield lms
