"""Wild's metrics on hand-built dialogues: right tasks, one of each error class, paths, turns, faults."""

import pytest

from otbench.core.calls import CallResult, ToolCall
from otbench.envs.wild.metrics import (
    ERROR_CLASSES,
    METRIC_RULES,
    ExpectedCall,
    ExpectedTask,
    TurnRecord,
    breakdown,
    resolve,
    score_dialogue,
    summarise,
    values_equal,
)
from otbench.evals.outcomes import Outcomes, TaskOutcome, interval

GCD = ExpectedCall("function_1", {"a": 12, "b": 18}, 6)
COORDS = ExpectedCall("function_2", {"city": "Paris"}, {"lat": 48.9, "lon": 2.4})
WEATHER = ExpectedCall("function_3", {"coordinates": [{"$ref": 0, "path": ["lat"]}, {"$ref": 0, "path": ["lon"]}]},
                       "sunny")
SORT = ExpectedCall("function_4", {"array": [3, 1]}, [1, 3], defaults={"reverse": False})


def single(call=GCD, intention="none", turn=0):
    return ExpectedTask("single", intention, (turn,), (call,))


def series(turn=0):
    return ExpectedTask("series", "coreference", (turn,), (COORDS, WEATHER))


def parallel(turn=0):
    return ExpectedTask("parallel", "partial_information", (turn,), (GCD, SORT))


def result(name, output=None, *, ok=True, injected=None, **arguments):
    return CallResult(ToolCall(name, arguments), ok, output=output, error=None if ok else "TypeError: boom",
                      injected=injected)


def turn(*replies, ending="reply"):
    return TurnRecord(tuple(tuple(reply) for reply in replies), ending)


def one(task, record):
    score = score_dialogue([task], [record], switches=0)
    return score.tasks[0], score


def test_the_gold_calls_in_as_few_replies_as_possible_are_right_and_optimal():
    outcome, score = one(single(), turn([result("function_1", 6, a=12, b=18)]))
    assert outcome.correct and outcome.error is None and outcome.optimal
    assert score.selection == (True,) and score.correctness == (1.0,) and score.matched == {(0, 0, 0)}


def test_equal_values_count_as_equal():
    assert values_equal(48.9, "48.90") and values_equal("AAPL ", "aapl") and values_equal([1, 2.0], (1, 2))
    assert values_equal(1628.89, 1628.894626777442) and not values_equal(0.05, 5) and not values_equal("1", [1])
    outcome, _ = one(single(), turn([result("function_1", 6, a=18, b=12)]))  # other arguments, the same result
    assert outcome.correct
    outcome, _ = one(single(SORT), turn([result("function_4", [1, 3], array=[3, 1], reverse=False)]))  # the default
    assert outcome.correct


def test_a_value_read_from_an_output_follows_what_the_agent_was_shown():
    task = series()
    shown = {"lat": 10.0, "lon": 20.0}  # an injected corruption changed the first output
    record = turn([result("function_2", shown, injected="corrupt", city="Paris")],
                  [result("function_3", "rain", coordinates=[10.0, 20.0])])
    outcome, _ = one(task, record)
    assert outcome.correct and outcome.optimal
    assert resolve(WEATHER.arguments, [COORDS.output]) == {"coordinates": [48.9, 2.4]}


def test_paths_that_take_more_replies_than_needed_or_guess_a_result_are_not_optimal():
    outcome, _ = one(parallel(), turn([result("function_1", 6, a=12, b=18)], [result("function_4", [1, 3], array=[3, 1])]))
    assert outcome.correct and not outcome.optimal  # independent calls in two replies
    outcome, _ = one(parallel(), turn([result("function_1", 6, a=12, b=18), result("function_4", [1, 3], array=[3, 1])]))
    assert outcome.correct and outcome.optimal
    guessed = turn([result("function_3", "sunny", coordinates=[48.9, 2.4])], [result("function_2", COORDS.output, city="Paris")])
    outcome, _ = one(series(), guessed)
    assert outcome.correct and not outcome.optimal  # the weather before the coordinates it needs


@pytest.mark.parametrize("task, record, error", [
    (single(), turn(ending="reply"), "refused"),                                   # answered without a call
    (single(), turn(ending="none"), "refused"),                                    # no usable reply
    (single(), turn(ending="ask"), "asked_instead"),
    (ExpectedTask("chitchat", "none", (0,)), turn(ending="ask"), "asked_instead"),
    (single(), turn([result("function_9", 1, a=12, b=18)]), "wrong_tool"),
    (single(), turn([result("function_1", ok=False, a=12)]), "missing_argument"),
    (single(), turn([result("function_1", 3, a=12, b=21)]), "wrong_value"),
    (single(ExpectedCall("function_5", {"zipcode": "02108"}, "Boston")),  # equal as numbers, but the call failed
     turn([result("function_5", ok=False, zipcode=2108)]), "wrong_value"),
    (series(), turn([result("function_2", COORDS.output, city="Paris")]), "incomplete"),
    (single(), turn([result("function_1", 6, a=12, b=18)], [result("function_1", 6, a=12, b=18)]), "redundant_call"),
    (single(), turn([result("function_1", ok=False)], [result("function_1", 6, a=12, b=18)]), "missing_argument"),
    (single(), turn([result("function_8", ok=False, a=12)], [result("function_1", 6, a=12, b=18)]), "wrong_tool"),
    (single(), turn([result("function_1", 6, a=12, b=18), result("function_4", [1], array=[1])]), "redundant_call"),
    (ExpectedTask("chitchat", "none", (0,)), turn([result("function_1", 6, a=12, b=18)]), "redundant_call"),
])
def test_each_failed_task_gets_its_error_class(task, record, error):
    outcome, _ = one(task, record)
    assert not outcome.correct and outcome.error == error and error in ERROR_CLASSES


