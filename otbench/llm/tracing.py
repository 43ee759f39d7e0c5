"""MLflow traces of a run's LM calls, so "why did the agent call that?" and "why did the editor write
this?" are answered in the run's Traces tab.

Every task rollout is one trace (its question, the calls the agent made and what they returned,
its metrics), with one span per LM call made during it (phase, model, prompt and reply, tokens,
seconds). A call outside any rollout (an editor's rewrite, an exploration) is a trace of its own.
Traces belong to the run that :func:`traced_run` names; the rollouts run in worker threads, so
the run is kept process-wide, not per thread. ``OTBENCH_TRACING=0`` turns tracing off.

Cost: MLflow writes traces from background threads while the run waits on its LM; what remains
is CPU, about 45 ms per traced LM call on 2 busy cores with the sqlite store (measured with
scripted-LM rollouts), against seconds per call of the embedded model.

MLflow's export queue discards a trace that arrives when it is full (1,000 unwritten traces): 64
threads against a fast model server made traces faster than the sqlite store took them, and half
of 1,500 rollouts' traces were lost. A new trace therefore waits while more than
:data:`UNWRITTEN_TRACES` are queued: the run slows to the pace of its store, and keeps every trace.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

SWITCH = "OTBENCH_TRACING"
UNWRITTEN_TRACES = 500
"""Traces MLflow may hold unwritten before a new trace waits (its queue discards past 1,000)."""
_runs: list[str] = []
_lock = threading.Lock()


def enabled() -> bool:
    return os.environ.get(SWITCH, "1").strip().lower() not in ("0", "false", "off", "no")


def current_run() -> str | None:
    """The run traces go to, or None when nothing is traced."""
    with _lock:
        return _runs[-1] if _runs and enabled() else None


@contextmanager
def traced_run(run_id: str) -> Iterator[None]:
    """Within the block, rollouts and LM calls are traced into ``run_id`` (a nested run takes over, then
    hands back); the traces are written out when the block ends."""
    with _lock:
        _runs.append(run_id)
    try:
        yield
    finally:
        with _lock:
            _runs.remove(run_id)
        if enabled():
            import mlflow

            mlflow.flush_trace_async_logging(terminate=False)


def export_queue() -> Any:
    """The queue of traces MLflow's background export has yet to write, or None where it has none (tracing not
    started yet, synchronous export, or an MLflow whose private layout differs: then nothing waits)."""
    try:
        from mlflow.tracing.provider import _get_trace_exporter

        return getattr(getattr(_get_trace_exporter(), "_async_queue", None), "_queue", None)
    except Exception:  # noqa: BLE001 - a private part of MLflow: without it, traces are not held back
        return None


def _wait_for_the_store() -> None:
    """Hold a new trace back while MLflow's export is behind (see the module's docstring)."""
    queue = export_queue()
    while queue is not None and queue.qsize() > UNWRITTEN_TRACES:
        time.sleep(0.05)


@contextmanager
def span(name: str, kind: str, attributes: dict[str, Any]) -> Iterator[Any]:
    """A span (a trace's root when no span is open in this thread); None when nothing is traced."""
    run_id = current_run()
    if run_id is None:
        yield None
        return
    import mlflow

    root = mlflow.get_current_active_span() is None  # a child span belongs to its root's run
    if root:
        _wait_for_the_store()
    with mlflow.start_span(name=name, span_type=kind, attributes=attributes, run_id=run_id if root else None) as opened:
        yield opened


@contextmanager
def rollout() -> Iterator[Any]:
    """One task rollout; describe it with :func:`record_rollout` once it is done."""
    with span("rollout", "AGENT", {}) as opened:
        yield opened


def record_rollout(opened: Any, trajectory: Any) -> None:
    """The rollout's task, calls and outcome on its span (and as the trace's tags, for searching)."""
    if opened is None:
        return
    data = trajectory.to_dict()
    opened.set_inputs({"task_id": trajectory.task_id, "toolset": trajectory.toolset, "question": trajectory.question})
    opened.set_outputs({key: data[key] for key in ("steps", "metrics", "success", "parse_error") if key in data})
    opened.set_attributes({"task_id": str(trajectory.task_id), "toolset": str(trajectory.toolset),
                           "success": bool(trajectory.success), "calls": len(trajectory.steps)})
    import mlflow

    mlflow.update_current_trace(tags={"task_id": str(trajectory.task_id), "success": str(bool(trajectory.success))})


@contextmanager
def lm_call(phase: str, model: str, request: Any) -> Iterator[Any]:
    """One LM call charged to ``phase``; finish it with :func:`record_lm_call`."""
    with span(f"{phase} call", "CHAT_MODEL", {"phase": phase, "model": model}) as opened:
        if opened is not None:
            opened.set_inputs({"messages": request})
        yield opened


def record_lm_call(opened: Any, outputs: Any, *, prompt_tokens: int, completion_tokens: int, cached_tokens: int,
                   seconds: float) -> None:
    if opened is None:
        return
    opened.set_outputs(outputs)
    opened.set_attributes({"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                           "cached_tokens": cached_tokens, "seconds": round(seconds, 4)})
