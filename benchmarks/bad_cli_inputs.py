"""Bad command-line input to every command: how many were tried, and how many ended in a traceback, a hang or
an unclear end instead of one line on stderr and exit 2.

Every case runs the real command in a process of its own (``python -m otbench.NAME ...``, or the ``otbench``
face as ``python -m otbench NAME ...``) with a safety interlock: the embedded model's server is replaced by
one that ends the process with exit 97 instead of loading the model, so a bad input that is not refused
shows up as "accepted" (and never starts a model on a shared machine). No case needs a model: a refusal
must come before one loads. A store, cache and API keys of the case's own are used (none of the user's).

Verdicts: ``ok`` (exit 2, exactly one line on stderr, no traceback, nothing on stdout), ``traceback``,
``hang`` (no exit within ``--timeout`` seconds), ``unclear`` (anything else: exit 0, several lines, another
exit code, the model would have loaded). Every case has a store of its own: a refusal must write nothing, so the
table also counts the cases that created a store (``stores``) before they ended.

    python benchmarks/bad_cli_inputs.py                 # every case, two at a time
    python benchmarks/bad_cli_inputs.py --only ui --json
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODEL_WOULD_LOAD = 97

# The interlock: the server class every command uses to load the embedded model ends the process instead.
_GUARDED = f"""
import runpy, sys
from otbench.llm import server

def refuse(self):
    sys.stderr.write("AUDIT: the embedded model would load here\\n")
    sys.stderr.flush()
    import os
    os._exit({MODEL_WOULD_LOAD})

server.EmbeddedServer.__enter__ = refuse
module = sys.argv[1]
sys.argv = [module, *sys.argv[2:]]
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


@dataclass(frozen=True)
class Case:
    command: str
    """The module run (``otbench.evaluate``), or ``otbench`` for the console face."""
    argv: str
    """The arguments, shell-quoted, with ``{placeholders}`` for the case's files and ports."""
    kind: str
    """What is wrong with it, for the table by kind."""


