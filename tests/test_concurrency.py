"""What threads share, under many threads at once: counts add up exactly, nothing is lost or counted twice."""

from __future__ import annotations

import pytest

from otbench.envs import registry
from otbench.envs.registry import EnvironmentOptions, make_environment, tool_workers
from otbench.errors import ConfigError


def test_tool_workers_follow_the_threads_up_to_the_cores_or_the_cap(monkeypatch):
    monkeypatch.setattr(registry, "usable_cores", lambda: 2)
    assert tool_workers(1, None) == 1
    assert tool_workers(64, None) == 2  # CPU-bound calls: more workers than cores run nothing sooner
    assert tool_workers(64, 8) == 8
    assert tool_workers(4, 8) == 4  # never more than the threads, which make one call at a time each


def test_the_sandbox_of_a_built_environment_has_the_workers_asked_for(monkeypatch):
    monkeypatch.setattr(registry, "usable_cores", lambda: 2)
    with make_environment(EnvironmentOptions("bfcl", sandbox_workers=5), workers=64) as env:
        assert env.sandbox.size == 5
    with make_environment(EnvironmentOptions("bfcl"), workers=64) as env:
        assert env.sandbox.size == 2


def test_a_cap_below_one_is_refused():
    with pytest.raises(ConfigError, match="sandbox_workers"):
        make_environment(EnvironmentOptions("bfcl", sandbox_workers=0))
