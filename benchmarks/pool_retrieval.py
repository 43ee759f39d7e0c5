"""Retrieval of the pool's tools per docs source, with each test request as the query and no agent.

For each pool size and docs source (the four settings' docs, and any learned docs file given with ``--docs``), the
recall@1/5/10 and nDCG@10 of the tools each test request needs (:mod:`otbench.envs.pool.retrieval`), with 95%
intervals, under both indexes: ``docs`` (a tool is found by its docs) and ``usage`` (by its docs and the train
requests it answered, as Tool2Vec does): the ablation of ``--pool-index``. ``usage - docs`` is the paired
difference in recall@5 on the same requests, with its test.

Each learned docs file (``--docs``, ``LABEL=PATH`` or a path) is scored beside them, with its paired difference
from the docs it was learned from (``--setting``) and from gold's, under the ``docs`` index; every docs source's
recall@5 is also given as its share of gold's, and gold's row gives the pool's tools, apps and test requests by the
tools they need.

    python benchmarks/pool_retrieval.py                              # pools of 30, 300, 1000 and all
    python benchmarks/pool_retrieval.py --sizes 30 --docs +TO=learned.json +ET=et.json --setting names_only --json
    python benchmarks/pool_retrieval.py --sizes 30 --docs +TO=learned.json --won   # the searches each tool won
    python benchmarks/pool_retrieval.py --sizes 30 --docs +TO=ledger:72f79965       # a ledger entry's final docs
    python benchmarks/pool_retrieval.py --sizes 30 --keep pool_retrieval-30         # kept for the pool page's figures
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

SOURCES = ("names_only", "names_params", "names_desc", "gold")


def _cell(value: dict[str, float]) -> str:
    return f"{value['value']:.3f} [{value['low']:.2f}, {value['high']:.2f}]"


def _learned(given: str) -> tuple[str, Any]:
    """``LABEL=PATH`` or a path (labelled by its folder: an optimize run's ``RUN_ID/final_docs.json``), or
    ``LABEL=ledger:KEY`` for the final docs a results ledger entry keeps (an interrupted run's entry: the docs of its
    last checkpoint, such as a coverage pass's end); the label and the docs' JSON."""
    from otbench.run import ledger

    label, path = _label(given), given.rpartition("=")[2]
    if path.startswith(ledger.LEDGER):
        key = path.removeprefix(ledger.LEDGER)
        stopped = [entry for entry in ledger.starting_with(key) if entry.status == "interrupted"] if len(key) >= 8 else []
        if len(stopped) == 1 and "docs" in stopped[0].resume.get("checkpoint.json", {}):
            return label, stopped[0].resume["checkpoint.json"]["docs"]
        return label, ledger.docs_entry(path).artifacts[ledger.RUN_DOCS_ARTIFACT]
    return label, json.loads(Path(path).read_text())


def _label(given: str) -> str:
    """A ``--docs`` argument's row label: its ``LABEL=``, else its ``ledger:KEY``, else its file's folder."""
    from otbench.run.ledger import LEDGER

    label, _, path = given.rpartition("=")
    if label or path.startswith(LEDGER):
        return label or path
    found = Path(path)
    return f"learned ({found.parent.name or found.stem})"


def run(sizes: list[str], learned: list[str], learned_setting: str, limit: int | None,
        won: bool = False, versus: Sequence[tuple[str, str]] = ()) -> list[dict[str, Any]]:
    from otbench.envs.base import sample_tasks
    from otbench.envs.pool import retrieval
    from otbench.envs.pool.env import TOOLSET, PoolEnvironment
    from otbench.envs.pool.index import EmbeddingStore, MiniLmEncoder, ToolIndex, default_store_path
    from otbench.modules.tool_docs import Toolbox
    from otbench.optimizers.base import tools_changed

    encoder = MiniLmEncoder()
    index = ToolIndex(EmbeddingStore(encoder, default_store_path(encoder)))
    rows: list[dict[str, Any]] = []
    sources: list[tuple[str, str, Toolbox | None]] = [(name, name, None) for name in SOURCES]
    for given in learned:
        label, learned_docs = _learned(given)
        sources.append((label, learned_setting, Toolbox.from_json(learned_docs)))
    for size in sizes:
        by_docs: dict[str, list[retrieval.Scored]] = {}
        for label, setting, docs in sources:
            with PoolEnvironment(setting=setting, pool_size=size, index=index) as env:
                tests = sample_tasks(env.tasks("test"), limit, 0)
                usage = retrieval.train_usage(env.tasks("train"), env.to_shown)
                toolbox = env.toolbox()
                start = toolbox.deepcopy()
                if docs is not None:
                    toolbox.adopt_docs(docs)
                entries = env.doc_entries(toolbox)
                scored = {}
                for kind, answered in (("docs", None), ("usage", usage)):
                    started = time.perf_counter()
                    snapshot = retrieval.snapshot_of(index, entries, answered)
                    scored[kind] = retrieval.score_requests(snapshot, index, tests, env.to_shown)
                    seconds = time.perf_counter() - started
                    groups = retrieval.by_kind(scored[kind])
                    rows.append({"pool": size, "docs": label, "index": kind, "n": len(tests), "seconds": round(seconds, 1),
                                 **retrieval.as_row(retrieval.summary(scored[kind])),
                                 "single_recall_at_5": retrieval.as_row(retrieval.summary(groups["single"]))
                                 ["recall_at_5"] if groups["single"] else None,
                                 "workflow_recall_at_5": retrieval.as_row(retrieval.summary(groups["workflow"]))
                                 ["recall_at_5"] if groups["workflow"] else None})
                rows[-1]["usage_minus_docs_recall_at_5"] = _difference(scored["usage"], scored["docs"])
                by_docs[label] = scored["docs"]
                if docs is not None:
                    learned_row = next(row for row in rows[-2:] if row["index"] == "docs")
                    learned_row["tools_learned"] = tools_changed(start, toolbox, [TOOLSET])
                    if won:
                        learned_row["won"] = _won(env, index, tests, start, toolbox)
                        learned_row["won_by_tool"] = _by_tool(learned_row["won"])
                    learned_row["minus_start_recall_at_5"] = _difference(scored["docs"], by_docs[learned_setting])
                    learned_row["minus_gold_recall_at_5"] = _difference(scored["docs"], by_docs["gold"])
        for label, reference in versus:  # a learned row against another, request by request (an ablation's pair)
            row = next(row for row in rows if row["pool"] == size and row["docs"] == label and row["index"] == "docs")
            row.setdefault("versus_recall_at_5", {})[reference] = _difference(by_docs[label], by_docs[reference])
        gold = next(row for row in rows if row["pool"] == size and row["docs"] == "gold" and row["index"] == "docs")
        needed = Counter(int(item.metrics["tools_needed"]) for item in by_docs["gold"])
        gold.update({"tools": len(env.specs), "apps": len({spec.app for spec in env.specs}),
                     "tests_by_tools_needed": {str(count): needed[count] for count in sorted(needed)}})
        for row in rows:
            if row["pool"] == size and row["index"] == "docs":
                row["share_of_gold_recall_at_5"] = round(row["recall_at_5"]["value"] / gold["recall_at_5"]["value"], 4)
    return rows


def _won(env: Any, index: Any, tests: list[Any], start: Any, learned: Any) -> list[dict[str, Any]]:
    """The searches the learned docs won (into the top 5 from outside it), each with the tool's real name and app,
    its learned description and the tools it passed, by their real names."""
    from dataclasses import asdict

    from otbench.envs.pool import retrieval
    from otbench.envs.pool.env import TOOLSET

    queries = [task.text for task in tests]
    before, after = (retrieval.rankings(retrieval.snapshot_of(index, env.doc_entries(docs)), index, queries)
                     for docs in (start, learned))
    apps = {spec.name: spec.app for spec in env.specs}
    described = {tool.name: tool.description for tool in learned.toolset(TOOLSET)}
    return [{**asdict(won), "real": env.to_real[won.tool], "app": apps[env.to_real[won.tool]],
             "description": described.get(won.tool, ""), "passed": [env.to_real[name] for name in won.passed]}
            for won in retrieval.won_searches(tests, before, after, env.to_shown)]


def _by_tool(won: list[dict[str, Any]]) -> dict[str, list[list[int | None]]]:
    """The searches won, by the tool's real name: each as its rank before and after (None: below the depth)."""
    grouped: dict[str, list[list[int | None]]] = {}
    for search in sorted(won, key=lambda search: (search["real"], search["after"])):
        grouped.setdefault(search["real"], []).append([search["before"], search["after"]])
    return grouped


def _print_won(row: dict[str, Any]) -> None:
    """The searches one learned docs file won, by app and tool, each tool's learned description quoted once."""
    from itertools import groupby

    print(f"\nsearches won by {row['docs']} (pool {row['pool']}): the needed tool's rank, start docs -> learned docs")
    ordered = sorted(row["won"], key=lambda won: (won["app"], won["real"], won["after"]))
    for _, group in groupby(ordered, key=lambda won: won["real"]):
        searches = list(group)
        first = searches[0]
        print(f"  {first['app']} / {first['tool']} (really {first['real']}): {first['description']!r}")
        for won in searches:
            passed = f"; passed {', '.join(won['passed'][:4])}" if won["passed"] else ""
            print(f"    {won['before'] or '>10'} -> {won['after']}{passed}: {won['request']}")


def _difference(row: list[Any], reference: list[Any]) -> dict[str, Any]:
    """``row`` minus ``reference`` in recall@5, request by request, with its interval and test."""
    from otbench.envs.pool import retrieval

    gain = retrieval.paired(row, reference, "recall_at_5")
    return {"value": round(gain.value, 4), "low": round(gain.low, 4), "high": round(gain.high, 4), "p": gain.p_value,
            "test": gain.test}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["30", "300", "1000", "all"], help="pool sizes")
    parser.add_argument("--docs", nargs="*", default=[], metavar="[LABEL=]PATH",
                        help="learned docs files (an optimize run's final_docs.json, or ledger:KEY: an interrupted "
                             "run's at its last checkpoint) to score too")
    parser.add_argument("--setting", default="names_only", help="the setting the --docs files were learned in")
    parser.add_argument("--limit", type=int, default=None, help="a seeded sample of N test requests per pool")
    parser.add_argument("--won", action="store_true",
                        help="list the searches each learned docs file won (needed tool into the top 5), by tool")
    parser.add_argument("--versus", nargs=2, action="append", default=[], metavar=("LABEL", "REFERENCE"),
                        help="also the paired difference in recall@5 of the docs labelled LABEL to those labelled "
                             "REFERENCE (either a --docs label or a setting), request by request; repeatable")
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    parser.add_argument("--keep", default=None, metavar="NAME",
                        help="also keep the rows in the results ledger as bench/NAME, for the pages' figures")
    args = parser.parse_args(argv)
    labels = [*SOURCES, *map(_label, args.docs)]
    for pair in args.versus:
        if unknown := [label for label in pair if label not in labels]:
            parser.error(f"--versus: no docs labelled {unknown[0]!r}; the labels are {', '.join(map(repr, labels))}")
    rows = run(args.sizes, args.docs, args.setting, args.limit, won=args.won, versus=[tuple(pair) for pair in args.versus])
    if args.keep:
        from otbench.study.figures import keep_benchmark

        given = sys.argv[1:] if argv is None else argv
        kept = keep_benchmark(args.keep, shlex.join(["python", "benchmarks/pool_retrieval.py", *given]), rows)
        print(f"kept: {kept}", file=sys.stderr)
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return 0
    print("pool  docs  index  n  recall@1  recall@5  recall@10  nDCG@10  single r@5  workflow r@5  usage-docs r@5"
          "  learned-start r@5  learned-gold r@5  tools learned")
    for row in rows:
        gains = [_gain_text(row.get(name)) for name in ("usage_minus_docs_recall_at_5", "minus_start_recall_at_5",
                                                        "minus_gold_recall_at_5")]
        cells = [_cell(row[name]) for name in ("recall_at_1", "recall_at_5", "recall_at_10", "ndcg_at_10")]
        kinds = [_cell(row[name]) if row[name] else "-" for name in ("single_recall_at_5", "workflow_recall_at_5")]
        print("  ".join([str(row["pool"]), str(row["docs"]), str(row["index"]), str(row["n"]), *cells, *kinds,
                         *gains, str(row.get("tools_learned", ""))]))
    for row in rows:
        for reference, gain in row.get("versus_recall_at_5", {}).items():
            print(f"{row['pool']}  {row['docs']} minus {reference}, recall@5: {_gain_text(gain)}")
    for row in rows:
        if "won" in row:
            _print_won(row)
    return 0


def _gain_text(gain: object) -> str:
    if not isinstance(gain, dict):
        return ""
    return f"{gain['value']:+.3f} [{gain['low']:+.2f}, {gain['high']:+.2f}] p={gain['p']:.2g}"


if __name__ == "__main__":
    raise SystemExit(main())
