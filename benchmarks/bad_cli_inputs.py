"""Bad command-line input to every command: how many were tried, and how many ended in a traceback, a hang or
an unclear end instead of one line on stderr and exit 2.

Every case runs the real command in a process of its own (``python -m otbench.NAME ...``, or the ``otbench``
face as ``python -m otbench NAME ...``) with a safety interlock: the embedded model's server is replaced by
one that ends the process with exit 97 instead of loading the model, so a bad input that is not refused
shows up as "accepted" (and never starts a model on a shared machine). No case needs a model: a refusal
must come before one loads. A store, cache and API keys of the case's own are used (none of the user's).

Each case expects one of four ends:

- ``refused`` (most): exit 2, exactly one line on stderr, no traceback, nothing on stdout;
- ``named``: a listing over a ledger with a bad file (``results list``, ``reproduce --status``): exit 1, every
  stderr line an ``error:`` naming the bad file, the other entries listed on stdout;
- ``reported``: ``results verify`` over a bad ledger: exit 1, the problems on stdout, one line each;
- ``accepted``: a valid input: exit 0, or 97 where it got as far as loading the model.

Verdicts: ``ok`` (as expected), ``traceback``, ``hang`` (no exit within ``--timeout`` seconds), ``silent`` (a bad
input that ended with exit 0 or got to the model), ``refused valid`` (a valid input that did not end as it
should), ``unclear`` (anything else). Every case has a store of its own: a refusal must write nothing, so the table
also counts the refused cases that created a store (``writes``) before they ended.

The ledger's cases (kind ``ledger``) each get a ledger of their own: three real entries of this repository's and
one bad file (misfiled under another entry's key, edited, malformed, a FIFO, a directory, a link to /dev/zero...).
``--signals`` also starts a first ``results load`` on a new store and sends SIGINT at each whole second of its use of
the store (1 s, 2 s... after the store's folder appears, until a load runs through), then checks that the store is one every command accepts: a second load
ends with exit 0, ``reproduce --status`` too, and no run is left RUNNING.

    python benchmarks/bad_cli_inputs.py                 # every case, two at a time
    python benchmarks/bad_cli_inputs.py --only ui --json
    python benchmarks/bad_cli_inputs.py --only results --signals
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
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
    expect: str = "refused"
    """``refused``, ``named``, ``reported`` or ``accepted`` (see the module's docstring)."""
    ledger: str | None = None
    """The bad file the case's own ledger holds beside three sound entries (:func:`_bad_file`); None: the shared,
    empty ledger."""


def _cases() -> list[Case]:
    cases: list[Case] = []

    def add(commands: str, kind: str, *argvs: str, expect: str = "refused", ledger: str | None = None) -> None:
        for command in commands.split():
            cases.extend(Case(f"otbench.{command}" if command != "otbench" else "otbench", argv, kind, expect, ledger)
                         for argv in argvs)

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
    # slots whose context needs more memory than a 24 GB machine has (64 slots, about 17 GB, fit when it is quiet)
    add("serve", "second round", "--slots 100000", "--slots 256", "--context-per-slot 100000000", "--threads 100000")
    # the third round: the results ledger, the stores of add and load, MCP and docs files, flags that do not apply
    for bad in BAD_FILES:
        add("results", "ledger", "list", expect="named", ledger=bad)
        add("results", "ledger", "verify", expect="reported", ledger=bad)
        add("results", "ledger", "show {badkey}", "load", "load {badkey}", "render --check", ledger=bad)
        add("results", "ledger", "show {goodkey}", expect="accepted", ledger=bad)
    for bad in GRID_BAD_FILES:
        add("reproduce", "ledger", "--status --only bfcl/names_desc", expect="named", ledger=bad)
        add("reproduce", "ledger", "--only bfcl/names_desc", ledger=bad)
    add("results", "ledger", "list", "verify", "show {goodkey}", "load {goodkey}", expect="accepted", ledger="none")
    add("reproduce", "ledger", "--status --only bfcl/names_desc", expect="accepted", ledger="none")
    for verb in ("load {goodkey}", "add --all"):
        add("results", "store", *(f"{verb} {store}" for store in (
            "--mlruns /proc/otbench-store", "--mlruns {file}", "--tracking-uri sqlite:///:memory:", "--tracking-uri sqlite://",
            "--tracking-uri http://127.0.0.1:{closed}", "--tracking-uri postgresql://127.0.0.1:{closed}/otbench",
            "--mlruns {readonly_store}", "--mlruns {corrupt_store}")), ledger="none")
    add("results", "store", "load {goodkey} --tracking-uri sqlite:///{dir}/store.db", expect="accepted", ledger="none")
    mcp = "--env mcp --mcp 'python {mcp_server}'"
    add("optimize", "mcp", "--env mcp --mcp no-such-program --tasks {tasks}", f"{mcp} --tasks {{tasks_no_answer}}",
        f"{mcp} --tasks {{tasks_empty}}", f"{mcp} --tasks {{tasks_deep}}", f"{mcp} --tasks {{fifo}}",
        "--env mcp --mcp 'python {mcp_twice}' --tasks {tasks}", f"{mcp} --tasks {{tasks}} --metric json:loads",
        "--env mcp --mcp-url 'http://[::1' --tasks {tasks}", "--env mcp --mcp-url 'http://127.0.0.1:x/mcp' --tasks {tasks}",
        f"{mcp} --tasks {{tasks}} --setting gold --gold-docs {{deepjson}}")
    add("optimize", "mcp", f"{mcp} --tasks {{tasks}}", expect="accepted")
    for docs in ("docs_twice", "docs_empty_parameter", "docs_spaced_parameter", "docs_list_description",
                 "docs_list_parameter_description", "docs_parameter_twice"):
        add("evaluate", "docs file", f"--docs {{{docs}}} --agent null")
        add("export", "docs file", f"{{{docs}}}")
    add("export", "docs file", "{docs}", expect="accepted")
    add("optimize", "does not apply", "--resume 0123456789abcdef --env pool", "--resume 0123456789abcdef --limit 3",
        "--resume 0123456789abcdef --optimizer gepa", "--resume 0123456789abcdef --setting names_params",
        "--resume 0123456789abcdef --batch-size 4", "--batch-size 4", "--env chess --request-values",
        "--env browsecomp --vary-repeats", "--mode online --env chess --describe-from-calls")
    add("optimize", "does not apply", "--env chess --batch-size 4", "--limit 2", expect="accepted")
    add("otbench", "does not apply", "--help", expect="accepted")
    add("evaluate optimize compare reproduce results export ui bench prepare serve", "help", "--help", expect="accepted")
    return cases


BAD_FILES = ("misfiled", "edited", "empty", "list", "null", "deep", "huge_started", "string_seconds",
             "list_definition", "object", "not_utf8", "nan", "fifo", "directory", "dev_zero", "oversized", "no_digest")
"""The bad files of the ledger's cases (:func:`_bad_file`)."""
GRID_BAD_FILES = ("misfiled_grid", "edited_grid")
"""Bad files at a grid cell's key: ``reproduce`` reads them as that cell's entry."""


@dataclass
class Outcome:
    case: Case
    verdict: str
    code: int | None
    stderr: str
    seconds: float
    store: bool
    """Whether the case created a store (its own ``OTBENCH_MLRUNS``) before it ended."""


SOUND = ("52211ec9cb5ef291534c", "0c47479576ce319e361c", "309cf03cb7c0777eaaa3")
"""Entries of this repository's ledger every ledger case holds (three small ones)."""
BAD_KEY, MISFILED_FROM, EDITED = "cab4aed7a5d5473dab34", "8b974d60b2dc24e7f61c", "8b974d60b2dc24e7f61c"
NAMES_DESC = {"base": "cee3501bc2065f1fd896", "gold": "bff58e1c762776603751", "+TO": "59c139ac30ce14abbc15"}
"""The grid's bfcl/names_desc cells, every one finished in the ledger."""


def _bad_file(runs: Path, bad: str) -> str:
    """Write the bad file ``bad`` into the ledger folder ``runs``; returns the key its file name states."""
    source = ROOT / "results" / "runs"
    if bad == "none":
        return SOUND[0]
    if bad in ("misfiled_grid", "edited_grid"):
        for key in NAMES_DESC.values():
            shutil.copy(source / f"{key}.json", runs / f"{key}.json")
        key = NAMES_DESC["base"]
        if bad == "misfiled_grid":  # gold's entry where base's should be
            shutil.copy(source / f"{NAMES_DESC['gold']}.json", runs / f"{key}.json")
        else:
            _edit(runs / f"{key}.json")
        return key
    path = runs / f"{BAD_KEY}.json"
    entry = (source / f"{MISFILED_FROM}.json").read_text()
    if bad == "misfiled":
        path.write_text(entry)
    elif bad == "edited":
        path = runs / f"{EDITED}.json"
        path.write_text(entry)
        _edit(path)
        return EDITED
    elif bad == "fifo":
        os.mkfifo(path)
    elif bad == "directory":
        path.mkdir()
    elif bad == "dev_zero":
        path.symlink_to("/dev/zero")
    elif bad == "oversized":
        with path.open("wb") as handle:
            handle.truncate(40 * 1024 * 1024)
    elif bad == "not_utf8":
        path.write_bytes(b'{"schema": "\xff\xfe"}')
    else:
        data = json.loads(entry)
        texts = {"empty": "", "list": "[]", "null": "null", "object": "{}", "deep": "[" * 100_000 + "]" * 100_000}
        if bad in texts:
            path.write_text(texts[bad])
            return BAD_KEY
        changed = {"huge_started": ("started", 1e400), "string_seconds": ("seconds", "abc"),
                   "list_definition": ("definition", []), "nan": ("seconds", float("nan"))}
        if bad == "no_digest":
            data.pop("digest", None)
        else:
            name, value = changed[bad]
            data[name] = value
        path.write_text(json.dumps(data))
    return BAD_KEY


def _edit(path: Path) -> None:
    """Flip one task's outcome in an entry, as a hand edit would."""
    data = json.loads(path.read_text())
    outcomes = data["artifacts"]["outcomes.json"]
    task = outcomes["splits"][outcomes["result"]][0]
    name = next(iter(task["metrics"]))
    task["metrics"][name] = 1.0 - float(task["metrics"][name])
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def _case_ledger(case: Case, place: Path) -> dict[str, str]:
    """A ledger and a page of the case's own under ``place``: the sound entries, the bad file, and a README whose
    rendered region cites the bad entry beside a sound one. Returns its placeholders."""
    runs = place / "results" / "runs"
    runs.mkdir(parents=True)
    for key in SOUND:
        shutil.copy(ROOT / "results" / "runs" / f"{key}.json", runs / f"{key}.json")
    bad = _bad_file(runs, case.ledger or "none")
    (place / "README.md").write_text(f"# A page\n\n<!-- results: runs/{bad[:8]} -->\n<!-- /results -->\n")
    return {"badkey": bad[:8], "goodkey": SOUND[1][:8]}


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
    mcp_twice = directory / "mcp_twice.py"
    mcp_twice.write_text(_TWICE_SERVER)
    tasks = [{"question": f"What does {fruit} cost?", "answer": price} for fruit, price in
             (("apple", "0.5"), ("pear", "0.75"), ("melon", "3.2"), ("plum", "0.3"))]
    (directory / "tasks.jsonl").write_text("".join(json.dumps(task) + "\n" for task in tasks))
    (directory / "tasks-no-answer.jsonl").write_text("".join(json.dumps({"question": task["question"]}) + "\n"
                                                            for task in tasks))
    (directory / "tasks-empty.jsonl").write_text("")
    (directory / "tasks-deep.jsonl").write_text('{"question": "q", "answer": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    os.mkfifo(directory / "a-fifo")
    tool = {"name": "function_1", "description": "Adds.", "parameters": [{"name": "a", "type": "integer"}]}
    shapes = {"docs_twice": [tool, tool], "docs_empty_parameter": [{**tool, "parameters": [{"name": ""}]}],
              "docs_spaced_parameter": [{**tool, "parameters": [{"name": "a b"}]}],
              "docs_list_description": [{**tool, "description": ["Adds."]}],
              "docs_list_parameter_description": [{**tool, "parameters": [{"name": "a", "description": ["x"]}]}],
              "docs_parameter_twice": [{**tool, "parameters": [{"name": "a"}, {"name": "a"}]}]}
    for name, tools in shapes.items():
        (directory / f"{name}.json").write_text(json.dumps({"format": "otbench.docs/1", "meta": {},
                                                            "toolsets": {"t1": tools}}))
    readonly = directory / "readonly-store"
    readonly.mkdir()
    (readonly / "mlflow.db").write_bytes(b"SQLite format 3\x00" + bytes(4096))
    locked = subprocess.run(["chattr", "+i", str(readonly / "mlflow.db")], capture_output=True, check=False)
    if locked.returncode:
        (readonly / "mlflow.db").chmod(0o444)  # read-only to anyone but root
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
            "busy": str(busy), "closed": str(closed), "mcp_server": str(ROOT / "tests" / "mcp_toy_server.py"),
            "mcp_twice": str(mcp_twice), "tasks": str(directory / "tasks.jsonl"),
            "tasks_no_answer": str(directory / "tasks-no-answer.jsonl"),
            "tasks_empty": str(directory / "tasks-empty.jsonl"), "tasks_deep": str(directory / "tasks-deep.jsonl"),
            "fifo": str(directory / "a-fifo"), "readonly_store": str(readonly),
            **{name: str(directory / f"{name}.json") for name in shapes}}


_TWICE_SERVER = """
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    method, number = request.get("method"), request.get("id")
    tool = {"name": "lookup", "description": "Looks up.", "inputSchema": {"type": "object", "properties": {}}}
    if method == "initialize":
        result = {"protocolVersion": request["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "twice", "version": "0"}}
    elif method == "tools/list":
        result = {"tools": [tool, tool]}
    elif number is None:
        continue
    else:
        result = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": number, "result": result}) + "\\n")
    sys.stdout.flush()
"""


def _unreadonly(places: dict[str, str]) -> None:
    subprocess.run(["chattr", "-i", str(Path(places["readonly_store"]) / "mlflow.db")], capture_output=True, check=False)


def _verdict(case: Case, code: int | None, out: str, err: str) -> str:
    if code is None:
        return "hang"
    if "Traceback (most recent call last)" in err:
        return "traceback"
    lines = [line for line in err.splitlines() if line.strip()]
    if case.expect == "accepted":
        return "ok" if code in (0, MODEL_WOULD_LOAD) else "refused valid"
    if code in (0, MODEL_WOULD_LOAD):
        return "silent"
    if case.expect == "refused" and code == 2 and len(lines) == 1 and "error" in lines[0] and not out.strip():
        return "ok"
    if case.expect == "named" and code == 1 and lines and all(line.startswith("error: ") and "/runs/" in line
                                                              for line in lines) and out.strip():
        return "ok"
    if case.expect == "reported" and code == 1 and not lines and out.strip().endswith("problem(s)"):
        return "ok"
    return "unclear"


def run_case(case: Case, number: int, places: dict[str, str], environment: dict[str, str], cwd: Path,
             timeout: float) -> Outcome:
    store = cwd / f"mlruns-{number}"
    own = dict(environment)
    if case.ledger is not None:  # a ledger and a page of its own, in a folder of its own
        cwd = cwd / f"case-{number}"
        places = {**places, **_case_ledger(case, cwd)}
        own["OTBENCH_RESULTS"] = str(cwd / "results")
    argv = [part.format(**places) for part in shlex.split(case.argv)]
    started = time.perf_counter()
    process = subprocess.Popen(["nice", "-n", "19", sys.executable, "-c", _GUARDED, case.command, *argv],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**own, "OTBENCH_MLRUNS": str(store)}, cwd=cwd, start_new_session=True)
    try:
        out, err = process.communicate(timeout=timeout)
        code: int | None = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        code = None
    return Outcome(case, _verdict(case, code, out, err), code, err.strip(), time.perf_counter() - started,
                   store.exists())


