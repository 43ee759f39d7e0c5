"""The 72 BFCL function implementations: ground truths, known values, stand-ins and errors."""

from __future__ import annotations

import copy
import inspect
import json
import math
import re
import subprocess
import sys
import types
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from otbench.envs.bfcl.functions import FUNCTIONS, STAND_INS
from otbench.envs.bfcl.gold import parse_call

FIXTURE = Path(__file__).parent / "fixtures" / "bfcl_ground_truths.jsonl"
REPO_ROOT = Path(__file__).resolve().parents[1]


def _records() -> list[dict[str, Any]]:
    with FIXTURE.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


GROUND_TRUTHS = [(record["id"], text) for record in _records() for text in record["ground_truth"]]

# name: (required parameters, optional parameters), in signature order. These are BFCL's names and
# order, except book_room, whose optional ``price`` BFCL lists second (defaults must come last).
SIGNATURES: dict[str, tuple[list[str], list[str]]] = {
    "add_binary_numbers": (["a", "b"], []),
    "adjust_for_inflation": (["investment_value", "inflation_rates"], []),
    "apply_discount": (["total", "discount"], []),
    "book_room": (["room_type", "check_in_date", "check_out_date", "customer_id"], ["price", "discount_code"]),
    "calc_binomial_probability": (["n", "k", "p"], []),
    "calculate_basal_metabolic_rate": (["weight", "height", "age", "gender"], []),
    "calculate_cosine_similarity": (["vectorA", "vectorB"], []),
    "calculate_daily_energy_expenditure": (["basal_metabolic_rate", "activity_level"], []),
    "calculate_density": (["mass", "volume"], []),
    "calculate_displacement": (["initial_velocity", "acceleration", "time"], []),
    "calculate_electrostatic_potential_energy": (["charge", "voltage"], []),
    "calculate_final_velocity": (["initial_velocity", "acceleration", "time"], []),
    "calculate_future_value": (["present_value", "interest_rate", "periods"], []),
    "calculate_intercept": (["x", "y", "slope"], []),
    "calculate_interest_rate": (["principal", "rate", "time"], []),
    "calculate_investment_value": (
        ["initial_investment", "annual_contribution", "years", "annual_return", "inflation_rate"],
        ["adjust_for_inflation"],
    ),
    "calculate_mean": (["numbers"], []),
    "calculate_nutritional_needs": (["weight", "height", "age", "gender", "activity_level", "goal"], []),
    "calculate_permutations": (["n", "k"], []),
    "calculate_slope": (["x", "y"], []),
    "calculate_standard_deviation": (["numbers"], []),
    "calculate_total": (["quantities", "prices"], []),
    "calculate_total_price": (["room_price", "nights"], ["discount"]),
    "calculate_triangle_area": (["base", "height"], []),
    "compound_interest": (["principal", "rate", "times_compounded", "years"], []),
    "confirm_booking": (["customer_id", "room_number", "total_price"], []),
    "convert_binary_to_decimal": (["binary"], []),
    "convert_coordinates": (["coordinates"], []),
    "convert_currency": (["amount", "from_currency", "to_currency"], []),
    "convert_decimal_to_hex": (["decimal"], []),
    "convert_temperature": (["temperature", "unit_from", "unit_to"], []),
    "estimate_derivative": (["function", "x"], []),
    "find_term_on_urban_dictionary": (["term"], []),
    "generate_random_number": (["min", "max"], []),
    "geometry_area_circle": (["radius"], []),
    "get_active_covid_case_by_country": (["country"], []),
    "get_company_name_by_stock_name": (["stock_name"], []),
    "get_coordinate_by_ip_address": (["ip_address"], []),
    "get_coordinates_from_city": (["city_name"], []),
    "get_covid_death_by_country": (["country"], []),
    "get_director_by_movie_name": (["movie_name"], []),
    "get_distance": (["pointA", "pointB"], []),
    "get_fibonacci_number": (["n"], []),
    "get_fibonacci_sequence": (["n"], []),
    "get_movie_director": (["movie_name"], []),
    "get_movie_genre": (["movie_name"], []),
    "get_movie_rating": (["movie_name"], []),
    "get_price_by_amazon_ASIN": (["ASIN"], []),
    "get_prime_factors": (["number"], []),
    "get_product_name_by_amazon_ASIN": (["ASIN"], []),
    "get_rating_by_amazon_ASIN": (["ASIN"], []),
    "get_stock_history": (["stock_name", "interval"], ["diffandsplits"]),
    "get_stock_price_by_stock_name": (["stock_name"], []),
    "get_time_zone_by_coord": (["long", "lat"], []),
    "get_weather_data": (["coordinates"], []),
    "get_zipcode_by_ip_address": (["ip_address"], []),
    "inflation_adjustment": (["amount", "inflation_rate", "years"], []),
    "linear_regression": (["x", "y", "point"], []),
    "mat_mul": (["matA", "matB"], []),
    "math_factorial": (["n"], []),
    "math_gcd": (["a", "b"], []),
    "math_lcm": (["a", "b"], []),
    "maxPoints": (["points"], []),
    "mortgage_calculator": (["loan_amount", "interest_rate", "loan_period"], []),
    "order_food": (["item", "quantity", "price"], []),
    "polygon_area": (["vertices"], []),
    "predict_value": (["slope", "intercept", "x"], []),
    "quadratic_roots": (["a", "b", "c"], []),
    "retrieve_city_based_on_zipcode": (["zipcode"], []),
    "retrieve_holiday_by_year": (["year", "country"], []),
    "sort_array": (["array"], ["reverse"]),
    "validate_polygon": (["vertices"], []),
}


