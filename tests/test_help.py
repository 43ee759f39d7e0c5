"""``--help`` reads as plain text (the description without its docstring markup), and every command answers
it without loading anything heavy (DSPy, litellm, MLflow): building a parser reads declarations only
(optimizer knobs, environments' tool sets), what runs a command is imported when it runs."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ["optimize", "evaluate", "compare", "reproduce", "export", "serve", "prepare", "bench", "ui", "ui_check",
            "serve_docs"]
HEAVY = ("dspy", "litellm", "mlflow", "pandas", "torch", "optuna")

_PROBE = """
import contextlib, io, runpy, sys
out = io.StringIO()
sys.argv = {argv!r}
with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
    runpy.run_module({module!r}, run_name="__main__")
print(sorted(m for m in {heavy} if m in sys.modules))
print(out.getvalue())
"""


def _help(module: str, argv: list[str]) -> tuple[str, str]:
    """What ``python -m module *argv`` printed, and which heavy modules it had imported by then."""
    result = subprocess.run([sys.executable, "-c", _PROBE.format(module=module, argv=["-m", *argv], heavy=HEAVY)],
                            capture_output=True, text=True, check=True, cwd=ROOT, timeout=120)
    loaded, help_text = result.stdout.split("\n", 1)
    return loaded, help_text


@pytest.mark.parametrize("command", COMMANDS)
def test_help_shows_no_markup_and_loads_nothing_heavy(command):
    loaded, help_text = _help(f"otbench.{command}", ["--help"])
    assert loaded == "[]", f"{command} --help imported {loaded}"
    description = help_text.split("\n\n")[1]
    assert description.startswith(f"python -m otbench.{command}")
    assert "``" not in description and ":class:" not in description and ":mod:" not in description


@pytest.mark.parametrize("argv", [["--help"], ["optimize", "--help"], ["compare", "--help"]])
def test_the_otbench_command_answers_help_without_loading_anything_heavy(argv):
    loaded, help_text = _help("otbench", argv)
    assert loaded == "[]", f"otbench {' '.join(argv)} imported {loaded}"
    assert help_text.startswith("usage: ")


def test_a_help_text_with_a_percent_sign_prints_as_written():
    """argparse formats help with ``%``: a flag's text that says 15% is escaped, not a traceback."""
    _, help_text = _help("otbench.optimize", ["--help"])
    assert "request says 15%)" in " ".join(help_text.split())
