"""Token accounting by phase (agent, editor, exploration).

Every LM a run builds is a :class:`MeteredLM` bound to one phase and one shared
:class:`TokenLedger`. DSPy reports billed usage to ``settings.usage_tracker`` only for calls that
were not served from its cache, so cached replays count as calls but cost no tokens: the ledger
shows what a run paid, and, as ``cached_tokens``, what the replayed replies cost when they were
first made (see :class:`UsageMemory`). Paid plus cached is what the method uses whatever was cached before, which is the
figure to compare methods by; paid is what this run cost.

For the embedded model the ledger also keeps what llama.cpp reports of each paid call
(``timings``: prompt tokens it processed, prompt tokens it served from its prefix cache,
generated tokens, and the milliseconds of each), so speed and cache reuse are measured per
phase from the server itself, not inferred from wall time.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import hashlib
import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import dspy

from otbench.llm import tracing
from otbench.llm.grammar import agreed_prefix, reply_schema, schema_as_grammar, schema_opening
from otbench.llm.prefill import ServerTokenizer, opened


@dataclass
class PhaseUsage:
    """Totals for one phase; ``calls`` includes cache hits, ``paid_calls`` does not."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    paid_calls: int = 0
    seconds: float = 0.0
    cached_tokens: int = 0
    server: ServerTimings = field(default_factory=lambda: ServerTimings())

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def _per_second(tokens: int, milliseconds: float) -> float:
    return round(1000 * tokens / milliseconds, 2) if milliseconds else 0.0


@dataclass
class ServerTimings:
    """Sums of llama.cpp's per-call ``timings`` over the paid calls that reported them."""

    calls: int = 0
    """Paid calls whose reply carried ``timings`` (hosted models report none)."""
    prompt_processed: int = 0
    """Prompt tokens the server evaluated (``prompt_n``)."""
    prompt_cached: int = 0
    """Prompt tokens served from the server's prefix cache without evaluation (``cache_n``)."""
    generated: int = 0
    """Tokens generated (``predicted_n``)."""
    prompt_ms: float = 0.0
    """Milliseconds spent evaluating prompts (``prompt_ms``)."""
    generation_ms: float = 0.0
    """Milliseconds spent generating (``predicted_ms``)."""

    def add(self, timings: dict[str, Any]) -> None:
        self.calls += 1
        self.prompt_processed += int(timings.get("prompt_n") or 0)
        self.prompt_cached += int(timings.get("cache_n") or 0)
        self.generated += int(timings.get("predicted_n") or 0)
        self.prompt_ms += float(timings.get("prompt_ms") or 0.0)
        self.generation_ms += float(timings.get("predicted_ms") or 0.0)

    def __add__(self, other: ServerTimings) -> ServerTimings:
        return ServerTimings(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})

    def figures(self) -> dict[str, float]:
        """Rates and shares people compare: empty when no call reported timings."""
        if not self.calls:
            return {}
        seen = self.prompt_processed + self.prompt_cached
        return {
            "calls": self.calls,
            "cache_share": round(self.prompt_cached / seen, 4) if seen else 0.0,
            "prompt_tokens_per_second": _per_second(self.prompt_processed, self.prompt_ms),
            "generation_tokens_per_second": _per_second(self.generated, self.generation_ms),
            "completion_tokens_per_call": round(self.generated / self.calls, 2),
            "seconds": round((self.prompt_ms + self.generation_ms) / 1000, 3),
        }


