"""The results ledger: every run a page cites, kept with the code, so results outlive the machine they ran on.

The ledger is a folder of the repository (``results/``, or ``$OTBENCH_RESULTS``) holding one small JSON file per
run, named by its definition key (``runs/KEY.json``): the definition, the code version it ran on, every task's
outcome, the final docs, each iteration's metrics, tokens by phase, seconds, the model server's measured speed
and the machine. An interrupted run is kept as far as it got, with what a resume needs (an optimize run's last
checkpoint, the calls its finished iterations saw and the test tasks it scored; an evaluation's finished tasks;
with finished tasks, the tokens spent so far), so a run longer than one machine's life continues on the next.
Trajectories and traces stay in MLflow.

Entries are made from MLflow runs (:func:`entry_of`), and made MLflow runs again on any checkout
(:func:`load`): ordinary runs with their params, metrics by step, intervals and artefacts, which the MLflow UI
compares and ``compare`` and ``reproduce`` reuse (:mod:`otbench.run.lookup` loads an entry when a definition it
is asked for has no run in the local store). The format is :data:`SCHEMA`; :func:`verify` checks a ledger.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import re
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from otbench import exits, mlflow_store
from otbench.errors import ConfigError, DataError, OtbenchError
from otbench.paths import results_dir
from otbench.run import checkpoints, naming, provenance, tracking, views
from otbench.run.definition import RunDefinition, split_sizes

if TYPE_CHECKING:
    from otbench.evals.outcomes import Outcomes

SCHEMA = "otbench.results/1"
"""The entries' format: its name and version, the first field of every entry."""
RUNS = "runs"
"""The ledger's folder of entries, one ``KEY.json`` a run."""
LEDGER_TAG = "otbench.ledger"
"""Tag of a run loaded from the ledger: the entry's key."""
KEPT_ARTIFACTS = ("outcomes.json", "tokens.json", "summary.json", "docs/final_docs.json", "invented_claims.json",
                  "doc_contamination.json", "val_candidates.json")
"""A run's small artefacts an entry keeps (what comparisons read: outcomes, tokens, final docs, claims)."""
KEPT_TAGS = ("setting", "chosen_docs", "mlflow.runName")
"""Tags an entry keeps beside those its definition makes."""
STATUSES = ("finished", "interrupted")
LEDGER = "ledger:"
"""How docs name the final docs an entry keeps: ``ledger:KEY`` (its key, or the eight characters or more of it people
quote), learned docs any checkout of the repository has (``evaluate --docs``, ``export``)."""
RUN_DOCS_ARTIFACT = "docs/final_docs.json"
"""Where a run keeps its final docs."""
_KEY = re.compile(r"^[0-9a-f]{20}$")


@dataclass(frozen=True)
class Entry:
    """One run as the ledger keeps it (see the module's docstring for each part)."""

    definition: RunDefinition
    status: str
    """``finished``, or ``interrupted`` (kept with what a resume needs)."""
    code: dict[str, Any]
    """The code version it ran on: ``commit`` (git) and ``version`` (the package's)."""
    machine: dict[str, Any]
    """Where it ran: ``cores`` (usable), ``processor``, ``system``."""
    started: int
    """When it started, in milliseconds since the epoch (as MLflow keeps it)."""
    seconds: float | None
    """Its wall time (a resumed run's over all its sessions); None where it did not log one."""
    model_speed: dict[str, float]
    """The model server's measured speed over the run: prompt and generated tokens a second, prefix-cache share."""
    tokens_by_phase: dict[str, Any]
    metrics: dict[str, float]
    """Every metric's last value."""
    history: dict[str, list[list[float]]]
    """Metrics logged by step (an optimizer's iterations): name -> ``[step, value]`` pairs."""
    params: dict[str, str]
    tags: dict[str, str]
    artifacts: dict[str, Any]
    """Its small artefacts by path (:data:`KEPT_ARTIFACTS`): JSON as data."""
    resume: dict[str, Any] = field(default_factory=dict)
    """Interrupted runs: the artefacts a resume reads, by path (JSON as data, JSON lines as lists)."""
    view: dict[str, Any] = field(default_factory=dict)
    """Its environment's metrics (``metrics``, ``primary``): the MLflow UI's saved view of the environment's runs
    is made from them when the entry is loaded."""

    @property
    def key(self) -> str:
        return self.definition.key

    def result_outcomes(self, sample: int = 0) -> Outcomes | None:
        """Its per-task outcomes on the split its result is, every task as one of ``sample``
        (:meth:`Outcomes.as_sample`); None for a run logged before they were kept."""
        from otbench.evals.outcomes import Outcomes

        kept = self.artifacts.get("outcomes.json")
        if not kept:
            return None
        return Outcomes.from_json(kept["splits"][kept["result"]], sample).as_sample(sample)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"schema": SCHEMA, "key": self.key, "status": self.status,
                                "definition": self.definition.to_json(), "code": self.code, "machine": self.machine,
                                "started": self.started, "seconds": self.seconds, "model_speed": self.model_speed,
                                "tokens_by_phase": self.tokens_by_phase, "metrics": self.metrics,
                                "history": self.history, "params": self.params, "tags": self.tags,
                                "artifacts": self.artifacts}
        if self.resume:
            data["resume"] = self.resume
        if self.view:
            data["view"] = self.view
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Entry:
        if data.get("schema") != SCHEMA:
            raise DataError(f"not a results entry of format {SCHEMA}: {str(data.get('schema'))[:80]!r}")
        return cls(definition=RunDefinition.from_json(data["definition"]), status=data["status"], code=data["code"],
                   machine=data["machine"], started=int(data["started"]), seconds=data.get("seconds"),
                   model_speed=data.get("model_speed", {}), tokens_by_phase=data.get("tokens_by_phase", {}),
                   metrics=data.get("metrics", {}), history=data.get("history", {}), params=data.get("params", {}),
                   tags=data.get("tags", {}), artifacts=data.get("artifacts", {}), resume=data.get("resume", {}),
                   view=data.get("view", {}))

    @property
    def name(self) -> str:
        """Its MLflow run name."""
        return str(self.tags.get("mlflow.runName") or f"{self.definition.method}-{self.key}")


