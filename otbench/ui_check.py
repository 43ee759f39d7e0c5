"""``python -m otbench.ui_check``: prove that a person sees the runs side by side in the MLflow UI.

It starts the server of ``python -m otbench.ui`` on a store and reads the pages a person opens in
headless Chromium (Debian ``chromium``, installed by ``scripts/setup.sh``), saving a screenshot of each:

- MLflow's compare-runs page: every run is a column with its metrics showing the values the store
  holds, and the parallel-coordinates plot opens on the runs' ``method``;
- the runs table of the environment's saved view: every run is a row showing its result metrics
  (``result/E``...) with their stored values, and no two runs have the same colour;
- the chart view of that saved view: the results section with a chart per result metric;
- the newest rollout trace of those runs in the Traces tab: its spans, task and question are shown;
- the newest ``docs_diff.md`` of an optimize run among them, rendered on its run's Artifacts tab.

By default it checks the rows of the latest ``compare`` run (base, gold and the optimizer runs),
else the latest optimize run of each optimizer. Exit status 1 when a page does not show what the
store holds.
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

from otbench.arguments import OneLineParser, positive_int
from otbench.errors import DataError, SetupError
from otbench.exits import run_main
from otbench.mlflow_store import EXPERIMENT
from otbench.outputs import OUTPUT_FILE, STORE_DIRECTORY, check_outputs
from otbench.run.tracking import INTERVAL_SUFFIXES, RESULT_PREFIX
from otbench.run.views import view_url, viewed_environments
from otbench.ui import server_command, server_environment, stop_server

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
_START_TIMEOUT = 120.0  # the UI takes about 20 s to start on an idle machine, more when the cores are busy
_RENDER_BUDGET_MS = 20_000
_SLOW_PAGE_BUDGET_MS = 60_000  # the chart view loads its plotting library on first use, a trace opens in a drawer
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


def render(browser: str, page: str, *, width: int, height: int, screenshot: Path | None = None,
           budget_ms: int = _RENDER_BUDGET_MS) -> str:
    """The page's DOM after its scripts ran (and a screenshot of that same moment, when asked) from headless
    Chromium, in one run: a second run could catch the page at another stage (a trace's drawer not yet open).

    The page's tables render only the cells in view, so the window is as wide as all run columns
    (next to the assistant panel) and as tall as the whole page (its parameter and metric tables
    scroll within a fixed height).
    """
    with tempfile.TemporaryDirectory() as profile:
        command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                   "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
                   f"--user-data-dir={profile}", f"--virtual-time-budget={budget_ms}",
                   f"--window-size={width},{height}", "--dump-dom"]
        if screenshot is not None:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            command.append(f"--screenshot={screenshot.resolve()}")
        result = subprocess.run([*command, page], capture_output=True, timeout=240, check=True, text=True)
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
    return PageCheck(page, runs, keys, dom, check_page(dom, runs) + check_plot(dom, runs),
                     str(screenshot) if screenshot else None)


def plot_axes(dom: str) -> tuple[list[str], list[str]]:
    """The parameters and metrics the compare page's parallel-coordinates plot shows (its two selectors)."""
    def chosen(label: str, until: str) -> list[str]:
        start = dom.find(f">{label}</div>")
        end = dom.find(until, start) if start >= 0 else -1
        return re.findall(r'selection-item-content">([^<]*)<', dom[start:end]) if start >= 0 else []

    return chosen("Parameters:", "Metrics:</div>"), chosen("Metrics:", "Clear All")


def check_plot(dom: str, runs: list[dict[str, Any]]) -> list[str]:
    """The parallel-coordinates plot must open on what tells the runs apart: their ``method``, when it differs
    between them. MLflow opens the plot on params whose values differ between the runs; with one run (a store
    with a single optimize run), or runs of one method, nothing differs and it shows the first params by name."""
    params, _ = plot_axes(dom)
    methods = {_params(run).get("method") for run in runs}
    if len(runs) > 1 and len(methods) > 1 and "method" not in params:
        return [f"the parallel-coordinates plot opens on {params}, not on the runs' method"]
    return []


def table_rows(dom: str) -> dict[str, dict[str, str]]:
    """The runs table's rows by run id: each cell's text by column id, and ``colour``, the run's colour."""
    rows: dict[str, dict[str, str]] = {}
    for row in re.finditer(r'role="row"[^>]*row-id="([0-9a-f]+)"[^>]*>(.*?)(?=<[^<>]*role="row"|\Z)', dom, re.DOTALL):
        cells = rows.setdefault(row.group(1), {})
        cell_pattern = r'col-id="([^"]+)"[^>]*>(.*?)(?=<div class="ag-cell |\Z)'
        for cell in re.finditer(cell_pattern, row.group(2), re.DOTALL):
            cells[html.unescape(cell.group(1))] = html.unescape(re.sub(r"<[^>]+>", "", cell.group(2))).strip()
        colour = re.search(r'type="color"[^>]*value="(#[0-9a-fA-F]{6})"', row.group(2))
        if colour:
            cells["colour"] = colour.group(1).lower()
    return rows


def _is_result(key: str) -> bool:
    """A result metric the saved view shows as a column and a chart; its interval parts (``result/E_ci_low``...)
    are logged beside it for recomputation and plots, not given columns of their own."""
    return key.startswith(RESULT_PREFIX) and not key.endswith(INTERVAL_SUFFIXES)


def check_table(dom: str, runs: list[dict[str, Any]]) -> list[str]:
    """Problems with the runs table: a run not listed, a result metric not shown with its stored value, two
    runs drawn in the same colour."""
    rows, problems = table_rows(dom), []
    for run in runs:
        name, cells = run["info"]["run_name"], rows.get(run["info"]["run_id"])
        if cells is None:
            problems.append(f"runs table: {name!r} is not listed")
            continue
        for key, value in sorted(_metrics(run).items()):
            shown = cells.get(f"metrics.`{key}`")
            if _is_result(key) and (shown is None or not _shows(shown, value)):
                problems.append(f"runs table: {name}: {key} shows {shown!r}, the store holds {value}")
    colours = [rows[run["info"]["run_id"]].get("colour") for run in runs if run["info"]["run_id"] in rows]
    if len(set(colours)) < len(colours):
        problems.append(f"runs table: runs share a colour ({', '.join(str(colour) for colour in colours)})")
    return problems


def saved_view(url: str, experiment: str, env: str) -> str | None:
    """The runs page opened on environment ``env``'s saved view, None when the store has none (runs logged
    before evaluate and optimize saved one)."""
    tags = _api(url, f"experiments/get?experiment_id={experiment}")["experiment"].get("tags", [])
    return view_url(url, experiment, env) if env in viewed_environments({t["key"]: t["value"] for t in tags}) else None


def check_runs_view(url: str, browser: str, runs: list[dict[str, Any]], screenshot: Path | None,
                    charts_screenshot: Path | None) -> tuple[str | None, list[str]]:
    """Open the saved view of the runs' environment as a table and as charts; its page URL (None: the store has
    no saved view) and the problems found. Every run of that environment the check was given is a row."""
    experiment = experiment_id(url)
    env = _tags(runs[0]).get("env", "")
    page = saved_view(url, experiment, env)
    if page is None:
        return None, []
    shown = [run for run in runs if _tags(run).get("env") == env and _tags(run).get("command") != "compare"]
    problems = check_table(render(browser, page, width=2200, height=1600, screenshot=screenshot), shown)
    charts = render(browser, f"{page}&compareRunsMode=CHART", width=2400, height=1800, screenshot=charts_screenshot,
                    budget_ms=_SLOW_PAGE_BUDGET_MS)
    results = sorted({key for run in shown for key in _metrics(run) if _is_result(key)})
    problems += [f"chart view: no chart of {key}" for key in results if f">{key}<" not in charts]
    return page, problems


def docs_diff_page(url: str, experiment: str, run_id: str, path: str) -> str:
    return f"{url}/#/experiments/{experiment}/runs/{run_id}/artifacts/{path}"


def _artifact_text(url: str, run_id: str, path: str) -> str:
    query = urllib.parse.urlencode({"run_id": run_id, "path": path})
    with urllib.request.urlopen(f"{url}/get-artifact?{query}", timeout=30) as response:
        return response.read().decode()


def newest_docs_diff(url: str, runs: list[dict[str, Any]]) -> tuple[str, str, str] | None:
    """(run id, artefact path, text) of the newest ``docs_diff.md`` among the optimize runs of ``runs`` (newest
    run, latest step first) in which a tool's docs changed, else of the newest one."""
    found = []
    optimized = [run for run in runs if _tags(run).get("command") == "optimize"]
    for run in sorted(optimized, key=lambda run: run["info"]["start_time"], reverse=True):
        run_id = run["info"]["run_id"]
        listing = _api(url, f"artifacts/list?run_id={run_id}&path=iterations").get("files", [])
        for step in sorted((f["path"] for f in listing if f.get("is_dir")), reverse=True):
            files = _api(url, f"artifacts/list?run_id={run_id}&path={urllib.parse.quote(step)}").get("files", [])
            if any(f["path"] == f"{step}/docs_diff.md" for f in files):
                text = _artifact_text(url, run_id, f"{step}/docs_diff.md")
                if "\n## " in text:
                    return run_id, f"{step}/docs_diff.md", text
                found.append((run_id, f"{step}/docs_diff.md", text))
    return found[0] if found else None


def check_docs_diff(url: str, browser: str, runs: list[dict[str, Any]],
                    screenshot: Path | None) -> tuple[str | None, list[str]]:
    """Open the newest docs diff of the runs on its run's Artifacts tab; its page URL (None: no optimize run
    with one) and the problems found: each heading of the diff (its title, each changed tool) must be shown."""
    found = newest_docs_diff(url, runs)
    if found is None:
        return None, []
    run_id, path, text = found
    headings = [line.lstrip("#").strip() for line in text.splitlines() if line.startswith("#")]
    page = docs_diff_page(url, experiment_id(url), run_id, path)
    dom = render(browser, page, width=1800, height=_WINDOW_HEIGHT, screenshot=screenshot)
    return page, [f"{path} of run {run_id}: {heading!r} is not on the page" for heading in headings
                  if html.escape(heading, quote=False) not in dom]


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
    """Problems with an opened trace: its spans (each an element of its own, as the span tree shows them, not
    words in the traces list), task and question must all be on the page."""
    root = trace.data.spans[0]
    expected = {f"span {span.name!r}": f">{html.escape(span.name, quote=False)}<" for span in trace.data.spans}
    expected["its task id"] = str(root.inputs.get("task_id", "")) if isinstance(root.inputs, dict) else ""
    question = root.inputs.get("question", "") if isinstance(root.inputs, dict) else ""
    expected["its question"] = " ".join(str(question).split()[:6])
    return [f"trace {trace.info.trace_id}: {what} ({text.strip('<>')!r}) is not on the page"
            for what, text in expected.items() if text and html.escape(text, quote=False) not in dom and text not in dom]


def check_traces(url: str, browser: str, run_ids: list[str], screenshot: Path | None) -> tuple[str | None, list[str]]:
    """Open the newest rollout trace of the runs in the Traces tab; its page URL (None: the runs have no
    traces) and the problems found."""
    experiment = experiment_id(url)
    trace = newest_rollout(url, experiment, run_ids)
    if trace is None:
        return None, []
    page = trace_page(url, experiment, trace.info.trace_id)
    dom = render(browser, page, width=2600, height=1400, screenshot=screenshot, budget_ms=_SLOW_PAGE_BUDGET_MS)
    return page, check_trace_page(dom, trace)


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m otbench.ui_check", description=__doc__.splitlines()[0])
    parser.add_argument("--mlruns", type=STORE_DIRECTORY, default=None, help="MLflow store directory (default ./mlruns)")
    parser.add_argument("--port", type=positive_int, default=None, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--runs", default=None, help="comma-separated run ids to compare (default: see above)")
    parser.add_argument("--screenshot", type=OUTPUT_FILE, default=Path("reports/mlflow-compare-runs.png"),
                        help="where the screenshot goes (default reports/mlflow-compare-runs.png)")
    parser.add_argument("--trace-screenshot", type=OUTPUT_FILE, default=Path("reports/mlflow-trace.png"),
                        help="where the screenshot of an opened rollout trace goes (default reports/mlflow-trace.png)")
    parser.add_argument("--table-screenshot", type=OUTPUT_FILE, default=Path("reports/mlflow-runs-table.png"),
                        help="where the screenshot of the saved view's runs table goes "
                             "(default reports/mlflow-runs-table.png)")
    parser.add_argument("--charts-screenshot", type=OUTPUT_FILE, default=Path("reports/mlflow-charts.png"),
                        help="where the screenshot of the saved view's charts goes (default reports/mlflow-charts.png)")
    parser.add_argument("--diff-screenshot", type=OUTPUT_FILE, default=Path("reports/mlflow-docs-diff.png"),
                        help="where the screenshot of a run's docs diff goes (default reports/mlflow-docs-diff.png)")
    args = parser.parse_args(argv)
    check_outputs(parser, args, cache=False)
    browser = find_browser()
    if browser is None:
        raise SetupError("no chromium on PATH; install it with scripts/setup.sh (apt-get install chromium)")
    run_ids = [run_id.strip() for run_id in args.runs.split(",") if run_id.strip()] if args.runs else None
    with running_ui(args.mlruns, args.port or free_port()) as url:
        result = check_ui(url, browser, run_ids, args.screenshot)
        view_page, view_problems = check_runs_view(url, browser, result.runs, args.table_screenshot,
                                                   args.charts_screenshot)
        trace_url, trace_problems = check_traces(url, browser, [run["info"]["run_id"] for run in result.runs],
                                                 args.trace_screenshot)
        diff_url, diff_problems = check_docs_diff(url, browser, result.runs, args.diff_screenshot)
    print(f"page: {result.url}")
    print(f"runs side by side: {', '.join(result.run_names)}")
    print(f"metrics shown and checked: {', '.join(result.metric_keys)}   screenshot: {result.screenshot}")
    print(f"runs table and charts of the saved view: {view_page}   screenshots: {args.table_screenshot}, "
          f"{args.charts_screenshot}" if view_page else
          "saved view: none in this store (evaluate and optimize save one for their environment)")
    print(f"a rollout trace opened: {trace_url}   screenshot: {args.trace_screenshot}" if trace_url else
          "traces: these runs have none (logged before tracing, or with OTBENCH_TRACING=0)")
    print(f"a docs diff opened: {diff_url}   screenshot: {args.diff_screenshot}" if diff_url else
          "docs diff: no optimize run among these runs has one")
    problems = result.problems + view_problems + trace_problems + diff_problems
    for problem in problems:
        print(f"PROBLEM: {problem}", file=sys.stderr)
    print("ok: every run and metric is shown with its stored value" + (", the trace with its spans" if trace_url else "")
          + (", the docs diff" if diff_url else "") if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    run_main(main)
