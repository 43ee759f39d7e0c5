"""Kinds of values: what a parameter takes and a tool returns, how requests draw such values, and how they word them.

A workflow feeds one tool's output to another tool's parameter of the same kind, so kinds are as specific as
meaning needs (a length in kilometres, an airport's IATA code), and generic only where any value fits (a text,
an integer). A kind without ``draw`` is only ever returned (a label, a yes/no): nothing feeds on it.
"""

from __future__ import annotations

import base64
import calendar
import datetime as dt
import ipaddress
import random
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from otbench.envs.bfcl.functions import geo_standins, market_standins, media_standins
from otbench.envs.pool import data
from otbench.envs.pool.apps.chemistry import ELEMENTS, FORMULAS
from otbench.envs.pool.apps.numbers import to_roman
from otbench.envs.pool.apps.text import PHRASES, WORDS, to_morse
from otbench.envs.pool.measures import DIMENSIONS, Unit


@dataclass(frozen=True)
class Kind:
    name: str
    type: str
    """The JSON schema type the docs show (``string``, ``number``, ``integer``, ``boolean``, ``array``)."""
    draw: Callable[[random.Random], Any] | None = None
    say: Callable[[Any], str] = str
    """The value in the words of a request."""


def number_words(value: float) -> str:
    """A number as a request writes it: no trailing zeros, no exponent for everyday magnitudes."""
    text = f"{value:.6f}".rstrip("0").rstrip(".") if abs(value) < 1e15 else f"{value:g}"
    return text if text not in ("", "-0") else "0"


def _quoted(value: Any) -> str:
    return f'"{value}"'


WEEKDAYS = tuple(calendar.day_name)
CHARACTERS = ("é", "ß", "€", "Ω", "ñ", "©", "☃", "ø", "ü", "λ", "±", "¿", "Ж", "あ", "中", "₹", "§", "æ", "ç", "µ")
ACCENTED = ("Crème brûlée", "São Paulo", "Zürich", "Ångström", "naïve café", "Bogotá", "Dvořák", "Kraków",
            "Île-de-France", "Málaga", "Curaçao", "Reykjavík", "Düsseldorf", "Besançon", "Gdańsk")


@cache
def major_countries() -> tuple[str, ...]:
    """Countries of a million people or more, by code: those requests ask about."""
    return tuple(sorted(code for code, record in data.countries().items() if record["population"] >= 1_000_000))


@cache
def major_cities() -> tuple[str, ...]:
    """Cities of 300,000 people or more whose name no other such city has, so a name means one city."""
    big = [city for city in data.cities() if city["population"] >= 300_000]
    names = Counter(data.folded(city["name"]) for city in big)
    return tuple(sorted(city["name"] for city in big if names[data.folded(city["name"])] == 1
                        and data.city(city["name"]) is city))


@cache
def major_time_zones() -> tuple[str, ...]:
    """The time zones of :func:`major_cities`."""
    return tuple(sorted({data.city(name)["timezone"] for name in major_cities()}))


@cache
def major_airports() -> tuple[str, ...]:
    """Airports (IATA) in a city that is one of :func:`major_cities`, with an ICAO code and a time zone."""
    served = data.airports_by_city()
    return tuple(sorted(record["iata"] for name in major_cities() for record in served.get(data.folded(name), ())
                        if record.get("icao") and record.get("tz")))


def _date(rng: random.Random) -> str:
    return (dt.date(1950, 1, 1) + dt.timedelta(days=rng.randrange(32_000))).isoformat()


def _money(rng: random.Random) -> float:
    return round(rng.uniform(10, 5000), 2)


def _numbers(rng: random.Random) -> list[float]:
    return [rng.randint(1, 100) for _ in range(rng.randint(5, 8))]


def _unit_kind(dimension: str, unit: Unit) -> Kind:
    def draw(rng: random.Random) -> float:
        value = rng.uniform(unit.low, unit.high)
        return round(value, 2) if value < 100 else round(value)

    return Kind(f"{dimension}:{unit.code}", "number", draw, lambda value: f"{number_words(value)} {unit.plural}")