def spent(entry: Entry) -> tuple[int, float | None]:
    """An entry's tokens (paid and cache-served) and wall seconds; an interrupted one's as far as it got: by what it
    spent when it last kept its finished tasks (an evaluation, or an optimize run scoring its test tasks), else by its
    last checkpoint."""
    from otbench.run.outcomes import SPENT

    if entry.tokens_by_phase:
        return tracking.cost_tokens(entry.tokens_by_phase), entry.seconds
    kept = entry.resume.get(SPENT)
    if kept:
        return tracking.cost_tokens(kept["tokens_by_phase"]), kept.get("seconds", entry.seconds)
    checkpoint = entry.resume.get("checkpoint.json", {})
    if checkpoint.get("tokens"):
        return tracking.cost_tokens(checkpoint["tokens"]), checkpoint.get("elapsed_seconds")
    return 0, None  # stopped before its first checkpoint: only its definition was kept


# -- reading and writing the folder -----------------------------------------------------------------------------
MAX_ENTRY_BYTES = 32 * 1024 * 1024
"""The largest entry file read (the largest kept run is under 1 MB): a bigger file is refused unread."""
MAX_DEPTH = 64
"""The deepest nesting an entry may hold (kept runs nest 11 deep): deeper data is refused, not walked."""
REQUIRED: dict[str, tuple[type, ...]] = {
    "schema": (str,), "key": (str,), "digest": (str,), "status": (str,), "definition": (dict,), "code": (dict,),
    "machine": (dict,), "started": (int,)}
"""The fields every entry has, with their JSON types."""
OPTIONAL: dict[str, tuple[type, ...]] = {
    "seconds": (int, float, type(None)), "model_speed": (dict,), "tokens_by_phase": (dict,), "metrics": (dict,),
    "history": (dict,), "params": (dict,), "tags": (dict,), "artifacts": (dict,), "resume": (dict,), "view": (dict,)}
"""The fields an entry may leave out (an older or an interrupted run's), with their JSON types."""
_LATEST_MILLISECONDS = 2**53
"""A start time at or beyond this is no time MLflow keeps (a float's exact integers end here)."""


def entry_path(key: str, root: Path | None = None) -> Path:
    return (root or results_dir()) / RUNS / f"{key}.json"


