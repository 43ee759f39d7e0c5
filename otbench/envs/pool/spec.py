"""A tool of the pool as the catalogue holds it: the function, its app, its true docs and how requests name it.

The true docs (description, each parameter's meaning and type) are what the ``gold`` setting shows. The
phrases are what the task generator writes requests with: ``phrase`` is what a request asks for, with a
``{parameter}`` slot per parameter filled by a value in words (:mod:`otbench.envs.pool.kinds`) or by what an
earlier tool returns in a workflow; ``refers`` is how a request names the tool's output when it feeds
another tool (``the airport nearest to Lyon`` where the tool returns that airport's code).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

Draw = Callable[[random.Random], dict[str, Any]]
"""Arguments drawn together, where drawing each parameter by its kind alone would not give a valid call
(the sides of a triangle, a count no larger than the set it is taken from)."""


@dataclass(frozen=True)
class Param:
    """One parameter: its name, its kind (what values it takes, :mod:`otbench.envs.pool.kinds`) and its meaning."""

    name: str
    kind: str
    description: str
    required: bool = True


@dataclass(frozen=True)
class ToolSpec:
    """One tool of the pool under its true name, unique in the catalogue (never shown to the agent)."""

    name: str
    app: str
    """The app (server) the tool belongs to, as ToolGym groups its tools."""
    function: Callable[..., Any]
    description: str
    """What the tool does and returns, in the words of its true docs."""
    params: tuple[Param, ...]
    returns: str
    """The kind of what it returns: a workflow feeds it to a parameter of the same kind."""
    phrase: str
    refers: str = ""
    draw: Draw | None = None
    schema: dict[str, Any] | None = None
    """A BFCL function's docs as BFCL ships them (its parameters' JSON schema with item types): its true docs."""

    @property
    def reference(self) -> str:
        """How a request names this tool's output when it feeds another tool."""
        return self.refers or self.phrase

    @property
    def drawn(self) -> tuple[Param, ...]:
        """The parameters a request gives values to (optional ones keep their defaults)."""
        return tuple(param for param in self.params if param.required)


def tool(app: str, name: str, function: Callable[..., Any], description: str,
         params: Sequence[tuple[str, str, str]], returns: str, phrase: str, *, refers: str = "",
         draw: Draw | None = None, optional: Sequence[tuple[str, str, str]] = ()) -> ToolSpec:
    """A :class:`ToolSpec` from plain tuples ``(name, kind, meaning)``: how the apps list their tools compactly."""
    shown = tuple(Param(*param) for param in params) + tuple(Param(*param, required=False) for param in optional)
    return ToolSpec(name, app, function, description, shown, returns, phrase, refers, draw)
