"""The ``otbench`` console script: one name for every command, the same one-line errors."""

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from otbench import console
from otbench.envs.registry import ENVIRONMENTS

ROOT = Path(__file__).resolve().parents[1]


def _run(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        console.main(argv)
    captured = capsys.readouterr()
    return stop.value.code, captured.out, captured.err


def test_the_entry_point_is_declared_for_the_console_function():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"otbench": "otbench.console:main"}


def test_version(capsys):
    code, out, _ = _run(["--version"], capsys)
    assert code == 0 and out.startswith("otbench ") and out.split()[1] == console.package_version()


def test_help_lists_every_command(capsys):
    code, out, _ = _run(["--help"], capsys)
    assert code == 0 and all(name in out for name in console.COMMANDS)
    assert set(console.COMMANDS) == {"optimize", "evaluate", "compare", "reproduce", "export", "ui", "bench", "prepare",
                                     "serve", "results", "serve-docs"}


@pytest.mark.parametrize(("argv", "message"), [
    ([], "no command given"),
    (["train"], "unknown command 'train'"),
    (["optimize", "--p2p-samples", "0"], "expected a number >= 1, got 0"),
    (["evaluate", "--env", "atari"], "unknown environment 'atari'"),
])
def test_bad_input_is_one_line_and_exit_code_2(argv, message, capsys):
    code, _out, err = _run(argv, capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_command_runs_with_the_rest_of_the_arguments(tmp_path, capsys):
    docs = tmp_path / "docs.json"
    docs.write_text(json.dumps({"format": "otbench.docs/1", "meta": {}, "toolsets": {
        "t": [{"name": "function_1", "description": "Adds.", "returns": "", "parameters": None}]}}))
    code, out, err = _run(["export", str(docs), "--format", "openai", "--toolset", "t"], capsys)
    assert code == 0, err
    assert json.loads(out)[0]["function"]["name"] == "function_1"  # --toolset: one tools list


def test_each_environments_help_lists_its_own_settings(capsys):
    shown = {}
    for name in ENVIRONMENTS:
        code, out, _ = _run(["evaluate", "--env", name, "--help"], capsys)
        assert code == 0 and f"{name} options" in out
        shown[name] = " ".join(out.split())
    assert "phase, skill, elo" in shown["chess"] and "domains, domains+all" in shown["browsecomp"]
    assert "phase, skill, elo" not in shown["bfcl"]


def test_help_and_version_answer_without_loading_dspy():
    script = ("import sys; from otbench import console\n"
              "try:\n    console.main(['--version'])\nexcept SystemExit:\n    pass\n"
              "print('dspy' in sys.modules)")
    finished = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120,
                              check=False)
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.split()[-1] == "False"


def test_help_sets_every_commands_summary_apart_from_its_name(capsys):
    code, out, _ = _run(["--help"], capsys)
    listed = [line.strip() for line in out.splitlines() if line.strip().split(" ", 1)[0] in console.COMMANDS]
    assert code == 0 and len(listed) == len(console.COMMANDS)
    assert all("  " in line for line in listed), listed  # "serve-docsan MCP server..." ran name and summary together
