"""E, P and A for one BFCL-Opaque test, as the OpaqueToolsBench reference implementation scores them.

All functions are pure: they take calls and outputs that the environment already produced and
never execute, load or ask anything themselves. Model calls, gold calls and schemas must use one
naming; the environment uses the names the agent was shown, so a call to a name that was not
offered (even a tool's hidden real name) is a call to an unknown function and matches no gold
call. A call with a ``problem`` (its shape did not fit, see :func:`otbench.core.calls.checked_call`)
is a failed call: it executed nothing and scores as an invalid structure.

Pairing model calls with gold calls: parallel categories carry several gold calls in any order, so
every metric pairs them one-to-one with an optimal assignment (``linear_sum_assignment``) instead of
BFCL's greedy first-fit, which can miss a full match when one model call fits two gold calls.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from scipy.optimize import linear_sum_assignment

from otbench.core.calls import CallResult, ToolCall

REAL_TIME_TOLERANCE = 0.2
"""real_time_match accepts outputs within +-20% of the gold number (BFCL's allowed difference)."""

RESULT_TYPES = frozenset({"exact_match", "real_time_match", "structural_match"})

_Gold = TypeVar("_Gold")
_Model = TypeVar("_Model")


# --- Execution accuracy (E) -------------------------------------------------------------------


def execution_accuracy(
    model_results: Sequence[CallResult], gold_outputs: Sequence[Any], result_types: Sequence[str]
) -> bool:
    """Whether the model's executed calls reproduce every gold output (E for one test).

    The model must make exactly as many calls as the gold answer, and each gold output must be
    matched by a distinct model call that executed successfully (a failed call never matches, even
    when its ``output`` happens to equal the gold output). ``result_types[i]`` says how gold output
    ``i`` is compared; see :func:`output_matches`.
    """
    if len(result_types) != len(gold_outputs):
        raise ValueError(f"{len(gold_outputs)} gold outputs but {len(result_types)} result types")
    unknown = set(result_types) - RESULT_TYPES
    if unknown:
        raise ValueError(f"unknown execution result types: {sorted(unknown)}")
    if len(model_results) != len(gold_outputs):
        return False

    def match(gold: tuple[Any, str], result: CallResult) -> float:
        gold_output, result_type = gold
        return float(result.ok and output_matches(gold_output, result.output, result_type))

    matched = _best_pairing_total(list(zip(gold_outputs, result_types)), model_results, match)
    return matched == len(gold_outputs)


def output_matches(gold: Any, output: Any, result_type: str) -> bool:
    """Compare one model output with one gold output the way BFCL's executable checker does.

    Tuples are compared as lists on both sides (recursively), i.e. as the outputs would look after
    a JSON round trip: BFCL stores gold outputs as JSON and converts tuple outputs for the same
    reason, and our gold outputs may or may not have been through a cache.

    - ``exact_match``: ``==`` as BFCL, so ``5`` matches ``5.0`` and floats must be bit-equal
      (``0.1 + 0.2`` does not match ``0.3``), but with the guard parameter matching has: a bool is
      not a number (BFCL's plain ``==`` let a wrong tool's ``False`` match a gold ``0.0``).
    - ``real_time_match``: see :func:`_within_real_time_tolerance`.
    - ``structural_match``: BFCL's pattern check, which is shallow on purpose (live services return
      different values, and nested lists of varying length, on every call): the output must have
      exactly the gold's type; a dict must have exactly the gold's keys (values are not looked
      at); a list must have the gold's length (elements are not looked at); any other type
      matches on type alone.
    """
    gold, output = _as_json_sequences(gold), _as_json_sequences(output)
    if result_type == "exact_match":
        return values_equal(gold, output)
    if result_type == "real_time_match":
        return _within_real_time_tolerance(gold, output)
    if result_type == "structural_match":
        return _has_same_structure(gold, output)
    raise ValueError(f"unknown execution result type: {result_type!r}")


def _within_real_time_tolerance(gold: Any, output: Any) -> bool:
    """Numbers (int or float, never bool) match within +-20% of the gold number, else ``==``.

    The band is relative to ``abs(gold)`` and inclusive, so it also works for negative gold values
    (BFCL's ``gold*0.8 <= x <= gold*1.2`` is empty for them); a gold 0 therefore needs exactly 0.
    Lists of equal length and dicts with equal keys are compared element by element, so a live
    service returning several numbers is held to the same tolerance for each.
    """
    if _is_number(gold) and _is_number(output):
        return abs(output - gold) <= REAL_TIME_TOLERANCE * abs(gold)
    if isinstance(gold, list) and isinstance(output, list) and len(gold) == len(output):
        return all(map(_within_real_time_tolerance, gold, output))
    if isinstance(gold, dict) and isinstance(output, dict) and gold.keys() == output.keys():
        return all(_within_real_time_tolerance(gold[key], output[key]) for key in gold)
    return values_equal(gold, output)


def _has_same_structure(gold: Any, output: Any) -> bool:
    if type(output) is not type(gold):
        return False
    if isinstance(gold, dict):
        return output.keys() == gold.keys()
    if isinstance(gold, list):
        return len(output) == len(gold)
    return True


def _as_json_sequences(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_as_json_sequences(item) for item in value]
    if isinstance(value, dict):
        return {key: _as_json_sequences(item) for key, item in value.items()}
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# --- Parameter accuracy (P) -------------------------------------------------------------------


def parameter_accuracy(model_calls: Sequence[ToolCall], gold_calls: Sequence[ToolCall]) -> float:
    """Share of gold arguments the model reproduced, averaged over gold calls (P for one test).

    Each gold call is paired with at most one model call so that the total score is as high as
    possible; unpaired gold calls score 0 and surplus model calls are ignored (counting calls is
    E's job). No call at all scores 0. See :func:`call_parameter_score` for one pair.
    """
    if not gold_calls:
        raise ValueError("a test needs at least one gold call")
    return _best_pairing_total(gold_calls, model_calls, call_parameter_score) / len(gold_calls)


def call_parameter_score(gold: ToolCall, model: ToolCall) -> float:
    """P for one pair: 0 for the wrong function or a failed call, else the share of gold arguments given the gold
    value (see :func:`values_equal`); extra model arguments do not lower it. A gold call without
    arguments scores 1 only if the model passed none either, since any argument is then wrong.
    """
    if model.problem is not None or model.name != gold.name:
        return 0.0
    if not gold.arguments:
        return float(not model.arguments)
    recovered = sum(
        name in model.arguments and values_equal(value, model.arguments[name])
        for name, value in gold.arguments.items()
    )
    return recovered / len(gold.arguments)


def values_equal(gold: Any, model: Any) -> bool:
    """Value equality for arguments: what a correct call could differ in without being wrong.

    Numbers compare numerically (5 equals 5.0: JSON and models do not keep the distinction, and A
    already checks types), but a bool is not a number here (True does not equal 1). Lists and
    tuples compare element-wise as sequences (JSON has no tuple), dicts need the same keys with
    equal values, and strings and everything else compare with ``==`` (case-sensitive).
    """
    if isinstance(gold, bool) or isinstance(model, bool):
        return isinstance(gold, bool) and isinstance(model, bool) and gold == model
    if _is_number(gold) and _is_number(model):
        return gold == model
    if isinstance(gold, (list, tuple)) and isinstance(model, (list, tuple)):
        return len(gold) == len(model) and all(map(values_equal, gold, model))
    if isinstance(gold, dict) and isinstance(model, dict):
        return gold.keys() == model.keys() and all(values_equal(gold[key], model[key]) for key in gold)
    return bool(gold == model)


# --- AST accuracy (A) -------------------------------------------------------------------------


def ast_accuracy(
    model_calls: Sequence[ToolCall] | None, gold_calls: Sequence[ToolCall], schemas: dict[str, dict]
) -> float:
    """How well-formed the calls are, independent of their values (A for one test).

    ``model_calls`` is None when the reply could not be parsed into calls (format invalid); that,
    like no call at all, scores 0. Otherwise each gold call is paired with a model call as in
    :func:`parameter_accuracy` (maximising the total A), scored by :func:`call_ast_score`, and
    the scores are averaged over gold calls; unpaired gold calls score 0. ``schemas`` maps each
    offered function's real name to its BFCL schema.
    """
    if not gold_calls:
        raise ValueError("a test needs at least one gold call")
    if model_calls is None:
        return 0.0

    def score(gold: ToolCall, model: ToolCall) -> float:
        return call_ast_score(gold, model, schemas)

    return _best_pairing_total(gold_calls, model_calls, score) / len(gold_calls)


def call_ast_score(gold: ToolCall, model: ToolCall, schemas: dict[str, dict]) -> float:
    """Mean of the five parts for one parsed model call against one gold call.

    1. format valid: 1, since the call was parsed (an unparseable reply never gets here);
    2. structure valid: a non-empty function name and a dict of arguments, and no ``problem``;
    3. type correctness: share of gold arguments present with the same type
       (:func:`same_type`); 0 for the wrong function; 1 when the gold call has no arguments;
    4. schema compliant: structure valid, no hallucinated arguments and type correctness 1;
    5. no hallucinated arguments: every argument name is a property of the CALLED function's
       schema (a function nobody offered has no properties). When the model called the gold
       function, the gold call's own argument names count as known too: BFCL's data has gold
       calls that pass a parameter its schema omits (``book_room(price=...)`` in
       exec_multiple_45), and emitting the gold call must never count as hallucinating.

    A wrong function called with valid structure and its own real parameters (or none) thus scores
    exactly 0.6: format, structure and no-hallucination are 1, types and schema 0. The same 0.6
    goes to the right function called without arguments, the typical opaque-tool failure. An
    invalid structure leaves only the format part: 0.2.
    """
    if model.problem is not None or not (isinstance(model.name, str) and model.name
                                         and isinstance(model.arguments, dict)):
        return 1 / 5
    known = set(schemas.get(model.name, {}).get("parameters", {}).get("properties", {}))
    if model.name == gold.name:
        known |= set(gold.arguments)
    no_hallucination = set(model.arguments) <= known
    types_right = _type_correctness(gold, model)
    schema_compliant = no_hallucination and types_right == 1.0
    return (1.0 + 1.0 + types_right + float(schema_compliant) + float(no_hallucination)) / 5


def _type_correctness(gold: ToolCall, model: ToolCall) -> float:
    if model.problem is not None or model.name != gold.name:
        return 0.0
    if not gold.arguments:
        return 1.0
    typed_right = sum(
        name in model.arguments and same_type(value, model.arguments[name])
        for name, value in gold.arguments.items()
    )
    return typed_right / len(gold.arguments)


def same_type(gold: Any, model: Any) -> bool:
    """Exact Python type equality, recursively, with list and tuple as one type (JSON has no tuple).

    int, float and bool are all distinct (a model 5 for a gold 5.0 is a type error), as the
    reference checks the exact Python type. Lengths and values are not types: a list matches when
    each model element has the type of some gold element (an empty gold list says nothing about
    its elements), and a dict matches when every gold key is present with a value of the same type
    (extra keys are not a type error).
    """
    gold_is_sequence, model_is_sequence = isinstance(gold, (list, tuple)), isinstance(model, (list, tuple))
    if gold_is_sequence or model_is_sequence:
        return (
            gold_is_sequence
            and model_is_sequence
            and (not gold or all(any(same_type(g, m) for g in gold) for m in model))
        )
    if isinstance(gold, dict) and isinstance(model, dict):
        return all(key in model and same_type(value, model[key]) for key, value in gold.items())
    return type(gold) is type(model)


# --- One test, many tests ---------------------------------------------------------------------


@dataclass(frozen=True)
class TestScore:
    """E, P and A of one test, each in [0, 1] (E is 0 or 1)."""

    __test__ = False  # pytest: a record, not a test class, despite the name

    E: float
    P: float
    A: float


def score_test(
    *,
    model_calls: Sequence[ToolCall] | None,
    model_results: Sequence[CallResult],
    gold_calls: Sequence[ToolCall],
    gold_outputs: Sequence[Any],
    result_types: Sequence[str],
    schemas: dict[str, dict],
) -> TestScore:
    """All three metrics of one test. ``model_calls`` is None when the reply did not parse
    (then ``model_results`` is empty); ``model_results`` are those calls, executed."""
    return TestScore(
        E=float(execution_accuracy(model_results, gold_outputs, result_types)),
        P=parameter_accuracy(model_calls or [], gold_calls),
        A=ast_accuracy(model_calls, gold_calls, schemas),
    )


def summarise(scores: Sequence[TestScore]) -> dict[str, float]:
    """Means of E, P and A over tests, plus ``n``; the means are NaN when there are no tests, so an
    empty run cannot pass for a zero score."""
    n = len(scores)

    def mean(values: list[float]) -> float:
        return math.fsum(values) / n if n else math.nan

    return {
        "E": mean([score.E for score in scores]),
        "P": mean([score.P for score in scores]),
        "A": mean([score.A for score in scores]),
        "n": float(n),
    }


# --- Pairing ----------------------------------------------------------------------------------


def _best_pairing_total(
    golds: Sequence[_Gold], models: Sequence[_Model], score: Callable[[_Gold, _Model], float]
) -> float:
    """Highest total ``score`` over one-to-one pairings of golds with models.

    Leftovers on either side stay unpaired and add 0: the assignment is solved on the rectangular
    golds x models matrix, so a reply with many calls costs their number times the (few) gold
    calls, never the cube of it.
    """
    if not golds or not models:
        return 0.0
    scores = np.array([[score(gold, model) for model in models] for gold in golds], dtype=float)
    rows, cols = linear_sum_assignment(scores, maximize=True)
    return float(scores[rows, cols].sum())
