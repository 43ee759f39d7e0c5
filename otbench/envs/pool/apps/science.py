"""Health, mechanics, electronics and running: everyday formulas in SI units unless a parameter says otherwise."""

from __future__ import annotations

import math
import random
from typing import Any

from otbench.envs.bfcl.functions import _checks as check
from otbench.envs.pool.spec import ToolSpec, tool

G = 9.80665
"""Standard gravity, m/s²."""
LIGHT_SPEED = 299_792_458.0
GRAVITATIONAL_CONSTANT = 6.6743e-11
_WEIGHT = ("weight", "mass:kg", "body mass in kilograms")
_HEIGHT_CM = ("height", "length:cm", "body height in centimetres")
_AGE = ("age", "age", "age in years")
_SEX = ("sex", "sex", "male or female")
_MASS = ("mass", "mass:kg", "the mass in kilograms")
_SPEED = ("speed", "speed:m_s", "the speed in metres per second")
_HEIGHT_M = ("height", "length:m", "the height in metres")
_CATEGORIES = ((18.5, "underweight"), (25.0, "normal weight"), (30.0, "overweight"), (math.inf, "obese"))


def _sex(value: Any) -> str:
    text = check.non_empty_string(value, "sex").lower()
    if text not in ("male", "female"):
        raise ValueError(f"'sex' must be male or female, got {value!r}")
    return text


def _age(value: Any) -> int:
    years = check.integer(value, "age")
    if not 1 <= years <= 120:
        raise ValueError(f"'age' must be between 1 and 120, got {years}")
    return years


# -- health -------------------------------------------------------------------------------------------------------
def bmi(weight: float, height: float) -> float:
    metres = check.positive(height, "height") / 100
    return round(check.positive(weight, "weight") / metres**2, 2)


def bmi_imperial(weight: float, height: float) -> float:
    return round(703 * check.positive(weight, "weight") / check.positive(height, "height") ** 2, 2)


def bmi_category(bmi: float) -> str:
    value = check.positive(bmi, "bmi")
    return next(label for limit, label in _CATEGORIES if value < limit)


def bmr_harris_benedict(weight: float, height: float, age: int, sex: str) -> float:
    mass, tall, years = check.positive(weight, "weight"), check.positive(height, "height"), _age(age)
    if _sex(sex) == "male":
        return round(88.362 + 13.397 * mass + 4.799 * tall - 5.677 * years, 1)
    return round(447.593 + 9.247 * mass + 3.098 * tall - 4.330 * years, 1)


def ideal_weight(height: float, sex: str) -> float:
    inches_over = check.positive(height, "height") / 2.54 - 60
    return round((50.0 if _sex(sex) == "male" else 45.5) + 2.3 * inches_over, 1)


def body_surface_area(height: float, weight: float) -> float:
    return round(math.sqrt(check.positive(height, "height") * check.positive(weight, "weight") / 3600), 4)


def max_heart_rate(age: int) -> int:
    return 220 - _age(age)


def max_heart_rate_tanaka(age: int) -> float:
    return round(208 - 0.7 * _age(age), 1)


def target_heart_rate(age: int, intensity: float) -> float:
    share = check.number(intensity, "intensity")
    if not 0 < share <= 100:
        raise ValueError(f"'intensity' must be a percentage from 1 to 100, got {intensity!r}")
    return round((220 - _age(age)) * share / 100, 1)


def lean_body_mass(weight: float, height: float, sex: str) -> float:
    mass, tall = check.positive(weight, "weight"), check.positive(height, "height")
    if _sex(sex) == "male":
        return round(0.407 * mass + 0.267 * tall - 19.2, 2)
    return round(0.252 * mass + 0.473 * tall - 48.3, 2)


def calories_burned(met: float, weight: float, minutes: float) -> float:
    return round(check.positive(met, "met") * 3.5 * check.positive(weight, "weight") / 200
                 * check.positive(minutes, "minutes"), 1)


