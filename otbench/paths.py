"""Where otbench keeps its caches and its MLflow store.

Both are overridable by environment variables so that CI, tests and users with small home
directories can move them without touching code.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """Where the cache is (``$OTBENCH_CACHE`` overrides), without creating it: commands check it first."""
    return Path(os.environ.get("OTBENCH_CACHE", Path.home() / ".cache" / "otbench"))


def cache_dir() -> Path:
    """Cache for assembled model weights and downloaded data (``$OTBENCH_CACHE`` overrides), created if missing."""
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    return root


def mlruns_dir() -> Path:
    """The MLflow store: ``./mlruns`` of the working directory unless ``$OTBENCH_MLRUNS`` says otherwise."""
    return Path(os.environ.get("OTBENCH_MLRUNS", "mlruns")).resolve()


def results_dir() -> Path:
    """The results ledger: ``./results`` of the working directory (the repository's, where commands run) unless
    ``$OTBENCH_RESULTS`` says otherwise."""
    return Path(os.environ.get("OTBENCH_RESULTS", "results")).resolve()