def _call(name: str, **arguments: Any) -> Any:
    return FUNCTIONS[name](**arguments)


# ---------------------------------------------------------------------------------------------
# Registry and signatures


def test_registry_has_the_72_bfcl_functions_as_plain_functions() -> None:
    assert sorted(FUNCTIONS) == sorted(SIGNATURES)
    for name, function in FUNCTIONS.items():
        assert isinstance(function, types.FunctionType), name
        assert function.__name__ == name
        assert function.__doc__ and function.__doc__.strip(), name


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_signature_matches_bfcl_schema(name: str) -> None:
    required, optional = SIGNATURES[name]
    parameters = inspect.signature(FUNCTIONS[name]).parameters.values()
    assert [p.name for p in parameters] == required + optional
    assert all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in parameters)
    assert [p.name for p in parameters if p.default is inspect.Parameter.empty] == required


def test_stand_ins_are_the_22_non_deterministic_originals_and_say_so() -> None:
    assert len(STAND_INS) == 22
    for function in STAND_INS:
        doc = " ".join(function.__doc__.split())
        assert "Deterministic" in doc and "stand-in for" in doc, function.__name__


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_missing_and_unexpected_arguments_raise_python_type_errors(name: str) -> None:
    required, _ = SIGNATURES[name]
    with pytest.raises(TypeError, match=f"missing {len(required)} required positional argument"):
        FUNCTIONS[name]()
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        FUNCTIONS[name](**{parameter: None for parameter in required}, bogus=1)


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_wrong_argument_kinds_fail_without_naming_the_function(name: str) -> None:
    required, _ = SIGNATURES[name]
    with pytest.raises((TypeError, ValueError)) as info:
        FUNCTIONS[name](**{parameter: object() for parameter in required})
    assert name not in str(info.value)


# ---------------------------------------------------------------------------------------------
# BFCL ground truths


def test_fixture_covers_all_four_exec_categories() -> None:
    counts: dict[str, int] = {}
    for record in _records():
        counts[record["category"]] = counts.get(record["category"], 0) + 1
    assert counts == {"exec_simple": 100, "exec_multiple": 50, "exec_parallel": 50, "exec_parallel_multiple": 40}
    used = {parse_call(text).name for _, text in GROUND_TRUTHS}
    assert used <= set(FUNCTIONS) and len(used) == 51


@pytest.mark.parametrize(("test_id", "text"), GROUND_TRUTHS, ids=[f"{i}:{t[:40]}" for i, t in GROUND_TRUTHS])
def test_ground_truth_executes_deterministically_with_json_output(test_id: str, text: str) -> None:
    call = parse_call(text)
    arguments = copy.deepcopy(call.arguments)
    first = FUNCTIONS[call.name](**arguments)
    second = FUNCTIONS[call.name](**copy.deepcopy(call.arguments))
    assert first == second
    assert arguments == call.arguments, "the function mutated its arguments"
    assert json.loads(json.dumps(first)) == first


def test_stand_ins_agree_across_processes_with_different_hash_seeds() -> None:
    script = (
        "import json; from otbench.envs.bfcl.functions import FUNCTIONS as F; print(json.dumps(["
        "F['get_weather_data']([48.8566, 2.3522]), F['get_zipcode_by_ip_address']('8.8.8.8'),"
        "F['get_product_name_by_amazon_ASIN']('B08PPDJWC8'), F['generate_random_number'](1, 10**6),"
        "F['book_room']('suite', '01-02-2024', '01-05-2024', '7')]))"
    )
    outputs = {
        subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, env={"PYTHONHASHSEED": seed},
                       capture_output=True, text=True, check=True).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1


# ---------------------------------------------------------------------------------------------
# Known values of the pure functions (computed by hand)

