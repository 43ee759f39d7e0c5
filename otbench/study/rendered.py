"""Results tables rendered from the results ledger into the pages that cite them, never typed by hand.

A page asks for a table with two comments on lines of their own, ``<!-- results: NAME -->`` and
``<!-- /results -->``; :func:`render_page` writes the table ``NAME`` between them from the ledger's entries
(:mod:`otbench.run.ledger`), and ``otbench results render --check`` (and a test) fails when a page holds anything
else there. The tables (:data:`TABLES`):

- ``grid/SIZE/ENV/SETTING``: one setting of ``reproduce``'s grid (:mod:`otbench.study.grid`), every row with its
  metrics and 95% intervals, its paired differences to base and to the reference row marked where they hold
  (Holm over the table), its tokens, hours and the model's measured speed; a row whose run is not in the ledger
  yet says so;
- ``grid/SIZE/ENV/SETTING/plots``: that setting's figures (its primary metric by row with 95% intervals, and against
  tokens), drawn by ``render`` into :data:`FIGURES`, each file named by a digest of what it shows: when the data
  change, the page names files not drawn yet, which ``--check`` reports;
- ``grid/SIZE/cost``: every cell of the grid, its state in the ledger, tokens, hours and the machine's speed,
  with the grid's totals; ``grid/SIZE/cost-by-setting``: the same summed by setting;
- ``runs/KEY.KEY...``: the ledger entries those keys begin with (eight characters or more each), side by side as a
  comparison of one environment and setting: a row each by its method (``base``, ``gold``, ``+TO``...; an evaluation
  of the docs another entry learned, ``--docs ledger:KEY``, by that entry's), with its
  intervals, its paired differences to base and to ToolObserver's row, its tokens, hours and speed. What a page
  cites of a study outside the grid is rendered from its runs this way.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from otbench.errors import ConfigError
from otbench.run import ledger
from otbench.study import comparison, paper

REGION = re.compile(r"(?P<open><!-- results: (?P<name>[\w./-]+) -->\n)(?P<body>.*?)(?P<close><!-- /results -->)",
                    re.DOTALL)
"""A rendered region of a page: the opening marker with the table's name, the table, the closing marker."""
PAGES = ("README.md", "docs")
"""Where pages with rendered regions are looked for, from the repository root (Markdown files, folders searched)."""
FIGURES = Path("docs/images/grid")
"""Where the grid's figures are drawn, from the repository root (inside the docs, so the site shows them)."""
IMAGE = re.compile(r"!\[[^\]]*\]\((?P<target>[^)\s]+)\)")
"""An image a rendered region shows, and the file it names relative to its page."""


@dataclass(frozen=True)
class Rendered:
    """One page's regions as the ledger renders them."""

    path: Path
    text: str
    """The page with every region rendered."""
    changed: bool
    """Whether that differs from the page as it is, or names a figure that was not drawn."""
    tables: tuple[str, ...]


def pages(root: Path) -> Iterator[Path]:
    """The Markdown pages of the repository at ``root`` that hold a rendered region."""
    for place in PAGES:
        found = root / place
        for path in sorted(found.rglob("*.md")) if found.is_dir() else [found]:
            if path.is_file() and "<!-- results: " in path.read_text():
                yield path


def render_page(path: Path, results: Path | None = None, *, root: Path | None = None, draw: bool = False) -> Rendered:
    """``path`` with each of its regions rendered from the ledger at ``results``; with ``draw``, the figures it shows
    are drawn under ``root`` (default: the working directory) where they are not yet."""
    text = path.read_text()
    names: list[str] = []
    figures = (root or Path.cwd()) / FIGURES

    def region(found: re.Match[str]) -> str:
        names.append(found["name"])
        shown = table(found["name"], results, page=path, figures=figures, draw=draw)
        return f"{found['open']}{shown.rstrip()}\n{found['close']}"

    rendered = REGION.sub(region, text)
    undrawn = [target for found in REGION.finditer(rendered) for target in IMAGE.findall(found["body"])
               if not (path.parent / target).is_file()]
    return Rendered(path, rendered, rendered != text or bool(undrawn), tuple(names))


