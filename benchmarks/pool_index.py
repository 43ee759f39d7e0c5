"""The pool's search index at scale: build time and memory at 1,000 and 5,000 tools, and search latency.

For each size N it builds what ``search_tools`` searches, with the real encoder (all-MiniLM-L6-v2 on one
thread, as the environment runs it) and an empty embedding store, so every doc is encoded:

- ``encode_s``: encoding the N docs (the cold build: every tool's docs are new);
- ``faiss_build_ms``: the FAISS index from the stored vectors (what a new version of the docs costs once its vectors
  exist);
- ``rebuild_s``: a new version where ``changed_share`` of the tools' docs (1%) changed (those are encoded again, the
  rest are read from the store), then its index: what an optimizer's candidate docs cost;
- ``vectors_mb``: the index's float32 vectors; ``rss_mb``: the process's resident memory grown by the build
  (the store and the index), and ``peak_rss_mb`` the process's peak so far (the model included);
- search latency over test requests, one at a time: ``search_ms`` (encode the query, then search) and
  ``faiss_ms`` (the FAISS search alone), median and 95th percentile;
- ``load_average``: the machine's one-minute load average when the size's measurement began (timings taken on a
  shared machine are upper bounds).

The catalogue holds 1,025 tools; past that, N tools are the catalogue's gold docs again under new names (each
copy a distinct text, so each is encoded; encoding and exact search cost the same for any text of that length).

    python benchmarks/pool_index.py                   # 1,000 and 5,000 tools, 200 queries
    python benchmarks/pool_index.py --sizes 1000 --queries 50 --json
    python benchmarks/pool_index.py --keep pool_index  # kept in the results ledger for the pool page's figures
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def _status(field: str) -> float:
    """A memory figure of this process from /proc (``VmRSS``, ``VmHWM``), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def entries(size: int) -> list[tuple[str, str]]:
    """``size`` ``(name, doc text)`` entries: the catalogue's tools' gold docs, then copies under new names."""
    from otbench.envs.pool import catalogue, docs

    specs = list(catalogue.ordered_tools())
    tools = docs.setting_tools(specs, "gold")
    apps = docs.app_names(specs, "gold")
    base = [(tool.name, docs.doc_text(tool, apps[tool.name])) for tool in tools]
    made = []
    for number in range(size):
        name, text = base[number % len(base)]
        copy = number // len(base)
        made.append((name, text) if copy == 0 else (f"{name}_{copy}", text.replace(name, f"{name}_{copy}", 1)))
    return made


def measure(size: int, queries: list[str], encoder: object) -> dict[str, float]:
    from otbench.envs.pool.index import EmbeddingStore, Snapshot, ToolIndex

    load = round(os.getloadavg()[0], 2)
    listed = entries(size)
    store = EmbeddingStore(encoder)  # type: ignore[arg-type]
    index = ToolIndex(store)
    rss = _status("VmRSS")
    started = time.perf_counter()
    vectors = store.vectors([text for _, text in listed])
    encoded = time.perf_counter() - started
    started = time.perf_counter()
    snapshot = Snapshot(tuple(name for name, _ in listed), vectors)
    built = time.perf_counter() - started
    grown = _status("VmRSS") - rss
    changed = list(listed)
    for position in range(0, size, 100):  # 1% of the tools get new docs
        name, text = changed[position]
        changed[position] = (name, text + " Learned: also answers requests about this.")
    started = time.perf_counter()
    index.snapshot(changed)
    rebuilt = time.perf_counter() - started
    searches, faiss_only = [], []
    for query in queries:
        started = time.perf_counter()
        vector = encoder.encode([query])[0]  # type: ignore[attr-defined]
        middle = time.perf_counter()
        snapshot.nearest(vector, 10)
        ended = time.perf_counter()
        searches.append((ended - started) * 1000)
        faiss_only.append((ended - middle) * 1000)
    return {"tools": size, "load_average": load, "encode_s": round(encoded, 2), "faiss_build_ms": round(built * 1000, 2),
            "rebuild_s": round(rebuilt, 2), "changed_share": round(len(range(0, size, 100)) / size, 4),
            "vectors_mb": round(vectors.nbytes / 2**20, 2), "rss_mb": round(grown, 1),
            "peak_rss_mb": round(_status("VmHWM"), 1),
            "search_ms_median": round(statistics.median(searches), 2),
            "search_ms_p95": round(_percentile(searches, 0.95), 2),
            "faiss_ms_median": round(statistics.median(faiss_only), 3),
            "faiss_ms_p95": round(_percentile(faiss_only, 0.95), 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000], help="tools in the index")
    parser.add_argument("--queries", type=int, default=200, help="test requests searched, one at a time")
    parser.add_argument("--json", action="store_true", help="one JSON object per size")
    parser.add_argument("--keep", default=None, metavar="NAME",
                        help="also keep the rows in the results ledger as bench/NAME, for the pages' figures")
    args = parser.parse_args(argv)
    from otbench.envs.pool.index import MiniLmEncoder
    from otbench.envs.pool.tasks import all_tasks

    started = time.perf_counter()
    encoder = MiniLmEncoder()
    loaded = time.perf_counter() - started
    queries = [task.text for task in all_tasks() if task.split == "test"][: args.queries]
    rows = [measure(size, queries, encoder) for size in args.sizes]
    if args.keep:
        from otbench.study.figures import keep_benchmark

        given = sys.argv[1:] if argv is None else argv
        kept = keep_benchmark(args.keep, shlex.join(["python", "benchmarks/pool_index.py", *given]),
                              [{**row, "model_load_s": round(loaded, 2)} for row in rows])
        print(f"kept: {kept}", file=sys.stderr)
    if args.json:
        for row in rows:
            print(json.dumps({**row, "model_load_s": round(loaded, 2)}))
        return 0
    print(f"encoder: all-MiniLM-L6-v2, 1 thread, loaded in {loaded:.1f} s; {len(queries)} queries")
    header = list(rows[0])
    print("  ".join(header))
    for row in rows:
        print("  ".join(str(row[name]).rjust(len(name)) for name in header))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
