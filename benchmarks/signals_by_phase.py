"""SIGTERM in each phase of a real command on the embedded model: seconds from the signal to the exit, the run's
status and whether the resume hint was printed. Run from the repository root: python benchmarks/signals_by_phase.py
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

CASES = [  # label, command and arguments, text on stderr that marks the phase, seconds to wait after it
    ("evaluate: model loading", ["evaluate", "--limit", "3"], "loading the embedded model", 0.5),
    ("optimize: model loading", ["optimize", "--limit", "2", "--iterations", "1"], "loading the embedded model", 0.5),
    ("optimize: agent call", ["optimize", "--limit", "2", "--iterations", "1"], "agent", 2.0),
    ("optimize: editor call", ["optimize", "--limit", "2", "--iterations", "2", "--variant", "paper"], "editor", 1.0),
    ("evaluate: agent call", ["evaluate", "--limit", "3"], "evaluate:", 2.0),
]


def _last_status(store: str) -> str:
    database = os.path.join(store, "mlflow.db")
    if not os.path.exists(database):
        return "no run"
    row = sqlite3.connect(database).execute("select status from runs order by start_time desc limit 1").fetchone()
    return row[0] if row else "no run"


def stop_in_phase(label: str, arguments: list[str], marker: str, delay: float) -> str:
    store = tempfile.mkdtemp()
    command = [sys.executable, "-m", f"otbench.{arguments[0]}", *arguments[1:], "--setting", "names_only",
               "--no-cache", "--mlruns", store]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, cwd=os.getcwd())
    printed: list[str] = []
    in_phase = threading.Event()

    def read() -> None:  # to the end, so a full pipe never blocks the command
        assert process.stderr is not None
        for chunk in iter(lambda: process.stderr.read(1), ""):
            printed.append(chunk)
            if marker in "".join(printed[-200:]):
                in_phase.set()
        in_phase.set()

    threading.Thread(target=read, daemon=True).start()
    in_phase.wait(600)
    time.sleep(delay)
    sent = time.monotonic()
    process.send_signal(signal.SIGTERM)
    try:
        code: int | str = process.wait(60)
    except subprocess.TimeoutExpired:
        process.kill()
        code = "hung"
    seconds = time.monotonic() - sent
    time.sleep(0.5)
    text = "".join(printed).strip()
    last = text.splitlines()[-1][:120] if text else ""
    return (f"{label}: exit {code} after {seconds:.1f} s; run {_last_status(store)}; "
            f"resume hint {'yes' if '--resume' in text else 'no'}; last line: {last}")


if __name__ == "__main__":
    for case in CASES:
        print(stop_in_phase(*case), flush=True)
