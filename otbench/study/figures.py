"""Figures typed in a page's prose, checked against their sources, so a figure that drifts from its run is caught.

A table is rendered (:mod:`otbench.study.rendered`); a sentence that cites a figure cannot be, so it is checked
instead. A page marks the prose that cites figures with the sources they come from, on lines of their own::

    <!-- figures: runs/a819e39d.f62ea06c -->
    Sequence match is higher by 0.192 [0.133, 0.249] (p = 0.0002) ...
    <!-- /figures -->

and every figure in between (as :func:`figure_tokens` reads them) must be one of the values those sources give, at
the precision it is written (``0.19`` is any value from 0.185 to 0.195; ``77%`` a share of 0.765 to 0.775; a sign
may be left out where the prose says which way). ``otbench results render --check`` and a test fail otherwise.
Sources (:data:`SOURCE`):

- ``runs/KEY.KEY...``: ledger entries (eight characters of a key or more): every number an entry keeps (metrics,
  tokens by phase, seconds, as minutes, ``M min S s`` and hours too, the model's speed, the machine's cores, its
  sample's sizes, its kept artefacts' numbers and, for per-task lists, their count and sums), and between each two
  entries of the source the paired difference of every metric both have per task (value, interval and p value, as ``compare`` makes
  it), the tasks one passed and the other did not, and the ratio and difference of their tokens and seconds;
- ``grid/SIZE``: the entries of every finished cell of that grid, each as ``runs/`` gives one (not paired: the
  cells' comparisons are their settings' tables');
- ``table/NAME``: every figure of a table the ledger renders (:func:`otbench.study.rendered.table`: ``grid/full/cost``,
  ``grid/full/bfcl/names_only``...), for prose that restates or combines a table's figures;
- ``code/MODULE.NAME``: a constant of the code (a number, or the numbers and sizes a value holds): what a page says
  the code fixes (``code/otbench.evals.stats.CONFIDENCE`` for a 95% interval);
- ``bench/NAME``: a benchmark's output kept in the ledger (``results/benchmarks/NAME.json``, with the command that
  made it): every number in it;
- ``paper``: the paper's reference figures (:mod:`otbench.study.paper`), each row's difference to base and the gap
  shares they give, as shares and as points;
- ``power/TASKS/RATE``, ``needed/RATE/DIFFERENCE``: what ``compare --plan`` works out (:mod:`otbench.evals.stats`):
  the smallest rise over a base rate that so many pass/fail tasks a row detect, or the tasks a row needs to detect a
  rise, at alpha 0.05 and Holm's strictest level over the grid's largest table, 80% power, as shares and points;
  for a continuous figure, ``power/CLUSTERS/SPREAD`` also gives the smallest paired difference so many clusters
  detect at that spread;
- ``shown``: every number in the region's own code blocks, for prose that restates what a block prints (a block
  the docs tests run and compare with what it prints: ``tests/test_docs_site.py``).

A figure of another kind (a setting's size, a count the code fixes) is not a claim to check: it is left out of the
prose's regions, or its sentence cites no figure.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from otbench.errors import ConfigError, DataError
from otbench.run import ledger

REGION = re.compile(r"<!-- figures: (?P<sources>[^>]*?) -->\n(?P<body>.*?)<!-- /figures -->", re.DOTALL)
SOURCE = re.compile(r"runs/[0-9a-f]{8,20}(?:\.[0-9a-f]{8,20})*|grid/\w+|table/[\w./-]+|bench/[\w-]+|code/[\w.]+|paper"
                    r"|(?:power|needed)/[\d.]+/[\d.]+|shown")
FENCED = re.compile(r"```[^\n]*\n(?P<code>.*?)```", re.DOTALL)
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:e-?\d+)?")
FIGURE = re.compile(r"(?<![\w.\-/#@])(?<!Table )(?<!Figure )(?:(?<=[\s(\[])[-+−])?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:%|x(?![\w]))?"
                    r"(?![\w.\-]\w)(?![\w])(?!,\d)")
"""A figure as a reader takes one; the same rule as ``benchmarks/typed_numbers.py``'s count."""
NOT_PROSE = re.compile(r"```.*?```|<!--.*?-->|`[^`\n]*\n?[^`\n]*`|\]\([^)\s]*\)|https?://\S+|\"[^\"\n]*(?:\n[^\"\n]*){0,2}\"|“[^”\n]*(?:\n[^”\n]*){0,2}”", re.DOTALL)
LIST_MARKER = re.compile(r"^(\s*)\d+\.(?=\s)", re.MULTILINE)
BENCHMARKS = "benchmarks"
"""The ledger's folder of kept benchmark outputs."""
_LONG = 20
"""A list longer than this (per-task records) gives its count and sums, not each of its numbers."""


