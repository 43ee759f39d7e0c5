"""Conversions: ten unit conversions, each one way of a pair, all taking one number and returning one.

What it tests: telling apart tools that take the very same parameters. Every tool is
``(value: float) -> float``, so neither the parameter schema nor Python's errors distinguish
Celsius-to-Fahrenheit from Fahrenheit-to-Celsius: only what a tool returned for what it was given
does. Results are rounded to 4 decimals; a value that is not a number (or is a bool) is a
``TypeError`` that names the parameter. Every request needs one call, and the wrong tool of a pair
(or any other tool) returns another number for the same value, which the tests check.
"""

from __future__ import annotations

import dspy

from otbench.core.trajectory import Trajectory
from otbench.envs.toolkits.generation import Template, generate, number_draw, one_call_answer
from otbench.envs.toolkits.metrics import answer_metric

FINGERPRINT = "4b88462e75c18ed7"
"""The digest of the generated requests (:func:`~otbench.envs.toolkits.generation.fingerprint`)."""
SIZES = {"train": 16, "test": 50}

_KM_PER_MILE = 1.609344
_KG_PER_POUND = 0.45359237
_LITERS_PER_GALLON = 3.785411784
_METERS_PER_FOOT = 0.3048


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"value must be a number, got {type(value).__name__}")
    return float(value)


def celsius_to_fahrenheit(value: float) -> float:
    """Convert a temperature from degrees Celsius to degrees Fahrenheit (value * 9/5 + 32), rounded to 4 decimals."""
    return round(_number(value) * 9 / 5 + 32, 4)


def fahrenheit_to_celsius(value: float) -> float:
    """Convert a temperature from degrees Fahrenheit to degrees Celsius ((value - 32) * 5/9), rounded to 4
    decimals."""
    return round((_number(value) - 32) * 5 / 9, 4)


def km_to_miles(value: float) -> float:
    """Convert a distance from kilometres to miles (1 mile = 1.609344 km), rounded to 4 decimals."""
    return round(_number(value) / _KM_PER_MILE, 4)


def miles_to_km(value: float) -> float:
    """Convert a distance from miles to kilometres (1 mile = 1.609344 km), rounded to 4 decimals."""
    return round(_number(value) * _KM_PER_MILE, 4)


def kg_to_pounds(value: float) -> float:
    """Convert a mass from kilograms to pounds (1 lb = 0.45359237 kg), rounded to 4 decimals."""
    return round(_number(value) / _KG_PER_POUND, 4)


def pounds_to_kg(value: float) -> float:
    """Convert a mass from pounds to kilograms (1 lb = 0.45359237 kg), rounded to 4 decimals."""
    return round(_number(value) * _KG_PER_POUND, 4)


def liters_to_gallons(value: float) -> float:
    """Convert a volume from litres to US gallons (1 gallon = 3.785411784 litres), rounded to 4 decimals."""
    return round(_number(value) / _LITERS_PER_GALLON, 4)


def gallons_to_liters(value: float) -> float:
    """Convert a volume from US gallons to litres (1 gallon = 3.785411784 litres), rounded to 4 decimals."""
    return round(_number(value) * _LITERS_PER_GALLON, 4)


def meters_to_feet(value: float) -> float:
    """Convert a length from metres to feet (1 foot = 0.3048 m), rounded to 4 decimals."""
    return round(_number(value) / _METERS_PER_FOOT, 4)


def feet_to_meters(value: float) -> float:
    """Convert a length from feet to metres (1 foot = 0.3048 m), rounded to 4 decimals."""
    return round(_number(value) * _METERS_PER_FOOT, 4)


TOOLS = (celsius_to_fahrenheit, fahrenheit_to_celsius, km_to_miles, miles_to_km, kg_to_pounds, pounds_to_kg,
         liters_to_gallons, gallons_to_liters, meters_to_feet, feet_to_meters)


