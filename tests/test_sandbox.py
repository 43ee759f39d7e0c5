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


def test_a_hanging_call_times_out_and_the_worker_is_replaced():
    with CallSandbox("sandbox_functions:FUNCTIONS", timeout=0.5) as sandbox:
        ok, error = sandbox.call("spin", "function_2", {})
        assert not ok and error.startswith("TimeoutError: function_2()")
        assert sandbox.call("add", "function_1", {"a": 2, "b": 2}) == (True, 4)


def test_memory_limit_and_crashes_are_failed_calls():
    with CallSandbox("sandbox_functions:FUNCTIONS", memory_limit_mb=512) as sandbox:
        ok, error = sandbox.call("hog", "function_3", {})
        assert not ok and "MemoryError" in error
        ok, error = sandbox.call("crash", "function_4", {})
        assert not ok and "crashed" in error
        assert sandbox.call("add", "function_1", {"a": 1, "b": 1}) == (True, 2)
