"""Adding an optimizer is one module and one registry line: with the toy module's spec registered (the line), its
flags, bounds, sweep space, comparison rows, run definition and labels, docs knob table and API reference entry all
follow, and it runs like any other, with no generic module changed."""

import json

import pytest
from test_compare import BfclLike
from test_optimize_cli import scripted_lms  # noqa: F401  (a fixture)

from otbench import compare, optimize
from otbench.exits import run_main
from otbench.optimizers import knobs as knob_rules
from otbench.optimizers.registry import OPTIMIZERS
from otbench.optimizers.spec import load
from otbench.study import comparing
from otbench.study.sweep import sweepable


@pytest.fixture
def registered(monkeypatch):
    monkeypatch.setitem(OPTIMIZERS, "plain", load("toy_optimizer"))  # the one registry line


class Trial:
    def suggest_int(self, name, low, high):
        return high


def test_its_flags_bounds_and_sweep_space_come_from_its_module(registered, capsys):
    assert "--plain-rounds" in optimize.build_parser(["--optimizer", "plain"]).format_help()
    assert "--plain-rounds" in compare.build_parser().format_help()
    argv = ["--optimizer", "plain", "--plain-rounds", "2"]
    options = optimize.options_from(vars(optimize.build_parser(argv).parse_args(argv)))
    assert options.knobs.rounds == 2 and options.definition().method == "+PLAIN"
    assert dict(options.definition().optimizer.knobs) == {"plain_rounds": 2}
    with pytest.raises(SystemExit) as stop:
        run_main(optimize.main, ["--optimizer", "plain", "--plain-rounds", "0"])
    assert stop.value.code == 2 and "expected a number >= 1, got 0" in capsys.readouterr().err
    assert "plain" in sweepable()
    assert knob_rules.search_space(OPTIMIZERS["plain"].knobs, Trial(), "online") == {"plain_rounds": 3}


def test_it_is_a_row_of_every_comparison_and_its_docs_follow(registered):
    options = compare.options_from(vars(compare.build_parser().parse_args(["--optimizers", "plain,toolobserver"])))
    assert [plan.label for plan in comparing.plan_rows(options, BfclLike())][2:] == ["+PLAIN", "+TO (paper)", "+TO"]
    import importlib.util
    from pathlib import Path

    hooks_file = Path(__file__).resolve().parents[1] / "scripts" / "mkdocs_hooks.py"
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", hooks_file)
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    assert "`--plain-rounds` | 1 | 1 | 1-3 | rounds of plain naming |" in hooks.on_page_markdown("<!-- knobs: plain -->")
    assert "::: toy_optimizer.PlainNames" in hooks.on_page_markdown("<!-- optimizers -->")


def test_it_runs_end_to_end_tracked_like_the_others(registered, scripted_lms, tmp_path, capsys):  # noqa: F811
    with pytest.raises(SystemExit) as stop:
        run_main(optimize.main, ["--optimizer", "plain", "--plain-rounds", "2", "--limit", "2", "--json", "--quiet",
                                 "--out", str(tmp_path)])
    assert stop.value.code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["optimizer"] == "plain" and result["steps"] == 2 and result["n"] == 2
