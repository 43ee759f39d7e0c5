"""DSPy's LM cache holds data only: a planted or corrupt entry is a logged miss, never code that runs."""

import logging
import os
import subprocess
import sys

import dspy
import pytest
from scripted_lm import ScriptedEngine

from otbench.llm.lm_cache import guard_lm_cache
from otbench.llm.metering import MeteredLM, TokenLedger

MESSAGES = [{"role": "user", "content": "What is 2 + 2?"}]


class _Planted:
    """A pickle that runs a command when it is loaded."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


@pytest.fixture
def disk_cache(tmp_path):
    dspy.configure_cache(enable_disk_cache=True, enable_memory_cache=False, disk_cache_dir=str(tmp_path / "dspy"))
    guard_lm_cache()
    yield dspy.cache.disk_cache
    dspy.configure_cache(enable_disk_cache=False)  # as conftest leaves it


def _lm(engine: ScriptedEngine) -> MeteredLM:
    return MeteredLM("scripted/test", engine=engine, cache=True, ledger=TokenLedger(), phase="agent")


def _keys(cache) -> list[str]:
    return [key for shard in cache._shards for key in shard]


def test_replies_are_cached_and_served_again(disk_cache):
    engine = ScriptedEngine(lambda _: "4")
    assert _lm(engine)(messages=MESSAGES) == _lm(engine)(messages=MESSAGES) == ["4"]
    assert len(engine.requests) == 1 and len(_keys(disk_cache)) == 1


@pytest.mark.parametrize("entry", ["planted", "corrupt"])
def test_an_unreadable_entry_is_a_logged_miss_and_runs_nothing(disk_cache, tmp_path, caplog, entry):
    engine = ScriptedEngine(lambda _: "4")
    _lm(engine)(messages=MESSAGES)
    (key,) = _keys(disk_cache)
    marker = tmp_path / "ran"
    if entry == "planted":
        disk_cache.set(key, _Planted(str(marker)))
    else:  # bytes flipped inside the stored pickle
        for shard in disk_cache._shards:
            shard._sql("UPDATE Cache SET value = ? WHERE key = ?", (b"\x80\x05\x95not a pickle", key))
    with caplog.at_level(logging.WARNING, logger="otbench.llm.lm_cache"):
        assert _lm(engine)(messages=MESSAGES) == ["4"]
    assert not marker.exists() and len(engine.requests) == 2
    assert "could not be read" in caplog.text and key in caplog.text
    assert _lm(engine)(messages=MESSAGES) == ["4"] and len(engine.requests) == 2  # the fresh reply is cached again


def test_guarding_twice_changes_nothing(disk_cache):
    guard_lm_cache()
    assert dspy.cache.disk_cache is disk_cache


def test_the_reply_cache_moves_with_the_cache_root(tmp_path):
    environment = {key: value for key, value in os.environ.items() if key != "DSPY_CACHEDIR"}
    shown = subprocess.run([sys.executable, "-c", "import otbench, os; print(os.environ['DSPY_CACHEDIR'])"],
                           env={**environment, "OTBENCH_CACHE": str(tmp_path)}, capture_output=True, text=True,
                           check=True)
    assert shown.stdout.strip() == str(tmp_path / "dspy")
