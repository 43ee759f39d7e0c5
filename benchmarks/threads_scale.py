"""Commands at 1 to 64 threads against a model server that answers after a fixed delay: wall time against
the ideal, processes, memory and calls per second (no LLM).

A remote GPU server answers many requests at once, each after about the same time; raising
``--num-threads`` should then divide the time spent waiting on the model by the thread count, and
leave the rest alone. This benchmark checks that it does, for ``evaluate`` and ``optimize`` (online
ToolObserver on BFCL, offline on Chess and BrowseComp, its test phase included) of each environment:

- a chat server of its own on 127.0.0.1 (OpenAI's API) answers every request after ``--latency``
  seconds with a valid reply for whoever asks (the agent's tool call, read from the request's reply
  schema and its prompt; the editor's doc updates), and counts the requests and the tokens it billed;
- each command runs as the user would run it (``--lm local --api-base URL --no-cache``) into a store
  of the benchmark's own, while a sampler reads the whole process tree from ``/proc`` every
  ``--sample-seconds``: the processes (sandbox workers, Stockfish engines), their summed RSS and
  their summed PSS (the tree's real memory: shared pages counted once);
- the ideal is the run's time outside the model (the fewest-threads run's wall time less the model's
  share) plus ``latency`` times the rounds of calls the work needs at that thread count: calls form
  stages (the agent's rollouts, then the editor's calls: ``parallel_map`` waits between them) and,
  within a stage, chains (one task's turns, which follow each other); a stage of ``n`` chains of
  ``c`` calls on ``T`` threads takes ``ceil(n / T) * c`` rounds.

It also checks what must hold at any thread count: every task's trajectory is there (``n``), the
command counted every call and token the server billed, once, and its run holds a trace of every
rollout and of every LM call made outside one.

    python benchmarks/threads_scale.py                                        # everything: 3 envs x 2 commands x 4
    python benchmarks/threads_scale.py --env bfcl --command evaluate --threads 8,32 --no-warmup
    python benchmarks/threads_scale.py --env chess --tasks 16 --latency 0.2 --json

The store is made before any command runs (migrating a new sqlite store takes seconds), and each
workload first runs once, untimed, at the most threads (``--no-warmup`` skips it): that fills the
Chess engine cache and the system's file cache, so the timed runs measure the same work. A run whose process tree passes ``--max-processes`` is stopped
(the row says so) rather than let it exhaust the machine's memory.
"""

from __future__ import annotations

import argparse
import hashlib
import http.server
import json
import math
import os
import re
import resource
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Self

ROOT = Path(__file__).resolve().parent.parent
ENVIRONMENTS = ("bfcl", "chess", "browsecomp")
COMMANDS = ("evaluate", "optimize")
API_KEY = "threads-scale"
_FEN = re.compile(r"^FEN: (.+)$", re.MULTILINE)
_CONTINUED = re.compile(r"^(Call 1:|Your recent tool calls:)", re.MULTILINE)
"""A prompt that shows the task's earlier turns: the call continues a chain (Chess's moves, BrowseComp's searches)."""


# -- the model server --------------------------------------------------------------------------------------------
def _words(text: str) -> int:
    return len(text.split())


def _pick(names: list[str], text: str) -> str:
    """One of ``names``, fixed by ``text`` (SHA-256: the same in every process and run)."""
    return names[int(hashlib.sha256(text.encode()).hexdigest(), 16) % len(names)]


