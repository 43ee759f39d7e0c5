"""Money with rates in percent (5 for 5%): interest, loans, prices and investments, amounts rounded to cents.

The ``finance`` toolkit's tools (:mod:`otbench.envs.toolkits.finance`) sit in the same apps and take yearly rates
as fractions (0.05 for 5%): neighbours that look alike and follow another convention.
"""

from __future__ import annotations

import math
import random
from typing import Any

from otbench.envs.bfcl.functions import _checks as check
from otbench.envs.pool.kinds import draw_value
from otbench.envs.pool.spec import ToolSpec, tool

_PRINCIPAL = ("principal", "money", "the amount borrowed or invested")
_RATE = ("rate", "rate", "the yearly interest rate in percent, such as 5 for 5%")
_YEARS = ("years", "years", "the number of years")


def _rate(value: Any, name: str = "rate") -> float:
    rate = check.number(value, name)
    if not -100 < rate <= 1000:
        raise ValueError(f"'{name}' must be a percentage such as 5 for 5%, got {value!r}")
    return rate / 100


def _cents(value: float) -> float:
    return round(value, 2)


def _monthly_payment(principal: float, rate: float, years: float) -> float:
    months = round(12 * years)
    monthly = rate / 12
    return principal / months if monthly == 0 else principal * monthly / (1 - (1 + monthly) ** -months)


# -- interest -----------------------------------------------------------------------------------------------------
def effective_annual_rate(rate: float, periods: int) -> float:
    count = check.integer(periods, "periods")
    if count < 1:
        raise ValueError(f"'periods' must be at least 1, got {count}")
    return round(100 * ((1 + _rate(rate) / count) ** count - 1), 4)


def continuous_balance(principal: float, rate: float, years: float) -> float:
    return _cents(check.positive(principal, "principal") * math.exp(_rate(rate) * check.number(years, "years")))


def rule_of_72(rate: float) -> float:
    return round(72 / (100 * _rate(rate)), 2)


def doubling_time(rate: float) -> float:
    yearly = _rate(rate)
    if yearly <= 0:
        raise ValueError("'rate' must be positive for money to double")
    return round(math.log(2) / math.log1p(yearly), 2)


def real_interest_rate(rate: float, inflation: float) -> float:
    return round(100 * ((1 + _rate(rate)) / (1 + _rate(inflation, "inflation")) - 1), 4)


def interest_for_days(principal: float, rate: float, days: int) -> float:
    return _cents(check.positive(principal, "principal") * _rate(rate) * check.non_negative_integer(days, "days") / 365)


# -- loans --------------------------------------------------------------------------------------------------------
def total_interest_paid(principal: float, rate: float, years: int) -> float:
    owed, yearly, span = check.positive(principal, "principal"), _rate(rate), check.positive(years, "years")
    return _cents(_monthly_payment(owed, yearly, span) * round(12 * span) - owed)


def total_repaid(principal: float, rate: float, years: int) -> float:
    owed, yearly, span = check.positive(principal, "principal"), _rate(rate), check.positive(years, "years")
    return _cents(_monthly_payment(owed, yearly, span) * round(12 * span))


def remaining_balance(principal: float, rate: float, years: int, payments_made: int) -> float:
    owed, yearly, span = check.positive(principal, "principal"), _rate(rate), check.positive(years, "years")
    made = check.non_negative_integer(payments_made, "payments_made")
    payment, monthly = _monthly_payment(owed, yearly, span), yearly / 12
    if monthly == 0:
        return _cents(max(0.0, owed - payment * made))
    return _cents(max(0.0, owed * (1 + monthly) ** made - payment * ((1 + monthly) ** made - 1) / monthly))


def loan_to_value(loan: float, value: float) -> float:
    worth = check.positive(value, "value")
    return round(100 * check.number(loan, "loan") / worth, 2)


def affordable_loan(payment: float, rate: float, years: int) -> float:
    monthly, months = _rate(rate) / 12, round(12 * check.positive(years, "years"))
    amount = check.positive(payment, "payment")
    return _cents(amount * months if monthly == 0 else amount * (1 - (1 + monthly) ** -months) / monthly)


def payoff_months(principal: float, rate: float, payment: float) -> int:
    owed, monthly, amount = check.positive(principal, "principal"), _rate(rate) / 12, check.positive(payment, "payment")
    if amount <= owed * monthly:
        raise ValueError("'payment' must exceed the monthly interest, or the loan is never repaid")
    months = owed / amount if monthly == 0 else -math.log(1 - owed * monthly / amount) / math.log1p(monthly)
    return math.ceil(round(months, 9))


# -- prices -------------------------------------------------------------------------------------------------------
def margin_percent(cost: float, price: float) -> float:
    sale = check.positive(price, "price")
    return round(100 * (sale - check.number(cost, "cost")) / sale, 2)


def price_before_tax(gross: float, rate: float) -> float:
    return _cents(check.number(gross, "gross") / (1 + _rate(rate)))


def tax_in_price(gross: float, rate: float) -> float:
    total = check.number(gross, "gross")
    return _cents(total - total / (1 + _rate(rate)))


