"""``results pair``: ledger entries compared task by task, a pair at a time and pooled over the pairs, with the
interval and test every table gives a difference."""

import json
from pathlib import Path

import pytest

from otbench import results
from otbench.errors import ConfigError
from otbench.evals.outcomes import Mean, difference
from otbench.exits import run_main
from otbench.run import ledger
from otbench.study import paired

COMMITTED = Path(__file__).resolve().parents[1] / "results"
NAMES_ONLY_BASE, NAMES_PARAMS_BASE, GOLD = "dd08aee4", "5ca5ac38", "bff58e1c"  # BFCL entries on the whole test split


def _pair(reference: str, row: str) -> paired.Pair:
    return paired.pair_of(*(ledger.starting_with(key, COMMITTED)[0] for key in (reference, row)))


def test_pooled_pairs_are_one_sample_of_every_pairs_tasks():
    first, second = _pair(NAMES_ONLY_BASE, GOLD), _pair(NAMES_PARAMS_BASE, GOLD)
    one, two = paired.figures(first, "E"), paired.figures(second, "E")
    both = paired.figures(paired.pooled([first, second]), "E")
    # the same task ids in both pairs stay two tasks each, kept apart by their pair
    assert both.tasks == one.tasks + two.tasks and (both.wins, both.losses) == (one.wins + two.wins,
                                                                                   one.losses + two.losses)
    weighted = (one.difference.value * one.tasks + two.difference.value * two.tasks) / both.tasks
    assert both.difference.value == pytest.approx(weighted)
    assert one.difference.value == pytest.approx(difference(first.row, first.reference, Mean("E")).value)
    assert both.difference.low < both.difference.value < both.difference.high
    assert paired.pooled_lines([first]) == []  # one pair: nothing to pool
    assert [line.where for line in paired.pooled_lines([first, second])] == ["pooled"]  # one environment: one pool


def test_pairs_of_several_environments_pool_each_environment_and_all():
    mcp = [entry for entry in ledger.scan(COMMITTED).entries if entry.definition.env == "mcp"
           and entry.definition.command == "evaluate" and entry.definition.setting == "base"]
    time = [entry for entry in mcp if dict(entry.definition.environment).get("mcp_server") == "time"]
    bfcl = _pair(NAMES_ONLY_BASE, GOLD)
    same = paired.pair_of(time[0], time[0])  # an entry against itself: every difference 0
    lines = paired.pooled_lines([bfcl, same, same])
    assert [line.where for line in lines] == ["mcp/time", "pooled"]
    assert paired.figures(lines[0], "score").tasks == 2 * paired.figures(same, "score").tasks


def test_the_command_prints_each_pair_and_the_pooled_line_or_their_data(capsys):
    assert results.main(["--results", str(COMMITTED), "pair", f"{NAMES_ONLY_BASE}:{GOLD}",
                         f"{NAMES_PARAMS_BASE}:{GOLD}", "--metric", "E"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].startswith(f"{NAMES_ONLY_BASE}:{GOLD}") and lines[4].startswith("pooled")
    assert "+0.193 [0.127, 0.267]" in lines[2]  # what the comparison table of the same entries shows
    assert results.main(["--results", str(COMMITTED), "pair", f"{NAMES_ONLY_BASE}:{GOLD}", "--metric", "E",
                         "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [figures["pair"] for figures in shown["pairs"]] == [f"{NAMES_ONLY_BASE}:{GOLD}"]  # one pair: no pool
    assert shown["pairs"][0]["difference"] == 0.193 and shown["pairs"][0]["test"] == "exact McNemar"


@pytest.mark.parametrize(("arguments", "said"), [
    (["pair", NAMES_ONLY_BASE], "give two entries' keys as REFERENCE:ROW"),
    (["pair", f"{NAMES_ONLY_BASE}:{GOLD}", "--metric", "accuracy"], "no task has a 'accuracy' score; choose"),
    (["pair", f"{NAMES_ONLY_BASE}:ffffffff"], "no entry's key begins with 'ffffffff'"),
])
def test_a_wrong_pair_is_refused_on_one_line(arguments, said, capsys):
    with pytest.raises(SystemExit) as stopped:
        run_main(results.main, ["--results", str(COMMITTED), *arguments])
    assert stopped.value.code != 0
    error = capsys.readouterr().err.strip()
    assert said in error and "\n" not in error


def test_entries_of_no_common_task_do_not_pair():
    mcp = [entry for entry in ledger.scan(COMMITTED).entries if entry.definition.env == "mcp"
           and entry.definition.command == "evaluate"]
    servers = {dict(entry.definition.environment).get("mcp_server"): entry for entry in mcp}
    with pytest.raises(ConfigError, match="scored on no common task"):
        paired.pair_of(servers["time"], servers["sqlite"])