def due_date(last_period: str) -> str:
    import datetime as dt

    try:
        start = dt.date.fromisoformat(check.non_empty_string(last_period, "last_period"))
    except ValueError:
        raise ValueError(f"'last_period' must be an ISO date such as 2024-03-15, got {last_period!r}") from None
    return (start + dt.timedelta(days=280)).isoformat()


def daily_water(weight: float) -> float:
    return round(0.033 * check.positive(weight, "weight"), 2)


# -- mechanics ----------------------------------------------------------------------------------------------------
def kinetic_energy(mass: float, speed: float) -> float:
    return round(0.5 * check.positive(mass, "mass") * check.number(speed, "speed") ** 2, 4)


def potential_energy(mass: float, height: float) -> float:
    return round(check.positive(mass, "mass") * G * check.number(height, "height"), 4)


def free_fall_time(height: float) -> float:
    return round(math.sqrt(2 * check.positive(height, "height") / G), 4)


def impact_speed(height: float) -> float:
    return round(math.sqrt(2 * G * check.positive(height, "height")), 4)


def centripetal_force(mass: float, speed: float, radius: float) -> float:
    return round(check.positive(mass, "mass") * check.number(speed, "speed") ** 2 / check.positive(radius, "radius"), 4)


def pendulum_period(length: float) -> float:
    return round(2 * math.pi * math.sqrt(check.positive(length, "length") / G), 4)


def projectile_range(speed: float, angle: float) -> float:
    return round(check.positive(speed, "speed") ** 2 * math.sin(2 * math.radians(check.number(angle, "angle"))) / G, 4)


def gravitational_force(mass_a: float, mass_b: float, distance: float) -> float:
    force = (GRAVITATIONAL_CONSTANT * check.positive(mass_a, "mass_a") * check.positive(mass_b, "mass_b")
             / check.positive(distance, "distance") ** 2)
    return float(f"{force:.6g}")


def average_speed(distance: float, minutes: float) -> float:
    return round(60 * check.number(distance, "distance") / check.positive(minutes, "minutes"), 2)


def stopping_distance(speed: float, deceleration: float) -> float:
    return round(check.number(speed, "speed") ** 2 / (2 * check.positive(deceleration, "deceleration")), 4)


# -- electronics --------------------------------------------------------------------------------------------------
def current_ma(voltage: float, resistance: float) -> float:
    return round(1000 * check.number(voltage, "voltage") / check.positive(resistance, "resistance"), 4)


def power_from_current(current: float, resistance: float) -> float:
    return round(check.number(current, "current") ** 2 * check.positive(resistance, "resistance"), 4)


def power_from_voltage(voltage: float, resistance: float) -> float:
    return round(check.number(voltage, "voltage") ** 2 / check.positive(resistance, "resistance"), 4)


def parallel_resistance(resistances: list[float]) -> float:
    values = check.number_list(resistances, "resistances", min_length=1)
    if any(value <= 0 for value in values):
        raise ValueError("'resistances' must all be positive")
    return round(1 / math.fsum(1 / value for value in values), 4)


def capacitor_energy(capacitance: float, voltage: float) -> float:
    return round(0.5 * check.positive(capacitance, "capacitance") * 1e-6 * check.number(voltage, "voltage") ** 2, 6)


def rc_time_constant(resistance: float, capacitance: float) -> float:
    return round(check.positive(resistance, "resistance") * check.positive(capacitance, "capacitance") * 1e-3, 4)


def led_resistor(supply: float, forward: float, current: float) -> float:
    drop = check.number(supply, "supply") - check.number(forward, "forward")
    if drop <= 0:
        raise ValueError("'supply' must exceed 'forward'")
    return round(drop / (check.positive(current, "current") / 1000), 2)


def wavelength(frequency: float) -> float:
    return round(LIGHT_SPEED / (check.positive(frequency, "frequency") * 1e6), 4)


def decibels(ratio: float) -> float:
    return round(10 * math.log10(check.positive(ratio, "ratio")), 4)


