"""Great-circle geometry on a spherical Earth (mean radius 6,371 km), shared by the city and airport tools."""

from __future__ import annotations

import math
from typing import Any

EARTH_RADIUS_KM = 6371.0
COMPASS = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")


def distance_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """The haversine distance between two points given in degrees."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(a)))


def nearest(lat: float, lon: float, codes: tuple[str, ...], latitudes: Any, longitudes: Any) -> str:
    """The code of the point (latitudes and longitudes in radians, numpy arrays) nearest to a point in degrees; the
    first code on a tie."""
    import numpy as np

    p, ell = math.radians(lat), math.radians(lon)
    a = np.sin((latitudes - p) / 2) ** 2 + math.cos(p) * np.cos(latitudes) * np.sin((longitudes - ell) / 2) ** 2
    return codes[int(np.argmin(a))]


def bearing_deg(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """The initial bearing from the first point to the second, degrees clockwise from north in [0, 360)."""
    p1, p2, dl = math.radians(lat1), math.radians(lat2), math.radians(lon2 - lon1)
    y = math.sin(dl) * math.cos(p2)
    x = math.cos(p1) * math.sin(p2) - math.sin(p1) * math.cos(p2) * math.cos(dl)
    return math.degrees(math.atan2(y, x)) % 360


def compass_point(bearing: float) -> str:
    """The eight-point compass direction of a bearing in degrees."""
    return COMPASS[int(((bearing % 360) + 22.5) // 45) % 8]


def midpoint(lat1: float, lon1: float, lat2: float, lon2: float) -> tuple[float, float]:
    """The point halfway along the great circle between two points, in degrees."""
    p1, p2, l1 = math.radians(lat1), math.radians(lat2), math.radians(lon1)
    dl = math.radians(lon2 - lon1)
    bx, by = math.cos(p2) * math.cos(dl), math.cos(p2) * math.sin(dl)
    lat = math.atan2(math.sin(p1) + math.sin(p2), math.sqrt((math.cos(p1) + bx) ** 2 + by**2))
    lon = l1 + math.atan2(by, math.cos(p1) + bx)
    return math.degrees(lat), (math.degrees(lon) + 540) % 360 - 180