KNOWN_VALUES: list[tuple[str, dict[str, Any], Any]] = [
    ("calc_binomial_probability", {"n": 10, "k": 5, "p": 0.5}, 252 / 1024),
    ("calc_binomial_probability", {"n": 5, "k": 3, "p": 0.5}, 0.3125),
    ("calc_binomial_probability", {"n": 3, "k": 5, "p": 0.5}, 0.0),
    ("calc_binomial_probability", {"n": 4, "k": 4, "p": 1}, 1.0),
    ("calc_binomial_probability", {"n": 2000, "k": 1000, "p": 0.5}, float(Fraction(math.comb(2000, 1000), 2**2000))),
    ("calculate_permutations", {"n": 26, "k": 5}, 7_893_600),
    ("calculate_permutations", {"n": 3, "k": 5}, 0),
    ("math_factorial", {"n": 5}, 120),
    ("math_factorial", {"n": 0}, 1),
    ("math_factorial", {"n": 5.0}, 120),
    ("math_gcd", {"a": 45, "b": 60}, 15),
    ("math_gcd", {"a": 1200, "b": 21406}, 2),
    ("math_lcm", {"a": 45, "b": 35}, 315),
    ("math_lcm", {"a": 0, "b": 5}, 0),
    ("get_fibonacci_number", {"n": 1}, 0),
    ("get_fibonacci_number", {"n": 2}, 1),
    ("get_fibonacci_number", {"n": 15}, 377),
    ("get_fibonacci_number", {"n": 100}, 218_922_995_834_555_169_026),
    ("get_fibonacci_sequence", {"n": 7}, [0, 1, 1, 2, 3, 5, 8]),
    ("get_fibonacci_sequence", {"n": 0}, []),
    ("get_prime_factors", {"number": 456}, [2, 2, 2, 3, 19]),
    ("get_prime_factors", {"number": 7891}, [13, 607]),
    ("get_prime_factors", {"number": 97}, [97]),
    ("get_prime_factors", {"number": 1}, []),
    ("quadratic_roots", {"a": 1, "b": -3, "c": 2}, [2.0, 1.0]),
    ("quadratic_roots", {"a": 1, "b": 2, "c": 1}, [-1.0, -1.0]),
    ("quadratic_roots", {"a": 1, "b": 0, "c": 1}, [{"real": 0.0, "imaginary": 1.0}, {"real": 0.0, "imaginary": -1.0}]),
    ("mat_mul", {"matA": [[1, 2], [3, 4]], "matB": [[5, 6], [7, 8]]}, [[19, 22], [43, 50]]),
    ("mat_mul", {"matA": [[1, 2, 3]], "matB": [[1], [1], [1]]}, [[6]]),
    ("mat_mul", {"matA": [[1, 2, 3, 4]], "matB": [[1, 0], [0, 1]]}, [[1, 2]]),
    ("sort_array", {"array": [3, 1, 2]}, [1, 2, 3]),
    ("sort_array", {"array": [3, 1.5, 2], "reverse": True}, [3, 2, 1.5]),
    ("calculate_cosine_similarity", {"vectorA": [1, 0], "vectorB": [0, 1]}, 0.0),
    ("calculate_cosine_similarity", {"vectorA": [1, 2, 3], "vectorB": [2, 4, 6]}, 1.0),
    ("calculate_cosine_similarity", {"vectorA": [1, 2, 3], "vectorB": [4, 5, 6]}, 32 / math.sqrt(14 * 77)),
    ("estimate_derivative", {"function": "lambda x: 3*x**2 + 2*x + 1", "x": 5}, 32.0),
    ("estimate_derivative", {"function": "lambda t: sin(t)", "x": 0}, 1.0),
    ("estimate_derivative", {"function": "x**3", "x": 2}, 12.0),
    ("estimate_derivative", {"function": "lambda x: math.exp(2*x)", "x": 0}, 2.0),
    ("estimate_derivative", {"function": "lambda x: 2**x", "x": 3}, 8 * math.log(2)),
    ("estimate_derivative", {"function": "lambda x: 1/x", "x": 2}, -0.25),
    ("estimate_derivative", {"function": "lambda x: sqrt(x) + log(x)", "x": 4}, 0.25 + 0.25),
    ("estimate_derivative", {"function": "lambda x: -pi*x", "x": 1}, -math.pi),
    ("calculate_mean", {"numbers": [1, 2, 3, 4]}, 2.5),
    ("calculate_standard_deviation", {"numbers": [2, 4, 4, 4, 5, 5, 7, 9]}, 2.0),
    ("calculate_standard_deviation", {"numbers": [7]}, 0.0),
    ("calculate_slope", {"x": [1, 2, 3], "y": [2, 4, 6]}, 2.0),
    ("calculate_intercept", {"x": [1, 2, 3], "y": [3, 5, 7], "slope": 2}, 1.0),
    ("predict_value", {"slope": 2, "intercept": 1, "x": 3}, 7),
    ("linear_regression", {"x": [1, 2, 3], "y": [4, 5, 6], "point": 10}, 13.0),
    ("linear_regression", {"x": [0, 1, 2, 3], "y": [1, 3, 2, 4], "point": 4}, 4.5),
    ("calculate_density", {"mass": 50, "volume": 10}, 5.0),
    ("calculate_displacement", {"initial_velocity": 10, "acceleration": 2, "time": 5}, 75.0),
    ("calculate_final_velocity", {"initial_velocity": 0, "acceleration": 9.8, "time": 10}, 98.0),
    ("calculate_electrostatic_potential_energy", {"charge": 5.0, "voltage": 10.0}, 50.0),
    ("convert_temperature", {"temperature": 100, "unit_from": "Celsius", "unit_to": "Fahrenheit"}, 212.0),
    ("convert_temperature", {"temperature": 32, "unit_from": "F", "unit_to": "celsius"}, 0.0),
    ("convert_temperature", {"temperature": 0, "unit_from": "Celsius", "unit_to": "Kelvin"}, 273.15),
    ("calculate_basal_metabolic_rate", {"weight": 70, "height": 175, "age": 30, "gender": "male"}, 1648.75),
    ("calculate_basal_metabolic_rate", {"weight": 70, "height": 175, "age": 30, "gender": "Female"}, 1482.75),
    ("calculate_basal_metabolic_rate", {"weight": 70, "height": 175, "age": 30, "gender": "other"}, 1565.75),
    ("calculate_daily_energy_expenditure", {"basal_metabolic_rate": 1500, "activity_level": 3}, 2325.0),
    ("calculate_nutritional_needs",
     {"weight": 70, "height": 175, "age": 30, "gender": "male", "activity_level": 2, "goal": "maintain"},
     {"calories": 2267.03125, "protein_grams": 2267.03125 * 0.30 / 4, "fat_grams": 2267.03125 * 0.25 / 9,
      "carbohydrates_grams": 2267.03125 * 0.45 / 4}),
    ("calculate_nutritional_needs",
     {"weight": 70, "height": 175, "age": 30, "gender": "male", "activity_level": 1, "goal": "lose"},
     {"calories": 1648.75 * 1.2 - 500, "protein_grams": (1648.75 * 1.2 - 500) * 0.30 / 4,
      "fat_grams": (1648.75 * 1.2 - 500) * 0.25 / 9, "carbohydrates_grams": (1648.75 * 1.2 - 500) * 0.45 / 4}),
    ("calculate_future_value", {"present_value": 1000, "interest_rate": 0.1, "periods": 2}, 1210.0),
    ("calculate_investment_value",
     {"initial_investment": 1000, "annual_contribution": 100, "years": 2, "annual_return": 0.1,
      "inflation_rate": [0.1, 0.1]}, 1300 / 1.1),
    ("calculate_investment_value",
     {"initial_investment": 1000, "annual_contribution": 100, "years": 2, "annual_return": 0.1,
      "inflation_rate": [0.1, 0.1], "adjust_for_inflation": False}, 1420.0),
    ("mortgage_calculator", {"loan_amount": 100000, "interest_rate": 0.06, "loan_period": 30}, 599.5505251527569),
    ("mortgage_calculator", {"loan_amount": 1200, "interest_rate": 0, "loan_period": 1}, 100.0),
    ("compound_interest", {"principal": 1000, "rate": 0.05, "times_compounded": 1, "years": 2}, 102.5),
    ("compound_interest", {"principal": 1000, "rate": 0.12, "times_compounded": 12, "years": 1}, 1000 * (1.01**12 - 1)),
    ("inflation_adjustment", {"amount": 1100, "inflation_rate": 0.1, "years": 1}, 1000.0),
    ("adjust_for_inflation", {"investment_value": 1210, "inflation_rates": [0.1, 0.1]}, 1000.0),
    ("calculate_interest_rate", {"principal": 1000, "rate": 0.05, "time": 2}, 100.0),
    ("apply_discount", {"total": 200, "discount": 15}, 170.0),
    ("calculate_total", {"quantities": [2, 3], "prices": [1.5, 2]}, 9.0),
    ("order_food", {"item": ["burger", "ice cream"], "quantity": [10, 7], "price": [5, 2]}, 64),
    ("order_food", {"item": ["donut"], "quantity": [12], "price": [1]}, 12),
    ("calculate_total_price", {"room_price": 100, "nights": 3, "discount": 50}, 250),
    ("calculate_total_price", {"room_price": 100, "nights": 3}, 300),
    ("geometry_area_circle", {"radius": 2}, 4 * math.pi),
    ("calculate_triangle_area", {"base": 10, "height": 5}, 25.0),
    ("get_distance", {"pointA": [0, 0], "pointB": [3, 4]}, 5.0),
    ("get_distance", {"pointA": (1, 1), "pointB": (4, 5)}, 5.0),
    ("polygon_area", {"vertices": [[0, 0], [2, 0], [2, 2], [0, 2]]}, 4.0),
    ("polygon_area", {"vertices": [[-1, 0], [2, 3], [0, 4], [-2, 2]]}, 7.5),
    ("validate_polygon", {"vertices": [[0, 0], [2, 0], [2, 2], [0, 2]]}, True),
    ("validate_polygon", {"vertices": [[0, 0], [2, 2], [2, 0], [0, 2]]}, False),
    ("validate_polygon", {"vertices": [[0, 0], [1, 1], [2, 2]]}, False),
    ("validate_polygon", {"vertices": [[0, 0], [1, 1]]}, False),
    ("validate_polygon", {"vertices": [[0, 0], [2, 0], [2, 2], [2, 0], [0, 2]]}, False),
    ("maxPoints", {"points": [[1, 1], [2, 2], [3, 3]]}, 3),
    ("maxPoints", {"points": [[1, 1], [1, 1], [2, 3]]}, 3),
    ("maxPoints", {"points": [[1, 1], [3, 2], [5, 3], [4, 1], [2, 3], [1, 4]]}, 4),
    ("maxPoints", {"points": [[0, 0]]}, 1),
    ("maxPoints", {"points": []}, 0),
    ("convert_coordinates", {"coordinates": [(1, 2), (3.5, 4)]}, [[1, 2], [3.5, 4]]),
    ("add_binary_numbers", {"a": "0011", "b": "1100"}, "1111"),
    ("add_binary_numbers", {"a": "1", "b": "1"}, "10"),
    ("convert_binary_to_decimal", {"binary": "1011"}, 11),
    ("convert_decimal_to_hex", {"decimal": 255}, "FF"),
    ("convert_decimal_to_hex", {"decimal": 0}, "0"),
    ("convert_decimal_to_hex", {"decimal": -255}, "-FF"),
]


