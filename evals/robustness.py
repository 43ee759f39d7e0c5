"""Robustness of an agent's tool use, from its trajectories alone, next to each environment's own metrics.

- ``schema_compliance``: share of calls that fit the tool's interface as offered: a readable call
  (no ``problem``) to a tool that exists, with arguments it accepts. A call's own failure tells:
  ``NameError`` (no such tool) and ``TypeError`` (arguments it does not take) are the two failures
  every environment reports for a call that does not fit; an injected fault says nothing about it.
- ``recovery_rate``: of the failed calls followed by another call in the same attempt, the share whose
  next call succeeded (success at turn t+1 after a failure at turn t); ``injected_recovery_rate``
  counts after injected failures only.
- ``flexibility``: of the injected failures followed by another call, the share where that call
  changed plan: another tool, or the same tool with other arguments.
- ``injected_faults``: injected faults per attempt; ``injected_share``: their share of all calls.
- ``tool_calls``: tool calls per attempt: docs that make an agent right more often by making it call more
  cost every call, so the two are read side by side.

Rates with nothing to count (no failure followed by a call) are left out, so a mean is never made of
empty cases. Trajectories from any environment fit: only :class:`~otbench.core.calls.CallResult` is read.
"""

from __future__ import annotations

from collections.abc import Sequence

from otbench.core.calls import CallResult
from otbench.core.trajectory import Trajectory

ROBUSTNESS_METRICS = ("schema_compliance", "recovery_rate", "injected_recovery_rate", "flexibility",
                      "injected_faults", "injected_share", "tool_calls")
_MISFIT_ERRORS = ("NameError", "TypeError")


def fits_schema(step: CallResult) -> bool:
    """Whether the call fit the tool's interface (an injected fault does not count against it)."""
    if step.call.problem is not None:
        return False
    if step.ok or step.injected is not None:
        return True
    return not (step.error or "").startswith(_MISFIT_ERRORS)


def changed_plan(failed: CallResult, following: CallResult) -> bool:
    return following.call.name != failed.call.name or following.call.arguments != failed.call.arguments


def robustness(trajectories: Sequence[Trajectory]) -> dict[str, float]:
    """The robustness metrics over ``trajectories`` (see the module's docstring)."""
    steps = [step for trajectory in trajectories for step in trajectory.steps]
    pairs = [(step, following) for trajectory in trajectories
             for step, following in zip(trajectory.steps, trajectory.steps[1:], strict=False)]
    after_failure = [following for step, following in pairs if not step.ok]
    after_injected = [(step, following) for step, following in pairs if step.injected is not None and not step.ok]
    injected = sum(step.injected is not None for step in steps)
    metrics: dict[str, float] = {"injected_faults": injected / len(trajectories) if trajectories else 0.0,
                                 "tool_calls": len(steps) / len(trajectories) if trajectories else 0.0}
    if steps:
        metrics["schema_compliance"] = sum(map(fits_schema, steps)) / len(steps)
        metrics["injected_share"] = injected / len(steps)
    if after_failure:
        metrics["recovery_rate"] = sum(following.ok for following in after_failure) / len(after_failure)
    if after_injected:
        metrics["injected_recovery_rate"] = sum(following.ok for _, following in after_injected) / len(after_injected)
        metrics["flexibility"] = sum(changed_plan(step, following) for step, following in after_injected) / len(
            after_injected)
    return metrics
