"""Calendar: everyday date computations over ISO dates (``YYYY-MM-DD`` strings).

What it tests: everyday computations whose tools come in look-alike groups. Days, whole weeks and
working days between two dates all take ``(start, end)``; adding days, subtracting days and adding
working days all take ``(date, days)``; so the schema alone does not say which is which. Working
days are Monday to Friday (no holidays). A date that is not an ISO date is a ``ValueError`` naming the
parameter, a count that is not a whole number a ``TypeError``. Every request needs one call, and the
other tools of its group return another answer for the same arguments, which the tests check.
"""

from __future__ import annotations

import calendar as _calendar
import datetime as dt
import random
from typing import Any

import dspy

from otbench.core.trajectory import Trajectory
from otbench.envs.toolkits.generation import Draft, Template, call, generate, one_call_answer
from otbench.envs.toolkits.metrics import answer_metric

FINGERPRINT = "cb93842775810b5c"
"""The digest of the generated requests (:func:`~otbench.envs.toolkits.generation.fingerprint`)."""
SIZES = {"train": 18, "test": 54}

_FIRST, _LAST = dt.date(2018, 1, 1), dt.date(2032, 12, 31)


def _date(name: str, value: object) -> dt.date:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be an ISO date string such as '2025-03-14', got {type(value).__name__}")
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{name} must be an ISO date such as '2025-03-14', got {value!r}") from None