def digest_of(data: dict[str, Any]) -> str:
    """What an entry holds, as a hash: every field but the digest itself, in canonical JSON. Written with the entry
    and checked on every read, so an edit by hand (an outcome flipped, a figure retouched) is refused, not shown."""
    content = {name: value for name, value in data.items() if name != "digest"}
    return hashlib.sha256(json.dumps(content, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def read(path: Path, *, commit: bool = True) -> Entry:
    """One entry file, checked by its content; refused on one line naming the file when it is not a regular file
    of at most :data:`MAX_ENTRY_BYTES`, not an entry of :data:`SCHEMA`, or when its key is not its definition's
    (nor its file's name), its digest not its content's, or (``commit``) the commit it names is not in this
    repository (:func:`commit_problem`)."""
    data = _data(path)
    entry = _entry(path, data)
    problems = content_problems(path, data, entry, commit=commit)
    if problems:
        raise DataError(f"{path}: {problems[0]}")
    return entry


def _data(path: Path) -> dict[str, Any]:
    """An entry file's JSON, refused on one line: the file's type is checked before a byte is read (a FIFO would
    block a reader for ever), and its size and nesting before it is parsed or walked."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as error:
        raise DataError(f"{path}: cannot be read ({error.strerror or error})") from None
    try:
        status = os.fstat(handle)
        if not stat.S_ISREG(status.st_mode):
            raise DataError(f"{path}: not a regular file (an entry is a JSON file)")
        if status.st_size > MAX_ENTRY_BYTES:
            raise DataError(f"{path}: {status.st_size:,} bytes, more than an entry holds ({MAX_ENTRY_BYTES:,})")
        with os.fdopen(os.dup(handle), "rb") as stream:
            raw = stream.read(MAX_ENTRY_BYTES + 1)
    except OSError as error:
        raise DataError(f"{path}: cannot be read ({error.strerror or error})") from None
    finally:
        os.close(handle)
    if not raw.strip():
        raise DataError(f"{path}: empty, not a results entry")
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except RecursionError:
        raise DataError(f"{path}: nested deeper than an entry holds ({MAX_DEPTH} levels)") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise DataError(f"{path}: not JSON ({' '.join(str(error).split())[:160]})") from None
    if not isinstance(data, dict):
        raise DataError(f"{path}: a JSON {type(data).__name__}, not a results entry (an object)")
    problem = _shape_problem(data)
    if problem is not None:
        raise DataError(f"{path}: {problem}")
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number an entry holds")


def _shape_problem(data: dict[str, Any]) -> str | None:
    """Why ``data`` cannot be an entry (a field missing or of the wrong type, a number out of range, nesting too
    deep), or None: what readers of an entry rely on, checked once where it is read."""
    if data.get("schema") != SCHEMA:
        return f"not a results entry of format {SCHEMA} (its schema: {str(data.get('schema'))[:80]!r})"
    for name, kinds in (REQUIRED | OPTIONAL).items():
        if name not in data:
            if name in REQUIRED:
                return f"no {name!r} field"
            continue
        value = data[name]
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            wanted = " or ".join("null" if kind is type(None) else _JSON_NAMES.get(kind, kind.__name__)
                                 for kind in kinds)
            return f"its {name!r} is {_json_name(value)}, not {wanted}"
    if not 0 <= data["started"] < _LATEST_MILLISECONDS:
        return f"its 'started' ({str(data['started'])[:40]}) is no time in milliseconds since the epoch"
    seconds = data.get("seconds")
    if seconds is not None and not (math.isfinite(seconds) and seconds >= 0):
        return f"its 'seconds' ({seconds}) is not a duration"
    deepest = _depth(data)
    if deepest > MAX_DEPTH:
        return f"nested {deepest} levels deep, deeper than an entry holds ({MAX_DEPTH})"
    for name in ("metrics", "model_speed"):
        wrong = next((key for key, value in data.get(name, {}).items() if not _is_number(value)), None)
        if wrong is not None:
            return f"its {name} {wrong!r} is {_json_name(data[name][wrong])}, not a number"
    for name in ("params", "tags"):
        wrong = next((key for key, value in data.get(name, {}).items() if not isinstance(value, str)), None)
        if wrong is not None:
            return f"its {name} {wrong!r} is {_json_name(data[name][wrong])}, not text"
    for name, points in data.get("history", {}).items():
        if not isinstance(points, list) or not all(
                isinstance(point, list) and len(point) == 2 and all(_is_number(part) for part in point)
                for point in points):
            return f"its history of {name!r} is not a list of [step, value] pairs"
    commit = data["code"].get("commit")
    if commit is not None and not isinstance(commit, str):
        return f"its code commit is {_json_name(commit)}, not text"
    outcomes = data.get("artifacts", {}).get("outcomes.json")
    if outcomes is not None:
        return _outcomes_problem(outcomes)
    return None


def _outcomes_problem(outcomes: Any) -> str | None:
    """Why a kept ``outcomes.json`` is not one (what tables read of it), or None."""
    if not isinstance(outcomes, dict) or not isinstance(outcomes.get("splits"), dict) \
            or outcomes.get("result") not in outcomes["splits"]:
        return "its outcomes.json names no result split among its splits"
    for split, tasks in outcomes["splits"].items():
        if not isinstance(tasks, list) or not all(
                isinstance(task, dict) and isinstance(task.get("task"), (str, int)) and isinstance(task.get("metrics"), dict)
                for task in tasks):
            return f"its outcomes.json split {str(split)[:40]!r} is not a list of tasks with their metrics"
    return None


_JSON_NAMES = {dict: "an object", list: "a list", str: "text", int: "a whole number", float: "a number",
               bool: "true or false"}


def _json_name(value: Any) -> str:
    return "null" if value is None else _JSON_NAMES.get(type(value), type(value).__name__)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _depth(data: Any) -> int:
    """How deep ``data`` nests, walked without recursion (and no further than one level past :data:`MAX_DEPTH`)."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, level = stack.pop()
        deepest = max(deepest, level)
        if level > MAX_DEPTH:
            return deepest
        if isinstance(value, dict):
            stack.extend((item, level + 1) for item in value.values())
        elif isinstance(value, list):
            stack.extend((item, level + 1) for item in value)
    return deepest


def _entry(path: Path, data: dict[str, Any]) -> Entry:
    try:
        return Entry.from_json(data)
    except (ValueError, KeyError, TypeError, AttributeError, OverflowError, DataError) as error:
        raise DataError(f"{path}: its definition is not one otbench reads ({type(error).__name__}: "
                        f"{' '.join(str(error).split())[:160]})") from None


def content_problems(path: Path, data: dict[str, Any], entry: Entry, *, commit: bool = True) -> list[str]:
    """What an entry's content says against it, every problem one line: its key recomputed from its definition
    against the key it states and its file's name, its digest against what it holds, and (``commit``) the commit
    it names against this repository."""
    problems = []
    if data.get("key") != entry.key or path.stem != entry.key:
        stated = f"file name {path.stem}" if path.stem != entry.key else f"stated key {data.get('key')}"
        problems.append(f"its definition's key is {entry.key}, not its {stated} (misfiled or edited)")
    if data.get("digest") != digest_of(data):
        problems.append("its content does not match its digest (edited since it was written; add the run again "
                        "with otbench results add, or restore the file from git)")
    found = commit_problem(entry.code.get("commit")) if commit else None
    if found is not None:
        problems.append(found)
    return problems


DIRTY = "-dirty"
"""How a run's commit says the code it ran had uncommitted changes (:func:`otbench.run.provenance.code_commit`)."""


def is_dirty(entry: Entry) -> bool:
    """Whether the entry's run ran on uncommitted changes to the commit it names (pages mark such runs)."""
    return str(entry.code.get("commit") or "").endswith(DIRTY)


def commit_problem(commit: str | None) -> str | None:
    """Why the commit an entry names cannot be found in the repository the code comes from (None: it is there,
    or there is no git repository to ask, as in an installed package)."""
    if not commit:
        return "no code version (the commit its run ran on)"
    known = _commit_known(commit.removesuffix(DIRTY))
    if known is False:
        return f"names commit {commit[:12]}, which this repository does not have (run on code that was never kept)"
    return None


@functools.cache
def _commit_known(commit: str) -> bool | None:
    """Whether the repository of the running code has ``commit``; None when no git repository answers."""
    import subprocess

    if not re.fullmatch(r"[0-9a-f]{7,40}", commit):
        return False
    here = Path(__file__).resolve().parent
    try:
        done = subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=here, capture_output=True,
                              timeout=10, check=False)
        inside = subprocess.run(["git", "rev-parse", "--git-dir"], cwd=here, capture_output=True, timeout=10,
                                check=False) if done.returncode else done
    except (OSError, subprocess.TimeoutExpired):
        return None
    if inside.returncode:
        return None
    return done.returncode == 0


@dataclass(frozen=True)
class Scan:
    """The ledger's entries as read, and every file that could not be read as one, named with why."""

    entries: list[Entry]
    problems: list[str]


def scan(root: Path | None = None) -> Scan:
    """Every entry file of the ledger read and checked (:func:`read`), in file order: the good ones, and a problem
    line for each other (a bad file is one named problem, never a broken ledger)."""
    folder = (root or results_dir()) / RUNS
    found, problems = [], []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        if not _KEY.match(path.stem):
            problems.append(f"{path}: not an entry file (KEY.json, a 20-character hex key)")
            continue
        try:
            found.append(read(path))
        except DataError as error:
            problems.append(str(error))
    return Scan(found, problems)


def entries(root: Path | None = None) -> list[Entry]:
    """Every entry of the ledger, in key order (none where there is no ledger), refused on one line naming the
    first file that is not a sound entry: what reads the whole ledger (render, load) trusts all of it or nothing."""
    scanned = scan(root)
    if scanned.problems:
        more = f" (and {len(scanned.problems) - 1} more: otbench results verify)" if len(scanned.problems) > 1 else ""
        raise DataError(scanned.problems[0] + more)
    return scanned.entries


def starting_with(key: str, root: Path | None = None) -> list[Entry]:
    """The entries whose key begins with ``key`` (a whole key, or the eight characters or more people quote); a
    file of such a name that is not a sound entry is refused, naming it, while others do not matter."""
    folder = (root or results_dir()) / RUNS
    found = []
    for path in sorted(folder.glob(f"{key}*.json")) if folder.is_dir() and re.fullmatch(r"[0-9a-f]*", key) else []:
        if _KEY.match(path.stem):
            found.append(read(path))
    return found


def docs_entry(spec: str, root: Path | None = None) -> Entry:
    """The entry ``ledger:KEY`` names: the one finished entry whose key begins with KEY, keeping final docs; refused on
    one line otherwise."""
    key = spec.removeprefix(LEDGER)
    found = [entry for entry in starting_with(key, root) if entry.status == "finished"] if len(key) >= 8 else []
    if len(found) != 1:
        raise DataError(f"--docs {spec}: {len(found)} finished ledger entries' keys begin with {key!r}: give more of "
                        "the key" if found else f"--docs {spec}: no finished ledger entry's key begins with {key!r} "
                        "(eight characters or more of a key: otbench results list)")
    if RUN_DOCS_ARTIFACT not in found[0].artifacts:
        raise DataError(f"--docs {spec}: that entry keeps no final docs (an optimize run's entry does)")
    return found[0]


def canonical_docs(spec: str | None) -> str | None:
    """Docs as a run's definition names them: ``ledger:`` with the entry's whole key, anything else as given."""
    return f"{LEDGER}{docs_entry(spec).key}" if spec is not None and spec.startswith(LEDGER) else spec


def find(definition: RunDefinition, root: Path | None = None) -> Entry | None:
    """The entry of ``definition``, if the ledger has one; refused, naming its file, when that file is not a sound
    entry of it."""
    path = entry_path(definition.key, root)
    return read(path) if os.path.lexists(path) else None


def write(entry: Entry, root: Path | None = None, *, replace: bool = False) -> tuple[Path, str]:
    """Keep ``entry`` with its digest; returns its file and what happened (``added``, ``replaced``, ``kept``). A
    finished entry replaces an interrupted one of the same run; an entry never replaces a finished one unless
    ``replace``. A file there that is not a sound entry is replaced."""
    path = entry_path(entry.key, root)
    action = "added"
    if os.path.lexists(path):
        try:
            existing: Entry | None = read(path, commit=False)
        except DataError:
            existing = None
        if existing is not None and existing.status == "finished" and (not replace or entry.status != "finished"):
            return path, "kept"
        action = "replaced"
    data = json.loads(json.dumps(entry.to_json(), default=str))
    data["digest"] = digest_of(data)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    os.replace(temporary, path)
    return path, action


# -- from an MLflow run ------------------------------------------------------------------------------------------
def entry_of(run_id: str) -> Entry:
    """The entry of an MLflow run of the current store (an evaluation or an optimize run, finished or
    interrupted with something to resume); refused on one line otherwise."""
    import mlflow

    from otbench.envs.registry import make_environment
    from otbench.run.logged import definition_of

    try:
        run = mlflow.get_run(run_id)
    except mlflow.exceptions.MlflowException:
        raise ConfigError(f"no run {run_id!r} in this store") from None
    defined = definition_of(run)
    if defined is None:
        raise ConfigError(f"run {run_id} is not an evaluate or optimize run otbench can read")
    if "mlflow.parentRunId" in run.data.tags:
        raise ConfigError(f"run {run_id} is a sweep's trial: tuning, not a result to keep")
    with make_environment(defined.options) as env:  # sized as its splits say (a whole split: no seed)
        defined = defined.sized(split_sizes(env))
        view = {"metrics": list(env.metric_names), "primary": env.primary_metric}
    status = "finished" if run.info.status == "FINISHED" else "interrupted"
    resume = _resume_state(run, defined) if status == "interrupted" else {}
    if status == "interrupted" and not resume:
        raise ConfigError(f"run {run_id} stopped before anything a resume could continue from was kept")
    client = mlflow.MlflowClient()
    metrics = dict(run.data.metrics)
    history = {}
    for name in metrics:
        logged = client.get_metric_history(run_id, name)
        if len(logged) > 1 or any(metric.step for metric in logged):
            history[name] = [[metric.step, metric.value]
                             for metric in sorted(logged, key=lambda m: (m.step, m.timestamp))]
    artifacts = {path: found for path in KEPT_ARTIFACTS if (found := _artifact(run_id, path)) is not None}
    kept = artifacts.get("tokens.json") or artifacts.get("summary.json") or {}
    machine = run.data.tags.get(provenance.MACHINE_TAG)
    return Entry(definition=defined, status=status,
                 code={"commit": run.data.tags.get(provenance.CODE_TAG) or run.data.tags.get("mlflow.source.git.commit"),
                       "version": run.data.tags.get(provenance.VERSION_TAG)},
                 machine=json.loads(machine) if machine else {**provenance.this_machine(), "noted": "when added"},
                 started=int(run.info.start_time), seconds=metrics.get("seconds"),
                 model_speed=_model_speed(metrics), tokens_by_phase=dict(kept.get("tokens_by_phase", {})),
                 metrics=metrics, history=history, params=dict(run.data.params),
                 tags={name: run.data.tags[name] for name in KEPT_TAGS if name in run.data.tags},
                 artifacts=artifacts, resume=resume, view=view)


def _model_speed(metrics: dict[str, float]) -> dict[str, float]:
    """The server's figures over every phase (``llm_all_*``), else the agent's."""
    for phase in ("all", "agent"):
        found = {name: metrics[f"llm_{phase}_{name}"] for name in
                 ("prompt_tokens_per_second", "generation_tokens_per_second", "cache_share", "calls")
                 if f"llm_{phase}_{name}" in metrics}
        if found:
            return found
    return {}


def _artifact(run_id: str, path: str) -> Any | None:
    from otbench.run.outcomes import artifact_text

    text = artifact_text(run_id, path)
    if text is None:
        return None
    if path.endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text) if path.endswith(".json") else text


