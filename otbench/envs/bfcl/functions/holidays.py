"""Offline stand-in for BFCL's public-holiday web service (Nager.Date style).

Rather than a table per year, holidays are computed from the national rules of the twelve
countries BFCL offers: fixed dates, dates relative to Western or Orthodox Easter, n-th weekdays,
the years a holiday existed, and the UK's weekend substitution. One-off holidays (royal jubilees,
funerals) and regional holidays are not included.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta

from . import _checks as check

DateRule = Callable[[int], date]
_FIRST_YEAR, _LAST_YEAR = 1900, 2099  # the Orthodox Easter conversion below holds in this range
_SUNDAY = 6


def _western_easter(year: int) -> date:
    """Gregorian Easter Sunday (anonymous Gregorian computus)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    l = (32 + 2 * e + 2 * i - h - k) % 7  # the algorithm's customary name
    m = (a + 11 * h + 22 * l) // 451
    month, day = divmod(h + l - 7 * m + 114, 31)
    return date(year, month, day + 1)


def _orthodox_easter(year: int) -> date:
    """Orthodox Easter Sunday: Julian computus (Meeus), shifted 13 days to the Gregorian calendar."""
    a, b, c = year % 4, year % 7, year % 19
    d = (19 * c + 15) % 30
    e = (2 * a + 4 * b - d + 34) % 7
    month, day = divmod(d + e + 114, 31)
    return date(year, month, day + 1) + timedelta(days=13)


def _fixed(month: int, day: int) -> DateRule:
    return lambda year: date(year, month, day)


def _easter(offset: int) -> DateRule:
    return lambda year: _western_easter(year) + timedelta(days=offset)


def _orthodox(offset: int) -> DateRule:
    return lambda year: _orthodox_easter(year) + timedelta(days=offset)


