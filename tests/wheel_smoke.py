"""Smoke test of an installed otbench wheel, run by ``.ci/wheel-smoke`` in a fresh virtual environment that also
holds PyPI's ``evals`` package (a name the wheel must leave alone).

It checks that ``otbench`` and ``evals`` each come from their own distribution in that environment, runs the
README's own-tools example exactly as printed with a scripted LM standing in for the embedded model (the
real model runs it in the embedded test set), then an oracle ``otbench evaluate`` through the console script.

Usage: ``python tests/wheel_smoke.py README.md`` (tests/ is on the path as the script's folder; the
repository root must not be, so every otbench import is the installed one).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import dspy
from own_tools_lm import everyone
from scripted_lm import scripted_lm

import otbench
from otbench.llm import session

OWN_TOOLS = "## Your tools, your tasks, your metric"


def check_the_installed_names() -> None:
    """otbench from the wheel, ``evals`` from PyPI's package, and the wheel claiming no other top-level name."""
    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    here = Path(otbench.__file__).resolve()
    assert here.is_relative_to(site), f"otbench imported from {here}, not from {site}"
    installed = importlib.metadata.version("otbench")
    tops = sorted({Path(str(name)).parts[0] for name in importlib.metadata.files("otbench") or []
                   if not str(name).startswith("..") and not str(name).endswith(".dist-info")
                   and ".dist-info/" not in str(name)})
    evals = importlib.util.find_spec("evals")
    assert evals is not None and evals.origin is not None and Path(evals.origin).resolve().is_relative_to(site)
    owners = {dist.name: (dist.read_text("top_level.txt") or "").split()
              for dist in importlib.metadata.distributions(path=[str(site)]) if dist.name in ("evals", "otbench")}
    print(f"otbench {installed} from {here.parent}; the wheel's top-level names: {tops}")
    print(f"evals from {Path(evals.origin).parent}; top-level names installed in this environment: {owners}")
    assert tops == ["otbench"], tops
    assert owners.get("evals") == ["evals"] and owners.get("otbench") == ["otbench"], owners


def run_the_own_tools_example(readme: Path) -> None:
    section = readme.read_text().split(OWN_TOOLS, 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]

    @contextmanager
    def scripted_embedded_lm() -> Iterator[dspy.LM]:
        yield scripted_lm(everyone)

    session.embedded_lm = scripted_embedded_lm  # type: ignore[assignment]
    print("the own-tools example, as printed, with a scripted LM:")
    exec(compile(code, str(readme), "exec"), {"__name__": "readme"})  # noqa: S102 - the README as printed


def run_an_oracle_evaluation() -> None:
    console = Path(sys.executable).parent / "otbench"
    with tempfile.TemporaryDirectory() as store:
        command = [str(console), "evaluate", "--env", "toolkit", "--toolkit", "inventory", "--agent", "oracle",
                   "--mlruns", store, "--quiet"]
        print("$ otbench", " ".join(command[1:-3]))
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        print(done.stdout, end="")
        assert done.returncode == 0, done.stderr
        assert any(line.split()[:2] == ["score", "1.000"] for line in done.stdout.splitlines()), done.stdout


if __name__ == "__main__":
    check_the_installed_names()
    run_the_own_tools_example(Path(sys.argv[1]))
    run_an_oracle_evaluation()
    print("wheel smoke test: passed")
