"""How users ask for BFCL's functions in a dialogue: phrasings, chains of calls, small talk and answers.

This is the hand-written language the generator draws on; the *values* all come from BFCL's gold calls
(and what the functions return for them). A :class:`Phrasing` says how a request for one function reads
(``"the current price" of "AAPL"``), what its subject is ("stock"), and so how a later turn refers back
to it ("that stock") or leaves it out ("And the company name?"). A :class:`Chain` is a request that needs
several calls where one output feeds the next ("What's the weather like in Paris?": the city's
coordinates, then the weather there).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_SLOT = re.compile(r"\{(\w+)\}")


def slots(template: str) -> list[str]:
    """The parameter names a template fills, in order."""
    return list(dict.fromkeys(_SLOT.findall(template)))


def render_value(value: Any) -> str:
    """A value as a user would type it."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(value, ensure_ascii=False)


def fill(template: str, values: dict[str, Any]) -> str:
    return _SLOT.sub(lambda match: render_value(values[match.group(1)]), template)


def _article(word: str) -> str:
    return f"an {word}" if word[:1].lower() in "aeiou" else f"a {word}"


@dataclass(frozen=True)
class Phrasing:
    """How a request for one function reads: ``{noun} {prep} {subject}{extra}``."""

    noun: str
    """What the function gives, as a noun phrase: ``the greatest common divisor``."""
    prep: str
    """The word joining noun and subject: ``of``, ``in``, ``behind``."""
    subject: str
    """The values the request is about, with ``{parameter}`` slots: ``{a} and {b}``."""
    extra: str = ""
    """The other parameters, with slots, read after the subject: `` over {loan_period} years``."""
    kind: str = ""
    """What the subject is (``stock``), for a later turn to refer to it; blank: not referred to."""
    plural: bool = False
    """The subject is several things (``those numbers``)."""
    family: str = ""
    """Functions of one family take the same subject: a later turn may ask another of them about it."""
    changes: dict[str, str] = field(default_factory=dict)
    """Parameter -> how a follow-up changes it alone (``over {value} years``)."""
    plural_noun: bool = False
    """The noun is plural (``the prime factors``): "What are", not "What's"."""

    @property
    def subject_parameters(self) -> list[str]:
        return slots(self.subject)

    @property
    def extra_parameters(self) -> list[str]:
        return slots(self.extra)

    @property
    def ref(self) -> str:
        """How a later turn refers to the subject."""
        return f"{'those' if self.plural else 'that'} {self.kind}"

    @property
    def some(self) -> str:
        """The subject left unsaid, for a request that lacks it."""
        return f"some {self.kind}" if self.plural else _article(self.kind)

    @property
    def what(self) -> str:
        return "What are" if self.plural_noun else "What's"


