"""Tools the project already has, placed in the pool's apps: BFCL's executable functions (with BFCL's own docs, as
Wild ships them) and the ``calendar`` and ``finance`` toolkits (with their docstrings).

A function whose arithmetic another source's function already does is left out, so no function is in the pool
twice: BFCL's ``compound_interest``, ``mortgage_calculator``, ``calculate_interest_rate`` and ``apply_discount``
compute what the finance toolkit's ``compound_interest``, ``monthly_loan_payment``, ``simple_interest`` and
``discounted_price`` compute, and ``get_director_by_movie_name`` is ``get_movie_director``. Functions that return
records (weather, holidays, stock history) or act on a booking are left out too: their tasks would have no single
answer to check.
"""

from __future__ import annotations

import inspect
import json
import random
from collections.abc import Callable
from functools import cache
from typing import Any

from otbench.envs.bfcl.functions import FUNCTIONS, geo_standins, media_standins
from otbench.envs.pool.kinds import draw_value
from otbench.envs.pool.spec import Param, ToolSpec, tool
from otbench.envs.toolkits import calendar, finance
from otbench.envs.wild.generate import DATA_DIRECTORY, TOOLSET_FILE

_EXPRESSIONS = ("x**2", "3*x**2 + 1", "x**3 - 2*x", "2*x**3 + x**2", "x**4 - 5*x", "7*x + 3", "x**2 - 4*x + 4",
                "5*x**2 - 3*x + 2")


@cache
def _bfcl_docs() -> dict[str, dict[str, Any]]:
    """BFCL's docs of its functions, as the committed Wild toolset holds them (BFCL ships no implementations)."""
    functions = json.loads((DATA_DIRECTORY / TOOLSET_FILE).read_text())["functions"]
    return {function["name"]: function for function in functions}


def _bfcl(app: str, name: str, kinds: dict[str, str], returns: str, phrase: str, *, refers: str = "",
          draw: Callable[[random.Random], dict[str, Any]] | None = None) -> ToolSpec:
    """BFCL's function ``name`` under BFCL's own description and parameter meanings, with the kinds given."""
    docs = _bfcl_docs()[name]
    properties, required = docs["parameters"]["properties"], set(docs["parameters"].get("required", []))
    params = tuple(Param(parameter, kinds[parameter], str(spec.get("description", "")), parameter in required)
                   for parameter, spec in properties.items())
    return ToolSpec(f"bfcl_{name}", app, FUNCTIONS[name], str(docs["description"]), params, returns, phrase, refers,
                    draw, schema=docs)


def _toolkit(app: str, function: Callable[..., Any], kinds: dict[str, tuple[str, str]], returns: str, phrase: str,
             *, draw: Callable[[random.Random], dict[str, Any]] | None = None) -> ToolSpec:
    """A toolkit function under its docstring; ``kinds``: each parameter's kind and meaning."""
    signature = inspect.signature(function)
    params = [(name, *kinds[name]) for name, p in signature.parameters.items() if p.default is p.empty]
    optional = [(name, *kinds[name]) for name, p in signature.parameters.items() if p.default is not p.empty]
    return tool(app, f"toolkit_{function.__name__}", function, inspect.getdoc(function) or "", params, returns, phrase,
                draw=draw, optional=optional)


def _span(first: str, second: str) -> Callable[[random.Random], dict[str, Any]]:
    def draw(rng: random.Random) -> dict[str, Any]:
        start, end = sorted((draw_value("date", rng), draw_value("date", rng)))
        return {first: start, second: end}

    return draw


def _trials(rng: random.Random) -> dict[str, Any]:
    n = rng.randint(4, 30)
    return {"n": n, "k": rng.randint(0, n), "p": round(rng.uniform(0.05, 0.95), 2)}


def _vectors(rng: random.Random) -> dict[str, Any]:
    size = rng.randint(3, 5)
    return {"vectorA": [rng.randint(-9, 9) for _ in range(size)], "vectorB": [rng.randint(-9, 9) for _ in range(size)]}


def _points(rng: random.Random) -> dict[str, Any]:
    size = rng.randint(4, 7)
    xs = rng.sample(range(30), size)
    return {"x": xs, "y": [rng.randint(0, 60) for _ in range(size)]}


def _regression(rng: random.Random) -> dict[str, Any]:
    return {**_points(rng), "point": rng.randint(0, 40)}


