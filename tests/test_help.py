"""``--help`` of every command is quick: nothing heavy (DSPy, litellm, MLflow, pandas) is imported
before the options are parsed, and the description reads as plain text, without docstring markup."""

import subprocess
import sys

import pytest

COMMANDS = ["optimize", "evaluate", "compare", "export", "serve", "prepare", "bench", "ui", "ui_check"]
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
def test_help_loads_nothing_heavy_and_shows_no_markup(command):
    result = subprocess.run([sys.executable, "-c", _PROBE.format(command=command, heavy=HEAVY)],
                            capture_output=True, text=True, check=True)
    loaded, help_text = result.stdout.split("\n", 1)
    assert loaded == "[]", f"{command} --help imported {loaded}"
    description = help_text.split("\n\n")[1]
    assert description.startswith(f"python -m otbench.{command}") and "``" not in description and ":class:" not in description