_GENERAL: tuple[Kind, ...] = (
    # places
    Kind("country", "string", lambda rng: rng.choice(major_countries()),
         lambda code: f"the country with ISO code {code}"),
    Kind("country_name", "string", lambda rng: data.countries()[rng.choice(major_countries())]["name"]),
    Kind("iso3", "string", lambda rng: data.countries()[rng.choice(major_countries())]["iso3"],
         lambda code: f"the country with ISO3 code {code}"),
    Kind("iso_numeric", "integer", lambda rng: data.countries()[rng.choice(major_countries())]["isonumeric"],
         lambda code: f"the country with ISO numeric code {code}"),
    Kind("fips", "string", lambda rng: data.countries()[rng.choice(major_countries())]["fips"],
         lambda code: f"the country with FIPS code {code}"),
    Kind("tld", "string", lambda rng: data.countries()[rng.choice(major_countries())]["tld"],
         lambda tld: f"the country whose internet domain is {tld}"),
    Kind("continent", "string", lambda rng: rng.choice(("AF", "AS", "EU", "NA", "OC", "SA")),
         lambda code: f"the continent with code {code}"),
    Kind("city", "string", lambda rng: rng.choice(major_cities())),
    Kind("us_state", "string", lambda rng: rng.choice(sorted(data.us_states())),
         lambda code: f"the US state with postal code {code}"),
    Kind("state_fips", "string", lambda rng: data.us_states()[rng.choice(sorted(data.us_states()))]["fips"],
         lambda code: f"the US state with FIPS code {code}"),
    Kind("threshold", "integer", lambda rng: rng.choice((50_000, 100_000, 250_000, 500_000, 1_000_000)),
         lambda value: f"{value:,} people"),
    Kind("state_name", "string", lambda rng: data.us_states()[rng.choice(sorted(data.us_states()))]["name"]),
    Kind("iata", "string", lambda rng: rng.choice(major_airports()), lambda code: f"airport {code}"),
    Kind("icao", "string", lambda rng: data.airports()[rng.choice(major_airports())]["icao"],
         lambda code: f"the airport with ICAO code {code}"),
    Kind("timezone", "string", lambda rng: rng.choice(major_time_zones()),
         lambda zone: f"the time zone {zone}"),
    # dates and times
    Kind("date", "string", _date),
    Kind("year", "integer", lambda rng: rng.randint(1901, 2099)),
    Kind("month", "integer", lambda rng: rng.randint(1, 12), lambda month: calendar.month_name[month]),
    Kind("weekday", "string", lambda rng: rng.choice(WEEKDAYS)),
    Kind("time", "string", lambda rng: f"{rng.randint(0, 23):02d}:{rng.choice(range(0, 60, 5)):02d}"),
    Kind("time12", "string", lambda rng: f"{rng.randint(1, 12)}:{rng.choice(range(0, 60, 5)):02d} "
                                         f"{rng.choice(('AM', 'PM'))}"),
    Kind("clock", "string", lambda rng: f"{rng.randint(0, 30):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}",
         lambda text: f"the duration {text}"),
    Kind("julian_day", "integer", lambda rng: rng.randint(2_433_000, 2_466_000),
         lambda value: f"Julian day number {value}"),
    Kind("timestamp", "integer", lambda rng: rng.randint(0, 2_000_000_000), lambda value: f"Unix timestamp {value}"),
    Kind("datetime", "string", lambda rng: f"{_date(rng)}T{rng.randint(0, 23):02d}:{rng.choice(range(0, 60, 5)):02d}"),
    # numbers
    Kind("integer", "integer", lambda rng: rng.randint(2, 5000)),
    Kind("small_integer", "integer", lambda rng: rng.randint(1, 30)),
    Kind("number", "number", lambda rng: round(rng.uniform(0.5, 1000), 2), number_words),
    Kind("numbers", "array", _numbers, lambda values: "the numbers " + ", ".join(number_words(v) for v in values)),
    Kind("percent", "number", lambda rng: rng.randint(1, 60), lambda value: f"{number_words(value)}%"),
    Kind("money", "number", _money, lambda value: f"${value:,.2f}"),
    Kind("rate", "number", lambda rng: round(rng.uniform(1, 12), 1), lambda value: f"{number_words(value)}% a year"),
    Kind("rate_fraction", "number", lambda rng: round(rng.uniform(0.01, 0.12), 3),
         lambda value: f"{number_words(value * 100)}% a year"),
    Kind("years", "integer", lambda rng: rng.randint(1, 30), lambda value: f"{value} years"),
    Kind("people", "integer", lambda rng: rng.randint(2, 12), lambda value: f"{value} people"),
    Kind("age", "integer", lambda rng: rng.randint(18, 80)),
    Kind("sex", "string", lambda rng: rng.choice(("male", "female"))),
    Kind("base", "integer", lambda rng: rng.choice((3, 5, 6, 7, 9, 12, 20, 36)), lambda value: f"base {value}"),
    # text
    Kind("text", "string", lambda rng: rng.choice(PHRASES), _quoted),
    Kind("word", "string", lambda rng: rng.choice(WORDS), _quoted),
    Kind("letter", "string", lambda rng: rng.choice("aeiourstln"), lambda letter: f'the letter "{letter}"'),
    Kind("shift", "integer", lambda rng: rng.randint(1, 25)),
    Kind("cipher_key", "string", lambda rng: rng.choice(("LEMON", "KEY", "CIPHER", "SECRET", "ORBIT", "CLOUD")),
         lambda key: f'the key "{key}"'),
    Kind("base64", "string", lambda rng: base64.b64encode(rng.choice(PHRASES).encode()).decode(),
         lambda text: f'the Base64 string "{text}"'),
    Kind("hex_text", "string", lambda rng: rng.choice(WORDS).encode().hex(), lambda text: f'the hex string "{text}"'),
    Kind("roman", "string", lambda rng: to_roman(rng.randint(1, 3999)), lambda text: f"the Roman numeral {text}"),
    Kind("binary", "string", lambda rng: bin(rng.randint(2, 5000))[2:], lambda text: f"the binary number {text}"),
    Kind("hexadecimal", "string", lambda rng: f"{rng.randint(16, 100000):X}",
         lambda text: f"the hexadecimal number {text}"),
    Kind("octal", "string", lambda rng: f"{rng.randint(8, 50000):o}", lambda text: f"the octal number {text}"),
    Kind("morse", "string", lambda rng: to_morse(rng.choice(WORDS)), lambda text: f'the Morse code "{text}"'),
    # chemistry
    Kind("element", "string", lambda rng: rng.choice(ELEMENTS[:86])[0], lambda symbol: f"the element {symbol}"),
    Kind("element_name", "string", lambda rng: rng.choice(ELEMENTS[:86])[1]),
    Kind("formula", "string", lambda rng: rng.choice(FORMULAS)),
    # computing
    Kind("character", "string", lambda rng: rng.choice(CHARACTERS), lambda ch: f'the character "{ch}"'),
    Kind("unicode_name", "string", lambda rng: unicodedata.name(rng.choice(CHARACTERS))),
    Kind("code_point", "string", lambda rng: f"U+{ord(rng.choice(CHARACTERS)):04X}",
         lambda code: f"code point {code}"),
    Kind("accented", "string", lambda rng: rng.choice(ACCENTED), _quoted),
    Kind("cidr", "string", lambda rng: str(ipaddress.IPv4Network(f"{ipaddress.IPv4Address(rng.randrange(1 << 32))}/"
                                                                 f"{rng.randint(8, 30)}", strict=False)),
         lambda network: f"the network {network}"),
    # what BFCL's offline stand-ins for web services know
    Kind("ticker", "string", lambda rng: rng.choice(sorted(market_standins._STOCKS)), lambda code: f"the stock {code}"),
    Kind("currency", "string", lambda rng: rng.choice(sorted(market_standins._PER_USD))),
    Kind("asin", "string", lambda rng: "B0" + "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789")
                                                      for _ in range(8)),
         lambda code: f"the Amazon product {code}"),
    Kind("movie", "string", lambda rng: rng.choice(sorted(media_standins._MOVIES)), lambda title: f'the film "{title}"'),
    Kind("slang", "string", lambda rng: rng.choice(sorted(media_standins._SLANG)),
         lambda term: f'the slang term "{term}"'),
    Kind("zipcode", "string", lambda rng: rng.choice(sorted(geo_standins._ZIP_CITIES)),
         lambda code: f"the US zip code {code}"),
    Kind("ip_address", "string", lambda rng: ".".join(str(rng.randint(1, 254)) for _ in range(4)),
         lambda address: f"the IP address {address}"),
    # colours
    Kind("hex_color", "string", lambda rng: f"#{rng.randrange(1 << 24):06x}", lambda text: f"the colour {text}"),
    Kind("channel", "integer", lambda rng: rng.randint(0, 255)),
    Kind("hue", "integer", lambda rng: rng.randint(0, 359), lambda value: f"{value} degrees"),
    Kind("share", "integer", lambda rng: rng.randint(10, 90), lambda value: f"{value}%"),
    # only returned
    Kind("label", "string"), Kind("flag", "boolean"), Kind("count", "integer"), Kind("amount", "number"),
    Kind("series", "array"),
)

KINDS: dict[str, Kind] = {kind.name: kind for kind in _GENERAL} | {
    kind.name: kind for kind in (_unit_kind(dimension.name, unit) for dimension in DIMENSIONS
                                 for unit in dimension.units)}
"""Every kind by name; a unit's is ``dimension:unit`` (``length:km``)."""


def draw_value(name: str, rng: random.Random) -> Any:
    """A value of kind ``name`` for a request."""
    draw = KINDS[name].draw
    if draw is None:
        raise ValueError(f"no request gives a value of kind {name!r}: only tools return one")
    return draw(rng)


def drawable(name: str) -> bool:
    """Whether requests can give a value of this kind (else only a tool's output can)."""
    return KINDS[name].draw is not None