def _line(rng: random.Random) -> dict[str, Any]:
    return {"slope": rng.randint(-10, 10), "intercept": rng.randint(-50, 50), "x": rng.randint(-20, 20)}


def _polygon(rng: random.Random) -> dict[str, Any]:
    corners = rng.choice(([[0, 0], [4, 0], [4, 3]], [[0, 0], [6, 0], [6, 4], [0, 4]], [[1, 1], [7, 2], [5, 8], [0, 5]],
                          [[0, 0], [10, 0], [12, 6], [5, 11], [-2, 6]], [[2, 3], [9, 3], [9, 9]]))
    shift = rng.randint(-5, 5)
    return {"vertices": [[x + shift, y] for x, y in corners]}


def _scatter(rng: random.Random) -> dict[str, Any]:
    return {"points": [[rng.randint(0, 5), rng.randint(0, 5)] for _ in range(rng.randint(4, 7))]}


def _plane_points(rng: random.Random) -> dict[str, Any]:
    return {"pointA": [rng.randint(-20, 20), rng.randint(-20, 20)], "pointB": [rng.randint(-20, 20), rng.randint(-20,
                                                                                                                  20)]}


def _derivative(rng: random.Random) -> dict[str, Any]:
    return {"function": rng.choice(_EXPRESSIONS), "x": rng.randint(-5, 5)}


def _temperature(rng: random.Random) -> dict[str, Any]:
    source, target = rng.sample(("celsius", "fahrenheit"), 2)
    return {"temperature": rng.randint(-30, 110), "unit_from": source, "unit_to": target}


def _exchange(rng: random.Random) -> dict[str, Any]:
    source, target = rng.sample(("USD", "EUR", "GBP", "JPY", "CNY", "AUD", "CAD", "CHF", "INR", "BRL"), 2)
    return {"amount": draw_value("money", rng), "from_currency": source, "to_currency": target}


def _covid(rng: random.Random) -> dict[str, Any]:
    return {"country": rng.choice(sorted(media_standins._COVID)).title()}


def _order(rng: random.Random) -> dict[str, Any]:
    size = rng.randint(2, 4)
    return {"quantities": [rng.randint(1, 6) for _ in range(size)],
            "prices": [round(rng.uniform(1, 60), 2) for _ in range(size)]}


def _inflation_rates(rng: random.Random) -> dict[str, Any]:
    return {"investment_value": draw_value("money", rng),
            "inflation_rates": [round(rng.uniform(0.01, 0.08), 3) for _ in range(rng.randint(2, 5))]}


def _coordinates(rng: random.Random) -> dict[str, Any]:
    latitude, longitude, _ = geo_standins._CITIES[rng.choice(sorted(geo_standins._CITIES))]
    return {"long": str(longitude), "lat": str(latitude)}


def _body(rng: random.Random) -> dict[str, Any]:
    return {"weight": rng.randint(45, 120), "height": rng.randint(150, 200), "age": rng.randint(18, 80),
            "gender": rng.choice(("male", "female"))}


def _bills(rng: random.Random) -> dict[str, Any]:
    return {"fixed_costs": round(rng.uniform(500, 20000)), "price": rng.randint(20, 80), "unit_cost": rng.randint(5, 19)}


def _change(rng: random.Random) -> dict[str, Any]:
    return {"old": draw_value("money", rng), "new": draw_value("money", rng)}


def _arrangement(rng: random.Random) -> dict[str, Any]:
    n = rng.randint(3, 15)
    return {"n": n, "k": rng.randint(1, n)}


_MONEY = ("money", "the amount")
_FRACTION = ("rate_fraction", "the yearly rate as a fraction, 0.05 for 5%")

