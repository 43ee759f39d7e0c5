"""``python -m otbench.ui_check``: prove that a person sees the runs side by side in the MLflow UI.

It starts the server of ``python -m otbench.ui`` on a store, opens MLflow's compare-runs page in
headless Chromium (Debian ``chromium``, installed by ``scripts/setup.sh``), reads the rendered
page and checks that every run is a column with its metrics showing the values the store holds;
then it opens the newest rollout trace of those runs in the Traces tab and checks that its spans,
task and question are shown, and saves screenshots of both for an issue note. By default it checks the rows of the latest
``compare`` run (base, gold and the optimizer runs), else the latest optimize run of each
optimizer. Exit status 1 when the page does not show what the store holds.
"""

from __future__ import annotations

import html
import json
import math
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from otbench.cli import OneLineParser, positive_int, run_main
from otbench.errors import DataError, SetupError
from otbench.tracking import EXPERIMENT
from otbench.ui import server_command, server_environment, stop_server

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
_START_TIMEOUT = 120.0  # the UI takes about 20 s to start on an idle machine, more when the cores are busy
_RENDER_BUDGET_MS = 20_000
_WINDOW_HEIGHT = 2600
_SIGNIFICANT_DIGITS = 4  # the UI shows metric values to 4 significant digits (160.396 as 160.4)
_DECIMALS = 3  # ... and small ones to at most 3 decimals


@dataclass
class PageCheck:
    """What the compare-runs page showed for the runs it was given (``metric_keys``: the metric rows it
    rendered), and what was wrong with it."""

    url: str
    runs: list[dict[str, Any]]
    metric_keys: list[str]
    dom: str = field(repr=False)
    problems: list[str] = field(default_factory=list)
    screenshot: str | None = None

    @property
    def run_names(self) -> list[str]:
        return [run["info"]["run_name"] for run in self.runs]


