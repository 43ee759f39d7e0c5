"""The embedded model's integrity check on the real file: what a full check costs, and which corruptions
of the cached model are caught before it loads.

The model is assembled from its installed part packages into a temporary cache (the user's cache is not
touched), then each corruption of ``tests/model_corruptions.py`` is applied to it in turn and
:func:`otbench.llm.weights.ensure_gguf` is asked for the model, as a command does before starting the
server. A corruption is detected when the file it returns has the model's sha256 again (caught and rebuilt
from the parts). The cost figures are the seconds of a full sha256 of the file and of a stat-only check
whose stamp holds.

    python benchmarks/model_integrity.py                   # the 1.1 GB qwen-1.5b (needs ~2.3 GB in the temp dir)
    python benchmarks/model_integrity.py --model qwen-0.5b --json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path[:0] = [str(TESTS.parent), str(TESTS)]

from model_corruptions import CORRUPTIONS

from otbench.llm import weights


def _seconds(work: Callable[[], object], repeats: int) -> float:
    """Median wall seconds of ``work()`` over ``repeats`` runs."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/model_integrity.py", description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen-1.5b", choices=sorted(weights.EMBEDDED_MODELS))
    parser.add_argument("--repeats", type=int, default=3, help="timings: runs per figure (median; default 3)")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    args = parser.parse_args(argv)
    model = weights.EMBEDDED_MODELS[args.model]
    rows = []
    with tempfile.TemporaryDirectory(prefix="otbench-model-integrity-") as directory:
        cache = Path(directory)
        path = weights.ensure_gguf(model, directory=cache)
        full = _seconds(lambda: weights.sha256_of(path), args.repeats)
        stamp = _seconds(lambda: weights.ensure_gguf(model, directory=cache), args.repeats)
        for name, corrupt in CORRUPTIONS.items():
            corrupt(path)
            changed = weights.sha256_of(path) != model.sha256
            returned = weights.ensure_gguf(model, directory=cache)
            detected = changed and weights.sha256_of(returned) == model.sha256
            rows.append({"corruption": name, "changed": changed, "detected": detected})
            print(f"{name}: {'detected' if detected else 'MISSED'}", file=sys.stderr, flush=True)
    result = {"model": model.name, "bytes": model.size, "full_check_seconds": round(full, 3),
              "stamp_check_seconds": round(stamp, 5), "corruptions_tried": len(rows),
              "corruptions_detected": sum(row["detected"] for row in rows), "rows": rows}
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{model.name}: {model.size / 2**30:.2f} GiB; full sha256 check {full:.2f} s, stamp check "
              f"{stamp * 1000:.2f} ms (median of {args.repeats})")
        print(f"corruptions tried {len(rows)}, detected {result['corruptions_detected']}")
        for row in rows:
            print(f"  {'detected' if row['detected'] else 'MISSED  '}  {row['corruption']}")
    return 0 if result["corruptions_detected"] == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
