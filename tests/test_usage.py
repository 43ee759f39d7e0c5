"""Per-tool usage counts of offline mode: what the editor is told about each tool, read by code."""

import json

from otbench.core.calls import CallResult, ToolCall
from otbench.core.trajectory import Trajectory
from otbench.modules.editor import EditorExchange
from otbench.optimizers.toolobserver.knobs import IMPROVED, Improvements
from otbench.optimizers.toolobserver.teleprompter import _checked_against_counts
from otbench.optimizers.toolobserver.usage import UsageBook


def _search(name, hosts, value):
    output = [{"url": f"https://{host}/page", "title": "t"} for host in hosts]
    return CallResult(ToolCall(name, {"query": "q"}), True, output=output, value=value)


def _move(name, situation, value):
    return CallResult(ToolCall(name, {"fen": "x"}), True, output="move", situation=situation, value=value)


def _book(steps, names):
    book = UsageBook()
    book.add([Trajectory(task_id="t", toolset="s", question="q", steps=steps)], names)
    return book


def test_sources_name_the_hosts_a_tool_returns_and_outcomes_are_compared_with_the_other_tools():
    book = _book([_search("search_1", ["www.uspto.gov", "uspto.gov", "sec.gov"], 0.0),
                  _search("search_1", ["uspto.gov"], 0.0),
                  _search("search_2", ["en.wikipedia.org"], 1.0),
                  CallResult(ToolCall("search_2", {"query": "q"}), True, output=[], value=0.0),
                  CallResult(ToolCall("search_2", {}), False, error="TypeError: query")],
                 {"search_1", "search_2"})
    first = book.facts("search_1")
    assert first[0] == "called 2 times: 0 failed, 0 returned nothing"
    assert first[1] == "its results came from: uspto.gov (3 of 4), sec.gov (1 of 4)"
    assert first[2] == "average outcome of its calls, higher is better: +0.00 (other tools: +0.50)"
    assert book.facts("search_2")[0] == "called 3 times: 1 failed, 1 returned nothing"
    assert book.facts("search_3") == ["not called yet"]


def _moves(name, situation, values):
    return [_move(name, situation, value) for value in values]


def test_situations_rank_each_tool_against_the_others_by_a_clear_margin_and_need_two_calls():
    opening, endgame = "opening (28 or more pieces)", "endgame (10-15 pieces)"
    steps = (_moves("engine_1", opening, [0.1, 0.2, 0.0]) + _moves("engine_1", endgame, [-3.0, 1.0])
             + _moves("engine_2", opening, [-2.0, -2.5]) + _moves("engine_2", endgame, [0.0, -0.5])
             + [_move("engine_3", endgame, -1.0)])  # one call: says nothing about engine_3 there
    book = _book(steps, {"engine_1", "engine_2", "engine_3"})
    facts = book.facts("engine_1")
    assert f"in the {opening}: 3 calls, average outcome +0.10; clearly the best tool there" in facts
    assert f"in the {endgame}: 2 calls, average outcome -1.00; 1 tool did better there" in facts
    assert f"in the {opening}: 2 calls, average outcome -2.25; clearly the worst tool there" in book.facts("engine_2")
    assert (f"in the {endgame}: 2 calls, average outcome -0.25; the best tool there, not by a clear margin"
            in book.facts("engine_2"))  # -1.00 and -0.25 on two scattered calls each: within noise
    assert not any("endgame" in line for line in book.facts("engine_3"))


def test_replay_repeats_each_working_call_once_on_every_other_tool_with_the_same_arguments():
    def execute(call):
        return CallResult(call, True, output="move", situation="opening", value=-1.0)

    made = [_move("engine_1", "opening", 0.5), _move("engine_2", "opening", 0.0),  # same arguments twice
            CallResult(ToolCall("engine_1", {"fen": "bad"}), False, error="ValueError"),  # failed: not repeated
            _move("ghost", "opening", 0.0)]  # not a tool of the set
    names = {"engine_1", "engine_2", "engine_3"}
    book = _book(made, names)
    repeats = book.replay(execute, made, names)
    assert [(r.call.name, r.call.arguments) for r in repeats] == [("engine_3", {"fen": "x"})]
    assert book.facts("engine_3")[0] == "called 1 times: 0 failed, 0 returned nothing"
    again = UsageBook.from_dict(json.loads(json.dumps(book.to_dict())))  # a resumed run: still repeated once
    assert again.replay(execute, made, names) == [] and again.facts("engine_3") == book.facts("engine_3")