@dataclass(frozen=True)
class Unfound:
    """A figure of a checked region that none of its sources gives."""

    page: Path
    line: int
    figure: str
    sources: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {self.figure} is none of the values of {self.sources}"


def figure_tokens(text: str) -> Iterator[tuple[int, str]]:
    """Every figure of ``text`` with its offset: numbers in code, comments, link targets, quotations, names and list
    markers are not figures."""
    def blanked(value: str, pattern: re.Pattern[str]) -> str:
        return pattern.sub(lambda found: re.sub(r"[^\n]", " ", found.group(0)), value)

    prose = blanked(blanked(text, NOT_PROSE), LIST_MARKER)
    for found in FIGURE.finditer(prose):
        yield found.start(), found.group(0)


def check_page(path: Path, results: Path | None = None, *, known: dict[str, list[float]] | None = None) -> list[Unfound]:
    """Every figure of ``path``'s checked regions that its sources do not give (empty: all found); ``known``: the
    values of sources already read, by source (regions citing the same source read it once)."""
    text = path.read_text()
    known = {} if known is None else known
    unfound = []
    for region in REGION.finditer(text):
        values = []
        for source in (source for source in region["sources"].split() if source != "shown"):
            if source not in known:  # each source's values are its own: a region's are the union of its sources'
                known[source] = source_values(source, results)
            values += known[source]
        if "shown" in region["sources"].split():
            values = values + _shown(region["body"])
        start = region.start("body")
        for offset, figure in figure_tokens(region["body"]):
            if not matches(figure, values):
                unfound.append(Unfound(path, text.count("\n", 0, start + offset) + 1, figure, region["sources"]))
    return unfound


def _shown(body: str) -> list[float]:
    """Every number printed or written in the code blocks of a region's body."""
    found = []
    for block in FENCED.finditer(body):
        for number in NUMBER.findall(block["code"]):
            try:
                found.append(float(number.replace(",", "")))
            except ValueError:
                continue
    return found


def source_values(sources: str, results: Path | None = None) -> list[float]:
    """Every value the sources of a region give (see the module's docstring), refused on one line when a source
    names nothing."""
    named = sources.split()
    if not named or not all(SOURCE.fullmatch(source) for source in named):
        raise ConfigError(f"<!-- figures: {sources} -->: sources are runs/KEY.KEY..., grid/SIZE, table/NAME, "
                          "bench/NAME, code/MODULE.NAME or paper")
    values: set[float] = set()
    for source in named:
        kind, _, rest = source.partition("/")
        if kind == "runs":  # the entries of one source are compared with each other, not with another source's
            entries = [_entry(key, results) for key in rest.split(".")]
            for entry in entries:
                values |= _values_once(entry)
            for first, second in itertools.combinations(entries, 2):
                values |= _values_once(first, second)
        elif kind == "grid":  # each cell by itself: its comparisons are its table's (table/grid/SIZE/ENV/SETTING)
            values |= _grid_values(rest, results)
        elif kind == "table":
            from otbench.study.rendered import table

            values |= {float(figure.replace(",", "").replace("−", "-").rstrip("%x"))
                       for _, figure in figure_tokens(table(rest, results))}
        elif kind == "bench":
            values |= set(_numbers(_benchmark(rest, results)))
        elif kind == "code":
            values |= set(_numbers(_constant(rest)))
        elif kind in ("power", "needed"):
            values |= _power(kind, *(float(part) for part in rest.split("/")))
        else:
            values |= _paper_values()
    return sorted(value for value in values if math.isfinite(value))