PHRASINGS: dict[str, Phrasing] = {
    # numbers
    "math_gcd": Phrasing("the greatest common divisor", "of", "{a} and {b}", kind="numbers", plural=True,
                         family="pair"),
    "math_lcm": Phrasing("the least common multiple", "of", "{a} and {b}", kind="numbers", plural=True,
                         family="pair"),
    "math_factorial": Phrasing("the factorial", "of", "{n}", kind="number", family="integer"),
    "get_prime_factors": Phrasing("the prime factors", "of", "{number}", kind="number", family="integer",
                                  plural_noun=True),
    "convert_decimal_to_hex": Phrasing("the hexadecimal form", "of", "{decimal}", kind="number", family="integer"),
    "get_fibonacci_sequence": Phrasing("the Fibonacci sequence", "up to", "{n} numbers"),
    "get_fibonacci_number": Phrasing("the Fibonacci number", "at position", "{n}"),
    "calc_binomial_probability": Phrasing("the probability", "of exactly", "{k} successes in {n} trials",
                                          extra=" with a success chance of {p} each",
                                          changes={"p": "with a success chance of {value}"}),
    "calculate_permutations": Phrasing("the number of permutations", "of", "{k} items out of {n}"),
    "quadratic_roots": Phrasing("the roots", "of", "the quadratic with a = {a}, b = {b} and c = {c}",
                                kind="quadratic", plural_noun=True),
    "mat_mul": Phrasing("the product", "of", "the matrices {matA} and {matB}", kind="matrices", plural=True),
    "estimate_derivative": Phrasing("the derivative", "of", "the function {function}", extra=" at x = {x}",
                                    kind="function", changes={"x": "at x = {value}"}),
    "add_binary_numbers": Phrasing("the sum", "of", "the binary numbers {a} and {b}", kind="binary numbers",
                                   plural=True, family="binary"),
    "convert_binary_to_decimal": Phrasing("the decimal value", "of", "the binary number {binary}"),
    # statistics and geometry
    "calculate_mean": Phrasing("the mean", "of", "{numbers}", kind="numbers", plural=True, family="sample"),
    "calculate_standard_deviation": Phrasing("the standard deviation", "of", "{numbers}", kind="numbers",
                                             plural=True, family="sample"),
    "linear_regression": Phrasing("the value of the regression line", "through", "x = {x} and y = {y}",
                                  extra=" at x = {point}", kind="points", plural=True, family="points",
                                  changes={"point": "at x = {value}"}),
    "calculate_slope": Phrasing("the slope of the regression line", "through", "x = {x} and y = {y}",
                                kind="points", plural=True, family="points"),
    "calculate_cosine_similarity": Phrasing("the cosine similarity", "between", "{vectorA} and {vectorB}",
                                            kind="vectors", plural=True),
    "get_distance": Phrasing("the distance", "between", "the points {pointA} and {pointB}", kind="points",
                             plural=True),
    "calculate_triangle_area": Phrasing("the area of a triangle", "with", "base {base} and height {height}",
                                        kind="triangle"),
    "geometry_area_circle": Phrasing("the area of a circle", "with", "radius {radius}", kind="circle"),
    "polygon_area": Phrasing("the area of the polygon", "with", "vertices {vertices}", kind="polygon"),
    "maxPoints": Phrasing("the largest number of points on one straight line", "among", "{points}",
                          kind="points", plural=True),
    # physics and health
    "calculate_density": Phrasing("the density", "of", "an object of mass {mass} kg and volume {volume} m³",
                                  kind="object"),
    "calculate_displacement": Phrasing("the displacement", "of", "an object starting at {initial_velocity} m/s "
                                       "with an acceleration of {acceleration} m/s²", extra=" after {time} s",
                                       kind="object", family="motion", changes={"time": "after {value} s"}),
    "calculate_final_velocity": Phrasing("the final velocity", "of", "an object starting at {initial_velocity} m/s "
                                         "with an acceleration of {acceleration} m/s²", extra=" after {time} s",
                                         kind="object", family="motion", changes={"time": "after {value} s"}),
    "calculate_electrostatic_potential_energy": Phrasing("the electrostatic potential energy", "of",
                                                         "a charge of {charge} C at {voltage} V", kind="charge"),
    "calculate_nutritional_needs": Phrasing(
        "the daily nutritional needs", "of", "a {age}-year-old {gender} weighing {weight} kg at {height} cm",
        extra=" with activity level {activity_level} who wants to {goal} weight", kind="person", family="person",
        changes={"goal": "to {value} weight"}, plural_noun=True),
    "calculate_basal_metabolic_rate": Phrasing("the basal metabolic rate", "of",
                                               "a {age}-year-old {gender} weighing {weight} kg at {height} cm",
                                               kind="person", family="person"),
    # money
    "calculate_future_value": Phrasing("the future value", "of", "{present_value} invested",
                                       extra=" at an interest rate of {interest_rate} for {periods} periods",
                                       kind="investment", changes={"interest_rate": "at an interest rate of {value}",
                                                                   "periods": "for {value} periods"}),
    "mortgage_calculator": Phrasing("the monthly payment", "on", "a loan of {loan_amount}",
                                    extra=" at an interest rate of {interest_rate} over {loan_period} years",
                                    kind="loan", changes={"loan_period": "over {value} years",
                                                          "interest_rate": "at an interest rate of {value}"}),
    "convert_currency": Phrasing("the value", "of", "{amount} {from_currency}", extra=" in {to_currency}",
                                 kind="amount", changes={"to_currency": "in {value}"}),
    # markets and shopping
    "get_stock_price_by_stock_name": Phrasing("the current price", "of", "{stock_name}", kind="stock", family="stock"),
    "get_company_name_by_stock_name": Phrasing("the company name", "behind", "{stock_name}", kind="stock",
                                               family="stock"),
    "get_stock_history": Phrasing("the price history", "of", "{stock_name}", extra=" at a {interval} interval",
                                  kind="stock", family="stock", changes={"interval": "at a {value} interval"}),
    "get_price_by_amazon_ASIN": Phrasing("the price", "of", "the product with ASIN {ASIN}", kind="product",
                                         family="product"),
    "get_product_name_by_amazon_ASIN": Phrasing("the name", "of", "the product with ASIN {ASIN}", kind="product",
                                                family="product"),
    "get_rating_by_amazon_ASIN": Phrasing("the rating", "of", "the product with ASIN {ASIN}", kind="product",
                                          family="product"),
    # media and places
    "get_movie_director": Phrasing("the director", "of", "{movie_name}", kind="movie", family="movie"),
    "get_movie_rating": Phrasing("the age rating", "of", "{movie_name}", kind="movie", family="movie"),
    "get_movie_genre": Phrasing("the genre", "of", "{movie_name}", kind="movie", family="movie"),
    "find_term_on_urban_dictionary": Phrasing("the slang meaning", "of", "'{term}'", kind="word"),
    "get_covid_death_by_country": Phrasing("the COVID-19 death toll", "in", "{country}", kind="country",
                                           family="country"),
    "get_active_covid_case_by_country": Phrasing("the number of active COVID-19 cases", "in", "{country}",
                                                 kind="country", family="country"),
    "retrieve_holiday_by_year": Phrasing("the public holidays", "in", "{country}", extra=" for {year}",
                                         kind="country", changes={"year": "for {value}"}, plural_noun=True),
    "get_coordinates_from_city": Phrasing("the coordinates", "of", "{city_name}", kind="city", family="city",
                                          plural_noun=True),
    "get_coordinate_by_ip_address": Phrasing("the coordinates", "of", "the IP address {ip_address}",
                                             kind="IP address", family="ip", plural_noun=True),
    "get_zipcode_by_ip_address": Phrasing("the zip code", "of", "the IP address {ip_address}", kind="IP address",
                                          family="ip"),
    "retrieve_city_based_on_zipcode": Phrasing("the city", "for", "zip code {zipcode}", kind="zip code",
                                               family="zipcode"),
    "get_time_zone_by_coord": Phrasing("the time zone", "at", "latitude {lat}, longitude {long}", kind="place"),
    "get_weather_data": Phrasing("the current weather", "at", "the coordinates {coordinates}", kind="place"),
}


