"""Finance: everyday money computations (interest, loans, tips, discounts, tax, shares, break-even, rates).

What it tests: numeric tools in look-alike groups whose inputs follow two conventions. Simple interest,
compound interest and the monthly payment of a loan all take ``(principal, rate, years)``; a tip, a
discounted price and a price with tax added all take ``(amount, percent)``; so the schema alone does
not say which is which. A yearly rate is a fraction (0.05 for 5%) while a percent is a percent (15
for 15%), and a value outside its range is a ``ValueError`` that names the parameter and its range
("rate must be a number between 0 and 1, got 5"), a value of the wrong type a ``TypeError`` in the
same words. Money is rounded to cents. Every request needs one call, and the other tools of its group
return another answer for the same arguments, which the tests check.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

import dspy

from otbench.core.trajectory import Trajectory
from otbench.envs.toolkits.generation import Draft, Template, call, generate, one_call_answer
from otbench.envs.toolkits.metrics import answer_metric

FINGERPRINT = "7c89d79b36cf06c9"
"""The digest of the generated requests (:func:`~otbench.envs.toolkits.generation.fingerprint`)."""
SIZES = {"train": 20, "test": 60}

_MAX_YEARS = 100
_MAX_PERIODS = 365


def _number(name: str, value: object, rule: str, accepts: Callable[[float], bool]) -> float:
    """``value`` as a float, else an error stating the parameter's ``rule``: the same words for a wrong type
    (``TypeError``) and a value out of range (``ValueError``), so either error teaches the rule."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be {rule}, got {type(value).__name__}")
    if not math.isfinite(value) or not accepts(value):
        raise ValueError(f"{name} must be {rule}, got {value!r}")
    return float(value)


def _positive(name: str, value: object) -> float:
    return _number(name, value, "a positive number", lambda number: number > 0)


def _not_negative(name: str, value: object) -> float:
    return _number(name, value, "a number of at least 0", lambda number: number >= 0)


def _fraction(name: str, value: object) -> float:
    return _number(name, value, "a number between 0 and 1", lambda number: 0 <= number <= 1)


def _percent(value: object) -> float:
    return _number("percent", value, "a number between 0 and 100", lambda number: 0 <= number <= 100)


def _years(value: object) -> float:
    return _number("years", value, f"a positive number of at most {_MAX_YEARS}", lambda number: 0 < number <= _MAX_YEARS)


def _whole(name: str, value: object, low: int, high: int | None = None) -> int:
    rule = f"a whole number from {low} to {high}" if high is not None else f"a whole number of at least {low}"
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be {rule}, got {type(value).__name__}")
    if value < low or (high is not None and value > high):
        raise ValueError(f"{name} must be {rule}, got {value!r}")
    return value


def simple_interest(principal: float, rate: float, years: float) -> float:
    """The simple interest earned on principal at a yearly rate over years, with no compounding: principal * rate *
    years, rounded to cents. rate is a fraction (0.05 for 5%)."""
    return round(_positive("principal", principal) * _fraction("rate", rate) * _years(years), 2)


def compound_interest(principal: float, rate: float, years: float, periods_per_year: int = 12) -> float:
    """The interest earned on principal at a yearly rate over years, compounded periods_per_year times a year
    (monthly, 12, unless given; 4 is quarterly, 1 yearly, 365 daily): the final balance minus principal, rounded to
    cents. rate is a fraction (0.05 for 5%)."""
    start, yearly, span = _positive("principal", principal), _fraction("rate", rate), _years(years)
    periods = _whole("periods_per_year", periods_per_year, 1, _MAX_PERIODS)
    return round(start * (1 + yearly / periods) ** (periods * span) - start, 2)


def monthly_loan_payment(principal: float, rate: float, years: float) -> float:
    """The fixed monthly payment that repays a loan of principal over years at a yearly rate, interest charged
    monthly on what is still owed (rate / 12 a month), rounded to cents. rate is a fraction (0.05 for 5%)."""
    owed, yearly, span = _positive("principal", principal), _fraction("rate", rate), _years(years)
    months, monthly = span * 12, yearly / 12
    if monthly == 0:
        return round(owed / months, 2)
    return round(owed * monthly / (1 - (1 + monthly) ** -months), 2)