def _cases() -> list[Case]:
    cases: list[Case] = []

    def add(commands: str, kind: str, *argvs: str) -> None:
        for command in commands.split():
            cases.extend(Case(f"otbench.{command}" if command != "otbench" else "otbench", argv, kind) for argv in argvs)

    runs = "evaluate optimize compare"
    add(runs, "number", "--limit 0", "--limit -3", "--limit ten", "--limit 1.5", "--seed x", "--num-threads 0",
        "--threads 0", "--temperature hot", "--temperature nan", "--temperature -1", "--temperature inf")
    add(runs, "name", "--env atari", "--setting names_everything", "--env chess --setting gold",
        "--env browsecomp --setting gold", "--env chess --toolset nope", "--env browsecomp --toolset nope",
        "--toolset phase", "--embedded-model qwen-70b", "--lm no-such-provider-model", "--lm ''")
    add(runs, "environment option", "--call-timeout 0", "--call-timeout nan", "--max-calls-per-reply 0",
        "--max-output-bytes -1", "--env chess --max-moves 0", "--env chess --exploration-moves x",
        "--env chess --stockfish /no/such/stockfish", "--env browsecomp --retriever nope",
        "--env browsecomp --snippet-chars 5", "--env browsecomp --max-calls 0", "--env browsecomp --max-calls x",
        "--faults nope", "--faults flaky-2", "--faults flaky-0.1@nowhere", "--faults /no/such/policy.json",
        "--faults {badpolicy}", "--faults {badjson_policy}")
    add(runs, "file or server", "--gguf /no/such/model.gguf", "--gguf {notgguf}", "--api-base gpu-box:8000",
        "--api-base http://127.0.0.1:{closed}", "--mlruns {file}", "--tracking-uri nowhere",
        "--tracking-uri http://127.0.0.1:{closed}", "--env chess --engine-cache {dir}")
    add(runs, "unknown option", "--nope", "extra-argument")
    add("evaluate", "evaluate", "--agent genius", "--docs /no/such/docs.json --agent null",
        "--docs {badjson} --agent null", "--docs {notdocs} --agent null", "--docs runs:/0123456789abcdef --agent null",
        "--docs prompts:/no.such.prompt@latest --agent null")
    add("optimize", "optimize", "--optimizer magic", "--mode sideways", "--mode offline", "--variant fancy",
        "--iterations 0", "--p2p-samples 0", "--optimizer gepa --gepa-budget 0", "--resume 0123456789abcdef",
        "--resume abc --sweep 2", "--sweep 0", "--optimizer easytool --sweep 2", "--token-budget 0",
        "--optimizer play2prompt --sweep 2 --storage nope://x", "--test-limit 0", "--out {file}",
        "--optimizer toolobserver --p2p-samples 0")
    add("compare", "compare", "--optimizers magic", "--optimizers ,", "--plots {file}", "--p2p-samples 0",
        "--test-limit 0")
    add("export", "export", "", "/no/such/docs.json", "{badjson}", "{notdocs}", "{docs} --format yaml",
        "{docs} --toolset nope", "runs:/0123456789abcdef", "prompts:/no.such.prompt@latest", "{docs} --out {dir}",
        "{docs} --out {file}/tools.json", "runs:/x --tracking-uri http://127.0.0.1:{closed}", "{docs} --nope")
    add("ui", "ui", "--port 70000", "--port 0", "--port web", "--port {busy}", "--mlruns {file}", "--nope")
    add("bench", "bench", "", "nope", "retrieval --retriever nope", "oracle --env atari", "oracle --limit 0",
        "llm --requests 0", "llm --max-tokens 0", "oracle --split nope", "llm --lm no-such-provider-model",
        "oracle --env chess --setting gold", "retrieval --env browsecomp --max-calls 0")
    add("prepare", "prepare", "--embedded-model qwen-70b", "--nope", "extra-argument")
    add("serve", "serve", "--slots 0", "--port 70000", "--port web", "--port {busy}", "--gguf /no/such/model.gguf",
        "--gguf {notgguf}", "--embedded-model qwen-70b", "--context-per-slot 0", "--api-key ''", "--threads 0",
        "--host ''", "--host no-such-host.invalid", "--nope")
    add("otbench", "console", "", "nope", "--nope", "evaluate --limit 0", "optimize --optimizer magic",
        "compare --optimizers magic", "export", "ui --port 70000", "bench nope", "prepare --nope", "serve --slots 0",
        "evaluate --env chess --setting gold")
    # the second round: what a new user tried
    add(runs, "second round", "--api-base 'http://[::1'", "--setting ''", "--max-moves 5", "--env chess --retriever bm25",
        "--mlruns {corrupt_store}", "--mlruns {empty_store}")
    add("evaluate", "second round", "--docs {deepjson} --agent null", "--docs {listtoolsets} --agent null",
        "--agent null --lm notaprovider/x", "--agent oracle --docs {deepjson}")
    add("export", "second round", "{deepjson}", "{listtoolsets}", "{nullname}")
    add("compare", "second round", "--seeds -1", "--optimizers toolobserver,,gepa", "--seeds 1,,2",
        "--plan --base-rate 0.5 --difference 2", "--plan --base-rate 0.5 --difference -0.7",
        "--plan --docs x", "--plan --base-rate 0.5 --difference 0.1 --mlruns {corrupt_store}")
    add("optimize", "second round", "--sweep 2 --study-name ''", "--sweep 2 --storage ''")
    add("reproduce", "second round", "--only '' --status", "--only ',' --status", "--seeds -1 --status",
        "--num-threads 0", "--limits bfcl=0")
    add("results", "second round", "", "show nope", "add", "load nope", "--results {file} list")
    add("bench", "second round", "retrieval --env bfcl", "slots --slots 0", "slots --slots 1,,2", "slots --slots 512")
    add("serve", "second round", "--slots 100000", "--slots 64", "--context-per-slot 100000000", "--threads 100000")
    return cases


@dataclass
class Outcome:
    case: Case
    verdict: str
    code: int | None
    stderr: str
    seconds: float
    store: bool
    """Whether the case created a store (its own ``OTBENCH_MLRUNS``) before it ended."""


def _fixtures(directory: Path, busy: int, closed: int) -> dict[str, str]:
    (directory / "a-file").write_text("x")
    (directory / "a-directory").mkdir()
    (directory / "bad.json").write_text("{not json")
    (directory / "not-docs.json").write_text('{"a": 1}')
    (directory / "not-a-model.gguf").write_bytes(b"not a model")
    (directory / "bad-policy.json").write_text('{"rates": {"nope": 2}}')
    (directory / "broken-policy.json").write_text("{broken")
    (directory / "docs.json").write_text(json.dumps({
        "format": "otbench.docs/1", "meta": {}, "toolsets": {"t1": [{"name": "function_1", "description": "Adds."}]}}))
    (directory / "deep.json").write_text("[" * 200_000 + "]" * 200_000)
    (directory / "list-toolsets.json").write_text(json.dumps({"format": "otbench.docs/1", "meta": {}, "toolsets": []}))
    (directory / "null-name.json").write_text(json.dumps({
        "format": "otbench.docs/1", "meta": {}, "toolsets": {"t1": [{"name": None, "description": "Adds."}]}}))
    for store, content in (("corrupt-store", b"SQLite format 3\x00" + b"\xff" * 4096), ("empty-store", b"")):
        (directory / store / "artifacts").mkdir(parents=True)
        (directory / store / "artifacts" / "kept.txt").write_text("an artefact a user keeps")
        (directory / store / "mlflow.db").write_bytes(content)
    return {"file": str(directory / "a-file"), "dir": str(directory / "a-directory"),
            "deepjson": str(directory / "deep.json"), "listtoolsets": str(directory / "list-toolsets.json"),
            "nullname": str(directory / "null-name.json"), "corrupt_store": str(directory / "corrupt-store"),
            "empty_store": str(directory / "empty-store"),
            "badjson": str(directory / "bad.json"), "notdocs": str(directory / "not-docs.json"),
            "notgguf": str(directory / "not-a-model.gguf"), "badpolicy": str(directory / "bad-policy.json"),
            "badjson_policy": str(directory / "broken-policy.json"), "docs": str(directory / "docs.json"),
            "busy": str(busy), "closed": str(closed)}