TOOLS: list[ToolSpec] = [
    _bfcl("combinatorics", "calculate_permutations", {"n": "small_integer", "k": "small_integer"}, "integer",
          "the number of ordered arrangements of {k} items taken from {n}",
          draw=_arrangement),
    _bfcl("combinatorics", "math_factorial", {"n": "small_integer"}, "integer", "the factorial of {n}"),
    _bfcl("combinatorics", "calc_binomial_probability", {"n": "small_integer", "k": "small_integer", "p": "number"},
          "amount", "the probability of exactly {k} successes in {n} trials when each succeeds with probability {p}",
          draw=_trials),
    _bfcl("number_theory", "math_gcd", {"a": "integer", "b": "integer"}, "integer",
          "the greatest common divisor of {a} and {b}",
          draw=lambda rng: {"a": rng.randint(2, 5000), "b": rng.randint(2, 5000)}),
    _bfcl("number_theory", "math_lcm", {"a": "integer", "b": "integer"}, "integer",
          "the least common multiple of {a} and {b}",
          draw=lambda rng: {"a": rng.randint(2, 500), "b": rng.randint(2, 500)}),
    _bfcl("number_theory", "get_prime_factors", {"number": "integer"}, "series",
          "the prime factors of {number}, with repetition"),
    _bfcl("sequences", "get_fibonacci_number", {"n": "small_integer"}, "integer",
          "Fibonacci number {n}, counting 0 as the first"),
    _bfcl("statistics", "calculate_mean", {"numbers": "numbers"}, "amount", "the mean of {numbers}"),
    _bfcl("statistics", "calculate_standard_deviation", {"numbers": "numbers"}, "amount",
          "the population standard deviation of {numbers}"),
    _bfcl("statistics", "calculate_cosine_similarity", {"vectorA": "series", "vectorB": "series"}, "amount",
          "the cosine similarity of the vectors {vectorA} and {vectorB}", draw=_vectors),
    _bfcl("regression", "calculate_slope", {"x": "series", "y": "series"}, "amount",
          "the slope of the least-squares line through the points with x values {x} and y values {y}", draw=_points),
    _bfcl("regression", "linear_regression", {"x": "series", "y": "series", "point": "integer"}, "amount",
          "the value at x = {point} of the least-squares line through the points with x values {x} and y values {y}",
          draw=_regression),
    _bfcl("regression", "predict_value", {"slope": "integer", "intercept": "integer", "x": "integer"}, "amount",
          "the value at x = {x} of the line with slope {slope} and intercept {intercept}", draw=_line),
    _bfcl("calculus", "estimate_derivative", {"function": "label", "x": "integer"}, "amount",
          "the derivative of {function} at x = {x}", draw=_derivative),
    _bfcl("mechanics", "calculate_density", {"mass": "mass:kg", "volume": "volume:m3"}, "density:kg_m3",
          "the density of an object of {mass} taking up {volume}"),
    _bfcl("mechanics", "calculate_displacement", {"initial_velocity": "speed:m_s", "acceleration": "acceleration:m_s2",
                                                  "time": "time:s"}, "length:m",
          "the displacement after {time} of an object starting at {initial_velocity} and accelerating at "
          "{acceleration}",
          draw=lambda rng: {"initial_velocity": rng.randint(0, 40), "acceleration": rng.randint(1, 10),
                            "time": rng.randint(1, 60)}),
    _bfcl("mechanics", "calculate_final_velocity", {"initial_velocity": "speed:m_s",
                                                    "acceleration": "acceleration:m_s2", "time": "time:s"},
          "speed:m_s", "the speed after {time} of an object starting at {initial_velocity} and accelerating at "
          "{acceleration}",
          draw=lambda rng: {"initial_velocity": rng.randint(0, 40), "acceleration": rng.randint(1, 10),
                            "time": rng.randint(1, 60)}),
    _bfcl("temperature_units", "convert_temperature", {"temperature": "number", "unit_from": "label",
                                                       "unit_to": "label"}, "amount",
          "what {temperature} degrees {unit_from} is in degrees {unit_to}", draw=_temperature),
    _bfcl("nutrition", "calculate_basal_metabolic_rate", {"weight": "mass:kg", "height": "length:cm", "age": "age",
                                                          "gender": "sex"}, "energy:kcal",
          "the Mifflin-St Jeor basal metabolic rate of a {age}-year-old {gender} weighing {weight} at {height} tall",
          draw=_body),
    _bfcl("nutrition", "calculate_daily_energy_expenditure", {"basal_metabolic_rate": "energy:kcal",
                                                              "activity_level": "small_integer"}, "energy:kcal",
          "the daily energy expenditure at activity level {activity_level} of someone whose basal metabolic rate is "
          "{basal_metabolic_rate}",
          draw=lambda rng: {"basal_metabolic_rate": rng.randint(1200, 2200), "activity_level": rng.randint(1, 5)}),
    _bfcl("investing", "calculate_future_value", {"present_value": "money", "interest_rate": "rate_fraction",
                                                  "periods": "years"}, "money",
          "the value after {periods} of {present_value} invested at {interest_rate} compounded yearly"),
    _bfcl("investing", "inflation_adjustment", {"amount": "money", "inflation_rate": "rate_fraction",
                                                "years": "years"}, "money",
          "what {amount} received in {years} is worth today with inflation at {inflation_rate}",
          refers="the value today of {amount} received in {years} with inflation at {inflation_rate}"),
    _bfcl("investing", "adjust_for_inflation", {"investment_value": "money", "inflation_rates": "series"}, "money",
          "what {investment_value} is worth after deflating it by the yearly inflation rates {inflation_rates} "
          "(fractions)", refers="{investment_value} deflated by the yearly inflation rates {inflation_rates} "
          "(fractions)", draw=_inflation_rates),
    _bfcl("pricing", "calculate_total", {"quantities": "series", "prices": "series"}, "money",
          "the total of an order of quantities {quantities} at prices {prices}", draw=_order),
    _bfcl("geometry_2d", "geometry_area_circle", {"radius": "small_integer"}, "amount",
          "the area of a circle of radius {radius}"),
    _bfcl("geometry_2d", "calculate_triangle_area", {"base": "small_integer", "height": "small_integer"}, "amount",
          "the area of a triangle with base {base} and height {height}"),
    _bfcl("plane_coordinates", "get_distance", {"pointA": "series", "pointB": "series"}, "amount",
          "the distance between the points {pointA} and {pointB}", draw=_plane_points),
    _bfcl("plane_coordinates", "polygon_area", {"vertices": "series"}, "amount",
          "the area of the polygon with vertices {vertices}", draw=_polygon),
    _bfcl("plane_coordinates", "maxPoints", {"points": "series"}, "count",
          "the largest number of the points {points} that lie on one straight line", draw=_scatter),
    _bfcl("numerals", "add_binary_numbers", {"a": "binary", "b": "binary"}, "binary",
          "the sum in binary of {a} and {b}", refers="the sum of {a} and {b}"),
    _bfcl("numerals", "convert_binary_to_decimal", {"binary": "binary"}, "integer", "the decimal value of {binary}",
          refers="{binary}"),
    _bfcl("numerals", "convert_decimal_to_hex", {"decimal": "integer"}, "hexadecimal", "{decimal} in hexadecimal",
          refers="{decimal}"),
    _bfcl("stock_market", "get_stock_price_by_stock_name", {"stock_name": "ticker"}, "money",
          "the share price of {stock_name}"),
    _bfcl("stock_market", "get_company_name_by_stock_name", {"stock_name": "ticker"}, "label",
          "the name of the company behind {stock_name}"),
    _bfcl("currency_exchange", "convert_currency", {"amount": "money", "from_currency": "currency",
                                                    "to_currency": "currency"}, "amount",
          "what {amount} {from_currency} is in {to_currency}", draw=_exchange),
    _bfcl("online_shopping", "get_price_by_amazon_ASIN", {"ASIN": "asin"}, "label", "the price of {ASIN}"),
    _bfcl("online_shopping", "get_product_name_by_amazon_ASIN", {"ASIN": "asin"}, "label", "the name of {ASIN}"),
    _bfcl("online_shopping", "get_rating_by_amazon_ASIN", {"ASIN": "asin"}, "amount",
          "the average customer rating of {ASIN}"),
    _bfcl("movies", "get_movie_director", {"movie_name": "movie"}, "label", "the director of {movie_name}"),
    _bfcl("movies", "get_movie_genre", {"movie_name": "movie"}, "label", "the genre of {movie_name}"),
    _bfcl("movies", "get_movie_rating", {"movie_name": "movie"}, "label", "the age rating of {movie_name}"),
    _bfcl("slang", "find_term_on_urban_dictionary", {"term": "slang"}, "label", "the meaning of {term}"),
    _bfcl("covid_stats", "get_covid_death_by_country", {"country": "country_name"}, "count",
          "the total COVID-19 deaths reported for {country}", draw=_covid),
    _bfcl("covid_stats", "get_active_covid_case_by_country", {"country": "country_name"}, "count",
          "the number of active COVID-19 cases reported for {country}", draw=_covid),
    _bfcl("ip_geolocation", "get_zipcode_by_ip_address", {"ip_address": "ip_address"}, "zipcode",
          "the zip code of {ip_address}", refers="the zip code of {ip_address}"),
    _bfcl("postal_codes", "retrieve_city_based_on_zipcode", {"zipcode": "zipcode"}, "city",
          "the city of {zipcode}"),
    _bfcl("timezones", "get_time_zone_by_coord", {"long": "label", "lat": "label"}, "timezone",
          "the time zone at longitude {long} and latitude {lat}", draw=_coordinates),
    _toolkit("date_arithmetic", calendar.days_between, {"start": ("date", "the first ISO date"),
                                                       "end": ("date", "the second ISO date")}, "time:d",
             "the number of days from {start} to {end}", draw=_span("start", "end")),
    _toolkit("date_arithmetic", calendar.weeks_between, {"start": ("date", "the first ISO date"),
                                                        "end": ("date", "the second ISO date")}, "count",
             "the number of whole weeks from {start} to {end}", draw=_span("start", "end")),
    _toolkit("date_arithmetic", calendar.business_days_between, {"start": ("date", "the first ISO date"),
                                                                "end": ("date", "the later ISO date")}, "count",
             "the number of working days from {start} up to {end}", draw=_span("start", "end")),
    _toolkit("date_arithmetic", calendar.add_days, {"date": ("date", "an ISO date"),
                                                   "days": ("integer", "how many days")}, "date",
             "the date {days} days after {date}"),
    _toolkit("date_arithmetic", calendar.subtract_days, {"date": ("date", "an ISO date"),
                                                        "days": ("integer", "how many days")}, "date",
             "the date {days} days before {date}"),
    _toolkit("date_arithmetic", calendar.add_business_days, {"date": ("date", "an ISO date"),
                                                            "days": ("small_integer", "how many working days")},
             "date", "the date {days} working days after {date}"),
    _toolkit("date_arithmetic", calendar.add_months, {"date": ("date", "an ISO date"),
                                                     "months": ("small_integer", "how many months")}, "date",
             "the date {months} months after {date}"),
    _toolkit("calendar_basics", calendar.weekday_of, {"date": ("date", "an ISO date")}, "weekday",
             "the day of the week of {date}"),
    _toolkit("birthdays", calendar.age_on, {"birth_date": ("date", "the date of birth"),
                                           "on_date": ("date", "the day to count to")}, "count",
             "the age on {on_date} of someone born on {birth_date}", draw=_span("birth_date", "on_date")),
    _toolkit("interest", finance.simple_interest, {"principal": _MONEY, "rate": _FRACTION,
                                                  "years": ("years", "the number of years")}, "money",
             "the simple interest on {principal} at {rate} for {years}"),
    _toolkit("interest", finance.compound_interest, {"principal": _MONEY, "rate": _FRACTION,
                                                    "years": ("years", "the number of years"),
                                                    "periods_per_year": ("small_integer", "compounding periods a year")},
             "money", "the interest earned on {principal} at {rate} compounded monthly over {years}"),
    _toolkit("loans", finance.monthly_loan_payment, {"principal": _MONEY, "rate": _FRACTION,
                                                    "years": ("years", "the number of years")}, "money",
             "the monthly payment on a loan of {principal} at {rate} over {years}"),
    _toolkit("pricing", finance.tip_amount, {"amount": _MONEY, "percent": ("percent", "the tip in percent")}, "money",
             "the tip on a bill of {amount} at {percent}"),
    _toolkit("pricing", finance.discounted_price, {"amount": _MONEY, "percent": ("percent", ("the discount in "
                                                                                 "percent"))},
             "money", "the price of {amount} after {percent} off"),
    _toolkit("pricing", finance.price_with_tax, {"amount": _MONEY, "percent": ("percent", "the tax in percent")},
             "money", "the price of {amount} with {percent} sales tax added"),
    _toolkit("pricing", finance.split_bill, {"total": _MONEY, "people": ("people", "how many people")}, "money",
             "each person's share of {total} split between {people}"),
    _toolkit("pricing", finance.break_even_units, {"fixed_costs": _MONEY, "price": _MONEY,
                                                  "unit_cost": ("money", "what one unit costs to make")}, "count",
             "the units to sell at {price} each to cover fixed costs of {fixed_costs} when each costs {unit_cost} to "
             "make", draw=_bills),
    _toolkit("investing", finance.percent_change, {"old": ("money", "the old value"),
                                                  "new": ("money", "the new value")}, "amount",
             "the percentage change from {old} to {new}", draw=_change),
    _toolkit("interest", finance.monthly_rate, {"annual_rate": _FRACTION}, "amount",
             "the monthly rate, as a fraction, of {annual_rate}"),
]
