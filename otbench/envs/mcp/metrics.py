"""How an attempt at a task is scored: the answer among what the calls returned, or the calls themselves.

Built-in metrics (``--metric``, or a task line's ``metric``):

- ``exact``: a call returned the answer itself (JSON values compared as values, texts without surrounding space);
- ``numeric``: a call returned a number within ``--tolerance`` of the answer (relative, and absolute below 1),
  anywhere in its output, numbers written in text included;
- ``contains``: the answer's text (each item of a list answer) is in what the calls returned, whatever the case
  and spacing;
- ``calls``: the reply made exactly the task's ``calls`` (same tools, same arguments, in any order).

An answer metric also fails a reply that made more calls than the task's ``calls`` (when it has them): calling
every tool and hoping one fits is no answer. Feedback says what went wrong in words an editor may read, never the
answer. A metric of your own is ``module:function`` (``(example, trajectory) -> float | bool``, or an object
with ``score`` and ``feedback``), imported by name; this module never runs anything a task file or a server gives.
"""

from __future__ import annotations

import importlib
import inspect
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from otbench.core.trajectory import Trajectory, json_text
from otbench.errors import ConfigError

BUILT_IN = ("contains", "exact", "numeric", "calls")
"""The built-in metrics, the default first."""

ANSWERED = "The reply answered the request."
NO_CALL = "The reply made no call."
NOT_FOUND = "No call returned what the request asked for."
TOO_MANY = ("The reply made more calls than the request needs: calling several tools in the hope that one fits "
            "does not answer it.")
OTHER_CALLS = "The reply did not make the calls the request needs."

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")

Scored = tuple[float, str]
"""A score from 0 to 1 and the feedback an editor reads."""


def _words(text: str) -> str:
    return " ".join(text.casefold().split())


def _text_of(value: Any) -> str:
    return value if isinstance(value, str) else json_text(value)


def _same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, str) and isinstance(actual, str):
        return expected.strip() == actual.strip()
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return float(expected) == float(actual)
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(_same(e, a) for e, a in zip(expected, actual, strict=True))
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(_same(value, actual[key]) for key, value in expected.items())
    return False


def _numbers(value: Any, depth: int = 0) -> list[float]:
    """Every number in an output: its values, and the numbers written in its texts."""
    if isinstance(value, bool) or depth > 32:
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, str):
        found = []
        for match in _NUMBER.findall(value):
            try:
                found.append(float(match))
            except ValueError:
                continue
        return found
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [number for item in items for number in _numbers(item, depth + 1)]


def _answer_number(answer: Any) -> float:
    try:
        number = float(answer)
    except (TypeError, ValueError):
        raise ConfigError(f"the numeric metric needs a number as the answer, got {answer!r}") from None
    if isinstance(answer, bool) or not math.isfinite(number):
        raise ConfigError(f"the numeric metric needs a finite number as the answer, got {answer!r}")
    return number


def found_answer(metric: str, answer: Any, outputs: list[Any], tolerance: float) -> bool:
    """Whether ``outputs`` hold ``answer`` as answer metric ``metric`` reads it."""
    if metric == "exact":
        return any(_same(answer, output) for output in outputs)
    if metric == "numeric":
        expected = _answer_number(answer)
        bound = tolerance * max(1.0, abs(expected))
        return any(abs(number - expected) <= bound for output in outputs for number in _numbers(output))
    texts = _words(" ".join(_text_of(output) for output in outputs))
    wanted = answer if isinstance(answer, list) else [answer]
    return all(_words(_text_of(item)) in texts for item in wanted)


def _made_the_calls(expected: list[dict[str, Any]], trajectory: Trajectory, real_of: Mapping[str, str]) -> bool:
    """Whether the reply's calls are ``expected``, one for one in any order (arguments compared as values)."""
    made = [(real_of.get(step.call.name, step.call.name), step.call.arguments) for step in trajectory.steps]
    if len(made) != len(expected):
        return False
    for call in expected:
        match = next((index for index, (name, arguments) in enumerate(made)
                      if name == call["name"] and _same(call["arguments"], arguments)), None)
        if match is None:
            return False
        made.pop(match)
    return True


def score(metric: str, task: Any, trajectory: Trajectory, *, tolerance: float, real_of: Mapping[str, str]) -> Scored:
    """The built-in ``metric``'s score of ``trajectory`` on ``task``; ``real_of`` maps a shown tool name to the
    server's name (what the task's ``calls`` use)."""
    if not trajectory.steps:
        return 0.0, NO_CALL
    expected_calls = task.get("calls")
    if metric == "calls":
        if expected_calls is None:
            raise ConfigError("the calls metric needs the calls that answer each task (a task line's \"calls\")")
        return (1.0, ANSWERED) if _made_the_calls(expected_calls, trajectory, real_of) else (0.0, OTHER_CALLS)
    problems = []
    if not found_answer(metric, task.get("answer"), trajectory.outputs, tolerance):
        problems.append(NOT_FOUND)
    if expected_calls is not None and len(trajectory.steps) > len(expected_calls):
        problems.append(TOO_MANY)
    return (0.0, " ".join(problems)) if problems else (1.0, ANSWERED)


def user_metric(spec: str) -> Callable[[Any, Trajectory], Any]:
    """The function ``module:function`` names, imported (the module must be importable: installed, or on the
    current folder's path)."""
    module_name, _, function_name = spec.partition(":")
    if not module_name or not function_name.isidentifier():
        raise ConfigError(f"--metric {spec!r}: expected one of {', '.join(BUILT_IN)} or module:function")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ConfigError(f"--metric {spec}: cannot import {module_name} ({error})") from None
    function = getattr(module, function_name, None)
    if not callable(function):
        raise ConfigError(f"--metric {spec}: {module_name} has no function {function_name}")
    try:
        inspect.signature(function).bind(None, None)
    except TypeError:
        raise ConfigError(f"--metric {spec}: {function_name} does not take (example, trajectory), as a metric "
                          "must") from None
    except ValueError:  # a builtin without a readable signature: it is tried as it is
        pass
    return function
