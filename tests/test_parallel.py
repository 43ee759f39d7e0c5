import subprocess
import sys
import threading

import pytest

from otbench.core.parallel import MapInterrupted, parallel_map


def test_results_come_back_in_item_order_from_several_workers():
    assert parallel_map(lambda n: n * n, list(range(20)), num_threads=3, progress=False) == [n * n for n in range(20)]
    assert parallel_map(lambda n: n, [], num_threads=2, progress=False) == []


def test_a_failure_stops_the_map_keeps_finished_results_and_starts_nothing_more():
    started = []

    def work(n):
        started.append(n)
        if n == 2:
            raise ValueError("tool exploded")
        return n

    with pytest.raises(MapInterrupted) as stop:
        parallel_map(work, list(range(6)), num_threads=1, progress=False)
    assert stop.value.finished == {0: 0, 1: 1}
    assert isinstance(stop.value.cause, ValueError)
    assert started == [0, 1, 2]


def test_an_item_left_in_flight_does_not_hold_the_process_at_exit():
    """The interrupted item blocks for ever (a reply from a stopped server); the process still exits."""
    script = (
        "import threading\n"
        "from otbench.core.parallel import MapInterrupted, parallel_map\n"
        "never = threading.Event()\n"
        "def work(n):\n"
        "    if n == 0:\n"
        "        never.wait()\n"
        "    raise KeyboardInterrupt\n"
        "try:\n"
        "    parallel_map(work, [0, 1], num_threads=2, progress=False)\n"
        "except MapInterrupted as stop:\n"
        "    print(type(stop.cause).__name__)\n"
    )
    finished = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                              check=False)
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.strip() == "KeyboardInterrupt"
    assert all(t.daemon for t in threading.enumerate() if t.name.startswith("parallel_map"))
