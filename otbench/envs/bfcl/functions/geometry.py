"""Plane geometry: areas, distances, polygons and collinear points."""

from __future__ import annotations

import math
from fractions import Fraction

from . import _checks as check

Point = tuple[int | float, int | float]


def geometry_area_circle(radius: int) -> float:
    """Area of a circle: pi * radius**2 (in the square of the radius' unit)."""
    r = check.number(radius, "radius")
    if r < 0:
        raise ValueError(f"'radius' must be non-negative, got {r!r}")
    return math.pi * r * r


def calculate_triangle_area(base: int, height: int) -> float:
    """Area of a triangle: base * height / 2."""
    b, h = check.number(base, "base"), check.number(height, "height")
    if b < 0 or h < 0:
        raise ValueError(f"'base' and 'height' must be non-negative, got {b!r} and {h!r}")
    return 0.5 * b * h


def get_distance(pointA: tuple[float, float], pointB: tuple[float, float]) -> float:
    """Euclidean distance between two 2D points given as [x, y]."""
    return math.dist(check.point(pointA, "pointA"), check.point(pointB, "pointB"))


def _signed_area(vertices: list[Point]) -> float:
    """Shoelace formula: positive for counter-clockwise vertex order."""
    count = len(vertices)
    return 0.5 * math.fsum(
        vertices[i][0] * vertices[(i + 1) % count][1] - vertices[(i + 1) % count][0] * vertices[i][1]
        for i in range(count)
    )


def _polygon_vertices(vertices: list[list[int]]) -> list[Point]:
    corners = check.points(vertices, "vertices")
    if len(corners) < 3:
        raise ValueError(f"'vertices' must have at least 3 points, got {len(corners)}")
    return corners


def polygon_area(vertices: list[list[int]]) -> float:
    """Area of the polygon with the given vertices in order, by the shoelace formula."""
    return abs(_signed_area(_polygon_vertices(vertices)))


def _orientation(p: Point, q: Point, r: Point) -> float:
    return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])


def _on_segment(p: Point, q: Point, r: Point) -> bool:
    """Whether r, known to be collinear with p-q, lies within the segment's bounding box."""
    return min(p[0], q[0]) <= r[0] <= max(p[0], q[0]) and min(p[1], q[1]) <= r[1] <= max(p[1], q[1])


def _segments_touch(a: Point, b: Point, c: Point, d: Point) -> bool:
    d1, d2 = _orientation(c, d, a), _orientation(c, d, b)
    d3, d4 = _orientation(a, b, c), _orientation(a, b, d)
    if ((d1 > 0) != (d2 > 0)) and ((d3 > 0) != (d4 > 0)) and 0 not in (d1, d2, d3, d4):
        return True
    return (
        (d1 == 0 and _on_segment(c, d, a)) or (d2 == 0 and _on_segment(c, d, b))
        or (d3 == 0 and _on_segment(a, b, c)) or (d4 == 0 and _on_segment(a, b, d))
    )


def validate_polygon(vertices: list[list[float]]) -> bool:
    """Whether the vertices, in order, form a valid simple polygon.

    Valid means: at least 3 vertices, non-zero area, and no two non-adjacent edges touching or
    crossing (so no self-intersection and no repeated vertex). Malformed input (not a list of
    [x, y] pairs) raises instead of returning False.
    """
    corners = check.points(vertices, "vertices")
    count = len(corners)
    if count < 3 or _signed_area(corners) == 0:
        return False
    if len(set(corners)) != count:
        return False
    edges = [(corners[i], corners[(i + 1) % count]) for i in range(count)]
    for i in range(count):
        for j in range(i + 1, count):
            adjacent = j == i + 1 or (i == 0 and j == count - 1)
            if not adjacent and _segments_touch(*edges[i], *edges[j]):
                return False
    return True


def maxPoints(points: list[list[int]]) -> int:  # BFCL's function name
    """The largest number of the given points lying on one straight line (duplicates count)."""
    corners = check.points(points, "points")
    best = 0
    for i, (x1, y1) in enumerate(corners):
        duplicates = 0
        slopes: dict[object, int] = {}
        for x2, y2 in corners[i + 1:]:
            if (x1, y1) == (x2, y2):
                duplicates += 1
                continue
            slope = "vertical" if x1 == x2 else Fraction(y2 - y1) / Fraction(x2 - x1)
            slopes[slope] = slopes.get(slope, 0) + 1
        best = max(best, 1 + duplicates + max(slopes.values(), default=0))
    return best


def convert_coordinates(coordinates: list[tuple[float, float]]) -> list[list[float]]:
    """Turns a list of (x, y) tuples into a list of [x, y] lists."""
    return [list(pair) for pair in check.points(coordinates, "coordinates")]
