"""Where otbench keeps its caches and its MLflow store.

Both are overridable by environment variables so that CI, tests and users with small home
directories can move them without touching code.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """Cache for assembled model weights and downloaded data (``$OTBENCH_CACHE`` overrides)."""
    root = Path(os.environ.get("OTBENCH_CACHE", Path.home() / ".cache" / "otbench"))
    root.mkdir(parents=True, exist_ok=True)
    return root


def mlruns_dir() -> Path:
    """The MLflow store: ``./mlruns`` of the working directory unless ``$OTBENCH_MLRUNS`` says otherwise."""
    return Path(os.environ.get("OTBENCH_MLRUNS", "mlruns")).resolve()
