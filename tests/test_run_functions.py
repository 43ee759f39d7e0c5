"""Each command is a ``run(options)`` over typed options returning a typed result; the command line only fills
the options, and library errors are exceptions by kind that only the command line turns into one line."""

import dataclasses
import json

import pytest
from test_optimize_cli import scripted_lms  # noqa: F401  (a fixture)

from otbench import evaluate, mlflow_store, optimize
from otbench.envs.registry import EnvironmentOptions
from otbench.errors import ConfigError, DataError, OtbenchError, RunError, SetupError
from otbench.exits import run_main
from otbench.optimizers.play2prompt import Play2PromptKnobs
from otbench.optimizers.toolobserver.knobs import Improvements
from otbench.optimizers.toolobserver.teleprompter import ToolObserverKnobs
from otbench.run import checkpoints, optimization


def test_optimize_run_returns_a_frozen_result_and_the_command_prints_the_same(scripted_lms, tmp_path, capsys):  # noqa: F811
    result = optimize.run(optimize.OptimizeOptions(limit=2, knobs=ToolObserverKnobs(iterations=1), out=tmp_path,
                                                   progress=False))
    assert isinstance(result, optimization.OptimizeResult) and result.n == 2 and set(result.after) == {"E", "P", "A"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.n = 3
    with pytest.raises(SystemExit):
        run_main(optimize.main, ["--limit", "2", "--iterations", "1", "--json", "--quiet", "--out", str(tmp_path)])
    printed = json.loads(capsys.readouterr().out)
    same = ("optimizer", "env", "setting", "mode", "n", "before", "after", "test", "mean_editor_iterations", "steps")
    assert {key: printed[key] for key in same} == {key: result.to_dict()[key] for key in same}
    assert printed["tokens_by_phase"]["all"]["total_tokens"] == result.tokens_by_phase["all"]["total_tokens"]


def test_the_command_line_and_the_library_make_the_same_definition():
    argv = ["--optimizer", "play2prompt", "--p2p-samples", "2", "--limit", "4", "--quiet", "--probe"]
    from_cli = optimize.options_from(vars(optimize.build_parser(argv).parse_args(argv)))
    from_code = optimize.OptimizeOptions(optimizer="play2prompt", knobs=Play2PromptKnobs(samples=2, probe=True), limit=4,
                                         progress=False)
    assert from_cli.definition() == from_code.definition() and from_cli.settings() == from_code.settings()


def test_toolobservers_variant_and_switches_are_its_knobs_on_the_command_line_and_in_code():
    argv = ["--variant", "paper", "--facts", "--limit", "3"]
    from_cli = optimize.options_from(vars(optimize.build_parser(argv).parse_args(argv)))
    from_code = optimize.OptimizeOptions(knobs=ToolObserverKnobs(variant="paper", switches={"facts": True}), limit=3)
    assert from_cli.definition() == from_code.definition()
    assert from_cli.definition().method == "+TO (paper) --facts"


def test_a_checkpoint_from_before_definitions_resumes_the_run_its_options_define(monkeypatch):
    saved = {"optimizer": "toolobserver", "env": "chess", "setting": "names_only", "toolset": "skill", "limit": 4,
             "seed": 2, "test_limit": 3, "mode": "offline", "variant": "improved", "iterations": None, "batch_size": 10,
             "lm": "embedded", "embedded_model": "qwen-1.5b", "temperature": 0.0,
             **dict.fromkeys(Improvements.names())}  # how chess runs were saved before (every improvement, unset)
    monkeypatch.setattr(checkpoints, "load_checkpoint", lambda run_id: {"args": saved, "docs": {}})
    monkeypatch.setattr(checkpoints, "resumable_checkpoint", lambda run_id: {"args": saved, "docs": {}})
    mlflow_store.configure()
    defined, checkpoint = checkpoints.resumable("0123")
    assert defined.setting == "skill" and defined.sample.limit == 4 and defined.sample.seed == 2
    assert defined.method == "+TO" and checkpoint["args"] is saved


@pytest.mark.parametrize("run, options, error, message", [
    (optimize.run, optimize.OptimizeOptions(optimizer="magic"), ConfigError, "unknown optimizer 'magic'"),
    (optimize.run, optimize.OptimizeOptions(knobs=ToolObserverKnobs(variant="best")), ConfigError,
     "unknown variant 'best'"),
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
