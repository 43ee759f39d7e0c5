"""Token accounting by phase (agent, editor, exploration).

Every LM a run builds is a :class:`MeteredLM` bound to one phase and one shared
:class:`TokenLedger`. DSPy reports billed usage to ``settings.usage_tracker`` only for calls that
were not served from its cache, so cached replays count as calls but cost no tokens: the ledger
shows what a run paid, and, as ``cached_tokens``, what the replayed replies cost when they were
first made. Paid plus cached is what the method uses whatever was cached before, which is the
figure to compare methods by; paid is what this run cost.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
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
            return PhaseUsage(found.prompt_tokens, found.completion_tokens, found.calls, found.paid_calls, found.seconds,
                              found.cached_tokens)

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

    def add_usage(self, model: str, usage: dict[str, Any]) -> None:
        self.billed = True
        self._ledger.record_usage(self._phase, usage or {})


class MeteredLM(dspy.LM):
    """A ``dspy.LM`` whose calls are charged to one phase of a :class:`TokenLedger`."""

    def __init__(self, model: str, *, ledger: TokenLedger, phase: str, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        self.ledger = ledger
        self.phase = phase

    def __call__(self, prompt: Any = None, *, messages: Any = None, **kwargs: Any) -> Any:
        started = time.perf_counter()
        sink = _PhaseUsageSink(self.ledger, self.phase)
        try:
            with dspy.context(usage_tracker=sink):
                outputs = super().__call__(prompt, messages=messages, **kwargs)
        finally:
            self.ledger.record_call(self.phase, time.perf_counter() - started)
        if not sink.billed:
            self.ledger.record_cached(self.phase, self._replayed_tokens(prompt, messages))
        return outputs

    def _replayed_tokens(self, prompt: Any, messages: Any) -> int:
        """Tokens of a reply served from the cache: the cached response still carries its usage.

        The history entry is found by its prompt (other threads may have appended since); equal
        prompts have equal cached replies, so any match is the right one.
        """
        for entry in reversed(self.history[-64:]):
            if entry.get("messages") == messages and entry.get("prompt") == prompt:
                response = entry.get("response")
                usage = response.get("usage") if isinstance(response, dict) else getattr(response, "usage", None)
                return _usage_tokens(usage)
        return 0

    def for_phase(self, phase: str) -> MeteredLM:
        """The same model and settings, charged to another phase."""
        twin = self.copy()
        twin.phase = phase
        return twin


def _usage_tokens(usage: Any) -> int:
    """Prompt plus completion tokens of a usage record, in lm15 or OpenAI/litellm naming."""
    if usage is None:
        return 0
    read = usage.get if isinstance(usage, dict) else lambda key: getattr(usage, key, None)
    prompt = read("input_tokens") or read("prompt_tokens") or 0
    completion = read("output_tokens") or read("completion_tokens") or 0
    return int(prompt) + int(completion)