def voltage_divider(supply: float, upper: float, lower: float) -> float:
    top, bottom = check.positive(upper, "upper"), check.positive(lower, "lower")
    return round(check.number(supply, "supply") * bottom / (top + bottom), 4)


# -- running ------------------------------------------------------------------------------------------------------
def _clock(seconds: float) -> str:
    total = round(seconds)
    return f"{total // 3600:02d}:{total // 60 % 60:02d}:{total % 60:02d}"


def pace_per_km(distance: float, minutes: float) -> float:
    return round(check.positive(minutes, "minutes") / check.positive(distance, "distance"), 4)


def speed_from_pace(pace: float) -> float:
    return round(60 / check.positive(pace, "pace"), 4)


def finish_time(distance: float, pace: float) -> str:
    return _clock(60 * check.positive(distance, "distance") * check.positive(pace, "pace"))


def marathon_time(pace: float) -> str:
    return _clock(60 * 42.195 * check.positive(pace, "pace"))


def cooper_vo2max(distance: float) -> float:
    return round((check.positive(distance, "distance") - 504.9) / 44.73, 2)


def riegel_prediction(minutes: float, distance: float, target: float) -> float:
    ratio = check.positive(target, "target") / check.positive(distance, "distance")
    return round(check.positive(minutes, "minutes") * ratio**1.06, 2)


def _body(rng: random.Random) -> dict[str, Any]:
    return {"weight": rng.randint(45, 120), "height": rng.randint(150, 200), "age": rng.randint(18, 80),
            "sex": rng.choice(("male", "female"))}


def _pick(*names: str) -> Any:
    def draw(rng: random.Random) -> dict[str, Any]:
        return {name: value for name, value in _body(rng).items() if name in names}

    return draw


def _range(**bounds: tuple[float, float]) -> Any:
    def draw(rng: random.Random) -> dict[str, Any]:
        return {name: round(rng.uniform(low, high), 1) for name, (low, high) in bounds.items()}

    return draw


def _led(rng: random.Random) -> dict[str, Any]:
    return {"supply": rng.choice((5, 9, 12)), "forward": rng.choice((1.8, 2.0, 2.2, 3.2)),
            "current": rng.choice((10, 15, 20, 25))}


