"""The whole catalogue of tools, its one fixed order, and the pools cut from it.

The order decides which tools a pool of N holds (the first N), so pools nest: the 30 are among the 300, the 300
among the 1,000. It interleaves two kinds of step, seeded: a workflow's tools (so even a small pool has tasks of
two and three tools), then the next tool of the next app in turn (so every prefix spans many apps); each tool
added brings a confusable neighbour with it, a tool of the same app taking the same types of argument, so even
the 30 have look-alikes to tell apart. Workflows are any chains of two or three tools of different apps where one
returns the kind of value the next takes (:mod:`otbench.envs.pool.kinds`).
"""

from __future__ import annotations

import inspect
import random
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from otbench.envs.pool.kinds import KINDS, drawable
from otbench.envs.pool.settings import POOL_SIZES
from otbench.envs.pool.spec import ToolSpec
from otbench.errors import ConfigError

SEED = 58
"""Seeds the order of the catalogue, the opaque names and the tasks (issue 58)."""
UNLINKED_KINDS = frozenset({"label", "flag", "count", "amount", "series", "integer", "small_integer", "number",
                            "numbers", "percent", "rate", "rate_fraction", "years", "people", "age", "share", "hue",
                            "channel", "shift", "base", "threshold", "weekday", "money", "datetime"})
"""Kinds that link no workflow: answers only (a label, a yes/no, a count), or numbers so generic that feeding one
tool's to another makes no request anyone would make (the number of primes below an atomic number, a loan repaid
with the interest of another loan)."""


@cache
def all_tools() -> tuple[ToolSpec, ...]:
    """Every tool of every app, checked: names unique, parameters as the functions take them, kinds known."""
    from otbench.envs.pool.apps import (
        airports,
        borrowed,
        chemistry,
        colors,
        computing,
        dates,
        geography,
        maths,
        money,
        numbers,
        science,
        shapes,
        text,
        units,
    )

    specs = tuple(spec for module in (geography, airports, dates, units, text, numbers, maths, money, shapes, science,
                                      colors, chemistry, computing, borrowed) for spec in module.TOOLS)
    seen: set[str] = set()
    for spec in specs:
        if spec.name in seen:
            raise ConfigError(f"two pool tools are named {spec.name!r}")
        seen.add(spec.name)
        _check(spec)
    return specs


def _check(spec: ToolSpec) -> None:
    taken = [name for name, p in inspect.signature(spec.function).parameters.items()
             if p.kind is not p.VAR_KEYWORD and p.kind is not p.VAR_POSITIONAL]
    if [param.name for param in spec.params] != taken:
        raise ConfigError(f"pool tool {spec.name}: documented parameters {[p.name for p in spec.params]} are not the "
                          f"function's {taken}")
    for kind in [spec.returns, *(param.kind for param in spec.params)]:
        if kind not in KINDS:
            raise ConfigError(f"pool tool {spec.name}: unknown kind {kind!r}")
    if spec.draw is None and not all(drawable(param.kind) for param in spec.drawn):
        raise ConfigError(f"pool tool {spec.name}: a parameter's kind draws no value and the tool draws none itself")


@dataclass(frozen=True)
class Link:
    """One step of a workflow chain: ``tool``, fed the previous tool's output through ``parameter`` (None first)."""

    tool: str
    parameter: str | None


def _feeds(spec: ToolSpec) -> bool:
    """Whether the tool's output may feed another tool: a linking kind, and not a unit converter's (a converter is
    a workflow's last step: what 12 km is in miles, then what that is in feet, is no request anyone makes)."""
    return spec.returns not in UNLINKED_KINDS and not spec.app.endswith("_units")


def _fits(kind: str, consumer: ToolSpec) -> bool:
    """Whether a value of ``kind`` may be fed to ``consumer``: a quantity with a unit only to a unit converter (the
    fall time of an airport's elevation reads as nonsense; its elevation in metres does not)."""
    return ":" not in kind or consumer.app.endswith("_units")


def _chains() -> list[tuple[Link, ...]]:
    """Every chain of two or three tools of different apps, each feeding the next one of its parameters; a text is
    rewritten at most once on its way (three rewrites of one text read as a riddle)."""
    tools = all_tools()
    consumers: dict[str, list[tuple[ToolSpec, str]]] = defaultdict(list)
    for spec in tools:
        for param in spec.drawn:
            consumers[param.kind].append((spec, param.name))
    chains: list[tuple[Link, ...]] = []
    for first in tools:
        if not _feeds(first):
            continue
        for second, parameter in consumers[first.returns]:
            if second.app == first.app or not _fits(first.returns, second):
                continue
            pair = (Link(first.name, None), Link(second.name, parameter))
            chains.append(pair)
            if not _feeds(second) or "text" in (first.returns, second.returns):
                continue
            for third, last in consumers[second.returns]:
                if third.app not in (first.app, second.app) and _fits(second.returns, third):
                    chains.append((*pair, Link(third.name, last)))
    return chains