def table(name: str, results: Path | None = None, *, page: Path = Path("README.md"), figures: Path = FIGURES,
          draw: bool = False) -> str:
    """The Markdown of table ``name`` (see the module's docstring), from the ledger at ``results``; a figure lives in
    ``figures``, is linked from ``page``, and is drawn there with ``draw`` unless it already is."""
    parts = name.split("/")
    if len(parts) == 5 and parts[0] == "grid" and parts[4] == "plots":
        return _section_plots(parts[1], f"{parts[2]}/{parts[3]}", results, page=page, figures=figures, draw=draw)
    if len(parts) == 4 and parts[0] == "grid":
        return _section_table(parts[1], f"{parts[2]}/{parts[3]}", results)
    if len(parts) == 3 and parts[0] == "grid" and parts[2] == "cost":
        return _cost_table(parts[1], results)
    if len(parts) == 3 and parts[0] == "grid" and parts[2] == "cost-by-setting":
        return _setting_costs(parts[1], results)
    if len(parts) == 2 and parts[0] == "runs":
        return _runs_table(parts[1].split("."), results)
    raise ConfigError(f"no results table {name!r}; tables: grid/SIZE/ENV/SETTING, grid/SIZE/ENV/SETTING/plots, "
                      "grid/SIZE/cost, grid/SIZE/cost-by-setting, runs/KEY.KEY...")


# -- a setting of the grid ---------------------------------------------------------------------------------------
def _grid(size: str, only: tuple[str, ...]) -> Any:
    """The grid's sections (each with its environment, open for the block) and cells."""
    from otbench.study.grid import SIZES, ReproduceOptions, open_grid

    if size not in SIZES:
        raise ConfigError(f"no grid size {size!r}; choose from {', '.join(SIZES)}")
    return open_grid(ReproduceOptions(size=size, only=only, progress=False))


def _finished(env: Any, cells: list[Any],
              results: Path | None) -> tuple[dict[str, ledger.Entry], list[Any], comparison.Table | None]:
    """The cells whose runs the ledger keeps finished: their entries by cell key, those cells in the grid's order,
    and their comparison (None when no cell has finished)."""
    found = {cell.key: ledger.find(cell.plan.definition, results) for cell in cells}
    kept = {key: entry for key, entry in found.items() if entry is not None and entry.status == "finished"}
    finished = [cell for cell in cells if cell.key in kept]
    rows = [_entry_row(kept[cell.key], env, label=cell.plan.label, seed=cell.seed) for cell in finished]
    return kept, finished, comparison.build(env, rows) if rows else None


def _section_table(size: str, section: str, results: Path | None) -> str:
    with _grid(size, (section,)) as (sections, cells):
        grid_section, env = sections[0]
        kept, finished, built = _finished(env, cells, results)
        lines = []
        if built is not None:
            printed = comparison.display_rows(built, env.primary_metric)
            theirs = f"{paper.MODEL}: gap share"
            for shown, cell in zip(printed, finished, strict=True):
                # the grid's setting, not env.setting: that names the options too ("domains calls=6")
                share = paper.gap_share(grid_section.env, grid_section.setting, cell.plan.label)
                shown |= _cost(kept[cell.key]) | {theirs: "" if share is None else f"{share:.3f}"}
            columns = ["row", *built.metrics, *comparison.REFERENCES, "gap_share", theirs, "tokens", "hours", "speed"]
            lines += [comparison.markdown(printed, columns).rstrip(), "", comparison.legend(built, env.primary_metric),
                      (f"gap_share: (row - base) / (gold - base) on {env.primary_metric}, with its paired bootstrap "
                       f"interval; {theirs}: the same share of the paper's row ({paper.MODEL} as agent and editor)."),
                      *_non_inferiority(section, built)]
            lines += [f"> warning: {warning}" for warning in built.warnings]
            lines += _dirty_note([(cell.plan.label, kept[cell.key]) for cell in finished])
        missing = [cell.plan.label for cell in cells if cell.key not in kept]
        if missing:
            lines += ["", f"Not in the ledger yet (no figure is shown for them): {', '.join(missing)}."]
        if not finished:
            lines = [f"No row of {section} is in the ledger yet: {', '.join(missing)} are to run."]
        return "\n".join(lines).strip() + "\n"


