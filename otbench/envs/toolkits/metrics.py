"""How a toolkit task is scored: the answer the request asks for must be among what the calls returned.

A reply is one list of calls, run in order; it answers the request when one call returned the
expected answer and it made no more calls than the request needs (the gold calls' count): calling
every tool that might fit and hoping one of them does is not an answer, and it is exactly what a
family of confusable tools must catch. Answers compare by value: numbers within a relative tolerance
of :data:`RELATIVE_TOLERANCE` (an integer answer matches the equal float), text exactly, lists
element by element in order, records (dicts) key by key. Feedback says what went wrong in words an
editor may read, never the expected answer or the gold calls.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import dspy

from otbench.core.trajectory import Trajectory

RELATIVE_TOLERANCE = 1e-3
"""Numbers within 0.1% of the expected one match: a tool's float output, or an argument written with fewer
digits (``0.5`` kg for half a kilo), still answers."""

ANSWERED = "The reply answered the request."
NOT_FOUND = "No call returned what the request asked for."
TOO_MANY = ("The reply made more calls than the request needs: calling several tools in the hope that one fits "
            "does not answer it.")
NO_CALL = "The reply made no call."


def matches(expected: Any, actual: Any) -> bool:
    """Whether ``actual`` (a call's output) is ``expected`` (see the module's docstring)."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, (int, float)):
        if not isinstance(actual, (int, float)):
            return False
        try:
            return math.isclose(actual, expected, rel_tol=RELATIVE_TOLERANCE, abs_tol=1e-9)
        except OverflowError:  # an integer too large for a float (a factorial's): equal, or not the answer
            return actual == expected
    if isinstance(expected, list):
        return (isinstance(actual, (list, tuple)) and len(actual) == len(expected)
                and all(matches(e, a) for e, a in zip(expected, actual, strict=True)))
    if isinstance(expected, dict):
        return (isinstance(actual, dict) and set(actual) == set(expected)
                and all(matches(value, actual[key]) for key, value in expected.items()))
    return type(expected) is type(actual) and expected == actual


def answer_metric(example: dspy.Example, trajectory: Trajectory, *,
                  state_check: Callable[[dspy.Example], str | None] | None = None) -> dspy.Prediction:
    """1.0 when a call returned ``example.answer`` within ``len(example.calls)`` calls (and ``state_check``,
    given, found nothing wrong: it returns what is wrong, in words), else 0.0; with feedback."""
    if not trajectory.steps:
        return dspy.Prediction(score=0.0, feedback=NO_CALL)
    problems = []
    if not any(matches(example.answer, output) for output in trajectory.outputs):
        problems.append(NOT_FOUND)
    if len(trajectory.steps) > len(example.calls):
        problems.append(TOO_MANY)
    wrong_state = state_check(example) if state_check is not None else None
    if wrong_state:
        problems.append(wrong_state)
    return dspy.Prediction(score=0.0 if problems else 1.0, feedback=" ".join(problems) or ANSWERED)
