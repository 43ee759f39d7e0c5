"""Offline stand-ins for BFCL's movie, slang and COVID-19 web services.

Each answers from a built-in table of real facts (OMDB-style director/genre/rating of ~30
well-known films, short slang definitions written for this project, approximate COVID-19 figures of
~25 countries of the kind public feeds reported in 2024). Names are matched ignoring case, punctuation and a leading
"The"; unknown names raise LookupError, as the live services answer "not found".
"""

from __future__ import annotations

import re
import unicodedata

from . import _checks as check

# title: (director, genre, rated) as OMDB reports them.
_MOVIES: dict[str, tuple[str, str, str]] = {
    "Avatar": ("James Cameron", "Action, Adventure, Fantasy", "PG-13"),
    "Titanic": ("James Cameron", "Drama, Romance", "PG-13"),
    "Pulp Fiction": ("Quentin Tarantino", "Crime, Drama", "R"),
    "Reservoir Dogs": ("Quentin Tarantino", "Crime, Thriller", "R"),
    "Kill Bill: Vol. 1": ("Quentin Tarantino", "Action, Crime, Thriller", "R"),
    "Django Unchained": ("Quentin Tarantino", "Drama, Western", "R"),
    "Inglourious Basterds": ("Quentin Tarantino", "Adventure, Drama, War", "R"),
    "The Godfather": ("Francis Ford Coppola", "Crime, Drama", "R"),
    "Schindler's List": ("Steven Spielberg", "Biography, Drama, History", "R"),
    "Jurassic Park": ("Steven Spielberg", "Action, Adventure, Sci-Fi", "PG-13"),
    "Jaws": ("Steven Spielberg", "Adventure, Thriller", "PG"),
    "The Dark Knight": ("Christopher Nolan", "Action, Crime, Drama", "PG-13"),
    "Inception": ("Christopher Nolan", "Action, Adventure, Sci-Fi", "PG-13"),
    "Interstellar": ("Christopher Nolan", "Adventure, Drama, Sci-Fi", "PG-13"),
    "Oppenheimer": ("Christopher Nolan", "Biography, Drama, History", "R"),
    "The Shawshank Redemption": ("Frank Darabont", "Drama", "R"),
    "Forrest Gump": ("Robert Zemeckis", "Drama, Romance", "PG-13"),
    "Back to the Future": ("Robert Zemeckis", "Adventure, Comedy, Sci-Fi", "PG"),
    "The Matrix": ("Lana Wachowski, Lilly Wachowski", "Action, Sci-Fi", "R"),
    "Fight Club": ("David Fincher", "Drama", "R"),
    "Gladiator": ("Ridley Scott", "Action, Adventure, Drama", "R"),
    "Goodfellas": ("Martin Scorsese", "Biography, Crime, Drama", "R"),
    "The Silence of the Lambs": ("Jonathan Demme", "Crime, Drama, Thriller", "R"),
    "Parasite": ("Bong Joon Ho", "Drama, Thriller", "R"),
    "The Lord of the Rings: The Fellowship of the Ring": ("Peter Jackson", "Action, Adventure, Drama", "PG-13"),
    "Star Wars": ("George Lucas", "Action, Adventure, Fantasy", "PG"),
    "The Lion King": ("Roger Allers, Rob Minkoff", "Animation, Adventure, Drama", "G"),
    "Toy Story": ("John Lasseter", "Animation, Adventure, Comedy", "G"),
    "Casablanca": ("Michael Curtiz", "Drama, Romance, War", "PG"),
    "Barbie": ("Greta Gerwig", "Adventure, Comedy, Fantasy", "PG-13"),
}
_MOVIE_ALIASES = {
    "kill bill": "Kill Bill: Vol. 1",
    "fellowship of the ring": "The Lord of the Rings: The Fellowship of the Ring",
}

# term: definition (written for this project in Urban Dictionary's informal register).
_SLANG: dict[str, str] = {
    "lit": "Exciting, fun or excellent; said of a party, a song or an event that is full of energy.",
    "flex": "To show off something you have or did, such as money, clothes or an achievement.",
    "savage": "Boldly harsh or brutally honest, often in a way others find impressive or funny.",
    "yolo": "Acronym for 'you only live once': a reason given for doing something risky or impulsive.",
    "bitcoin": "A digital currency with no central bank; also what people bring up when asked about getting "
               "rich quick.",
    "hello world": "The first program everyone writes in a new language; by extension, a first small step into "
                   "something new.",
    "salty": "Bitter or upset about something minor, usually after losing or being shown up.",
    "ghosting": "Ending contact with someone by suddenly ignoring all their messages without explanation.",
    "lowkey": "Quietly or secretly; a little bit, without making a big deal of it.",
    "goat": "Acronym for 'greatest of all time'.",
    "sus": "Short for suspicious or suspect; something or someone that seems off.",
    "no cap": "No lie; said to stress that what you are saying is true.",
    "vibe": "The mood or atmosphere of a person, place or situation.",
    "stan": "An extremely devoted fan; as a verb, to support someone or something enthusiastically.",
    "fomo": "Fear of missing out: anxiety that others are having fun or opportunities without you.",
    "rizz": "Charm or the ability to attract a romantic partner.",
    "cringe": "Embarrassing or awkward to watch; causing second-hand embarrassment.",
    "bae": "A term of endearment for a partner or someone you love.",
}

