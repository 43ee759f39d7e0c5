"""Plain records for tool calls and their outcomes, shared by environments, agents and metrics.

They live apart from any environment so that metrics (``evals/``) and agents (``modules/``) can
speak about calls without importing an environment.

A model's reply is untrusted, so its calls are checked once, where they are read
(:func:`checked_call`): a :class:`ToolCall` always has a string name and an object of JSON
arguments with clean text, whatever the model wrote. A call that does not fit that shape keeps
the reason in ``problem``; environments answer it with a failed result and metrics score it as a
failure, so nothing downstream (execution, scoring, prompts, logging) meets a value it cannot
handle.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

MAX_NAME_CHARS = 128
"""Longer tool names are refused: no offered tool has one, and the name is quoted in prompts and logs."""

MAX_DEPTH = 32
"""Nesting of argument values (lists and objects); BFCL's deepest gold argument is 3 levels deep."""

MAX_INT_DIGITS = 4_300
"""Python refuses to print longer integers (``sys.get_int_max_str_digits``), so logging them would fail."""

_INT_LIMIT = 10**MAX_INT_DIGITS

DEFAULT_MAX_CALLS_PER_REPLY = 16
"""Calls of one reply an environment runs; BFCL's gold answers make at most 4."""


@dataclass(frozen=True)
class ToolCall:
    """One call as a model (or a gold answer) wrote it: a tool name and keyword arguments.

    ``problem`` is None for a call that can be made; otherwise it says why this call cannot be
    made as written (``"arguments must be an object, not null"``), and the call is a failure.
    """

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    problem: str | None = None

    def refusal(self) -> str:
        """Why this call is not made, as the error its failed result carries (``problem`` must be set)."""
        return f"{self.name}(): {self.problem}" if self.name else str(self.problem)

    def to_dict(self) -> dict[str, Any]:
        record: dict[str, Any] = {"name": self.name, "arguments": self.arguments}
        if self.problem is not None:
            record["problem"] = self.problem
        return record

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolCall:
        """A call as :meth:`to_dict` logged it."""
        return cls(data["name"], dict(data.get("arguments") or {}), data.get("problem"))


@dataclass(frozen=True)
class CallResult:
    """What executing a :class:`ToolCall` produced.

    ``ok`` is False when the call raised or timed out; ``error`` then holds a one-line message
    (``"TypeError: function_1() missing 1 required positional argument: 'n'"``) that speaks of
    the name the call was made under, because that text is what an editor learns from.
    """

    call: ToolCall
    """The call as it was made."""
    ok: bool
    """Whether the call ran and returned."""
    output: Any = None
    """What it returned (``ok`` only)."""
    error: str | None = None
    """Why it failed (not ``ok`` only)."""
    situation: str = ""
    """The kind of situation the call was made in, as any caller could see it (chess: the game phase
    by the material on the board); blank where an environment has no such notion."""
    value: float | None = None
    """How much the call helped, higher is better, from the same outcome signal the attempt is scored
    by (chess: the evaluation change in pawns; BrowseComp: 1 when a result was a page the question
    needed); None where an environment does not judge single calls. Optimizers compare tools by it."""
    injected: str | None = None
    """The kind of fault a state controller injected into this call (:mod:`otbench.core.faults`), None for a
    call that met the tool as it is: the agent cannot tell, metrics can."""

    def to_dict(self) -> dict[str, Any]:
        data = {"call": self.call.to_dict(), "ok": self.ok, "output": self.output, "error": self.error}
        if self.situation:
            data["situation"] = self.situation
        if self.value is not None:
            data["value"] = self.value
        if self.injected is not None:
            data["injected"] = self.injected
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CallResult:
        """A result as :meth:`to_dict` logged it (an output JSON could not hold comes back as its logged text)."""
        return cls(ToolCall.from_dict(data["call"]), bool(data["ok"]), data.get("output"), data.get("error"),
                   data.get("situation", ""), data.get("value"), data.get("injected"))

    @classmethod
    def refused(cls, call: ToolCall) -> CallResult:
        """The failed result of a call whose ``problem`` keeps it from being made."""
        return cls(call, False, error=call.refusal())


