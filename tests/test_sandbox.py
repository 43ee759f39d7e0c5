import pytest

from otbench.sandbox import CallSandbox


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
