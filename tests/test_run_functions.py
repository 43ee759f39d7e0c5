"""Each command is a ``run(options)`` over typed options returning a typed result; the command line only fills
the options, and library errors are exceptions by kind that only the command line turns into one line."""

import dataclasses
import json

import pytest
from test_optimize_cli import scripted_lms  # noqa: F401  (a fixture)

from otbench import evaluate, optimize
from otbench.cli import run_main
from otbench.envs.registry import EnvironmentOptions
from otbench.errors import ConfigError, DataError, OtbenchError, RunError, SetupError
from otbench.optimizers.gepa import GEPAKnobs
from otbench.optimizers.play2prompt import Play2PromptKnobs
from otbench.optimizers.toolobserver import ToolObserverKnobs
from otbench.run import tracking
from otbench.run.options import definition


def test_optimize_run_returns_a_frozen_result_and_the_command_prints_the_same(scripted_lms, tmp_path, capsys):  # noqa: F811
    result = optimize.run(optimize.OptimizeOptions(limit=2, knobs=ToolObserverKnobs(iterations=1), out=tmp_path,
                                                   progress=False))
    assert isinstance(result, optimize.OptimizeResult) and result.n == 2 and set(result.after) == {"E", "P", "A"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.n = 3
    with pytest.raises(SystemExit):
        run_main(optimize.main, ["--limit", "2", "--iterations", "1", "--json", "--quiet", "--out", str(tmp_path)])
    printed = json.loads(capsys.readouterr().out)
    same = ("optimizer", "env", "setting", "mode", "n", "before", "after", "test", "mean_editor_iterations", "steps")
    assert {key: printed[key] for key in same} == {key: result.to_dict()[key] for key in same}
    assert printed["tokens_by_phase"]["all"]["total_tokens"] == result.tokens_by_phase["all"]["total_tokens"]


def test_the_command_line_and_the_library_fill_the_same_options():
    argv = ["--optimizer", "play2prompt", "--p2p-samples", "2", "--limit", "4", "--quiet", "--probe"]
    from_cli = optimize.options_from(vars(optimize.build_parser().parse_args(argv)))
    from_code = optimize.OptimizeOptions(optimizer="play2prompt", knobs=Play2PromptKnobs(samples=2), limit=4,
                                         switches={"probe": True}, progress=False)
    assert optimize.prepare(from_cli)[0] == optimize.prepare(from_code)[0]


def test_a_run_definition_round_trips_through_its_command_line_names():
    options = optimize.OptimizeOptions(optimizer="gepa", environment=EnvironmentOptions(setting="names_params"),
                                       limit=3, seed=7, variant="paper", switches={"facts": False}, knobs=GEPAKnobs())
    again = optimize.options_from(options.values())
    assert again == options and definition(again.values())["gepa_budget"] == 8


def test_a_checkpoint_from_before_setting_named_chess_settings_resumes_under_its_setting(monkeypatch):
    saved = definition(optimize.OptimizeOptions(environment=EnvironmentOptions(env="chess")).values())
    saved |= {"setting": "names_only", "toolset": "skill"}  # how chess runs were saved before
    monkeypatch.setattr(tracking, "configure", lambda *args, **kwargs: "")
    monkeypatch.setattr(tracking, "load_checkpoint", lambda run_id: {"args": saved, "docs": {}})
    options, checkpoint = optimize.prepare(optimize.OptimizeOptions(resume="0123", num_threads=2))
    assert options.environment.setting == "skill" and options.num_threads == 2 and checkpoint["args"] is saved


@pytest.mark.parametrize("run, options, error, message", [
    (optimize.run, optimize.OptimizeOptions(optimizer="magic"), ConfigError, "unknown optimizer 'magic'"),
    (optimize.run, optimize.OptimizeOptions(knobs=Play2PromptKnobs()), ConfigError, "takes ToolObserverKnobs"),
    (optimize.run, optimize.OptimizeOptions(knobs=ToolObserverKnobs(batch_size=0)), ConfigError, "batch_size"),
    (optimize.run, optimize.OptimizeOptions(environment=EnvironmentOptions(setting="names_all")), ConfigError,
     "unknown setting 'names_all'"),
    (evaluate.run, evaluate.EvaluateOptions(agent="robot"), ConfigError, "unknown agent 'robot'"),
    (evaluate.run, evaluate.EvaluateOptions(environment=EnvironmentOptions(own={"turbo": True})), ConfigError,
     "bfcl has no option 'turbo'"),
])
def test_library_code_raises_exceptions_by_kind_and_never_exits(run, options, error, message):
    with pytest.raises(error, match=message):
        run(options)


def test_every_kind_is_an_otbench_error_and_bad_arguments_are_value_errors_too():
    assert all(issubclass(kind, OtbenchError) for kind in (ConfigError, DataError, SetupError, RunError))
    assert issubclass(ConfigError, ValueError)
