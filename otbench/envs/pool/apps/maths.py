"""More mathematics: trigonometry in degrees, fractions, the normal distribution and operations on lists."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable
from fractions import Fraction
from statistics import NormalDist
from typing import Any

from otbench.envs.bfcl.functions import _checks as check
from otbench.envs.pool.spec import ToolSpec, tool

_ANGLE = ("angle", "angle:deg", "the angle in degrees")
_RATIO = ("value", "number", "the value, from -1 to 1")
_NUMBERS = ("numbers", "numbers", "the list of numbers")


def _trig(operation: Callable[[float], float], degrees_in: bool) -> Callable[..., float]:
    def compute(**arguments: Any) -> float:
        (name, value), = arguments.items()
        number = check.number(value, name)
        try:
            result = operation(math.radians(number)) if degrees_in else math.degrees(operation(number))
        except ValueError:
            raise ValueError(f"'{name}' is outside the function's domain: {value!r}") from None
        return round(result, 6)

    return compute


def sine(angle: float) -> float:
    return _trig(math.sin, True)(angle=angle)


def cosine(angle: float) -> float:
    return _trig(math.cos, True)(angle=angle)


def tangent(angle: float) -> float:
    return _trig(math.tan, True)(angle=angle)


def arcsine(value: float) -> float:
    return _trig(math.asin, False)(value=value)


def arccosine(value: float) -> float:
    return _trig(math.acos, False)(value=value)


def arctangent(value: float) -> float:
    return _trig(math.atan, False)(value=value)


def hyperbolic_sine(value: float) -> float:
    return round(math.sinh(check.number(value, "value")), 6)


def hyperbolic_cosine(value: float) -> float:
    return round(math.cosh(check.number(value, "value")), 6)


def hyperbolic_tangent(value: float) -> float:
    return round(math.tanh(check.number(value, "value")), 6)


def law_of_cosines(a: float, b: float, angle: float) -> float:
    first, second = check.positive(a, "a"), check.positive(b, "b")
    gamma = math.radians(check.number(angle, "angle"))
    return round(math.sqrt(first**2 + second**2 - 2 * first * second * math.cos(gamma)), 4)


def _fraction(numerator: Any, denominator: Any) -> Fraction:
    bottom = check.integer(denominator, "denominator")
    if bottom == 0:
        raise ValueError("'denominator' must not be 0")
    return Fraction(check.integer(numerator, "numerator"), bottom)


def simplify_fraction(numerator: int, denominator: int) -> str:
    value = _fraction(numerator, denominator)
    return f"{value.numerator}/{value.denominator}"


def fraction_to_decimal(numerator: int, denominator: int) -> float:
    return round(float(_fraction(numerator, denominator)), 6)


def decimal_to_fraction(number: float, max_denominator: int) -> str:
    value = Fraction(str(check.number(number, "number"))).limit_denominator(check.integer(max_denominator,
                                                                                           "max_denominator"))
    return f"{value.numerator}/{value.denominator}"


def mixed_number(numerator: int, denominator: int) -> str:
    value = _fraction(numerator, denominator)
    whole, rest = divmod(abs(value.numerator), value.denominator)
    sign = "-" if value < 0 else ""
    if not rest:
        return f"{sign}{whole}"
    return f"{sign}{whole} {rest}/{value.denominator}" if whole else f"{sign}{rest}/{value.denominator}"


def _normal(mean: Any, sd: Any) -> NormalDist:
    return NormalDist(check.number(mean, "mean"), check.positive(sd, "sd"))


def normal_cdf(x: float, mean: float, sd: float) -> float:
    return round(_normal(mean, sd).cdf(check.number(x, "x")), 6)


def normal_pdf(x: float, mean: float, sd: float) -> float:
    return round(_normal(mean, sd).pdf(check.number(x, "x")), 6)


def normal_quantile(probability: float, mean: float, sd: float) -> float:
    share = check.number(probability, "probability")
    if not 0 < share < 1:
        raise ValueError(f"'probability' must be between 0 and 1, got {probability!r}")
    return round(_normal(mean, sd).inv_cdf(share), 6)


def normal_between(low: float, high: float, mean: float, sd: float) -> float:
    dist = _normal(mean, sd)
    return round(dist.cdf(check.number(high, "high")) - dist.cdf(check.number(low, "low")), 6)


def percentile_of_z(z: float) -> float:
    return round(100 * NormalDist().cdf(check.number(z, "z")), 4)


def _series(operation: Callable[[list[float]], Any]) -> Callable[[list[float]], Any]:
    def compute(numbers: list[float]) -> Any:
        return operation(check.number_list(numbers, "numbers", min_length=1))

    return compute


def count_of(numbers: list[float], value: float) -> int:
    return check.number_list(numbers, "numbers").count(check.number(value, "value"))


def rank_of(numbers: list[float], value: float) -> int:
    values, wanted = check.number_list(numbers, "numbers"), check.number(value, "value")
    if wanted not in values:
        raise ValueError(f"'value' {value!r} is not in 'numbers'")
    return 1 + sum(other > wanted for other in values)


def _with_member(rng: random.Random) -> dict[str, Any]:
    numbers = [rng.randint(1, 30) for _ in range(rng.randint(5, 8))]
    return {"numbers": numbers, "value": rng.choice(numbers)}


def _fraction_draw(rng: random.Random) -> dict[str, Any]:
    return {"numerator": rng.randint(2, 400), "denominator": rng.randint(2, 60)}


def _normal_draw(rng: random.Random) -> dict[str, Any]:
    mean, sd = rng.randint(-50, 200), rng.randint(1, 30)
    return {"x": mean + rng.randint(-3 * sd, 3 * sd), "mean": mean, "sd": sd}


def _between_draw(rng: random.Random) -> dict[str, Any]:
    mean, sd = rng.randint(-50, 200), rng.randint(1, 30)
    low = mean + rng.randint(-3 * sd, sd)
    return {"low": low, "high": low + rng.randint(1, 3 * sd), "mean": mean, "sd": sd}


_NORMAL = (("mean", "number", "the distribution's mean"), ("sd", "number", "its standard deviation"))

TOOLS: list[ToolSpec] = [
    tool("trigonometry", "sine", sine, "The sine of an angle in degrees.", [_ANGLE], "amount",
         "the sine of {angle}"),
    tool("trigonometry", "cosine", cosine, "The cosine of an angle in degrees.", [_ANGLE], "amount",
         "the cosine of {angle}"),
    tool("trigonometry", "tangent", tangent, "The tangent of an angle in degrees.", [_ANGLE], "amount",
         "the tangent of {angle}"),
    tool("trigonometry", "arcsine", arcsine, "The angle in degrees whose sine is the value.", [_RATIO], "angle:deg",
         "the angle in degrees whose sine is {value}", draw=lambda rng: {"value": round(rng.uniform(-1, 1), 3)}),
    tool("trigonometry", "arccosine", arccosine, "The angle in degrees whose cosine is the value.", [_RATIO],
         "angle:deg", "the angle in degrees whose cosine is {value}",
         draw=lambda rng: {"value": round(rng.uniform(-1, 1), 3)}),
    tool("trigonometry", "arctangent", arctangent, "The angle in degrees whose tangent is the value.",
         [("value", "number", "the value")], "angle:deg", "the angle in degrees whose tangent is {value}"),
    tool("trigonometry", "hyperbolic_sine", hyperbolic_sine, "The hyperbolic sine of a number.",
         [("value", "number", "the number")], "amount", "the hyperbolic sine of {value}",
         draw=lambda rng: {"value": round(rng.uniform(-5, 5), 2)}),
    tool("trigonometry", "hyperbolic_cosine", hyperbolic_cosine, "The hyperbolic cosine of a number.",
         [("value", "number", "the number")], "amount", "the hyperbolic cosine of {value}",
         draw=lambda rng: {"value": round(rng.uniform(-5, 5), 2)}),
    tool("trigonometry", "hyperbolic_tangent", hyperbolic_tangent, "The hyperbolic tangent of a number.",
         [("value", "number", "the number")], "amount", "the hyperbolic tangent of {value}",
         draw=lambda rng: {"value": round(rng.uniform(-3, 3), 2)}),
    tool("trigonometry", "law_of_cosines", law_of_cosines, "The third side of a triangle from two sides and the "
         "angle between them in degrees.", [("a", "number", "one side"), ("b", "number", "another side"),
                                            ("angle", "angle:deg", "the angle between them in degrees")], "amount",
         "the side opposite a {angle} angle between sides {a} and {b}",
         draw=lambda rng: {"a": rng.randint(1, 50), "b": rng.randint(1, 50), "angle": rng.randint(10, 170)}),
    tool("fractions", "simplify_fraction", simplify_fraction, "A fraction in lowest terms, as 'p/q'.",
         [("numerator", "integer", "the numerator"), ("denominator", "integer", "the denominator")], "label",
         "the fraction {numerator}/{denominator} in lowest terms", draw=_fraction_draw),
    tool("fractions", "fraction_to_decimal", fraction_to_decimal, "A fraction as a decimal number, rounded to 6 "
         "decimals.", [("numerator", "integer", "the numerator"), ("denominator", "integer", "the denominator")],
         "amount", "the decimal value of {numerator}/{denominator}", draw=_fraction_draw),
    tool("fractions", "decimal_to_fraction", decimal_to_fraction, "The fraction closest to a decimal number with a "
         "denominator no larger than a limit, as 'p/q'.", [("number", "number", "the decimal number"),
                                                          ("max_denominator", "integer", "the largest denominator")],
         "label", "the fraction nearest to {number} with a denominator of at most {max_denominator}",
         draw=lambda rng: {"number": round(rng.uniform(0, 10), 4), "max_denominator": rng.choice((10, 50, 100, 1000))}),
    tool("fractions", "mixed_number", mixed_number, "A fraction as a mixed number ('whole p/q').",
         [("numerator", "integer", "the numerator"), ("denominator", "integer", "the denominator")], "label",
         "{numerator}/{denominator} as a mixed number", draw=_fraction_draw),
    tool("probability", "normal_cdf", normal_cdf, "The probability that a normal variable is at most x.",
         [("x", "number", "the value"), *_NORMAL], "amount",
         "the probability that a normal variable with mean {mean} and standard deviation {sd} is at most {x}",
         draw=_normal_draw),
    tool("probability", "normal_pdf", normal_pdf, "The density of a normal distribution at x.",
         [("x", "number", "the value"), *_NORMAL], "amount",
         "the density at {x} of a normal distribution with mean {mean} and standard deviation {sd}",
         draw=_normal_draw),
    tool("probability", "normal_quantile", normal_quantile, "The value below which a normal variable falls with a "
         "given probability.", [("probability", "number", "the probability, between 0 and 1"), *_NORMAL], "amount",
         "the value a normal variable with mean {mean} and standard deviation {sd} stays below with probability "
         "{probability}", draw=lambda rng: {"probability": round(rng.uniform(0.01, 0.99), 2),
                                            "mean": rng.randint(-50, 200), "sd": rng.randint(1, 30)}),
    tool("probability", "normal_between", normal_between, "The probability that a normal variable lies between low "
         "and high.", [("low", "number", "the lower bound"), ("high", "number", "the upper bound"), *_NORMAL],
         "amount", "the probability that a normal variable with mean {mean} and standard deviation {sd} lies between "
         "{low} and {high}", draw=_between_draw),
    tool("probability", "percentile_of_z", percentile_of_z, "The percentile (0 to 100) of a standard normal z-score.",
         [("z", "number", "the z-score")], "amount", "the percentile of a z-score of {z}",
         draw=lambda rng: {"z": round(rng.uniform(-3, 3), 2)}),
    tool("list_tools", "sort_descending", _series(lambda v: sorted(v, reverse=True)), "The numbers sorted from "
         "largest to smallest.", [_NUMBERS], "series", "{numbers} sorted from largest to smallest"),
    tool("list_tools", "unique_values", _series(lambda v: list(dict.fromkeys(v))), "The numbers without repeats, in "
         "order of first appearance.", [_NUMBERS], "series", "{numbers} without repeats"),
    tool("list_tools", "running_total", _series(lambda v: [math.fsum(v[: i + 1]) for i in range(len(v))]),
         "The running totals of the numbers.", [_NUMBERS], "series", "the running totals of {numbers}"),
    tool("list_tools", "differences", _series(lambda v: [b - a for a, b in itertools.pairwise(v)]),
         "The differences between consecutive numbers.", [_NUMBERS], "series",
         "the differences between consecutive values of {numbers}"),
    tool("list_tools", "top_three", _series(lambda v: sorted(v, reverse=True)[:3]), "The three largest numbers, "
         "largest first.", [_NUMBERS], "series", "the three largest of {numbers}"),
    tool("list_tools", "even_count", _series(lambda v: sum(x % 2 == 0 for x in v)), "How many of the numbers are "
         "even.", [_NUMBERS], "count", "how many of {numbers} are even"),
    tool("list_tools", "odd_sum", _series(lambda v: math.fsum(x for x in v if x % 2 == 1)), "The sum of the odd "
         "numbers.", [_NUMBERS], "amount", "the sum of the odd values among {numbers}"),
    tool("list_tools", "index_of_max", _series(lambda v: v.index(max(v))), "The position (from 0) of the largest "
         "number (the first if tied).", [_NUMBERS], "count", "the position counting from 0 of the largest of "
         "{numbers}"),
    tool("list_tools", "index_of_min", _series(lambda v: v.index(min(v))), "The position (from 0) of the smallest "
         "number (the first if tied).", [_NUMBERS], "count", "the position counting from 0 of the smallest of "
         "{numbers}"),
    tool("list_tools", "count_of", count_of, "How many times a value occurs among the numbers.",
         [_NUMBERS, ("value", "number", "the value to count")], "count", "how many times {value} occurs in {numbers}",
         draw=_with_member),
    tool("list_tools", "rank_of", rank_of, "The rank of a value among the numbers (1 for the largest).",
         [_NUMBERS, ("value", "number", "a value from the list")], "count", "the rank of {value} among {numbers} "
         "(1 for the largest)", draw=_with_member),
]