VERDICTS = ("ok", "traceback", "hang", "silent", "refused valid", "unclear")


@dataclass
class SignalTrial:
    second: int
    """When SIGINT was sent, in seconds after the first ``results load`` started."""
    code: int | None
    """How the interrupted load ended (None: it did not end within the timeout)."""
    accepted: bool
    """Whether the store it left is one every command accepts (see the module's docstring)."""
    why: str = ""


def signal_trials(places: dict[str, str], environment: dict[str, str], root: Path, timeout: float,
                  jobs: int) -> list[SignalTrial]:
    """SIGINT at each whole second of a first ``results load``'s use of a new store, until a load runs through; each
    left store then checked by the commands that must accept it."""
    def trial(second: int) -> SignalTrial:
        place = root / f"signal-{second}"
        own = {**environment, "OTBENCH_MLRUNS": str(place / "mlruns"), "OTBENCH_RESULTS": str(place / "results")}
        _case_ledger(Case("otbench.results", "", "signal", ledger="none"), place)
        command = [sys.executable, "-c", _GUARDED, "otbench.results", "load"]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=own,
                                   cwd=place, start_new_session=True)
        try:
            began = _first_use(place / "mlruns", process, timeout)
            process.wait(timeout=max(0.0, began + second - time.monotonic()))
            code: int | None = process.returncode  # it finished before the signal
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=timeout)
                code = process.returncode
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                return SignalTrial(second, None, False, "the interrupted load did not end")
        stderr = process.stderr.read() if process.stderr else ""
        if "Traceback (most recent call last)" in stderr:
            return SignalTrial(second, code, False, f"traceback: {stderr.strip().splitlines()[-1][:120]}")
        for argv in (["results", "load"], ["reproduce", "--status", "--only", "bfcl/names_desc"]):
            after = subprocess.run([sys.executable, "-c", _GUARDED, f"otbench.{argv[0]}", *argv[1:]], env=own,
                                   cwd=place, capture_output=True, text=True, timeout=timeout, check=False)
            if after.returncode != 0:
                return SignalTrial(second, code, False, f"{' '.join(argv)} then: exit {after.returncode}: "
                                                        f"{after.stderr.strip()[-160:]}")
        running = _running_runs(place / "mlruns" / "mlflow.db")
        if running:
            return SignalTrial(second, code, False, f"{running} run(s) left RUNNING")
        return SignalTrial(second, code, True)

    found: list[SignalTrial] = []
    second = 1
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        while not any(trial.code == 0 for trial in found):  # until a load finished before its signal
            found += pool.map(trial, range(second, second + jobs))
            second += jobs
    return found


