"""Where a run ran and on what code: the machine, the package's version and the git commit every run is tagged
with (and the results ledger keeps)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

MACHINE_TAG = "otbench.machine"
"""Tag every run carries: the machine it ran on (:func:`this_machine`, as JSON)."""
VERSION_TAG = "otbench.version"
"""Tag every run carries: the package's version (git's commit is MLflow's own ``mlflow.source.git.commit``)."""


def this_machine() -> dict[str, Any]:
    """The machine a run runs on, as runs and the results ledger keep it."""
    import platform

    from otbench.core.parallel import usable_cores

    return {"cores": usable_cores(), "processor": platform.processor() or platform.machine(),
            "system": platform.system()}


CODE_TAG = "otbench.code"
"""Tag every run carries: the git commit of the code it ran on, ``-dirty`` with uncommitted changes."""


@functools.cache
def code_commit() -> str | None:
    """This checkout's git commit, with ``-dirty`` when tracked files had uncommitted changes (None outside git), as
    the process first asks: the code a process runs is the code it loaded."""
    import subprocess

    here = Path(__file__).resolve().parent

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=here, capture_output=True, text=True, timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    return f"{commit}-dirty" if commit and git("status", "--porcelain", "--untracked-files=no") else commit


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("otbench")
    except PackageNotFoundError:
        return "unknown"