def _resume_state(run: Any, defined: RunDefinition) -> dict[str, Any]:
    """What a resume of an interrupted run reads: an optimize run's checkpoint, its definition, the calls its
    finished iterations saw and the test tasks it had scored; an evaluation's finished tasks; with either's finished
    tasks, what it had spent when it last kept them."""
    import mlflow

    from otbench.run.outcomes import PARTIAL, SPENT

    run_id = run.info.run_id
    if defined.command == "evaluate":
        finished = _artifact(run_id, PARTIAL) or _artifact(run_id, "trajectories.jsonl")
        spent = _artifact(run_id, SPENT)  # a run killed outright logged no tokens.json: the resume counts on from this
        return {PARTIAL: finished, **({SPENT: spent} if spent is not None else {})} if finished else {}
    state: dict[str, Any] = {}
    # PARTIAL and SPENT: a test scoring under way; the coverage pass's checkpoint, for another optimizer to go on from,
    # where the run went on beyond it (otherwise it is the checkpoint itself)
    for path in ("checkpoint.json", checkpoints.DEFINITION, PARTIAL, SPENT, checkpoints.COVERAGE_CHECKPOINT):
        found = _artifact(run_id, path)
        if found is not None and not (path == checkpoints.COVERAGE_CHECKPOINT and found == state.get("checkpoint.json")):
            state[path] = found
    last = state.get("checkpoint.json", {}).get(checkpoints.CHECKPOINT_STEP)
    if last is not None:
        client = mlflow.MlflowClient()
        observed: dict[str, list[Any]] = {}
        for step, folder in sorted((int(folder.path.rsplit("_", 1)[1]), folder.path)
                                   for folder in client.list_artifacts(run_id, "iterations")):
            calls = _artifact(run_id, f"{folder}/{checkpoints.OBSERVED}") if step <= int(last) else None
            if calls is not None:
                observed[f"{folder}/{checkpoints.OBSERVED}"] = calls
        state |= _judged(observed)
    return state


