"""ToolObserver, a package of its own: the teleprompter (:mod:`.teleprompter`); its knobs, variants and improvements
(:mod:`.knobs`); how the commands see it (:mod:`.spec`); and the helpers only it uses: what each tool did across
many attempts, counted by code (:mod:`.usage`), exploration that calls every tool of an interface in turn
(:mod:`.spread`), and an attempt made again when it only repeats what already failed (:mod:`.varied`).

``from otbench.optimizers.toolobserver import ToolObserver`` imports the teleprompter, and DSPy with it, when it is
first asked for: the spec and the knobs load without them (``--help`` answers at once).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from otbench.optimizers.toolobserver.teleprompter import ToolObserver

__all__ = ["ToolObserver"]


def __getattr__(name: str) -> Any:
    if name == "ToolObserver":
        return importlib.import_module("otbench.optimizers.toolobserver.teleprompter").ToolObserver
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
