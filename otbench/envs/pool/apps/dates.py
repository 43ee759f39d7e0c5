"""Dates and times (the standard library's calendar): calendar facts, date arithmetic, clock times, birthdays and
other calendar systems. Dates are ISO strings (``2024-03-15``), days of the week English names."""

from __future__ import annotations

import calendar
import datetime as dt
import random
from typing import Any

from otbench.envs.bfcl.functions import _checks as check
from otbench.envs.pool.kinds import WEEKDAYS, draw_value
from otbench.envs.pool.spec import ToolSpec, tool

_DATE = ("date", "date", "an ISO date such as 2024-03-15")
_YEAR = ("year", "year", "the year, such as 2024")
_MONTH = ("month", "month", "the month number, 1 for January to 12 for December")
_WEEKDAY = ("weekday", "weekday", "a day of the week in English, such as Monday")
_SPAN = (("start", "date", "the first ISO date"), ("end", "date", "the second ISO date"))
_BIRTH = (("birth", "date", "the date of birth, an ISO date"), ("on", "date", "the ISO date to count from"))
_TIME = ("time", "time", "a time of day on the 24-hour clock, HH:MM")
_ZODIAC = (((1, 20), "Capricorn"), ((2, 19), "Aquarius"), ((3, 21), "Pisces"), ((4, 20), "Aries"),
           ((5, 21), "Taurus"), ((6, 21), "Gemini"), ((7, 23), "Cancer"), ((8, 23), "Leo"), ((9, 23), "Virgo"),
           ((10, 23), "Libra"), ((11, 22), "Scorpio"), ((12, 22), "Sagittarius"), ((13, 1), "Capricorn"))
_ANIMALS = ("Rat", "Ox", "Tiger", "Rabbit", "Dragon", "Snake", "Horse", "Goat", "Monkey", "Rooster", "Dog", "Pig")
_BIRTHSTONES = ("Garnet", "Amethyst", "Aquamarine", "Diamond", "Emerald", "Pearl", "Ruby", "Peridot", "Sapphire",
                "Opal", "Topaz", "Turquoise")
_GENERATIONS = ((1901, "Greatest Generation"), (1928, "Silent Generation"), (1946, "Baby Boomers"),
                (1965, "Generation X"), (1981, "Millennials"), (1997, "Generation Z"), (2013, "Generation Alpha"),
                (2025, "Generation Beta"))


def _day(value: Any, name: str = "date") -> dt.date:
    try:
        return dt.date.fromisoformat(check.non_empty_string(value, name))
    except ValueError:
        raise ValueError(f"'{name}' must be an ISO date such as 2024-03-15, got {value!r}") from None


def _year(value: Any) -> int:
    year = check.integer(value, "year")
    if not 1 <= year <= 9999:
        raise ValueError(f"'year' must be between 1 and 9999, got {year}")
    return year


def _month(value: Any) -> int:
    month = check.integer(value, "month")
    if not 1 <= month <= 12:
        raise ValueError(f"'month' must be between 1 and 12, got {month}")
    return month


def _weekday(value: Any) -> int:
    text = check.non_empty_string(value, "weekday").capitalize()
    if text not in WEEKDAYS:
        raise ValueError(f"'weekday' must be an English day name such as Monday, got {value!r}")
    return WEEKDAYS.index(text)


def _clock(value: Any, name: str = "time") -> int:
    """Minutes since midnight of an ``HH:MM`` time."""
    text = check.non_empty_string(value, name)
    try:
        hours, minutes = (int(part) for part in text.split(":"))
    except ValueError:
        raise ValueError(f"'{name}' must be a 24-hour time HH:MM, got {value!r}") from None
    if not (0 <= hours < 24 and 0 <= minutes < 60):
        raise ValueError(f"'{name}' must be a 24-hour time HH:MM, got {value!r}")
    return hours * 60 + minutes


def _hhmm(minutes: int) -> str:
    return f"{minutes // 60 % 24:02d}:{minutes % 60:02d}"


# -- calendar facts -----------------------------------------------------------------------------------------------
def is_leap_year(year: int) -> bool:
    return calendar.isleap(_year(year))