def find_browser() -> str | None:
    """A headless-capable Chromium on PATH, or None."""
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def running_ui(directory: Path | None, port: int) -> Iterator[str]:
    """``otbench.ui``'s MLflow server for the duration of the block; yields its base URL."""
    log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in the finally below, after the server stopped
    process = subprocess.Popen(server_command(directory, port), env=server_environment(), stdout=log, stderr=log,
                               start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + _START_TIMEOUT
        while not _healthy(url):
            if process.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                tail = log.read().decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
                raise SetupError(f"the MLflow UI did not start on port {port}: {tail[0][:200]}")
            time.sleep(1)
        yield url
    finally:
        stop_server(process)
        log.close()


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _api(url: str, endpoint: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """A call to the ajax API the UI itself uses (GET with a query, or POST with a JSON body)."""
    if body is None:
        request = urllib.request.Request(f"{url}/ajax-api/2.0/mlflow/{endpoint}")
    else:
        request = urllib.request.Request(f"{url}/ajax-api/2.0/mlflow/{endpoint}", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def experiment_id(url: str) -> str:
    query = urllib.parse.urlencode({"experiment_name": EXPERIMENT})
    try:
        return _api(url, f"experiments/get-by-name?{query}")["experiment"]["experiment_id"]
    except urllib.error.HTTPError as exc:
        raise DataError(f"no {EXPERIMENT!r} experiment in this store: nothing to show") from exc


def _search(url: str, experiment: str, filter_string: str) -> list[dict[str, Any]]:
    body = {"experiment_ids": [experiment], "filter": filter_string, "order_by": ["attributes.start_time DESC"],
            "max_results": 200}
    return _api(url, "runs/search", body).get("runs", [])


def default_runs(url: str, experiment: str) -> list[dict[str, Any]]:
    """The rows of the latest compare run, else the latest finished optimize run of each optimizer."""
    compared = _search(url, experiment, "tags.command = 'compare' AND attributes.status = 'FINISHED'")
    for run in compared:
        ids = _params(run).get("run_ids", "")
        if ids:
            return [_api(url, f"runs/get?run_id={run_id}")["run"] for run_id in ids.split(",")]
    latest: dict[str, dict[str, Any]] = {}
    for run in _search(url, experiment, "tags.command = 'optimize' AND attributes.status = 'FINISHED'"):
        latest.setdefault(_tags(run).get("optimizer", ""), run)
    if not latest:
        raise DataError("no finished compare or optimize runs to show; run python -m otbench.compare first")
    return list(latest.values())


def _params(run: dict[str, Any]) -> dict[str, str]:
    return {p["key"]: p["value"] for p in run["data"].get("params", [])}


def _tags(run: dict[str, Any]) -> dict[str, str]:
    return {t["key"]: t["value"] for t in run["data"].get("tags", [])}


def _metrics(run: dict[str, Any]) -> dict[str, float]:
    return {m["key"]: m["value"] for m in run["data"].get("metrics", [])}


def compare_page(url: str, experiment: str, run_ids: list[str]) -> str:
    runs = json.dumps(run_ids, separators=(",", ":"))
    return f"{url}/#/compare-runs?runs={runs}&experiments={json.dumps([experiment])}"


def render(browser: str, page: str, *, width: int, height: int, screenshot: Path | None = None) -> str:
    """The page's DOM after its scripts ran (and a screenshot, when asked) from headless Chromium.

    The page's tables render only the cells in view, so the window is as wide as all run columns
    (next to the assistant panel) and as tall as the whole page (its parameter and metric tables
    scroll within a fixed height).
    """
    with tempfile.TemporaryDirectory() as profile:
        flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
                 f"--user-data-dir={profile}", f"--virtual-time-budget={_RENDER_BUDGET_MS}",
                 f"--window-size={width},{height}"]
        if screenshot is not None:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run([*flags, f"--screenshot={screenshot.resolve()}", page], capture_output=True, timeout=180,
                           check=True)
        result = subprocess.run([*flags, "--dump-dom", page], capture_output=True, timeout=180, check=True, text=True)
    return result.stdout


def metrics_grid(dom: str) -> tuple[list[str], list[str]]:
    """Metric names (rows) and shown values (row by row, one per run column) of the page's Metrics section."""
    start, end = dom.find(">Metrics</div>"), dom.find(">Artifacts</div>")
    if start < 0 or end < start:
        return [], []
    section = dom[start:end]
    keys = re.findall(r'title="Plot chart"[^>]*>([^<]+)<', section)
    values = re.findall(r'tooltip-data-state="[a-z-]+"[^>]*>([^<]*)<', section)
    return keys, values


def _shows(text: str, value: float | None) -> bool:
    if value is None:
        return text in ("NaN", "-", "")
    try:
        shown = float(text.replace(",", ""))
    except ValueError:
        return False
    return math.isclose(shown, value, rel_tol=1e-6, abs_tol=display_tolerance(value))


def display_tolerance(value: float) -> float:
    """How far a shown number may be from the stored one: half a unit of the last digit the UI shows,
    the 4th significant digit (or the 3rd decimal, whichever is coarser)."""
    if not math.isfinite(value) or value == 0:
        return 0.5 * 10**-_DECIMALS
    last_digit = math.floor(math.log10(abs(value))) - (_SIGNIFICANT_DIGITS - 1)
    return 0.5 * 10 ** max(last_digit, -_DECIMALS) + 1e-9


def check_page(dom: str, runs: list[dict[str, Any]]) -> list[str]:
    """Problems with the rendered compare page: runs not shown, metric rows the store does not hold, values
    that differ from the store.

    The metrics table scrolls within a fixed height, so only its first rows (in name order: the
    environment's metrics ``A E P`` come first) are rendered and checked; every run is checked.
    """
    problems = [f"run {run['info']['run_name']!r} is not on the page" for run in runs
                if run["info"]["run_name"] not in dom]
    keys, values = metrics_grid(dom)
    stored = sorted({key for run in runs for key in _metrics(run)})
    if not keys and stored:
        return [*problems, "the page shows no metrics table"]
    if keys != stored[: len(keys)]:
        return [*problems, f"the metrics table shows {keys}, the store holds {stored}"]
    if len(values) != len(keys) * len(runs):
        return [*problems, f"the metrics table shows {len(values)} values for {len(keys)} metrics x {len(runs)} runs"]
    for row, key in enumerate(keys):
        for column, run in enumerate(runs):
            value = _metrics(run).get(key)
            shown = values[row * len(runs) + column]
            if not _shows(shown, value):
                problems.append(f"{run['info']['run_name']}: {key} shows {shown!r}, the store holds {value}")
    return problems


def check_ui(url: str, browser: str, run_ids: list[str] | None = None, screenshot: Path | None = None) -> PageCheck:
    """Open the compare-runs page of ``run_ids`` (default: see the module doc) and check what it shows."""
    experiment = experiment_id(url)
    runs = ([_api(url, f"runs/get?run_id={run_id}")["run"] for run_id in run_ids] if run_ids
            else default_runs(url, experiment))
    page = compare_page(url, experiment, [run["info"]["run_id"] for run in runs])
    dom = render(browser, page, width=max(1400, 760 + 280 * len(runs)), height=_WINDOW_HEIGHT, screenshot=screenshot)
    keys, _ = metrics_grid(dom)
    return PageCheck(page, runs, keys, dom, check_page(dom, runs), str(screenshot) if screenshot else None)


def trace_page(url: str, experiment: str, trace_id: str) -> str:
    return f"{url}/#/experiments/{experiment}/traces?selectedEvaluationId={trace_id}"


def newest_rollout(url: str, experiment: str, run_ids: list[str]) -> Any | None:
    """The newest rollout trace of the first of ``run_ids`` that has one (runs logged before tracing have none)."""
    import mlflow

    mlflow.set_tracking_uri(url)
    for run_id in run_ids:
        for trace in mlflow.search_traces(locations=[experiment], run_id=run_id, return_type="list", max_results=50,
                                          order_by=["timestamp_ms DESC"]):
            if trace.data.spans and trace.data.spans[0].name == "rollout":
                return trace
    return None


def check_trace_page(dom: str, trace: Any) -> list[str]:
    """Problems with an opened trace: its spans, task and question must all be on the page."""
    root = trace.data.spans[0]
    expected = {f"span {span.name!r}": span.name for span in trace.data.spans}
    expected["its task id"] = str(root.inputs.get("task_id", "")) if isinstance(root.inputs, dict) else ""
    question = root.inputs.get("question", "") if isinstance(root.inputs, dict) else ""
    expected["its question"] = " ".join(str(question).split()[:6])
    return [f"trace {trace.info.trace_id}: {what} ({text!r}) is not on the page"
            for what, text in expected.items() if text and html.escape(text, quote=False) not in dom and text not in dom]


def check_traces(url: str, browser: str, run_ids: list[str], screenshot: Path | None) -> tuple[str | None, list[str]]:
    """Open the newest rollout trace of the runs in the Traces tab; its page URL (None: the runs have no
    traces) and the problems found."""
    experiment = experiment_id(url)
    trace = newest_rollout(url, experiment, run_ids)
    if trace is None:
        return None, []
    page = trace_page(url, experiment, trace.info.trace_id)
    dom = render(browser, page, width=2600, height=1400, screenshot=screenshot)
    return page, check_trace_page(dom, trace)


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m otbench.ui_check", description=__doc__.splitlines()[0])
    parser.add_argument("--mlruns", type=Path, default=None, help="MLflow store directory (default ./mlruns)")
    parser.add_argument("--port", type=positive_int, default=None, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--runs", default=None, help="comma-separated run ids to compare (default: see above)")
    parser.add_argument("--screenshot", type=Path, default=Path("reports/mlflow-compare-runs.png"),
                        help="where the screenshot goes (default reports/mlflow-compare-runs.png)")
    parser.add_argument("--trace-screenshot", type=Path, default=Path("reports/mlflow-trace.png"),
                        help="where the screenshot of an opened rollout trace goes (default reports/mlflow-trace.png)")
    args = parser.parse_args(argv)
    browser = find_browser()
    if browser is None:
        raise SetupError("no chromium on PATH; install it with scripts/setup.sh (apt-get install chromium)")
    run_ids = [run_id.strip() for run_id in args.runs.split(",") if run_id.strip()] if args.runs else None
    with running_ui(args.mlruns, args.port or free_port()) as url:
        result = check_ui(url, browser, run_ids, args.screenshot)
        trace_url, trace_problems = check_traces(url, browser, [run["info"]["run_id"] for run in result.runs],
                                                 args.trace_screenshot)
    print(f"page: {result.url}")
    print(f"runs side by side: {', '.join(result.run_names)}")
    print(f"metrics shown and checked: {', '.join(result.metric_keys)}   screenshot: {result.screenshot}")
    print(f"a rollout trace opened: {trace_url}   screenshot: {args.trace_screenshot}" if trace_url else
          "traces: these runs have none (logged before tracing, or with OTBENCH_TRACING=0)")
    problems = result.problems + trace_problems
    for problem in problems:
        print(f"PROBLEM: {problem}", file=sys.stderr)
    print("ok: every run and metric is shown with its stored value" + (", the trace with its spans" if trace_url else "")
          if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    run_main(main)