def price_before_discount(price: float, discount: float) -> float:
    off = _rate(discount, "discount")
    if off >= 1:
        raise ValueError("'discount' must be below 100")
    return _cents(check.number(price, "price") / (1 - off))


def share_with_tip(total: float, tip: float, people: int) -> float:
    count = check.integer(people, "people")
    if count < 1:
        raise ValueError(f"'people' must be at least 1, got {count}")
    return _cents(check.number(total, "total") * (1 + _rate(tip, "tip")) / count)


def successive_discounts(price: float, first: float, second: float) -> float:
    return _cents(check.number(price, "price") * (1 - _rate(first, "first")) * (1 - _rate(second, "second")))


# -- investments --------------------------------------------------------------------------------------------------
def cagr(start: float, end: float, years: float) -> float:
    first, last, span = check.positive(start, "start"), check.positive(end, "end"), check.positive(years, "years")
    return round(100 * ((last / first) ** (1 / span) - 1), 4)


def present_value(future: float, rate: float, years: float) -> float:
    return _cents(check.number(future, "future") / (1 + _rate(rate)) ** check.number(years, "years"))


def annuity_future_value(payment: float, rate: float, years: int) -> float:
    yearly, count = _rate(rate), check.non_negative_integer(years, "years")
    amount = check.number(payment, "payment")
    return _cents(amount * count if yearly == 0 else amount * ((1 + yearly) ** count - 1) / yearly)


def net_present_value(rate: float, cash_flows: list[float]) -> float:
    yearly = _rate(rate)
    flows = check.number_list(cash_flows, "cash_flows", min_length=1)
    return _cents(math.fsum(flow / (1 + yearly) ** year for year, flow in enumerate(flows)))


def _loan(rng: random.Random) -> dict[str, Any]:
    return {"principal": round(rng.uniform(1000, 400000), -2), "rate": round(rng.uniform(1, 12), 1),
            "years": rng.randint(1, 30)}


def _balance(rng: random.Random) -> dict[str, Any]:
    loan = _loan(rng)
    return {**loan, "payments_made": rng.randint(1, 12 * loan["years"] - 1)}


def _payoff(rng: random.Random) -> dict[str, Any]:
    principal, rate = round(rng.uniform(1000, 50000), -2), round(rng.uniform(1, 12), 1)
    return {"principal": principal, "rate": rate, "payment": round(principal * (rate / 1200 + rng.uniform(0.01,
                                                                                                          0.08)), 2)}


def _cost_price(rng: random.Random) -> dict[str, Any]:
    cost = round(rng.uniform(5, 500), 2)
    return {"cost": cost, "price": round(cost * rng.uniform(1.05, 2.5), 2)}


def _growth(rng: random.Random) -> dict[str, Any]:
    start = round(rng.uniform(1000, 50000), 2)
    return {"start": start, "end": round(start * rng.uniform(0.6, 4), 2), "years": rng.randint(2, 20)}


def _flows(rng: random.Random) -> dict[str, Any]:
    return {"rate": draw_value("rate", rng),
            "cash_flows": [-round(rng.uniform(1000, 10000))] + [round(rng.uniform(200, 4000)) for _ in range(4)]}


def _two_discounts(rng: random.Random) -> dict[str, Any]:
    return {"price": draw_value("money", rng), "first": rng.randint(5, 40), "second": rng.randint(5, 40)}