class TokenLedger:
    """Thread-safe per-phase token totals for one run."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._phases: dict[str, PhaseUsage] = {}

    def record_call(self, phase: str, seconds: float) -> None:
        with self._lock:
            totals = self._phases.setdefault(phase, PhaseUsage())
            totals.calls += 1
            totals.seconds += seconds

    def record_usage(self, phase: str, usage: dict[str, Any]) -> None:
        with self._lock:
            totals = self._phases.setdefault(phase, PhaseUsage())
            totals.prompt_tokens += int(usage.get("prompt_tokens") or 0)
            totals.completion_tokens += int(usage.get("completion_tokens") or 0)
            totals.paid_calls += 1

    def record_timings(self, phase: str, timings: dict[str, Any]) -> None:
        with self._lock:
            self._phases.setdefault(phase, PhaseUsage()).server.add(timings)

    def phase(self, name: str) -> PhaseUsage:
        with self._lock:
            found = self._phases.get(name, PhaseUsage())
            return dataclasses.replace(found, server=dataclasses.replace(found.server))

    def server_figures(self) -> dict[str, dict[str, float]]:
        """llama.cpp's figures by phase, plus ``all``; phases with no timed call are left out."""
        with self._lock:
            timings = {name: dataclasses.replace(usage.server) for name, usage in sorted(self._phases.items())}
        total = sum(timings.values(), ServerTimings())
        figures = {name: row.figures() for name, row in {**timings, "all": total}.items()}
        return {name: row for name, row in figures.items() if row}

    def record_cached(self, phase: str, tokens: int) -> None:
        with self._lock:
            self._phases.setdefault(phase, PhaseUsage()).cached_tokens += tokens

    def restore(self, snapshot: dict[str, dict[str, float]]) -> None:
        """Count on from a :meth:`snapshot` (a resumed run keeps its earlier spend); ``{}`` starts from zero."""
        with self._lock:
            self._phases.clear()
            for phase, row in snapshot.items():
                if phase != "all":
                    server = ServerTimings(**{key: type(default)(row.get(f"server_{key}", default))
                                              for key, default in dataclasses.asdict(ServerTimings()).items()})
                    self._phases[phase] = PhaseUsage(int(row["prompt_tokens"]), int(row["completion_tokens"]),
                                                     int(row["calls"]), int(row["paid_calls"]), float(row["seconds"]),
                                                     int(row.get("cached_tokens", 0)), server)

    def snapshot(self) -> dict[str, dict[str, float]]:
        """Plain totals by phase plus an ``all`` row, for printing and MLflow metrics."""
        with self._lock:
            rows = {name: _row(usage) for name, usage in sorted(self._phases.items())}
        rows["all"] = {key: sum(row[key] for row in rows.values()) for key in _row(PhaseUsage())}
        return rows

    def flat_metrics(self) -> dict[str, float]:
        """``tokens_agent_total`` style keys, one level deep, as MLflow wants them."""
        return {
            f"tokens_{phase}_{key.removesuffix('_tokens')}": value
            for phase, row in self.snapshot().items()
            for key, value in row.items()
            if key.endswith("_tokens")
        }

    def server_metrics(self) -> dict[str, float]:
        """``llm_agent_cache_share`` style keys: the server's figures by phase, for MLflow."""
        return {f"llm_{phase}_{key}": value
                for phase, row in self.server_figures().items() for key, value in row.items()}


def _row(usage: PhaseUsage) -> dict[str, float]:
    """One phase's totals as plain numbers (server timings prefixed ``server_``)."""
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
        "calls": usage.calls,
        "paid_calls": usage.paid_calls,
        "seconds": round(usage.seconds, 3),
        "cached_tokens": usage.cached_tokens,
        **{f"server_{key}": value for key, value in dataclasses.asdict(usage.server).items()},
    }


class _PhaseUsageSink:
    """The object DSPy calls ``add_usage`` on for every billed (non-cached) LM response."""

    def __init__(self, ledger: TokenLedger, phase: str) -> None:
        self._ledger = ledger
        self._phase = phase
        self.billed = False
        self.tokens = self.prompt_tokens = self.completion_tokens = 0

    def add_usage(self, model: str, usage: dict[str, Any]) -> None:
        self.billed = True
        prompt, completion = _usage_split(usage)
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.tokens += prompt + completion
        self._ledger.record_usage(self._phase, usage or {})


class UsageMemory:
    """What each LM request cost when it was paid for, so a cache hit can be counted as cached tokens.

    DSPy's cache replays the reply but (through litellm) not its usage, so the usage of every paid
    request is remembered here under a hash of the request: in memory, and in ``directory`` when
    given, next to DSPy's disk cache, so replays in later runs are counted too.
    """

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory
        self._known: dict[str, int] = {}
        self._lock = threading.Lock()

    @staticmethod
    def key(model: str, settings: dict[str, Any], prompt: Any, messages: Any, kwargs: dict[str, Any]) -> str:
        request = {"model": model, "settings": settings, "prompt": prompt, "messages": messages, "kwargs": kwargs}
        return hashlib.sha256(json.dumps(request, sort_keys=True, default=str).encode()).hexdigest()

    def remember(self, key: str, tokens: int) -> None:
        with self._lock:
            self._known[key] = tokens
        if self.directory is not None:  # written whole, then renamed: a reader never sees half a number
            self.directory.mkdir(parents=True, exist_ok=True)
            partial = self.directory / f".{key}.{os.getpid()}.{threading.get_ident()}"
            partial.write_text(str(tokens))
            os.replace(partial, self.directory / key)

    def recall(self, key: str) -> int:
        with self._lock:
            if key in self._known:
                return self._known[key]
        path = self.directory / key if self.directory is not None else None
        try:
            return int(path.read_text()) if path is not None else 0
        except (OSError, ValueError):
            return 0