def _entry(key: str, results: Path | None) -> ledger.Entry:
    found = ledger.starting_with(key, results)
    if len(found) != 1:
        raise ConfigError(f"<!-- figures: runs/{key} -->: {len(found)} ledger entries' keys begin with it")
    return found[0]


def _grid_entries(size: str, results: Path | None) -> list[ledger.Entry]:
    from otbench.study.grid import SIZES, ReproduceOptions, open_grid

    if size not in SIZES:
        raise ConfigError(f"<!-- figures: grid/{size} -->: no grid size {size!r}; choose from {', '.join(SIZES)}")
    with open_grid(ReproduceOptions(size=size, progress=False)) as (_, cells):
        found = [ledger.find(cell.plan.definition, results) for cell in cells]
    return [entry for entry in found if entry is not None and entry.status == "finished"]


def _grid_values(size: str, results: Path | None) -> set[float]:
    """What ``grid/SIZE`` gives, read once a process (opening the grid opens every environment it runs)."""
    key = (size, str(results))
    if key not in _GRIDS:
        _GRIDS[key] = {value for entry in _grid_entries(size, results) for value in _values_once(entry)}
    return _GRIDS[key]


_GRIDS: dict[tuple[str, str], set[float]] = {}


def _values_once(*entries: ledger.Entry) -> frozenset[float]:
    """What one entry gives (:func:`entry_values`) or two give together (:func:`pair_values`), worked out once a
    process for the same contents: pages cite an entry in many regions, and each comparison's permutation test and
    bootstrap cost more than reading every page."""
    key = tuple(hashlib.sha256(json.dumps(entry.to_json(), sort_keys=True, default=str).encode()).hexdigest()
                for entry in entries)
    if key not in _VALUES:
        _VALUES[key] = frozenset(entry_values(entries[0]) if len(entries) == 1 else pair_values(*entries))
    return _VALUES[key]


_VALUES: dict[tuple[str, ...], frozenset[float]] = {}


def _benchmark(name: str, results: Path | None) -> Any:
    from otbench.paths import results_dir

    path = (results or results_dir()) / BENCHMARKS / f"{name}.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise DataError(f"<!-- figures: bench/{name} -->: {path} is no kept benchmark output ({error})") from None


def keep_benchmark(name: str, command: str, output: Any, results: Path | None = None) -> Path:
    """Keep a benchmark's output in the ledger as ``bench/NAME``, with the command that made it, so a page's figures
    from a run with no LLM are checked against what the run printed, and the run can be made again to compare."""
    from otbench.paths import results_dir

    if not re.fullmatch(r"[\w-]+", name):
        raise ConfigError(f"--keep {name!r}: a benchmark's name is letters, digits, _ and -")
    path = (results or results_dir()) / BENCHMARKS / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"command": command, "output": output}, indent=1, sort_keys=True) + "\n")
    return path


def _constant(path: str) -> Any:
    """The value ``MODULE.NAME`` names, as JSON-like data (a dataclass as its fields, a container also by its size)."""
    import dataclasses
    import importlib

    module_name, _, name = path.rpartition(".")
    try:
        value = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError, ValueError):
        raise ConfigError(f"<!-- figures: code/{path} -->: no such constant") from None

    def plain(item: Any) -> Any:
        if dataclasses.is_dataclass(item):  # a dataclass with defaults for every field: its default instance
            try:
                return plain(dataclasses.asdict(item() if isinstance(item, type) else item))
            except TypeError:
                return None
        if isinstance(item, dict):  # numeric keys are figures too (ratings to their settings)
            keys = [key for key in item if isinstance(key, (int, float)) and not isinstance(key, bool)]
            return {"size": len(item), "keys": keys, **{str(key): plain(value) for key, value in item.items()}}
        if isinstance(item, (list, tuple, set, frozenset)):
            return {"size": len(item), "items": [plain(value) for value in item]}
        return item if isinstance(item, (int, float, str, bool)) or item is None else None

    return plain(value)


