"""``--help`` reads as plain text (the description without its docstring markup), and the commands that
need no optimizer or environment answer it without loading anything heavy (DSPy, litellm, MLflow)."""

import subprocess
import sys

import pytest

COMMANDS = ["optimize", "evaluate", "compare", "export", "serve", "prepare", "bench", "ui", "ui_check"]
LIGHT = {"export", "serve", "prepare", "ui", "ui_check"}
HEAVY = ("dspy", "litellm", "mlflow", "pandas", "torch")

_PROBE = """
import contextlib, io, runpy, sys
out = io.StringIO()
sys.argv = ["-m", "--help"]
with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
    runpy.run_module("otbench.{command}", run_name="__main__")
print(sorted(m for m in {heavy} if m in sys.modules))
print(out.getvalue())
"""


@pytest.mark.parametrize("command", COMMANDS)
def test_help_shows_no_markup_and_light_commands_load_nothing_heavy(command):
    result = subprocess.run([sys.executable, "-c", _PROBE.format(command=command, heavy=HEAVY)],
                            capture_output=True, text=True, check=True)
    loaded, help_text = result.stdout.split("\n", 1)
    if command in LIGHT:
        assert loaded == "[]", f"{command} --help imported {loaded}"
    description = help_text.split("\n\n")[1]
    assert description.startswith(f"python -m otbench.{command}")
    assert "``" not in description and ":class:" not in description
