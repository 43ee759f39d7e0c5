"""Edge cases of the BFCL-Opaque metrics as the OpaqueToolsBench reference implementation computes
them, plus the choices documented in otbench/envs/bfcl/metrics.py."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from otbench.core.calls import CallResult, ToolCall
from otbench.envs.bfcl import metrics as m

SCHEMAS = {
    "add": {
        "name": "add",
        "description": "Adds two numbers.",
        "parameters": {
            "type": "dict",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
    "scale": {
        "name": "scale",
        "description": "Multiplies a vector by a factor.",
        "parameters": {
            "type": "dict",
            "properties": {"vector": {"type": "array"}, "factor": {"type": "float"}, "options": {"type": "dict"}},
            "required": ["vector", "factor"],
        },
    },
    "now": {"name": "now", "description": "Current time.", "parameters": {"type": "dict", "properties": {}}},
}


_ADD_CALL = ToolCall("add", {"a": 1, "b": 2})


def ok(output, call=_ADD_CALL) -> CallResult:
    return CallResult(call=call, ok=True, output=output)


def failed(output=None) -> CallResult:
    return CallResult(call=ToolCall("add"), ok=False, output=output, error="TypeError: boom")


# --- E ----------------------------------------------------------------------------------------


class TestExecutionAccuracy:
    def test_single_exact_match(self):
        assert m.execution_accuracy([ok(3)], [3], ["exact_match"])
        assert not m.execution_accuracy([ok(4)], [3], ["exact_match"])

    def test_call_count_must_equal_gold_count(self):
        assert not m.execution_accuracy([ok(3), ok(3)], [3], ["exact_match"])
        assert not m.execution_accuracy([ok(3)], [3, 3], ["exact_match", "exact_match"])
        assert not m.execution_accuracy([], [3], ["exact_match"])

    def test_two_model_calls_cannot_match_one_gold_output(self):
        assert not m.execution_accuracy([ok(4), ok(4)], [4, 9], ["exact_match", "exact_match"])
        assert m.execution_accuracy([ok(9), ok(4)], [4, 9], ["exact_match", "exact_match"])

    def test_assignment_finds_the_match_greedy_first_fit_misses(self):
        # Greedy would give output 110 to the real-time gold 100, leaving 100 for the exact gold 110.
        types = ["real_time_match", "exact_match"]
        assert m.execution_accuracy([ok(110), ok(100)], [100, 110], types)

    def test_failed_call_never_matches(self):
        assert not m.execution_accuracy([failed(3)], [3], ["exact_match"])
        assert not m.execution_accuracy([failed(None)], [None], ["exact_match"])
        assert not m.execution_accuracy([failed({"a": 1})], [{"a": 2}], ["structural_match"])

    @pytest.mark.parametrize(
        ("output", "expected"),
        [(100, True), (119, True), (81, True), (120, True), (121, False), (79, False), (119.0, True)],
    )
    def test_real_time_band_is_20_percent_of_gold(self, output, expected):
        assert m.execution_accuracy([ok(output)], [100], ["real_time_match"]) is expected

    def test_real_time_band_for_negative_and_zero_gold(self):
        assert m.execution_accuracy([ok(-119)], [-100], ["real_time_match"])
        assert not m.execution_accuracy([ok(-121)], [-100], ["real_time_match"])
        assert m.execution_accuracy([ok(0.0)], [0], ["real_time_match"])
        assert not m.execution_accuracy([ok(0.001)], [0], ["real_time_match"])

    def test_real_time_bool_is_not_a_number(self):
        assert not m.execution_accuracy([ok(True)], [1.1], ["real_time_match"])

    def test_real_time_recurses_into_lists_and_dicts_of_the_same_shape(self):
        assert m.output_matches([100, 200], [110, 230], "real_time_match")
        assert not m.output_matches([100, 200], [110, 250], "real_time_match")
        assert not m.output_matches([100, 200], [100], "real_time_match")
        assert m.output_matches({"usd": 100.0}, {"usd": 115.0}, "real_time_match")
        assert not m.output_matches({"usd": 100.0}, {"eur": 100.0}, "real_time_match")

    def test_real_time_falls_back_to_equality(self):
        assert m.output_matches("sunny", "sunny", "real_time_match")
        assert not m.output_matches("sunny", "rain", "real_time_match")

    def test_exact_match_is_equality_with_bools_kept_apart_from_numbers(self):
        assert not m.output_matches(0.3, 0.1 + 0.2, "exact_match")
        assert m.output_matches(0.1 + 0.2, 0.1 + 0.2, "exact_match")
        assert m.output_matches(5.0, 5, "exact_match")
        assert not m.output_matches(1, True, "exact_match")  # a bool is not a number
        assert not m.output_matches(0.0, False, "exact_match") and not m.output_matches([0.0], [False], "exact_match")
        assert not m.output_matches(1.0, True, "real_time_match")
        assert not m.output_matches("5", 5, "exact_match")

    def test_tuples_compare_as_lists(self):
        assert m.output_matches([1, [2, 3]], (1, (2, 3)), "exact_match")
        assert m.output_matches((1, 2), [1, 2], "structural_match")

    def test_structural_match_is_bfcls_shallow_pattern(self):
        assert m.output_matches({"temp": 10, "sky": "clear"}, {"temp": 3, "sky": "rain"}, "structural_match")
        assert not m.output_matches({"temp": 10}, {"temp": 10, "wind": 2}, "structural_match")
        assert not m.output_matches({"temp": 10, "sky": "x"}, {"temp": 10}, "structural_match")
        assert m.output_matches([1, 2, 3], ["a", "b", "c"], "structural_match")
        assert not m.output_matches([1, 2, 3], [1, 2], "structural_match")
        assert m.output_matches({"items": [1, 2]}, {"items": "none"}, "structural_match")  # values unchecked
        assert not m.output_matches(1.5, 2, "structural_match")
        assert m.output_matches("a", "b", "structural_match")

    def test_result_types_are_validated(self):
        with pytest.raises(ValueError):
            m.execution_accuracy([ok(1)], [1], ["fuzzy_match"])
        with pytest.raises(ValueError):
            m.execution_accuracy([ok(1)], [1], [])


# --- P ----------------------------------------------------------------------------------------


class TestParameterAccuracy:
    gold = ToolCall("add", {"a": 1, "b": 2})

    def test_all_parameters_right(self):
        assert m.parameter_accuracy([ToolCall("add", {"b": 2, "a": 1})], [self.gold]) == 1.0

    def test_wrong_function_scores_zero_even_with_right_values(self):
        assert m.parameter_accuracy([ToolCall("scale", {"a": 1, "b": 2})], [self.gold]) == 0.0

    def test_extra_parameters_do_not_lower_it(self):
        assert m.parameter_accuracy([ToolCall("add", {"a": 1, "b": 2, "c": 9})], [self.gold]) == 1.0

    def test_missing_or_wrong_parameters_lower_it(self):
        assert m.parameter_accuracy([ToolCall("add", {"a": 1})], [self.gold]) == 0.5
        assert m.parameter_accuracy([ToolCall("add", {"a": 1, "b": 3})], [self.gold]) == 0.5
        assert m.parameter_accuracy([ToolCall("add", {})], [self.gold]) == 0.0

    def test_gold_without_parameters(self):
        gold = [ToolCall("now")]
        assert m.parameter_accuracy([ToolCall("now")], gold) == 1.0
        assert m.parameter_accuracy([ToolCall("now", {"tz": "UTC"})], gold) == 0.0

    def test_no_call_scores_zero(self):
        assert m.parameter_accuracy([], [self.gold]) == 0.0

    @pytest.mark.parametrize(
        ("gold", "model", "equal"),
        [
            (5.0, 5, True),
            (1 / 6, 1 / 6, True),
            (True, 1, False),
            (1, True, False),
            (False, False, True),
            ((1, 2), [1, 2.0], True),
            ([1, 2], [2, 1], False),
            ([1, 2], [1, 2, 3], False),
            ({"x": 1, "y": [2]}, {"y": (2.0,), "x": 1.0}, True),
            ({"x": 1}, {"x": 1, "y": 2}, False),
            ("Paris", "paris", False),
            ("5", 5, False),
            (None, None, True),
        ],
    )
    def test_value_equality(self, gold, model, equal):
        assert m.values_equal(gold, model) is equal

    def test_parallel_calls_pair_regardless_of_order(self):
        gold = [ToolCall("add", {"a": 1, "b": 2}), ToolCall("add", {"a": 3, "b": 4})]
        model = [ToolCall("add", {"a": 3, "b": 4}), ToolCall("add", {"a": 1, "b": 2})]
        assert m.parameter_accuracy(model, gold) == 1.0

    def test_unpaired_gold_calls_score_zero_and_surplus_model_calls_are_ignored(self):
        gold = [ToolCall("add", {"a": 1, "b": 2}), ToolCall("add", {"a": 3, "b": 4})]
        assert m.parameter_accuracy([ToolCall("add", {"a": 3, "b": 4})], gold) == 0.5
        surplus = [ToolCall("now"), ToolCall("add", {"a": 3, "b": 4}), ToolCall("add", {"a": 1, "b": 2})]
        assert m.parameter_accuracy(surplus, gold) == 1.0

    def test_pairing_maximises_the_total(self):
        # The first model call is perfect for both gold calls; only giving it to the second gold
        # call (and the half-right call to the first) reaches (0.5 + 1) / 2.
        gold = [ToolCall("add", {"a": 1, "b": 2}), ToolCall("add", {"c": 3})]
        model = [ToolCall("add", {"a": 1, "b": 2, "c": 3}), ToolCall("add", {"a": 1})]
        assert m.parameter_accuracy(model, gold) == 0.75


# --- A ----------------------------------------------------------------------------------------


class TestAstAccuracy:
    gold = ToolCall("scale", {"vector": [1.0, 2.0], "factor": 2.0})

    def ast(self, *model_calls: ToolCall) -> float:
        return m.ast_accuracy(list(model_calls), [self.gold], SCHEMAS)

    def test_well_formed_call_scores_one_whatever_the_values(self):
        assert self.ast(ToolCall("scale", {"vector": [7.5], "factor": -1.0})) == 1.0

    def test_wrong_function_with_valid_structure_scores_0_6(self):
        assert self.ast(ToolCall("add", {"a": 1, "b": 2})) == pytest.approx(0.6)
        assert self.ast(ToolCall("now")) == pytest.approx(0.6)

    def test_wrong_function_with_parameters_it_does_not_have_scores_0_4(self):
        assert self.ast(ToolCall("add", {"vector": [1.0], "factor": 2.0})) == pytest.approx(0.4)
        assert self.ast(ToolCall("unknown_fn", {"x": 1})) == pytest.approx(0.4)

    def test_right_function_without_arguments_scores_0_6(self):
        assert self.ast(ToolCall("scale")) == pytest.approx(0.6)

    def test_hallucinated_parameter(self):
        # format 1, structure 1, types 1, schema 0, no-hallucination 0
        assert self.ast(ToolCall("scale", {"vector": [1.0], "factor": 2.0, "mode": "fast"})) == pytest.approx(0.6)

    def test_int_for_float_is_a_type_error(self):
        # types 1/2, schema 0, no-hallucination 1 -> (1 + 1 + 0.5 + 0 + 1) / 5
        assert self.ast(ToolCall("scale", {"vector": [1.0], "factor": 2})) == pytest.approx(0.7)

    def test_bool_for_int_is_a_type_error(self):
        gold = ToolCall("add", {"a": 1, "b": 2})
        score = m.ast_accuracy([ToolCall("add", {"a": True, "b": 2})], [gold], SCHEMAS)
        assert score == pytest.approx(0.7)

    def test_tuple_and_list_are_one_type(self):
        gold = ToolCall("scale", {"vector": (1.0, 2.0), "factor": 2.0})
        assert m.ast_accuracy([ToolCall("scale", {"vector": [3.0], "factor": 1.0})], [gold], SCHEMAS) == 1.0

    def test_types_are_checked_inside_lists_and_dicts(self):
        assert self.ast(ToolCall("scale", {"vector": [1, 2], "factor": 2.0})) == pytest.approx(0.7)
        assert self.ast(ToolCall("scale", {"vector": [1.0, "2"], "factor": 2.0})) == pytest.approx(0.7)
        gold = ToolCall("scale", {"vector": [], "factor": 1.0, "options": {"axis": 0, "tags": ["a"]}})
        right = ToolCall(
            "scale", {"vector": ["anything"], "factor": 1.0, "options": {"axis": 1, "tags": ["b", "c"]}}
        )
        wrong_inside = ToolCall("scale", {"vector": [], "factor": 1.0, "options": {"axis": 1.0, "tags": ["b"]}})
        missing_key = ToolCall("scale", {"vector": [], "factor": 1.0, "options": {"tags": ["b"]}})
        assert m.ast_accuracy([right], [gold], SCHEMAS) == 1.0
        assert m.ast_accuracy([wrong_inside], [gold], SCHEMAS) == pytest.approx((2 + 2 / 3 + 0 + 1) / 5)
        assert m.ast_accuracy([missing_key], [gold], SCHEMAS) == pytest.approx((2 + 2 / 3 + 0 + 1) / 5)

    def test_missing_gold_parameter_counts_as_untyped(self):
        assert self.ast(ToolCall("scale", {"vector": [1.0]})) == pytest.approx(0.7)

    def test_unparseable_reply_and_no_call_score_zero(self):
        assert m.ast_accuracy(None, [self.gold], SCHEMAS) == 0.0
        assert m.ast_accuracy([], [self.gold], SCHEMAS) == 0.0

    def test_invalid_structure_keeps_only_the_format_part(self):
        assert self.ast(ToolCall("", {})) == pytest.approx(0.2)
        assert self.ast(ToolCall("scale", ["vector"])) == pytest.approx(0.2)  # type: ignore[arg-type]

    def test_gold_without_parameters(self):
        gold = [ToolCall("now")]
        assert m.ast_accuracy([ToolCall("now")], gold, SCHEMAS) == 1.0
        assert m.ast_accuracy([ToolCall("now", {"tz": "UTC"})], gold, SCHEMAS) == pytest.approx(0.6)

    def test_parallel_calls_pair_and_unpaired_gold_scores_zero(self):
        gold = [ToolCall("add", {"a": 1, "b": 2}), self.gold]
        model = [ToolCall("scale", {"vector": [0.5], "factor": 3.0}), ToolCall("add", {"a": 5, "b": 6})]
        assert m.ast_accuracy(model, gold, SCHEMAS) == 1.0
        assert m.ast_accuracy(model[:1], gold, SCHEMAS) == 0.5


# --- One test, many tests ---------------------------------------------------------------------


def test_score_test_combines_the_three_metrics():
    gold_calls = [ToolCall("add", {"a": 1, "b": 2})]
    model_call = ToolCall("add", {"a": 1, "b": 2.0})
    score = m.score_test(
        model_calls=[model_call],
        model_results=[ok(3.0, model_call)],
        gold_calls=gold_calls,
        gold_outputs=[3],
        result_types=["exact_match"],
        schemas=SCHEMAS,
    )
    assert score == m.TestScore(E=1.0, P=1.0, A=pytest.approx(0.7))


def test_score_test_with_unparseable_reply():
    score = m.score_test(
        model_calls=None,
        model_results=[],
        gold_calls=[ToolCall("now")],
        gold_outputs=["12:00"],
        result_types=["structural_match"],
        schemas=SCHEMAS,
    )
    assert score == m.TestScore(E=0.0, P=0.0, A=0.0)


def test_summarise_means_and_count():
    summary = m.summarise([m.TestScore(1.0, 1.0, 1.0), m.TestScore(0.0, 0.5, 0.6), m.TestScore(0.0, 0.0, 0.2)])
    assert summary == {"E": pytest.approx(1 / 3), "P": pytest.approx(0.5), "A": pytest.approx(0.6), "n": 3.0}


def test_summarise_of_nothing_is_nan_not_zero():
    summary = m.summarise([])
    assert summary["n"] == 0.0
    assert all(math.isnan(summary[key]) for key in ("E", "P", "A"))


def test_pairing_is_optimal_against_brute_force():
    rng = random.Random(7)
    for _ in range(300):
        n_gold, n_model = rng.randint(0, 5), rng.randint(0, 5)
        table = [[rng.choice([0.0, 0.25, 0.5, 1 / 3, 1.0]) for _ in range(n_model)] for _ in range(n_gold)]
        size = max(n_gold, n_model)
        padded = [[table[r][c] if r < n_gold and c < n_model else 0.0 for c in range(size)] for r in range(size)]
        totals = (sum(padded[r][c] for r, c in enumerate(p)) for p in itertools.permutations(range(size)))
        best = max(totals, default=0.0)
        total = m._best_pairing_total(range(n_gold), range(n_model), lambda g, mo, table=table: table[g][mo])
        assert total == pytest.approx(best)


def test_a_gold_argument_missing_from_the_schema_is_not_a_hallucination():
    # exec_multiple_45: the gold book_room call passes price, which its schema does not list.
    schema = {"book_room": {"name": "book_room", "parameters": {"properties": {"room_type": {}, "customer_id": {}}}}}
    gold = ToolCall("book_room", {"room_type": "deluxe", "price": 1000, "customer_id": "123"})
    assert m.ast_accuracy([gold], [gold], schema) == 1.0
    assert m.ast_accuracy([ToolCall("book_room", {"room_type": "deluxe", "ghost": 1})], [gold], schema) < 1.0
