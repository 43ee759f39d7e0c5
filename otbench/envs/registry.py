"""Environments by name, built from command-line options.

Each environment package has an ``options`` module with three functions, imported only when
needed so that ``--help`` stays fast:

- ``add_arguments(group)``: its own options (shared ones, such as ``--toolset``, live here);
- ``toolsets()``: the tool sets ``--toolset`` chooses from, as its help shows them;
- ``check(args)``: refuse bad values with a :class:`~otbench.errors.ConfigError`, before anything slow;
- ``build(args, workers)``: the configured environment.

``--faults POLICY`` is shared by every environment: the built environment then holds a
:class:`~otbench.faults.StateController` that injects the policy's failures into its tool calls.
"""

from __future__ import annotations

import argparse
import importlib
from types import ModuleType
from typing import Any

from otbench.errors import ConfigError

_OPTION_MODULES = {
    "bfcl": "otbench.envs.bfcl.options",
    "chess": "otbench.envs.chess.options",
    "browsecomp": "otbench.envs.browsecomp.options",
}
ENVIRONMENTS = tuple(_OPTION_MODULES)


def _options(name: str) -> ModuleType:
    if name not in _OPTION_MODULES:
        raise ConfigError(f"unknown environment {name!r}; choose from {', '.join(ENVIRONMENTS)}")
    return importlib.import_module(_OPTION_MODULES[name])


def add_environment_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("environment")
    group.add_argument("--env", default="bfcl", help=f"environment: {', '.join(ENVIRONMENTS)}")
    listed = "; ".join(f"{name}: {_options(name).toolsets()}" for name in ENVIRONMENTS)
    group.add_argument("--toolset", default=None, help=f"which tool set of the environment ({listed})")
    group.add_argument("--faults", default=None, metavar="POLICY",
                       help="inject tool failures: a preset NAME-RATE[@PHASE] (NAME: flaky, chaos, timeout, "
                            "rate_limit, unavailable, delay, corrupt, drift; PHASE: exploration, test or both) "
                            "or a .json/.toml policy file (default: none)")
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
    fault_policy(args)


def fault_policy(args: argparse.Namespace) -> Any:
    """The :class:`~otbench.faults.FaultPolicy` ``--faults`` names, None without one (a bad one is refused)."""
    from otbench.faults import PolicyError, read_policy

    if getattr(args, "faults", None) is None:
        return None
    try:
        return read_policy(args.faults)
    except PolicyError as error:
        raise ConfigError(f"--faults: {error}") from None


def make_environment(args: argparse.Namespace, *, workers: int = 1) -> Any:
    """The environment ``args.env`` names, configured from ``args`` (an :class:`Environment`), with a state
    controller when ``--faults`` names a policy."""
    env = _options(args.env).build(args, workers=workers)
    policy = fault_policy(args)
    if policy is not None:
        from otbench.faults import StateController

        env.faults = StateController(policy)
    return env
