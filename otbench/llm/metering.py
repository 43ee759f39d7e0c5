"""Token accounting by phase (agent, editor, exploration).

Every LM a run builds is a :class:`MeteredLM` bound to one phase and one shared
:class:`TokenLedger`. DSPy reports billed usage to ``settings.usage_tracker`` only for calls that
were not served from its cache, so cached replays count as calls but cost no tokens: the ledger
shows what a run paid, and, as ``cached_tokens``, what the replayed replies cost when they were
first made (see :class:`UsageMemory`). Paid plus cached is what the method uses whatever was cached before, which is the
figure to compare methods by; paid is what this run cost.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dspy

@dataclass
class PhaseUsage:
    """Totals for one phase; ``calls`` includes cache hits, ``paid_calls`` does not."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    paid_calls: int = 0
    seconds: float = 0.0
    cached_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


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

    def phase(self, name: str) -> PhaseUsage:
        with self._lock:
            found = self._phases.get(name, PhaseUsage())
            return dataclasses.replace(found)

    def record_cached(self, phase: str, tokens: int) -> None:
        with self._lock:
            self._phases.setdefault(phase, PhaseUsage()).cached_tokens += tokens

    def restore(self, snapshot: dict[str, dict[str, float]]) -> None:
        """Count on from a :meth:`snapshot` (a resumed run keeps its earlier spend); ``{}`` starts from zero."""
        with self._lock:
            self._phases.clear()
            for phase, row in snapshot.items():
                if phase != "all":
                    self._phases[phase] = PhaseUsage(int(row["prompt_tokens"]), int(row["completion_tokens"]),
                                                     int(row["calls"]), int(row["paid_calls"]), float(row["seconds"]),
                                                     int(row.get("cached_tokens", 0)))

    def snapshot(self) -> dict[str, dict[str, float]]:
        """Plain totals by phase plus an ``all`` row, for printing and MLflow metrics."""
        with self._lock:
            rows = {
                name: {
                    "prompt_tokens": usage.prompt_tokens,
                    "completion_tokens": usage.completion_tokens,
                    "total_tokens": usage.total_tokens,
                    "calls": usage.calls,
                    "paid_calls": usage.paid_calls,
                    "seconds": round(usage.seconds, 3),
                    "cached_tokens": usage.cached_tokens,
                }
                for name, usage in sorted(self._phases.items())
            }
        rows["all"] = {key: sum(row[key] for row in rows.values()) for key in
                       ("prompt_tokens", "completion_tokens", "total_tokens", "calls", "paid_calls", "seconds",
                        "cached_tokens")}
        return rows

    def flat_metrics(self) -> dict[str, int]:
        """``tokens_agent_total`` style keys, one level deep, as MLflow wants them."""
        return {
            f"tokens_{phase}_{key.removesuffix('_tokens')}": value
            for phase, row in self.snapshot().items()
            for key, value in row.items()
            if key.endswith("_tokens")
        }


class _PhaseUsageSink:
    """The object DSPy calls ``add_usage`` on for every billed (non-cached) LM response."""

    def __init__(self, ledger: TokenLedger, phase: str) -> None:
        self._ledger = ledger
        self._phase = phase
        self.billed = False
        self.tokens = 0

    def add_usage(self, model: str, usage: dict[str, Any]) -> None:
        self.billed = True
        self.tokens += _usage_tokens(usage)
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
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)
            (self.directory / key).write_text(str(tokens))

    def recall(self, key: str) -> int:
        with self._lock:
            if key in self._known:
                return self._known[key]
        path = self.directory / key if self.directory is not None else None
        try:
            return int(path.read_text()) if path is not None else 0
        except (OSError, ValueError):
            return 0


class MeteredLM(dspy.LM):
    """A ``dspy.LM`` whose calls are charged to one phase of a :class:`TokenLedger`."""

    def __init__(self, model: str, *, ledger: TokenLedger, phase: str, usage_memory: UsageMemory | None = None,
                 **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        self.ledger = ledger
        self.phase = phase
        self.usage_memory = usage_memory or UsageMemory()

    def __call__(self, prompt: Any = None, *, messages: Any = None, **kwargs: Any) -> Any:
        started = time.perf_counter()
        sink = _PhaseUsageSink(self.ledger, self.phase)
        try:
            with dspy.context(usage_tracker=sink):
                outputs = super().__call__(prompt, messages=messages, **kwargs)
        finally:
            self.ledger.record_call(self.phase, time.perf_counter() - started)
        # The server's address changes from run to run; it is not part of what was asked.
        settings = {k: v for k, v in self.kwargs.items() if k not in ("api_base", "api_key")}
        key = UsageMemory.key(self.model, settings, prompt, messages, kwargs)
        if sink.billed:
            self.usage_memory.remember(key, sink.tokens)
        else:
            self.ledger.record_cached(self.phase, self.usage_memory.recall(key))
        return outputs

    def for_phase(self, phase: str) -> MeteredLM:
        """The same model and settings, charged to another phase."""
        twin = self.copy()
        twin.phase = phase
        twin.usage_memory = self.usage_memory
        return twin


def _usage_tokens(usage: Any) -> int:
    """Prompt plus completion tokens of a usage record, in lm15 or OpenAI/litellm naming."""
    if usage is None:
        return 0
    read = usage.get if isinstance(usage, dict) else lambda key: getattr(usage, key, None)
    prompt = read("input_tokens") or read("prompt_tokens") or 0
    completion = read("output_tokens") or read("completion_tokens") or 0
    return int(prompt) + int(completion)