class _RequestsInFlight:
    """One lock per request being made: identical requests made at once (threads of a run, temperature 0) are
    made one after another, so only the first is paid for and the others are served by DSPy's cache.

    Without it, 16 threads asking the same thing at once paid 16 times for one reply.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[str, tuple[threading.Lock, int]] = {}

    @contextlib.contextmanager
    def one_at_a_time(self, key: str) -> Iterator[None]:
        with self._lock:
            lock, waiting = self._held.get(key, (None, 0))
            lock = lock or threading.Lock()
            self._held[key] = (lock, waiting + 1)
        try:
            with lock:
                yield
        finally:
            with self._lock:
                waiting = self._held[key][1] - 1
                if waiting:
                    self._held[key] = (lock, waiting)
                else:
                    del self._held[key]


_IN_FLIGHT = _RequestsInFlight()


@dataclasses.dataclass
class TaskUsage:
    """What one task's calls cost, whatever phase they were charged to (:func:`task_usage`)."""

    tokens: int = 0
    """Tokens paid for (prompt and completion)."""
    cached: int = 0
    """Tokens served from the LM cache."""
    calls: int = 0

    def add(self, tokens: int, cached: int) -> None:
        self.tokens, self.cached, self.calls = self.tokens + tokens, self.cached + cached, self.calls + 1


_TASK: contextvars.ContextVar[TaskUsage | None] = contextvars.ContextVar("otbench_task_usage", default=None)


@contextlib.contextmanager
def task_usage() -> Iterator[TaskUsage]:
    """Count every metered call made in this context (this thread, one task's rollout) in one :class:`TaskUsage`."""
    usage = TaskUsage()
    token = _TASK.set(usage)
    try:
        yield usage
    finally:
        _TASK.reset(token)


def charge_reply(ledger: TokenLedger, phase: str, *, seconds: float, usage: dict[str, Any] | None = None,
                 timings: dict[str, Any] | None = None, cached_tokens: int = 0) -> None:
    """Charge one reply of a client other than :class:`MeteredLM` (an OpenAI SDK client's) to ``phase`` and to the
    task being run: ``usage`` when it was paid for (with llama.cpp's ``timings``, if any), else the
    ``cached_tokens`` it cost when it was."""
    ledger.record_call(phase, seconds)
    paid = 0
    if usage is not None:
        ledger.record_usage(phase, usage)
        prompt, completion = _usage_split(usage)
        paid = prompt + completion
        if isinstance(timings, dict):
            ledger.record_timings(phase, timings)
    else:
        ledger.record_cached(phase, cached_tokens)
    counted = _TASK.get()
    if counted is not None:
        counted.add(paid, cached_tokens)


def _load_litellm_now() -> None:
    """Finish importing litellm on the thread that builds the LM, before any task thread calls it.

    litellm is imported lazily; when several task threads make the first call of a process at once,
    some of them see the module half-initialised ("partially initialized module 'litellm' has no
    attribute 'completion'") and their tasks fail.
    """
    import litellm

    _ = litellm.completion