TOOLS: list[ToolSpec] = [
    tool("interest", "effective_annual_rate", effective_annual_rate, "The effective yearly rate in percent of a "
         "nominal yearly rate compounded a number of times a year, rounded to 4 decimals.",
         [_RATE, ("periods", "small_integer", "how many times a year interest is compounded")], "amount",
         "the effective annual rate in percent of {rate} compounded {periods} times a year"),
    tool("interest", "continuous_balance", continuous_balance, "The balance of an amount growing at a yearly rate "
         "compounded continuously, after some years.", [_PRINCIPAL, _RATE, _YEARS], "money",
         "the balance after {years} of {principal} at {rate} compounded continuously"),
    tool("interest", "rule_of_72", rule_of_72, "Years to double money by the rule of 72 (72 divided by the rate in "
         "percent).", [_RATE], "amount", "the years to double money at {rate} by the rule of 72"),
    tool("interest", "doubling_time", doubling_time, "Exact years for money to double at a yearly rate compounded "
         "yearly, rounded to 2 decimals.", [_RATE], "amount", "the exact years for money to double at {rate}"),
    tool("interest", "real_interest_rate", real_interest_rate, "The real yearly interest rate in percent after "
         "inflation (Fisher's exact formula).", [_RATE, ("inflation", "rate", "the yearly inflation in percent")],
         "amount", "the real interest rate in percent of {rate} with inflation of {inflation}"),
    tool("interest", "interest_for_days", interest_for_days, "Simple interest on an amount at a yearly rate for a "
         "number of days (a 365-day year).", [_PRINCIPAL, _RATE, ("days", "integer", "the number of days")], "money",
         "the simple interest on {principal} at {rate} for {days} days"),
    tool("loans", "total_interest_paid", total_interest_paid, "The total interest paid over a loan repaid in equal "
         "monthly payments.", [_PRINCIPAL, _RATE, _YEARS], "money",
         "the total interest paid on a loan of {principal} at {rate} over {years}", draw=_loan),
    tool("loans", "total_repaid", total_repaid, "The total of all monthly payments of a loan repaid in equal monthly "
         "payments.", [_PRINCIPAL, _RATE, _YEARS], "money",
         "the total repaid on a loan of {principal} at {rate} over {years}", draw=_loan),
    tool("loans", "remaining_balance", remaining_balance, "What is still owed on a loan repaid in equal monthly "
         "payments after a number of payments.", [_PRINCIPAL, _RATE, _YEARS,
                                                  ("payments_made", "integer", "how many monthly payments were made")],
         "money", "the balance still owed on a loan of {principal} at {rate} over {years} after {payments_made} "
         "monthly payments", draw=_balance),
    tool("loans", "loan_to_value", loan_to_value, "The loan-to-value ratio in percent (the loan over the value of "
         "what secures it).", [("loan", "money", "the loan amount"), ("value", "money", "the property's value")],
         "amount", "the loan-to-value ratio of a loan of {loan} on a property worth {value}"),
    tool("loans", "affordable_loan", affordable_loan, "The largest loan a monthly payment repays at a yearly rate "
         "over some years.", [("payment", "money", "the monthly payment"), _RATE, _YEARS], "money",
         "the largest loan that {payment} a month repays at {rate} over {years}"),
    tool("loans", "payoff_months", payoff_months, "How many monthly payments of a fixed amount repay a loan at a "
         "yearly rate (the last one may be smaller).", [_PRINCIPAL, _RATE, ("payment", "money", ("the monthly "
                                                                              "payment"))], "count",
         "the number of months to repay {principal} at {rate} paying {payment} a month", draw=_payoff),
    tool("pricing", "margin_percent", margin_percent, "The profit margin in percent of the selling price.",
         [("cost", "money", "what the item cost"), ("price", "money", "the selling price")], "amount",
         "the profit margin in percent when an item costing {cost} sells for {price}", draw=_cost_price),
    tool("pricing", "price_before_tax", price_before_tax, "The price before a sales tax or VAT of a given rate was "
         "added.", [("gross", "money", "the price with tax"), ("rate", "percent", "the tax rate in percent")],
         "money", "the price before tax of {gross} including {rate} tax"),
    tool("pricing", "tax_in_price", tax_in_price, "The tax contained in a price that includes a sales tax or VAT of a "
         "given rate.", [("gross", "money", "the price with tax"), ("rate", "percent", "the tax rate in percent")],
         "money", "the tax included in {gross} at a rate of {rate}"),
    tool("pricing", "price_before_discount", price_before_discount, "The original price of an item sold at a "
         "percentage discount.", [("price", "money", "the discounted price"), ("discount", "percent", ("the "
                                                                                 "discount in percent"))], "money",
         "the price before a {discount} discount of an item now selling for {price}"),
    tool("pricing", "share_with_tip", share_with_tip, "Each person's share of a bill after a tip is added and it is "
         "split evenly.", [("total", "money", "the bill"), ("tip", "percent", "the tip in percent"),
                           ("people", "people", "how many people share it")], "money",
         "each person's share of a {total} bill with a {tip} tip split between {people}"),
    tool("pricing", "successive_discounts", successive_discounts, "The price after two percentage discounts applied "
         "one after the other.", [("price", "money", "the original price"), ("first", "percent", ("the first "
                                                                              "discount in percent")),
                                  ("second", "percent", "the second discount in percent")], "money",
         "the price of {price} after a {first} discount and then a {second} discount", draw=_two_discounts),
    tool("investing", "cagr", cagr, "The compound annual growth rate in percent from a start value to an end value "
         "over some years.", [("start", "money", "the value at the start"), ("end", "money", "the value at the end"),
                              _YEARS], "amount", "the compound annual growth rate in percent from {start} to {end} "
         "over {years}", draw=_growth),
    tool("investing", "present_value", present_value, "Today's value of an amount received after some years, "
         "discounted at a yearly rate.", [("future", "money", "the future amount"), _RATE, _YEARS], "money",
         "the present value of {future} received in {years} discounted at {rate}"),
    tool("investing", "annuity_future_value", annuity_future_value, "The value after some years of equal payments "
         "made at the end of each year, growing at a yearly rate.", [("payment", "money", "the yearly payment"),
                                                                     _RATE, _YEARS], "money",
         "the value after {years} of paying {payment} at the end of each year at {rate}"),
    tool("investing", "net_present_value", net_present_value, "The net present value of yearly cash flows (the first "
         "now, usually negative) at a yearly discount rate.", [_RATE, ("cash_flows", "numbers", ("the cash flows, "
                                                                        "year 0 first"))], "money",
         "the net present value at {rate} of the cash flows {cash_flows}", draw=_flows),
]
