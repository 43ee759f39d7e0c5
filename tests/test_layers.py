"""Imports only point down, and no module reaches itself through others.

The import graph is read from the source with :mod:`ast`, not by importing: every ``import`` and ``from ... import``
of an otbench module counts, those inside functions (imported on first use) and under ``TYPE_CHECKING`` included,
since each is a dependency a reader has to follow. The folders ``otbench/modules``, ``otbench/optimizers`` and
``otbench/evals`` may be links to the top-level folders; they are read as the packages they are installed as.

A module may import a module of its own layer or of a layer below (:data:`LAYERS`, lowest first). Within a layer any
direction is allowed, but never a circle.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "otbench"

LAYERS: tuple[tuple[str, ...], ...] = (
    # basics: errors, places, the store's address and its opening, where a command writes, how a command reads its
    # arguments and how it ends
    ("otbench", "otbench.errors", "otbench.paths", "otbench.store", "otbench.mlflow_store", "otbench.outputs",
     "otbench.arguments", "otbench.exits"),
    ("otbench.core",),  # calls, trajectories, faults, tables: what every part speaks
    ("otbench.llm",),  # reaching models: sessions, servers, metering, traces
    ("otbench.modules",),  # DSPy modules: the agent, the editor, tool docs
    ("otbench.evals",),  # statistics, checks of learned docs, the rollout harness (it needs only a rollout of a task)
    ("otbench.envs",),  # environments, which know nothing of optimizers; envs.base is what optimizers see of them
    ("otbench.optimizers",),  # teleprompters (they see environments through envs.base)
    ("otbench.run",),  # one run's life: definition, execution, store, lookup, ledger
    ("otbench.study",),  # work over several runs
    ("otbench.*",),  # the commands and what they share (cli): every other module of the top level
)
"""The layers, lowest first. A module belongs to the layer naming it or the package it is in (the longest such name;
``otbench`` is the package's own ``__init__`` only); ``otbench.*`` is every other module of the top level."""

def module_files() -> dict[str, Path]:
    """Every otbench module by its dotted name (a package by its ``__init__``), links followed."""
    found = {}
    for directory, _, files in os.walk(PACKAGE, followlinks=True):
        for name in files:
            if name.endswith(".py"):
                path = Path(directory) / name
                parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
                found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """The module ``name`` loads: itself if it is one, else the nearest package above it that is."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The otbench modules ``module`` imports, anywhere in its source (``from P import m`` imports module ``P.m``
    when there is one, else ``P``)."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package[:len(package) - node.level + 1], *([base] if base else [])])
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        for name in names:
            target = _known(name, modules) if name.split(".")[0] == "otbench" else None
            if target is not None and target != module:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = module_files()
    return {module: imports_of(module, path, modules) for module, path in sorted(modules.items())}


def layer_of(module: str) -> int:
    best, best_length = len(LAYERS) - 1, -1
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            inside = module.startswith(prefix + ".") and prefix != "otbench"
            if (module == prefix or inside) and len(prefix) > best_length:
                best, best_length = index, len(prefix)
    return best


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted((module, target) for module, targets in graph.items() for target in targets
                  if layer_of(target) > layer_of(module))


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def test_the_graph_is_read_from_every_package():
    graph = import_graph()
    assert {"otbench.cli", "otbench.modules.agent", "otbench.optimizers.registry", "otbench.evals.harness"} <= set(graph)
    assert "otbench.core.trajectory" in graph["otbench.evals.harness"]
    assert "otbench.optimizers.toolobserver.teleprompter" in graph["otbench.optimizers.toolobserver.spec"]  # imported on first use


def test_no_module_imports_a_layer_above_it():
    upward = [f"{module} -> {target}" for module, target in upward_imports(import_graph())]
    assert not upward, "imports of a layer above (see LAYERS in tests/test_layers.py): " + "; ".join(upward)


def test_no_circles():
    found = [" -> ".join(circle) for circle in circles(import_graph())]
    assert not found, "import circles (each a set of modules that reach each other): " + "; ".join(found)



def test_optimizers_see_environments_only_through_their_interface():
    optimizers, environments = layer_of("otbench.optimizers"), layer_of("otbench.envs")
    seen = [f"{module} -> {target}" for module, targets in import_graph().items() if layer_of(module) == optimizers
            for target in sorted(targets) if layer_of(target) == environments and target != "otbench.envs.base"]
    assert not seen, "optimizers reach past otbench.envs.base into environments: " + "; ".join(seen)


def test_the_checks_find_what_they_look_for():
    graph = {"otbench.envs.a": {"otbench.arguments", "otbench.run.x"}, "otbench.run.x": {"otbench.run.y"},
             "otbench.run.y": {"otbench.run.x"}, "otbench.arguments": set()}
    assert upward_imports(graph) == [("otbench.envs.a", "otbench.run.x")]
    assert circles(graph) == [["otbench.run.x", "otbench.run.y"]]
    assert layer_of("otbench.optimize") == layer_of("otbench.cli") == len(LAYERS) - 1
    assert layer_of("otbench") == layer_of("otbench.arguments") == layer_of("otbench.exits") == 0
    assert layer_of("otbench.envs.base") == layer_of("otbench.envs.registry")
