"""Airports (airportsdata, by IATA code): what each is, its codes, and routes between two of them."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable
from typing import Any
from zoneinfo import ZoneInfo

from otbench.envs.bfcl.functions import _checks as check
from otbench.envs.pool import data, geo
from otbench.envs.pool.kinds import draw_value, major_airports
from otbench.envs.pool.spec import ToolSpec, tool

_AIRPORT = ("airport", "iata", "the airport's three-letter IATA code, such as CDG")
_ROUTE = (("origin", "iata", "the IATA code of the airport of departure"),
          ("destination", "iata", "the IATA code of the airport of arrival"))


def _route(rng: random.Random) -> dict[str, Any]:
    origin, destination = rng.sample(major_airports(), 2)
    return {"origin": origin, "destination": destination}


def _field(getter: Callable[[data.Record], Any]) -> Callable[[str], Any]:
    def fact(airport: str) -> Any:
        value = getter(data.airport(airport))
        if value in ("", None):
            raise LookupError(f"'airport': no such fact is recorded for {airport!r}")
        return value

    return fact


def icao_of(airport: str) -> str:
    return str(_field(lambda record: record["icao"])(airport))


def iata_of(icao: str) -> str:
    return str(data.airport_by_icao(icao)["iata"])


def country_airport_count(country: str) -> int:
    return len(data.airports_by_country().get(data.country(country)["iso"], ()))


def city_airport_count(city: str) -> int:
    return len(data.airports_by_city().get(data.folded(check.non_empty_string(city, "city")), ()))


def nearest_airport(city: str) -> str:
    place = data.city(city)
    return geo.nearest(place["latitude"], place["longitude"], *data.airport_coordinates())


def highest_airport(country: str) -> str:
    found = data.airports_by_country().get(data.country(country)["iso"], ())
    if not found:
        raise LookupError(f"'country': no airport is listed for {country!r}")
    return str(max(found, key=lambda record: (record["elevation"], record["iata"]))["iata"])


def _ends(origin: str, destination: str) -> tuple[data.Record, data.Record]:
    return data.airport(origin, "origin"), data.airport(destination, "destination")


def _route_distance(unit_km: float) -> Callable[[str, str], float]:
    def distance(origin: str, destination: str) -> float:
        first, second = _ends(origin, destination)
        return round(geo.distance_km(first["lat"], first["lon"], second["lat"], second["lon"]) / unit_km, 2)

    return distance


def route_bearing(origin: str, destination: str) -> float:
    first, second = _ends(origin, destination)
    return round(geo.bearing_deg(first["lat"], first["lon"], second["lat"], second["lon"]), 2)


def flight_hours(origin: str, destination: str, speed: float) -> float:
    pace = check.positive(speed, "speed")
    return round(_route_distance(1.0)(origin, destination) / pace, 2)


def _offset(zone: str, day: dt.date) -> float:
    offset = dt.datetime(day.year, day.month, day.day, 12, tzinfo=ZoneInfo(zone)).utcoffset()
    return 0.0 if offset is None else offset.total_seconds() / 3600


def time_difference(origin: str, destination: str, date: str) -> float:
    first, second = _ends(origin, destination)
    try:
        day = dt.date.fromisoformat(check.non_empty_string(date, "date"))
    except ValueError:
        raise ValueError(f"'date' must be an ISO date such as 2024-03-15, got {date!r}") from None
    return _offset(second["tz"], day) - _offset(first["tz"], day)


def elevation_change(origin: str, destination: str) -> float:
    first, second = _ends(origin, destination)
    return round(second["elevation"] - first["elevation"], 1)


def same_country(origin: str, destination: str) -> bool:
    first, second = _ends(origin, destination)
    return bool(first["country"] == second["country"])


def _flight(rng: random.Random) -> dict[str, Any]:
    return {**_route(rng), "speed": rng.choice((450, 600, 750, 800, 850, 900))}


def _dated_route(rng: random.Random) -> dict[str, Any]:
    return {**_route(rng), "date": draw_value("date", rng)}


TOOLS: list[ToolSpec] = [
    tool("airport_directory", "airport_name", _field(lambda r: r["name"]), "The full name of an airport.", [_AIRPORT],
         "label", "the full name of {airport}"),
    tool("airport_directory", "airport_city", _field(lambda r: r["city"]), "The name of the city an airport serves.",
         [_AIRPORT], "city", "the city served by {airport}"),
    tool("airport_directory", "airport_country", _field(lambda r: r["country"]), "The ISO alpha-2 code of the country "
         "an airport is in.", [_AIRPORT], "country", "the ISO code of the country {airport} is in",
         refers="the country {airport} is in"),
    tool("airport_directory", "airport_region", _field(lambda r: r["subd"]), "The region (state, province) an "
         "airport is in.", [_AIRPORT], "label", "the region {airport} is in"),
    tool("airport_directory", "airport_elevation_ft", _field(lambda r: r["elevation"]), "An airport's elevation "
         "above sea level in feet.", [_AIRPORT], "length:ft", "the elevation in feet of {airport}"),
    tool("airport_directory", "airport_elevation_m", _field(lambda r: round(r["elevation"] * 0.3048, 1)),
         "An airport's elevation above sea level in metres, rounded to 1 decimal.", [_AIRPORT], "length:m",
         "the elevation in metres of {airport}"),
    tool("airport_directory", "airport_latitude", _field(lambda r: round(r["lat"], 4)), "An airport's latitude in "
         "decimal degrees.", [_AIRPORT], "amount", "the latitude of {airport}"),
    tool("airport_directory", "airport_longitude", _field(lambda r: round(r["lon"], 4)), "An airport's longitude in "
         "decimal degrees.", [_AIRPORT], "amount", "the longitude of {airport}"),
    tool("airport_directory", "airport_timezone", _field(lambda r: r["tz"]), "The IANA time zone of an airport.",
         [_AIRPORT], "timezone", "the time zone of {airport}"),
    tool("airport_codes", "icao_of", icao_of, "The four-letter ICAO code of an airport given by its IATA code.",
         [_AIRPORT], "icao", "the ICAO code of {airport}", refers="{airport}"),
    tool("airport_codes", "iata_of", iata_of, "The three-letter IATA code of an airport given by its ICAO code.",
         [("icao", "icao", "the airport's four-letter ICAO code, such as LFPG")], "iata", "the IATA code of {icao}",
         refers="{icao}"),
    tool("airport_codes", "country_airport_count", country_airport_count, "How many airports with an IATA code a "
         "country has.", [("country", "country", "the country's ISO alpha-2 code")], "count",
         "the number of airports with an IATA code in {country}"),
    tool("airport_codes", "city_airport_count", city_airport_count, "How many airports with an IATA code list the "
         "named city as the city they serve.", [("city", "city", "the city's name")], "count",
         "the number of airports serving {city}"),
    tool("airport_codes", "nearest_airport", nearest_airport, "The IATA code of the airport closest to a city's "
         "centre (great-circle distance).", [("city", "city", "the city's name (the most populous city of that name)")],
         "iata", "the IATA code of the airport nearest to {city}", refers="the airport nearest to {city}"),
    tool("airport_codes", "highest_airport", highest_airport, "The IATA code of a country's highest airport.",
         [("country", "country", "the country's ISO alpha-2 code")], "iata",
         "the IATA code of the highest airport in {country}", refers="the highest airport in {country}"),
    tool("flight_planning", "route_distance_km", _route_distance(1.0), "The great-circle distance between two "
         "airports in kilometres, rounded to 2 decimals.", _ROUTE, "length:km",
         "the flight distance in kilometres from {origin} to {destination}", draw=_route),
    tool("flight_planning", "route_distance_mi", _route_distance(1.609344), "The great-circle distance between two "
         "airports in statute miles, rounded to 2 decimals.", _ROUTE, "length:mi",
         "the flight distance in miles from {origin} to {destination}", draw=_route),
    tool("flight_planning", "route_distance_nmi", _route_distance(1.852), "The great-circle distance between two "
         "airports in nautical miles, rounded to 2 decimals.", _ROUTE, "length:nmi",
         "the flight distance in nautical miles from {origin} to {destination}", draw=_route),
    tool("flight_planning", "route_bearing", route_bearing, "The initial compass heading in degrees from the airport "
         "of departure towards the airport of arrival.", _ROUTE, "angle:deg",
         "the initial heading in degrees from {origin} to {destination}", draw=_route),
    tool("flight_planning", "flight_hours", flight_hours, "Hours a flight takes over the great-circle route at a "
         "constant ground speed, rounded to 2 decimals.",
         [*_ROUTE, ("speed", "speed:km_h", "the ground speed in kilometres per hour")], "time:h",
         "how many hours a flight from {origin} to {destination} takes at {speed}",
         refers="the flight time in hours from {origin} to {destination} at {speed}", draw=_flight),
    tool("flight_planning", "time_difference", time_difference, "How many hours the destination's clock is ahead of "
         "the origin's at noon on the given day (negative when behind).",
         [*_ROUTE, ("date", "date", "the day, as an ISO date")], "amount",
         "how many hours the clocks at {destination} are ahead of those at {origin} on {date}", draw=_dated_route),
    tool("flight_planning", "elevation_change", elevation_change, "The destination airport's elevation minus the "
         "origin airport's, in feet.", _ROUTE, "length:ft", "how many feet higher {destination} lies than {origin}",
         refers="the height in feet of {destination} above {origin}", draw=_route),
    tool("flight_planning", "same_country", same_country, "Whether both airports are in the same country.", _ROUTE,
         "flag", "whether {origin} and {destination} are in the same country", draw=_route),
]