@cache
def workflows() -> tuple[tuple[Link, ...], ...]:
    """The chains requests are made of, in a seeded order that alternates linking kinds (so no kind, such as text,
    fills the list), at most :data:`CHAINS_PER_KIND` per linking kind and length."""
    by_kind: dict[tuple[str, int], list[tuple[Link, ...]]] = defaultdict(list)
    specs = {spec.name: spec for spec in all_tools()}
    for chain in _chains():
        by_kind[(specs[chain[0].tool].returns, len(chain))].append(chain)
    rng = random.Random(f"{SEED}:workflows")
    queues = []
    for key in sorted(by_kind):
        chains = sorted(by_kind[key], key=lambda chain: [link.tool for link in chain])
        rng.shuffle(chains)
        queues.append(chains[:CHAINS_PER_KIND])
    ordered = []
    while any(queues):
        for queue in queues:
            if queue:
                ordered.append(queue.pop(0))
    return tuple(ordered)


CHAINS_PER_KIND = 40
"""Workflows kept per linking kind and length: enough for every pool, few enough that no kind dominates."""


def _signature(spec: ToolSpec) -> tuple[str, ...]:
    return tuple(KINDS[param.kind].type for param in spec.params)


@cache
def ordered_tools() -> tuple[ToolSpec, ...]:
    """The whole catalogue in its fixed order (see the module's docstring)."""
    specs = {spec.name: spec for spec in all_tools()}
    rng = random.Random(f"{SEED}:order")
    by_app: dict[str, list[ToolSpec]] = defaultdict(list)
    for spec in all_tools():
        by_app[spec.app].append(spec)
    apps = sorted(by_app)
    rng.shuffle(apps)
    for app in apps:
        rng.shuffle(by_app[app])
    order: dict[str, ToolSpec] = {}

    def add(spec: ToolSpec) -> None:
        if spec.name in order:
            return
        order[spec.name] = spec
        neighbour = next((other for other in by_app[spec.app] if other.name not in order
                          and _signature(other) == _signature(spec)), None)
        if neighbour is not None:
            order[neighbour.name] = neighbour

    chains = iter(workflows())
    turn = 0
    while len(order) < len(specs):
        chain = next(chains, None)
        for link in chain or ():
            add(specs[link.tool])
        for _ in range(len(apps)):
            app = apps[turn % len(apps)]
            turn += 1
            waiting = [spec for spec in by_app[app] if spec.name not in order]
            if waiting:
                add(waiting[0])
                break
    return tuple(order.values())


def pool_size(size: str) -> int:
    """How many tools a ``--pool-size`` holds (``all``: the whole catalogue)."""
    if size not in POOL_SIZES:
        raise ConfigError(f"unknown pool size {size!r}; choose from {', '.join(POOL_SIZES)}")
    return len(all_tools()) if size == "all" else int(size)


def pool(size: str) -> tuple[ToolSpec, ...]:
    """The first ``size`` tools of the fixed order."""
    return ordered_tools()[: pool_size(size)]


@cache
def shown_names() -> dict[str, str]:
    """True name -> opaque name (``tool_0417``), one seeded numbering of the whole catalogue, so a tool keeps its
    name in every pool and docs learned on one pool apply to the same tools in another."""
    names = sorted(spec.name for spec in all_tools())
    random.Random(f"{SEED}:names").shuffle(names)
    return {name: f"tool_{number:04d}" for number, name in enumerate(names, start=1)}


@cache
def shown_apps() -> dict[str, str]:
    """True app -> opaque app (``app_17``), seeded like the tool names."""
    apps = sorted({spec.app for spec in all_tools()})
    random.Random(f"{SEED}:apps").shuffle(apps)
    return {app: f"app_{number:02d}" for number, app in enumerate(apps, start=1)}


@cache
def by_name() -> dict[str, ToolSpec]:
    """Every tool by its true name."""
    return {spec.name: spec for spec in all_tools()}


def functions() -> dict[str, Any]:
    """True name -> function: what the sandbox's workers run (:data:`FUNCTIONS` is this, built on import)."""
    return {spec.name: spec.function for spec in all_tools()}


def links(chain: tuple[Link, ...]) -> Iterator[tuple[ToolSpec, str | None]]:
    """A chain's tools with the parameter each is fed through."""
    specs = by_name()
    for link in chain:
        yield specs[link.tool], link.parameter