@pytest.mark.parametrize(("name", "arguments", "expected"), KNOWN_VALUES, ids=[k[0] for k in KNOWN_VALUES])
def test_known_values(name: str, arguments: dict[str, Any], expected: Any) -> None:
    result = _call(name, **arguments)
    if isinstance(expected, float):
        assert result == pytest.approx(expected, rel=1e-12, abs=1e-12)
    elif isinstance(expected, dict) and all(isinstance(v, float) for v in expected.values()):
        assert result == pytest.approx(expected, rel=1e-12)
    else:
        assert result == expected
        assert type(result) is type(expected)


def test_every_pure_function_has_a_known_value() -> None:
    pure = set(FUNCTIONS) - {function.__name__ for function in STAND_INS}
    covered = {name for name, _, _ in KNOWN_VALUES} | {"book_room", "confirm_booking"}
    assert pure <= covered


def test_booking_records() -> None:
    booking = _call("book_room", room_type="deluxe", price=1000, check_in_date="08-11-2024",
                    check_out_date="08-15-2024", customer_id="123")
    assert booking["status"] == "booked" and booking["nights"] == 4 and booking["max_price"] == 1000
    assert re.fullmatch(r"BK-[0-9A-F]{8}", booking["booking_id"]) and booking["room_number"].isdigit()
    assert booking == _call("book_room", room_type="deluxe", price=1000.0, check_in_date="08-11-2024",
                            check_out_date="08-15-2024", customer_id="123")
    confirmation = _call("confirm_booking", customer_id="123", room_number=booking["room_number"], total_price=250.5)
    assert confirmation["status"] == "confirmed" and confirmation["total_price"] == 250.5
    assert re.fullmatch(r"CF-[0-9A-F]{8}", confirmation["confirmation_number"])