def _judged(observed: dict[str, list[Any]]) -> dict[str, list[dict[str, Any]]]:
    """Each step's calls (by artefact path, in step order), only those that show the invented-claims judge something
    new (:func:`~otbench.evals.invented.judged_calls`): all a resume reads them for. A coverage pass over a pool of
    1,000 tools makes hundreds of thousands of calls; an entry keeps a few per tool. A line that is no call (written
    before a huge output was previewed within its call) is left out."""
    from otbench.core.calls import CallResult
    from otbench.evals.invented import judged_calls

    read = [(path, entry, CallResult.from_dict(entry)) for path, calls in observed.items() for entry in calls
            if isinstance(entry, dict)]
    kept = {id(result) for _, result in judged_calls((str(entry.get("toolset", "")), result)
                                                     for _, entry, result in read)}
    judged: dict[str, list[dict[str, Any]]] = {path: [] for path in observed}
    for path, entry, result in read:
        if id(result) in kept:
            judged[path].append(entry)
    return judged


# -- into an MLflow store ----------------------------------------------------------------------------------------
LOADING_TAG = "otbench.ledger.loading"
"""Tag of a run an entry is being loaded as (when its loading began, in seconds since the epoch), removed once the run
holds all of it: a run that still carries it is no run of the entry, and one left by a load stopped outright is
deleted by a later load of the entry."""
STALE_LOADING_SECONDS = 600
"""A run still loading after this long was left by a load that died (loading an entry takes seconds): a later load
deletes it. Younger ones may be another worker's load under way, and are left alone."""


