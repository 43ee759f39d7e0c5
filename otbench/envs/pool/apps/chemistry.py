"""Chemistry: the elements (IUPAC standard atomic weights, abridged) and chemical formulas such as Ca(OH)2."""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import Any

from otbench.envs.bfcl.functions import _checks as check
from otbench.envs.pool.spec import ToolSpec, tool

_TABLE = """H Hydrogen 1.008|He Helium 4.0026|Li Lithium 6.94|Be Beryllium 9.0122|B Boron 10.81|C Carbon 12.011|
N Nitrogen 14.007|O Oxygen 15.999|F Fluorine 18.998|Ne Neon 20.180|Na Sodium 22.990|Mg Magnesium 24.305|
Al Aluminium 26.982|Si Silicon 28.085|P Phosphorus 30.974|S Sulfur 32.06|Cl Chlorine 35.45|Ar Argon 39.948|
K Potassium 39.098|Ca Calcium 40.078|Sc Scandium 44.956|Ti Titanium 47.867|V Vanadium 50.942|Cr Chromium 51.996|
Mn Manganese 54.938|Fe Iron 55.845|Co Cobalt 58.933|Ni Nickel 58.693|Cu Copper 63.546|Zn Zinc 65.38|
Ga Gallium 69.723|Ge Germanium 72.630|As Arsenic 74.922|Se Selenium 78.971|Br Bromine 79.904|Kr Krypton 83.798|
Rb Rubidium 85.468|Sr Strontium 87.62|Y Yttrium 88.906|Zr Zirconium 91.224|Nb Niobium 92.906|Mo Molybdenum 95.95|
Tc Technetium 98|Ru Ruthenium 101.07|Rh Rhodium 102.91|Pd Palladium 106.42|Ag Silver 107.87|Cd Cadmium 112.41|
In Indium 114.82|Sn Tin 118.71|Sb Antimony 121.76|Te Tellurium 127.60|I Iodine 126.90|Xe Xenon 131.29|
Cs Caesium 132.91|Ba Barium 137.33|La Lanthanum 138.91|Ce Cerium 140.12|Pr Praseodymium 140.91|Nd Neodymium 144.24|
Pm Promethium 145|Sm Samarium 150.36|Eu Europium 151.96|Gd Gadolinium 157.25|Tb Terbium 158.93|Dy Dysprosium 162.50|
Ho Holmium 164.93|Er Erbium 167.26|Tm Thulium 168.93|Yb Ytterbium 173.05|Lu Lutetium 174.97|Hf Hafnium 178.49|
Ta Tantalum 180.95|W Tungsten 183.84|Re Rhenium 186.21|Os Osmium 190.23|Ir Iridium 192.22|Pt Platinum 195.08|
Au Gold 196.97|Hg Mercury 200.59|Tl Thallium 204.38|Pb Lead 207.2|Bi Bismuth 208.98|Po Polonium 209|
At Astatine 210|Rn Radon 222|Fr Francium 223|Ra Radium 226|Ac Actinium 227|Th Thorium 232.04|
Pa Protactinium 231.04|U Uranium 238.03|Np Neptunium 237|Pu Plutonium 244|Am Americium 243|Cm Curium 247|
Bk Berkelium 247|Cf Californium 251|Es Einsteinium 252|Fm Fermium 257|Md Mendelevium 258|No Nobelium 259|
Lr Lawrencium 262|Rf Rutherfordium 267|Db Dubnium 270|Sg Seaborgium 269|Bh Bohrium 270|Hs Hassium 270|
Mt Meitnerium 278|Ds Darmstadtium 281|Rg Roentgenium 281|Cn Copernicium 285|Nh Nihonium 286|Fl Flerovium 289|
Mc Moscovium 289|Lv Livermorium 293|Ts Tennessine 293|Og Oganesson 294"""
ELEMENTS: tuple[tuple[str, str, float], ...] = tuple(
    (symbol, name, float(mass)) for symbol, name, mass in (entry.split() for entry in _TABLE.replace("\n", "").split("|")))
"""(symbol, English name, standard atomic weight) by atomic number, hydrogen first."""
FORMULAS = ("H2O", "CO2", "NaCl", "C6H12O6", "H2SO4", "CaCO3", "NH3", "CH4", "C2H5OH", "Fe2O3", "KMnO4", "NaHCO3",
            "Ca(OH)2", "Mg(OH)2", "Al2(SO4)3", "C8H10N4O2", "HNO3", "KCl", "CuSO4", "C12H22O11", "NaOH", "H2O2",
            "C3H8", "SiO2", "Na2CO3")
_SYMBOLS = {symbol: number for number, (symbol, _, _) in enumerate(ELEMENTS, start=1)}
_NAMES = {name.lower(): symbol for symbol, name, _ in ELEMENTS} | {"aluminum": "Al", "cesium": "Cs", "sulphur": "S"}
_PERIOD_ENDS = (2, 10, 18, 36, 54, 86, 118)
_TOKEN = re.compile(r"([A-Z][a-z]?|\(|\)|\d+)")


def _element(value: Any, name: str = "symbol") -> int:
    text = check.non_empty_string(value, name)
    number = _SYMBOLS.get(text[:1].upper() + text[1:].lower())
    if number is None:
        raise LookupError(f"'{name}': no element has the symbol {value!r}")
    return number