def tip_amount(amount: float, percent: float) -> float:
    """The tip alone (not the bill plus the tip) on a bill of amount at percent (15 for 15%): amount * percent /
    100, rounded to cents."""
    return round(_not_negative("amount", amount) * _percent(percent) / 100, 2)


def discounted_price(amount: float, percent: float) -> float:
    """The price of amount after percent is taken off (20 for 20% off): amount * (1 - percent / 100), rounded to
    cents."""
    return round(_not_negative("amount", amount) * (1 - _percent(percent) / 100), 2)


def price_with_tax(amount: float, percent: float) -> float:
    """The price of amount with a sales tax of percent added (8.25 for 8.25%): amount * (1 + percent / 100),
    rounded to cents."""
    return round(_not_negative("amount", amount) * (1 + _percent(percent) / 100), 2)


def split_bill(total: float, people: int) -> float:
    """Each person's share of a bill of total split evenly between a whole number of people: total / people,
    rounded to cents."""
    return round(_not_negative("total", total) / _whole("people", people, 1), 2)


def break_even_units(fixed_costs: float, price: float, unit_cost: float) -> int:
    """The fewest whole units that must be sold at price each, when each unit costs unit_cost to make, for the
    sales to cover fixed_costs: fixed_costs / (price - unit_cost), rounded up. price must exceed unit_cost."""
    fixed = _not_negative("fixed_costs", fixed_costs)
    selling, making = _positive("price", price), _not_negative("unit_cost", unit_cost)
    if selling <= making:
        raise ValueError(f"price must be greater than unit_cost, got price {price!r} and unit_cost {unit_cost!r}")
    return math.ceil(round(fixed / (selling - making), 9))


def percent_change(old: float, new: float) -> float:
    """The change from old to new as a percentage of old: (new - old) / old * 100, negative for a fall, rounded to
    2 decimals."""
    before = _number("old", old, "a non-zero number", lambda number: number != 0)
    after = _number("new", new, "a number", lambda number: True)
    return round((after - before) / before * 100, 2)


def monthly_rate(annual_rate: float) -> float:
    """The monthly rate of a yearly rate spread evenly over 12 months: annual_rate / 12, both fractions (0.18 for
    18% a year gives 0.015), rounded to 6 decimals."""
    return round(_fraction("annual_rate", annual_rate) / 12, 6)


TOOLS = (simple_interest, compound_interest, monthly_loan_payment, tip_amount, discounted_price, price_with_tax,
         split_bill, break_even_units, percent_change, monthly_rate)


def _plain(value: float) -> int | float:
    """A number as a request writes it and a call passes it: 18, not 18.0."""
    return int(value) if float(value).is_integer() else value


def _cents(rng: random.Random, low: int, high: int) -> float:
    """An amount of money in [low, high] with its cents."""
    return rng.randint(low * 100, high * 100) / 100


def _yearly_percent(rng: random.Random) -> int | float:
    """A yearly rate as a percent, 2 to 12 in half points."""
    return _plain(rng.randint(4, 24) / 2)


_FREQUENCIES = {12: "monthly", 4: "quarterly", 1: "yearly", 365: "daily"}


def _interest(tool: str, years: tuple[int, ...], *, low: int, high: int, step: int, compounding: bool = False) -> Any:
    """A draw of (principal, yearly percent, years) for ``tool``; with ``compounding``, a frequency too (given to
    the call unless it is the default, monthly)."""
    def draw(rng: random.Random) -> Draft:
        principal, percent, span = rng.randrange(low, high + 1, step), _yearly_percent(rng), rng.choice(years)
        arguments: dict[str, Any] = {"principal": principal, "rate": round(percent / 100, 4), "years": span}
        slots: dict[str, Any] = {"P": principal, "p": percent, "y": span}
        if compounding:
            periods = rng.choice(list(_FREQUENCIES))
            slots["freq"] = _FREQUENCIES[periods]
            if periods != 12:
                arguments["periods_per_year"] = periods
        return Draft(slots, [call(tool, **arguments)])
    return draw


