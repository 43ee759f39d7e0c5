"""Parse BFCL ground-truth call strings such as ``calc_binomial_probability(n=20, k=5, p=1/6)``.

The strings are Python call syntax. They are parsed with :mod:`ast` and their argument values
evaluated by a small evaluator that knows literals (numbers, strings, booleans, None, lists,
tuples, dicts) and arithmetic on numbers (+ - * / // % ** and unary +/-), so ``1/6`` and
``500*500`` work; names, attribute access, calls, lambdas and everything else are refused.
Nothing is ever passed to ``eval``/``exec``. Powers and results are bounded so that
``10**10**10`` is refused instead of hanging.

Tuples become lists: JSON has no tuples, so agents send ``[3, 5]`` for BFCL's "tuple" params
(``get_distance(pointA=(3,5), ...)``), the functions accept both, and the metrics compare gold
values with ``==``, where ``[3, 5] != (3, 5)``.

One BFCL ground truth passes an argument positionally (``calculate_mean([1,3,4,6,8])``);
positional arguments are bound to parameter names from the implementation's signature.
"""

from __future__ import annotations

import ast
import inspect
import math
import operator
from collections.abc import Callable
from typing import Any, TypeGuard

from otbench.core.calls import ToolCall
from otbench.envs.bfcl.functions import FUNCTIONS

_MAX_INT_BITS = 4096  # about 1233 decimal digits: far beyond any BFCL value
_MAX_TEXT_LENGTH = 100_000

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _bounded(value: float) -> int | float:
    if isinstance(value, int) and value.bit_length() > _MAX_INT_BITS:
        raise ValueError(f"number too large (over {_MAX_INT_BITS} bits)")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("number overflows to a non-finite float")
    return value


def _power(base: float, exponent: float) -> int | float:
    """base ** exponent, refusing results that would be huge before computing them."""
    if (isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and abs(base) > 1
            and (abs(base).bit_length() - 1) * exponent > _MAX_INT_BITS):
        raise ValueError(f"power {base}**{exponent} is too large")
    try:
        result = base**exponent
    except OverflowError as exc:
        raise ValueError(f"power {base}**{exponent} overflows") from exc
    except ZeroDivisionError as exc:
        raise ValueError(f"power {base}**{exponent} divides by zero") from exc
    if isinstance(result, complex):
        raise ValueError(f"power {base}**{exponent} is not a real number")
    return _bounded(result)


def _value(node: ast.expr) -> Any:
    """The value of a literal/arithmetic expression node; ValueError for anything else."""
    if isinstance(node, ast.Constant):
        if node.value is None or isinstance(node.value, (bool, int, float, str)):
            return _bounded(node.value) if _is_number(node.value) else node.value
        raise ValueError(f"unsupported constant {node.value!r}")
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_value(item) for item in node.elts]
    if isinstance(node, ast.Dict):
        if any(key is None for key in node.keys):
            raise ValueError("'**' unpacking is not allowed in a dict value")
        keys = [_value(key) for key in node.keys]  # type: ignore[arg-type]
        if not all(isinstance(key, (str, int, float, bool)) or key is None for key in keys):
            raise ValueError("dict keys must be strings, numbers, booleans or None")
        return dict(zip(keys, (_value(item) for item in node.values)))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _value(node.operand)
        if not _is_number(operand):
            raise ValueError(f"unary {'-' if isinstance(node.op, ast.USub) else '+'} needs a number")
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp) and (type(node.op) in _BINARY or isinstance(node.op, ast.Pow)):
        left, right = _value(node.left), _value(node.right)
        if not (_is_number(left) and _is_number(right)):
            raise ValueError(f"arithmetic is only allowed on numbers: {ast.unparse(node)!r}")
        if isinstance(node.op, ast.Pow):
            return _power(left, right)
        try:
            return _bounded(_BINARY[type(node.op)](left, right))
        except ZeroDivisionError as exc:
            raise ValueError(f"division by zero in {ast.unparse(node)!r}") from exc
    raise ValueError(f"only literals and arithmetic are allowed as values, got {ast.unparse(node)!r}")


def _bind_positional(name: str, positional: list[Any], keywords: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments for ``positional`` values, named after the function's parameters."""
    if name not in FUNCTIONS:
        raise ValueError(f"positional arguments need a known function to name them; {name!r} is unknown")
    parameters = list(inspect.signature(FUNCTIONS[name]).parameters)
    if len(positional) > len(parameters):
        raise ValueError(f"{name} takes {len(parameters)} argument(s), {len(positional)} given positionally")
    named = dict(zip(parameters, positional))
    clash = sorted(set(named) & set(keywords))
    if clash:
        raise ValueError(f"argument(s) {clash} given both positionally and by keyword")
    return named | keywords


def parse_call(text: str) -> ToolCall:
    """The :class:`ToolCall` a ground-truth string such as ``f(a=1, b=[1, 2])`` describes.

    Raises ValueError with a one-line message for anything that is not a single call of a plain
    function name with literal/arithmetic arguments.
    """
    if not isinstance(text, str):
        raise ValueError(f"a call must be a string, got {type(text).__name__}")
    if len(text) > _MAX_TEXT_LENGTH:
        raise ValueError(f"call text longer than {_MAX_TEXT_LENGTH} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ValueError(f"not a valid call: {exc.msg}: {text[:80]!r}") from exc
    except (RecursionError, MemoryError) as exc:
        raise ValueError(f"call nested too deeply: {text[:80]!r}") from exc
    if not isinstance(tree, ast.Call):
        raise ValueError(f"not a function call: {text[:80]!r}")
    if not isinstance(tree.func, ast.Name):
        raise ValueError(f"the called function must be a plain name, got {ast.unparse(tree.func)!r}")
    name = tree.func.id
    keywords: dict[str, Any] = {}
    try:
        for keyword in tree.keywords:
            if keyword.arg is None:
                raise ValueError("'**' unpacking is not allowed in a call")
            if keyword.arg in keywords:
                raise ValueError(f"argument {keyword.arg!r} given twice")
            keywords[keyword.arg] = _value(keyword.value)
        if any(isinstance(arg, ast.Starred) for arg in tree.args):
            raise ValueError("'*' unpacking is not allowed in a call")
        positional = [_value(arg) for arg in tree.args]
    except RecursionError as exc:
        raise ValueError(f"call nested too deeply: {text[:80]!r}") from exc
    arguments = _bind_positional(name, positional, keywords) if positional else keywords
    return ToolCall(name=name, arguments=arguments)


def parse_calls(texts: list[str]) -> list[ToolCall]:
    """:func:`parse_call` applied to each string, in order."""
    return [parse_call(text) for text in texts]