def _paper_values() -> set[float]:
    from otbench.study import paper

    values = {value for table in paper.TABLE2.values() for value in table.values()}
    for (env, setting), table in paper.TABLE2.items():
        values |= {share for label in table if (share := paper.gap_share(env, setting, label)) is not None}
        values |= {value - table["base"] for value in table.values()} if "base" in table else set()
    return values | {100 * value for value in values}


def _power(kind: str, first: float, second: float) -> set[float]:
    """What ``compare --plan`` works out for ``power/TASKS/RATE`` or ``needed/RATE/DIFFERENCE``."""
    from otbench.evals import stats

    levels = (stats.ALPHA, stats.ALPHA / 11)  # and Holm's strictest step over the grid's largest table (11 tests)
    if kind == "power":
        values = {stats.detectable_difference(int(first), second, alpha=alpha) for alpha in levels if 0 < second < 1}
        values |= {stats.detectable_mean_difference(int(first), second, alpha=alpha) for alpha in levels}
    else:
        values = {stats.tasks_needed(first, second, alpha=alpha) for alpha in levels}
    values |= {first, second}  # what the plan was asked for: a size, a rate, a difference
    return values | {100 * value for value in values}


def _numbers(data: Any) -> Iterator[float]:
    """Every number of JSON data; a long list of records gives its count and the sums of their numbers instead."""
    if isinstance(data, bool):
        return
    if isinstance(data, (int, float)):
        yield float(data)
    elif isinstance(data, dict):
        for value in data.values():
            yield from _numbers(value)
    elif isinstance(data, list):
        if len(data) > _LONG:
            yield float(len(data))
            sums: dict[str, float] = {}
            for item in data:
                if isinstance(item, dict):
                    for name, value in _flat(item):
                        sums[name] = sums.get(name, 0.0) + value
            for total in sums.values():
                yield total
                yield total / len(data)
        else:
            yield float(len(data))  # a list's size is a figure too (a toolset's tools)
            for value in data:
                yield from _numbers(value)


def _flat(record: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, float]]:
    for name, value in record.items():
        if isinstance(value, dict):
            yield from _flat(value, f"{prefix}{name}.")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            yield f"{prefix}{name}", float(value)