def _priced(tool: str, low: int, high: int, percents: tuple[float, ...]) -> Any:
    """A draw of an amount with cents in [low, high] and a percent among ``percents``."""
    def draw(rng: random.Random) -> Draft:
        amount, percent = _cents(rng, low, high), _plain(rng.choice(percents))
        return Draft({"a": f"{amount:.2f}", "x": percent}, [call(tool, amount=_plain(amount), percent=percent)])
    return draw


def _split(rng: random.Random) -> Draft:
    total, people = _cents(rng, 20, 1500), rng.randint(2, 12)
    return Draft({"a": f"{total:.2f}", "n": people}, [call("split_bill", total=_plain(total), people=people)])


def _break_even(rng: random.Random) -> Draft:
    fixed = rng.randrange(500, 50001, 50)
    cost = _cents(rng, 1, 40)
    price = round(cost + _cents(rng, 1, 30), 2)
    return Draft({"f": fixed, "s": f"{price:.2f}", "c": f"{cost:.2f}"},
                 [call("break_even_units", fixed_costs=fixed, price=_plain(price), unit_cost=_plain(cost))])


def _change(rng: random.Random) -> Draft:
    old = rng.randint(20, 3000)
    new = old
    while abs(new - old) < old / 50:  # a change of at least 2%
        new = round(old * rng.uniform(0.4, 1.9))
    return Draft({"o": old, "w": new}, [call("percent_change", old=old, new=new)])


def _monthly(rng: random.Random) -> Draft:
    percent = _plain(rng.randint(10, 360) / 10)
    return Draft({"p": percent}, [call("monthly_rate", annual_rate=round(percent / 100, 4))])


_TIPS = tuple(range(10, 26))
_DISCOUNTS = tuple(percent for percent in range(5, 71, 5) if percent != 50)  # half off: the discount equals the tip
_TAXES = tuple(step / 4 for step in range(12, 101))