def _section_plots(size: str, section: str, results: Path | None, *, page: Path, figures: Path, draw: bool) -> str:
    from otbench.study.comparing import row_plot_paths, row_plots

    with _grid(size, (section,)) as (sections, cells):
        _, env = sections[0]
        _, _, built = _finished(env, cells, results)
        if built is None:
            return f"No row of {section} is in the ledger yet: no figure to draw.\n"
        metric, prefix, title = env.primary_metric, section.replace("/", "-"), f"{section} ({size} grid)"
        name = f"{prefix}-{_digest(built.rows, metric, title)}"
        paths = row_plot_paths(figures, name, metric)
        if draw and not all(path.is_file() for path in paths):
            row_plots(built.rows, env, figures, name, title=title)
            stale = re.compile(rf"{re.escape(prefix)}-[0-9a-f]{{{DIGEST_LENGTH}}}-.+\.png")
            for old in figures.glob(f"{prefix}-*.png"):
                if stale.fullmatch(old.name) and old not in paths:
                    old.unlink()
        where = page.resolve().parent
        return "\n".join(f"![{section}: {metric} {what}]({Path(os.path.relpath(path.resolve(), where)).as_posix()})"
                         for path, what in zip(paths, ("against tokens", "by row"), strict=True)) + "\n"


DIGEST_LENGTH = 10
"""Hex digits of a figure's data digest in its file name."""


def _digest(rows: list[dict[str, Any]], metric: str, title: str) -> str:
    """What a setting's figures show, as a short digest: figures of other data get other file names. Figures are
    digested at the precision the tables print, so another machine's last bits of a bootstrap do not rename them."""
    def shown_value(value: Any) -> Any:
        return round(value, 3) if isinstance(value, float) else value

    shown = [[row["row"], *(shown_value(row.get(name)) for name in (metric, f"{metric}_ci_low", f"{metric}_ci_high")),
              int(row["tokens"]), bool((row.get("vs_base") or {}).get("holds"))] for row in rows]
    return hashlib.sha256(json.dumps([title, metric, shown]).encode()).hexdigest()[:DIGEST_LENGTH]


# -- entries side by side ----------------------------------------------------------------------------------------
def _runs_table(keys: list[str], results: Path | None) -> str:
    entries = []
    for key in keys:
        found = ledger.starting_with(key, results) if len(key) >= 8 else []
        if len(found) != 1 or found[0].status != "finished":
            raise ConfigError(f"runs/{'.'.join(keys)}: {key!r} names no one finished ledger entry (eight characters "
                              "or more of a finished entry's key: otbench results list)")
        entries.append(found[0])
    places = {(entry.definition.env, json.dumps(entry.definition.to_json()["environment"], sort_keys=True))
              for entry in entries}
    settings = {entry.definition.setting for entry in entries} - {"gold"}  # the true docs are a setting of their own
    if len(places) != 1 or len(settings) > 1 or not entries[0].view:
        raise ConfigError(f"runs/{'.'.join(keys)}: entries of one environment and setting compare (gold beside it), "
                          f"not {sorted(settings)} of {len(places)} environments")
    first = entries[0]
    env = SimpleNamespace(metric_names=tuple(first.view["metrics"]), primary_metric=first.view["primary"],
                          learning=next((e.definition.learning for e in entries if e.definition.learning), "offline"))
    built = comparison.build(env, [_entry_row(entry, env, label=_docs_row(entry, results)) for entry in entries])
    printed = comparison.display_rows(built, env.primary_metric)
    for shown, entry in zip(printed, entries, strict=True):
        shown |= _cost(entry) | {"entry": entry.key[:8]}
    columns = ["row", *built.metrics, *comparison.REFERENCES, "tokens", "hours", "speed", "entry"]
    lines = [comparison.markdown(printed, columns).rstrip(), "", comparison.legend(built, env.primary_metric)]
    lines += [f"> warning: {warning}" for warning in built.warnings]
    lines += _dirty_note([(entry.definition.method, entry) for entry in entries])
    return "\n".join(lines).strip() + "\n"