# -- chains: one output feeds the next call ---------------------------------------------------------------------
@dataclass(frozen=True)
class Given:
    """An argument the user states: the seed's or an extra value, by name."""

    name: str


@dataclass(frozen=True)
class Read:
    """An argument read from the output of an earlier step of the chain."""

    step: int
    path: tuple[str | int, ...] = ()
    convert: str | None = None
    """``number`` (``"$136.99"`` -> 136.99), ``text`` (any value as a string) or None (as it is)."""

    def to_ref(self, offset: int) -> dict[str, Any]:
        ref: dict[str, Any] = {"$ref": self.step + offset, "path": list(self.path)}
        if self.convert:
            ref["as"] = self.convert
        return ref


@dataclass(frozen=True)
class Step:
    function: str
    arguments: dict[str, Any]
    """Values: a :class:`Given`, a :class:`Read`, or a constant."""


@dataclass(frozen=True)
class Chain:
    """A request whose calls feed each other, asked about a seed (a city, a stock, a pair of numbers)."""

    ask: str
    """The request, with ``{subject}`` for the seed and ``{name}`` slots for the extra values; ``{subject}`` reads
    as well when it is the seed (``the IP address 10.0.0.1``) as when it refers to it (``that IP address``)."""
    subject: str
    """The seed as the user writes it, with the seed function's parameter slots."""
    seed_function: str
    """The function whose BFCL gold arguments give seeds (the seed's parameters are its subject's)."""
    steps: tuple[Step, ...]
    topic: str
    """What a later turn calls the request: ``the weather``."""
    extras: dict[str, str] = field(default_factory=dict)
    """Extra value -> the function and parameter whose BFCL gold values it takes (``convert_currency.to_currency``)."""
    constants: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    """Extra value -> choices when BFCL has none for it."""
    kind: str = ""
    """What the seed is, for references (``city``); blank: not referred to."""
    plural: bool = False
    """The seed is several things (``those points``)."""
    family: str = ""
    """The seed's family: a turn that named a seed of this family can be followed by this chain about it."""
    pairable: bool = True
    """Asked about two seeds at once, the chain runs twice side by side (series and parallel)."""

    @property
    def seed_parameters(self) -> list[str]:
        return slots(self.subject)

    @property
    def ref(self) -> str:
        return f"{'those' if self.plural else 'that'} {self.kind}"