def loaded_run(entry: Entry) -> Any | None:
    """The run of the current store that ``entry`` was loaded as in full (FINISHED, or KILLED for an interrupted
    entry), if any."""
    import mlflow

    experiment = mlflow.get_experiment_by_name(mlflow_store.EXPERIMENT)
    if experiment is None:
        return None
    status = "FINISHED" if entry.status == "finished" else "KILLED"
    found = mlflow.MlflowClient().search_runs([experiment.experiment_id],
                                              f"tags.`{LEDGER_TAG}` = '{entry.key}' AND attributes.status = '{status}'",
                                              order_by=["attributes.start_time DESC"])
    return next((run for run in found if LOADING_TAG not in run.data.tags), None)


def half_loaded(run: Any) -> bool:
    """Whether ``run`` is an entry's load that did not finish (lookups skip it: it is no run of anything)."""
    return LOADING_TAG in run.data.tags


def load(entry: Entry) -> str:
    """Make ``entry`` a run of the current MLflow store (configured by the caller), as it was logged: params,
    tags, metrics by step, artefacts, start and end; an interrupted entry is a KILLED run a resume continues.
    Loading an entry twice gives the one run; returns its id.

    A load is whole or nothing: the run carries :data:`LOADING_TAG` until it holds everything, and a load stopped
    on the way (Ctrl-C, an error) ends and deletes its run, so no RUNNING or half-copied run is left behind; one
    stopped outright (SIGKILL) is deleted by the next load of the entry."""
    import mlflow

    done = loaded_run(entry)
    if done is not None:
        return str(done.info.run_id)
    client = mlflow.MlflowClient()
    experiment = mlflow.get_experiment_by_name(mlflow_store.EXPERIMENT)
    if experiment is None:
        raise DataError("no otbench experiment in this store: configure the store first")
    for earlier in client.search_runs([experiment.experiment_id], f"tags.`{LEDGER_TAG}` = '{entry.key}'"):
        began = earlier.data.tags.get(LOADING_TAG)
        if began is not None and (not began.isdigit() or time.time() - int(began) > STALE_LOADING_SECONDS):
            _discard(client, earlier.info.run_id)
    setting_name = entry.tags.get("setting", entry.definition.setting)
    tags = {**{name: _text(value) for name, value in entry.definition.tags(setting_name).items() if value is not None},
            **{name: value for name, value in entry.tags.items()}, LEDGER_TAG: entry.key, LOADING_TAG: f"{time.time():.0f}",
            provenance.MACHINE_TAG: json.dumps(entry.machine, sort_keys=True)}
    if entry.code.get("commit"):
        tags[provenance.CODE_TAG] = str(entry.code["commit"])
    if entry.code.get("version"):
        tags[provenance.VERSION_TAG] = str(entry.code["version"])
    run_id: str | None = None
    with exits.stops_held() as release:  # a stop while the run is created would leave it RUNNING, ended by nobody
        try:
            run_id = str(client.create_run(experiment.experiment_id, start_time=entry.started, tags=tags,
                                           run_name=entry.name).info.run_id)
            release()  # a stop that came during the creation is raised here, where the run is discarded
            _fill(client, run_id, entry, experiment.experiment_id)
            end = entry.started + int(1000 * (entry.seconds or 0))
            client.set_terminated(run_id, status="FINISHED" if entry.status == "finished" else "KILLED", end_time=end)
            client.delete_tag(run_id, LOADING_TAG)  # last: until then, every lookup skips the run
        except BaseException:
            if run_id is not None:
                _discard(client, run_id)
            raise
    return run_id