# ---------------------------------------------------------------------------------------------
# Error cases of the pure functions

ERRORS: list[tuple[str, dict[str, Any], type[Exception], str]] = [
    ("math_factorial", {"n": -1}, ValueError, "'n' must be non-negative"),
    ("math_factorial", {"n": "5"}, TypeError, "'n' must be an integer"),
    ("math_factorial", {"n": 2.5}, ValueError, "'n' must be a whole number"),
    ("math_factorial", {"n": True}, TypeError, "'n' must be an integer"),
    ("calc_binomial_probability", {"n": 10, "k": 2, "p": 1.5}, ValueError, "'p' must be a probability"),
    ("get_fibonacci_number", {"n": 0}, ValueError, "'n' must be a positive position"),
    ("get_prime_factors", {"number": 0}, ValueError, "'number' must be a positive integer"),
    ("quadratic_roots", {"a": 0, "b": 1, "c": 1}, ValueError, "'a' must be non-zero"),
    ("mat_mul", {"matA": [[1, 2]], "matB": [[1], [2], [3]]}, ValueError, "columns"),
    ("mat_mul", {"matA": [[1, 2], [3]], "matB": [[1], [2]]}, ValueError, "'matA' must be rectangular"),
    ("mat_mul", {"matA": [1, 2], "matB": [[1], [2]]}, TypeError, "'matA[0]' must be a list"),
    ("sort_array", {"array": [1, "2"]}, TypeError, "'array' must contain only numbers; item 1 is str"),
    ("sort_array", {"array": [1], "reverse": "yes"}, TypeError, "'reverse' must be a boolean"),
    ("calculate_cosine_similarity", {"vectorA": [1, 2], "vectorB": [1]}, ValueError, "same length"),
    ("calculate_cosine_similarity", {"vectorA": [0, 0], "vectorB": [1, 1]}, ValueError, "zero vector"),
    ("estimate_derivative", {"function": "__import__('os').system('x')", "x": 1}, ValueError, "unsupported"),
    ("estimate_derivative", {"function": "lambda x: x.__class__", "x": 1}, ValueError, "unsupported"),
    ("estimate_derivative", {"function": "lambda x: y * x", "x": 1}, ValueError, "unknown name 'y'"),
    ("estimate_derivative", {"function": "lambda x, y: x", "x": 1}, ValueError, "exactly one variable"),
    ("estimate_derivative", {"function": "lambda x: (", "x": 1}, ValueError, "not valid Python lambda"),
    ("estimate_derivative", {"function": "lambda x: x ** 10 ** 10", "x": 2}, OverflowError, ""),
    ("estimate_derivative", {"function": "lambda x: x", "x": "1"}, TypeError, "'x' must be a number"),
    ("calculate_mean", {"numbers": []}, ValueError, "at least 1 item"),
    ("calculate_mean", {"numbers": "1,2"}, TypeError, "'numbers' must be a list"),
    ("calculate_standard_deviation", {"numbers": [1, None]}, TypeError, "item 1 is NoneType"),
    ("linear_regression", {"x": [1, 1], "y": [2, 3], "point": 1}, ValueError, "two different values"),
    ("linear_regression", {"x": [1, 2, 3], "y": [2, 3], "point": 1}, ValueError, "same length"),
    ("calculate_density", {"mass": 1, "volume": 0}, ValueError, "'volume' must be positive"),
    ("convert_temperature", {"temperature": 1, "unit_from": "Rankine", "unit_to": "C"}, ValueError, "'unit_from'"),
    ("convert_temperature", {"temperature": -500, "unit_from": "C", "unit_to": "F"}, ValueError, "absolute zero"),
    ("calculate_basal_metabolic_rate", {"weight": 70, "height": 175, "age": 30, "gender": "x"}, ValueError, "'gender'"),
    ("calculate_daily_energy_expenditure", {"basal_metabolic_rate": 1500, "activity_level": 6}, ValueError,
     "'activity_level' must be one of"),
    ("calculate_nutritional_needs",
     {"weight": 70, "height": 175, "age": 30, "gender": "male", "activity_level": 2, "goal": "bulk"},
     ValueError, "'goal'"),
    ("calculate_investment_value",
     {"initial_investment": 1, "annual_contribution": 1, "years": 3, "annual_return": 0.1, "inflation_rate": [0.1]},
     ValueError, "one rate per year"),
    ("mortgage_calculator", {"loan_amount": 1000, "interest_rate": 0.05, "loan_period": 0}, ValueError,
     "'loan_period' must be positive"),
    ("compound_interest", {"principal": 1, "rate": 0.1, "times_compounded": 0, "years": 1}, ValueError,
     "'times_compounded'"),
    ("apply_discount", {"total": 100, "discount": 150}, ValueError, "between 0 and 100"),
    ("order_food", {"item": ["a", "b"], "quantity": [1], "price": [1]}, ValueError, "same length"),
    ("order_food", {"item": ["a"], "quantity": [-1], "price": [1]}, ValueError, "negative"),
    ("calculate_total_price", {"room_price": 100, "nights": 1, "discount": 500}, ValueError, "'discount'"),
    ("book_room", {"room_type": "king", "check_in_date": "2024-08-11", "check_out_date": "08-15-2024",
                   "customer_id": "1"}, ValueError, "MM-DD-YYYY"),
    ("book_room", {"room_type": "king", "check_in_date": "08-15-2024", "check_out_date": "08-11-2024",
                   "customer_id": "1"}, ValueError, "after"),
    ("confirm_booking", {"customer_id": "1", "room_number": 12, "total_price": 10}, TypeError, "'room_number'"),
    ("geometry_area_circle", {"radius": -1}, ValueError, "'radius' must be non-negative"),
    ("get_distance", {"pointA": [0, 0, 0], "pointB": [1, 1]}, ValueError, "'pointA' must be a point"),
    ("polygon_area", {"vertices": [[0, 0], [1, 1]]}, ValueError, "at least 3 points"),
    ("validate_polygon", {"vertices": [[0, 0], "ab", [1, 0]]}, TypeError, "'vertices[1]'"),
    ("maxPoints", {"points": [[1, 2, 3]]}, ValueError, "'points[0]' must be a point"),
    ("add_binary_numbers", {"a": "102", "b": "1"}, ValueError, "'a' must be a binary number"),
    ("convert_binary_to_decimal", {"binary": 101}, TypeError, "'binary' must be a string"),
    ("convert_decimal_to_hex", {"decimal": "ff"}, TypeError, "'decimal' must be an integer"),
]