# country: (total deaths, active cases), approximately as public COVID-19 feeds reported them in 2024.
_COVID: dict[str, tuple[int, int]] = {
    "united states": (1_219_487, 664_283),
    "brazil": (711_380, 1_783_377),
    "india": (533_570, 2_512),
    "russia": (400_023, 198_457),
    "mexico": (334_958, 6_811),
    "united kingdom": (232_112, 24_958),
    "peru": (220_831, 4_126),
    "italy": (196_487, 199_634),
    "germany": (174_979, 48_620),
    "france": (167_985, 604_320),
    "indonesia": (161_930, 1_502),
    "iran": (146_837, 73_105),
    "colombia": (142_727, 23_089),
    "argentina": (130_685, 75_230),
    "spain": (121_852, 116_374),
    "poland": (120_823, 47_163),
    "ukraine": (109_918, 68_432),
    "south africa": (102_595, 1_976),
    "turkey": (101_419, 1_126_015),
    "romania": (68_796, 132_051),
    "japan": (74_694, 1_143_220),
    "canada": (55_282, 31_124),
    "australia": (24_414, 83_907),
    "china": (5_272, 115_637),
    "netherlands": (22_986, 8_464),
    "austria": (22_534, 23_317),
}
_COUNTRY_ALIASES = {"usa": "united states", "us": "united states", "united states of america": "united states",
                    "america": "united states", "uk": "united kingdom", "great britain": "united kingdom",
                    "russian federation": "russia", "turkiye": "turkey", "the netherlands": "netherlands",
                    "holland": "netherlands", "people's republic of china": "china", "prc": "china"}


def _key(text: str) -> str:
    """'  The Dark-Knight! ' -> 'dark knight': accents, punctuation, case and a leading 'the' dropped."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    words = re.sub(r"[^a-z0-9]+", " ", folded.replace("'", "")).split()
    if words[:1] == ["the"] and len(words) > 1:
        words = words[1:]
    return " ".join(words)


_MOVIE_KEYS = {_key(title): title for title in _MOVIES}
_MOVIE_KEYS |= {_key(alias): title for alias, title in _MOVIE_ALIASES.items()}


def _movie(movie_name: str) -> tuple[str, str, str]:
    title = _MOVIE_KEYS.get(_key(check.non_empty_string(movie_name, "movie_name")))
    if title is None:
        raise LookupError(f"Movie not found: {movie_name!r}")
    return _MOVIES[title]


def get_movie_director(movie_name: str) -> str:
    """Director(s) of a movie by title, e.g. 'Pulp Fiction' -> 'Quentin Tarantino'.

    Deterministic offline stand-in for a live movie database web service (OMDB API): answers
    from a built-in table of ~30 well-known films; unknown titles raise LookupError.
    """
    return _movie(movie_name)[0]


def get_director_by_movie_name(movie_name: str) -> str:
    """Director(s) of a movie by title, e.g. 'Inception' -> 'Christopher Nolan'.

    Deterministic offline stand-in for a live movie database web service: same table as
    ``get_movie_director``; unknown titles raise LookupError.
    """
    return _movie(movie_name)[0]


def get_movie_genre(movie_name: str) -> str:
    """Genres of a movie as OMDB lists them, e.g. 'Pulp Fiction' -> 'Crime, Drama'.

    Deterministic offline stand-in for a live movie database web service (OMDB API): answers
    from a built-in table of ~30 well-known films; unknown titles raise LookupError.
    """
    return _movie(movie_name)[1]


def get_movie_rating(movie_name: str) -> str:
    """Age rating (MPA) of a movie, e.g. 'Avatar' -> 'PG-13', 'Pulp Fiction' -> 'R'.

    Deterministic offline stand-in for a live movie database web service (OMDB API): answers
    from a built-in table of ~30 well-known films; unknown titles raise LookupError.
    """
    return _movie(movie_name)[2]


def find_term_on_urban_dictionary(term: str) -> str:
    """Top definition of a slang term, e.g. 'yolo' -> "Acronym for 'you only live once': ...".

    Deterministic offline stand-in for a live slang dictionary web service (Urban Dictionary):
    answers from a built-in table of ~20 common terms with definitions written for this
    project; unknown terms raise LookupError.
    """
    key = " ".join(check.non_empty_string(term, "term").lower().split())
    if key not in _SLANG:
        raise LookupError(f"no definition found for term {term!r}")
    return _SLANG[key]


_COUNTRY_KEYS = {_key(alias): name for alias, name in _COUNTRY_ALIASES.items()}


def _country(country: str) -> tuple[int, int]:
    key = _key(check.non_empty_string(country, "country"))
    key = _COUNTRY_KEYS.get(key, key)
    if key not in _COVID:
        raise LookupError(f"no COVID-19 data found for country {country!r}")
    return _COVID[key]


def get_covid_death_by_country(country: str) -> int:
    """Total COVID-19 deaths reported for a country (full name, e.g. 'Brazil').

    Deterministic offline stand-in for a live COVID-19 statistics web service: answers from a
    built-in table of ~25 countries' approximate 2024 totals; unknown countries raise
    LookupError.
    """
    return _country(country)[0]


def get_active_covid_case_by_country(country: str) -> int:
    """Active COVID-19 cases reported for a country (full name, e.g. 'Spain').

    Deterministic offline stand-in for a live COVID-19 statistics web service: answers from a
    built-in table of ~25 countries' approximate 2024 figures; unknown countries raise
    LookupError.
    """
    return _country(country)[1]