_CURRENCIES = ("EUR", "GBP", "JPY", "AUD", "CHF", "CAD")
"""Currencies BFCL's conversions name, US dollars left out (the chains convert from them)."""
CHAINS: dict[str, Chain] = {
    "city_weather": Chain(
        "What's the weather like in {subject} right now?", "{city_name}", "get_coordinates_from_city",
        (Step("get_coordinates_from_city", {"city_name": Given("city_name")}),
         Step("get_weather_data", {"coordinates": [Read(0, ("lat",)), Read(0, ("lon",))]})),
        "the weather", kind="city", family="city"),
    "city_time_zone": Chain(
        "Which time zone is {subject} in?", "{city_name}", "get_coordinates_from_city",
        (Step("get_coordinates_from_city", {"city_name": Given("city_name")}),
         Step("get_time_zone_by_coord", {"long": Read(0, ("lon",), "text"), "lat": Read(0, ("lat",), "text")})),
        "the time zone", kind="city", family="city"),
    "city_weather_and_time_zone": Chain(
        "What's the weather in {subject} right now, and which time zone is it in?", "{city_name}",
        "get_coordinates_from_city",
        (Step("get_coordinates_from_city", {"city_name": Given("city_name")}),
         Step("get_weather_data", {"coordinates": [Read(0, ("lat",)), Read(0, ("lon",))]}),
         Step("get_time_zone_by_coord", {"long": Read(0, ("lon",), "text"), "lat": Read(0, ("lat",), "text")})),
        "the weather and the time zone", kind="city", family="city", pairable=False),
    "ip_weather": Chain(
        "What's the weather where {subject} is?", "the IP address {ip_address}", "get_coordinate_by_ip_address",
        (Step("get_coordinate_by_ip_address", {"ip_address": Given("ip_address")}),
         Step("get_weather_data", {"coordinates": [Read(0, ("lat",)), Read(0, ("lon",))]})),
        "the weather", kind="IP address", family="ip"),
    "ip_city": Chain(
        "Which city is {subject} in?", "the IP address {ip_address}", "get_zipcode_by_ip_address",
        (Step("get_zipcode_by_ip_address", {"ip_address": Given("ip_address")}),
         Step("retrieve_city_based_on_zipcode", {"zipcode": Read(0)})),
        "the city", kind="IP address", family="ip"),
    "zipcode_weather": Chain(
        "What's the weather like at {subject}?", "zip code {zipcode}", "retrieve_city_based_on_zipcode",
        (Step("retrieve_city_based_on_zipcode", {"zipcode": Given("zipcode")}),
         Step("get_coordinates_from_city", {"city_name": Read(0)}),
         Step("get_weather_data", {"coordinates": [Read(1, ("lat",)), Read(1, ("lon",))]})),
        "the weather", kind="zip code", family="zipcode"),
    "stock_in_currency": Chain(
        "What's one share of {subject} worth in {to_currency}? Its price is quoted in USD.", "{stock_name}",
        "get_stock_price_by_stock_name",
        (Step("get_stock_price_by_stock_name", {"stock_name": Given("stock_name")}),
         Step("convert_currency", {"amount": Read(0), "from_currency": "USD", "to_currency": Given("to_currency")})),
        "the share price", constants={"to_currency": _CURRENCIES}, kind="stock", family="stock"),
    "product_in_currency": Chain(
        "How much does {subject} cost in {to_currency}?", "the product with ASIN {ASIN}", "get_price_by_amazon_ASIN",
        (Step("get_price_by_amazon_ASIN", {"ASIN": Given("ASIN")}),
         Step("convert_currency", {"amount": Read(0, (), "number"), "from_currency": "USD",
                                   "to_currency": Given("to_currency")})),
        "the price", constants={"to_currency": _CURRENCIES}, kind="product", family="product"),
    "fibonacci_factors": Chain(
        "What are the prime factors of the Fibonacci number at position {subject}?", "{n}", "get_fibonacci_sequence",
        (Step("get_fibonacci_number", {"n": Given("n")}),
         Step("get_prime_factors", {"number": Read(0)})),
        "the Fibonacci factors"),
    "binary_sum_in_decimal": Chain(
        "Add {subject} and tell me the sum in decimal.", "the binary numbers {a} and {b}", "add_binary_numbers",
        (Step("add_binary_numbers", {"a": Given("a"), "b": Given("b")}),
         Step("convert_binary_to_decimal", {"binary": Read(0)})),
        "the binary sum", kind="binary numbers", plural=True, family="binary", pairable=False),
    "binary_sum_in_hex": Chain(
        "Add {subject} and give me the sum in hexadecimal.", "the binary numbers {a} and {b}", "add_binary_numbers",
        (Step("add_binary_numbers", {"a": Given("a"), "b": Given("b")}),
         Step("convert_binary_to_decimal", {"binary": Read(0)}),
         Step("convert_decimal_to_hex", {"decimal": Read(1)})),
        "the binary sum", kind="binary numbers", plural=True, family="binary", pairable=False),
    "regression_intercept": Chain(
        "Where does the regression line through {subject} cross the y-axis?", "x = {x} and y = {y}",
        "linear_regression",
        (Step("calculate_slope", {"x": Given("x"), "y": Given("y")}),
         Step("calculate_intercept", {"x": Given("x"), "y": Given("y"), "slope": Read(0)})),
        "the regression line", kind="points", plural=True, family="points", pairable=False),
    "daily_energy": Chain(
        "How much energy does {subject} with activity level {activity_level} burn in a day?",
        "a {age}-year-old {gender} weighing {weight} kg at {height} cm", "calculate_nutritional_needs",
        (Step("calculate_basal_metabolic_rate", {"weight": Given("weight"), "height": Given("height"),
                                                 "age": Given("age"), "gender": Given("gender")}),
         Step("calculate_daily_energy_expenditure", {"basal_metabolic_rate": Read(0),
                                                     "activity_level": Given("activity_level")})),
        "the daily energy use", extras={"activity_level": "calculate_nutritional_needs.activity_level"},
        kind="person", family="person", pairable=False),
    "real_future_value": Chain(
        "If I invest {subject} at an interest rate of {interest_rate} for {periods} years, what is that worth "
        "in today's money with {inflation_rate} yearly inflation?", "{present_value}", "calculate_future_value",
        (Step("calculate_future_value", {"present_value": Given("present_value"),
                                         "interest_rate": Given("interest_rate"), "periods": Given("periods")}),
         Step("inflation_adjustment", {"amount": Read(0), "inflation_rate": Given("inflation_rate"),
                                       "years": Given("periods")})),
        "the investment", extras={"interest_rate": "calculate_future_value.interest_rate",
                                  "periods": "calculate_future_value.periods"},
        constants={"inflation_rate": (0.02, 0.03, 0.025)}, pairable=False),
    "discounted_order": Chain(
        "I'm buying quantities {subject} at unit prices {prices}. What do I pay after a {discount}% discount?",
        "{quantity}", "order_food",
        (Step("calculate_total", {"quantities": Given("quantity"), "prices": Given("prices")}),
         Step("apply_discount", {"total": Read(0), "discount": Given("discount")})),
        "the order", extras={"prices": "order_food.price"}, constants={"discount": (10, 15, 20, 25)},
        pairable=False),
}