def test_a_clarification_is_right_when_the_agent_asks_then_acts_on_the_answer():
    task = ExpectedTask("clarification", "none", (0, 1), (GCD,))
    right = score_dialogue([task], [turn(ending="ask"), turn([result("function_1", 6, a=12, b=18)])], 0)
    assert right.tasks[0].correct and right.tasks[0].optimal and right.selection == (True, True)
    guessed = score_dialogue([task], [turn([result("function_1", 2, a=4, b=6)]),
                                      turn([result("function_1", 6, a=12, b=18)])], 0)
    assert guessed.tasks[0].error == "acted_instead" and guessed.selection == (False, True)
    answered = score_dialogue([task], [turn(ending="reply"), turn([result("function_1", 6, a=12, b=18)])], 0)
    assert answered.tasks[0].error == "acted_instead"
    asked_then_wrong = score_dialogue([task], [turn(ending="ask"), turn([result("function_1", 3, a=12, b=21)])], 0)
    assert asked_then_wrong.tasks[0].error == "wrong_value"


def test_injected_transient_failures_are_not_the_agents_and_a_retry_counts():
    timed_out = result("function_1", ok=False, injected="timeout", a=12, b=18)
    outcome, score = one(single(), turn([timed_out], [result("function_1", 6, a=12, b=18)]))
    assert outcome.correct and outcome.optimal and score.correctness == (1.0,)
    outcome, _ = one(single(), turn([timed_out], ending="reply"))
    assert outcome.error == "incomplete"


def test_turn_metrics_compare_the_tools_called_with_the_tools_needed():
    tasks = [single(turn=0), ExpectedTask("chitchat", "none", (1,)), parallel(turn=2)]
    turns = [turn([result("function_1", 6, a=12, b=18), result("function_9", 0)]),  # one right, one extra
             turn(ending="reply"),
             turn([result("function_1", 6, a=12, b=18)])]  # one of the two needed
    score = score_dialogue(tasks, turns, switches=2)
    assert score.selection == (False, True, False)
    assert score.correctness == (0.5, 1.0, 0.5)
    metrics = score.metrics()
    assert metrics["task_accuracy"] == pytest.approx(1 / 3) and metrics["session_accuracy"] == 0.0
    assert metrics["task2.correct"] == 1.0 and metrics["task1.error"] == ERROR_CLASSES.index("redundant_call")
    assert "task 1 (single, none): failed, redundant call" in score.feedback()


def test_summaries_count_every_task_once_and_break_errors_down():
    right = score_dialogue([single(), single(turn=1, intention="coreference")],
                           [turn([result("function_1", 6, a=12, b=18)]), turn([result("function_1", 6, a=12, b=18)])],
                           switches=0).metrics()
    wrong = score_dialogue([single(), series(turn=1)],
                           [turn([result("function_1", 6, a=12, b=18)]), turn(ending="ask")], switches=1).metrics()
    summary = summarise([right, wrong])
    assert summary["task_accuracy"] == 0.5 + 0.25 and summary["session_accuracy"] == 0.5
    assert summary["errors/asked_instead"] == 1.0 and summary["errors/wrong_tool"] == 0.0
    assert summary["task_accuracy/intention/coreference"] == 0.5
    assert summary["task_accuracy/switches/0"] == 1.0 and summary["session_accuracy/switches/1"] == 0.0
    outcomes = Outcomes(tuple(TaskOutcome(str(i), 0, m) for i, m in enumerate([right, wrong])))
    task_accuracy = interval(outcomes, METRIC_RULES["task_accuracy"])  # tasks clustered by their dialogue
    assert task_accuracy.value == 0.75 and task_accuracy.low < 0.75 < task_accuracy.high
    rows = breakdown([right, wrong])
    assert rows[0] == {"group": "all", "value": "-", "tasks": 4, "task_accuracy": 0.75, "session_accuracy": 0.5,
                       **dict.fromkeys(ERROR_CLASSES, 0), "asked_instead": 1}
    assert {(row["group"], row["value"]) for row in rows} >= {("intention", "coreference"), ("switches", "1"),
                                                             ("kind", "series")}
