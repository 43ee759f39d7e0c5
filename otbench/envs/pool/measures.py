"""Units of measure by dimension: how each converts to its dimension's base unit, and what values requests use.

A value ``v`` in a unit is ``v * factor + offset`` in the base unit (kelvin for temperatures), or, for a
reciprocal unit (litres per 100 km against km per litre), ``factor / v``. Factors are exact where a standard
defines them (the international foot, the US gallon, the thermochemical calorie...).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Unit:
    code: str
    """The unit in a kind's and a tool's name (``km``, ``us_gal``)."""
    plural: str
    """The unit in words after a number (``kilometres``)."""
    factor: float
    low: float
    high: float
    """The range of values requests give in this unit."""
    offset: float = 0.0
    reciprocal: bool = False

    def to_base(self, value: float) -> float:
        return self.factor / value if self.reciprocal else value * self.factor + self.offset

    def from_base(self, value: float) -> float:
        return self.factor / value if self.reciprocal else (value - self.offset) / self.factor


@dataclass(frozen=True)
class Dimension:
    name: str
    """The quantity (``length``), also the app of its converters (``length_units``)."""
    units: tuple[Unit, ...]

    def unit(self, code: str) -> Unit:
        return next(unit for unit in self.units if unit.code == code)


_C = 5 / 9
DIMENSIONS: tuple[Dimension, ...] = (
    Dimension("length", (
        Unit("m", "metres", 1.0, 1, 5000), Unit("km", "kilometres", 1000.0, 1, 5000),
        Unit("cm", "centimetres", 0.01, 1, 500), Unit("mm", "millimetres", 0.001, 1, 2000),
        Unit("mi", "miles", 1609.344, 1, 3000), Unit("yd", "yards", 0.9144, 1, 2000),
        Unit("ft", "feet", 0.3048, 1, 20000), Unit("in", "inches", 0.0254, 1, 500),
        Unit("nmi", "nautical miles", 1852.0, 1, 3000))),
    Dimension("mass", (
        Unit("kg", "kilograms", 1.0, 1, 500), Unit("g", "grams", 0.001, 1, 5000),
        Unit("mg", "milligrams", 1e-6, 1, 5000), Unit("t", "tonnes", 1000.0, 1, 100),
        Unit("lb", "pounds", 0.45359237, 1, 1000), Unit("oz", "ounces", 0.028349523125, 1, 500),
        Unit("st", "stone", 6.35029318, 1, 40))),
    Dimension("volume", (
        Unit("l", "litres", 1.0, 1, 500), Unit("ml", "millilitres", 0.001, 5, 5000),
        Unit("m3", "cubic metres", 1000.0, 1, 100), Unit("us_gal", "US gallons", 3.785411784, 1, 200),
        Unit("uk_gal", "imperial gallons", 4.54609, 1, 200), Unit("us_qt", "US quarts", 0.946352946, 1, 100),
        Unit("us_pt", "US pints", 0.473176473, 1, 100), Unit("us_cup", "US cups", 0.2365882365, 1, 50),
        Unit("us_floz", "US fluid ounces", 0.0295735295625, 1, 200),
        Unit("tbsp", "US tablespoons", 0.01478676478125, 1, 50),
        Unit("tsp", "US teaspoons", 0.00492892159375, 1, 50))),
    Dimension("area", (
        Unit("m2", "square metres", 1.0, 1, 10000), Unit("km2", "square kilometres", 1e6, 1, 20000),
        Unit("ha", "hectares", 1e4, 1, 5000), Unit("acre", "acres", 4046.8564224, 1, 5000),
        Unit("ft2", "square feet", 0.09290304, 10, 50000), Unit("mi2", "square miles", 2589988.110336, 1, 5000),
        Unit("yd2", "square yards", 0.83612736, 1, 10000))),
    Dimension("speed", (
        Unit("m_s", "metres per second", 1.0, 1, 100), Unit("km_h", "kilometres per hour", 1 / 3.6, 1, 300),
        Unit("mph", "miles per hour", 0.44704, 1, 200), Unit("knot", "knots", 1852 / 3600, 1, 200),
        Unit("ft_s", "feet per second", 0.3048, 1, 300))),
    Dimension("time", (
        Unit("s", "seconds", 1.0, 1, 100000), Unit("min", "minutes", 60.0, 1, 10000),
        Unit("h", "hours", 3600.0, 1, 1000), Unit("d", "days", 86400.0, 1, 1000),
        Unit("wk", "weeks", 604800.0, 1, 200), Unit("yr", "years of 365 days", 31536000.0, 1, 100))),
    Dimension("temperature", (
        Unit("c", "degrees Celsius", 1.0, -40, 120, offset=273.15),
        Unit("f", "degrees Fahrenheit", _C, -40, 250, offset=459.67 * _C),
        Unit("k", "kelvin", 1.0, 200, 400), Unit("r", "degrees Rankine", _C, 400, 700))),
    Dimension("energy", (
        Unit("j", "joules", 1.0, 1, 100000), Unit("kj", "kilojoules", 1000.0, 1, 10000),
        Unit("cal", "calories", 4.184, 1, 100000), Unit("kcal", "kilocalories", 4184.0, 50, 5000),
        Unit("wh", "watt-hours", 3600.0, 1, 10000), Unit("kwh", "kilowatt-hours", 3.6e6, 1, 2000),
        Unit("btu", "British thermal units", 1055.05585262, 1, 100000))),
    Dimension("pressure", (
        Unit("pa", "pascals", 1.0, 100, 200000), Unit("kpa", "kilopascals", 1000.0, 1, 1000),
        Unit("bar", "bar", 1e5, 0.5, 300), Unit("atm", "atmospheres", 101325.0, 0.5, 300),
        Unit("psi", "pounds per square inch", 6894.757293168, 1, 5000),
        Unit("mmhg", "millimetres of mercury", 133.322387415, 50, 2000))),
    Dimension("data", (
        Unit("bit", "bits", 0.125, 8, 1e6), Unit("byte", "bytes", 1.0, 1, 1e7),
        Unit("kb", "kilobytes", 1e3, 1, 1e6), Unit("mb", "megabytes", 1e6, 1, 1e5),
        Unit("gb", "gigabytes", 1e9, 1, 5000), Unit("kib", "kibibytes", 1024.0, 1, 1e6),
        Unit("mib", "mebibytes", 1024.0**2, 1, 1e5), Unit("gib", "gibibytes", 1024.0**3, 1, 5000))),
    Dimension("angle", (
        Unit("deg", "degrees", 3.141592653589793 / 180, 1, 360), Unit("rad", "radians", 1.0, 0.1, 6.28),
        Unit("grad", "gradians", 3.141592653589793 / 200, 1, 400),
        Unit("turn", "turns", 2 * 3.141592653589793, 0.1, 10),
        Unit("arcmin", "minutes of arc", 3.141592653589793 / 10800, 1, 1000))),
    Dimension("power", (
        Unit("w", "watts", 1.0, 1, 10000), Unit("kw", "kilowatts", 1000.0, 1, 2000),
        Unit("hp", "mechanical horsepower", 745.69987158227022, 1, 1500),
        Unit("btu_h", "BTU per hour", 0.29307107017222, 100, 100000))),
    Dimension("fuel_economy", (
        Unit("mpg_us", "miles per US gallon", 1.609344 / 3.785411784, 5, 80),
        Unit("mpg_uk", "miles per imperial gallon", 1.609344 / 4.54609, 5, 90),
        Unit("l_100km", "litres per 100 kilometres", 100.0, 2, 30, reciprocal=True),
        Unit("km_l", "kilometres per litre", 1.0, 2, 40))),
    Dimension("frequency", (
        Unit("hz", "hertz", 1.0, 1, 20000), Unit("khz", "kilohertz", 1e3, 1, 2000),
        Unit("mhz", "megahertz", 1e6, 1, 3000), Unit("ghz", "gigahertz", 1e9, 0.5, 10),
        Unit("rpm", "revolutions per minute", 1 / 60, 10, 10000))),
    Dimension("force", (
        Unit("n", "newtons", 1.0, 1, 10000), Unit("kn", "kilonewtons", 1000.0, 1, 1000),
        Unit("lbf", "pounds-force", 4.4482216152605, 1, 5000), Unit("kgf", "kilograms-force", 9.80665, 1, 5000),
        Unit("dyn", "dynes", 1e-5, 100, 1e6))),
    Dimension("data_rate", (
        Unit("bps", "bits per second", 1.0, 100, 1e6), Unit("kbps", "kilobits per second", 1e3, 1, 1e5),
        Unit("mbps", "megabits per second", 1e6, 1, 10000), Unit("gbps", "gigabits per second", 1e9, 1, 100),
        Unit("byte_s", "bytes per second", 8.0, 100, 1e6), Unit("mb_s", "megabytes per second", 8e6, 1, 2000))),
    Dimension("density", (
        Unit("kg_m3", "kilograms per cubic metre", 1.0, 1, 20000), Unit("g_cm3", "grams per cubic centimetre",
                                                                              1000.0, 0.1, 20),
        Unit("lb_ft3", "pounds per cubic foot", 16.01846337396, 1, 1000),
        Unit("lb_gal", "pounds per US gallon", 119.826427316, 1, 100))),
    Dimension("flow_rate", (
        Unit("l_s", "litres per second", 1.0, 1, 1000), Unit("l_min", "litres per minute", 1 / 60, 1, 5000),
        Unit("m3_h", "cubic metres per hour", 1000 / 3600, 1, 1000),
        Unit("gpm", "US gallons per minute", 3.785411784 / 60, 1, 2000),
        Unit("cfm", "cubic feet per minute", 28.316846592 / 60, 1, 5000))),
    Dimension("acceleration", (
        Unit("m_s2", "metres per second squared", 1.0, 0.5, 100), Unit("ft_s2", "feet per second squared", 0.3048,
                                                                        1, 300),
        Unit("g0", "standard gravities", 9.80665, 0.1, 20), Unit("gal", "gals (centimetres per second squared)",
                                                                 0.01, 1, 5000))),
    Dimension("torque", (
        Unit("nm", "newton-metres", 1.0, 1, 2000), Unit("lbf_ft", "pound-feet", 1.3558179483314, 1, 1500),
        Unit("lbf_in", "pound-inches", 0.1129848290276, 1, 10000), Unit("kgf_m", "kilogram-metres", 9.80665, 1, 200))),
    Dimension("charge", (
        Unit("coulomb", "coulombs", 1.0, 1, 100000), Unit("mah", "milliampere-hours", 3.6, 100, 20000),
        Unit("ah", "ampere-hours", 3600.0, 1, 500), Unit("faraday", "faradays", 96485.33212, 0.01, 10))),
    Dimension("typography", (
        Unit("pt", "points", 1 / 72, 1, 200), Unit("px", "CSS pixels", 1 / 96, 1, 2000),
        Unit("pica", "picas", 1 / 6, 1, 100), Unit("twip", "twips", 1 / 1440, 20, 20000))),
    Dimension("angular_speed", (
        Unit("rad_s", "radians per second", 1.0, 0.1, 500), Unit("deg_s", "degrees per second", 3.141592653589793
                                                                  / 180, 1, 5000),
        Unit("rev_s", "revolutions per second", 2 * 3.141592653589793, 0.1, 100))),
    Dimension("illuminance", (
        Unit("lux", "lux", 1.0, 1, 100000), Unit("fc", "foot-candles", 10.763910416709722, 1, 10000),
        Unit("phot", "phots", 1e4, 0.01, 10))),
    Dimension("radioactivity", (
        Unit("bq", "becquerels", 1.0, 1, 1e6), Unit("ci", "curies", 3.7e10, 0.001, 10),
        Unit("rd", "rutherfords", 1e6, 0.1, 1000))),
    Dimension("viscosity", (
        Unit("pa_s", "pascal-seconds", 1.0, 0.001, 10), Unit("poise", "poise", 0.1, 0.01, 100),
        Unit("cp", "centipoise", 0.001, 0.5, 5000))),
    Dimension("magnetic_field", (
        Unit("tesla", "teslas", 1.0, 0.001, 10), Unit("gauss", "gauss", 1e-4, 0.1, 20000),
        Unit("mtesla", "milliteslas", 1e-3, 0.1, 5000))),
)
