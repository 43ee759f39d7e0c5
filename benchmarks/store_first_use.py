"""Commands started together on a new MLflow store: how many trials, how many commands failed.

Each trial starts ``--processes`` real commands at the same moment on a store directory that does
not exist yet (``python -m otbench.evaluate --agent null --limit 1``: no LLM, a real MLflow run),
waits for them and counts every command that did not exit 0 or whose run is missing from the
store. Before the store's lock (:func:`otbench.mlflow_store.store_lock`), all but one of them failed
creating the store's tables.

    python benchmarks/store_first_use.py                    # 8 at once, 10 trials
    python benchmarks/store_first_use.py --processes 4 --trials 3 --json
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMAND = ["-m", "otbench.evaluate", "--agent", "null", "--limit", "1", "--quiet", "--json"]


def trial(store: Path, processes: int, timeout: float) -> list[str]:
    """One trial: the failures (``command N: ...``), empty when every command logged its run."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
                   "OTBENCH_TRACING": "0"}
    environment.pop("MLFLOW_TRACKING_URI", None)
    started = [subprocess.Popen([sys.executable, *COMMAND, "--mlruns", str(store)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=environment, cwd=ROOT)
               for _ in range(processes)]
    failures, run_ids = [], []
    for index, process in enumerate(started):
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            failures.append(f"command {index}: no exit within {timeout:.0f} s")
            continue
        if process.returncode != 0:
            last = (err.strip().splitlines() or ["(no output)"])[-1]
            failures.append(f"command {index}: exit {process.returncode}: {last}")
            continue
        run_ids.append(json.loads(out.strip().splitlines()[-1])["run_id"])
    with sqlite3.connect(store / "mlflow.db") as database:
        logged = {row[0] for row in database.execute("SELECT run_uuid FROM runs")}
    failures += [f"run {run_id}: not in the store" for run_id in run_ids if run_id not in logged]
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/store_first_use.py", description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=8, help="commands started at once (default 8)")
    parser.add_argument("--trials", type=int, default=10, help="new stores tried (default 10)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds a command may take (default 600)")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    args = parser.parse_args(argv)
    failed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="otbench-store-first-use-") as directory:
        for number in range(args.trials):
            failures = trial(Path(directory) / f"store-{number}", args.processes, args.timeout)
            failed += [f"trial {number}: {failure}" for failure in failures]
            print(f"trial {number + 1}/{args.trials}: {len(failures)} failure(s)", file=sys.stderr, flush=True)
    result = {"processes_at_once": args.processes, "trials": args.trials, "commands": args.processes * args.trials,
              "failures": len(failed), "failed": failed}
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{'at once':>8} {'trials':>7} {'commands':>9} {'failures':>9}")
        print(f"{args.processes:>8} {args.trials:>7} {result['commands']:>9} {len(failed):>9}")
        for line in failed:
            print(f"  {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
