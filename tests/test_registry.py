"""Optimizers declared once: flags, bounds, sweep spaces and comparison rows all come from the registry."""

import pytest
from toy_env import ToyEnvironment

from otbench import compare, optimize
from otbench.exits import run_main
from otbench.optimizers import knobs
from otbench.optimizers.play2prompt import Play2Prompt, Play2PromptKnobs
from otbench.optimizers.registry import OPTIMIZERS
from otbench.optimizers.toolobserver.teleprompter import ToolObserver
from otbench.study import comparing
from otbench.study.sweep import sweepable


class RecordingTrial:
    """An optuna trial stand-in that answers each suggestion with its lower bound and keeps the calls."""

    def __init__(self):
        self.calls = []

    def suggest_int(self, name, low, high):
        self.calls.append((name, low, high))
        return low


@pytest.mark.parametrize(("argv", "message"), [
    (["--p2p-retries", "-1"], "argument --p2p-retries: expected a number >= 0, got -1"),
    (["--p2p-samples", "0"], "argument --p2p-samples: expected a number >= 1, got 0"),
    (["--batch-size", "0"], "argument --batch-size: expected a number >= 1, got 0"),
    (["--iterations", "two"], "argument --iterations: expected a whole number, got 'two'"),
])
def test_a_knob_out_of_bounds_is_one_line_and_exit_2_before_anything_loads(argv, message, capsys):
    with pytest.raises(SystemExit) as stop:
        run_main(optimize.main, ["--optimizer", "play2prompt", *argv])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_every_knob_is_a_flag_of_optimize_and_compare_with_its_declared_default():
    for name, spec in OPTIMIZERS.items():
        argv = ["--optimizer", name]
        for parser in (optimize.build_parser(argv), compare.build_parser()):
            args = parser.parse_args(argv if parser.prog.endswith("optimize") else [])
            for field, _, default in knobs.declared(spec.knobs):
                assert getattr(args, knobs.dest(spec.knobs, field)) == default


def test_sweep_spaces_come_from_the_declared_ranges():
    assert sweepable() == ["toolobserver", "play2prompt", "gepa"]
    spaces = {}
    for name, mode in (("toolobserver", "online"), ("toolobserver", "offline"), ("play2prompt", "online")):
        trial = RecordingTrial()
        knobs.search_space(OPTIMIZERS[name].knobs, trial, mode)
        spaces[name, mode] = trial.calls
    assert spaces["toolobserver", "online"] == [("iterations", 1, 10)]
    assert spaces["toolobserver", "offline"] == [("iterations", 1, 5), ("batch_size", 5, 20)]
    assert spaces["play2prompt", "online"] == [("p2p_samples", 1, 4), ("p2p_retries", 0, 3), ("p2p_top_k", 1, 4),
                                               ("p2p_beam_width", 1, 3), ("p2p_expansions", 1, 3),
                                               ("p2p_iterations", 1, 3)]


def test_library_users_get_the_same_bounds_as_a_value_error():
    env = ToyEnvironment(1)
    with pytest.raises(ValueError, match="retries must be at least 0, got -1"):
        Play2Prompt(env=env, retries=-1)
    with pytest.raises(ValueError, match="batch_size must be at least 1, got 0"):
        ToolObserver(env=env, batch_size=0)
    assert Play2Prompt(env=env).retries == Play2PromptKnobs.retries  # defaults declared once


def test_comparison_rows_are_the_registrys_labels_and_variants():
    class Env:
        name, setting, learning = "bfcl", "names_only", "online"

        def tasks(self, split="test"):
            return [None] * 150

    options = compare.options_from(vars(compare.build_parser().parse_args(["--iterations", "4"])))
    plans = comparing.plan_rows(options, Env())
    assert [plan.label for plan in plans] == ["base", "gold", "+TO (paper)", "+TO", "+P2P", "+ET", "+GEPA"]
    assert all(dict(plan.definition.optimizer.knobs)["iterations"] == 4 for plan in plans[2:4])  # its own rows only
    assert all("iterations" not in dict(plan.definition.optimizer.knobs) for plan in plans[4:])