class MeteredLM(dspy.LM):
    """A ``dspy.LM`` whose calls are charged to one phase of a :class:`TokenLedger`.

    With the cache on, identical requests made at once by several threads are paid for once
    (:class:`_RequestsInFlight`): the others wait for the first and are counted as cache hits.
    """

    def __init__(self, model: str, *, ledger: TokenLedger, phase: str, usage_memory: UsageMemory | None = None,
                 **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        _load_litellm_now()
        self.ledger = ledger
        self.phase = phase
        self.usage_memory = usage_memory or UsageMemory()

    def __call__(self, prompt: Any = None, *, messages: Any = None, **kwargs: Any) -> Any:
        # The server's address changes from run to run; it is not part of what was asked.
        settings = {k: v for k, v in self.kwargs.items() if k not in ("api_base", "api_key")}
        key = UsageMemory.key(self.model, settings, prompt, messages, kwargs)
        with tracing.lm_call(self.phase, self.model, messages if messages is not None else prompt) as span, \
                (_IN_FLIGHT.one_at_a_time(key) if self.cache else contextlib.nullcontext()):
            started = time.perf_counter()
            sink = _PhaseUsageSink(self.ledger, self.phase)
            _last_response.value = None
            try:
                with dspy.context(usage_tracker=sink):
                    outputs = super().__call__(prompt, messages=messages, **kwargs)
            finally:
                seconds = time.perf_counter() - started
                self.ledger.record_call(self.phase, seconds)
            timings = _timings_of(_last_response.value)
            if sink.billed and timings is not None:  # a replay from DSPy's cache carries the first call's timings
                self.ledger.record_timings(self.phase, timings)
            cached = 0
            if sink.billed:
                self.usage_memory.remember(key, sink.tokens)
            else:
                cached = self.usage_memory.recall(key)
                self.ledger.record_cached(self.phase, cached)
            counted = _TASK.get()
            if counted is not None:
                counted.add(sink.tokens if sink.billed else 0, cached)
            tracing.record_lm_call(span, outputs, prompt_tokens=sink.prompt_tokens,
                                   completion_tokens=sink.completion_tokens, cached_tokens=cached, seconds=seconds)
        return outputs

    def update_history(self, entry: dict[str, Any]) -> None:
        """DSPy hands every finished call's raw response here: keep it for this thread's :meth:`__call__`."""
        _last_response.value = entry.get("response")
        super().update_history(entry)

    def __deepcopy__(self, memo: dict[int, Any]) -> MeteredLM:
        """The same client: a copied program (``compile`` returns one) calls the same server and is charged
        to the same ledger. A ledger's lock cannot be copied anyway."""
        return self

    def for_phase(self, phase: str) -> MeteredLM:
        """The same model and settings, charged to another phase."""
        twin = self.copy()
        twin.phase = phase
        twin.usage_memory = self.usage_memory
        return twin


# The raw response of the call this thread is making (read by MeteredLM.__call__ right after it).
_last_response = threading.local()


class GrammarLM(MeteredLM):
    """A metered LM for llama.cpp: a call's reply schema is sent as a compact grammar.

    Callers keep passing ``response_format`` (what hosted models take), so one schema serves both;
    only this LM, used for the embedded model, turns it into the grammar that rules out
    whitespace, unknown tool names and non-identifier argument names. It always goes through
    DSPy's litellm engine: that engine forwards ``extra_body`` fields and keeps llama.cpp's
    ``timings`` in the response, where DSPy's native engine would pick other routes per request.
    """

    def __init__(self, model: str, *, prefill: bool = False, **kwargs: Any) -> None:
        super().__init__(model, **{"engine": "litellm", **kwargs})
        self.tokenizer = ServerTokenizer(str(kwargs.get("api_base", "")), str(kwargs.get("api_key", ""))) \
            if prefill else None
        """The server's tokenizer, where replies' openings are written (``prefill``); shared by copies."""

    def __call__(self, prompt: Any = None, *, messages: Any = None, **kwargs: Any) -> Any:
        """With ``prefill``, a reply's fixed opening (:class:`~otbench.llm.grammar.Opening`) is written as the start
        of the model's message and the grammar admits the rest: the model reads it as prompt tokens instead of
        generating it, and the reply comes back whole."""
        request, schema = schema_as_grammar(kwargs), reply_schema(kwargs)
        if self.tokenizer is not None and messages is not None and schema is not None:
            opening = schema_opening(schema)
            written = agreed_prefix(opening, self.tokenizer.pieces)
            if written:
                request["extra_body"] = {**request["extra_body"], "grammar": opening.grammar_after(written)}
                messages = [*messages, {"role": "assistant", "content": written}]
                return [opened(output, written) for output in super().__call__(prompt, messages=messages, **request)]
        return super().__call__(prompt, messages=messages, **request)


def _timings_of(response: Any) -> dict[str, Any] | None:
    """llama.cpp's ``timings`` object of a chat completion, or None (hosted models have none)."""
    timings = response.get("timings") if isinstance(response, dict) else getattr(response, "timings", None)
    return timings if isinstance(timings, dict) else None


def _usage_split(usage: Any) -> tuple[int, int]:
    """Prompt and completion tokens of a usage record, in lm15 or OpenAI/litellm naming."""
    if usage is None:
        return 0, 0
    read = usage.get if isinstance(usage, dict) else lambda key: getattr(usage, key, None)
    prompt = read("input_tokens") or read("prompt_tokens") or 0
    completion = read("output_tokens") or read("completion_tokens") or 0
    return int(prompt), int(completion)