def _atoms(formula: Any) -> Counter[str]:
    text = check.non_empty_string(formula, "formula")
    tokens = _TOKEN.findall(text)
    if "".join(tokens) != text:
        raise ValueError(f"'formula' must be a chemical formula such as Ca(OH)2, got {formula!r}")
    stack: list[Counter[str]] = [Counter()]
    last: Counter[str] | None = None
    for token in tokens:
        if token == "(":
            stack.append(Counter())
            last = None
        elif token == ")":
            if len(stack) == 1:
                raise ValueError(f"'formula' has an unmatched ')': {formula!r}")
            last = stack.pop()
            stack[-1].update(last)
        elif token.isdigit():
            if last is None:
                raise ValueError(f"'formula' has a count with nothing before it: {formula!r}")
            for symbol, count in last.items():
                stack[-1][symbol] += count * (int(token) - 1)
            last = None
        else:
            _element(token, "formula")
            last = Counter({token: 1})
            stack[-1].update(last)
    if len(stack) != 1:
        raise ValueError(f"'formula' has an unmatched '(': {formula!r}")
    return stack[0]


def _molar_mass(formula: Any) -> float:
    return sum(ELEMENTS[_SYMBOLS[symbol] - 1][2] * count for symbol, count in _atoms(formula).items())


def element_name(symbol: str) -> str:
    return ELEMENTS[_element(symbol) - 1][1]


def element_symbol(name: str) -> str:
    found = _NAMES.get(check.non_empty_string(name, "name").lower())
    if found is None:
        raise LookupError(f"'name': no element is called {name!r}")
    return found


def atomic_number(symbol: str) -> int:
    return _element(symbol)


def atomic_mass(symbol: str) -> float:
    return ELEMENTS[_element(symbol) - 1][2]


def element_by_number(number: int) -> str:
    value = check.integer(number, "number")
    if not 1 <= value <= len(ELEMENTS):
        raise ValueError(f"'number' must be an atomic number from 1 to {len(ELEMENTS)}, got {value}")
    return ELEMENTS[value - 1][0]


def element_period(symbol: str) -> int:
    number = _element(symbol)
    return next(period for period, end in enumerate(_PERIOD_ENDS, start=1) if number <= end)


def molar_mass(formula: str) -> float:
    return round(_molar_mass(formula), 3)


def atom_count(formula: str) -> int:
    return sum(_atoms(formula).values())


def mass_percent(formula: str, symbol: str) -> float:
    atoms = _atoms(formula)
    number = _element(symbol)
    wanted = ELEMENTS[number - 1][0]
    if wanted not in atoms:
        raise ValueError(f"'symbol' {symbol!r} is not in the formula {formula!r}")
    return round(100 * ELEMENTS[number - 1][2] * atoms[wanted] / _molar_mass(formula), 3)


def grams_to_moles(formula: str, grams: float) -> float:
    return round(check.number(grams, "grams") / _molar_mass(formula), 6)


def moles_to_grams(formula: str, moles: float) -> float:
    return round(check.number(moles, "moles") * _molar_mass(formula), 4)


def _in_formula(rng: random.Random) -> dict[str, Any]:
    formula = rng.choice(FORMULAS)
    return {"formula": formula, "symbol": rng.choice(sorted(_atoms(formula)))}


_SYMBOL = ("symbol", "element", "the element's chemical symbol, such as Fe")
_FORMULA = ("formula", "formula", "a chemical formula such as Ca(OH)2")

TOOLS: list[ToolSpec] = [
    tool("elements", "element_name", element_name, "The English name of an element given by its symbol.", [_SYMBOL],
         "element_name", "the name of {symbol}", refers="{symbol}"),
    tool("elements", "element_symbol", element_symbol, "The chemical symbol of an element given by its English "
         "name.", [("name", "element_name", "the element's name")], "element", "the chemical symbol of {name}",
         refers="{name}"),
    tool("elements", "atomic_number", atomic_number, "The atomic number of an element.", [_SYMBOL], "integer",
         "the atomic number of {symbol}"),
    tool("elements", "atomic_mass", atomic_mass, "The standard atomic weight of an element.", [_SYMBOL], "amount",
         "the standard atomic weight of {symbol}"),
    tool("elements", "element_by_number", element_by_number, "The symbol of the element with an atomic number.",
         [("number", "small_integer", "the atomic number")], "element", "the symbol of element number {number}",
         refers="element number {number}"),
    tool("elements", "element_period", element_period, "The period (row, 1 to 7) of an element in the periodic "
         "table.", [_SYMBOL], "count", "the period of {symbol} in the periodic table"),
    tool("molecules", "molar_mass", molar_mass, "The molar mass in grams per mole of a chemical formula.",
         [_FORMULA], "amount", "the molar mass of {formula}"),
    tool("molecules", "atom_count", atom_count, "How many atoms one formula unit of a chemical formula has.",
         [_FORMULA], "count", "the number of atoms in one unit of {formula}"),
    tool("molecules", "mass_percent", mass_percent, "The percentage by mass of an element in a chemical formula.",
         [_FORMULA, _SYMBOL], "amount", "the percentage by mass of {symbol} in {formula}", draw=_in_formula),
    tool("molecules", "grams_to_moles", grams_to_moles, "How many moles a mass in grams of a substance is.",
         [_FORMULA, ("grams", "mass:g", "the mass in grams")], "amount", "the number of moles in {grams} of "
         "{formula}"),
    tool("molecules", "moles_to_grams", moles_to_grams, "The mass in grams of a number of moles of a substance.",
         [_FORMULA, ("moles", "number", "the amount in moles")], "mass:g", "the mass of {moles} moles of {formula}"),
]