def earlier_identical(call: ToolCall, earlier: list[CallResult]) -> int | None:
    """The number (from 1) of the call in ``earlier`` that ``call`` repeats exactly, same tool and same arguments,
    if any: one that worked, so its result is already in the agent's view (retrying a call that failed is no
    repeat: a transient fault may have kept it from running)."""
    for number, result in enumerate(earlier, start=1):
        if result.ok and result.call.name == call.name and result.call.arguments == call.arguments:
            return number
    return None


def has_lone_surrogate(text: str) -> bool:
    """Whether ``text`` cannot be encoded as UTF-8.

    JSON's ``"\\ud800"`` decodes to a lone surrogate, which no UTF-8 encoder accepts: left in, it
    makes the next prompt (an HTTP body) and the MLflow artefact that quotes it fail to encode.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (see :func:`has_lone_surrogate`)."""
    if not has_lone_surrogate(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bytes):
        return "bytes"
    return f"a {type(value).__name__}"


class _NotJson(ValueError):
    """A value that a tool call cannot carry; the message is the reason."""


def _json_value(value: Any, depth: int) -> Any:
    """``value`` as plain JSON data (tuples become lists), or :class:`_NotJson` saying what does not fit.

    Recursion stops at :data:`MAX_DEPTH`, so a hostile nesting never reaches Python's recursion limit.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if -_INT_LIMIT < value < _INT_LIMIT:
            return value
        raise _NotJson(f"an integer has more than {MAX_INT_DIGITS} digits")
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        raise _NotJson(f"{value} is not a finite number")
    if isinstance(value, str):
        if has_lone_surrogate(value):
            raise _NotJson("a string is not valid Unicode (it holds a lone surrogate)")
        return value
    if depth >= MAX_DEPTH:
        raise _NotJson(f"values are nested more than {MAX_DEPTH} levels deep")
    if isinstance(value, (list, tuple)):
        return [_json_value(item, depth + 1) for item in value]
    if isinstance(value, dict):
        return _json_object(value, depth + 1)
    raise _NotJson(f"{_kind(value)} is not a JSON value")


def _json_object(value: dict[Any, Any], depth: int) -> dict[str, Any]:
    checked = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise _NotJson(f"object keys must be strings, not {_kind(key)}")
        if has_lone_surrogate(key):
            raise _NotJson("a key is not valid Unicode (it holds a lone surrogate)")
        checked[key] = _json_value(item, depth)
    return checked


def checked_call(name: Any, arguments: Any) -> ToolCall:
    """The :class:`ToolCall` that untrusted ``name`` and ``arguments`` make, with a ``problem`` when
    they do not fit: a name that is not a short string, arguments that are not an object of JSON
    values (null, a number, a string, a list; tuple or bytes keys; integers too long to print;
    non-finite numbers; nesting deeper than :data:`MAX_DEPTH`), or text with lone surrogates.

    A call with a problem keeps a printable name (cleaned, cut to :data:`MAX_NAME_CHARS`) and no
    arguments, so whatever later quotes it stays clean.
    """
    if not isinstance(name, str):
        return ToolCall("", {}, f"the tool name must be a string, not {_kind(name)}")
    if has_lone_surrogate(name):
        return ToolCall(clean_text(name)[:MAX_NAME_CHARS], {},
                        "the tool name is not valid Unicode (it holds a lone surrogate)")
    if len(name) > MAX_NAME_CHARS:
        return ToolCall(name[:MAX_NAME_CHARS], {}, f"the tool name is longer than {MAX_NAME_CHARS} characters")
    if not isinstance(arguments, dict):
        return ToolCall(name, {}, f"arguments must be an object of named arguments, not {_kind(arguments)}")
    try:
        return ToolCall(name, _json_object(arguments, 1))
    except _NotJson as exc:
        return ToolCall(name, {}, f"arguments must be JSON values: {exc}")


_ERROR_OPENING = re.compile(r"^(?:\W{0,3}(?:error|exception|traceback|fatal)\b|\s*(?:❌|⛔|✖|✗|⚠)|\W{0,3}(?:错误|錯誤)"
                            r"|\W{0,3}[A-Za-z][\w-]*\s(?:error|exception)\s*:\s*[A-Za-z'\"]"  # Database error: no such
                            r"|\W{0,3}(?-i:[A-Z]\w*(?:Error|Exception))\s*:\s*[A-Za-z'\"])",  # ValueError: unknown unit
                            re.IGNORECASE)
_FAILURE_OPENING = re.compile(r"^\W{0,3}(?:invalid|failed|failure|unable|cannot|can't|could not|unknown|unsupported|"
                              r"not (?:found|supported|allowed|a valid))\b", re.IGNORECASE)
_ERROR_KEYS = {"error", "errors", "message", "code", "status", "detail", "details", "type", "success", "ok"}
MAX_WORDED_ERROR_CHARS = 500
"""An error read from a tool's words is cut to this many characters, as it is quoted to an editor."""


