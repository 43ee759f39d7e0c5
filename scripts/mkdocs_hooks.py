"""MkDocs hook: the optimizer pages' knob tables, written at build time from the optimizers' own declarations
(``otbench/optimizers/settings.py``), so the site and the command line cannot disagree.

A page asks for a table with a comment on a line of its own:

- ``<!-- knobs: NAME -->``: the budget knobs of optimizer NAME (flag, default, lower bound, sweep range, help);
- ``<!-- improvements -->``: ToolObserver's improvements (switch, paper and improved variants, modes, help).

The API reference renders the docstrings, which cross-reference in Sphinx's roles (``:class:`~a.B```); the roles
are shown as the code they name (``B``, or ``a.B`` without the tilde) instead of as literal ``:class:`` text.
"""

from __future__ import annotations

import re
from typing import Any

from otbench.optimizers import knobs as knob_rules
from otbench.optimizers.registry import OPTIMIZERS
from otbench.optimizers.settings import IMPROVED, PAPER, Improvements

_MARKER = re.compile(r"^<!-- (knobs: (\w+)|improvements) -->$", re.MULTILINE)
_ROLE = re.compile(r":(?:class|mod|func|meth|data|attr|exc):<code>(~?)([\w.]+)</code>")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def knob_table(name: str) -> str:
    """The knobs of optimizer ``name`` as a Markdown table."""
    spec = OPTIMIZERS[name]
    if spec.knobs is None:
        return f"{spec.label} has no budget knobs."
    rows = ["| flag | default | at least | swept over | what it sets |", "|---|---|---|---|---|"]
    for field_name, declared, default in knob_rules.declared(spec.knobs):
        flag = "--" + knob_rules.dest(spec.knobs, field_name).replace("_", "-")
        ranges = ", ".join(f"{mode}: {low}-{high}" for mode, (low, high) in declared.sweep.items()).replace("any: ", "")
        minimum = "" if declared.minimum is None else str(declared.minimum)
        shown = "-" if default is None else str(default)
        modes = "" if set(declared.modes) == set(knob_rules.MODES) else f" (acts {' and '.join(declared.modes)})"
        rows.append(f"| `{flag}` | {shown} | {minimum} | {ranges or 'not swept'} | {_cell(declared.help)}{modes} |")
    return "\n".join(rows)


def improvements_table() -> str:
    """ToolObserver's improvements as a Markdown table, in declaration order."""
    rows = ["| switch | paper | improved | acts | what it does |", "|---|---|---|---|---|"]
    for name in Improvements.names():
        switch = f"`--[no-]{name.replace('_', '-')}`"
        modes = " and ".join(mode for mode in knob_rules.MODES if name in Improvements.acting_in(mode))
        on = {True: "on", False: "off"}
        rows.append(f"| {switch} | {on[getattr(PAPER, name)]} | {on[getattr(IMPROVED, name)]} | {modes} | "
                    f"{_cell(Improvements.help(name))} |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, **_: Any) -> str:
    def table(found: re.Match[str]) -> str:
        return knob_table(found.group(2)) if found.group(2) else improvements_table()

    return _MARKER.sub(table, markdown)


def on_page_content(html: str, **_: Any) -> str:
    return _ROLE.sub(lambda found: f"<code>{found.group(2).rsplit('.', 1)[-1] if found.group(1) else found.group(2)}</code>",
                     html)