def _verdict(code: int | None, out: str, err: str) -> str:
    if code is None:
        return "hang"
    if "Traceback (most recent call last)" in err:
        return "traceback"
    lines = [line for line in err.splitlines() if line.strip()]
    if code == 2 and len(lines) == 1 and "error" in lines[0] and not out.strip():
        return "ok"
    return "unclear"


def run_case(case: Case, number: int, places: dict[str, str], environment: dict[str, str], cwd: Path,
             timeout: float) -> Outcome:
    argv = [part.format(**places) for part in shlex.split(case.argv)]
    store = cwd / f"mlruns-{number}"
    started = time.perf_counter()
    process = subprocess.Popen(["nice", "-n", "19", sys.executable, "-c", _GUARDED, case.command, *argv],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**environment, "OTBENCH_MLRUNS": str(store)}, cwd=cwd, start_new_session=True)
    try:
        out, err = process.communicate(timeout=timeout)
        code: int | None = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        code = None
    return Outcome(case, _verdict(code, out, err), code, err.strip(), time.perf_counter() - started, store.exists())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/bad_cli_inputs.py", description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=None, help="only the cases of this command (evaluate, ui, otbench, ...)")
    parser.add_argument("--timeout", type=float, default=180, help="seconds before a case counts as a hang")
    parser.add_argument("--jobs", type=int, default=2, help="cases run at a time (default 2)")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    args = parser.parse_args(argv)
    cases = [case for case in _cases() if args.only in (None, case.command.removeprefix("otbench."))]
    with tempfile.TemporaryDirectory(prefix="otbench-bad-cli-") as directory, \
            socket.socket() as busy, socket.socket() as closed:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        closed.bind(("127.0.0.1", 0))  # bound, never listening: connections to it are refused
        root = Path(directory)
        places = _fixtures(root, busy.getsockname()[1], closed.getsockname()[1])
        environment = {key: value for key, value in os.environ.items()
                       if not key.endswith("_API_KEY") and not key.startswith(("OTBENCH_", "MLFLOW_"))}
        environment.update({"PYTHONPATH": str(ROOT), "OTBENCH_RESULTS": str(root / "results"),
                            "OTBENCH_CACHE": os.environ.get("OTBENCH_CACHE", str(Path.home() / ".cache" / "otbench")),
                            "OTBENCH_TRACING": "0"})
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            outcomes = list(pool.map(lambda numbered: run_case(numbered[1], numbered[0], places, environment, root,
                                                               args.timeout), enumerate(cases)))
    counts = {verdict: sum(o.verdict == verdict for o in outcomes) for verdict in ("ok", "traceback", "hang", "unclear")}
    stores = sum(o.store for o in outcomes)
    failed = [o for o in outcomes if o.verdict != "ok" or o.store]
    if args.json:
        print(json.dumps({"tried": len(outcomes), **counts, "stores": stores,
                          "failed": [{"command": o.case.command, "argv": o.case.argv, "verdict": o.verdict,
                                      "code": o.code, "store": o.store, "stderr": o.stderr[-400:]} for o in failed]}))
    else:
        print(f"{'tried':>6} {'ok':>5} {'tracebacks':>11} {'hangs':>6} {'unclear':>8} {'stores':>7}")
        print(f"{len(outcomes):>6} {counts['ok']:>5} {counts['traceback']:>11} {counts['hang']:>6} {counts['unclear']:>8} "
              f"{stores:>7}")
        for outcome in failed:
            last = outcome.stderr.splitlines()[-1] if outcome.stderr else "(nothing on stderr)"
            store = " (created a store)" if outcome.store else ""
            print(f"  {outcome.verdict:<9} exit {outcome.code}{store}  {outcome.case.command} {outcome.case.argv}  "
                  f"-> {last[:160]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
