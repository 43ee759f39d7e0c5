"""Interest, investment, inflation, mortgage and order-total calculations.

Rates are fractions (0.05 for 5%) except where BFCL calls a parameter a percentage
(``apply_discount``). Amounts are returned unrounded: rounding to cents is a display choice.
"""

from __future__ import annotations

import math

from . import _checks as check


def calculate_future_value(present_value: float, interest_rate: float, periods: int) -> float:
    """Future value with compound interest: present_value * (1 + interest_rate) ** periods."""
    value = check.number(present_value, "present_value")
    rate = check.number(interest_rate, "interest_rate")
    return float(value * (1 + rate) ** check.non_negative_integer(periods, "periods"))


def calculate_investment_value(
    initial_investment: int,
    annual_contribution: int,
    years: int,
    annual_return: float,
    inflation_rate: list[float],
    adjust_for_inflation: bool = True,
) -> float:
    """Value of an investment after ``years`` of returns and end-of-year contributions.

    Each year the value grows by ``annual_return``, then ``annual_contribution`` is added, then
    (when ``adjust_for_inflation``) the value is deflated by that year's inflation rate, which
    gives the result in today's money. ``inflation_rate`` needs a rate for every year.
    """
    value = float(check.number(initial_investment, "initial_investment"))
    contribution = check.number(annual_contribution, "annual_contribution")
    count = check.non_negative_integer(years, "years")
    growth = check.number(annual_return, "annual_return")
    rates = check.number_list(inflation_rate, "inflation_rate")
    adjust = check.boolean(adjust_for_inflation, "adjust_for_inflation")
    if adjust and len(rates) < count:
        raise ValueError(f"'inflation_rate' needs one rate per year: got {len(rates)} rate(s) for {count} year(s)")
    for year in range(count):
        value = value * (1 + growth) + contribution
        if adjust:
            value /= 1 + rates[year]
    return value


def mortgage_calculator(loan_amount: float, interest_rate: float, loan_period: int) -> float:
    """Monthly payment of a fully amortising loan.

    ``interest_rate`` is the annual rate as a fraction, ``loan_period`` the term in years;
    payment = P*r / (1 - (1+r)**-n) with r the monthly rate and n the number of months.
    """
    principal = check.number(loan_amount, "loan_amount")
    annual_rate = check.number(interest_rate, "interest_rate")
    months = round(check.positive(loan_period, "loan_period") * 12)
    if months < 1:
        raise ValueError(f"'loan_period' must be at least one month, got {loan_period!r} years")
    monthly_rate = annual_rate / 12
    if monthly_rate == 0:
        return principal / months
    return principal * monthly_rate / (1 - (1 + monthly_rate) ** -months)


def compound_interest(principal: int, rate: float, times_compounded: int, years: int) -> float:
    """Interest earned (not the final balance): P * (1 + rate/n) ** (n*years) - P."""
    amount = check.number(principal, "principal")
    annual_rate = check.number(rate, "rate")
    per_year = check.integer(times_compounded, "times_compounded")
    if per_year < 1:
        raise ValueError(f"'times_compounded' must be at least 1, got {per_year}")
    duration = check.number(years, "years")
    return amount * (1 + annual_rate / per_year) ** (per_year * duration) - amount


def inflation_adjustment(amount: float, inflation_rate: float, years: int) -> float:
    """Today's purchasing power of ``amount`` received after ``years`` of constant inflation.

    amount / (1 + inflation_rate) ** years.
    """
    value = check.number(amount, "amount")
    rate = check.number(inflation_rate, "inflation_rate")
    if rate <= -1:
        raise ValueError(f"'inflation_rate' must be greater than -1, got {rate!r}")
    return value / (1 + rate) ** check.non_negative_integer(years, "years")


def adjust_for_inflation(investment_value: float, inflation_rates: list[float]) -> float:
    """``investment_value`` deflated by each year's inflation rate: value / prod(1 + rate)."""
    value = check.number(investment_value, "investment_value")
    rates = check.number_list(inflation_rates, "inflation_rates")
    if any(rate <= -1 for rate in rates):
        raise ValueError("every rate in 'inflation_rates' must be greater than -1")
    return value / math.prod(1 + rate for rate in rates)


def calculate_interest_rate(principal: float, rate: float, time: float) -> float:
    """Simple interest on ``principal`` at ``rate`` per period for ``time`` periods: P * rate * time."""
    return check.number(principal, "principal") * check.number(rate, "rate") * check.number(time, "time")


def apply_discount(total: float, discount: float) -> float:
    """``total`` after a percentage discount (discount=15 means 15% off): total * (1 - discount/100)."""
    price = check.number(total, "total")
    percent = check.number(discount, "discount")
    if not 0 <= percent <= 100:
        raise ValueError(f"'discount' is a percentage and must be between 0 and 100, got {percent!r}")
    return price * (1 - percent / 100)


def _order_total(quantities: list[int], quantities_name: str, prices: list[float], prices_name: str) -> float:
    counts = check.integer_list(quantities, quantities_name)
    costs = check.number_list(prices, prices_name)
    check.same_length(counts, quantities_name, costs, prices_name)
    if any(count < 0 for count in counts):
        raise ValueError(f"'{quantities_name}' must not contain negative quantities")
    return sum(count * cost for count, cost in zip(counts, costs))


def calculate_total(quantities: list[int], prices: list[float]) -> int | float:
    """Order total: the sum of quantities[i] * prices[i]."""
    return _order_total(quantities, "quantities", prices, "prices")


def order_food(item: list[str], quantity: list[int], price: list[float]) -> int | float:
    """Places a food order and returns its total price: the sum of quantity[i] * price[i].

    Any item name is accepted (orders for items outside BFCL's example menu still go through).
    """
    names = check.string_list(item, "item")
    quantities = check.sequence(quantity, "quantity")
    check.same_length(names, "item", quantities, "quantity")
    return _order_total(quantities, "quantity", price, "price")
