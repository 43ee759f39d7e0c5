"""Plain-text tables for results people compare."""

from __future__ import annotations

from typing import Any


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def format_table(rows: list[dict[str, Any]], columns: list[str] | None = None) -> str:
    """Aligned columns with a header rule; numbers right-aligned."""
    if not rows:
        return "(no rows)"
    columns = columns or list(rows[0])
    cells = [[_cell(row.get(column, "")) for column in columns] for row in rows]
    widths = [max(len(column), *(len(line[i]) for line in cells)) for i, column in enumerate(columns)]
    numeric = [all(isinstance(row.get(c), (int, float)) for row in rows) for c in columns]

    def line(values: list[str]) -> str:
        return "  ".join(v.rjust(w) if n else v.ljust(w) for v, w, n in zip(values, widths, numeric)).rstrip()

    return "\n".join([line(columns), line(["-" * w for w in widths]), *(line(c) for c in cells)])


SERVER_COLUMNS = ["phase", "calls", "completion_tokens_per_call", "cache_share", "prompt_tokens_per_second",
                  "generation_tokens_per_second", "seconds"]


def server_table(figures: dict[str, dict[str, float]]) -> str | None:
    """The embedded model's own figures by phase (``TokenLedger.server_figures``); None when no call was timed."""
    if not figures:
        return None
    rows = [{"phase": phase, **row} for phase, row in figures.items()]
    return "embedded model, as llama.cpp measured it:\n" + format_table(rows, SERVER_COLUMNS)