def worded_error(output: Any) -> str | None:
    """The message of an output that is an error in words rather than a raised one, None for any other output.

    Many servers and functions answer a call they cannot serve with a text (``"Error: unknown unit 'kms'; use
    km, mi"``) or an object (``{"error": "..."}``) instead of failing it, so the call looks as if it worked. Read
    here as what it is: a text that opens with an error's word (error, exception, traceback, 错误; or a word and then
    the error's colon and words: ``Database error: no such table``, ``ValueError: unknown unit``, where ``Standard
    error: 0.12`` is an answer) or mark (❌), or with a failure's
    (invalid, failed, unable, cannot, unknown...) on a first line that goes on to say why (a colon or semicolon
    follows); an object whose only keys are an error report's, with a non-empty ``error``. A plain answer that
    merely contains such a word later on is an answer."""
    if isinstance(output, dict):
        error = output.get("error") or output.get("errors")
        if error and set(map(str, output)) <= _ERROR_KEYS and output.get("success") is not True:
            message = output.get("message") or output.get("detail")
            text = error if isinstance(error, str) else repr(error)
            return _one_line(f"{text}: {message}" if isinstance(message, str) and message not in text else text)
        return None
    if not isinstance(output, str):
        return None
    text = output.strip()
    first_line = text.split("\n", 1)[0]
    if _ERROR_OPENING.match(text) or (_FAILURE_OPENING.match(text) and re.search(r"[:;]", first_line)):
        return _one_line(text)
    return None


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_WORDED_ERROR_CHARS else f"{flat[:MAX_WORDED_ERROR_CHARS]}..."


def read_worded_error(result: CallResult) -> CallResult:
    """``result`` as a failed call where what it returned is an error in words (:func:`worded_error`), its words
    the error; any other result as it is."""
    if not result.ok:
        return result
    error = worded_error(result.output)
    if error is None:
        return result
    return CallResult(result.call, False, error=error, situation=result.situation, value=result.value,
                      injected=result.injected)


_PERCENT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:%|per\s?cent\b|pct\b)", re.IGNORECASE)
_WRITTEN_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?")
_SCALE_TOLERANCE = 1e-9