def _dirty_note(rows: list[tuple[str, ledger.Entry]]) -> list[str]:
    """A line naming the rows whose runs ran on uncommitted changes (their commit ends ``-dirty``): the code they ran
    is not the commit's, nor anywhere in the repository."""
    dirty: dict[str, list[str]] = {}
    for label, entry in rows:
        if ledger.is_dirty(entry):
            dirty.setdefault(str(entry.code["commit"])[:7], []).append(f"{label} ({entry.key[:8]})")
    return [f"> dirty: {', '.join(labels)} ran on uncommitted changes to {commit} (`{commit}-dirty`): not exactly the "
            "code of any commit" for commit, labels in dirty.items()]


def _docs_row(entry: ledger.Entry, results: Path | None) -> str | None:
    """The row of an evaluation of the docs another entry learned (``--docs ledger:KEY``): that entry's row (``+TO``);
    None for any other entry (its own method names its row)."""
    docs = entry.definition.docs
    if entry.definition.command != "evaluate" or docs is None or not docs.startswith(ledger.LEDGER):
        return None
    return ledger.docs_entry(docs, results).definition.method


def _entry_row(entry: ledger.Entry, env: Any, *, label: str | None = None, seed: int | None = None) -> comparison.RowRuns:
    """A comparison row from an entry, without MLflow: labelled by its method and numbered by its sample's seed
    unless given (a grid's cell names both), every task as one of that sample (:meth:`Outcomes.as_sample`)."""
    from otbench.study.comparing import row_values

    definition = entry.definition
    seed = seed if seed is not None else definition.sample.seed or 0
    outcomes = entry.result_outcomes(seed)
    values = row_values(definition.command, entry.metrics, entry.tokens_by_phase, env, f"entry {entry.key}")
    run = SimpleNamespace(info=SimpleNamespace(run_id=entry.key),
                          data=SimpleNamespace(tags={comparison.CODE_VERSION_TAGS[0]: entry.code.get("commit") or ""}))
    optimizer = definition.optimizer.name if definition.optimizer is not None else ""
    return comparison.RowRuns(label or definition.method, optimizer, (run,), (seed,), (values,), (outcomes,))


NON_INFERIORITY = {"browsecomp/domains": 0.05}
"""Settings whose reference row is read as non-inferior to base within a margin, by setting: at the embedded agent's
size even the true docs do not separate from base on BrowseComp's accuracy, so "at least as good as base" is
read as the lower end of the paired difference (reference row - base) above -margin."""


def _non_inferiority(section: str, built: comparison.Table) -> list[str]:
    """The reference row against base as a non-inferiority reading, where the setting has a margin."""
    from otbench.evals.stats import Difference
    from otbench.optimizers.registry import reference_label

    margin = NON_INFERIORITY.get(section)
    row = next((row for row in built.rows if row["row"] == reference_label()), None)
    found = (row or {}).get("vs_base")
    if margin is None or not found:
        return []
    difference = Difference.from_dict(found)
    verdict = "holds" if difference.low > -margin else "does not hold"
    return [(f"Non-inferiority of {reference_label()} to base with a margin of {margin}: the paired difference's 95% "
            f"interval is {difference.text(3)}, so it {verdict} (it holds when the lower end is above -{margin}).")]


