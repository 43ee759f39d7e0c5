"""A state controller: injects tool failures on purpose, by policy, reproducibly.

Real tools time out, hit rate limits, go briefly unavailable, answer late, return damaged data or
answer for a world that has moved on. The controller sits where an environment executes one tool
call and, for the calls its policy selects, replaces or alters the tool's reply with such a failure.
The agent sees the failure as the tool's reply, exactly as a real one would read; the result carries
the fault's kind in :attr:`~otbench.core.calls.CallResult.injected`, so metrics can tell injected
failures from the agent's own mistakes.

Decisions are a hash of the policy's seed, the phase, the task (``scope``), how many times that task
was attempted in that phase, the call's index in the attempt and the tool's name: never wall time or
thread order, so one policy injects the same faults on every run with the same calls. A call outside
any task is an attempt of its own, numbered among its tool's calls (:func:`call_episode`).

Kinds (``FAULT_KINDS``): ``timeout``, ``rate_limit`` (with a retry-after hint) and ``unavailable``
replace the call (the tool is not run); ``delay`` runs it after ``delay_seconds``; ``corrupt`` runs it
and truncates or mangles its output; ``drift`` runs it and returns an output for a changed state
(numbers moved, list order changed). Corruption and drift apply to successful calls only, and never
to calls that could not be made as written (a malformed call never reaches a tool).

Phases: ``exploration`` (an optimizer learning docs) and ``test`` (scoring docs); the command that
runs a phase says which it is (:meth:`StateController.phase`). An environment only calls
:meth:`StateController.episode` and :meth:`Episode.run`; it knows nothing of who runs it.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from otbench.core.calls import CallResult, ToolCall
from otbench.errors import ConfigError

FAULT_KINDS = ("timeout", "rate_limit", "unavailable", "delay", "corrupt", "drift")
PHASES = ("exploration", "test")
PHASE_CHOICES = (*PHASES, "both")
TRANSIENT_KINDS = ("timeout", "rate_limit", "unavailable")
PRESETS = {
    "flaky": TRANSIENT_KINDS,
    "chaos": FAULT_KINDS,
    **{kind: (kind,) for kind in FAULT_KINDS},
}
"""``NAME-RATE[@PHASE]`` presets: the rate is the chance that a call meets one of the kinds, shared evenly."""

FAULT_VOCABULARY = (
    "timed out", "timeout", "time out", "times out", "rate limit", "rate-limit", "ratelimit", "too many requests",
    "429", "503", "retry after", "retry-after", "try again", "temporarily unavailable", "unavailable",
    "service unavailable", "not available", "intermittent", "intermittently", "flaky", "transient", "corrupted",
    "truncated", "garbled", "unreliable", "sometimes fails", "may fail", "can fail", "outage", "overloaded",
)
"""Words that state a transient fault as if it were a tool's behaviour (what learned docs should not say)."""

_PRESET = re.compile(r"^(?P<name>[a-z_]+)-(?P<rate>[0-9.]+)(?:@(?P<phase>[a-z]+))?$")


class PolicyError(ConfigError):
    """A fault policy that cannot be read; the message says why, in one line."""


@dataclass(frozen=True)
class FaultPolicy:
    """Which faults to inject, how often, where.

    ``rates`` maps a kind to the chance that a call meets it (the kinds' chances add up, at most 1);
    ``tool_rates`` replaces ``rates`` for the tools it names; ``phase_rates`` for a phase it names
    (a tool's own rates win). ``phases`` are the phases faults are injected in at all.
    """

    rates: dict[str, float] = field(default_factory=dict)
    tool_rates: dict[str, dict[str, float]] = field(default_factory=dict)
    phase_rates: dict[str, dict[str, float]] = field(default_factory=dict)
    phases: frozenset[str] = frozenset(PHASES)
    seed: int = 0
    retry_after: int = 2
    delay_seconds: float = 0.0
    name: str = "custom"

    def rates_for(self, tool: str, phase: str) -> dict[str, float]:
        if phase not in self.phases:
            return {}
        return self.tool_rates.get(tool) or self.phase_rates.get(phase) or self.rates

    @property
    def total_rate(self) -> float:
        """The chance that a call of an unnamed tool meets a fault (what plots put on their axis)."""
        return round(sum(self.rates.values()), 6)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "rates": self.rates, "tool_rates": self.tool_rates,
                "phase_rates": self.phase_rates, "phases": sorted(self.phases), "seed": self.seed,
                "retry_after": self.retry_after, "delay_seconds": self.delay_seconds}


