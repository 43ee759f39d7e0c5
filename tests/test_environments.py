"""Every environment declares what the commands read of it (:class:`~otbench.envs.registry.OptionsModule`), and adding
one is its module and one registry line: with ``tiny_environment`` registered (the line), its options are shown,
checked and refused like any environment's, and it is evaluated and optimized end to end through the commands."""

import importlib
import inspect
import json
import sys
import types
from contextlib import contextmanager

import mlflow
import pytest
from scripted_lm import prompt_text, scripted_lm
from test_optimize_cli import any_role_reply
from toy_env import docs_aware_agent_reply

from otbench import evaluate, optimize
from otbench.envs import registry
from otbench.envs.base import LEARNING_MODES
from otbench.envs.registry import ENVIRONMENTS, OptionsModule
from otbench.exits import run_main
from otbench.run import evaluation, optimization


@pytest.fixture
def tiny(monkeypatch):
    monkeypatch.setitem(ENVIRONMENTS, "tiny", "tiny_environment")  # the one registry line


def _run(command, argv, capsys):
    with pytest.raises(SystemExit) as stop:
        run_main(command.main, argv)
    captured = capsys.readouterr()
    return stop.value.code, captured.out, captured.err


@pytest.mark.parametrize("name", [*ENVIRONMENTS, "tiny"])
def test_every_environment_declares_what_the_commands_read(name, tiny):
    module = importlib.import_module(ENVIRONMENTS[name])
    assert isinstance(module, OptionsModule)
    assert module.LEARNING in LEARNING_MODES and isinstance(module.DEFAULT_SETTING, str) and module.settings()
    inspect.signature(module.add_arguments).bind(None)
    inspect.signature(module.check).bind(None)
    inspect.signature(module.build).bind(None, workers=1)


def test_a_module_missing_part_of_the_contract_is_named(monkeypatch):
    unfinished = types.ModuleType("unfinished_options")  # everything but LEARNING
    unfinished.DEFAULT_SETTING = "plain"
    unfinished.add_arguments = unfinished.check = unfinished.build = lambda *args, **kwargs: None
    unfinished.settings = lambda: "plain"
    monkeypatch.setitem(sys.modules, "unfinished_options", unfinished)
    monkeypatch.setitem(ENVIRONMENTS, "unfinished", "unfinished_options")
    with pytest.raises(TypeError, match="unfinished_options lacks a member"):
        registry.learning_of("unfinished")


def test_its_options_are_shown_and_checked_like_any_environments(tiny, capsys):
    shown = " ".join(optimize.build_parser(["--env", "tiny"]).format_help().split())
    assert "tiny options" in shown and "--tiny-tasks" in shown and "names_params, names_only" in shown
    assert "tiny" in optimize.build_parser().format_help()
    for argv, message in [(["--tiny-tasks", "0"], "argument --tiny-tasks: expected a number >= 1, got 0"),
                          (["--setting", "blank"], "unknown tiny setting 'blank'"),
                          (["--max-moves", "5"], "--max-moves is an option of chess (--env chess), not of tiny")]:
        code, _, err = _run(evaluate, ["--env", "tiny", *argv], capsys)
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert registry.learning_of("tiny") == "offline"


def _adds_editor(messages):
    """Documents function_1 truly, whichever way the editor is asked."""
    if "Tool: " in prompt_text(messages):
        return json.dumps({"description": "Adds a and b."})
    return json.dumps({"updates": [{"name": "function_1", "description": "Adds a and b."}]})


@pytest.fixture
def scripted(monkeypatch):
    replies = {"agent": docs_aware_agent_reply, "editor": _adds_editor, "exploration": any_role_reply}

    @contextmanager
    def open_scripted(options, ledger, phases=("agent",)):
        yield {phase: scripted_lm(replies[phase], ledger=ledger, phase=phase) for phase in phases}

    monkeypatch.setattr(evaluation, "open_lms", open_scripted)
    monkeypatch.setattr(optimization, "open_lms", open_scripted)


def test_it_is_evaluated_and_optimized_end_to_end(tiny, scripted, tmp_path, capsys):
    code, out, err = _run(evaluate, ["--env", "tiny", "--agent", "oracle", "--json", "--quiet"], capsys)
    assert code == 0, err
    summary = json.loads(out)
    assert summary["E"] == 1.0 and summary["n"] == 4
    assert mlflow.get_run(summary["run_id"]).data.tags["env"] == "tiny"
    code, out, err = _run(optimize, ["--env", "tiny", "--tiny-tasks", "3", "--optimizer", "toolobserver", "--json",
                                     "--quiet", "--out", str(tmp_path)], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert (result["before"]["E"], result["after"]["E"]) == (0.0, 1.0)