def _schema_instance(schema: dict[str, Any]) -> Any:
    """A small value valid under ``schema`` (the replies no scripted rule below covers)."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: _schema_instance(properties.get(name, {})) for name in schema.get("required", properties)}
    if kind == "array":
        return [_schema_instance(schema.get("items", {})) for _ in range(max(1, schema.get("minItems", 0)))]
    if kind in ("integer", "number"):
        return max(1, schema.get("minimum", 1))
    if kind == "boolean":
        return True
    return "A short text from the benchmark's model server."


def agent_reply(prompt: str, tool_names: list[str]) -> dict[str, Any]:
    """A call each environment can run: Chess's engine with the FEN shown, BrowseComp's search then its answer,
    a BFCL tool with no arguments (it runs in the sandbox and fails, which the editor then reads)."""
    request = prompt.rsplit("Request: ", 1)[-1]
    fen = _FEN.search(request)
    if fen is not None:
        return {"name": _pick(tool_names, fen.group(1)), "arguments": {"fen": fen.group(1).strip()}}
    if "final_answer" in tool_names:
        searches = [name for name in tool_names if name != "final_answer"]
        if not searches or _CONTINUED.search(request):
            return {"name": "final_answer", "arguments": {"answer": "unknown"}}
        question = request.split("\n", 1)[0]
        return {"name": _pick(searches, question), "arguments": {"query": " ".join(question.split()[:8])}}
    return {"name": _pick(tool_names, request), "arguments": {}}


def scripted_reply(body: dict[str, Any]) -> tuple[str, str, bool]:
    """The reply text to a chat request, who asked (``agent`` or ``editor``), and whether the request starts a
    chain of calls (a task's first turn, any editor call)."""
    messages = body.get("messages", [])
    prompt = "\n\n".join(str(message.get("content", "")) for message in messages)
    response_format = body.get("response_format") or {}
    named = response_format.get("json_schema", {}) if isinstance(response_format, dict) else {}
    schema = named.get("schema", {})
    if named.get("name") == "tool_calls":
        names = schema["properties"]["calls"]["items"]["properties"]["name"]["enum"]
        starts = _CONTINUED.search(prompt.rsplit("Request: ", 1)[-1]) is None
        return json.dumps({"calls": [agent_reply(prompt, names)]}), "agent", starts
    if named.get("name") == "doc_updates":
        updates = schema["properties"]["updates"]
        names = updates["items"]["properties"]["name"]["enum"]
        count = max(1, updates.get("minItems", 0))
        return json.dumps({"updates": [{"name": name, "description": f"Learned from its calls: {name} runs a "
                                        "function of the benchmark."} for name in names[:count]]}), "editor", True
    return json.dumps(_schema_instance(schema or {"type": "object"})), "editor", True


@dataclass
class ServedCall:
    """One request the server answered."""

    arrived: float
    role: str
    starts_chain: bool
    tokens: int


class ModelServer:
    """An OpenAI-compatible chat server on 127.0.0.1 that answers every request after ``latency`` seconds."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.calls: list[ServedCall] = []
        self.in_flight = self.peak_in_flight = 0
        self._lock = threading.Lock()
        self._server: http.server.ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def reset(self) -> None:
        with self._lock:
            self.calls = []
            self.peak_in_flight = self.in_flight

    def _answer(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        arrived = time.perf_counter()
        try:
            text, role, starts = scripted_reply(body)
            prompt_tokens = sum(_words(str(m.get("content", ""))) for m in body.get("messages", []))
            completion_tokens = _words(text)
            time.sleep(self.latency)
        finally:
            with self._lock:
                self.in_flight -= 1
        with self._lock:
            self.calls.append(ServedCall(arrived, role, starts, prompt_tokens + completion_tokens))
        return {"id": "threads-scale", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model", "local"),
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                          "total_tokens": prompt_tokens + completion_tokens}}

    @contextmanager
    def running(self) -> Iterator[ModelServer]:
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _send(self, answer: dict[str, Any]) -> None:
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # the model list, which commands ask for before any work
                self._send({"object": "list", "data": [{"id": "local", "object": "model"}]})

            def do_POST(self) -> None:
                self._send(owner._answer(json.loads(self.rfile.read(int(self.headers["Content-Length"])))))

            def log_message(self, *args: object) -> None:
                pass

        class Server(http.server.ThreadingHTTPServer):
            request_queue_size = 256  # 64 clients connect at once: socketserver's 5 would drop connections
            daemon_threads = True

        self._server = Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()


def rounds(calls: list[ServedCall], threads: int) -> float:
    """Rounds of calls the work needs on ``threads`` threads (see the module's docstring)."""
    stages: list[list[ServedCall]] = []
    for call in sorted(calls, key=lambda c: c.arrived):
        if stages and stages[-1][0].role == call.role:
            stages[-1].append(call)
        else:
            stages.append([call])
    total = 0.0
    for stage in stages:
        chains = max(1, sum(call.starts_chain for call in stage))
        total += math.ceil(chains / threads) * len(stage) / chains
    return total


# -- the process tree --------------------------------------------------------------------------------------------
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _process_table() -> dict[int, int]:
    """Every process's parent, from /proc."""
    parents = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return parents


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid, parent in _process_table().items():
        children.setdefault(parent, []).append(pid)
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _rss(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _pss(pid: int) -> int:
    """The process's proportional set size: its share of every page it maps (summed over a tree, shared
    libraries and copy-on-write pages count once, where summed RSS counts them in every process)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    return _rss(pid)


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@dataclass
class TreePeaks:
    """The most a process tree held at any sample."""

    processes: int = 0
    sandbox_workers: int = 0
    engines: int = 0
    rss_bytes: int = 0
    """The most summed RSS (the issue-style figure; shared pages counted in every process)."""
    pss_bytes: int = 0
    """The most summed PSS (the tree's real memory)."""
    samples: int = 0
    stopped: str = ""
    """Why the sampler stopped the command (too many processes), empty otherwise."""


class TreeSampler:
    """Samples the process tree under ``root`` every ``interval`` seconds; stops it past ``max_processes``."""

    def __init__(self, root: int, interval: float, max_processes: int) -> None:
        self.root, self.interval, self.max_processes = root, interval, max_processes
        self.peaks = TreePeaks()
        self._names: dict[int, str] = {}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        pids = _tree(self.root)
        peaks = self.peaks
        peaks.samples += 1
        peaks.processes = max(peaks.processes, len(pids))
        if len(pids) > self.max_processes and not peaks.stopped:  # first: reading hundreds of processes is slow
            peaks.stopped = f"stopped at {len(pids)} processes"
            os.killpg(self.root, signal.SIGKILL)
            return
        for pid in pids:
            if pid not in self._names:
                self._names[pid] = _command_line(pid)
        peaks.sandbox_workers = max(peaks.sandbox_workers, sum("otbench.core.sandbox" in self._names[p] for p in pids))
        peaks.engines = max(peaks.engines, sum("stockfish" in self._names[p] for p in pids))
        peaks.rss_bytes = max(peaks.rss_bytes, sum(_rss(pid) for pid in pids))
        peaks.pss_bytes = max(peaks.pss_bytes, sum(_pss(pid) for pid in pids))

    def _run(self) -> None:
        while not self._done.is_set():
            self._sample()
            self._done.wait(self.interval)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._done.set()
        self._thread.join()


# -- the workloads -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Workload:
    env: str
    command: str
    argv: tuple[str, ...]


def workloads(envs: list[str], commands: list[str], tasks: int, moves: int, iterations: int) -> list[Workload]:
    """Each environment's commands on ``tasks`` tasks (Chess games of ``moves`` agent moves)."""
    own = {"bfcl": (), "chess": ("--max-moves", str(moves), "--exploration-moves", str(moves)), "browsecomp": ()}
    found = []
    for env in envs:
        for command in commands:
            argv = ["--env", env, *own[env], "--limit", str(tasks)]
            if command == "optimize":
                argv += ["--optimizer", "toolobserver", "--iterations", str(iterations), "--test-limit", str(tasks)]
            found.append(Workload(env, command, tuple(argv)))
    return found


@dataclass
class Measured:
    """One command at one thread count."""

    env: str
    command: str
    threads: int
    wall: float
    calls: int
    peak_in_flight: int
    peaks: TreePeaks
    tasks: int | None
    """Trajectories the command reported (evaluate's ``n``; optimize's final ones)."""
    counted_calls: int | None
    counted_tokens: int | None
    billed_tokens: int
    traces: int | None = None
    """Traces the command's run holds: one per rollout and one per LM call outside rollouts."""
    failure: str = ""
    ideal: float | None = None
    cpu: float = 0.0
    """CPU seconds of the command and every process it waited for (its sandbox workers, engines)."""
    served: list[ServedCall] = field(default_factory=list, repr=False)
    """The server's record of the run's calls (what the ideal is counted on)."""

    def figures(self) -> dict[str, Any]:
        """The row as plain data (without the served calls)."""
        data = {key: value for key, value in asdict(self).items() if key != "served"}
        return {**data, "peaks": asdict(self.peaks)}


def _children_cpu_seconds() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run_command(workload: Workload, threads: int, server: ModelServer, store: Path, work: Path, args: argparse.Namespace,
                ) -> Measured:
    server.reset()
    argv = [sys.executable, "-m", f"otbench.{workload.command}", *workload.argv, "--num-threads", str(threads),
            "--lm", "local", "--api-base", server.url, "--no-cache", "--quiet", "--json", "--mlruns", str(store)]
    if workload.command == "optimize":
        argv += ["--out", str(work / "learned_docs")]
    if workload.env == "chess":
        argv += ["--engine-cache", str(work / "engine-results.sqlite")]
    argv += shlex.split(args.command_args)
    environment = {**os.environ, "OTBENCH_API_KEY": API_KEY,
                   "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    environment.pop("MLFLOW_TRACKING_URI", None)
    used_before = _children_cpu_seconds()
    started = time.perf_counter()
    process = subprocess.Popen(argv, cwd=work, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    with TreeSampler(process.pid, args.sample_seconds, args.max_processes) as sampler:
        try:
            out, err = process.communicate(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
            err += f"\nno exit within {args.timeout:.0f} s"
    wall = time.perf_counter() - started
    cpu = _children_cpu_seconds() - used_before
    calls = list(server.calls)
    measured = Measured(workload.env, workload.command, threads, wall, len(calls), server.peak_in_flight,
                        sampler.peaks, None, None, None, sum(c.tokens for c in calls), cpu=cpu, served=calls)
    if process.returncode != 0 or sampler.peaks.stopped:
        last = (err.strip().splitlines() or ["(no output)"])[-1]
        measured.failure = sampler.peaks.stopped or f"exit {process.returncode}: {last[:200]}"
        return measured
    result = json.loads(out.strip().splitlines()[-1])
    total = result["tokens_by_phase"]["all"]
    measured.counted_calls = int(total["calls"])
    measured.counted_tokens = int(total["total_tokens"])
    measured.tasks = int(result["n"]) if "n" in result else None
    measured.traces = _traces_of(str(result["run_id"]))
    return measured


def _traces_of(run_id: str) -> int | None:
    """The traces the run holds in the store (None with tracing off)."""
    import mlflow

    if os.environ.get("OTBENCH_TRACING", "1").strip().lower() in ("0", "false", "off", "no"):
        return None
    return len(mlflow.search_traces(run_id=run_id, return_type="list", max_results=100_000))


def with_ideals(rows: list[Measured], latency: float) -> None:
    """Each row's ideal, from the fewest-threads run of its workload: its time outside the model, plus the
    rounds of calls its work needs at the row's thread count (counted on that run's calls)."""
    by_workload: dict[tuple[str, str], list[Measured]] = {}
    for row in rows:
        if not row.failure:
            by_workload.setdefault((row.env, row.command), []).append(row)
    for group in by_workload.values():
        base = min(group, key=lambda row: row.threads)
        outside = base.wall - latency * rounds(base.served, base.threads)
        for row in group:
            row.ideal = outside + latency * rounds(base.served, row.threads)


def table(rows: list[Measured], latency: float) -> str:
    header = (f"{'env':<10} {'command':<8} {'threads':>7} {'wall s':>7} {'ideal s':>7} {'/ideal':>6} {'/prev':>6} "
              f"{'CPU s':>6} {'calls':>5} {'calls/s':>7} {'in flight':>9} {'procs':>5} {'sandbox':>7} {'engines':>7} "
              f"{'RSS MiB':>7} {'PSS MiB':>7} {'tasks':>5} {'counted':>7} {'traces':>7}  note")
    lines = [header]
    previous: dict[tuple[str, str], Measured] = {}
    for row in rows:
        key = (row.env, row.command)
        before = previous.get(key)
        ratio = f"{row.wall / before.wall:.2f}" if before is not None and not row.failure else "-"
        ideal = f"{row.ideal:.1f}" if row.ideal is not None else "-"
        against = f"{row.wall / row.ideal:.2f}" if row.ideal else "-"
        counted = ("-" if row.counted_calls is None else
                   "ok" if (row.counted_calls, row.counted_tokens) == (row.calls, row.billed_tokens) else
                   f"{row.counted_calls}c/{row.counted_tokens}t vs {row.calls}c/{row.billed_tokens}t")
        chains = sum(call.starts_chain for call in row.served)
        traces = "-" if row.traces is None else "ok" if row.traces == chains else f"{row.traces}/{chains}"
        lines.append(
            f"{row.env:<10} {row.command:<8} {row.threads:>7} {row.wall:>7.1f} {ideal:>7} {against:>6} {ratio:>6} "
            f"{row.cpu:>6.1f} {row.calls:>5} {row.calls / row.wall:>7.2f} {row.peak_in_flight:>9} {row.peaks.processes:>5} "
            f"{row.peaks.sandbox_workers:>7} {row.peaks.engines:>7} {row.peaks.rss_bytes / 2**20:>7.0f} "
            f"{row.peaks.pss_bytes / 2**20:>7.0f} "
            f"{row.tasks if row.tasks is not None else '-':>5} {counted:>7} {traces:>7}  {row.failure}")
        if not row.failure:
            previous[key] = row
    lines.append(f"latency {latency:g} s per call; CPU: seconds the command and the processes it waited for used; "
                 "in flight: the most requests the server held at once; procs, "
                 "sandbox, engines, RSS, PSS: peaks of the command's whole process tree (RSS summed counts shared "
                 "pages in every process, PSS once); counted: calls and tokens the command reported against what "
                 "the server billed; traces: the run's traces against its rollouts and other LM calls")
    return "\n".join(lines)


def log_to_mlflow(store: Path, rows: list[Measured], text: str, args: argparse.Namespace) -> str:
    """One run of the benchmark in its store: the settings as params, each row's figures as metrics, the table."""
    import mlflow

    from otbench.mlflow_store import configure

    configure(directory=store, experiment="threads-scale")
    with mlflow.start_run(run_name=f"threads-scale-{time.strftime('%m%d-%H%M%S')}") as run:
        mlflow.log_params({"latency": args.latency, "tasks": args.tasks, "moves": args.moves,
                           "iterations": args.iterations, "threads": args.threads, "command_args": args.command_args,
                           "load_before": " ".join(f"{x:.2f}" for x in os.getloadavg())})
        for row in rows:
            prefix = f"{row.env}/{row.command}/"
            figures = {"wall": row.wall, "cpu_seconds": row.cpu, "calls_per_second": row.calls / row.wall,
                       "peak_processes": row.peaks.processes, "peak_sandbox_workers": row.peaks.sandbox_workers,
                       "peak_engines": row.peaks.engines, "peak_rss_mib": row.peaks.rss_bytes / 2**20,
                       "peak_pss_mib": row.peaks.pss_bytes / 2**20}
            if row.ideal:
                figures["wall_over_ideal"] = row.wall / row.ideal
            mlflow.log_metrics({prefix + name: float(value) for name, value in figures.items()}, step=row.threads)
        mlflow.log_text(text, "threads_scale.txt")
        mlflow.log_dict({"rows": [row.figures() for row in rows]}, "threads_scale.json")
        return str(run.info.run_id)


def _listed(text: str, allowed: tuple[str, ...], what: str) -> list[str]:
    chosen = [item.strip() for item in text.split(",") if item.strip()]
    unknown = [item for item in chosen if item not in allowed]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"{what}: choose among {', '.join(allowed)}")
    return chosen


def _thread_counts(text: str) -> list[int]:
    try:
        counts = sorted({int(item) for item in text.split(",") if item.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected thread counts such as 1,8,32,64, got {text!r}") from None
    if not counts or counts[0] < 1:
        raise argparse.ArgumentTypeError(f"expected thread counts of at least 1, got {text!r}")
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/threads_scale.py", description=__doc__.splitlines()[0])
    parser.add_argument("--env", type=lambda text: _listed(text, ENVIRONMENTS, "--env"), default=list(ENVIRONMENTS),
                        help="environments, comma-separated (default: bfcl,chess,browsecomp)")
    parser.add_argument("--command", type=lambda text: _listed(text, COMMANDS, "--command"), default=list(COMMANDS),
                        help="commands, comma-separated (default: evaluate,optimize)")
    parser.add_argument("--threads", type=_thread_counts, default=[1, 8, 32, 64],
                        help="thread counts, comma-separated (default 1,8,32,64)")
    parser.add_argument("--tasks", type=int, default=64, help="tasks per command (--limit, --test-limit; default 64)")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds the server takes per call (default 0.5)")
    parser.add_argument("--moves", type=int, default=2, help="Chess: agent moves per game (default 2)")
    parser.add_argument("--iterations", type=int, default=1, help="optimize: editor iterations (default 1)")
    parser.add_argument("--command-args", default="", metavar="ARGS",
                        help="more options for every command, as one string (e.g. '--sandbox-workers 2')")
    parser.add_argument("--no-warmup", action="store_true", help="skip each workload's untimed first run")
    parser.add_argument("--sample-seconds", type=float, default=0.1, help="process-tree sampling period (default 0.1)")
    parser.add_argument("--max-processes", type=int, default=500,
                        help="stop a command whose process tree grows past this (default 500)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds a command may take (default 1800)")
    parser.add_argument("--mlruns", type=Path, default=None,
                        help="the store the commands and the benchmark's own run log to (default: a new temporary one)")
    parser.add_argument("--json", action="store_true", help="print the rows as one JSON object after the table")
    args = parser.parse_args(argv)
    store = (args.mlruns or Path(tempfile.mkdtemp(prefix="otbench-threads-scale-"))).resolve()
    rows: list[Measured] = []
    from otbench.mlflow_store import configure

    configure(directory=store)  # a new store's tables are made here, not in the first timed command
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores",
          file=sys.stderr, flush=True)
    with ModelServer(args.latency).running() as server, tempfile.TemporaryDirectory(prefix="otbench-threads-") as work:
        for workload in workloads(args.env, args.command, args.tasks, args.moves, args.iterations):
            if not args.no_warmup:
                print(f"{workload.env} {workload.command}: warm-up at {args.threads[-1]} threads", file=sys.stderr,
                      flush=True)
                warm = run_command(workload, args.threads[-1], server, store, Path(work), args)
                if warm.failure:
                    print(f"  warm-up failed: {warm.failure}", file=sys.stderr, flush=True)
            for threads in args.threads:
                row = run_command(workload, threads, server, store, Path(work), args)
                rows.append(row)
                print(f"{workload.env} {workload.command} at {threads} threads: {row.wall:.1f} s, {row.calls} calls, "
                      f"{row.peaks.processes} processes {row.failure}", file=sys.stderr, flush=True)
    with_ideals(rows, args.latency)
    text = table(rows, args.latency)
    print(text)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    run_id = log_to_mlflow(store, rows, text, args)
    print(f"MLflow: run {run_id} in {store}")
    if args.json:
        print(json.dumps({"rows": [row.figures() for row in rows]}))
    return 1 if any(row.failure for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
