"""Our own implementations of the 72 functions of BFCL's executable categories.

BFCL ships only the functions' JSON docs, so each is written here from its BFCL description,
with BFCL's parameter names and order (one exception, documented on ``book_room``: an optional
parameter listed before required ones moves behind them, as Python requires). Parameters are
plain positional-or-keyword ones, so a bad call fails with Python's own TypeError
("missing 1 required positional argument: 'n'"), which the environment reports under the
function's opaque name.

Pure functions compute the real answer. The 21 functions that call live web services in BFCL
(weather, stocks, movies, geocoding, currency, COVID-19, Amazon, Urban Dictionary, holidays,
...) are deterministic offline stand-ins (``*_standins`` modules and ``holidays``), and so is
``generate_random_number``: 22 stand-ins, listed in ``STAND_INS``, whose equal arguments
always give equal outputs.

Errors: TypeError for an argument of the wrong kind, ValueError for a malformed or
out-of-range value, LookupError when a stand-in's service would answer "not found". Messages
name parameters, never the function. Outputs are plain JSON values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import (
    bookings,
    calculus,
    finance,
    geo_standins,
    geometry,
    holidays,
    market_standins,
    math_functions,
    media_standins,
    number_conversion,
    physics_and_health,
    statistics_functions,
)

_PURE: tuple[Callable[..., Any], ...] = (
    # math_functions
    math_functions.calc_binomial_probability, math_functions.calculate_permutations, math_functions.math_factorial,
    math_functions.math_gcd, math_functions.math_lcm, math_functions.get_fibonacci_number,
    math_functions.get_fibonacci_sequence, math_functions.get_prime_factors, math_functions.quadratic_roots,
    math_functions.mat_mul, math_functions.sort_array, math_functions.calculate_cosine_similarity,
    calculus.estimate_derivative,
    # statistics_functions
    statistics_functions.calculate_mean, statistics_functions.calculate_standard_deviation,
    statistics_functions.calculate_slope, statistics_functions.calculate_intercept, statistics_functions.predict_value,
    statistics_functions.linear_regression,
    # physics_and_health
    physics_and_health.calculate_density, physics_and_health.calculate_displacement,
    physics_and_health.calculate_final_velocity, physics_and_health.calculate_electrostatic_potential_energy,
    physics_and_health.convert_temperature, physics_and_health.calculate_basal_metabolic_rate,
    physics_and_health.calculate_daily_energy_expenditure, physics_and_health.calculate_nutritional_needs,
    # finance
    finance.calculate_future_value, finance.calculate_investment_value, finance.mortgage_calculator,
    finance.compound_interest, finance.inflation_adjustment, finance.adjust_for_inflation,
    finance.calculate_interest_rate, finance.apply_discount, finance.calculate_total, finance.order_food,
    # bookings (side-effect free, identifiers hashed from the arguments)
    bookings.book_room, bookings.calculate_total_price, bookings.confirm_booking,
    # geometry
    geometry.geometry_area_circle, geometry.calculate_triangle_area, geometry.get_distance, geometry.polygon_area,
    geometry.validate_polygon, geometry.maxPoints, geometry.convert_coordinates,
    # number_conversion
    number_conversion.add_binary_numbers, number_conversion.convert_binary_to_decimal,
    number_conversion.convert_decimal_to_hex,
)

STAND_INS: tuple[Callable[..., Any], ...] = (
    geo_standins.get_coordinates_from_city, geo_standins.get_coordinate_by_ip_address,
    geo_standins.get_zipcode_by_ip_address, geo_standins.retrieve_city_based_on_zipcode,
    geo_standins.get_time_zone_by_coord, geo_standins.get_weather_data,
    market_standins.get_stock_price_by_stock_name, market_standins.get_company_name_by_stock_name,
    market_standins.get_stock_history, market_standins.convert_currency,
    market_standins.get_price_by_amazon_ASIN, market_standins.get_product_name_by_amazon_ASIN,
    market_standins.get_rating_by_amazon_ASIN,
    media_standins.get_movie_director, media_standins.get_director_by_movie_name, media_standins.get_movie_genre,
    media_standins.get_movie_rating, media_standins.find_term_on_urban_dictionary,
    media_standins.get_covid_death_by_country, media_standins.get_active_covid_case_by_country,
    holidays.retrieve_holiday_by_year,
    math_functions.generate_random_number,
)
"""Functions whose BFCL originals are non-deterministic (live services, randomness)."""

FUNCTIONS: dict[str, Callable[..., Any]] = {function.__name__: function for function in _PURE + STAND_INS}
"""BFCL function name -> implementation."""

__all__ = ["FUNCTIONS", "STAND_INS"]