def _rates(value: Any, where: str) -> dict[str, float]:
    if not isinstance(value, dict):
        raise PolicyError(f"{where} must be a table of fault kinds to rates")
    rates = {}
    for kind, rate in value.items():
        if kind not in FAULT_KINDS:
            raise PolicyError(f"{where}: unknown fault kind {kind!r}; choose from {', '.join(FAULT_KINDS)}")
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
            raise PolicyError(f"{where}: the rate of {kind} must be a number from 0 to 1, got {rate!r}")
        rates[kind] = float(rate)
    if sum(rates.values()) > 1 + 1e-9:
        raise PolicyError(f"{where}: rates add up to {sum(rates.values()):.3g}, more than 1")
    return rates


def _phases(value: Any) -> frozenset[str]:
    if value not in PHASE_CHOICES:
        raise PolicyError(f"phase must be one of {', '.join(PHASE_CHOICES)}, got {value!r}")
    return frozenset(PHASES) if value == "both" else frozenset({value})


def preset(text: str) -> FaultPolicy:
    """The policy a preset name such as ``flaky-0.1`` or ``chaos-0.3@exploration`` stands for."""
    found = _PRESET.match(text)
    if found is None or found["name"] not in PRESETS:
        raise PolicyError(f"unknown fault policy {text!r}: give a file (.json, .toml) or NAME-RATE[@PHASE] with "
                          f"NAME one of {', '.join(PRESETS)} (e.g. flaky-0.1@exploration)")
    try:
        rate = float(found["rate"])
    except ValueError:
        raise PolicyError(f"fault policy {text!r}: {found['rate']!r} is not a rate") from None
    kinds = PRESETS[found["name"]]
    rates = _rates({kind: rate / len(kinds) for kind in kinds}, text)
    phases = _phases(found["phase"] or "both")
    return FaultPolicy(rates=rates, phases=phases, name=text)


