"""One ``otbench serve --slots N`` and N commands using it at once: each command's wall time and tokens per second.

Two commands that each start the embedded model on the same cores slow each other to a crawl; the
fix is one server with a slot per command. This measures what that fix gives on this machine: the
server is started with ``--slots N`` (and ``--serve-args``), one command runs alone against it (the
baseline, unless ``--no-solo``), then N copies of it run at once. Each row is one command: its wall
time, the tokens it paid for, its completion tokens per second of wall time, and the generation
speed llama.cpp reported for its calls; the last column compares its wall time with the solo run's.
A command that stalls shows as a wall time far above the others'.

    python benchmarks/serve_slots.py                                  # 2 slots, 2 BFCL evaluations of 5 tests
    python benchmarks/serve_slots.py --slots 2 --command optimize --limit 3 --serve-args "--threads 2"
    python benchmarks/serve_slots.py --fake-latency 0.5 --slots 4     # check the benchmark itself, no model

It loads the real embedded model (about 2 GB of memory, every core): run it on a quiet machine.
``--fake-latency SECONDS`` puts the chat server of ``benchmarks/threads_scale.py`` in the model's place
(every reply after that many seconds, no slots, no llama.cpp timings), to check the benchmark quickly.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from threads_scale import ModelServer  # the benchmark next to this one

from otbench.envs.registry import DEFAULT_ENVIRONMENT

SERVE_READY_SECONDS = 600.0
"""How long the model may take to load on a busy machine."""


@contextmanager
def served(slots: int, serve_args: str, fake_latency: float | None) -> Iterator[tuple[str, str]]:
    """``otbench serve --slots N`` (or the fake server) for the block: its URL and API key."""
    if fake_latency is not None:
        with ModelServer(fake_latency).running() as fake:
            yield fake.url, "threads-scale"
        return
    argv = [sys.executable, "-m", "otbench.serve", "--slots", str(slots), *shlex.split(serve_args)]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env=_environment(), start_new_session=True)
    try:
        assert process.stdout is not None
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(process.stdout.readline() for _ in range(2)),
                                  daemon=True)  # the URL, then the key
        reader.start()
        reader.join(SERVE_READY_SECONDS)
        if len(lines) < 2 or not lines[1].strip():
            raise SystemExit(f"otbench serve did not print its address within {SERVE_READY_SECONDS:.0f} s "
                             f"(exit code {process.poll()})")
        yield lines[0].strip(), lines[1].strip()
    finally:
        os.killpg(process.pid, signal.SIGINT)  # Ctrl-C: the server stops in order
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _environment(**extra: str) -> dict[str, str]:
    environment = {**os.environ, **extra,
                   "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    environment.pop("MLFLOW_TRACKING_URI", None)
    return environment


@dataclass
class CommandRun:
    """One command against the shared server."""

    label: str
    wall: float
    result: dict[str, Any] | None
    error: str = ""

    @property
    def completion_tokens(self) -> int:
        return int(self.result["tokens_by_phase"]["all"]["completion_tokens"]) if self.result else 0

    @property
    def paid_tokens(self) -> int:
        return int(self.result["tokens_by_phase"]["all"]["total_tokens"]) if self.result else 0

    @property
    def server_generation_speed(self) -> float | None:
        """Generated tokens per second of generation, as llama.cpp timed this command's calls (None: not reported)."""
        if not self.result:
            return None
        speed = self.result.get("llm_all_generation_tokens_per_second")
        if speed is None:  # optimize reports the server's figures by phase
            speed = self.result.get("server", {}).get("all", {}).get("generation_tokens_per_second")
        return float(speed) if speed is not None else None


