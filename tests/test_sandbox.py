import os
import threading
from pathlib import Path

import pytest

from otbench.core import sandbox as sandbox_module
from otbench.core.sandbox import CallSandbox


def test_call_runs_under_the_shown_name_so_errors_speak_of_it():
    with CallSandbox("sandbox_functions:FUNCTIONS") as sandbox:
        assert sandbox.call("add", "function_1", {"a": 1, "b": 2}) == (True, 3)
        ok, error = sandbox.call("add", "function_1", {"a": 1})
        assert not ok
        assert error == "TypeError: function_1() missing 1 required positional argument: 'b'"
        ok, error = sandbox.call("add", "function_7", {"a": 1, "b": 2, "c": 3})
        assert error == "TypeError: function_7() got an unexpected keyword argument 'c'"


def test_non_object_arguments_are_a_failed_call():
    with CallSandbox("sandbox_functions:FUNCTIONS") as sandbox:
        ok, error = sandbox.call("add", "function_1", [1, 2])
        assert not ok and "named arguments" in error


def test_a_call_that_spins_is_stopped_at_its_cpu_time_and_the_worker_is_replaced():
    with CallSandbox("sandbox_functions:FUNCTIONS", timeout=0.5) as sandbox:
        ok, error = sandbox.call("spin", "function_2", {})
        assert (ok, error) == (False, "TimeoutError: function_2() used more than 0.5 s of CPU time")
        assert sandbox.call("add", "function_1", {"a": 2, "b": 2}) == (True, 4)
        ok, error = sandbox.call("spin", "function_2", {})  # the replacement worker has its own limit
        assert "CPU time" in error


def test_the_limit_is_cpu_time_so_waiting_longer_than_it_is_no_timeout():
    """A loaded machine stretches wall-clock time, not CPU time: verdicts must not change with load."""
    with CallSandbox("sandbox_functions:FUNCTIONS", timeout=0.5, wall_timeout=30) as sandbox:
        assert sandbox.call("nap", "function_5", {"seconds": 1.5}) == (True, "rested")


def test_a_call_that_blocks_is_stopped_by_the_wall_clock_backstop():
    with CallSandbox("sandbox_functions:FUNCTIONS", timeout=0.5, wall_timeout=1) as sandbox:
        ok, error = sandbox.call("nap", "function_5", {"seconds": 30})
        assert (ok, error) == (False, "TimeoutError: function_5() did not return within 1 s")
        assert sandbox.call("add", "function_1", {"a": 1, "b": 2}) == (True, 3)


def test_memory_limit_and_crashes_are_failed_calls():
    with CallSandbox("sandbox_functions:FUNCTIONS", memory_limit_mb=512) as sandbox:
        ok, error = sandbox.call("hog", "function_3", {})
        assert not ok and "MemoryError" in error
        ok, error = sandbox.call("crash", "function_4", {})
        assert not ok and "crashed" in error
        assert sandbox.call("add", "function_1", {"a": 1, "b": 1}) == (True, 2)


@pytest.mark.parametrize("timeout", [0, -1, float("inf"), float("nan")])
def test_a_timeout_the_kernel_cannot_enforce_is_refused(timeout):
    with pytest.raises(ValueError, match="finite number of seconds > 0"):
        CallSandbox("sandbox_functions:FUNCTIONS", timeout=timeout)


def _sandbox_children() -> int:
    """This process's sandbox workers alive now, as the system lists them."""
    found = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        found += parent == os.getpid() and b"otbench.core.sandbox" in command
    return found


def _calls_at_once(sandbox: CallSandbox, threads: int, monkeypatch) -> tuple[list, int, int]:
    """``threads`` calls released together; the results, the workers ever started, the most alive at once."""
    started = []
    counting = threading.Lock()

    class CountedWorker(sandbox_module._Worker):
        def __init__(self, *args, **kwargs):
            with counting:
                started.append(self)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(sandbox_module, "_Worker", CountedWorker)
    gate = threading.Barrier(threads)
    results = [None] * threads
    alive = [0]
    done = threading.Event()

    def watch():
        while not done.is_set():
            alive[0] = max(alive[0], _sandbox_children())
            done.wait(0.02)

    def one(index):
        gate.wait()
        results[index] = sandbox.call("nap", "function_5", {"seconds": 0.2})

    watcher = threading.Thread(target=watch)
    watcher.start()
    workers = [threading.Thread(target=one, args=(index,)) for index in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    done.set()
    watcher.join()
    return results, len(started), max(alive[0], sandbox.running)


def test_threads_that_call_at_once_start_at_most_one_worker_each(monkeypatch):
    """Every thread's first call at the same moment: the pool starts once (not once per thread, which made
    32 threads start 1,024 processes), and never more workers than calls made at once."""
    with CallSandbox("sandbox_functions:FUNCTIONS", workers=64) as sandbox:
        results, started, alive = _calls_at_once(sandbox, 24, monkeypatch)
        assert results == [(True, "rested")] * 24
        assert started <= 24 and alive <= 24
        assert sandbox.in_use == 0 and sandbox.running == started  # every worker handed back, none lost


def test_the_worker_cap_holds_whatever_the_number_of_threads(monkeypatch):
    with CallSandbox("sandbox_functions:FUNCTIONS", workers=3) as sandbox:
        results, started, alive = _calls_at_once(sandbox, 16, monkeypatch)
        assert results == [(True, "rested")] * 16
        assert started <= 3 and alive <= 3


def test_a_replaced_worker_frees_its_place_and_a_closed_sandbox_starts_afresh():
    with CallSandbox("sandbox_functions:FUNCTIONS", workers=1) as sandbox:
        assert sandbox.call("crash", "function_4", {})[0] is False
        assert sandbox.running == 0  # the crashed worker is gone; the next call starts one
        assert sandbox.call("add", "function_1", {"a": 1, "b": 1}) == (True, 2)
        sandbox.close()
        assert sandbox.running == 0
        assert sandbox.call("add", "function_1", {"a": 2, "b": 1}) == (True, 3)
        assert sandbox.running == 1
