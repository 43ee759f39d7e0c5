"""``python -m otbench.results``: the results ledger, every run a page cites kept with the code (``results/``).

- ``add [RUN_ID ...] [--all]``: keep runs of the local store (or ``--tracking-uri``) in the ledger, finished or
  interrupted (as far as they got, with what a resume needs); ``--all``: every evaluate and optimize run there;
- ``list``: the entries, filtered (``--env``, ``--setting``, ``--command``, ``--status``); a file that is not a sound
  entry is named on stderr and the others are listed (exit 1);
- ``show KEY [--artifact PATH]``: one entry (a key's first characters are enough), or one artefact it keeps
  (``docs/final_docs.json``: the learned docs, a file for ``--docs``);
- ``load [KEY ...]``: make entries ordinary MLflow runs of the local store (or a tracking server), so the MLflow UI
  compares them and ``compare`` and ``reproduce`` reuse them (they also load what they need by themselves); every
  entry is checked before the store is opened, and each is loaded whole or not at all;
- ``pair REFERENCE:ROW ...``: two entries scored on the same tasks compared task by task (the row minus the
  reference, with its paired interval and test, wins and losses, tool calls a task), one line a pair, and the pairs
  pooled into one sample where several are given, also each environment's where it has several pairs beside others
  (``--json``: the same as data);
- ``verify``: every problem of every entry at once: the format, keys recomputed from the definitions, digests of
  the content, the commits named, statuses, result metrics against the per-task outcomes;
- ``render [--check]``: the results tables of the README and the docs, from the ledger (``--check``: only say
  which page differs, and exit 1); either way, every figure the pages' prose cites in a ``<!-- figures: -->``
  region is checked against its sources, and one none of them gives is named (exit 1).

This module is the command's face; the ledger is :mod:`otbench.run.ledger`, the tables :mod:`otbench.study.rendered`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from otbench.arguments import OneLineParser
from otbench.cli import add_tracking_arguments
from otbench.core.tables import format_table
from otbench.errors import ConfigError, DataError
from otbench.exits import run_main
from otbench.outputs import OUTPUT_DIRECTORY, check_outputs
from otbench.run.settings import tracking_from_values

ROOT = Path(".")
"""The repository whose pages ``render`` writes: the working directory."""


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m otbench.results", description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=OUTPUT_DIRECTORY, default=None,
                        help="the ledger's folder (default ./results, or $OTBENCH_RESULTS)")
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    add = verbs.add_parser("add", help="keep runs of the store in the ledger")
    add.add_argument("run_ids", nargs="*", metavar="RUN_ID", help="the runs to keep")
    add.add_argument("--all", action="store_true", help="every evaluate and optimize run of the store")
    add.add_argument("--replace", action="store_true", help="replace finished entries of the same runs")
    add_tracking_arguments(add)
    listing = verbs.add_parser("list", help="the ledger's entries")
    for name in ("env", "setting", "command", "status"):
        listing.add_argument(f"--{name}", default=None, help=f"only entries of this {name}")
    listing.add_argument("--json", action="store_true", help="one JSON object an entry")
    show = verbs.add_parser("show", help="one entry")
    show.add_argument("key", help="an entry's key, or its first characters")
    show.add_argument("--artifact", default=None, metavar="PATH",
                      help="print only this kept artefact, e.g. docs/final_docs.json (a docs file for --docs)")
    load = verbs.add_parser("load", help="make entries MLflow runs of the store")
    load.add_argument("keys", nargs="*", metavar="KEY", help="the entries to load (default: all)")
    add_tracking_arguments(load)
    pair = verbs.add_parser("pair", help="entries compared task by task, a pair at a time and pooled")
    pair.add_argument("pairs", nargs="+", metavar="REFERENCE:ROW",
                      help="two entries' keys (or their first characters) scored on the same tasks, e.g. the "
                           "starting docs' evaluation and the learned docs' run")
    pair.add_argument("--metric", default="score", help="the per-task score compared (default score)")
    pair.add_argument("--json", action="store_true", help="the figures as one JSON object")
    verbs.add_parser("verify", help="check the ledger")
    render = verbs.add_parser("render", help="the results tables of the README and the docs, from the ledger")
    render.add_argument("--check", action="store_true", help="write nothing; exit 1 when a page differs")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_outputs(parser, args)
    results: Path | None = args.results
    if args.verb == "add":
        return _add(args.run_ids, every=args.all, replace=args.replace, values=vars(args), results=results)
    if args.verb == "list":
        return _list(results, {name: getattr(args, name) for name in ("env", "setting", "command", "status")},
                     as_json=args.json)
    if args.verb == "show":
        entry = _entry(args.key, results)
        if args.artifact is None:
            print(json.dumps(entry.to_json(), indent=1, sort_keys=True))
        elif args.artifact in entry.artifacts:
            print(json.dumps(entry.artifacts[args.artifact], indent=1))
        else:
            raise DataError(f"entry {entry.key[:8]} keeps no {args.artifact!r}; it keeps: "
                            f"{', '.join(sorted(entry.artifacts)) or 'none'}")
        return 0
    if args.verb == "load":
        return _load(args.keys, vars(args), results)
    if args.verb == "pair":
        return _pair(args.pairs, args.metric, results, as_json=args.json)
    if args.verb == "verify":
        return _verify(results)
    return _render(results, check=args.check)


def _configure(values: dict[str, Any]) -> None:
    from otbench import mlflow_store

    chosen = tracking_from_values(values)
    mlflow_store.configure(chosen.uri, directory=chosen.directory)


def _add(run_ids: list[str], *, every: bool, replace: bool, values: dict[str, Any], results: Path | None) -> int:
    from otbench.run import ledger

    if not run_ids and not every:
        raise ConfigError("name the runs to add, or --all for every evaluate and optimize run of the store")
    _configure(values)
    wanted = run_ids or _store_runs()
    added = 0
    for run_id in wanted:
        try:
            entry = ledger.entry_of(run_id)
        except ConfigError as reason:
            if run_ids:
                raise
            print(f"skipped {run_id}: {reason}", file=sys.stderr)
            continue
        path, action = ledger.write(entry, results, replace=replace)
        added += action != "kept"
        print(f"{action:<8} {entry.key} {entry.status:<11} {entry.definition.command:<8} {entry.definition.env}/"
              f"{entry.definition.setting} {entry.definition.method} (run {run_id}) -> {path}")
    print(f"{added} entr{'y' if added == 1 else 'ies'} added or replaced")
    return 0


def _store_runs() -> list[str]:
    """Every evaluate and optimize run of the store (not a sweep's trial), oldest first, except those loaded from
    the ledger and unchanged since."""
    import mlflow

    from otbench import mlflow_store
    from otbench.run.ledger import LEDGER_TAG, half_loaded

    experiment = mlflow.get_experiment_by_name(mlflow_store.EXPERIMENT)
    if experiment is None:
        return []
    client = mlflow.MlflowClient()
    runs = sorted((run for command in ("evaluate", "optimize")  # MLflow's search has no OR
                   for run in client.search_runs([experiment.experiment_id], f"tags.command = '{command}'")),
                  key=lambda run: run.info.start_time)
    return [run.info.run_id for run in runs if "mlflow.parentRunId" not in run.data.tags and not half_loaded(run)
            and not (LEDGER_TAG in run.data.tags and run.info.status in ("FINISHED", "KILLED")
                     and run.info.end_time is not None and _unchanged(run))]


def _unchanged(run: Any) -> bool:
    """Whether a run loaded from the ledger is as it was loaded (not resumed and finished since)."""
    from otbench.run import ledger

    path = ledger.entry_path(run.data.tags[ledger.LEDGER_TAG])
    if not path.is_file():
        return False
    try:
        kept = ledger.read(path)
    except DataError:
        return False  # a damaged entry: the run is added again, which writes a sound one
    return (kept.status == "finished") == (run.info.status == "FINISHED")


def _list(results: Path | None, wanted: dict[str, str | None], *, as_json: bool) -> int:
    """The entries that read as sound ones; each file that does not is named on stderr, one line, and the command
    ends with 1 after listing the others."""
    from otbench.run import ledger

    scanned = ledger.scan(results)
    rows = []
    for entry in scanned.entries:
        defined = entry.definition
        row = {"key": entry.key, "status": entry.status, "command": defined.command, "env": defined.env,
               "setting": defined.setting, "row": defined.method, "limit": defined.sample.limit,
               "seed": "all" if defined.sample.seed is None else defined.sample.seed,
               "hours": round(entry.seconds / 3600, 2) if entry.seconds is not None else "",
               "code": _short_commit(entry)}
        if all(value is None or str(row[name]) == value for name, value in wanted.items()):
            rows.append(row)
    if as_json:
        print("\n".join(json.dumps(row) for row in rows))
    else:
        print(format_table(rows, ["key", "status", "command", "env", "setting", "row", "limit", "seed", "hours",
                                  "code"]) if rows else "no entries")
    for problem in scanned.problems:
        print(f"error: {' '.join(problem.split())}", file=sys.stderr)
    return 1 if scanned.problems else 0


def _short_commit(entry: Any) -> str:
    """An entry's commit as pages show it: seven characters, ``-dirty`` where its run had uncommitted changes."""
    from otbench.run import ledger

    return str(entry.code.get("commit") or "")[:7] + (ledger.DIRTY if ledger.is_dirty(entry) else "")


def _entry(key: str, results: Path | None) -> Any:
    from otbench.run import ledger

    found = ledger.starting_with(key, results)
    if len(found) != 1:
        raise DataError(f"{len(found)} entries' keys begin with {key!r}: give more of the key"
                        if found else f"no entry's key begins with {key!r} (otbench results list shows them)")
    return found[0]


def _pair(pairs: list[str], metric: str, results: Path | None, *, as_json: bool) -> int:
    """Each pair's figures, and the pooled pairs' where there are several."""
    from otbench.study import paired

    chosen = []
    for text in pairs:
        reference, _, row = text.partition(":")
        if not reference or not row:
            raise ConfigError(f"pair {text!r}: give two entries' keys as REFERENCE:ROW (e.g. cab4aed7:a41beb46)")
        chosen.append(paired.pair_of(_entry(reference, results), _entry(row, results)))
    shown = [paired.figures(pair, metric) for pair in [*chosen, *paired.pooled_lines(chosen)]]
    if as_json:
        print(json.dumps({"metric": metric, "pairs": [figures.to_dict() for figures in shown]}, indent=1))
        return 0
    rows = [{"pair": f.label, "where": f.where, "tasks": f.tasks, "reference": f"{f.reference:.3f}",
             "row": f"{f.row:.3f}", "difference": f.difference.text(3), "p": f"{f.difference.p_value:.3f}",
             "wins": f.wins, "losses": f.losses,
             "calls a task": f"{f.calls[0]:.2f} / {f.calls[1]:.2f}" if f.calls is not None else "-"} for f in shown]
    print(format_table(rows, list(rows[0])))
    print(f"{metric}: row minus reference on the tasks both were scored on; [low, high]: paired bootstrap 95% "
          f"interval; p: {shown[-1].difference.test} (two-sided); pooled: the pairs' tasks as one sample, an environment's "
          "or every pair's")
    return 0


def _load(keys: Iterable[str], values: dict[str, Any], results: Path | None) -> int:
    """Every chosen entry read and checked before the store is opened (a bad one refuses the load, writing nothing);
    each is then loaded whole or not at all (:func:`otbench.run.ledger.load`)."""
    from otbench.run import ledger

    chosen = [_entry(key, results) for key in keys] or ledger.entries(results)
    _configure(values)  # after the entries are checked: a refused key or entry writes no store
    for entry in chosen:
        run_id = ledger.load(entry)
        print(f"{entry.key} {entry.status:<11} {entry.definition.method:<16} -> run {run_id}")
    print(f"{len(chosen)} entr{'y' if len(chosen) == 1 else 'ies'} in the store; 'otbench ui' shows them side by side")
    return 0


def _verify(results: Path | None) -> int:
    from otbench.run import ledger

    problems = ledger.verify(results)
    for problem in problems:
        print(problem)
    count = len(ledger.scan(results).entries) if not problems else None
    print(f"{len(problems)} problem(s)" if problems else f"ledger ok: {count} entries")
    return 1 if problems else 0


def _render(results: Path | None, *, check: bool) -> int:
    """The pages' tables rendered (or, with ``check``, compared), and the figures their prose cites checked against
    their sources (:mod:`otbench.study.figures`): a figure none gives is named, and the command ends with 1."""
    from otbench.study.figures import check_pages
    from otbench.study.rendered import render

    pages = render(ROOT.resolve(), results, write=not check)
    for page in pages:
        state = ("differs from the ledger" if check else "rendered") if page.changed else "as the ledger renders it"
        print(f"{page.path}: {', '.join(page.tables)}: {state}")
    unfound = check_pages(ROOT.resolve(), results)
    for figure in unfound:
        print(figure)
    return 1 if (check and any(page.changed for page in pages)) or unfound else 0


if __name__ == "__main__":
    run_main(main)
