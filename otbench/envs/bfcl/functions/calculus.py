"""Derivative of a one-variable function written as Python lambda source text.

The function arrives as a string from a model, so it is never handed to ``eval``: the text is
parsed with :mod:`ast`, only arithmetic, numbers, the variable, ``pi``/``e`` and a few math
functions are allowed, and the expression is evaluated on dual numbers (value, derivative).
That gives the exact derivative (32.0 for 3x^2 + 2x + 1 at 5) instead of a finite-difference
estimate with rounding noise. All arithmetic is in floats, so ``x**10**10`` overflows quickly
instead of building a giant integer.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from dataclasses import dataclass

from . import _checks as check


@dataclass(frozen=True)
class _Dual:
    """A value together with its derivative with respect to the variable."""

    value: float
    slope: float = 0.0

    def __add__(self, other: _Dual) -> _Dual:
        return _Dual(self.value + other.value, self.slope + other.slope)

    def __sub__(self, other: _Dual) -> _Dual:
        return _Dual(self.value - other.value, self.slope - other.slope)

    def __mul__(self, other: _Dual) -> _Dual:
        return _Dual(self.value * other.value, self.slope * other.value + self.value * other.slope)

    def __truediv__(self, other: _Dual) -> _Dual:
        quotient = self.value / other.value
        return _Dual(quotient, (self.slope - quotient * other.slope) / other.value)

    def __pow__(self, other: _Dual) -> _Dual:
        result = self.value**other.value
        if isinstance(result, complex):
            raise ValueError(f"{self.value!r} ** {other.value!r} is not a real number")
        if other.slope == 0:
            slope = 0.0 if self.slope == 0 else other.value * self.value ** (other.value - 1) * self.slope
        else:
            slope = result * (other.slope * math.log(self.value) + other.value * self.slope / self.value)
        return _Dual(result, slope)

    def __neg__(self) -> _Dual:
        return _Dual(-self.value, -self.slope)


def _chain(value_fn: Callable[[float], float], slope_fn: Callable[[float], float]) -> Callable[[_Dual], _Dual]:
    return lambda u: _Dual(value_fn(u.value), slope_fn(u.value) * u.slope)


_FUNCTIONS: dict[str, Callable[[_Dual], _Dual]] = {
    "sin": _chain(math.sin, math.cos),
    "cos": _chain(math.cos, lambda v: -math.sin(v)),
    "tan": _chain(math.tan, lambda v: 1 / math.cos(v) ** 2),
    "exp": _chain(math.exp, math.exp),
    "log": _chain(math.log, lambda v: 1 / v),
    "sqrt": _chain(math.sqrt, lambda v: 0.5 / math.sqrt(v)),
    "abs": _chain(abs, lambda v: math.copysign(1.0, v) if v else 0.0),
}
_CONSTANTS = {"pi": math.pi, "e": math.e}
_MODULES = {"math", "np", "numpy"}  # prefixes accepted on functions and constants: math.sin, np.pi
_BINARY: dict[type[ast.operator], Callable[[_Dual, _Dual], _Dual]] = {
    ast.Add: _Dual.__add__,
    ast.Sub: _Dual.__sub__,
    ast.Mult: _Dual.__mul__,
    ast.Div: _Dual.__truediv__,
    ast.Pow: _Dual.__pow__,
}


def _unsupported(node: ast.AST) -> ValueError:
    return ValueError(
        f"'function' may only use numbers, the variable, + - * / **, pi, e and "
        f"{', '.join(sorted(_FUNCTIONS))}; unsupported: {ast.unparse(node)!r}"
    )


def _function_name(node: ast.expr) -> str | None:
    """``sin`` for ``sin`` and ``math.sin``/``np.sin``/``numpy.sin``, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in _MODULES:
        return node.attr
    return None


def _evaluate(node: ast.expr, variable: str, at: _Dual) -> _Dual:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return _Dual(float(node.value))
    if isinstance(node, ast.Name):
        if node.id == variable:
            return at
        if node.id in _CONSTANTS:
            return _Dual(_CONSTANTS[node.id])
        raise ValueError(f"'function' uses an unknown name {node.id!r}; its only variable is {variable!r}")
    if isinstance(node, ast.Attribute) and _function_name(node) in _CONSTANTS:
        return _Dual(_CONSTANTS[node.attr])
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _evaluate(node.operand, variable, at)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_evaluate(node.left, variable, at), _evaluate(node.right, variable, at))
    if isinstance(node, ast.Call) and not node.keywords and len(node.args) == 1:
        name = _function_name(node.func)
        if name in _FUNCTIONS:
            return _FUNCTIONS[name](_evaluate(node.args[0], variable, at))
    raise _unsupported(node)


def _parse(source: str) -> tuple[str, ast.expr]:
    """(variable name, body) of ``lambda v: body``, or ("x", expression) for a bare expression."""
    try:
        tree = ast.parse(source.strip(), mode="eval").body
    except (SyntaxError, RecursionError, MemoryError) as exc:
        raise ValueError(f"'function' is not valid Python lambda source: {source!r}") from exc
    if not isinstance(tree, ast.Lambda):
        return "x", tree
    arguments = tree.args
    if (arguments.posonlyargs or arguments.kwonlyargs or arguments.vararg or arguments.kwarg
            or arguments.defaults or len(arguments.args) != 1):
        raise ValueError("'function' must be a lambda of exactly one variable, such as 'lambda x: x**2'")
    return arguments.args[0].arg, tree.body


def estimate_derivative(function: str, x: int) -> float:
    """The derivative at ``x`` of the function given as source text, e.g. 'lambda x: 3*x**2 + 1'.

    A bare expression in ``x`` (e.g. 'x**2') is accepted too. Returns a float.
    """
    variable, body = _parse(check.string(function, "function"))
    point = float(check.number(x, "x"))
    try:
        return _evaluate(body, variable, _Dual(point, 1.0)).slope
    except RecursionError as exc:
        raise ValueError("'function' is nested too deeply") from exc