TOOLS: list[ToolSpec] = [
    tool("health_metrics", "bmi", bmi, "Body mass index from weight in kilograms and height in centimetres, rounded "
         "to 2 decimals.", [_WEIGHT, _HEIGHT_CM], "amount", "the body mass index of someone weighing {weight} at "
         "{height} tall", draw=_pick("weight", "height")),
    tool("health_metrics", "bmi_imperial", bmi_imperial, "Body mass index from weight in pounds and height in inches, "
         "rounded to 2 decimals.", [("weight", "mass:lb", "body mass in pounds"),
                                    ("height", "length:in", "body height in inches")], "amount",
         "the body mass index of someone weighing {weight} at {height} tall",
         draw=_range(weight=(100, 260), height=(58, 78))),
    tool("health_metrics", "bmi_category", bmi_category, "The WHO category of a body mass index (underweight, normal "
         "weight, overweight, obese).", [("bmi", "number", "the body mass index")], "label",
         "the weight category of a body mass index of {bmi}", draw=_range(bmi=(15, 40))),
    tool("health_metrics", "bmr_harris_benedict", bmr_harris_benedict, "Basal metabolic rate in kilocalories a day by "
         "the revised Harris-Benedict equation.", [_WEIGHT, _HEIGHT_CM, _AGE, _SEX], "energy:kcal",
         "the Harris-Benedict basal metabolic rate of a {age}-year-old {sex} weighing {weight} at {height} tall",
         draw=_body),
    tool("health_metrics", "ideal_weight", ideal_weight, "Ideal body weight in kilograms by the Devine formula.",
         [_HEIGHT_CM, _SEX], "mass:kg", "the Devine ideal weight in kilograms of a {sex} {height} tall",
         draw=_pick("height", "sex")),
    tool("health_metrics", "body_surface_area", body_surface_area, "Body surface area in square metres by the "
         "Mosteller formula.", [_HEIGHT_CM, _WEIGHT], "amount", "the body surface area of someone {height} tall "
         "weighing {weight}", draw=_pick("height", "weight")),
    tool("health_metrics", "max_heart_rate", max_heart_rate, "Maximum heart rate in beats a minute by the classic "
         "rule, 220 minus age.", [_AGE], "count", "the maximum heart rate by 220 minus age of a {age}-year-old"),
    tool("health_metrics", "max_heart_rate_tanaka", max_heart_rate_tanaka, "Maximum heart rate in beats a minute by "
         "Tanaka's formula, 208 - 0.7 x age.", [_AGE], "amount",
         "the maximum heart rate by Tanaka's formula of a {age}-year-old"),
    tool("health_metrics", "target_heart_rate", target_heart_rate, "A heart rate at a share of the maximum (220 minus "
         "age).", [_AGE, ("intensity", "share", "the share of the maximum heart rate in percent")], "amount",
         "the heart rate at {intensity} of the maximum for a {age}-year-old"),
    tool("health_metrics", "lean_body_mass", lean_body_mass, "Lean body mass in kilograms by the Boer formula.",
         [_WEIGHT, _HEIGHT_CM, _SEX], "mass:kg", "the lean body mass of a {sex} weighing {weight} at {height} tall",
         draw=_pick("weight", "height", "sex")),
    tool("health_metrics", "calories_burned", calories_burned, "Kilocalories burned by an activity of a MET value for "
         "some minutes.", [("met", "number", "the activity's MET value"), _WEIGHT,
                           ("minutes", "number", "the activity's duration in minutes")], "energy:kcal",
         "the calories burned in {minutes} minutes of an activity of {met} METs by someone weighing {weight}",
         draw=lambda rng: {"met": rng.choice((3.5, 6, 8, 9.8, 11)), "weight": rng.randint(45, 120),
                           "minutes": rng.randint(10, 120)}),
    tool("health_metrics", "due_date", due_date, "The estimated due date of a pregnancy (Naegele's rule: 280 days "
         "after the first day of the last period).", [("last_period", "date", "the first day of the last period")],
         "date", "the estimated due date for a last period starting {last_period}"),
    tool("health_metrics", "daily_water", daily_water, "Recommended daily water intake in litres (33 ml per kilogram "
         "of body mass).", [_WEIGHT], "volume:l", "the daily water intake recommended for someone weighing {weight}",
         draw=_pick("weight")),
    tool("mechanics", "kinetic_energy", kinetic_energy, "Kinetic energy in joules of a mass moving at a speed.",
         [_MASS, _SPEED], "energy:j", "the kinetic energy of {mass} moving at {speed}"),
    tool("mechanics", "potential_energy", potential_energy, "Gravitational potential energy in joules of a mass "
         "raised to a height (g = 9.80665).", [_MASS, _HEIGHT_M], "energy:j", "the potential energy of {mass} "
         "raised {height}"),
    tool("mechanics", "free_fall_time", free_fall_time, "Seconds an object takes to fall from a height, without air "
         "resistance.", [_HEIGHT_M], "time:s", "the time an object takes to fall {height}"),
    tool("mechanics", "impact_speed", impact_speed, "Speed in metres per second on landing after falling from a "
         "height, without air resistance.", [_HEIGHT_M], "speed:m_s", "the impact speed after a fall of {height}"),
    tool("mechanics", "centripetal_force", centripetal_force, "Centripetal force in newtons on a mass moving at a "
         "speed on a circle of a radius.", [_MASS, _SPEED, ("radius", "length:m", "the radius in metres")],
         "force:n", "the centripetal force on {mass} moving at {speed} on a circle of radius {radius}"),
    tool("mechanics", "pendulum_period", pendulum_period, "Period in seconds of a simple pendulum of a length.",
         [("length", "length:m", "the pendulum's length in metres")], "time:s",
         "the period of a pendulum {length} long"),
    tool("mechanics", "projectile_range", projectile_range, "Horizontal range in metres of a projectile launched at a "
         "speed and an angle in degrees over flat ground.", [_SPEED, ("angle", "angle:deg", ("the launch angle in "
                                                                      "degrees"))], "length:m",
         "the range of a projectile launched at {speed} at {angle}",
         draw=lambda rng: {"speed": rng.randint(5, 100), "angle": rng.randint(5, 85)}),
    tool("mechanics", "gravitational_force", gravitational_force, "Newton's gravitational force in newtons between "
         "two masses a distance apart, to 6 significant figures.",
         [("mass_a", "mass:kg", "the first mass in kilograms"), ("mass_b", "mass:kg", ("the second mass in "
                                                                 "kilograms")),
          ("distance", "length:m", "the distance between their centres in metres")], "force:n",
         "the gravitational force between {mass_a} and {mass_b} {distance} apart"),
    tool("mechanics", "average_speed", average_speed, "Average speed in kilometres per hour over a distance in "
         "kilometres covered in some minutes.", [("distance", "length:km", "the distance in kilometres"),
                                                 ("minutes", "time:min", "the time in minutes")], "speed:km_h",
         "the average speed over {distance} covered in {minutes}"),
    tool("mechanics", "stopping_distance", stopping_distance, "Braking distance in metres from a speed at a constant "
         "deceleration.", [_SPEED, ("deceleration", "acceleration:m_s2", "the deceleration in m/s²")], "length:m",
         "the braking distance from {speed} at a deceleration of {deceleration}"),
    tool("electronics", "current_ma", current_ma, "Current in milliamperes through a resistance across a voltage "
         "(Ohm's law).", [("voltage", "number", "the voltage in volts"),
                          ("resistance", "number", "the resistance in ohms")], "amount",
         "the current in milliamperes through {resistance} ohms across {voltage} volts"),
    tool("electronics", "power_from_current", power_from_current, "Power in watts dissipated by a current in "
         "amperes through a resistance in ohms (I²R).", [("current", "number", "the current in amperes"),
                                                         ("resistance", "number", "the resistance in ohms")],
         "power:w", "the power dissipated by {current} amperes through {resistance} ohms"),
    tool("electronics", "power_from_voltage", power_from_voltage, "Power in watts dissipated by a resistance in ohms "
         "across a voltage (V²/R).", [("voltage", "number", "the voltage in volts"),
                                      ("resistance", "number", "the resistance in ohms")], "power:w",
         "the power dissipated by {resistance} ohms across {voltage} volts"),
    tool("electronics", "parallel_resistance", parallel_resistance, "The combined resistance of resistors in "
         "parallel.", [("resistances", "numbers", "the resistances in ohms")], "amount",
         "the combined resistance in ohms of resistors of {resistances} ohms in parallel"),
    tool("electronics", "capacitor_energy", capacitor_energy, "Energy in joules stored in a capacitor of a "
         "capacitance in microfarads charged to a voltage.", [("capacitance", "number", ("the capacitance in "
                                                                "microfarads")),
                                                               ("voltage", "number", "the voltage in volts")],
         "energy:j", "the energy stored in a {capacitance} microfarad capacitor charged to {voltage} volts"),
    tool("electronics", "rc_time_constant", rc_time_constant, "The time constant in milliseconds of a resistor in "
         "ohms and a capacitor in microfarads.", [("resistance", "number", "the resistance in ohms"),
                                                  ("capacitance", "number", "the capacitance in microfarads")],
         "amount", "the RC time constant in milliseconds of {resistance} ohms and {capacitance} microfarads"),
    tool("electronics", "led_resistor", led_resistor, "The series resistor in ohms an LED needs on a supply voltage "
         "at its forward voltage and current in milliamperes.", [("supply", "number", "the supply voltage"),
                                                                 ("forward", "number", "the LED's forward voltage"),
                                                                 ("current", "number", "the LED current in mA")],
         "amount", "the resistor an LED with a forward voltage of {forward} volts at {current} mA needs on a "
         "{supply} volt supply", draw=_led),
    tool("electronics", "wavelength", wavelength, "The wavelength in metres of a radio wave of a frequency in "
         "megahertz.", [("frequency", "frequency:mhz", "the frequency in megahertz")], "length:m",
         "the wavelength of a radio wave of {frequency}"),
    tool("electronics", "decibels", decibels, "A power ratio in decibels (10 log10 of the ratio).",
         [("ratio", "number", "the power ratio")], "amount", "a power ratio of {ratio} in decibels"),
    tool("electronics", "voltage_divider", voltage_divider, "The output voltage of a divider of two resistors "
         "(taken across the lower one).", [("supply", "number", "the input voltage"),
                                           ("upper", "number", "the upper resistor in ohms"),
                                           ("lower", "number", "the lower resistor in ohms")], "amount",
         "the output of a voltage divider of {upper} and {lower} ohms on {supply} volts"),
    tool("running", "pace_per_km", pace_per_km, "Running pace in minutes per kilometre over a distance run in some "
         "minutes.", [("distance", "length:km", "the distance in kilometres"), ("minutes", "time:min", ("the time in "
                                                                                  "minutes"))],
         "amount", "the pace in minutes per kilometre of running {distance} in {minutes}",
         draw=lambda rng: {"distance": rng.choice((5, 10, 15, 21.1, 42.2)), "minutes": rng.randint(20, 240)}),
    tool("running", "speed_from_pace", speed_from_pace, "Speed in kilometres per hour of a pace in minutes per "
         "kilometre.", [("pace", "number", "the pace in minutes per kilometre")], "speed:km_h",
         "the speed of running at a pace of {pace} minutes per kilometre",
         draw=lambda rng: {"pace": round(rng.uniform(3, 9), 2)}),
    tool("running", "finish_time", finish_time, "The finishing time (HH:MM:SS) of a distance in kilometres at a pace "
         "in minutes per kilometre.", [("distance", "length:km", "the distance in kilometres"),
                                      ("pace", "number", "the pace in minutes per kilometre")], "clock",
         "the finishing time for {distance} at {pace} minutes per kilometre",
         draw=lambda rng: {"distance": rng.choice((5, 10, 21.1, 42.2)), "pace": round(rng.uniform(3, 9), 2)}),
    tool("running", "marathon_time", marathon_time, "The marathon finishing time (HH:MM:SS) at a pace in minutes per "
         "kilometre.", [("pace", "number", "the pace in minutes per kilometre")], "clock",
         "the marathon finishing time at {pace} minutes per kilometre",
         draw=lambda rng: {"pace": round(rng.uniform(3, 9), 2)}),
    tool("running", "cooper_vo2max", cooper_vo2max, "VO2 max estimated from the metres run in Cooper's 12-minute "
         "test.", [("distance", "length:m", "metres run in 12 minutes")], "amount",
         "the VO2 max of someone who runs {distance} in Cooper's 12-minute test",
         draw=lambda rng: {"distance": rng.randint(1500, 3600)}),
    tool("running", "riegel_prediction", riegel_prediction, "The predicted time in minutes for a target distance from "
         "a time over another distance (Riegel's formula).", [("minutes", "time:min", "the known time in minutes"),
                                                             ("distance", "length:km", ("the distance of the known "
                                                                                        "time, km")),
                                                             ("target", "length:km", "the target distance, km")],
         "time:min", "the predicted time for {target} of someone who runs {distance} in {minutes}",
         draw=lambda rng: {"minutes": rng.randint(18, 60), "distance": rng.choice((5, 10)),
                           "target": rng.choice((21.1, 42.2))}),
]
