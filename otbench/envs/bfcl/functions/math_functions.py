"""Number theory, combinatorics, algebra and small linear-algebra functions of BFCL's exec set."""

from __future__ import annotations

import math

from . import _checks as check
from . import _stable


def calc_binomial_probability(n: int, k: int, p: float) -> float:
    """Probability of exactly ``k`` successes in ``n`` independent trials of success chance ``p``.

    Returns C(n, k) * p**k * (1-p)**(n-k); 0.0 when k > n. Falls back to log space when the
    exact product overflows a float (very large n).
    """
    n = check.non_negative_integer(n, "n")
    k = check.non_negative_integer(k, "k")
    p = check.number(p, "p")
    if not 0 <= p <= 1:
        raise ValueError(f"'p' must be a probability between 0 and 1, got {p!r}")
    if k > n:
        return 0.0
    try:
        return float(math.comb(n, k) * p**k * (1 - p) ** (n - k))
    except OverflowError:
        if p in (0, 1):
            return float(k == (n if p == 1 else 0))
        log_value = (
            math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
            + k * math.log(p) + (n - k) * math.log1p(-p)
        )
        return math.exp(log_value)


def calculate_permutations(n: int, k: int) -> int:
    """Number of ordered selections of ``k`` items out of ``n``: n! / (n-k)!, 0 when k > n."""
    return math.perm(check.non_negative_integer(n, "n"), check.non_negative_integer(k, "k"))


def math_factorial(n: int) -> int:
    """n! for a non-negative integer n."""
    return math.factorial(check.non_negative_integer(n, "n"))


def math_gcd(a: int, b: int) -> int:
    """Greatest common divisor of two integers (always >= 0)."""
    return math.gcd(check.integer(a, "a"), check.integer(b, "b"))


def math_lcm(a: int, b: int) -> int:
    """Least common multiple of two integers (always >= 0; 0 if either is 0)."""
    return math.lcm(check.integer(a, "a"), check.integer(b, "b"))


def _fibonacci_pair(index: int) -> tuple[int, int]:
    """(F(index), F(index+1)) with F(0)=0, F(1)=1, by fast doubling: O(log index) steps."""
    if index == 0:
        return 0, 1
    half, half_next = _fibonacci_pair(index // 2)
    even = half * (2 * half_next - half)
    odd = half * half + half_next * half_next
    return (odd, even + odd) if index % 2 else (even, odd)


def get_fibonacci_number(n: int) -> int:
    """The n-th Fibonacci number counting positions from 1 in 0, 1, 1, 2, 3, ...

    The BFCL description says the sequence starts with 0 and the position is a positive
    integer, so position 1 is 0, position 2 is 1 and position 15 is 377.
    """
    n = check.integer(n, "n")
    if n < 1:
        raise ValueError(f"'n' must be a positive position (1 or more), got {n}")
    return _fibonacci_pair(n - 1)[0]


def get_fibonacci_sequence(n: int) -> list[int]:
    """The first ``n`` Fibonacci numbers starting 0, 1, 1, 2, ... (empty list for n = 0)."""
    count = check.non_negative_integer(n, "n")
    sequence: list[int] = []
    current, following = 0, 1
    for _ in range(count):
        sequence.append(current)
        current, following = following, current + following
    return sequence


def get_prime_factors(number: int) -> list[int]:
    """Prime factorisation of ``number`` >= 1 in ascending order, with repetition ([] for 1).

    For example 456 -> [2, 2, 2, 3, 19].
    """
    remaining = check.integer(number, "number")
    if remaining < 1:
        raise ValueError(f"'number' must be a positive integer, got {remaining}")
    factors: list[int] = []
    divisor = 2
    while divisor * divisor <= remaining:
        while remaining % divisor == 0:
            factors.append(divisor)
            remaining //= divisor
        divisor += 1 if divisor == 2 else 2
    if remaining > 1:
        factors.append(remaining)
    return factors


def quadratic_roots(a: float, b: float, c: float) -> list[float] | list[dict[str, float]]:
    """Both roots of a*x**2 + b*x + c = 0, the '+' root of the quadratic formula first.

    Real roots come back as two floats (equal when the discriminant is 0). Complex roots,
    which JSON cannot hold as numbers, come back as two {"real": ..., "imaginary": ...} dicts.
    """
    a, b, c = check.number(a, "a"), check.number(b, "b"), check.number(c, "c")
    if a == 0:
        raise ValueError("'a' must be non-zero: with a = 0 the equation is not quadratic")
    discriminant = b * b - 4 * a * c
    if discriminant >= 0:
        root = math.sqrt(discriminant)
        return [(-b + root) / (2 * a), (-b - root) / (2 * a)]
    real = -b / (2 * a)
    imaginary = math.sqrt(-discriminant) / (2 * a)
    return [{"real": real, "imaginary": imaginary}, {"real": real, "imaginary": -imaginary}]


def mat_mul(matA: list[list[int]], matB: list[list[int]]) -> list[list[int | float]]:
    """Matrix product matA x matB, as a list of rows.

    The sum runs over matB's rows, as the textbook triple loop does: when matA has *more*
    columns than matB has rows, matA's extra columns are ignored rather than refused. BFCL's
    exec_parallel_31 ground truth multiplies a 2x4 by a 2x4 matrix and must still execute;
    fewer columns than matB's rows is a ValueError.
    """
    left, right = check.matrix(matA, "matA"), check.matrix(matB, "matB")
    if len(left[0]) < len(right):
        raise ValueError(
            f"cannot multiply a {len(left)}x{len(left[0])} 'matA' by a {len(right)}x{len(right[0])} 'matB': "
            "'matA' needs at least as many columns as 'matB' has rows"
        )
    columns = list(zip(*right))
    return [[sum(x * y for x, y in zip(row, column)) for column in columns] for row in left]


def sort_array(array: list[int], reverse: bool = False) -> list[int | float]:
    """The numbers of ``array`` sorted ascending, or descending when ``reverse`` is True."""
    return sorted(check.number_list(array, "array"), reverse=check.boolean(reverse, "reverse"))


def calculate_cosine_similarity(vectorA: list[float], vectorB: list[float]) -> float:
    """Cosine of the angle between two equally long, non-zero vectors: dot / (|A| |B|)."""
    first = check.number_list(vectorA, "vectorA", min_length=1)
    second = check.number_list(vectorB, "vectorB", min_length=1)
    check.same_length(first, "vectorA", second, "vectorB")
    norm_product = math.sqrt(sum(x * x for x in first)) * math.sqrt(sum(y * y for y in second))
    if norm_product == 0:
        raise ValueError("cosine similarity is undefined for a zero vector")
    return sum(x * y for x, y in zip(first, second)) / norm_product


def generate_random_number(min: int, max: int) -> int:  # BFCL's parameter names
    """An integer in [min, max], both included.

    Deterministic stand-in for a random number generator: the value is derived from a stable
    hash of (min, max), so equal arguments always give the same number and runs are repeatable.
    """
    low, high = check.integer(min, "min"), check.integer(max, "max")
    if low > high:
        raise ValueError(f"'min' must not exceed 'max', got min={low} and max={high}")
    return _stable.randint(low, high, "random-number", low, high)
