"""Descriptive statistics and simple linear regression."""

from __future__ import annotations

import math

from . import _checks as check


def calculate_mean(numbers: list[float]) -> float:
    """Arithmetic mean of a non-empty list of numbers."""
    values = check.number_list(numbers, "numbers", min_length=1)
    return math.fsum(values) / len(values)


def calculate_standard_deviation(numbers: list[float]) -> float:
    """Population standard deviation (divides by n, not n - 1) of a non-empty list of numbers."""
    values = check.number_list(numbers, "numbers", min_length=1)
    mean = math.fsum(values) / len(values)
    return math.sqrt(math.fsum((value - mean) ** 2 for value in values) / len(values))


def _points(x: list[int], y: list[int]) -> tuple[list[float], list[float]]:
    xs = check.number_list(x, "x", min_length=2)
    ys = check.number_list(y, "y", min_length=2)
    check.same_length(xs, "x", ys, "y")
    return xs, ys


def _slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope; ValueError when all x are equal (a vertical line has no slope)."""
    mean_x, mean_y = math.fsum(xs) / len(xs), math.fsum(ys) / len(ys)
    spread = math.fsum((a - mean_x) ** 2 for a in xs)
    if spread == 0:
        raise ValueError("'x' must contain at least two different values to fit a line")
    return math.fsum((a - mean_x) * (b - mean_y) for a, b in zip(xs, ys)) / spread


def calculate_slope(x: list[int], y: list[int]) -> float:
    """Slope of the least-squares regression line through the points (x[i], y[i])."""
    return _slope(*_points(x, y))


def calculate_intercept(x: list[int], y: list[int], slope: int) -> float:
    """y-intercept of the line with the given slope through the points' centroid: mean(y) - slope*mean(x)."""
    xs = check.number_list(x, "x", min_length=1)
    ys = check.number_list(y, "y", min_length=1)
    check.same_length(xs, "x", ys, "y")
    gradient = check.number(slope, "slope")
    return math.fsum(ys) / len(ys) - gradient * math.fsum(xs) / len(xs)


def predict_value(slope: int, intercept: int, x: int) -> int | float:
    """The line's value at ``x``: slope * x + intercept."""
    return check.number(slope, "slope") * check.number(x, "x") + check.number(intercept, "intercept")


def linear_regression(x: list[int], y: list[int], point: int) -> float:
    """Fits a least-squares line to the points (x[i], y[i]) and returns its value at ``point``."""
    xs, ys = _points(x, y)
    at = check.number(point, "point")
    gradient = _slope(xs, ys)
    intercept = math.fsum(ys) / len(ys) - gradient * math.fsum(xs) / len(xs)
    return gradient * at + intercept
