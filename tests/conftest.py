"""Test isolation: every test logs to a temporary MLflow store, untraced, with an empty results ledger of its own
(never the repository's), DSPy never caches to disk, and the embedded servers a test starts are recorded apart from
this machine's. Tests run on one worker a core (pytest-xdist, ``addopts`` in pyproject.toml); the marked ones that
start the real model, a browser or a database share one worker and run one after another."""

import dspy
import pytest

from otbench.llm import running

dspy.configure_cache(enable_disk_cache=False)


@pytest.fixture(autouse=True)
def _isolated_mlruns(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("OTBENCH_MLRUNS", str(tmp_path_factory.getbasetemp() / "mlruns"))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)  # MLflow sets it to the last store a test used
    monkeypatch.setenv("OTBENCH_TRACING", "0")  # writing traces is tested on its own (test_tracing.py)


@pytest.fixture(autouse=True)
def _isolated_results(tmp_path, monkeypatch):
    monkeypatch.setenv("OTBENCH_RESULTS", str(tmp_path / "results"))


@pytest.fixture(autouse=True)
def _isolated_server_record(tmp_path, monkeypatch):
    monkeypatch.setattr(running, "registry_dir", lambda: tmp_path / "servers")


HEAVY_MARKS = ("embedded", "ui", "distributed")
"""Marks of tests that start the embedded model, a browser or a database server: two at once would fight over the
same cores and ports, so they share one xdist worker (``--dist loadgroup``)."""


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config, items):
    for item in items:
        if any(item.get_closest_marker(mark) for mark in HEAVY_MARKS):
            item.add_marker(pytest.mark.xdist_group("heavy"))