def read_policy(text: str) -> FaultPolicy:
    """A policy from ``--faults``: a preset name, or a JSON/TOML file (which may start from a ``preset``).

    File keys: ``preset``, ``rates`` (kind to rate), ``tools`` (tool name to rates), ``phases``
    (phase to rates), ``phase`` (exploration, test or both), ``seed``, ``retry_after`` (seconds),
    ``delay_seconds``.
    """
    path = Path(text)
    if path.suffix not in (".json", ".toml"):
        return preset(text)
    try:
        raw = path.read_text()
    except OSError as exc:
        raise PolicyError(f"cannot read fault policy {text}: {exc.strerror}") from None
    try:
        data = json.loads(raw) if path.suffix == ".json" else tomllib.loads(raw)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise PolicyError(f"fault policy {text} is not valid {path.suffix[1:].upper()}: {exc}") from None
    if not isinstance(data, dict):
        raise PolicyError(f"fault policy {text} must be an object")
    known = {"preset", "rates", "tools", "phases", "phase", "seed", "retry_after", "delay_seconds"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise PolicyError(f"fault policy {text}: unknown key {unknown[0]!r}; keys are {', '.join(sorted(known))}")
    policy = preset(data["preset"]) if "preset" in data else FaultPolicy()
    changes: dict[str, Any] = {"name": path.stem}
    if "rates" in data:
        changes["rates"] = _rates(data["rates"], f"{text}: rates")
    if "tools" in data:
        if not isinstance(data["tools"], dict):
            raise PolicyError(f"{text}: tools must map tool names to rates")
        changes["tool_rates"] = {str(tool): _rates(rates, f"{text}: tools.{tool}") for tool, rates in data["tools"].items()}
    if "phases" in data:
        if not isinstance(data["phases"], dict) or not set(data["phases"]) <= set(PHASES):
            raise PolicyError(f"{text}: phases must map {' or '.join(PHASES)} to rates")
        changes["phase_rates"] = {phase: _rates(rates, f"{text}: phases.{phase}") for phase, rates in data["phases"].items()}
    if "phase" in data:
        changes["phases"] = _phases(data["phase"])
    for key, kind, low in (("seed", int, None), ("retry_after", int, 1), ("delay_seconds", (int, float), 0)):
        if key in data:
            value = data[key]
            if isinstance(value, bool) or not isinstance(value, kind) or (low is not None and value < low):
                raise PolicyError(f"{text}: {key} must be a number" + (f" >= {low}" if low is not None else ""))
            changes[key] = value
    return replace(policy, **changes)


@dataclass(frozen=True)
class InjectedFault:
    """One fault the controller injected: where, of what kind, and the message the agent read."""

    phase: str
    scope: str
    tool: str
    kind: str
    message: str


def _unit(*parts: object) -> float:
    """A number in [0, 1) that depends only on ``parts``."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


class StateController:
    """Injects faults by ``policy`` into the tool calls of whatever environment holds it.

    Set the phase around the work of a phase (``with controller.phase("test"): ...``); the default is
    ``exploration``. ``injected`` lists every fault injected so far, in no guaranteed order.
    """

    def __init__(self, policy: FaultPolicy, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self.policy = policy
        self.current_phase = "exploration"
        self._sleep = sleep
        self._attempts: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()
        self.injected: list[InjectedFault] = []

    def reset(self) -> None:
        """Forget attempts and injected faults: the next run meets the faults a fresh one would."""
        with self._lock:
            self._attempts.clear()
            self.injected.clear()

    def snapshot(self) -> dict[str, Any]:
        """The attempt counts and the faults injected so far, for a checkpoint: a resumed run meets the faults it
        would have met, and its docs are checked against every fault injected since it started."""
        with self._lock:
            return {"attempts": [[phase, scope, count] for (phase, scope), count in sorted(self._attempts.items())],
                    "injected": [vars(fault) for fault in self.injected]}

    def restore(self, snapshot: dict[str, Any]) -> None:
        """Continue from :meth:`snapshot` (one written before faults were kept has attempt counts only)."""
        with self._lock:
            self._attempts = {(str(phase), str(scope)): int(count) for phase, scope, count in snapshot["attempts"]}
            self.injected[:] = [InjectedFault(**fault) for fault in snapshot.get("injected", ())]

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        if name not in PHASES:
            raise ValueError(f"phase must be one of {', '.join(PHASES)}, got {name!r}")
        before, self.current_phase = self.current_phase, name
        try:
            yield
        finally:
            self.current_phase = before

    def episode(self, scope: str) -> Episode:
        """A new attempt at the task ``scope`` names (a task id; a toolset for calls outside any task)."""
        phase = self.current_phase
        with self._lock:
            attempt = self._attempts.get((phase, scope), 0)
            self._attempts[(phase, scope)] = attempt + 1
        return Episode(self, phase, scope, attempt)

    def messages(self, phase: str | None = "exploration") -> list[str]:
        """The messages of the faults injected in ``phase`` (all phases: None)."""
        with self._lock:
            return [fault.message for fault in self.injected if phase is None or fault.phase == phase]

    def _record(self, fault: InjectedFault) -> None:
        with self._lock:
            self.injected.append(fault)


class Episode:
    """One attempt at one task: numbers its calls and decides each one's fault."""

    def __init__(self, controller: StateController | None, phase: str, scope: str, attempt: int) -> None:
        self.controller = controller
        self.phase = phase
        self.scope = scope
        self.attempt = attempt
        self.calls = 0

    def run(self, call: ToolCall, execute: Callable[[], CallResult]) -> CallResult:
        """``execute()``'s result for ``call``, or the fault the policy injects in its place."""
        if self.controller is None or call.problem is not None:
            return execute()
        index, self.calls = self.calls, self.calls + 1
        policy = self.controller.policy
        kind = _choose(policy.rates_for(call.name, self.phase),
                       _unit(policy.seed, self.phase, self.scope, self.attempt, index, call.name))
        if kind is None:
            return execute()
        draw = _unit(policy.seed, self.phase, self.scope, self.attempt, index, call.name, kind)
        if kind in TRANSIENT_KINDS:
            result = CallResult(call, False, error=_transient_message(kind, call.name, policy, draw), injected=kind)
        else:
            if kind == "delay" and policy.delay_seconds:
                self.controller._sleep(policy.delay_seconds)
            result = execute()
            if not result.ok:  # a failure stays the tool's own: only what a tool returned is damaged
                return result
            if kind == "corrupt":
                result = replace(result, output=corrupted(result.output, draw), injected=kind)
            elif kind == "drift":
                result = replace(result, output=drifted(result.output, draw), injected=kind)
            else:
                result = replace(result, injected=kind)
        self.controller._record(InjectedFault(self.phase, self.scope, call.name, kind, result.error or ""))
        return result


@contextmanager
def phase_of(env: object, name: str) -> Iterator[None]:
    """Run a block as phase ``name`` of ``env``'s state controller; nothing happens without one."""
    controller = getattr(env, "faults", None)
    if controller is None:
        yield
        return
    with controller.phase(name):
        yield


def episode(controller: StateController | None, scope: str) -> Episode:
    """An episode of ``controller``, or one that runs every call untouched when there is none."""
    return controller.episode(scope) if controller is not None else Episode(None, "", scope, 0)


def call_episode(controller: StateController | None, toolset: str, tool: str) -> Episode:
    """The attempt of one call outside any task (an optimizer trying a tool), counted among that tool's own calls.

    Play2Prompt plays every tool on a thread of its own: counted per toolset, a call's number (and so its fault)
    depended on how the other tools' calls interleaved with it, which changed from run to run.
    """
    return episode(controller, f"{toolset}/{tool}")


def _choose(rates: dict[str, float], unit: float) -> str | None:
    bound = 0.0
    for kind in FAULT_KINDS:
        bound += rates.get(kind, 0.0)
        if unit < bound:
            return kind
    return None


def _transient_message(kind: str, tool: str, policy: FaultPolicy, draw: float) -> str:
    if kind == "timeout":
        return f"TimeoutError: {tool}() timed out after {10 + int(draw * 20)} s without a reply"
    if kind == "rate_limit":
        wait = policy.retry_after + int(draw * policy.retry_after)
        return f"RateLimitError: 429 Too Many Requests: {tool}() rate limit exceeded; retry after {wait} s"
    return f"ServiceUnavailable: 503 {tool}() is temporarily unavailable; try again later"


def corrupted(value: Any, draw: float) -> Any:
    """``value`` damaged as a broken transfer damages it: text and lists cut short, an object's field mangled."""
    if isinstance(value, str):
        return value[: len(value) // 2]
    if isinstance(value, bool) or value is None:
        return "\ufffd"
    if isinstance(value, (int, float)):
        text = repr(value)
        return text[: max(1, len(text) // 2)] + "\ufffd"
    if isinstance(value, (list, tuple)):
        return list(value)[: len(value) // 2]
    if isinstance(value, dict):
        if not value:
            return "\ufffd"
        keys = list(value)
        mangled = keys[int(draw * len(keys))]
        return {key: ("\ufffd" if key == mangled else item) for key, item in value.items()}
    return "\ufffd"


def drifted(value: Any, draw: float) -> Any:
    """``value`` as a tool would return it after the state behind it changed: plausible, and wrong."""
    factor = 1.1 + draw
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return int(value * factor) + 1
    if isinstance(value, float):
        return value * factor + 0.5
    if isinstance(value, str):
        return re.sub(r"\d", lambda digit: str((int(digit.group()) + 1) % 10), value)
    if isinstance(value, (list, tuple)):
        items = [drifted(item, draw) if not isinstance(item, (list, dict)) else item for item in value]
        return items[1:] + items[:1] if len(items) > 1 else items
    if isinstance(value, dict):
        return {key: drifted(item, draw) for key, item in value.items()}
    return value