def scale_mismatch(request: str, call: ToolCall) -> str | None:
    """Why ``call`` hands a tool a number of the request on another scale than the request states it, None where it
    does not: a request that says 15% and a call that passes 0.15 (or 1500) and never 15 itself.

    The tool answers such a call with a plausible number and no error, so nothing else tells the learner the call may
    be wrong: read from the request and the call alone (no task answer), it is a doubt to test, not a verdict: the
    learner tries the value as the request writes it and an editor sees both results."""
    percents = [float(text) for text in _PERCENT.findall(request)]
    if not percents:
        return None
    written = _written_numbers(request)
    passed = [value for value in _numbers(call.arguments)
              if not any(math.isclose(value, number, rel_tol=_SCALE_TOLERANCE) for number in written)]
    for percent in percents:
        if any(math.isclose(value, percent, rel_tol=_SCALE_TOLERANCE) for value in passed):
            continue
        for value in passed:
            for shown, factor in (("a fraction", 100.0), ("100 times the percentage", 0.01)):
                if percent and math.isclose(value * factor, percent, rel_tol=_SCALE_TOLERANCE):
                    return (f"the request says {percent:g}% and the call passed {value:g} ({shown}): the tool may "
                            f"take {percent:g} as written, so its answer may be on another scale than the request's")
    return None


_PART_ASKED = re.compile(r"\b(?:each|apiece|per\s+(?!cent\b)[a-z]+|per-[a-z]+|share|portion|average|mean|"
                         r"split|divided|monthly|weekly|daily|hourly)\b", re.IGNORECASE)


def part_mismatch(request: str, result: CallResult) -> str | None:
    """Why ``result`` answers ``request`` with a whole where the request asks for a part of it, None where it does not:
    a request that asks what each of 4 pays of a 120 bill, answered 120; one that asks for the average of a list the
    call passed, answered with the list's sum.

    Like a number on another scale, a whole in place of its part is a plausible answer and no error: read from the
    request, the call and what came back (no task answer), it is a doubt to test, not a verdict. A whole here is the
    largest number the request writes, where the request or the call gives a smaller one to divide it by, or the sum
    of a list of two or more numbers the call passed; the result is a single number."""
    asked = _PART_ASKED.search(request)
    if asked is None:
        return None
    answered = _numbers(result.output) if not isinstance(result.output, str) else _written_numbers(result.output)
    if len(answered) != 1:
        return None
    written = _written_numbers(request)
    given = written + _numbers(result.call.arguments)
    wholes = [max(written)] if written and any(0 < number < max(written) for number in given) else []
    wholes += [sum(_numbers(value)) for value in _list_arguments(result.call.arguments) if len(_numbers(value)) >= 2]
    for whole in wholes:
        if whole and math.isclose(answered[0], whole, rel_tol=_SCALE_TOLERANCE):
            return (f"the request asks for a part ({asked.group(0)}) and the call returned "
                    f"{answered[0]:g}, the whole it is a part of: the tool may compute the total, not the part")
    return None


def read_against_request(request: str, result: CallResult) -> CallResult:
    """``result`` as a failed call where its call passed a number of ``request`` on another scale
    (:func:`scale_mismatch`) or returned the whole where the request asks for a part (:func:`part_mismatch`), that
    doubt its error; any other result as it is."""
    if not result.ok:
        return result
    doubt = scale_mismatch(request, result.call) or part_mismatch(request, result)
    if doubt is None:
        return result
    return CallResult(result.call, False, output=result.output, error=doubt, situation=result.situation,
                      value=result.value, injected=result.injected)


def _numbers(value: Any) -> list[float]:
    """Every number in a call's arguments, nested ones included (booleans are not numbers here)."""
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return [float(value)] if math.isfinite(value) else []
    if isinstance(value, dict):
        return [number for item in value.values() for number in _numbers(item)]
    if isinstance(value, list):
        return [number for item in value for number in _numbers(item)]
    return []


def _written_numbers(text: str) -> list[float]:
    return [float(number) for number in _WRITTEN_NUMBER.findall(text)]


def _list_arguments(value: Any) -> list[list[Any]]:
    """Every list among a call's arguments, nested ones included."""
    if isinstance(value, dict):
        return [found for item in value.values() for found in _list_arguments(item)]
    if isinstance(value, list):
        return [value, *(found for item in value for found in _list_arguments(item))]
    return []
