"""Unit converters, one tool per ordered pair of units of a dimension, one app per dimension.

Two pairs whose conversion is the same arithmetic (kilometres to metres and metres to millimetres both multiply
by 1000) would be one function under two names, so only the first of them is a tool. The ten pairs the
``conversions`` toolkit already has are its own functions (:mod:`otbench.envs.toolkits.conversions`), with its
docstrings as their true docs.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from otbench.envs.bfcl.functions import _checks as check
from otbench.envs.pool.measures import DIMENSIONS, Dimension, Unit
from otbench.envs.pool.spec import ToolSpec, tool
from otbench.envs.toolkits import conversions

_BORROWED: dict[tuple[str, str, str], Callable[[float], float]] = {
    ("temperature", "c", "f"): conversions.celsius_to_fahrenheit,
    ("temperature", "f", "c"): conversions.fahrenheit_to_celsius,
    ("length", "km", "mi"): conversions.km_to_miles, ("length", "mi", "km"): conversions.miles_to_km,
    ("mass", "kg", "lb"): conversions.kg_to_pounds, ("mass", "lb", "kg"): conversions.pounds_to_kg,
    ("volume", "l", "us_gal"): conversions.liters_to_gallons, ("volume", "us_gal", "l"): conversions.gallons_to_liters,
    ("length", "m", "ft"): conversions.meters_to_feet, ("length", "ft", "m"): conversions.feet_to_meters,
}


def significant(value: float, figures: int = 6) -> float:
    """``value`` to ``figures`` significant figures: a tiny factor (bits to gigabytes) keeps its digits."""
    return float(f"{value:.{figures}g}")


def _converter(source: Unit, target: Unit) -> Callable[[float], float]:
    def convert(value: float) -> float:
        number = check.number(value, "value")
        if (source.reciprocal or target.reciprocal) and number == 0:
            raise ValueError("'value' must not be 0 for this conversion")
        return significant(target.from_base(source.to_base(number)))

    return convert


def _arithmetic(source: Unit, target: Unit) -> tuple[Any, ...]:
    """What the conversion computes, independent of its units: pairs with equal keys are the same function."""
    if source.reciprocal or target.reciprocal:  # k / value either way: the pair's two directions are one function
        return "reciprocal", f"{source.factor / target.factor if source.reciprocal else target.factor / source.factor:.8g}"
    scale = source.factor / target.factor
    shift = (source.offset - target.offset) / target.factor
    return f"{scale:.8g}", f"{shift:.8g}"


def _tools(dimension: Dimension, seen: set[tuple[Any, ...]]) -> list[ToolSpec]:
    made = []
    for source in dimension.units:
        for target in dimension.units:
            key = _arithmetic(source, target)
            if source is target or key in seen:
                continue
            seen.add(key)
            borrowed = _BORROWED.get((dimension.name, source.code, target.code))
            function = borrowed or _converter(source, target)
            description = (inspect.getdoc(borrowed) or "" if borrowed else
                           f"Converts {dimension.name.replace('_', ' ')} from {source.plural} to {target.plural}, "
                           "to 6 significant figures.")
            made.append(tool(f"{dimension.name}_units", f"{dimension.name}_{source.code}_to_{target.code}", function,
                             description, [("value", f"{dimension.name}:{source.code}",
                                            f"the {dimension.name.replace('_', ' ')} in {source.plural}")],
                             f"{dimension.name}:{target.code}", f"what {{value}} is in {target.plural}",
                             refers=f"{{value}} expressed in {target.plural}"))
    return made


def _all_tools() -> list[ToolSpec]:
    seen: set[tuple[Any, ...]] = set()
    return [spec for dimension in DIMENSIONS for spec in _tools(dimension, seen)]


TOOLS: list[ToolSpec] = _all_tools()
