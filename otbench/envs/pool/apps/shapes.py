"""Geometry: plane figures, solids and points in the plane; lengths in any one unit, angles in degrees."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

from otbench.envs.bfcl.functions import _checks as check
from otbench.envs.pool.spec import ToolSpec, tool

_R = ("radius", "number", "the radius")
_SIDE = ("side", "number", "the side length")
_HEIGHT = ("height", "number", "the height")


def _measure(*names: str) -> Callable[[Callable[..., float]], Callable[..., float]]:
    """A formula over positive lengths, each checked under its parameter name, rounded to 4 decimals."""

    def wrap(formula: Callable[..., float]) -> Callable[..., float]:
        def compute(*values: Any, **named: Any) -> float:
            if len(values) > len(names):
                raise TypeError(f"takes {len(names)} arguments but {len(values)} were given")
            arguments = dict(zip(names, values, strict=False))
            for name, value in named.items():
                if name not in names:
                    raise TypeError(f"got an unexpected keyword argument '{name}'")
                if name in arguments:
                    raise TypeError(f"got multiple values for argument '{name}'")
                arguments[name] = value
            missing = [name for name in names if name not in arguments]
            if missing:
                raise TypeError(f"missing required argument: '{missing[0]}'")
            return round(formula(*(check.positive(arguments[name], name) for name in names)), 4)

        compute.__signature__ = _signature(names)  # type: ignore[attr-defined]
        return compute

    return wrap


def _signature(names: tuple[str, ...]) -> Any:
    import inspect

    return inspect.Signature([inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=float)
                              for name in names])


def _heron(a: float, b: float, c: float) -> float:
    s = (a + b + c) / 2
    area_squared = s * (s - a) * (s - b) * (s - c)
    if area_squared <= 0:
        raise ValueError("'a', 'b' and 'c' cannot be the sides of a triangle")
    return math.sqrt(area_squared)


def _polygon_area(sides: float, side: float) -> float:
    count = int(sides)
    if count != sides or count < 3:
        raise ValueError(f"'sides' must be a whole number of at least 3, got {sides!r}")
    return count * side**2 / (4 * math.tan(math.pi / count))


def _interior_angle(sides: float) -> float:
    count = int(sides)
    if count != sides or count < 3:
        raise ValueError(f"'sides' must be a whole number of at least 3, got {sides!r}")
    return (count - 2) * 180 / count


def _ring(outer: float, inner: float) -> float:
    if inner >= outer:
        raise ValueError("'inner' must be smaller than 'outer'")
    return math.pi * (outer**2 - inner**2)


def _cone_side(radius: float, height: float) -> float:
    return math.pi * radius * math.hypot(radius, height)


def _torus(major: float, minor: float) -> float:
    return 2 * math.pi**2 * major * minor**2


def line_slope(x1: float, y1: float, x2: float, y2: float) -> float:
    run = check.number(x2, "x2") - check.number(x1, "x1")
    if run == 0:
        raise ValueError("'x1' and 'x2' must differ: a vertical line has no slope")
    return round((check.number(y2, "y2") - check.number(y1, "y1")) / run, 6)


def line_intercept(x1: float, y1: float, x2: float, y2: float) -> float:
    slope = line_slope(x1, y1, x2, y2)
    return round(check.number(y1, "y1") - slope * check.number(x1, "x1"), 6)


def polar_angle(x: float, y: float) -> float:
    return round(math.degrees(math.atan2(check.number(y, "y"), check.number(x, "x"))) % 360, 4)


def polar_to_x(radius: float, angle: float) -> float:
    return round(check.number(radius, "radius") * math.cos(math.radians(check.number(angle, "angle"))), 6)


def polar_to_y(radius: float, angle: float) -> float:
    return round(check.number(radius, "radius") * math.sin(math.radians(check.number(angle, "angle"))), 6)


def quadrant(x: float, y: float) -> int:
    across, up = check.number(x, "x"), check.number(y, "y")
    if across == 0 or up == 0:
        raise ValueError("a point on an axis lies in no quadrant")
    return (1 if up > 0 else 4) if across > 0 else (2 if up > 0 else 3)


def triangle_area_from_points(x1: float, y1: float, x2: float, y2: float, x3: float, y3: float) -> float:
    values = [check.number(v, n) for v, n in ((x1, "x1"), (y1, "y1"), (x2, "x2"), (y2, "y2"), (x3, "x3"), (y3, "y3"))]
    a, b, c, d, e, f = values
    return round(abs(a * (d - f) + c * (f - b) + e * (b - d)) / 2, 4)


def _triangle(rng: random.Random) -> dict[str, Any]:
    a, b = rng.randint(3, 40), rng.randint(3, 40)
    return {"a": a, "b": b, "c": rng.randint(abs(a - b) + 1, a + b - 1)}


def _polygon(rng: random.Random) -> dict[str, Any]:
    return {"sides": rng.randint(3, 12), "side": rng.randint(1, 50)}


def _sides(rng: random.Random) -> dict[str, Any]:
    return {"sides": rng.randint(3, 20)}


def _ring_draw(rng: random.Random) -> dict[str, Any]:
    outer = rng.randint(2, 100)
    return {"outer": outer, "inner": rng.randint(1, outer - 1)}


def _torus_draw(rng: random.Random) -> dict[str, Any]:
    major = rng.randint(2, 50)
    return {"major": major, "minor": rng.randint(1, major - 1)}


def _two_points(rng: random.Random) -> dict[str, Any]:
    x1, x2 = rng.sample(range(-50, 51), 2)
    return {"x1": x1, "y1": rng.randint(-50, 50), "x2": x2, "y2": rng.randint(-50, 50)}


def _point(rng: random.Random) -> dict[str, Any]:
    return {"x": rng.choice([v for v in range(-50, 51) if v]), "y": rng.choice([v for v in range(-50, 51) if v])}


def _polar(rng: random.Random) -> dict[str, Any]:
    return {"radius": rng.randint(1, 100), "angle": rng.randint(0, 359)}


def _three_points(rng: random.Random) -> dict[str, Any]:
    return {name: rng.randint(-30, 30) for name in ("x1", "y1", "x2", "y2", "x3", "y3")}


def _lengths(*names: str) -> Callable[[random.Random], dict[str, Any]]:
    def draw(rng: random.Random) -> dict[str, Any]:
        return {name: rng.randint(1, 100) for name in names}

    return draw


_PLANE = (
    ("circle_circumference", ("radius",), lambda r: 2 * math.pi * r, "The circumference of a circle.",
     "the circumference of a circle of radius {radius}"),
    ("circle_area_from_diameter", ("diameter",), lambda d: math.pi * d * d / 4, ("The area of a circle of a given "
     "diameter."), "the area of a circle of diameter {diameter}"),
    ("circle_radius_from_area", ("area",), lambda a: math.sqrt(a / math.pi), ("The radius of a circle of a given "
     "area."), "the radius of a circle whose area is {area}"),
    ("square_diagonal", ("side",), lambda s: s * math.sqrt(2), "The diagonal of a square.",
     "the diagonal of a square of side {side}"),
    ("rectangle_perimeter", ("width", "height"), lambda w, h: 2 * (w + h), "The perimeter of a rectangle.",
     "the perimeter of a {width} by {height} rectangle"),
    ("hypotenuse", ("a", "b"), math.hypot, ("The hypotenuse of a right triangle with legs a and b (also a "
     "rectangle's diagonal)."), "the hypotenuse of a right triangle with legs {a} and {b}"),
    ("triangle_area_from_sides", ("a", "b", "c"), _heron, ("The area of a triangle with sides a, b and c (Heron's "
     "formula)."), "the area of a triangle with sides {a}, {b} and {c}"),
    ("triangle_perimeter", ("a", "b", "c"), lambda a, b, c: a + b + c, ("The perimeter of a triangle with sides a, b "
     "and c."), "the perimeter of a triangle with sides {a}, {b} and {c}"),
    ("equilateral_triangle_area", ("side",), lambda s: math.sqrt(3) / 4 * s * s, ("The area of an equilateral "
     "triangle."), "the area of an equilateral triangle of side {side}"),
    ("regular_polygon_area", ("sides", "side"), _polygon_area, ("The area of a regular polygon with a number of sides "
     "of a given length."), "the area of a regular polygon with {sides} sides of length {side}"),
    ("interior_angle", ("sides",), _interior_angle, ("The interior angle in degrees of a regular polygon with a "
     "number of sides."), "the interior angle in degrees of a regular polygon with {sides} sides"),
    ("ellipse_area", ("semi_major", "semi_minor"), lambda a, b: math.pi * a * b, ("The area of an ellipse with given "
     "semi-axes."), "the area of an ellipse with semi-axes {semi_major} and {semi_minor}"),
    ("ellipse_perimeter", ("semi_major", "semi_minor"), lambda a, b: math.pi * (3 * (a + b) - math.sqrt(
        (3 * a + b) * (a + 3 * b))), "The perimeter of an ellipse (Ramanujan's approximation).",
     "the perimeter of an ellipse with semi-axes {semi_major} and {semi_minor}"),
    ("trapezoid_area", ("base_a", "base_b", "height"), lambda a, b, h: (a + b) / 2 * h, ("The area of a trapezoid "
     "with parallel sides base_a and base_b."), ("the area of a trapezoid with parallel sides {base_a} and {base_b} "
     "and height {height}")),
    ("sector_area", ("radius", "angle"), lambda r, t: math.pi * r * r * t / 360, ("The area of a circular sector "
     "with a central angle in degrees."), "the area of a sector of radius {radius} with a {angle}-degree angle"),
    ("arc_length", ("radius", "angle"), lambda r, t: math.pi * r * t / 180, ("The length of a circular arc with a "
     "central angle in degrees."), "the length of an arc of radius {radius} spanning {angle} degrees"),
    ("ring_area", ("outer", "inner"), _ring, "The area of a ring (annulus) between two concentric circles.",
     "the area of a ring between circles of radius {outer} and {inner}"),
)
_SOLIDS = (
    ("sphere_volume", ("radius",), lambda r: 4 / 3 * math.pi * r**3, "The volume of a sphere.",
     "the volume of a sphere of radius {radius}"),
    ("sphere_surface", ("radius",), lambda r: 4 * math.pi * r * r, "The surface area of a sphere.",
     "the surface area of a sphere of radius {radius}"),
    ("hemisphere_volume", ("radius",), lambda r: 2 / 3 * math.pi * r**3, "The volume of a hemisphere.",
     "the volume of a hemisphere of radius {radius}"),
    ("sphere_radius_from_volume", ("volume",), lambda v: (3 * v / (4 * math.pi)) ** (1 / 3), ("The radius of a "
     "sphere of a given volume."), "the radius of a sphere whose volume is {volume}"),
    ("cube_surface", ("side",), lambda s: 6 * s * s, "The surface area of a cube.",
     "the surface area of a cube of side {side}"),
    ("cube_diagonal", ("side",), lambda s: s * math.sqrt(3), "The space diagonal of a cube.",
     "the space diagonal of a cube of side {side}"),
    ("cuboid_volume", ("length", "width", "height"), lambda a, b, c: a * b * c, "The volume of a rectangular box.",
     "the volume of a box of {length} by {width} by {height}"),
    ("cuboid_surface", ("length", "width", "height"), lambda a, b, c: 2 * (a * b + a * c + b * c), ("The surface "
     "area of a rectangular box."), "the surface area of a box of {length} by {width} by {height}"),
    ("cylinder_volume", ("radius", "height"), lambda r, h: math.pi * r * r * h, "The volume of a cylinder.",
     "the volume of a cylinder of radius {radius} and height {height}"),
    ("cylinder_surface", ("radius", "height"), lambda r, h: 2 * math.pi * r * (r + h), ("The total surface area of a "
     "closed cylinder."), "the surface area of a closed cylinder of radius {radius} and height {height}"),
    ("cone_volume", ("radius", "height"), lambda r, h: math.pi * r * r * h / 3, "The volume of a cone.",
     "the volume of a cone of radius {radius} and height {height}"),
    ("cone_lateral_surface", ("radius", "height"), _cone_side, "The lateral (side) surface area of a cone.",
     "the lateral surface area of a cone of radius {radius} and height {height}"),
    ("square_pyramid_volume", ("side", "height"), lambda s, h: s * s * h / 3, ("The volume of a pyramid with a "
     "square base."), "the volume of a square pyramid with base side {side} and height {height}"),
    ("torus_volume", ("major", "minor"), _torus, ("The volume of a torus with major radius (centre to tube centre) "
     "and minor radius (of the tube)."), "the volume of a torus with radii {major} and {minor}"),
)
_DRAWS = {"triangle_area_from_sides": _triangle, "triangle_perimeter": _triangle, "regular_polygon_area": _polygon,
          "interior_angle": _sides, "ring_area": _ring_draw, "torus_volume": _torus_draw}
_MEANINGS = {"radius": "the radius", "diameter": "the diameter", "area": "the area", "side": "the side length",
             "width": "the width", "height": "the height", "a": "a side length", "b": "another side length",
             "c": "the third side length", "sides": "the number of sides", "semi_major": "the semi-major axis",
             "semi_minor": "the semi-minor axis", "base_a": "one parallel side", "base_b": "the other parallel side",
             "angle": "the central angle in degrees", "outer": "the outer radius", "inner": "the inner radius",
             "volume": "the volume", "length": "the length", "major": "the major radius", "minor": "the minor radius"}


def _figure(app: str, name: str, names: tuple[str, ...], formula: Callable[..., float], description: str,
            phrase: str) -> ToolSpec:
    kind = "small_integer" if names == ("sides",) or "sides" in names else "number"
    return tool(app, name, _measure(*names)(formula), f"{description} Rounded to 4 decimals.",
                [(n, kind if n == "sides" else "number", _MEANINGS[n]) for n in names], "amount", phrase,
                draw=_DRAWS.get(name) or _lengths(*names))


TOOLS: list[ToolSpec] = [
    *(_figure("geometry_2d", *row) for row in _PLANE),
    *(_figure("geometry_3d", *row) for row in _SOLIDS),
    tool("plane_coordinates", "line_slope", line_slope, "The slope of the line through two points.",
         [("x1", "number", "the first point's x"), ("y1", "number", "the first point's y"),
          ("x2", "number", "the second point's x"), ("y2", "number", "the second point's y")], "amount",
         "the slope of the line through ({x1}, {y1}) and ({x2}, {y2})", draw=_two_points),
    tool("plane_coordinates", "line_intercept", line_intercept, "Where the line through two points crosses the y "
         "axis.", [("x1", "number", "the first point's x"), ("y1", "number", "the first point's y"),
                   ("x2", "number", "the second point's x"), ("y2", "number", "the second point's y")], "amount",
         "the y-intercept of the line through ({x1}, {y1}) and ({x2}, {y2})", draw=_two_points),
    tool("plane_coordinates", "polar_angle", polar_angle, "The angle in degrees (0 to 360, anticlockwise from the x "
         "axis) of a point seen from the origin.", [("x", "number", "the x coordinate"),
                                                   ("y", "number", "the y coordinate")], "angle:deg",
         "the polar angle in degrees of the point ({x}, {y})", draw=_point),
    tool("plane_coordinates", "polar_to_x", polar_to_x, "The x coordinate of a point given in polar coordinates "
         "(angle in degrees).", [("radius", "number", "the distance from the origin"),
                                 ("angle", "number", "the angle in degrees")], "amount",
         "the x coordinate of the point at distance {radius} and angle {angle} degrees", draw=_polar),
    tool("plane_coordinates", "polar_to_y", polar_to_y, "The y coordinate of a point given in polar coordinates "
         "(angle in degrees).", [("radius", "number", "the distance from the origin"),
                                 ("angle", "number", "the angle in degrees")], "amount",
         "the y coordinate of the point at distance {radius} and angle {angle} degrees", draw=_polar),
    tool("plane_coordinates", "quadrant", quadrant, "The quadrant (1 to 4) a point off the axes lies in.",
         [("x", "number", "the x coordinate"), ("y", "number", "the y coordinate")], "count",
         "the quadrant of the point ({x}, {y})", draw=_point),
    tool("plane_coordinates", "triangle_area_from_points", triangle_area_from_points, "The area of the triangle with "
         "three given corners.", [(f"{axis}{i}", "number", f"corner {i}'s {axis}") for i in (1, 2, 3)
                                  for axis in ("x", "y")], "amount",
         "the area of the triangle with corners ({x1}, {y1}), ({x2}, {y2}) and ({x3}, {y3})", draw=_three_points),
]
