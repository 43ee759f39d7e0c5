"""Typed numbers on the README and the docs pages: how many figures are rendered from the results ledger, checked
against their sources by the drift test, or typed and checked by nothing.

A page states a figure three ways:

- ``rendered``: inside a ``<!-- results: NAME -->`` region, written by ``otbench results render`` from the ledger;
- ``checked``: inside a ``<!-- figures: SOURCE ... -->`` region, typed in prose but found among its sources' values
  by the drift test (:mod:`otbench.study.figures`: ledger entries, or a benchmark's kept output);
- ``typed``: anywhere else: nothing checks it.

A figure is a number as a reader takes one: digits with optional thousands separators and decimals, a sign where
one leads it, a ``%`` or an ``x`` (times) after it. Not figures: numbers inside code (fenced or inline), HTML
comments, link and image targets, quotations (a user's message in double quotes: an example, not a claim); numbers that are part of a name (``GPT-5``, ``Qwen2.5-Coder-1.5B``, ``exec_simple``,
a commit ``848185f``: a letter, digit, ``_``, ``-``, ``.``, ``/`` or ``#`` joined to them), or name a table or
figure (the paper's ``Table 2``); the markers of ordered lists. The count is of tokens, so ``0.120 [0.077, 0.182]`` is three figures.

    python benchmarks/typed_numbers.py                 # a line per page, then the totals
    python benchmarks/typed_numbers.py --json
    python benchmarks/typed_numbers.py --show docs/results.md    # every typed figure of a page, with its line
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = ("README.md", "docs")
RENDERED = re.compile(r"<!-- results: [\w./-]+ -->\n.*?<!-- /results -->", re.DOTALL)
CHECKED = re.compile(r"<!-- figures: [^>]*-->\n.*?<!-- /figures -->", re.DOTALL)
NOT_PROSE = re.compile(r"```.*?```|<!--.*?-->|`[^`\n]*\n?[^`\n]*`|\]\([^)\s]*\)|https?://\S+|\"[^\"\n]*(?:\n[^\"\n]*){0,2}\"|“[^”\n]*(?:\n[^”\n]*){0,2}”", re.DOTALL)
FIGURE = re.compile(r"(?<![\w.\-/#@])(?<!Table )(?<!Figure )(?:(?<=[\s(\[])[-+−])?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:%|x(?![\w]))?"
                    r"(?![\w.\-]\w)(?![\w])(?!,\d)")
LIST_MARKER = re.compile(r"^(\s*)\d+\.(?=\s)", re.MULTILINE)


@dataclass(frozen=True)
class Figure:
    page: str
    line: int
    text: str
    kind: str
    """``rendered``, ``checked`` or ``typed``."""


def _blanked(text: str, pattern: re.Pattern[str]) -> str:
    """``text`` with ``pattern``'s matches replaced by spaces (newlines kept), so positions and lines stay."""
    return pattern.sub(lambda found: re.sub(r"[^\n]", " ", found.group(0)), text)


def figures(path: Path, root: Path = ROOT) -> list[Figure]:
    """Every figure of one page, with its kind."""
    text = path.read_text()
    spans = [(found.start(), found.end(), "rendered") for found in RENDERED.finditer(text)]
    spans += [(found.start(), found.end(), "checked") for found in CHECKED.finditer(text)]
    prose = _blanked(_blanked(text, NOT_PROSE), LIST_MARKER)
    found = []
    for match in FIGURE.finditer(prose):
        kind = next((kind for start, end, kind in spans if start <= match.start() < end), "typed")
        found.append(Figure(str(path.relative_to(root)), text.count("\n", 0, match.start()) + 1, match.group(0), kind))
    return found


def pages(root: Path = ROOT) -> list[Path]:
    found = []
    for place in PAGES:
        target = root / place
        found += sorted(target.rglob("*.md")) if target.is_dir() else [target]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/typed_numbers.py", description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository to count (default: this one)")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    parser.add_argument("--show", default=None, metavar="PAGE", help="list every typed figure of this page")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    counted = {str(path.relative_to(root)): figures(path, root) for path in pages(root)}
    if args.show:
        for figure in counted[args.show]:
            if figure.kind == "typed":
                print(f"{figure.page}:{figure.line}: {figure.text}")
        return 0
    kinds = ("rendered", "checked", "typed")
    rows = {page: {kind: sum(f.kind == kind for f in found) for kind in kinds} for page, found in counted.items()}
    totals = {kind: sum(row[kind] for row in rows.values()) for kind in kinds}
    if args.json:
        print(json.dumps({"pages": rows, "total": totals}))
        return 0
    width = max(len(page) for page in rows)
    print(f"{'page':<{width}} {'rendered':>9} {'checked':>8} {'typed':>6}")
    for page, row in rows.items():
        if any(row.values()):
            print(f"{page:<{width}} {row['rendered']:>9} {row['checked']:>8} {row['typed']:>6}")
    print(f"{'total':<{width}} {totals['rendered']:>9} {totals['checked']:>8} {totals['typed']:>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