TEMPLATES = (
    Template(("How much simple interest does ${P} earn at {p}% a year over {y} years?",
              "What is the simple interest on a deposit of {P} dollars at an annual rate of {p}% for {y} years?"),
             (("I lend my brother ${P} at {p}% simple interest per year. How much interest will he owe me after {y} "
               "years?"),
              "A bond pays simple interest of {p}% a year on €{P}. What interest does it pay in total over {y} years?",
              ("Simple interest only, no compounding: ${P} at {p}% per annum for {y} years. How much interest is "
               "that?")),
             _interest("simple_interest", tuple(range(1, 11)), low=500, high=50000, step=100)),
    Template(("How much interest does ${P} earn at {p}% a year compounded {freq} over {y} years?",
              ("A savings account pays {p}% per year, compounded {freq}. What interest will {P} dollars earn in {y} "
               "years?")),
             (("I put €{P} in a deposit at {p}% a year with interest added {freq}. How much interest have I earned "
               "after {y} years?"),
              "Compounding {freq} at an annual {p}%, how much interest does a ${P} investment make in {y} years?",
              ("My {y}-year certificate of deposit of ${P} pays {p}% a year, compounded {freq}. What interest will it "
               "have earned at maturity?")),
             _interest("compound_interest", tuple(range(2, 31)), low=500, high=50000, step=100, compounding=True)),
    Template(("What is the monthly payment on a ${P} loan at {p}% a year over {y} years?",
              ("I borrow {P} dollars at an annual rate of {p}% and repay it monthly over {y} years. How much is each "
               "payment?")),
             (("A car loan of €{P} at {p}% per year, paid off in monthly installments over {y} years: what is each "
               "installment?"),
              "We're taking a {y}-year mortgage of ${P} at {p}% interest. What will the monthly repayment be?",
              "How much do I pay each month to clear a ${P} loan in {y} years at {p}% yearly interest?"),
             _interest("monthly_loan_payment", (2, 3, 4, 5, 6, 7, 10, 15, 20, 25, 30), low=5000, high=300000,
                       step=500)),
    Template(("How much is a {x}% tip on a ${a} bill?",
              "What tip should I leave on ${a} if I tip {x}%?"),
             ("Dinner came to €{a} and the service was great, so I want to leave {x}%. How much is the tip?",
              "The taxi fare is ${a}. What is a {x} percent tip on that?",
              "Our bar tab is ${a}; how much do we add as a {x}% gratuity?"),
             _priced("tip_amount", 8, 250, _TIPS)),
    Template(("What does a ${a} item cost after a {x}% discount?",
              "A ${a} jacket is {x}% off. What is the sale price?"),
             (("The shop takes {x}% off everything this weekend. What will I pay for headphones that normally cost "
               "€{a}?"),
              "With a {x} percent coupon, what is the price of a ${a} order?",
              "Originally ${a}, now reduced by {x}%: what's the new price?"),
             _priced("discounted_price", 5, 900, _DISCOUNTS)),
    Template(("What is the total for a ${a} purchase with {x}% sales tax added?",
              "A ${a} item plus {x}% tax: what do I pay?"),
             ("The sticker says €{a} before VAT, and VAT is {x}%. What is the price including VAT?",
              "How much will a ${a} laptop cost once {x} percent sales tax is applied?",
              "Add {x}% tax to a ${a} repair bill. What is the total?"),
             _priced("price_with_tax", 5, 2500, _TAXES)),
    Template(("Split a ${a} bill evenly between {n} people. How much does each pay?",
              "Our dinner was ${a} for {n} of us. What is each person's share?"),
             ("{n} friends share a holiday rental that costs €{a}. How much does each one owe?",
              "The team lunch came to ${a}; if the {n} of us split it equally, what's one share?",
              "Dividing a ${a} grocery bill equally among {n} roommates, how much is each person's part?"),
             _split),
    Template((("Fixed costs are ${f}, each unit sells for ${s} and costs ${c} to make. How many units must be sold to "
               "break even?"),
              ("How many units do I need to sell to cover ${f} of fixed costs if I sell at ${s} each and each costs "
               "${c}?")),
             (("My bakery has €{f} in monthly fixed costs. A loaf sells for €{s} and costs €{c} in ingredients. How "
               "many loaves must I sell each month to break even?"),
              ("A print shop pays ${f} in rent and wages. Each poster sells for ${s} and costs ${c} to print. What's "
               "the break-even number of posters?"),
              ("At a price of ${s} per mug, a cost of ${c} per mug and ${f} of fixed costs, how many mugs must be "
               "sold before the business stops losing money?")),
             _break_even),
    Template(("By what percentage did a price change going from ${o} to ${w}?",
              "What is the percent change from {o} to {w}?"),
             ("My rent went from €{o} to €{w} a month. By how many percent did it change?",
              "Last year the shares closed at ${o}; this year at ${w}. What is the percentage change?",
              "Our monthly sales moved from ${o} to ${w}. Express the change as a percentage."),
             _change),
    Template(("What monthly rate corresponds to an annual rate of {p}%?",
              "Convert a yearly interest rate of {p}% to a monthly rate."),
             ("My credit card charges {p}% a year. What rate is that per month?",
              "A loan's APR is {p}%. What is its monthly rate?",
              "Interest on my overdraft is {p}% per annum. How much is that per month, as a rate?"),
             _monthly),
)

def examples() -> dict[str, list[dspy.Example]]:
    """The train and test requests."""
    return generate("finance", TEMPLATES, SIZES, one_call_answer(TOOLS))


def metric(example: dspy.Example, trajectory: Trajectory) -> dspy.Prediction:
    """The amount, count or rate asked for among the outputs, in one call."""
    return answer_metric(example, trajectory)