def days_in_month(year: int, month: int) -> int:
    return calendar.monthrange(_year(year), _month(month))[1]


def days_in_year(year: int) -> int:
    return 366 if calendar.isleap(_year(year)) else 365


def day_of_year(date: str) -> int:
    return _day(date).timetuple().tm_yday


def iso_week(date: str) -> int:
    return _day(date).isocalendar().week


def quarter_of(date: str) -> int:
    return (_day(date).month - 1) // 3 + 1


def month_end(date: str) -> str:
    day = _day(date)
    return day.replace(day=calendar.monthrange(day.year, day.month)[1]).isoformat()


def weekday_number(date: str) -> int:
    return _day(date).isoweekday()


def friday_13ths(year: int) -> int:
    chosen = _year(year)
    return sum(dt.date(chosen, month, 13).weekday() == 4 for month in range(1, 13))


def easter_sunday(year: int) -> str:
    """Gregorian Easter by the anonymous (Meeus/Jones/Butcher) algorithm."""
    y = _year(year)
    a, b, c = y % 19, y // 100, y % 100
    d, e = divmod(b, 4)
    g = (b - (b + 8) // 25 + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    weekday = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * weekday) // 451
    month, day = divmod(h + weekday - 7 * m + 114, 31)
    return dt.date(y, month, day + 1).isoformat()


def days_left_in_year(date: str) -> int:
    day = _day(date)
    return (dt.date(day.year, 12, 31) - day).days


def new_year_weekday(year: int) -> str:
    return WEEKDAYS[dt.date(_year(year), 1, 1).weekday()]


def _weekdays_in(year: int, month: int, weekday: str) -> list[dt.date]:
    chosen_year, chosen_month, wanted = _year(year), _month(month), _weekday(weekday)
    days = calendar.monthrange(chosen_year, chosen_month)[1]
    return [dt.date(chosen_year, chosen_month, d) for d in range(1, days + 1)
            if dt.date(chosen_year, chosen_month, d).weekday() == wanted]


def first_weekday_in_month(year: int, month: int, weekday: str) -> str:
    return _weekdays_in(year, month, weekday)[0].isoformat()


def last_weekday_in_month(year: int, month: int, weekday: str) -> str:
    return _weekdays_in(year, month, weekday)[-1].isoformat()


def weekday_count_in_month(year: int, month: int, weekday: str) -> int:
    return len(_weekdays_in(year, month, weekday))


# -- date arithmetic ----------------------------------------------------------------------------------------------
def add_weeks(date: str, weeks: int) -> str:
    return (_day(date) + dt.timedelta(weeks=check.integer(weeks, "weeks"))).isoformat()


def add_years(date: str, years: int) -> str:
    day = _day(date)
    target = day.year + check.integer(years, "years")
    last = calendar.monthrange(target, day.month)[1]
    return dt.date(target, day.month, min(day.day, last)).isoformat()


def months_between(start: str, end: str) -> int:
    first, last = _day(start, "start"), _day(end, "end")
    sign = 1 if last >= first else -1
    low, high = (first, last) if sign == 1 else (last, first)
    months = (high.year - low.year) * 12 + high.month - low.month - (high.day < low.day)
    return sign * months


def next_weekday(date: str, weekday: str) -> str:
    day, wanted = _day(date), _weekday(weekday)
    return (day + dt.timedelta(days=(wanted - day.weekday() - 1) % 7 + 1)).isoformat()


def previous_weekday(date: str, weekday: str) -> str:
    day, wanted = _day(date), _weekday(weekday)
    return (day - dt.timedelta(days=(day.weekday() - wanted - 1) % 7 + 1)).isoformat()


def weekend_days_between(start: str, end: str) -> int:
    first, last = _day(start, "start"), _day(end, "end")
    if last < first:
        raise ValueError("'end' must not come before 'start'")
    weeks, rest = divmod((last - first).days, 7)
    return 2 * weeks + sum((first + dt.timedelta(days=offset)).weekday() >= 5 for offset in range(rest))


def is_weekend(date: str) -> bool:
    return _day(date).weekday() >= 5


def hours_between(start: str, end: str) -> int:
    return (_day(end, "end") - _day(start, "start")).days * 24


# -- clock times --------------------------------------------------------------------------------------------------
def to_12_hour(time: str) -> str:
    minutes = _clock(time)
    hours = minutes // 60
    return f"{(hours - 1) % 12 + 1}:{minutes % 60:02d} {'AM' if hours < 12 else 'PM'}"


def to_24_hour(time: str) -> str:
    text = check.non_empty_string(time, "time").upper()
    try:
        clock, half = text.split()
        hours, minutes = (int(part) for part in clock.split(":"))
    except ValueError:
        raise ValueError(f"'time' must be a 12-hour time such as 2:30 PM, got {time!r}") from None
    if half not in ("AM", "PM") or not (1 <= hours <= 12 and 0 <= minutes < 60):
        raise ValueError(f"'time' must be a 12-hour time such as 2:30 PM, got {time!r}")
    return _hhmm((hours % 12 + (12 if half == "PM" else 0)) * 60 + minutes)


def minutes_between_times(start: str, end: str) -> int:
    return (_clock(end, "end") - _clock(start, "start")) % (24 * 60)


def add_minutes_to_time(time: str, minutes: float) -> str:
    return _hhmm(_clock(time) + round(check.number(minutes, "minutes")))


def seconds_to_clock(seconds: float) -> str:
    total = round(check.number(seconds, "seconds"))
    if total < 0:
        raise ValueError(f"'seconds' must not be negative, got {seconds!r}")
    return f"{total // 3600:02d}:{total // 60 % 60:02d}:{total % 60:02d}"


def clock_to_seconds(duration: str) -> int:
    text = check.non_empty_string(duration, "duration")
    try:
        hours, minutes, seconds = (int(part) for part in text.split(":"))
    except ValueError:
        raise ValueError(f"'duration' must be HH:MM:SS, got {duration!r}") from None
    return hours * 3600 + minutes * 60 + seconds


def minutes_since_midnight(time: str) -> int:
    return _clock(time)


def decimal_hours(time: str) -> float:
    return round(_clock(time) / 60, 4)


def nearest_quarter_hour(time: str) -> str:
    return _hhmm(15 * round(_clock(time) / 15))


# -- birthdays ----------------------------------------------------------------------------------------------------
def _next_birthday(birth: str, on: str) -> dt.date:
    born, today = _day(birth, "birth"), _day(on, "on")
    for year in (today.year, today.year + 1):
        last = calendar.monthrange(year, born.month)[1]
        candidate = dt.date(year, born.month, min(born.day, last))
        if candidate >= today:
            return candidate
    raise ValueError("'on' is out of range")


def next_birthday(birth: str, on: str) -> str:
    return _next_birthday(birth, on).isoformat()


def days_until_birthday(birth: str, on: str) -> int:
    return (_next_birthday(birth, on) - _day(on, "on")).days


def zodiac_sign(date: str) -> str:
    day = _day(date)
    return next(sign for (month, first), sign in _ZODIAC if (day.month, day.day) < (month, first))


def chinese_zodiac(year: int) -> str:
    return _ANIMALS[(_year(year) - 1900) % 12]


def birthstone(month: int) -> str:
    return _BIRTHSTONES[_month(month) - 1]


def generation_of(year: int) -> str:
    born = _year(year)
    if born < _GENERATIONS[0][0]:
        raise ValueError(f"'year' must be {_GENERATIONS[0][0]} or later, got {born}")
    return [name for first, name in _GENERATIONS if born >= first][-1]


# -- calendar systems ---------------------------------------------------------------------------------------------
_JDN_OFFSET = 1721425  # the Julian day number of 0001-01-01 is 1721426


def julian_day_number(date: str) -> int:
    return _day(date).toordinal() + _JDN_OFFSET


def date_of_julian_day(day_number: int) -> str:
    number = check.integer(day_number, "day_number")
    try:
        return dt.date.fromordinal(number - _JDN_OFFSET).isoformat()
    except (ValueError, OverflowError):
        raise ValueError(f"'day_number' is outside the years 1 to 9999: {number}") from None


def iso_week_date(date: str) -> str:
    year, week, weekday = _day(date).isocalendar()
    return f"{year}-W{week:02d}-{weekday}"


def ordinal_date(date: str) -> str:
    day = _day(date)
    return f"{day.year}-{day.timetuple().tm_yday:03d}"


def julian_calendar_date(date: str) -> str:
    """The same day in the Julian calendar (the Gregorian date minus the calendars' gap that century)."""
    day = _day(date)
    century = day.year // 100 - (day.month <= 2 and day.year % 100 == 0)
    gap = century - century // 4 - 2
    julian = day - dt.timedelta(days=gap)
    return julian.isoformat()


def timestamp_of(datetime: str) -> int:
    try:
        moment = dt.datetime.fromisoformat(check.non_empty_string(datetime, "datetime"))
    except ValueError:
        raise ValueError(f"'datetime' must be an ISO date and time such as 2024-03-15T14:30, got {datetime!r}") from None
    return int(moment.replace(tzinfo=dt.UTC).timestamp())


def utc_date_of(timestamp: int) -> str:
    return dt.datetime.fromtimestamp(check.integer(timestamp, "timestamp"), tz=dt.UTC).date().isoformat()


def _month_weekday(rng: random.Random) -> dict[str, Any]:
    return {"year": draw_value("year", rng), "month": draw_value("month", rng), "weekday": draw_value("weekday", rng)}


def _ordered_span(rng: random.Random) -> dict[str, Any]:
    first, second = sorted((draw_value("date", rng), draw_value("date", rng)))
    return {"start": first, "end": second}


def _birth(rng: random.Random) -> dict[str, Any]:
    first, second = sorted((draw_value("date", rng), draw_value("date", rng)))
    return {"birth": first, "on": second}


def _time_span(rng: random.Random) -> dict[str, Any]:
    return {"start": draw_value("time", rng), "end": draw_value("time", rng)}


TOOLS: list[ToolSpec] = [
    tool("calendar_basics", "is_leap_year", is_leap_year, "Whether a year is a leap year in the Gregorian calendar.",
         [_YEAR], "flag", "whether {year} is a leap year"),
    tool("calendar_basics", "days_in_month", days_in_month, "How many days a month of a given year has.",
         [_YEAR, _MONTH], "count", "the number of days in {month} {year}"),
    tool("calendar_basics", "days_in_year", days_in_year, "How many days a year has (365 or 366).", [_YEAR], "count",
         "the number of days in the year {year}"),
    tool("calendar_basics", "day_of_year", day_of_year, "The day's position in its year (1 for 1 January).", [_DATE],
         "count", "the day of the year of {date}"),
    tool("calendar_basics", "iso_week", iso_week, "The ISO 8601 week number of a date (1 to 53).", [_DATE], "count",
         "the ISO week number of {date}"),
    tool("calendar_basics", "quarter_of", quarter_of, "The quarter of the year (1 to 4) a date falls in.", [_DATE],
         "count", "the quarter of the year {date} falls in"),
    tool("calendar_basics", "month_end", month_end, "The ISO date of the last day of the month a date falls in.",
         [_DATE], "date", "the last day of the month of {date}"),
    tool("calendar_basics", "weekday_number", weekday_number, "The ISO day-of-week number of a date (1 Monday to "
         "7 Sunday).", [_DATE], "count", "the ISO day-of-week number of {date}"),
    tool("calendar_basics", "friday_13ths", friday_13ths, "How many Friday the 13ths a year has.", [_YEAR], "count",
         "the number of Friday the 13ths in {year}"),
    tool("calendar_basics", "easter_sunday", easter_sunday, "The ISO date of (Western, Gregorian) Easter Sunday in "
         "a year.", [_YEAR], "date", "the date of Easter Sunday in {year}", refers="Easter Sunday {year}"),
    tool("calendar_basics", "days_left_in_year", days_left_in_year, "How many days remain in the year after a date "
         "(0 on 31 December).", [_DATE], "count", "the number of days left in the year after {date}"),
    tool("calendar_basics", "new_year_weekday", new_year_weekday, "The day of the week (English name) of 1 January of "
         "a year.", [_YEAR], "weekday", "the day of the week of New Year's Day {year}"),
    tool("calendar_basics", "first_weekday_in_month", first_weekday_in_month, "The ISO date of the first given day "
         "of the week in a month (the first Monday of March 2024).", [_YEAR, _MONTH, _WEEKDAY], "date",
         "the date of the first {weekday} in {month} {year}", draw=_month_weekday),
    tool("calendar_basics", "last_weekday_in_month", last_weekday_in_month, "The ISO date of the last given day of "
         "the week in a month (the last Friday of November 2024).", [_YEAR, _MONTH, _WEEKDAY], "date",
         "the date of the last {weekday} in {month} {year}", draw=_month_weekday),
    tool("calendar_basics", "weekday_count_in_month", weekday_count_in_month, "How many times a given day of the week "
         "occurs in a month (4 or 5).", [_YEAR, _MONTH, _WEEKDAY], "count",
         "the number of {weekday}s in {month} {year}", draw=_month_weekday),
    tool("date_arithmetic", "add_weeks", add_weeks, "The ISO date a number of weeks after a date (before, if "
         "negative).", [_DATE, ("weeks", "small_integer", "how many weeks to add")], "date",
         "the date {weeks} weeks after {date}"),
    tool("date_arithmetic", "add_years", add_years, "The ISO date a number of years after a date; 29 February becomes "
         "28 February in a common year.", [_DATE, ("years", "small_integer", "how many years to add")], "date",
         "the date {years} years after {date}"),
    tool("date_arithmetic", "months_between", months_between, "The number of whole months from start to end "
         "(negative when end comes first).", _SPAN, "count", "the number of whole months from {start} to {end}",
         draw=_ordered_span),
    tool("date_arithmetic", "next_weekday", next_weekday, "The ISO date of the first given day of the week strictly "
         "after a date.", [_DATE, _WEEKDAY], "date", "the date of the first {weekday} after {date}"),
    tool("date_arithmetic", "previous_weekday", previous_weekday, "The ISO date of the last given day of the week "
         "strictly before a date.", [_DATE, _WEEKDAY], "date", "the date of the last {weekday} before {date}"),
    tool("date_arithmetic", "weekend_days_between", weekend_days_between, "How many Saturdays and Sundays fall from "
         "start up to but not including end.", _SPAN, "count",
         "the number of weekend days from {start} up to {end}", draw=_ordered_span),
    tool("date_arithmetic", "is_weekend", is_weekend, "Whether a date is a Saturday or a Sunday.", [_DATE], "flag",
         "whether {date} falls on a weekend"),
    tool("date_arithmetic", "hours_between", hours_between, "The number of hours from midnight of start to midnight "
         "of end (negative when end comes first).", _SPAN, "time:h",
         "the number of hours from the start of {start} to the start of {end}", draw=_ordered_span),
    tool("time_of_day", "to_12_hour", to_12_hour, "A 24-hour time (14:30) on the 12-hour clock (2:30 PM).", [_TIME],
         "time12", "{time} on the 12-hour clock", refers="{time}"),
    tool("time_of_day", "to_24_hour", to_24_hour, "A 12-hour time (2:30 PM) on the 24-hour clock (14:30).",
         [("time", "time12", "a time such as 2:30 PM")], "time", "{time} on the 24-hour clock", refers="{time}"),
    tool("time_of_day", "minutes_between_times", minutes_between_times, "Minutes from one time of day to the next "
         "time the clock shows the other (past midnight if need be).", [("start", "time", "the start time, HH:MM"),
                                                                         ("end", "time", "the end time, HH:MM")],
         "time:min", "the number of minutes from {start} to {end}", draw=_time_span),
    tool("time_of_day", "add_minutes_to_time", add_minutes_to_time, "The time of day (HH:MM) a number of minutes "
         "after a given time, past midnight if need be.", [_TIME, ("minutes", "time:min", "minutes to add")], "time",
         "the time of day {minutes} after {time}"),
    tool("time_of_day", "seconds_to_clock", seconds_to_clock, "A number of seconds as a duration HH:MM:SS.",
         [("seconds", "time:s", "the number of seconds")], "clock", "{seconds} written as hours, minutes and seconds",
         refers="{seconds}"),
    tool("time_of_day", "clock_to_seconds", clock_to_seconds, "A duration HH:MM:SS as a number of seconds.",
         [("duration", "clock", "a duration such as 01:30:00")], "time:s", "the number of seconds in {duration}"),
    tool("time_of_day", "minutes_since_midnight", minutes_since_midnight, "How many minutes past midnight a time of "
         "day is.", [_TIME], "time:min", "the number of minutes after midnight at {time}"),
    tool("time_of_day", "decimal_hours", decimal_hours, "A time of day as decimal hours since midnight (14:30 is "
         "14.5).", [_TIME], "time:h", "{time} as decimal hours since midnight"),
    tool("time_of_day", "nearest_quarter_hour", nearest_quarter_hour, "A time of day rounded to the nearest quarter "
         "hour (HH:MM).", [_TIME], "time", "{time} rounded to the nearest quarter hour"),
    tool("birthdays", "next_birthday", next_birthday, "The ISO date of the next birthday on or after a given day "
         "(29 February birthdays fall on 28 February in common years).", _BIRTH, "date",
         "the date of the next birthday on or after {on} of someone born on {birth}", draw=_birth),
    tool("birthdays", "days_until_birthday", days_until_birthday, "How many days from a given day to the next "
         "birthday (0 on the birthday).", _BIRTH, "count",
         "the number of days from {on} until the next birthday of someone born on {birth}", draw=_birth),
    tool("birthdays", "zodiac_sign", zodiac_sign, "The Western zodiac sign of a birth date.", [_DATE], "label",
         "the zodiac sign of someone born on {date}"),
    tool("birthdays", "chinese_zodiac", chinese_zodiac, "The animal of the Chinese zodiac for a (Gregorian) year.",
         [_YEAR], "label", "the Chinese zodiac animal of {year}"),
    tool("birthdays", "birthstone", birthstone, "The traditional birthstone of a month.", [_MONTH], "label",
         "the birthstone of {month}"),
    tool("birthdays", "generation_of", generation_of, "The generation (Baby Boomers, Millennials...) of people born in "
         "a year.", [_YEAR], "label", "the generation of people born in {year}"),
    tool("calendar_systems", "julian_day_number", julian_day_number, "The Julian day number of a date (the days "
         "since 1 January 4713 BC in the proleptic Julian calendar).", [_DATE], "julian_day",
         "the Julian day number of {date}", refers="{date}"),
    tool("calendar_systems", "date_of_julian_day", date_of_julian_day, "The ISO (Gregorian) date of a Julian day "
         "number.", [("day_number", "julian_day", "the Julian day number")], "date",
         "the calendar date of {day_number}", refers="{day_number}"),
    tool("calendar_systems", "iso_week_date", iso_week_date, "A date in ISO week-date form, such as 2024-W11-5.",
         [_DATE], "label", "{date} in ISO week-date form"),
    tool("calendar_systems", "ordinal_date", ordinal_date, "A date in ISO ordinal form, year and day of the year, "
         "such as 2024-075.", [_DATE], "label", "{date} in ISO ordinal-date form"),
    tool("calendar_systems", "julian_calendar_date", julian_calendar_date, "The same day as a Gregorian date, in the "
         "Julian calendar (ISO form).", [_DATE], "label", "{date} in the Julian calendar"),
    tool("calendar_systems", "timestamp_of", timestamp_of, "The Unix timestamp (seconds since 1970-01-01 UTC) of a "
         "date and time read as UTC.", [("datetime", "datetime", "an ISO date and time, such as 2024-03-15T14:30")],
         "timestamp", "the Unix timestamp of {datetime} UTC", refers="{datetime} UTC"),
    tool("calendar_systems", "utc_date_of", utc_date_of, "The UTC calendar date (ISO) of a Unix timestamp.",
         [("timestamp", "timestamp", "seconds since 1970-01-01 UTC")], "date", "the UTC date of {timestamp}"),
]