def test_the_book_survives_a_checkpoint_and_ignores_unknown_tools():
    book = _book([_move("engine_1", "opening", 0.5)] * 2 + [_move("ghost", "opening", 9.0)], {"engine_1"})
    again = UsageBook.from_dict(json.loads(json.dumps(book.to_dict())))
    assert again.facts("engine_1") == book.facts("engine_1") and "ghost" not in again.tools
    older = book.to_dict()  # a checkpoint written before the spread of outcomes was kept
    older["engine_1"]["by_situation"] = {"opening": [1.0, 2]}
    assert "in the opening: 2 calls, average outcome +0.50" in UsageBook.from_dict(older).facts("engine_1")


def test_the_cited_sentences_name_sources_and_where_a_tool_clearly_led_or_trailed_on_four_calls_of_each():
    opening, endgame, middlegame = "opening (28 or more pieces)", "endgame (10-15 pieces)", "middlegame (16-27 pieces)"
    steps = (_moves("engine_1", opening, [0.1, 0.2, 0.0, 0.1]) + _moves("engine_2", opening, [-2.0, -2.5, -1.5, -2.0])
             + _moves("engine_1", endgame, [-3.0, -2.0, -3.5, -2.5]) + _moves("engine_2", endgame, [0.0, 0.1, -0.1])
             + _moves("engine_1", middlegame, [0.5, -3.0, 0.0, -2.0])  # ahead on average, but by less than
             + _moves("engine_2", middlegame, [-0.5, -2.5, -1.0, -3.0]))  # the calls' scatter: no claim
    book = _book(steps, {"engine_1", "engine_2"})
    assert book.standing("engine_1") == f"Best of the tools in the {opening}."  # three endgame calls of engine_2
    assert book.standing("engine_2") == f"Worst of the tools in the {opening}." and book.sources("engine_2") == ""
    assert f"in the {endgame}: 3 calls, average outcome +0.00; clearly the best tool there" in book.facts("engine_2")
    searches = _book([_search("search_1", ["uspto.gov", "sec.gov", "uspto.gov"], 0.0)], {"search_1"})
    assert searches.sources("search_1") == "Results seen came from uspto.gov, sec.gov."
    assert searches.standing("search_1") == searches.sources("search_9") == searches.standing("search_9") == ""


def test_prose_that_ties_a_tool_to_a_situation_where_another_did_better_is_dropped():
    opening, endgame, late = "opening (28 or more pieces)", "endgame (10-15 pieces)", "late endgame (9 or fewer pieces)"
    steps = (_moves("engine_1", opening, [0.1, 0.2]) + _moves("engine_2", opening, [-2.0, -2.5])
             + _moves("engine_1", endgame, [-3.0, -2.0]) + _moves("engine_2", endgame, [0.0, 0.1])
             + _moves("engine_1", late, [0.0, 0.1]))  # engine_2 never met a late endgame: no rival there
    book = _book(steps, {"engine_1", "engine_2"})
    prose = ("A chess engine. It is designed for the endgame stage. It shines in the opening! "
             "It handles late-endgame positions well.")
    assert book.without_contradictions("engine_1", prose) == (
        "A chess engine. It shines in the opening! It handles late-endgame positions well.")
    assert book.without_contradictions("engine_2", prose) == (
        "A chess engine. It is designed for the endgame stage. It handles late-endgame positions well.")
    assert book.without_contradictions("engine_9", prose) == prose  # a tool without counts: nothing to check


def test_the_editors_descriptions_are_cut_to_what_the_counts_allow_then_open_with_the_standing():
    opening, endgame = "opening (28 or more pieces)", "endgame (10-15 pieces)"
    steps = (_moves("engine_1", opening, [0.1, 0.2, 0.0, 0.1]) + _moves("engine_2", opening, [-2.0, -2.5, -1.5, -2.0])
             + _moves("engine_1", endgame, [-3.0, -2.0]) + _moves("engine_2", endgame, [0.0, 0.1]))
    book = _book(steps, {"engine_1", "engine_2"})
    proposed = EditorExchange("describe", "prompt", "reply", {"engine_1": "Built for the endgame.",
                                                               "engine_2": "Built for the opening."})
    checked = _checked_against_counts(proposed, book, IMPROVED).updates
    assert checked == {"engine_1": f"Best of the tools in the {opening}.",
                       "engine_2": f"Worst of the tools in the {opening}."}
    dropped_only = Improvements(drop_contradicted=True)  # nothing left and nothing cited: not proposed
    assert _checked_against_counts(proposed, book, dropped_only).updates == {}


def test_with_of_only_that_tools_calls_are_repeated_and_a_call_made_on_a_rival_is_not_repeated_there():
    def execute(call):
        return CallResult(call, True, output="move", situation="opening", value=-1.0)

    made = [_move("engine_1", "opening", 0.5), _move("engine_2", "opening", 0.0)]
    names = {"engine_1", "engine_2", "engine_3"}
    repeats = _book(made, names).replay(execute, made, names, of="engine_1")
    assert [r.call.name for r in repeats] == ["engine_3"]