TEMPLATES = (
    Template(("The thermostat reads {v} °C. What is that in Fahrenheit?",
              "Convert {v} degrees Celsius to Fahrenheit."),
             ("The weather app shows {v} degrees Celsius; what is that on a Fahrenheit scale?",
              "It is {v}°C in Lisbon today. How warm is that in °F?",
              "A lab sample must be kept at {v} degrees Celsius. Express that in Fahrenheit."),
             number_draw("celsius_to_fahrenheit", "value", -25, 45)),
    Template(("The forecast says {v} °F. What is that in Celsius?",
              "Convert {v} degrees Fahrenheit to Celsius."),
             ("A US weather report gives {v}°F for tomorrow. What is that in degrees Celsius?",
              "My friend in Texas says it's {v} degrees Fahrenheit outside. How many °C is that?",
              "The hotel room's thermostat is set to {v} °F; give me the temperature in Celsius."),
             number_draw("fahrenheit_to_celsius", "value", 5, 110)),
    Template(("How many miles is {v} km?",
              "Convert {v} kilometres to miles."),
             ("The trail is {v} kilometres long. How long is that in miles?",
              "My car's trip meter says {v} km. What would that be in miles?",
              "A race of {v} km: how many miles do the runners cover?"),
             number_draw("km_to_miles", "value", 1, 900, decimals=1)),
    Template(("How many kilometres is {v} miles?",
              "Convert {v} miles to kilometres."),
             ("The road sign says the city is {v} miles away. How far is that in km?",
              "I ran {v} miles this week. How many kilometres is that?",
              "The flight covers {v} miles; express the distance in kilometres."),
             number_draw("miles_to_km", "value", 1, 900, decimals=1)),
    Template(("How many pounds is {v} kg?",
              "Convert {v} kilograms to pounds."),
             ("My suitcase weighs {v} kilograms. What's that in pounds?",
              "The dumbbell is marked {v} kg. How heavy is it in lb?",
              "A parcel of {v} kilos: what does it weigh in pounds?"),
             number_draw("kg_to_pounds", "value", 1, 120, decimals=1)),
    Template(("How many kilograms is {v} lb?",
              "Convert {v} pounds to kilograms."),
             ("My dog weighs {v} pounds. How many kilograms is that?",
              "The crate weighs {v} lb; how much is that in kg?",
              "The airline allows {v} pounds of luggage. What is the limit in kilograms?"),
             number_draw("pounds_to_kg", "value", 2, 200, decimals=1)),
    Template(("How many US gallons is {v} litres?",
              "Convert {v} liters to gallons."),
             ("The fish tank holds {v} litres. How many US gallons is that?",
              "I filled up {v} liters of fuel. What is that in gallons?",
              "A rain barrel of {v} litres: its volume in US gallons, please."),
             number_draw("liters_to_gallons", "value", 5, 200, decimals=1)),
    Template(("How many litres is {v} US gallons?",
              "Convert {v} gallons to liters."),
             ("The water heater holds {v} gallons. How many litres is that?",
              "We used {v} US gallons of paint. How much is that in liters?",
              "A {v}-gallon aquarium: what's its volume in litres?"),
             number_draw("gallons_to_liters", "value", 1, 120, decimals=1)),
    Template(("How many feet is {v} m?",
              "Convert {v} metres to feet."),
             ("The building is {v} metres tall. What is its height in feet?",
              "My kite line is {v} meters long. How many feet is that?",
              "The ship is {v} m long; give me the length in feet."),
             number_draw("meters_to_feet", "value", 2, 400, decimals=1)),
    Template(("How many metres is {v} ft?",
              "Convert {v} feet to meters."),
             ("The cliff is {v} feet high. What is its height in metres?",
              "The sailboat is {v} ft long. How many meters is that?",
              "A hiking trail climbs {v} feet. How much is that in metres?"),
             number_draw("feet_to_meters", "value", 5, 3000)),
)

def examples() -> dict[str, list[dspy.Example]]:
    """The train and test requests."""
    return generate("conversions", TEMPLATES, SIZES, one_call_answer(TOOLS))


def metric(example: dspy.Example, trajectory: Trajectory) -> dspy.Prediction:
    """The converted value among the outputs, in one call."""
    return answer_metric(example, trajectory)