def _whole(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be a whole number, got {type(value).__name__}")
    return value


def _shifted_by_weekdays(start: dt.date, count: int) -> dt.date:
    day, step = start, 1 if count >= 0 else -1
    for _ in range(abs(count)):
        day += dt.timedelta(days=step)
        while day.weekday() >= 5:
            day += dt.timedelta(days=step)
    return day


def days_between(start: str, end: str) -> int:
    """The number of days from start to end (negative when end comes first); both ISO dates."""
    return (_date("end", end) - _date("start", start)).days


def weeks_between(start: str, end: str) -> int:
    """The number of whole weeks from start to end (days divided by 7, rounded toward zero); both ISO dates."""
    days = (_date("end", end) - _date("start", start)).days
    return days // 7 if days >= 0 else -((-days) // 7)


def business_days_between(start: str, end: str) -> int:
    """The number of working days (Monday to Friday) from start up to but not including end; both ISO dates,
    end not before start."""
    first, last = _date("start", start), _date("end", end)
    if last < first:
        raise ValueError("end must not come before start")
    weeks, rest = divmod((last - first).days, 7)
    return weeks * 5 + sum((first + dt.timedelta(days=offset)).weekday() < 5 for offset in range(rest))


def add_days(date: str, days: int) -> str:
    """The ISO date that comes the given number of calendar days after date."""
    return (_date("date", date) + dt.timedelta(days=_whole("days", days))).isoformat()


def subtract_days(date: str, days: int) -> str:
    """The ISO date that comes the given number of calendar days before date."""
    return (_date("date", date) - dt.timedelta(days=_whole("days", days))).isoformat()


def add_business_days(date: str, days: int) -> str:
    """The ISO date that comes the given number of working days (Monday to Friday) after date, counting from the
    day after it."""
    return _shifted_by_weekdays(_date("date", date), _whole("days", days)).isoformat()


def add_months(date: str, months: int) -> str:
    """The ISO date the given number of calendar months after date; a day past the end of the target month
    becomes its last day (2025-01-31 plus 1 month is 2025-02-28)."""
    start, count = _date("date", date), _whole("months", months)
    index = start.year * 12 + start.month - 1 + count
    year, month = divmod(index, 12)
    return dt.date(year, month + 1, min(start.day, _calendar.monthrange(year, month + 1)[1])).isoformat()


def weekday_of(date: str) -> str:
    """The English name of the day of the week date falls on, such as 'Monday'."""
    return _calendar.day_name[_date("date", date).weekday()]


def age_on(birth_date: str, on_date: str) -> int:
    """How many full years old someone born on birth_date is on on_date; both ISO dates."""
    born, day = _date("birth_date", birth_date), _date("on_date", on_date)
    if day < born:
        raise ValueError("on_date must not come before birth_date")
    return day.year - born.year - ((day.month, day.day) < (born.month, born.day))


TOOLS = (days_between, weeks_between, business_days_between, add_days, subtract_days, add_business_days,
         add_months, weekday_of, age_on)


def _day(rng: random.Random, first: dt.date = _FIRST, last: dt.date = _LAST) -> dt.date:
    return first + dt.timedelta(days=rng.randint(0, (last - first).days))


def _span(tool: str, low: int, high: int) -> Any:
    def draw(rng: random.Random) -> Draft:
        start = _day(rng)
        end = start + dt.timedelta(days=rng.randint(low, high))
        return Draft({"a": start.isoformat(), "b": end.isoformat()},
                     [call(tool, start=start.isoformat(), end=end.isoformat())])
    return draw


def _shift(tool: str, low: int, high: int, parameter: str = "days") -> Any:
    def draw(rng: random.Random) -> Draft:
        day, count = _day(rng).isoformat(), rng.randint(low, high)
        return Draft({"d": day, "n": count}, [call(tool, **{"date": day, parameter: count})])
    return draw


def _weekday(rng: random.Random) -> Draft:
    day = _day(rng).isoformat()
    return Draft({"d": day}, [call("weekday_of", date=day)])


def _age(rng: random.Random) -> Draft:
    born = _day(rng, dt.date(1940, 1, 1), dt.date(2012, 12, 31)).isoformat()
    day = _day(rng, dt.date(2020, 1, 1)).isoformat()
    return Draft({"b": born, "d": day}, [call("age_on", birth_date=born, on_date=day)])


TEMPLATES = (
    Template(("How many days are there from {a} to {b}?",),
             ("My visa is valid from {a} until {b}. How many days is that?",
              "A project runs from {a} to {b}. How long is it in days?",
              "If today is {a}, how many days are left until {b}?"),
             _span("days_between", 15, 700)),
    Template(("How many full weeks are there between {a} and {b}?",),
             ("The course starts {a} and the exam is {b}. How many complete weeks do I have?",
              "Counting whole weeks only, how long is it from {a} to {b}?",
              "A lease runs from {a} to {b}; how many full weeks is that?"),
             _span("weeks_between", 15, 700)),
    Template(("How many working days are there from {a} up to {b}?",),
             ("I'm on leave from {a} and back on {b}. How many business days do I miss?",
              "Excluding weekends, how many days lie between {a} and {b}?",
              "How many weekdays (Monday to Friday) fall from {a} until {b}, not counting {b} itself?"),
             _span("business_days_between", 15, 200)),
    Template(("What date is {n} days after {d}?",),
             ("An invoice dated {d} is due in {n} days. On which date is it due?",
              "The milk was opened on {d} and keeps for {n} days. Until what date is it good?",
              "Starting on {d}, what is the date {n} days later?"),
             _shift("add_days", 2, 400)),
    Template(("What was the date {n} days before {d}?",),
             ("The wedding is on {d}. Invitations must go out {n} days earlier: on which date?",
              "Counting back {n} days from {d}, which date do I reach?",
              "A payment was recorded {n} days before {d}. What was its date?"),
             _shift("subtract_days", 2, 400)),
    Template(("What date is {n} working days after {d}?",),
             ("Delivery takes {n} business days from an order on {d}. When does it arrive?",
              "Skipping weekends, which date is {n} weekdays after {d}?",
              "A contract signed {d} must be countersigned within {n} working days. What is the deadline?"),
             _shift("add_business_days", 2, 60)),
    Template(("What date is {n} months after {d}?",),
             ("A subscription started on {d} renews after {n} months. On which date?",
              "My probation begins {d} and lasts {n} months. When does it end?",
              "Adding {n} calendar months to {d}, which date do I get?"),
             _shift("add_months", 1, 36, parameter="months")),
    Template(("What day of the week is {d}?",),
             ("Which weekday does {d} fall on?",
              "I have a meeting on {d}. What day of the week is that?",
              "Is {d} a Monday, a Tuesday...? Tell me the weekday."),
             _weekday),
    Template(("How old is someone born on {b} on {d}?",),
             ("My grandmother was born on {b}. How old will she be on {d}?",
              "A player born {b}: what is their age on {d}?",
              "Born on {b}, how many years old is a person on {d}?"),
             _age),
)

def examples() -> dict[str, list[dspy.Example]]:
    """The train and test requests."""
    return generate("calendar", TEMPLATES, SIZES, one_call_answer(TOOLS))


def metric(example: dspy.Example, trajectory: Trajectory) -> dspy.Prediction:
    """The date, count or weekday asked for among the outputs, in one call."""
    return answer_metric(example, trajectory)