EQUIVALENT = frozenset({frozenset({"get_movie_director", "get_director_by_movie_name"})})
"""Functions that do the same thing under two names: never offered side by side (calling the other one would be
right in all but name)."""

# -- small talk, answers, openers ---------------------------------------------------------------------------------
CHITCHAT = (
    "Thanks, that's really helpful!",
    "Haha, I always mix these things up.",
    "You're quick today!",
    "I'm just killing time before a meeting, to be honest.",
    "Math was never my strong suit.",
    "Do you ever get tired of answering questions all day?",
    "Nice, that's about what I expected.",
    "Good morning! Hope you're doing well.",
    "Ok cool, good to know.",
    "Sorry, my cat just walked over the keyboard.",
    "That's more than I thought!",
    "Great, I appreciate it.",
    "You know, I used to teach this stuff years ago.",
    "It's raining here again, typical.",
    "Honestly, I should have sorted this out yesterday.",
    "What a week it's been.",
    "By the way, you're much better at this than my old calculator.",
    "Hmm, interesting. I'll have to think about that.",
    "My sister will be impressed when I tell her.",
    "Let me grab a coffee first, one second.",
)
CHITCHAT_ABOUT = (
    "Funny, {subject} came up at work today too.",
    "I've always been curious about {subject}, to be honest.",
    "My friend keeps talking about {subject}, it's a bit much.",
    "Ha, {subject} again. I can't get away from it this week.",
)
"""Small talk that names something from earlier, tempting a call nobody asked for."""
ANSWERS = ("{subject}.", "Oh, sorry: {subject}.", "I mean {subject}.", "It's {subject}.", "Right, {subject}.")
"""How the user answers the question a clarification needs."""
OPENERS = ("{what} {request}?", "Can you tell me {request}?", "I need {request}.", "Could you work out {request}?",
           "Quick one: {what_lower} {request}?", "Please find {request}.")
"""Ways to ask for ``{request}`` (a noun phrase) with everything stated."""
