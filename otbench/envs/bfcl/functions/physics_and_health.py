"""Kinematics, electrostatics, density, temperature, and energy/nutrition estimates."""

from __future__ import annotations

from . import _checks as check

# Mifflin-St Jeor sex constant; "other" takes the midpoint of the male and female constants.
_BMR_SEX_CONSTANT = {"male": 5.0, "female": -161.0, "other": -78.0}
# Standard activity multipliers (sedentary .. extra active) for the five BFCL activity levels.
_ACTIVITY_FACTOR = {1: 1.2, 2: 1.375, 3: 1.55, 4: 1.725, 5: 1.9}
# Daily calorie change for each goal: a 500 kcal deficit/surplus is the usual ~0.5 kg/week rule.
_GOAL_CALORIES = {"lose": -500.0, "maintain": 0.0, "gain": 500.0}
# Macronutrient split of the calorie target and kcal per gram of each macronutrient.
_MACROS = {"protein": (0.30, 4.0), "fat": (0.25, 9.0), "carbohydrates": (0.45, 4.0)}


def calculate_density(mass: float, volume: float) -> float:
    """Density = mass / volume (kg/m^3 for kg and m^3); volume must be positive."""
    return check.number(mass, "mass") / check.positive(volume, "volume")


def calculate_displacement(initial_velocity: float, acceleration: float, time: float) -> float:
    """Displacement under constant acceleration: v0*t + a*t**2/2."""
    v0 = check.number(initial_velocity, "initial_velocity")
    a = check.number(acceleration, "acceleration")
    t = check.number(time, "time")
    return v0 * t + 0.5 * a * t * t


def calculate_final_velocity(initial_velocity: float, acceleration: float, time: float) -> float:
    """Velocity after constant acceleration: v0 + a*t."""
    v0 = check.number(initial_velocity, "initial_velocity")
    return v0 + check.number(acceleration, "acceleration") * check.number(time, "time")


def calculate_electrostatic_potential_energy(charge: float, voltage: float) -> float:
    """Electrostatic potential energy in joules: charge (C) * voltage (V)."""
    return check.number(charge, "charge") * check.number(voltage, "voltage")


_TEMPERATURE_UNITS = {
    "celsius": "C", "c": "C", "°c": "C",
    "fahrenheit": "F", "f": "F", "°f": "F",
    "kelvin": "K", "k": "K",
}


def convert_temperature(temperature: float, unit_from: str, unit_to: str) -> float:
    """Converts a temperature between Celsius, Fahrenheit (and Kelvin); returns a float."""
    value = float(check.number(temperature, "temperature"))
    source = check.one_of(unit_from, "unit_from", _TEMPERATURE_UNITS)
    target = check.one_of(unit_to, "unit_to", _TEMPERATURE_UNITS)
    celsius = {"C": value, "F": (value - 32) * 5 / 9, "K": value - 273.15}[source]
    if celsius < -273.15:
        raise ValueError(f"'temperature' {value!r} is below absolute zero")
    return {"C": celsius, "F": celsius * 9 / 5 + 32, "K": celsius + 273.15}[target]


def calculate_basal_metabolic_rate(weight: float, height: float, age: float, gender: str) -> float:
    """Basal metabolic rate in kcal/day by the Mifflin-St Jeor equation.

    10*weight(kg) + 6.25*height(cm) - 5*age(years) + 5 (male) / -161 (female) / -78 (other).
    """
    kilograms = check.positive(weight, "weight")
    centimetres = check.positive(height, "height")
    years = check.number(age, "age")
    if years < 0:
        raise ValueError(f"'age' must be non-negative, got {years!r}")
    sex_constant = check.one_of(gender, "gender", _BMR_SEX_CONSTANT)
    return 10.0 * kilograms + 6.25 * centimetres - 5.0 * years + sex_constant


def _activity_factor(activity_level: float) -> float:
    level = check.integer(activity_level, "activity_level")
    if level not in _ACTIVITY_FACTOR:
        raise ValueError(f"'activity_level' must be one of 1, 2, 3, 4, 5, got {level}")
    return _ACTIVITY_FACTOR[level]


def calculate_daily_energy_expenditure(basal_metabolic_rate: float, activity_level: float) -> float:
    """Total daily energy expenditure in kcal: BMR times the activity factor of level 1-5.

    Factors: 1 -> 1.2 (sedentary), 2 -> 1.375, 3 -> 1.55, 4 -> 1.725, 5 -> 1.9 (extra active).
    """
    bmr = check.positive(basal_metabolic_rate, "basal_metabolic_rate")
    return bmr * _activity_factor(activity_level)


def calculate_nutritional_needs(
    weight: float, height: float, age: float, gender: str, activity_level: int, goal: str
) -> dict[str, float]:
    """Daily calorie target and macronutrient grams for a person and a weight goal.

    Calories = Mifflin-St Jeor BMR * activity factor, -500 kcal to lose, +500 to gain.
    Split 30% protein, 25% fat, 45% carbohydrates (4, 9, 4 kcal per gram). Returns
    {"calories", "protein_grams", "fat_grams", "carbohydrates_grams"}.
    """
    bmr = calculate_basal_metabolic_rate(weight, height, age, gender)
    calories = bmr * _activity_factor(activity_level) + check.one_of(goal, "goal", _GOAL_CALORIES)
    needs = {"calories": calories}
    for nutrient, (share, kcal_per_gram) in _MACROS.items():
        needs[f"{nutrient}_grams"] = calories * share / kcal_per_gram
    return needs