def _fill(client: Any, run_id: str, entry: Entry, experiment_id: str) -> None:
    """Everything an entry keeps, logged to its run."""
    from mlflow.entities import Metric, Param

    client.set_tag(run_id, naming.RUN_COLOR_TAG, naming.run_color(experiment_id, run_id))
    stamp, named = entry.started, _loaded_name(entry)
    metrics = [Metric(named(name), float(value), stamp, 0) for name, value in entry.metrics.items()
               if name not in entry.history]
    # MLflow's value of a metric is its point of the highest step, then the latest time, then the highest value: a
    # resumed run logs its summary at step 0 once per segment, so each point gets a later time than the one before
    metrics += [Metric(named(name), float(value), stamp + order, int(step)) for name, steps in entry.history.items()
                for order, (step, value) in enumerate(steps)]
    params = [Param(name, str(value)) for name, value in entry.params.items()]
    for start in range(0, len(metrics), 900):  # MLflow takes at most 1000 metrics, 100 params a batch
        client.log_batch(run_id, metrics=metrics[start:start + 900])
    for start in range(0, len(params), 90):
        client.log_batch(run_id, params=params[start:start + 90])
    for path, content in {**entry.artifacts, **entry.resume}.items():
        _log(client, run_id, path, content)
    if entry.view:
        views.share_view(entry.definition.env, tuple(entry.view["metrics"]), str(entry.view["primary"]))