@pytest.mark.parametrize(("name", "arguments", "error", "fragment"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(name: str, arguments: dict[str, Any], error: type[Exception], fragment: str) -> None:
    with pytest.raises(error) as info:
        _call(name, **arguments)
    assert fragment in str(info.value)
    assert name not in str(info.value)


# ---------------------------------------------------------------------------------------------
# Stand-ins: realistic shapes, built-in facts, coherence and errors


def test_random_number_is_in_range_and_repeatable() -> None:
    values = [_call("generate_random_number", min=1, max=6) for _ in range(3)]
    assert len(set(values)) == 1 and 1 <= values[0] <= 6
    assert _call("generate_random_number", min=5, max=5) == 5
    spread = {_call("generate_random_number", min=0, max=k) for k in range(50, 80)}
    assert len(spread) > 10


def test_weather_shape() -> None:
    weather = _call("get_weather_data", coordinates=[90.0, 0.0])
    assert set(weather) == {"latitude", "longitude", "current", "current_units"}
    assert set(weather["current"]) == set(weather["current_units"]) == {
        "temperature_2m", "relative_humidity_2m", "wind_speed_10m", "weather_code"}
    assert weather["current"]["temperature_2m"] < 0  # the North Pole is cold
    assert _call("get_weather_data", coordinates=[90, 0]) == weather


def test_stock_quotes_history_and_company_names() -> None:
    price = _call("get_stock_price_by_stock_name", stock_name="AAPL")
    assert _call("get_stock_price_by_stock_name", stock_name="aapl") == price
    assert isinstance(_call("get_stock_price_by_stock_name", stock_name="MSFT"), float)
    assert _call("get_company_name_by_stock_name", stock_name="GOOGL") == "Alphabet Inc."
    history = _call("get_stock_history", stock_name="NVDA", interval="1mo", diffandsplits="true")
    assert set(history) == {"symbol", "interval", "currency", "prices", "events"}
    assert len(history["prices"]) == 12
    assert set(history["prices"][0]) == {"date", "open", "high", "low", "close", "volume"}
    assert history["prices"][-1]["close"] == _call("get_stock_price_by_stock_name", stock_name="NVDA")
    assert {"date": "2024-06-10", "ratio": "10:1"} in history["events"]["splits"]
    dates = [bar["date"] for bar in history["prices"]]
    assert dates == sorted(dates)
    assert all(bar["low"] <= min(bar["open"], bar["close"]) <= max(bar["open"], bar["close"]) <= bar["high"]
               for bar in history["prices"])
    plain = _call("get_stock_history", stock_name="NVDA", interval="1mo")
    assert "events" not in plain and plain["prices"] == history["prices"]
    intraday = _call("get_stock_history", stock_name="AAPL", interval="5m", diffandsplits=False)
    assert intraday["prices"][-1]["date"] == "2024-06-28 15:55"


def test_currency_conversion() -> None:
    assert _call("convert_currency", amount=100, from_currency="USD", to_currency="usd") == 100
    there = _call("convert_currency", amount=1000, from_currency="EUR", to_currency="JPY")
    back = _call("convert_currency", amount=there, from_currency="JPY", to_currency="EUR")
    assert back == pytest.approx(1000)
    assert 100 < there / 1000 < 250  # a yen is worth a small fraction of a euro


def test_amazon_products() -> None:
    price = _call("get_price_by_amazon_ASIN", ASIN="B08PPDJWC8")
    assert re.fullmatch(r"\$\d+\.\d\d", price)
    assert _call("get_price_by_amazon_ASIN", ASIN="b08ppdjwc8") == price
    assert isinstance(_call("get_product_name_by_amazon_ASIN", ASIN="B08PPDJWC8"), str)
    rating = _call("get_rating_by_amazon_ASIN", ASIN="B08PPDJWC8")
    assert isinstance(rating, float) and 1 <= rating <= 5


def test_movies_slang_and_covid_facts() -> None:
    assert _call("get_movie_director", movie_name="Pulp Fiction") == "Quentin Tarantino"
    assert _call("get_director_by_movie_name", movie_name="the dark knight") == "Christopher Nolan"
    assert _call("get_movie_director", movie_name="Kill Bill") == "Quentin Tarantino"
    assert _call("get_movie_rating", movie_name="Godfather") == "R"
    assert _call("get_movie_rating", movie_name="Avatar") == "PG-13"
    assert _call("get_movie_genre", movie_name="Schindler's List") == "Biography, Drama, History"
    assert "once" in _call("find_term_on_urban_dictionary", term="YOLO")
    us_deaths = _call("get_covid_death_by_country", country="United States")
    assert _call("get_covid_death_by_country", country="USA") == us_deaths
    assert _call("get_covid_death_by_country", country="Brazil") > _call("get_covid_death_by_country", country="Spain")
    assert isinstance(_call("get_active_covid_case_by_country", country="Italy"), int)


def test_geography_stand_ins_agree_with_each_other() -> None:
    assert _call("get_coordinates_from_city", city_name="Paris") == {"lat": 48.8566, "lon": 2.3522}
    assert _call("get_coordinates_from_city", city_name=" paris, France ") == {"lat": 48.8566, "lon": 2.3522}
    assert _call("get_coordinates_from_city", city_name="São Paulo")["lat"] < 0
    for ip in ("192.168.1.1", "8.8.8.8", "2001:db8::1"):
        zipcode = _call("get_zipcode_by_ip_address", ip_address=ip)
        assert re.fullmatch(r"\d{5}", zipcode)
        city = _call("retrieve_city_based_on_zipcode", zipcode=zipcode)
        coordinates = _call("get_coordinates_from_city", city_name=city)
        assert _call("get_coordinate_by_ip_address", ip_address=ip) == coordinates
    assert _call("retrieve_city_based_on_zipcode", zipcode="90210") == "Beverly Hills"
    assert _call("retrieve_city_based_on_zipcode", zipcode=8540) == "Princeton"
    assert _call("retrieve_city_based_on_zipcode", zipcode="10001-1234") == "New York"


@pytest.mark.parametrize(
    ("long", "lat", "zone"),
    [("139.6917", "35.6895", "Asia/Tokyo"), ("-80.75", "35.22", "America/New_York"), (12.4924, 41.8902, "Europe/Rome"),
     ("123.45", "-67.89", "Etc/GMT-8"), ("-150", "0", "Etc/GMT+10"), ("0", "0", "Etc/GMT")],
)
def test_time_zones(long: str | float, lat: str | float, zone: str) -> None:
    assert _call("get_time_zone_by_coord", long=long, lat=lat) == zone


@pytest.mark.parametrize(
    ("year", "country", "day", "name"),
    [
        ("2022", "US", "2022-11-24", "Thanksgiving Day"),
        ("2022", "US", "2022-05-30", "Memorial Day"),
        (2018, "US", "2018-01-15", "Martin Luther King, Jr. Day"),
        ("2022", "GB", "2022-01-03", "New Year's Day"),  # Jan 1 was a Saturday
        ("2021", "GB", "2021-12-27", "Christmas Day"),  # Dec 25 was a Saturday
        ("2021", "GB", "2021-12-28", "Boxing Day"),
        ("2024", "IT", "2024-03-31", "Easter Sunday"),
        ("2019", "ES", "2019-04-19", "Good Friday"),
        ("2010", "FR", "2010-07-14", "Bastille Day"),
        ("2005", "DE", "2005-05-05", "Ascension Day"),
        ("2024", "RO", "2024-05-05", "Easter Sunday"),  # Orthodox Easter
        ("2023", "UA", "2023-04-16", "Easter Sunday"),
        ("2020", "NL", "2020-04-27", "King's Day"),
        ("2020", "AT", "2020-06-11", "Corpus Christi"),
        ("2021", "PL", "2021-05-03", "Constitution Day"),
        ("2022", "SK", "2022-08-29", "Slovak National Uprising Anniversary"),
    ],
)
def test_holidays(year: str | int, country: str, day: str, name: str) -> None:
    holidays = _call("retrieve_holiday_by_year", year=year, country=country)
    assert {"date": day, "name": name} in holidays
    assert [h["date"] for h in holidays] == sorted(h["date"] for h in holidays)
    assert all(h["date"].startswith(str(year)) for h in holidays)


def test_us_juneteenth_only_from_2021() -> None:
    names = lambda year: {h["name"] for h in _call("retrieve_holiday_by_year", year=year, country="us")}
    assert "Juneteenth National Independence Day" in names("2021")
    assert "Juneteenth National Independence Day" not in names("2020")


STAND_IN_ERRORS: list[tuple[str, dict[str, Any], type[Exception], str]] = [
    ("convert_currency", {"amount": 1, "from_currency": "XYZ", "to_currency": "USD"}, ValueError, "'from_currency'"),
    ("convert_currency", {"amount": "1", "from_currency": "EUR", "to_currency": "USD"}, TypeError, "'amount'"),
    ("get_coordinate_by_ip_address", {"ip_address": "999.1.1.1"}, ValueError, "not a valid IPv4 or IPv6"),
    ("get_zipcode_by_ip_address", {"ip_address": "localhost"}, ValueError, "not a valid IPv4 or IPv6"),
    ("get_zipcode_by_ip_address", {"ip_address": 19216811}, TypeError, "'ip_address' must be a string"),
    ("get_coordinates_from_city", {"city_name": "Atlantis"}, LookupError, "no location found"),
    ("get_coordinates_from_city", {"city_name": ""}, ValueError, "must not be empty"),
    ("retrieve_city_based_on_zipcode", {"zipcode": "ABCDE"}, ValueError, "5-digit"),
    ("retrieve_city_based_on_zipcode", {"zipcode": "00001"}, LookupError, "no city found"),
    ("get_time_zone_by_coord", {"long": "east", "lat": "10"}, ValueError, "'long' must be a number"),
    ("get_time_zone_by_coord", {"long": "10", "lat": "95"}, ValueError, "'lat' must be between"),
    ("get_weather_data", {"coordinates": [100, 0]}, ValueError, "within"),
    ("get_weather_data", {"coordinates": "48.8,2.3"}, TypeError, "'coordinates' must be a list"),
    ("get_movie_director", {"movie_name": 42}, TypeError, "'movie_name' must be a string"),
    ("get_movie_rating", {"movie_name": "A Movie That Does Not Exist"}, LookupError, "Movie not found"),
    ("get_movie_genre", {"movie_name": ["Avatar"]}, TypeError, "'movie_name'"),
    ("find_term_on_urban_dictionary", {"term": "qwertyuiop"}, LookupError, "no definition found"),
    ("get_covid_death_by_country", {"country": "Narnia"}, LookupError, "no COVID-19 data"),
    ("get_active_covid_case_by_country", {"country": None}, TypeError, "'country'"),
    ("get_stock_price_by_stock_name", {"stock_name": "ZZZZ"}, LookupError, "no listed stock"),
    ("get_company_name_by_stock_name", {"stock_name": "Apple Inc."}, ValueError, "ticker symbol"),
    ("get_stock_history", {"stock_name": "AAPL", "interval": "2d"}, ValueError, "'interval' must be one of"),
    ("get_stock_history", {"stock_name": "AAPL", "interval": "1d", "diffandsplits": "maybe"}, ValueError,
     "'diffandsplits'"),
    ("get_price_by_amazon_ASIN", {"ASIN": "B08"}, ValueError, "10-character"),
    ("get_rating_by_amazon_ASIN", {"ASIN": 12345}, TypeError, "'ASIN' must be a string"),
    ("get_product_name_by_amazon_ASIN", {"ASIN": "B08PPDJWC!"}, ValueError, "10-character"),
    ("retrieve_holiday_by_year", {"year": "2020", "country": "JP"}, ValueError, "'country' must be one of"),
    ("retrieve_holiday_by_year", {"year": "20x0", "country": "US"}, ValueError, "4-digit"),
    ("retrieve_holiday_by_year", {"year": "1800", "country": "US"}, ValueError, "between"),
    ("generate_random_number", {"min": 10, "max": 1}, ValueError, "'min' must not exceed 'max'"),
    ("generate_random_number", {"min": "1", "max": 5}, TypeError, "'min' must be an integer"),
]


@pytest.mark.parametrize(
    ("name", "arguments", "error", "fragment"), STAND_IN_ERRORS, ids=[e[0] for e in STAND_IN_ERRORS]
)
def test_stand_in_errors(name: str, arguments: dict[str, Any], error: type[Exception], fragment: str) -> None:
    with pytest.raises(error) as info:
        _call(name, **arguments)
    assert fragment in str(info.value)
    assert name not in str(info.value)