def _first_use(store: Path, process: subprocess.Popen[str], timeout: float) -> float:
    """When the command began to use its store (its folder appeared: the imports before it take seconds or a minute,
    by the machine's load), so that the signals fall at each second of the store's first use, on any machine."""
    deadline = time.monotonic() + timeout
    while not store.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    return time.monotonic()


def _running_runs(database: Path) -> int:
    """Runs of the store left RUNNING and not deleted (a load stopped half way must leave none)."""
    import sqlite3

    if not database.exists():
        return 0
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
        return int(connection.execute("SELECT COUNT(*) FROM runs WHERE status = 'RUNNING' AND "
                                      "lifecycle_stage = 'active'").fetchone()[0])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/bad_cli_inputs.py", description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=None, help="only the cases of this command (evaluate, ui, otbench, ...)")
    parser.add_argument("--kind", default=None, help="only the cases of this kind (ledger, store, mcp, ...)")
    parser.add_argument("--timeout", type=float, default=180, help="seconds before a case counts as a hang")
    parser.add_argument("--jobs", type=int, default=2, help="cases run at a time (default 2)")
    parser.add_argument("--signals", action="store_true", help="also SIGINT at each second of a first results load")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    args = parser.parse_args(argv)
    cases = [case for case in _cases() if args.only in (None, case.command.removeprefix("otbench."))
             and args.kind in (None, case.kind)]
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
        try:
            with ThreadPoolExecutor(max_workers=args.jobs) as pool:
                outcomes = list(pool.map(lambda numbered: run_case(numbered[1], numbered[0], places, environment, root,
                                                                   args.timeout), enumerate(cases)))
            trials = signal_trials(places, environment, root, args.timeout, args.jobs) if args.signals else []
        finally:
            _unreadonly(places)
    counts = {verdict: sum(o.verdict == verdict for o in outcomes) for verdict in VERDICTS}
    writes = [o for o in outcomes if o.store and o.case.expect != "accepted"]
    failed = [o for o in outcomes if o.verdict != "ok" or o in writes]
    broken = [trial for trial in trials if not trial.accepted]
    if args.json:
        print(json.dumps({"tried": len(outcomes), **counts, "writes": len(writes),
                          "signals": {"tried": len(trials), "broken": len(broken)},
                          "failed": [{"command": o.case.command, "argv": o.case.argv, "ledger": o.case.ledger,
                                      "verdict": o.verdict, "code": o.code, "store": o.store,
                                      "stderr": o.stderr[-400:]} for o in failed],
                          "broken": [vars(trial) for trial in broken]}))
    else:
        print(f"{'tried':>6} {'ok':>5} {'tracebacks':>11} {'hangs':>6} {'silent':>7} {'valid refused':>14} "
              f"{'unclear':>8} {'writes':>7}")
        print(f"{len(outcomes):>6} {counts['ok']:>5} {counts['traceback']:>11} {counts['hang']:>6} {counts['silent']:>7} "
              f"{counts['refused valid']:>14} {counts['unclear']:>8} {len(writes):>7}")
        for outcome in failed:
            last = outcome.stderr.splitlines()[-1] if outcome.stderr else "(nothing on stderr)"
            store = " (created a store)" if outcome.store else ""
            ledger = f" [ledger: {outcome.case.ledger}]" if outcome.case.ledger else ""
            print(f"  {outcome.verdict:<9} exit {outcome.code}{store}  {outcome.case.command} {outcome.case.argv}"
                  f"{ledger}  -> {last[:160]}")
        if trials:
            print(f"SIGINT during a first results load: {len(trials)} seconds tried, {len(broken)} left a store some "
                  "command refused or a run RUNNING")
            for trial in broken:
                print(f"  at {trial.second} s (exit {trial.code}): {trial.why}")
    return 1 if failed or broken else 0


if __name__ == "__main__":
    sys.exit(main())