def _loaded_name(entry: Entry) -> Callable[[str], str]:
    """The name a metric of ``entry`` is loaded under: an optimize run kept before its iterations' scores were named
    as the learning split's (a bare ``E`` beside ``result/E``) has them loaded as ``learning/E``, as runs log them
    now (:data:`otbench.run.tracking.LEARNING_PREFIX`)."""
    learned = set(entry.view.get("metrics", ())) | {"n"} if entry.definition.command == "optimize" else set()
    return lambda name: tracking.learning_name(name) if name in learned else name


def _discard(client: Any, run_id: str) -> None:
    """End a half-loaded run and delete it (a second stop during this leaves it tagged as loading, which every
    lookup skips)."""
    client.set_terminated(run_id, status="KILLED")
    client.delete_run(run_id)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _log(client: Any, run_id: str, path: str, content: Any) -> None:
    if path.endswith(".jsonl"):
        client.log_text(run_id, "".join(json.dumps(item, default=str) + "\n" for item in content), path)
    elif isinstance(content, str):
        client.log_text(run_id, content, path)
    else:
        client.log_dict(run_id, content, path)


# -- checks ------------------------------------------------------------------------------------------------------
def verify(root: Path | None = None) -> list[str]:
    """Everything wrong with the ledger, one line each (empty: nothing), every file checked to the end: files that
    are not entries of the format, keys that are not their definitions' or their file names', digests that are not
    their content's, commits this repository does not have, statuses, and a result metric its own per-task outcomes
    do not give."""
    from otbench.run.logged import definition_from_json

    folder = (root or results_dir()) / RUNS
    problems = []
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        if path.suffix != ".json" or not _KEY.match(path.stem):
            problems.append(f"{path.name}: not an entry file (KEY.json, a 20-character hex key)")
            continue
        try:
            data = _data(path)
            entry = _entry(path, data)
        except DataError as error:
            problems.append(f"{path.name}: {str(error).removeprefix(f'{path}: ')}")
            continue
        found = content_problems(path, data, entry)
        try:
            if definition_from_json(data["definition"]).key != entry.key:
                found.append("its definition reads back as another run")
        except (OtbenchError, ValueError, KeyError, TypeError, AttributeError) as error:
            found.append(f"its definition does not read back ({' '.join(str(error).split())[:120]})")
        if entry.status not in STATUSES:
            found.append(f"status {entry.status!r} is not one of {', '.join(STATUSES)}")
        if entry.status == "interrupted" and not entry.resume:
            found.append("interrupted, with nothing to resume from")
        if entry.status == "finished" and "outcomes.json" not in entry.artifacts:
            found.append("finished, with no per-task outcomes")
        found += _result_problems(entry)
        problems += [f"{path.name}: {problem}" for problem in dict.fromkeys(found)]
    return problems


def _result_problems(entry: Entry) -> list[str]:
    """Result metrics (``result/NAME``) that the entry's own per-task outcomes do not give: a plain mean of a
    per-task score that every task carries is recomputed (metrics of other rules, a ratio or a statistic, are the
    environment's to recompute; their outcomes are still held by the digest)."""
    kept = entry.artifacts.get("outcomes.json")
    if not kept or entry.status != "finished":
        return []
    tasks = kept["splits"][kept["result"]]
    rules = _declared_rules(entry.definition.env)
    problems = []
    for name, stated in sorted(entry.metrics.items()):
        metric = name.removeprefix(tracking.RESULT_PREFIX)
        if not name.startswith(tracking.RESULT_PREFIX) or metric in rules or not tasks or \
                not all(_is_number(task["metrics"].get(metric)) for task in tasks):
            continue
        mean = sum(float(task["metrics"][metric]) for task in tasks) / len(tasks)
        if not math.isclose(mean, stated, rel_tol=1e-9, abs_tol=1e-9):
            problems.append(f"its {name} is {stated:.6g}, while its {len(tasks)} tasks' outcomes give {mean:.6g} "
                            "(an outcome or the figure was edited)")
    return problems


def _declared_rules(env: str) -> set[str]:
    """The metrics environment ``env`` makes by a rule of its own rather than a plain mean of the same-named per-task
    score (Chess's shares of moves, Wild's micro-averages)."""
    from otbench.evals.outcomes import Mean

    if env == "chess":
        from otbench.envs.chess.metrics import METRIC_RULES
    elif env == "wild":
        from otbench.envs.wild.metrics import METRIC_RULES
    else:
        return set()
    return {name for name, rule in METRIC_RULES.items() if not (isinstance(rule, Mean) and rule.key == name)}
