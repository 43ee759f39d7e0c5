"""Environments by name, built from command-line options.

Each environment package has an ``options`` module with three functions, imported only when
needed so that ``--help`` stays fast:

- ``add_arguments(group)``: its own options (shared ones, such as ``--toolset``, live here);
- ``toolsets()``: the tool sets ``--toolset`` chooses from, as its help shows them;
- ``check(args)``: refuse bad values with a :class:`~otbench.errors.UserError`, before anything slow;
- ``build(args, workers)``: the configured environment.
"""

from __future__ import annotations

import argparse
import importlib
from types import ModuleType
from typing import Any

from otbench.errors import UserError

_OPTION_MODULES = {
    "bfcl": "otbench.envs.bfcl.options",
    "chess": "otbench.envs.chess.options",
    "browsecomp": "otbench.envs.browsecomp.options",
}
ENVIRONMENTS = tuple(_OPTION_MODULES)


def _options(name: str) -> ModuleType:
    if name not in _OPTION_MODULES:
        raise UserError(f"unknown environment {name!r}; choose from {', '.join(ENVIRONMENTS)}")
    return importlib.import_module(_OPTION_MODULES[name])


def add_environment_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("environment")
    group.add_argument("--env", default="bfcl", help=f"environment: {', '.join(ENVIRONMENTS)}")
    listed = "; ".join(f"{name}: {_options(name).toolsets()}" for name in ENVIRONMENTS)
    group.add_argument("--toolset", default=None, help=f"which tool set of the environment ({listed})")
    for name in ENVIRONMENTS:
        _options(name).add_arguments(group)


def other_environments_options(name: str) -> frozenset[str]:
    """The options (argparse dests) that environments other than ``name`` add: a run of ``name`` does not log them."""
    others = set()
    for other in ENVIRONMENTS:
        if other != name:
            scratch = argparse.ArgumentParser(add_help=False)
            _options(other).add_arguments(scratch.add_argument_group(other))
            others |= {action.dest for action in scratch._actions}
    own = argparse.ArgumentParser(add_help=False)
    _options(name).add_arguments(own.add_argument_group(name))
    return frozenset(others - {action.dest for action in own._actions})


def check_environment_arguments(args: argparse.Namespace) -> None:
    """Refuse unknown names before anything slow (data, model, MLflow store) is touched."""
    _options(args.env).check(args)


def make_environment(args: argparse.Namespace, *, workers: int = 1) -> Any:
    """The environment ``args.env`` names, configured from ``args`` (an :class:`Environment`)."""
    return _options(args.env).build(args, workers=workers)