def _cost(entry: ledger.Entry) -> dict[str, Any]:
    """An entry's tokens (paid and cache-served), hours and the model's speed where it ran."""
    speed = entry.model_speed
    shown = (f"{speed['prompt_tokens_per_second']:.0f} / {speed['generation_tokens_per_second']:.0f}"
             if {"prompt_tokens_per_second", "generation_tokens_per_second"} <= set(speed) else "-")
    tokens, seconds = ledger.spent(entry)
    hours = f"{seconds / 3600:.2f}" if seconds is not None else "-"
    return {"tokens": f"{tokens:,}", "hours": hours, "speed": shown}


# -- the cost of every cell ----------------------------------------------------------------------------------------
def _cost_table(size: str, results: Path | None) -> str:
    with _grid(size, ()) as (_, cells):
        rows, tokens, hours = [], 0, 0.0
        for cell in cells:
            entry = ledger.find(cell.plan.definition, results)
            state = "missing" if entry is None else entry.status
            shown = {"setting": cell.section.name, "row": cell.plan.label, "state": state,
                     "tokens": "", "hours": "", "speed": "", "cores": "", "code": ""}
            if entry is not None:
                cost = _cost(entry)
                shown |= cost | {"cores": str(entry.machine.get("cores", "")),
                                 "code": str(entry.code.get("commit") or "")[:7]
                                 + (ledger.DIRTY if ledger.is_dirty(entry) else "")}
                tokens += int(cost["tokens"].replace(",", ""))
                hours += float(cost["hours"]) if cost["hours"] != "-" else 0.0
            rows.append(shown)
        done = sum(row["state"] == "finished" for row in rows)
        columns = ["setting", "row", "state", "tokens", "hours", "speed", "cores", "code"]
        return "\n".join([comparison.markdown(rows, columns).rstrip(), "", _grid_total(done, len(rows), tokens, hours)
                          + " Speed: the embedded model's prompt / generated tokens a second where the cell ran."]) + "\n"


def _setting_costs(size: str, results: Path | None) -> str:
    """What each setting of the grid took: its cells' tokens and hours summed (cells in the ledger only; the gold
    cell BFCL's settings share is counted once, under the first)."""
    with _grid(size, ()) as (_, cells):
        totals: dict[str, list[float]] = {}
        for cell in cells:
            entry = ledger.find(cell.plan.definition, results)
            spent = totals.setdefault(cell.section.name, [0, 0.0, 0])
            if entry is not None:
                tokens, seconds = ledger.spent(entry)
                spent[0] += tokens
                spent[1] += (seconds or 0.0) / 3600
                spent[2] += 1
        rows = [{"setting": name, "cells in the ledger": str(count), "tokens": f"{tokens:,.0f}", "hours": f"{hours:.2f}"}
                for name, (tokens, hours, count) in totals.items()]
        return comparison.markdown(rows, ["setting", "cells in the ledger", "tokens", "hours"]).rstrip() + "\n"


def _grid_total(done: int, cells: int, tokens: int, hours: float) -> str:
    """The cost table's last line: what the grid took once every cell is in, what it has taken so far until then."""
    if done == cells:
        return f"All {cells} cells finished: the grid took {tokens:,} tokens and {hours:.2f} hours."
    return (f"{done} of {cells} cells finished; {tokens:,} tokens and {hours:.2f} hours in the ledger so far "
            "(interrupted cells count what they spent).")


def render(root: Path, results: Path | None = None, *, write: bool = True) -> list[Rendered]:
    """Every page under ``root`` with rendered regions, rendered from the ledger (written back with ``write``, which
    also draws the figures the pages show)."""
    done = [render_page(path, results, root=root, draw=write) for path in pages(root)]
    if write:
        for page in done:
            if page.changed:
                page.path.write_text(page.text)
    return done

