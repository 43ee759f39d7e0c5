"""Integers and lists of numbers: number theory, numerals, counting, sequences, everyday arithmetic and statistics."""

from __future__ import annotations

import bisect
import itertools
import math
import random
import statistics
from collections.abc import Callable
from functools import cache
from typing import Any

from otbench.envs.bfcl.functions import _checks as check
from otbench.envs.pool.spec import ToolSpec, tool

_N = ("n", "integer", "a whole number")
_SMALL = ("n", "small_integer", "a position or count, a small whole number")
_NUMBER = ("number", "number", "the number")
_NUMBERS = ("numbers", "numbers", "the list of numbers")
_LIMIT = 200_000
"""The largest whole number the number-theory tools sieve or search up to, so a call stays fast."""
_ROMAN = ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"),
          (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"))
_ONES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _bounded(value: Any, name: str = "n", low: int = 1, high: int = _LIMIT) -> int:
    number = check.integer(value, name)
    if not low <= number <= high:
        raise ValueError(f"'{name}' must be between {low} and {high}, got {number}")
    return number


@cache
def _primes() -> tuple[int, ...]:
    limit = 3_000_000
    sieve = bytearray([1]) * (limit + 1)
    sieve[0:2] = b"\x00\x00"
    for i in range(2, int(limit**0.5) + 1):
        if sieve[i]:
            sieve[i * i :: i] = bytearray(len(range(i * i, limit + 1, i)))
    return tuple(itertools.compress(range(limit + 1), sieve))


def _factors(n: int) -> dict[int, int]:
    found: dict[int, int] = {}
    divisor = 2
    while divisor * divisor <= n:
        while n % divisor == 0:
            found[divisor] = found.get(divisor, 0) + 1
            n //= divisor
        divisor += 1
    if n > 1:
        found[n] = found.get(n, 0) + 1
    return found


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted({*small, *(n // d for d in small)})


# -- number theory ------------------------------------------------------------------------------------------------
def is_prime(n: int) -> bool:
    value = _bounded(n, low=0, high=10**12)
    return value >= 2 and all(value % d for d in range(2, math.isqrt(value) + 1))


def next_prime(n: int) -> int:
    return _primes()[bisect.bisect_right(_primes(), _bounded(n, low=0))]


def previous_prime(n: int) -> int:
    return _primes()[bisect.bisect_left(_primes(), _bounded(n, low=3)) - 1]


def nth_prime(n: int) -> int:
    return _primes()[_bounded(n) - 1]


def prime_count(n: int) -> int:
    return bisect.bisect_right(_primes(), _bounded(n, low=0))


def divisor_count(n: int) -> int:
    return len(_divisors(_bounded(n)))


def divisor_sum(n: int) -> int:
    return sum(_divisors(_bounded(n)))


def proper_divisor_sum(n: int) -> int:
    value = _bounded(n)
    return sum(_divisors(value)) - value


def is_perfect(n: int) -> bool:
    value = _bounded(n)
    return sum(_divisors(value)) == 2 * value


def is_abundant(n: int) -> bool:
    value = _bounded(n)
    return sum(_divisors(value)) > 2 * value


def totient(n: int) -> int:
    value = _bounded(n)
    result = value
    for prime in _factors(value):
        result -= result // prime
    return result


def distinct_prime_factors(n: int) -> int:
    return len(_factors(_bounded(n)))


def largest_prime_factor(n: int) -> int:
    return max(_factors(_bounded(n, low=2)))


def smallest_prime_factor(n: int) -> int:
    return min(_factors(_bounded(n, low=2)))


def digit_sum(n: int) -> int:
    return sum(int(d) for d in str(abs(check.integer(n, "n"))))


def digital_root(n: int) -> int:
    value = abs(check.integer(n, "n"))
    return 0 if value == 0 else 1 + (value - 1) % 9


def reverse_digits(n: int) -> int:
    value = check.integer(n, "n")
    return (-1 if value < 0 else 1) * int(str(abs(value))[::-1])


def is_palindrome_number(n: int) -> bool:
    text = str(check.integer(n, "n"))
    return text == text[::-1]


def is_armstrong(n: int) -> bool:
    text = str(_bounded(n, low=0))
    return sum(int(d) ** len(text) for d in text) == int(text)


def collatz_steps(n: int) -> int:
    value, steps = _bounded(n), 0
    while value != 1:
        value = value // 2 if value % 2 == 0 else 3 * value + 1
        steps += 1
    return steps


def is_perfect_square(n: int) -> bool:
    value = check.integer(n, "n")
    return value >= 0 and math.isqrt(value) ** 2 == value


def is_triangular(n: int) -> bool:
    value = check.integer(n, "n")
    return value >= 0 and math.isqrt(8 * value + 1) ** 2 == 8 * value + 1


def mod_inverse(a: int, m: int) -> int:
    try:
        return pow(check.integer(a, "a"), -1, _bounded(m, "m", 2, 10**9))
    except ValueError:
        raise ValueError(f"'a' has no inverse modulo {m}: they share a factor") from None


def power_mod(base: int, exponent: int, modulus: int) -> int:
    return pow(check.integer(base, "base"), _bounded(exponent, "exponent", 0, 10**6), _bounded(modulus, "modulus",
                                                                                              2, 10**9))


def are_coprime(a: int, b: int) -> bool:
    return math.gcd(check.integer(a, "a"), check.integer(b, "b")) == 1


def bit_count(n: int) -> int:
    return check.non_negative_integer(n, "n").bit_count()


# -- numerals -----------------------------------------------------------------------------------------------------
def to_roman(number: int) -> str:
    value = _bounded(number, "number", 1, 3999)
    parts = []
    for size, letters in _ROMAN:
        count, value = divmod(value, size)
        parts.append(letters * count)
    return "".join(parts)


def from_roman(numeral: str) -> int:
    text = check.non_empty_string(numeral, "numeral").upper()
    values = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
    if any(ch not in values for ch in text):
        raise ValueError(f"'numeral' must be a Roman numeral such as XIV, got {numeral!r}")
    total = sum(-values[a] if values[a] < values[b] else values[a] for a, b in itertools.pairwise(text))
    total += values[text[-1]]
    if to_roman(total) != text:
        raise ValueError(f"'numeral' is not a well-formed Roman numeral: {numeral!r}")
    return total


def _words(value: int) -> str:
    if value < 20:
        return _ONES[value]
    if value < 100:
        return _TENS[value // 10] + ("-" + _ONES[value % 10] if value % 10 else "")
    if value < 1000:
        return _ONES[value // 100] + " hundred" + (" and " + _words(value % 100) if value % 100 else "")
    for size, name in ((10**9, "billion"), (10**6, "million"), (1000, "thousand")):
        if value >= size:
            rest = value % size
            joiner = (" and " if rest < 100 else ", ") if rest else ""
            return f"{_words(value // size)} {name}{joiner}{_words(rest) if rest else ''}"
    raise AssertionError(value)


def to_words(number: int) -> str:
    value = _bounded(number, "number", -(10**12) + 1, 10**12 - 1)
    return ("minus " if value < 0 else "") + _words(abs(value))


def ordinal_suffix(number: int) -> str:
    value = check.integer(number, "number")
    suffix = "th" if 10 <= abs(value) % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(abs(value) % 10, "th")
    return f"{value}{suffix}"


def to_binary(number: int) -> str:
    return format(check.non_negative_integer(number, "number"), "b")


def to_octal(number: int) -> str:
    return format(check.non_negative_integer(number, "number"), "o")


def _parse(digits: Any, base: int, name: str) -> int:
    text = check.non_empty_string(digits, name)
    try:
        return int(text, base)
    except ValueError:
        raise ValueError(f"'{name}' must be a number written in base {base}, got {digits!r}") from None


def from_octal(digits: str) -> int:
    return _parse(digits, 8, "digits")


def from_hex(digits: str) -> int:
    return _parse(digits, 16, "digits")


def to_base(number: int, base: int) -> str:
    value, radix = check.non_negative_integer(number, "number"), _bounded(base, "base", 2, 36)
    text = ""
    while True:
        value, digit = divmod(value, radix)
        text = _DIGITS[digit] + text
        if value == 0:
            return text


def from_base(digits: str, base: int) -> int:
    return _parse(digits, _bounded(base, "base", 2, 36), "digits")


# -- counting -----------------------------------------------------------------------------------------------------
def combinations(n: int, k: int) -> int:
    return math.comb(check.non_negative_integer(n, "n"), check.non_negative_integer(k, "k"))


def combinations_with_repetition(n: int, k: int) -> int:
    count, size = check.non_negative_integer(n, "n"), check.non_negative_integer(k, "k")
    return math.comb(count + size - 1, size) if count else int(size == 0)


def arrangements_with_repetition(n: int, k: int) -> int:
    return check.non_negative_integer(n, "n") ** _bounded(k, "k", 0, 1000)


def catalan(n: int) -> int:
    value = _bounded(n, low=0, high=1000)
    return math.comb(2 * value, value) // (value + 1)


def bell(n: int) -> int:
    value = _bounded(n, low=0, high=200)
    row = [1]
    for _ in range(value):
        following = [row[-1]]
        for item in row:
            following.append(following[-1] + item)
        row = following
    return row[0]


def derangements(n: int) -> int:
    value = _bounded(n, low=0, high=1000)
    previous, current = 1, 0
    if value == 0:
        return 1
    for i in range(2, value + 1):
        previous, current = current, (i - 1) * (previous + current)
    return current


def partitions(n: int) -> int:
    value = _bounded(n, low=0, high=1000)
    ways = [1] + [0] * value
    for part in range(1, value + 1):
        for total in range(part, value + 1):
            ways[total] += ways[total - part]
    return ways[value]


def double_factorial(n: int) -> int:
    value = _bounded(n, low=0, high=1000)
    return math.prod(range(value, 0, -2))


def stirling_second(n: int, k: int) -> int:
    size, parts = _bounded(n, "n", 0, 200), _bounded(k, "k", 0, 200)
    return sum((-1) ** i * math.comb(parts, i) * (parts - i) ** size for i in range(parts + 1)) // math.factorial(parts)


# -- sequences ----------------------------------------------------------------------------------------------------
def _linear_recurrence(seeds: tuple[int, ...], weights: tuple[int, ...]) -> Callable[[int], int]:
    def term(n: int) -> int:
        index = _bounded(n, low=0, high=1000)
        values = list(seeds)
        while len(values) <= index:
            values.append(sum(w * v for w, v in zip(weights, values[-len(weights):], strict=True)))
        return values[index]

    return term


def triangular_number(n: int) -> int:
    value = _bounded(n, low=0)
    return value * (value + 1) // 2


def pentagonal_number(n: int) -> int:
    value = _bounded(n, low=0)
    return value * (3 * value - 1) // 2


def hexagonal_number(n: int) -> int:
    value = _bounded(n, low=0)
    return value * (2 * value - 1)


def harmonic_number(n: int) -> float:
    return round(math.fsum(1 / i for i in range(1, _bounded(n) + 1)), 6)


def sum_of_squares(n: int) -> int:
    value = _bounded(n, low=0)
    return value * (value + 1) * (2 * value + 1) // 6


def sum_of_cubes(n: int) -> int:
    return triangular_number(n) ** 2


def arithmetic_term(first: float, difference: float, n: int) -> float:
    return round(check.number(first, "first") + (_bounded(n) - 1) * check.number(difference, "difference"), 6)


def arithmetic_sum(first: float, difference: float, n: int) -> float:
    count = _bounded(n)
    start, step = check.number(first, "first"), check.number(difference, "difference")
    return round(count * (2 * start + (count - 1) * step) / 2, 6)


def geometric_term(first: float, ratio: float, n: int) -> float:
    return round(check.number(first, "first") * check.number(ratio, "ratio") ** (_bounded(n, high=200) - 1), 6)


def geometric_sum(first: float, ratio: float, n: int) -> float:
    start, factor, count = check.number(first, "first"), check.number(ratio, "ratio"), _bounded(n, high=200)
    return round(math.fsum(start * factor**i for i in range(count)), 6)


# -- arithmetic ---------------------------------------------------------------------------------------------------
def _unary(operation: Callable[[float], float], rule: Callable[[float], bool] = lambda v: True,
           need: str = "") -> Callable[[float], float]:
    def compute(number: float) -> float:
        value = check.number(number, "number")
        if not rule(value):
            raise ValueError(f"'number' must be {need}, got {value!r}")
        return round(operation(value), 6)

    return compute


def nth_root(number: float, degree: int) -> float:
    value, n = check.number(number, "number"), _bounded(degree, "degree", 1, 100)
    if value < 0 and n % 2 == 0:
        raise ValueError("'number' must not be negative for an even root")
    return round(math.copysign(abs(value) ** (1 / n), value), 6)


def log_base(number: float, base: float) -> float:
    value, radix = check.positive(number, "number"), check.positive(base, "base")
    if radix == 1:
        raise ValueError("'base' must not be 1")
    return round(math.log(value, radix), 6)


def percent_of(percent: float, number: float) -> float:
    return round(check.number(percent, "percent") * check.number(number, "number") / 100, 6)


def what_percent(part: float, whole: float) -> float:
    total = check.number(whole, "whole")
    if total == 0:
        raise ValueError("'whole' must not be 0")
    return round(100 * check.number(part, "part") / total, 4)


def absolute_difference(a: float, b: float) -> float:
    return round(abs(check.number(a, "a") - check.number(b, "b")), 6)


def round_to(number: float, decimals: int) -> float:
    return round(check.number(number, "number"), _bounded(decimals, "decimals", 0, 10))


# -- statistics ---------------------------------------------------------------------------------------------------
def _list_tool(operation: Callable[[list[float]], float], least: int = 1) -> Callable[[list[float]], float]:
    def compute(numbers: list[float]) -> float:
        values = check.number_list(numbers, "numbers", min_length=least)
        return round(float(operation(values)), 6)

    return compute


def _mode(values: list[float]) -> float:
    counts = {value: values.count(value) for value in values}
    top = max(counts.values())
    return min(value for value, count in counts.items() if count == top)


def _iqr(values: list[float]) -> float:
    quartiles = statistics.quantiles(values, n=4, method="inclusive")
    return quartiles[2] - quartiles[0]


def _mad(values: list[float]) -> float:
    mean = statistics.fmean(values)
    return math.fsum(abs(v - mean) for v in values) / len(values)


def _positive_values(values: list[float]) -> list[float]:
    if any(v <= 0 for v in values):
        raise ValueError("'numbers' must all be positive")
    return values


def z_score(value: float, numbers: list[float]) -> float:
    values = check.number_list(numbers, "numbers", min_length=2)
    spread = statistics.pstdev(values)
    if spread == 0:
        raise ValueError("'numbers' must not all be equal")
    return round((check.number(value, "value") - statistics.fmean(values)) / spread, 6)


def _pair(name_a: str, name_b: str, kind: str) -> Callable[[random.Random], dict[str, Any]]:
    def draw(rng: random.Random) -> dict[str, Any]:
        if kind == "integer":
            return {name_a: rng.randint(2, 500), name_b: rng.randint(2, 500)}
        return {name_a: round(rng.uniform(1, 500), 2), name_b: round(rng.uniform(1, 500), 2)}

    return draw


def _choose(rng: random.Random) -> dict[str, Any]:
    n = rng.randint(4, 30)
    return {"n": n, "k": rng.randint(1, n - 1)}


def _small_pair(rng: random.Random) -> dict[str, Any]:
    n = rng.randint(3, 12)
    return {"n": n, "k": rng.randint(1, n)}


def _series(rng: random.Random) -> dict[str, Any]:
    return {"first": rng.randint(1, 50), "difference": rng.randint(-5, 20), "n": rng.randint(2, 40)}


def _geometric(rng: random.Random) -> dict[str, Any]:
    return {"first": rng.randint(1, 20), "ratio": rng.choice((0.5, 1.5, 2, 3, -2)), "n": rng.randint(2, 15)}


def _modular(rng: random.Random) -> dict[str, Any]:
    modulus = rng.choice((97, 101, 1009, 7919, 65537))
    return {"a": rng.randint(2, modulus - 1), "m": modulus}


def _power(rng: random.Random) -> dict[str, Any]:
    return {"base": rng.randint(2, 50), "exponent": rng.randint(2, 200), "modulus": rng.randint(7, 10000)}


def _roman_number(rng: random.Random) -> dict[str, Any]:
    return {"number": rng.randint(1, 3999)}


def _in_base(rng: random.Random) -> dict[str, Any]:
    base = rng.choice((3, 5, 6, 7, 9, 12, 20, 36))
    return {"digits": to_base(rng.randint(10, 50000), base), "base": base}


def _z(rng: random.Random) -> dict[str, Any]:
    return {"value": rng.randint(1, 100), "numbers": [rng.randint(1, 100) for _ in range(rng.randint(5, 8))]}


_TWO_INTEGERS = (("a", "integer", "the first whole number"), ("b", "integer", "the second whole number"))
_NK = (("n", "small_integer", "the number of items to choose from"), ("k", "small_integer", "how many are chosen"))

TOOLS: list[ToolSpec] = [
    tool("number_theory", "is_prime", is_prime, "Whether a whole number is prime.", [_N], "flag", "whether {n} is prime"),
    tool("number_theory", "next_prime", next_prime, "The smallest prime greater than a whole number.", [_N], "integer",
         "the first prime after {n}"),
    tool("number_theory", "previous_prime", previous_prime, "The largest prime smaller than a whole number (3 or "
         "more).", [_N], "integer", "the last prime before {n}"),
    tool("number_theory", "nth_prime", nth_prime, "The n-th prime number (the 1st is 2).", [_N], "integer",
         "prime number number {n} (counting 2 as the first)"),
    tool("number_theory", "prime_count", prime_count, "How many primes are less than or equal to a whole number.",
         [_N], "count", "the number of primes up to {n}"),
    tool("number_theory", "divisor_count", divisor_count, "How many positive divisors a whole number has.", [_N],
         "count", "the number of divisors of {n}"),
    tool("number_theory", "divisor_sum", divisor_sum, "The sum of all positive divisors of a whole number, itself "
         "included.", [_N], "integer", "the sum of the divisors of {n}"),
    tool("number_theory", "proper_divisor_sum", proper_divisor_sum, "The sum of the positive divisors of a whole "
         "number other than itself.", [_N], "integer", "the sum of the proper divisors of {n}"),
    tool("number_theory", "is_perfect", is_perfect, "Whether a whole number equals the sum of its proper divisors.",
         [_N], "flag", "whether {n} is a perfect number"),
    tool("number_theory", "is_abundant", is_abundant, "Whether the proper divisors of a whole number add up to more "
         "than the number.", [_N], "flag", "whether {n} is an abundant number"),
    tool("number_theory", "totient", totient, "Euler's totient of a whole number: how many numbers from 1 to it are "
         "coprime with it.", [_N], "count", "Euler's totient of {n}"),
    tool("number_theory", "distinct_prime_factors", distinct_prime_factors, "How many different primes divide a "
         "whole number.", [_N], "count", "the number of distinct prime factors of {n}"),
    tool("number_theory", "largest_prime_factor", largest_prime_factor, "The largest prime that divides a whole "
         "number (2 or more).", [_N], "integer", "the largest prime factor of {n}"),
    tool("number_theory", "smallest_prime_factor", smallest_prime_factor, "The smallest prime that divides a whole "
         "number (2 or more).", [_N], "integer", "the smallest prime factor of {n}"),
    tool("number_theory", "digit_sum", digit_sum, "The sum of the decimal digits of a whole number.", [_N], "integer",
         "the sum of the digits of {n}"),
    tool("number_theory", "digital_root", digital_root, "The digital root of a whole number: its digits summed "
         "repeatedly until one digit is left.", [_N], "count", "the digital root of {n}"),
    tool("number_theory", "reverse_digits", reverse_digits, "A whole number with its decimal digits reversed.", [_N],
         "integer", "{n} with its digits reversed"),
    tool("number_theory", "is_palindrome_number", is_palindrome_number, "Whether a whole number reads the same "
         "backwards.", [_N], "flag", "whether {n} reads the same backwards"),
    tool("number_theory", "is_armstrong", is_armstrong, "Whether a whole number equals the sum of its digits each "
         "raised to the number of digits (an Armstrong number).", [_N], "flag", "whether {n} is an Armstrong number"),
    tool("number_theory", "collatz_steps", collatz_steps, "How many steps of the Collatz map (halve if even, else "
         "3n+1) take a whole number to 1.", [_N], "count", "the number of Collatz steps from {n} to 1"),
    tool("number_theory", "is_perfect_square", is_perfect_square, "Whether a whole number is the square of a whole "
         "number.", [_N], "flag", "whether {n} is a perfect square"),
    tool("number_theory", "is_triangular", is_triangular, "Whether a whole number is a triangular number (1, 3, 6, "
         "10...).", [_N], "flag", "whether {n} is a triangular number"),
    tool("number_theory", "mod_inverse", mod_inverse, "The modular multiplicative inverse of a modulo m.",
         [("a", "integer", "the number to invert"), ("m", "integer", "the modulus")], "integer",
         "the inverse of {a} modulo {m}", draw=_modular),
    tool("number_theory", "power_mod", power_mod, "base raised to exponent, modulo modulus.",
         [("base", "integer", "the base"), ("exponent", "integer", "the exponent"),
          ("modulus", "integer", "the modulus")], "integer", "{base} to the power {exponent} modulo {modulus}",
         draw=_power),
    tool("number_theory", "are_coprime", are_coprime, "Whether two whole numbers have no common factor but 1.",
         _TWO_INTEGERS, "flag", "whether {a} and {b} are coprime", draw=_pair("a", "b", "integer")),
    tool("number_theory", "bit_count", bit_count, "How many 1 bits the binary form of a whole number has.", [_N],
         "count", "the number of 1 bits in the binary form of {n}"),
    tool("numerals", "to_roman", to_roman, "A whole number from 1 to 3999 as a Roman numeral.",
         [("number", "integer", "the number, 1 to 3999")], "roman", "{number} in Roman numerals",
         refers="{number}", draw=_roman_number),
    tool("numerals", "from_roman", from_roman, "The value of a Roman numeral.", [("numeral", "roman", ("the numeral, "
         "such as XIV"))], "integer", "the value of {numeral}", refers="{numeral}"),
    tool("numerals", "to_words", to_words, "A whole number written out in English words (British style: one hundred "
         "and five).", [("number", "integer", "the number")], "label", "{number} written in English words"),
    tool("numerals", "ordinal_suffix", ordinal_suffix, "A whole number as an ordinal with its English suffix (21st, "
         "112th).", [("number", "integer", "the number")], "label", "{number} as an ordinal number"),
    tool("numerals", "to_binary", to_binary, "A non-negative whole number in binary digits.", [("number", "integer",
         "the number")], "binary", "{number} in binary", refers="{number}"),
    tool("numerals", "to_octal", to_octal, "A non-negative whole number in octal digits.", [("number", "integer",
         "the number")], "octal", "{number} in octal", refers="{number}"),
    tool("numerals", "from_octal", from_octal, "The value of a number written in octal digits.",
         [("digits", "octal", "the octal digits")], "integer", "the decimal value of {digits}", refers="{digits}"),
    tool("numerals", "from_hex", from_hex, "The value of a number written in hexadecimal digits.",
         [("digits", "hexadecimal", "the hexadecimal digits")], "integer", "the decimal value of {digits}",
         refers="{digits}"),
    tool("numerals", "to_base", to_base, "A non-negative whole number written in another base (2 to 36, digits then "
         "capital letters).", [("number", "integer", "the number"), ("base", "base", "the base, 2 to 36")], "label",
         "{number} written in {base}"),
    tool("numerals", "from_base", from_base, "The value of a number written in a given base (2 to 36).",
         [("digits", "label", "the digits"), ("base", "base", "the base they are written in")], "integer",
         'the decimal value of the {base} number "{digits}"', draw=_in_base),
    tool("combinatorics", "combinations", combinations, "How many ways to choose k items out of n when order does not "
         "matter (n choose k).", _NK, "integer", "the number of ways to choose {k} items out of {n}", draw=_choose),
    tool("combinatorics", "combinations_with_repetition", combinations_with_repetition, "How many ways to choose k "
         "items out of n kinds when a kind may be chosen again (multisets).", _NK, "integer",
         "the number of ways to pick {k} items from {n} kinds with repeats allowed", draw=_choose),
    tool("combinatorics", "arrangements_with_repetition", arrangements_with_repetition, "How many sequences of length "
         "k can be made from n symbols (n to the power k).", _NK, "integer",
         "the number of sequences of length {k} over {n} symbols", draw=_small_pair),
    tool("combinatorics", "catalan", catalan, "The n-th Catalan number.", [_SMALL], "integer",
         "Catalan number {n}"),
    tool("combinatorics", "bell", bell, "The n-th Bell number: how many ways to partition a set of n items.",
         [_SMALL], "integer", "the number of ways to partition a set of {n} items"),
    tool("combinatorics", "derangements", derangements, "How many ways to order n items with none in its place.",
         [_SMALL], "integer", "the number of derangements of {n} items"),
    tool("combinatorics", "partitions", partitions, "How many ways to write n as a sum of positive whole numbers, "
         "order ignored.", [_SMALL], "integer", "the number of partitions of {n}"),
    tool("combinatorics", "double_factorial", double_factorial, "The double factorial n!! (n times n-2 times ... down "
         "to 1 or 2).", [_SMALL], "integer", "the double factorial of {n}"),
    tool("combinatorics", "stirling_second", stirling_second, "The Stirling number of the second kind: ways to split "
         "n items into k non-empty groups.", _NK, "integer", "the number of ways to split {n} items into {k} "
         "non-empty groups", draw=_small_pair),
    tool("sequences", "triangular_number", triangular_number, "The n-th triangular number, 1 + 2 + ... + n.", [_SMALL],
         "integer", "triangular number {n}"),
    tool("sequences", "pentagonal_number", pentagonal_number, "The n-th pentagonal number, n(3n-1)/2.", [_SMALL],
         "integer", "pentagonal number {n}"),
    tool("sequences", "hexagonal_number", hexagonal_number, "The n-th hexagonal number, n(2n-1).", [_SMALL],
         "integer", "hexagonal number {n}"),
    tool("sequences", "lucas_number", _linear_recurrence((2, 1), (1, 1)), "The n-th Lucas number (2, 1, 3, 4, 7...; "
         "the 0th is 2).", [_SMALL], "integer", "Lucas number {n} (counting from 0)"),
    tool("sequences", "tribonacci_number", _linear_recurrence((0, 0, 1), (1, 1, 1)), "The n-th tribonacci number (0, "
         "0, 1, 1, 2, 4, 7...; counting from 0).", [_SMALL], "integer", "tribonacci number {n} (counting from 0)"),
    tool("sequences", "pell_number", _linear_recurrence((0, 1), (1, 2)), "The n-th Pell number (0, 1, 2, 5, 12...; "
         "counting from 0).", [_SMALL], "integer", "Pell number {n} (counting from 0)"),
    tool("sequences", "harmonic_number", harmonic_number, "The n-th harmonic number 1 + 1/2 + ... + 1/n, rounded to 6 "
         "decimals.", [_SMALL], "amount", "harmonic number {n}"),
    tool("sequences", "sum_of_squares", sum_of_squares, "The sum of the squares of 1 to n.", [_SMALL], "integer",
         "the sum of the squares of the numbers 1 to {n}"),
    tool("sequences", "sum_of_cubes", sum_of_cubes, "The sum of the cubes of 1 to n.", [_SMALL], "integer",
         "the sum of the cubes of the numbers 1 to {n}"),
    tool("sequences", "arithmetic_term", arithmetic_term, "The n-th term of an arithmetic sequence.",
         [("first", "number", "the first term"), ("difference", "number", "the common difference"),
          ("n", "small_integer", "which term (1 is the first)")], "amount",
         "term {n} of the arithmetic sequence starting at {first} with difference {difference}", draw=_series),
    tool("sequences", "arithmetic_sum", arithmetic_sum, "The sum of the first n terms of an arithmetic sequence.",
         [("first", "number", "the first term"), ("difference", "number", "the common difference"),
          ("n", "small_integer", "how many terms")], "amount",
         "the sum of the first {n} terms of the arithmetic sequence starting at {first} with difference {difference}",
         draw=_series),
    tool("sequences", "geometric_term", geometric_term, "The n-th term of a geometric sequence.",
         [("first", "number", "the first term"), ("ratio", "number", "the common ratio"),
          ("n", "small_integer", "which term (1 is the first)")], "amount",
         "term {n} of the geometric sequence starting at {first} with ratio {ratio}", draw=_geometric),
    tool("sequences", "geometric_sum", geometric_sum, "The sum of the first n terms of a geometric sequence.",
         [("first", "number", "the first term"), ("ratio", "number", "the common ratio"),
          ("n", "small_integer", "how many terms")], "amount",
         "the sum of the first {n} terms of the geometric sequence starting at {first} with ratio {ratio}",
         draw=_geometric),
    tool("arithmetic", "square_root", _unary(math.sqrt, lambda v: v >= 0, "0 or more"), "The square root of a number, "
         "rounded to 6 decimals.", [_NUMBER], "amount", "the square root of {number}"),
    tool("arithmetic", "cube_root", _unary(lambda v: math.copysign(abs(v) ** (1 / 3), v)), "The cube root of a "
         "number, rounded to 6 decimals.", [_NUMBER], "amount", "the cube root of {number}"),
    tool("arithmetic", "square", _unary(lambda v: v * v), "A number squared.", [_NUMBER], "amount",
         "the square of {number}"),
    tool("arithmetic", "cube", _unary(lambda v: v**3), "A number cubed.", [_NUMBER], "amount", "the cube of {number}"),
    tool("arithmetic", "reciprocal", _unary(lambda v: 1 / v, lambda v: v != 0, "non-zero"), "One divided by a "
         "number, rounded to 6 decimals.", [_NUMBER], "amount", "the reciprocal of {number}"),
    tool("arithmetic", "natural_log", _unary(math.log, lambda v: v > 0, "positive"), "The natural logarithm of a "
         "positive number.", [_NUMBER], "amount", "the natural logarithm of {number}"),
    tool("arithmetic", "log10", _unary(math.log10, lambda v: v > 0, "positive"), "The base-10 logarithm of a "
         "positive number.", [_NUMBER], "amount", "the base-10 logarithm of {number}"),
    tool("arithmetic", "log2", _unary(math.log2, lambda v: v > 0, "positive"), "The base-2 logarithm of a positive "
         "number.", [_NUMBER], "amount", "the base-2 logarithm of {number}"),
    tool("arithmetic", "nth_root", nth_root, "The n-th root of a number (odd roots of negatives allowed).",
         [_NUMBER, ("degree", "small_integer", "which root: 2 square, 3 cube...")], "amount",
         "root number {degree} of {number}"),
    tool("arithmetic", "log_base", log_base, "The logarithm of a positive number in a given base.",
         [_NUMBER, ("base", "number", "the logarithm's base, positive and not 1")], "amount",
         "the logarithm of {number} to base {base}", draw=_pair("number", "base", "number")),
    tool("arithmetic", "percent_of", percent_of, "A given percentage of a number.",
         [("percent", "percent", "the percentage, such as 15 for 15%"), _NUMBER], "amount", "{percent} of {number}"),
    tool("arithmetic", "what_percent", what_percent, "What percentage part is of whole, rounded to 4 decimals.",
         [("part", "number", "the part"), ("whole", "number", "the whole")], "amount",
         "what percentage {part} is of {whole}", draw=_pair("part", "whole", "number")),
    tool("arithmetic", "absolute_difference", absolute_difference, "The absolute difference of two numbers.",
         [("a", "number", "the first number"), ("b", "number", "the second number")], "amount",
         "the absolute difference between {a} and {b}", draw=_pair("a", "b", "number")),
    tool("arithmetic", "round_to", round_to, "A number rounded to a number of decimal places (halves to even).",
         [_NUMBER, ("decimals", "small_integer", "how many decimal places")], "amount",
         "{number} rounded to {decimals} decimal places"),
    tool("statistics", "median", _list_tool(statistics.median), "The median of a list of numbers.", [_NUMBERS],
         "amount", "the median of {numbers}"),
    tool("statistics", "mode", _list_tool(_mode), "The most frequent value of a list of numbers (the smallest on a "
         "tie).", [_NUMBERS], "amount", "the mode of {numbers}"),
    tool("statistics", "value_range", _list_tool(lambda v: max(v) - min(v)), "The largest minus the smallest of a "
         "list of numbers.", [_NUMBERS], "amount", "the range of {numbers}"),
    tool("statistics", "population_variance", _list_tool(statistics.pvariance), "The population variance (divided by "
         "n) of a list of numbers.", [_NUMBERS], "amount", "the population variance of {numbers}"),
    tool("statistics", "sample_variance", _list_tool(statistics.variance, 2), "The sample variance (divided by n-1) "
         "of a list of numbers.", [_NUMBERS], "amount", "the sample variance of {numbers}"),
    tool("statistics", "sample_std", _list_tool(statistics.stdev, 2), "The sample standard deviation (divided by "
         "n-1) of a list of numbers.", [_NUMBERS], "amount", "the sample standard deviation of {numbers}"),
    tool("statistics", "geometric_mean", _list_tool(lambda v: statistics.geometric_mean(_positive_values(v))),
         "The geometric mean of a list of positive numbers.", [_NUMBERS], "amount", "the geometric mean of {numbers}"),
    tool("statistics", "harmonic_mean", _list_tool(lambda v: statistics.harmonic_mean(_positive_values(v))),
         "The harmonic mean of a list of positive numbers.", [_NUMBERS], "amount", "the harmonic mean of {numbers}"),
    tool("statistics", "list_sum", _list_tool(math.fsum, 0), "The sum of a list of numbers.", [_NUMBERS], "amount",
         "the total of {numbers}"),
    tool("statistics", "list_product", _list_tool(math.prod, 0), "The product of a list of numbers.", [_NUMBERS],
         "amount", "the product of {numbers}"),
    tool("statistics", "minimum", _list_tool(min), "The smallest of a list of numbers.", [_NUMBERS], "amount",
         "the smallest of {numbers}"),
    tool("statistics", "maximum", _list_tool(max), "The largest of a list of numbers.", [_NUMBERS], "amount",
         "the largest of {numbers}"),
    tool("statistics", "interquartile_range", _list_tool(_iqr, 2), "The interquartile range (inclusive quartiles) "
         "of a list of numbers.", [_NUMBERS], "amount", "the interquartile range of {numbers}"),
    tool("statistics", "mean_absolute_deviation", _list_tool(_mad), "The mean absolute deviation from the mean of a "
         "list of numbers.", [_NUMBERS], "amount", "the mean absolute deviation of {numbers}"),
    tool("statistics", "coefficient_of_variation", _list_tool(lambda v: 100 * statistics.pstdev(v)
                                                              / statistics.fmean(v)),
         "The population standard deviation as a percentage of the mean.", [_NUMBERS], "amount",
         "the coefficient of variation in percent of {numbers}"),
    tool("statistics", "root_mean_square", _list_tool(lambda v: math.sqrt(math.fsum(x * x for x in v) / len(v))),
         "The root mean square of a list of numbers.", [_NUMBERS], "amount", "the root mean square of {numbers}"),
    tool("statistics", "midrange", _list_tool(lambda v: (max(v) + min(v)) / 2), "Halfway between the smallest and "
         "the largest of a list of numbers.", [_NUMBERS], "amount", "the midrange of {numbers}"),
    tool("statistics", "second_largest", _list_tool(lambda v: sorted(set(v))[-2], 2), "The second largest distinct "
         "value of a list of numbers.", [_NUMBERS], "amount", "the second largest distinct value of {numbers}"),
    tool("statistics", "count_above_mean", _list_tool(lambda v: sum(x > statistics.fmean(v) for x in v)), "How many "
         "numbers of a list are greater than its mean.", [_NUMBERS], "count",
         "how many of {numbers} are above their mean"),
    tool("statistics", "z_score", z_score, "How many population standard deviations a value lies from the mean of a "
         "list.", [("value", "number", "the value"), _NUMBERS], "amount", "the z-score of {value} among {numbers}",
         draw=_z),
]