def run_commands(labels: list[str], argv: list[str], url: str, key: str, store: Path, work: Path,
                 timeout: float) -> list[CommandRun]:
    """The command once per label, all started at once; each one's wall time and summary."""
    started: list[tuple[str, subprocess.Popen[str], float]] = []
    for label in labels:
        out = work / label
        out.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", *argv, "--api-base", url, "--no-cache", "--json", "--quiet",
                   "--mlruns", str(store)]
        if argv[0] == "otbench.optimize":
            command += ["--out", str(out)]
        process = subprocess.Popen(command, cwd=out, env=_environment(OTBENCH_API_KEY=key), text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        started.append((label, process, time.perf_counter()))
    runs = []
    for label, process, began in started:
        try:
            out_text, err_text = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            out_text, err_text = process.communicate()
            err_text += f"\nno exit within {timeout:.0f} s"
        wall = time.perf_counter() - began
        if process.returncode != 0:
            runs.append(CommandRun(label, wall, None, (err_text.strip().splitlines() or ["?"])[-1][:200]))
            continue
        runs.append(CommandRun(label, wall, json.loads(out_text.strip().splitlines()[-1])))
    return runs


def table(runs: list[CommandRun], solo: CommandRun | None) -> str:
    header = (f"{'command':<10} {'wall s':>7} {'paid tokens':>11} {'completion tok/s':>16} {'server gen tok/s':>16} "
              f"{'/solo':>6}  note")
    lines = [header]
    for run in runs:
        speed = run.server_generation_speed
        against = f"{run.wall / solo.wall:.2f}" if solo is not None and solo.result and run.result else "-"
        lines.append(f"{run.label:<10} {run.wall:>7.1f} {run.paid_tokens:>11} {run.completion_tokens / run.wall:>16.2f} "
                     f"{speed if speed is not None else '-':>16} {against:>6}  {run.error}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/serve_slots.py", description=__doc__.splitlines()[0])
    parser.add_argument("--slots", type=int, default=2, help="the server's slots, and the commands run at once (default 2)")
    parser.add_argument("--serve-args", default="", metavar="ARGS",
                        help="more options for otbench serve, as one string (e.g. '--threads 2')")
    parser.add_argument("--command", choices=("evaluate", "optimize"), default="evaluate",
                        help="the command each client runs (default evaluate)")
    parser.add_argument("--env", default=DEFAULT_ENVIRONMENT, help=f"its environment (default {DEFAULT_ENVIRONMENT})")
    parser.add_argument("--limit", type=int, default=5, help="its tasks (default 5)")
    parser.add_argument("--command-args", default="", metavar="ARGS", help="more options for every command")
    parser.add_argument("--no-solo", action="store_true", help="skip the baseline: one command alone first")
    parser.add_argument("--fake-latency", type=float, default=None, metavar="SECONDS",
                        help="no model: the fake chat server of threads_scale.py, answering after SECONDS")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds a command may take (default 3600)")
    parser.add_argument("--mlruns", type=Path, default=None, help="the commands' store (default: a new temporary one)")
    parser.add_argument("--json", action="store_true", help="print the rows as one JSON object after the table")
    args = parser.parse_args(argv)
    command = [f"otbench.{args.command}", "--env", args.env, "--limit", str(args.limit), *shlex.split(args.command_args)]
    if args.fake_latency is not None:  # the fake server reads the reply schema; it speaks no grammar
        command += ["--lm", "local", "--no-grammar"]
    store = (args.mlruns or Path(tempfile.mkdtemp(prefix="otbench-serve-slots-"))).resolve()
    from otbench.mlflow_store import configure

    configure(directory=store)  # a new store's tables are made before any command is timed
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores",
          file=sys.stderr, flush=True)
    with served(args.slots, args.serve_args, args.fake_latency) as (url, key), \
            tempfile.TemporaryDirectory(prefix="otbench-serve-slots-") as work:
        print(f"server at {url}", file=sys.stderr, flush=True)
        solo = None
        if not args.no_solo:
            (solo,) = run_commands(["solo"], command, url, key, store, Path(work), args.timeout)
        runs = run_commands([f"client-{n + 1}" for n in range(args.slots)], command, url, key, store, Path(work),
                            args.timeout)
    rows = ([solo] if solo is not None else []) + runs
    print(table(rows, solo))
    print(f"{args.slots} slot(s), {args.slots} command(s) at once: python -m {' '.join(command)}; "
          f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        print(json.dumps({"rows": [{"label": run.label, "wall": run.wall, "paid_tokens": run.paid_tokens,
                                    "completion_tokens": run.completion_tokens,
                                    "server_generation_tokens_per_second": run.server_generation_speed,
                                    "error": run.error} for run in rows]}))
    return 1 if any(run.error for run in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