def entry_values(entry: ledger.Entry) -> Iterator[float]:
    """Every number an entry keeps, with its time in other units and its cost as pages show it."""
    data = entry.to_json()
    for part in ("metrics", "model_speed", "tokens_by_phase", "machine", "artifacts", "resume"):
        yield from _numbers(data.get(part, {}))
    yield from _numbers(data["definition"].get("sample", {}))
    tokens, seconds = ledger.spent(entry)
    yield float(tokens)
    phases = entry.tokens_by_phase
    for counted in phases.values():  # each phase's tokens as a budget counts them (paid and cache-served)
        if isinstance(counted, dict):
            spent = sum(float(counted.get(key, 0)) for key in ("total_tokens", "cached_tokens"))
            yield spent
            if tokens and "all" in phases:  # and its share of what the run cost
                yield spent / tokens
    for time in (seconds, entry.seconds):
        if time is not None:
            yield from (time, time / 60, time / 3600, float(int(time // 60)), time - 60 * int(time // 60))
    yield from split_values(entry)


def _splits(entry: ledger.Entry) -> dict[str, Any]:
    """The per-task outcomes an entry keeps, by split (``result``; an optimize run's ``before`` and ``after``...)."""
    from otbench.evals.outcomes import Outcomes

    kept = entry.artifacts.get("outcomes.json") or {"splits": {}}
    return {split: Outcomes.from_json(tasks).as_sample(0) for split, tasks in kept["splits"].items()}


def _result(entry: ledger.Entry) -> Any:
    kept = entry.artifacts.get("outcomes.json")
    return _splits(entry)[kept["result"]] if kept else None


def split_values(entry: ledger.Entry) -> Iterator[float]:
    """Each split's metrics with their intervals, and each two splits compared (an optimize run's ``before`` and
    ``after`` are its starting and learned docs on the same tasks)."""
    from otbench.evals.outcomes import Mean, interval

    splits, shown = _splits(entry), set(entry.view.get("metrics") or ())
    for outcomes in splits.values():
        for name in [name for name in _names([outcomes]) if not shown or name in shown]:
            found = interval(outcomes, Mean(name))
            yield from (found.value, found.low, found.high)
    for first, second in itertools.combinations(splits.values(), 2):
        yield from outcome_pair_values(first, second, entry.view.get("metrics") or None)


def _names(rows: list[Any]) -> list[str]:
    """The per-task metrics every task of ``rows`` has."""
    tasks = [task for row in rows for task in row.tasks]
    return sorted(set.intersection(*(set(task.metrics) for task in tasks))) if tasks else []


def outcome_pair_values(a: Any, b: Any, metrics: Iterable[str] | None = None) -> Iterator[float]:
    """For every metric both have per task on the tasks they share (of ``metrics``, where given): the paired
    difference (value, interval, p value; the other way round is the same figures but for their signs, which a
    figure may leave to its prose), and the tasks one passed and the other did not."""
    from otbench.evals.outcomes import Mean, Outcomes, difference

    shared = {task.task for task in a.tasks} & {task.task for task in b.tasks}
    if not shared:
        return
    a, b = (Outcomes(tuple(task for task in row.tasks if task.task in shared)) for row in (a, b))
    by_task = {task.task: task for task in b.tasks}
    names = _names([a, b])
    for name in names if metrics is None else [name for name in names if name in set(metrics)]:
        found = difference(a, b, Mean(name))
        yield from (found.value, found.low, found.high, found.p_value)
        pairs = [(task.metrics[name], by_task[task.task].metrics[name]) for task in a.tasks]
        yield from (float(sum(x > y for x, y in pairs)), float(sum(x < y for x, y in pairs)))


def pair_values(first: ledger.Entry, second: ledger.Entry) -> Iterator[float]:
    """What two entries give together: their results compared task by task (:func:`outcome_pair_values`); the
    ratio and difference of their tokens and seconds."""
    (tokens_a, seconds_a), (tokens_b, seconds_b) = ledger.spent(first), ledger.spent(second)
    if tokens_a and tokens_b:
        yield from (tokens_a / tokens_b, tokens_b / tokens_a, float(tokens_a - tokens_b))
    if seconds_a and seconds_b:
        yield from (seconds_a / seconds_b, seconds_b / seconds_a, seconds_a - seconds_b)
    a, b = _result(first), _result(second)
    if a is not None and b is not None:
        yield from outcome_pair_values(a, b, first.view.get("metrics") or None)


def matches(figure: str, values: Iterable[float]) -> bool:
    """Whether ``figure`` is one of ``values`` at the precision it is written (a share for ``%``; either sign)."""
    text = figure.replace(",", "").replace("−", "-")
    share = text.endswith("%")
    text = text.rstrip("%x")
    number = abs(float(text))
    decimals = len(text.split(".", 1)[1]) if "." in text else 0
    half = 0.5 * 10 ** -decimals + 1e-9
    for value in values:
        shown = abs(value) * 100 if share else abs(value)
        if abs(shown - number) <= half:
            return True
    return False


def check_pages(root: Path, results: Path | None = None) -> list[Unfound]:
    """Every unfound figure of the pages under ``root`` (the rendered pages' places)."""
    from otbench.study.rendered import PAGES

    unfound: list[Unfound] = []
    known: dict[str, list[float]] = {}
    for place in PAGES:
        found = root / place
        for path in sorted(found.rglob("*.md")) if found.is_dir() else [found]:
            if path.is_file() and "<!-- figures: " in path.read_text():
                unfound += check_page(path, results, known=known)
    return unfound
