"""MkDocs hook: the optimizer pages' knob tables, written at build time from each optimizer's own spec
(:meth:`otbench.optimizers.spec.OptimizerSpec.knob_tables`), so the site and the command line cannot disagree.

A page asks for its optimizer's tables with a comment on a line of its own: ``<!-- knobs: NAME -->`` (the budget
knobs of optimizer NAME: flag, default, lower bound, sweep range, help; and whatever other choices its spec
tabulates, such as ToolObserver's improvements). ``<!-- optimizers -->`` in the API reference stands for every
registered optimizer's teleprompter, documented from its docstrings.

The API reference renders the docstrings, which cross-reference in Sphinx's roles (``:class:`~a.B```); the roles
are shown as the code they name (``B``, or ``a.B`` without the tilde) instead of as literal ``:class:`` text.
"""

from __future__ import annotations

import re
from typing import Any

from otbench.optimizers.registry import OPTIMIZERS

_MARKER = re.compile(r"^<!-- knobs: (\w+) -->$", re.MULTILINE)
_OPTIMIZERS = re.compile(r"^<!-- optimizers -->$", re.MULTILINE)
_ROLE = re.compile(r":(?:class|mod|func|meth|data|attr|exc):<code>(~?)([\w.]+)</code>")


def on_page_markdown(markdown: str, **_: Any) -> str:
    listed = "\n\n".join(f"::: {spec.teleprompter}\n    options:\n      inherited_members: [compile]"
                           for spec in OPTIMIZERS.values() if spec.teleprompter)
    return _OPTIMIZERS.sub(lambda _: listed, _MARKER.sub(lambda found: OPTIMIZERS[found.group(1)].knob_tables(),
                                                           markdown))


def on_page_content(html: str, **_: Any) -> str:
    return _ROLE.sub(lambda found: f"<code>{found.group(2).rsplit('.', 1)[-1] if found.group(1) else found.group(2)}</code>",
                     html)