def _nth_weekday(month: int, weekday: int, n: int) -> DateRule:
    """The n-th given weekday (0 = Monday) of the month; n = -1 for the last one."""
    def rule(year: int) -> date:
        if n > 0:
            first = date(year, month, 1)
            return first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))
        last = date(year + month // 12, month % 12 + 1, 1) - timedelta(days=1)
        return last - timedelta(days=(last.weekday() - weekday) % 7)
    return rule


def _dutch_kings_day(year: int) -> date:
    """King's Day (Apr 27, from 2014; Queen's Day Apr 30 before), moved off Sundays."""
    day = date(year, 4, 27 if year >= 2014 else 30)
    if day.weekday() == _SUNDAY:
        return day - timedelta(days=1) if year >= 2014 else day + timedelta(days=1)
    return day


# (name, rule, first year, last year). Names follow the English names Nager.Date uses.
_Holiday = tuple[str, DateRule, int, int]
_ALWAYS = (_FIRST_YEAR, _LAST_YEAR)
_NEW_YEAR: _Holiday = ("New Year's Day", _fixed(1, 1), *_ALWAYS)
_EPIPHANY: _Holiday = ("Epiphany", _fixed(1, 6), *_ALWAYS)
_GOOD_FRIDAY: _Holiday = ("Good Friday", _easter(-2), *_ALWAYS)
_EASTER_SUNDAY: _Holiday = ("Easter Sunday", _easter(0), *_ALWAYS)
_EASTER_MONDAY: _Holiday = ("Easter Monday", _easter(1), *_ALWAYS)
_LABOUR_DAY: _Holiday = ("Labour Day", _fixed(5, 1), *_ALWAYS)
_ASCENSION: _Holiday = ("Ascension Day", _easter(39), *_ALWAYS)
_WHIT_SUNDAY: _Holiday = ("Whit Sunday", _easter(49), *_ALWAYS)
_WHIT_MONDAY: _Holiday = ("Whit Monday", _easter(50), *_ALWAYS)
_CORPUS_CHRISTI: _Holiday = ("Corpus Christi", _easter(60), *_ALWAYS)
_ASSUMPTION: _Holiday = ("Assumption Day", _fixed(8, 15), *_ALWAYS)
_ALL_SAINTS: _Holiday = ("All Saints' Day", _fixed(11, 1), *_ALWAYS)
_IMMACULATE: _Holiday = ("Immaculate Conception", _fixed(12, 8), *_ALWAYS)
_CHRISTMAS_EVE: _Holiday = ("Christmas Eve", _fixed(12, 24), *_ALWAYS)
_CHRISTMAS: _Holiday = ("Christmas Day", _fixed(12, 25), *_ALWAYS)
_ST_STEPHEN: _Holiday = ("St. Stephen's Day", _fixed(12, 26), *_ALWAYS)

_HOLIDAYS: dict[str, tuple[_Holiday, ...]] = {
    "US": (
        _NEW_YEAR, ("Martin Luther King, Jr. Day", _nth_weekday(1, 0, 3), 1986, _LAST_YEAR),
        ("Washington's Birthday", _nth_weekday(2, 0, 3), *_ALWAYS), ("Memorial Day", _nth_weekday(5, 0, -1), *_ALWAYS),
        ("Juneteenth National Independence Day", _fixed(6, 19), 2021, _LAST_YEAR),
        ("Independence Day", _fixed(7, 4), *_ALWAYS), ("Labor Day", _nth_weekday(9, 0, 1), *_ALWAYS),
        ("Columbus Day", _nth_weekday(10, 0, 2), *_ALWAYS), ("Veterans Day", _fixed(11, 11), *_ALWAYS),
        ("Thanksgiving Day", _nth_weekday(11, 3, 4), *_ALWAYS), _CHRISTMAS,
    ),
    "AT": (
        _NEW_YEAR, _EPIPHANY, _EASTER_MONDAY, _LABOUR_DAY, _ASCENSION, _WHIT_MONDAY, _CORPUS_CHRISTI, _ASSUMPTION,
        ("National Day", _fixed(10, 26), *_ALWAYS), _ALL_SAINTS, _IMMACULATE, _CHRISTMAS, _ST_STEPHEN,
    ),
    "DE": (
        _NEW_YEAR, _GOOD_FRIDAY, _EASTER_MONDAY, _LABOUR_DAY, _ASCENSION, _WHIT_MONDAY,
        ("German Unity Day", _fixed(10, 3), 1990, _LAST_YEAR), _CHRISTMAS, _ST_STEPHEN,
    ),
    "ES": (
        _NEW_YEAR, _EPIPHANY, _GOOD_FRIDAY, _LABOUR_DAY, _ASSUMPTION, ("National Day", _fixed(10, 12), *_ALWAYS),
        _ALL_SAINTS, ("Constitution Day", _fixed(12, 6), 1979, _LAST_YEAR), _IMMACULATE, _CHRISTMAS,
    ),
    "FR": (
        _NEW_YEAR, _EASTER_MONDAY, _LABOUR_DAY, ("Victory in Europe Day", _fixed(5, 8), 1982, _LAST_YEAR), _ASCENSION,
        _WHIT_MONDAY, ("Bastille Day", _fixed(7, 14), *_ALWAYS), _ASSUMPTION, _ALL_SAINTS,
        ("Armistice Day", _fixed(11, 11), *_ALWAYS), _CHRISTMAS,
    ),
    "GB": (
        _NEW_YEAR, _GOOD_FRIDAY, _EASTER_MONDAY, ("Early May Bank Holiday", _nth_weekday(5, 0, 1), 1978, _LAST_YEAR),
        ("Spring Bank Holiday", _nth_weekday(5, 0, -1), 1971, _LAST_YEAR),
        ("Summer Bank Holiday", _nth_weekday(8, 0, -1), 1971, _LAST_YEAR), _CHRISTMAS,
        ("Boxing Day", _fixed(12, 26), *_ALWAYS),
    ),
    "IT": (
        _NEW_YEAR, _EPIPHANY, _EASTER_SUNDAY, _EASTER_MONDAY, ("Liberation Day", _fixed(4, 25), 1946, _LAST_YEAR),
        _LABOUR_DAY, ("Republic Day", _fixed(6, 2), 1946, _LAST_YEAR), _ASSUMPTION, _ALL_SAINTS, _IMMACULATE,
        _CHRISTMAS, _ST_STEPHEN,
    ),
    "NL": (
        _NEW_YEAR, _GOOD_FRIDAY, _EASTER_SUNDAY, _EASTER_MONDAY, ("King's Day", _dutch_kings_day, 2014, _LAST_YEAR),
        ("Queen's Day", _dutch_kings_day, _FIRST_YEAR, 2013), ("Liberation Day", _fixed(5, 5), 1945, _LAST_YEAR),
        _ASCENSION, _WHIT_SUNDAY, _WHIT_MONDAY, _CHRISTMAS, _ST_STEPHEN,
    ),
    "PL": (
        _NEW_YEAR, ("Epiphany", _fixed(1, 6), 2011, _LAST_YEAR), _EASTER_SUNDAY, _EASTER_MONDAY, _LABOUR_DAY,
        ("Constitution Day", _fixed(5, 3), 1990, _LAST_YEAR), ("Pentecost", _easter(49), *_ALWAYS), _CORPUS_CHRISTI,
        _ASSUMPTION, _ALL_SAINTS, ("Independence Day", _fixed(11, 11), 1989, _LAST_YEAR),
        ("Christmas Eve", _fixed(12, 24), 2025, _LAST_YEAR), _CHRISTMAS, _ST_STEPHEN,
    ),
    "RO": (
        _NEW_YEAR, ("Day after New Year's Day", _fixed(1, 2), *_ALWAYS), ("Epiphany", _fixed(1, 6), 2024, _LAST_YEAR),
        ("Saint John the Baptist", _fixed(1, 7), 2024, _LAST_YEAR), ("Union Day", _fixed(1, 24), 2017, _LAST_YEAR),
        ("Good Friday", _orthodox(-2), 2018, _LAST_YEAR), ("Easter Sunday", _orthodox(0), *_ALWAYS),
        ("Easter Monday", _orthodox(1), *_ALWAYS), _LABOUR_DAY, ("Children's Day", _fixed(6, 1), 2017, _LAST_YEAR),
        ("Pentecost", _orthodox(49), *_ALWAYS), ("Whit Monday", _orthodox(50), *_ALWAYS),
        ("Assumption Day", _fixed(8, 15), 2009, _LAST_YEAR), ("St. Andrew's Day", _fixed(11, 30), 2012, _LAST_YEAR),
        ("National Day", _fixed(12, 1), 1990, _LAST_YEAR), _CHRISTMAS, _ST_STEPHEN,
    ),
    "SK": (
        ("Day of the Establishment of the Slovak Republic", _fixed(1, 1), 1993, _LAST_YEAR), _EPIPHANY, _GOOD_FRIDAY,
        _EASTER_MONDAY, _LABOUR_DAY, ("Day of Victory over Fascism", _fixed(5, 8), *_ALWAYS),
        ("St. Cyril and Methodius Day", _fixed(7, 5), *_ALWAYS),
        ("Slovak National Uprising Anniversary", _fixed(8, 29), *_ALWAYS), ("Constitution Day", _fixed(9, 1), 1993, 2023),
        ("Our Lady of Seven Sorrows", _fixed(9, 15), *_ALWAYS), _ALL_SAINTS,
        ("Struggle for Freedom and Democracy Day", _fixed(11, 17), 2001, _LAST_YEAR), _CHRISTMAS_EVE, _CHRISTMAS,
        _ST_STEPHEN,
    ),
    "UA": (
        _NEW_YEAR, ("Orthodox Christmas Day", _fixed(1, 7), _FIRST_YEAR, 2023),
        ("International Women's Day", _fixed(3, 8), *_ALWAYS), ("Easter Sunday", _orthodox(0), *_ALWAYS),
        _LABOUR_DAY, ("Victory Day", _fixed(5, 9), _FIRST_YEAR, 2022),
        ("Day of Remembrance and Victory", _fixed(5, 8), 2023, _LAST_YEAR), ("Trinity Sunday", _orthodox(49), *_ALWAYS),
        ("Constitution Day", _fixed(6, 28), 1996, _LAST_YEAR), ("Independence Day", _fixed(8, 24), 1991, _LAST_YEAR),
        ("Defenders Day", _fixed(10, 14), 2015, 2022), ("Defenders Day", _fixed(10, 1), 2023, _LAST_YEAR),
        ("Christmas Day", _fixed(12, 25), 2017, _LAST_YEAR),
    ),
}
# UK holidays that move to the next free weekday when they fall on a weekend.
_SUBSTITUTED = {"GB": ("New Year's Day", "Christmas Day", "Boxing Day")}


def _year(value: str | int) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    text = check.non_empty_string(value, "year")
    if not re.fullmatch(r"\d{4}", text):
        raise ValueError(f"'year' must be a 4-digit year such as '2020', got {value!r}")
    year = int(text)
    if not _FIRST_YEAR <= year <= _LAST_YEAR:
        raise ValueError(f"'year' must be between {_FIRST_YEAR} and {_LAST_YEAR}, got {year}")
    return year


def retrieve_holiday_by_year(year: str, country: str) -> list[dict[str, str]]:
    """National public holidays of a country in a year, sorted by date.

    Deterministic offline stand-in for a live public-holiday web service (Nager.Date API):
    holidays are computed from each country's rules. ``country`` is one of US, AT, DE, ES,
    FR, GB, IT, NL, PL, RO, SK, UA; ``year`` a 4-digit year (text or number, 1900-2099).
    Returns [{"date": "YYYY-MM-DD", "name": ...}, ...].
    """
    when = _year(year)
    code = check.non_empty_string(country, "country").upper()
    if code not in _HOLIDAYS:
        raise ValueError(f"'country' must be one of {', '.join(_HOLIDAYS)}, got {country!r}")
    dates = [(rule(when), name) for name, rule, first, last in _HOLIDAYS[code] if first <= when <= last]
    taken: set[date] = set()
    observed = []
    for day, name in dates:
        if name in _SUBSTITUTED.get(code, ()):
            while day.weekday() >= 5 or day in taken:
                day += timedelta(days=1)
        taken.add(day)
        observed.append((day, name))
    return [{"date": day.isoformat(), "name": name} for day, name in sorted(observed)]
