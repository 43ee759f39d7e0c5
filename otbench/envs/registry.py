"""Environments by name, built from typed options.

Each environment package has an ``options`` module, named in :data:`ENVIRONMENTS` and imported only when needed so
that ``--help`` stays fast. What it declares is :class:`OptionsModule`: its default setting, how it learns, its own
command-line options, its settings, a check of its options and how it is built. A new environment is its package
(an :class:`~otbench.envs.base.Environment` and its ``options`` module) and one line in :data:`ENVIRONMENTS`.

An environment's *setting* is what its agent is given to work with: BFCL's documentation setting,
Chess's and BrowseComp's choice of tools. ``--toolset``, the older name of ``--setting`` for Chess
and BrowseComp, is still read; a *toolset* is otherwise the tools one task is played with, by id.
``--faults POLICY`` is shared by every environment: the built environment then holds a
:class:`~otbench.core.faults.StateController` that injects the policy's failures into its tool calls.
``--sandbox-workers N`` is shared too: the most tool worker processes at once, by default one per
thread up to the usable cores (:func:`tool_workers`).
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from otbench.arguments import positive_int
from otbench.core.parallel import usable_cores
from otbench.errors import ConfigError

ENVIRONMENTS: dict[str, str] = {
    "bfcl": "otbench.envs.bfcl.options",
    "chess": "otbench.envs.chess.options",
    "browsecomp": "otbench.envs.browsecomp.options",
    "wild": "otbench.envs.wild.options",
    "toolkit": "otbench.envs.toolkits.options",
    "mcp": "otbench.envs.mcp.options",
    "pool": "otbench.envs.pool.options",
}
"""Environment name -> its options module (an :class:`OptionsModule`), in the order the commands list them."""
DEFAULT_ENVIRONMENT = "bfcl"
"""The environment a command runs when it names none."""


@dataclass(frozen=True)
class EnvironmentOptions:
    """Which environment a command runs, under which setting and faults, with which options of its own."""

    env: str = DEFAULT_ENVIRONMENT
    setting: str | None = None
    """What the agent is given to work with, by name; None: the environment's default."""
    faults: str | None = None
    """A fault policy: a preset ``NAME-RATE[@PHASE]`` or a ``.json``/``.toml`` file (:func:`otbench.core.faults.read_policy`)."""
    own: Mapping[str, Any] = field(default_factory=dict)
    """The environment's own options by name (``call_timeout``, ``max_moves``...); those left out keep their defaults."""
    sandbox_workers: int | None = None
    """The most tool worker processes at once (BFCL's sandbox, Chess's engines); None: one per thread, at most one
    per usable core. How a run is carried out, not what it computes: every call gets the same limits."""

    def values(self) -> dict[str, Any]:
        """The options by their command-line names, as runs log them."""
        return {"env": self.env, "setting": self.setting, "faults": self.faults, **self.own,
                "sandbox_workers": self.sandbox_workers}


class ArgumentGroup(Protocol):
    """Where an environment adds its options: an argparse argument group, or one that takes an option another
    environment added already, or hides them (:class:`_OnceGroup`)."""

    def add_argument(self, *flags: str, **kwargs: Any) -> Any: ...


@runtime_checkable
class OptionsModule(Protocol):
    """What an environment's ``options`` module declares: all the commands know of an environment until they build
    it. ``isinstance`` tells whether a module has every member (not their signatures)."""

    DEFAULT_SETTING: str
    """The setting used when none is chosen."""
    LEARNING: str
    """How its docs are learned (one of :data:`~otbench.envs.base.LEARNING_MODES`): ``online``, per task, or
    ``offline``, on a train split and scored on a test split; the built environment's ``learning``."""

    def add_arguments(self, group: ArgumentGroup) -> None:
        """Its own command-line options (shared ones, such as ``--setting``, are added by the registry)."""

    def settings(self) -> str:
        """The settings ``--setting`` chooses from, as its help shows them."""

    def check(self, options: EnvironmentOptions) -> None:
        """Refuse bad values with a :class:`~otbench.errors.ConfigError`, before anything slow."""

    def build(self, options: EnvironmentOptions, *, workers: int = 1) -> Any:
        """The configured :class:`~otbench.envs.base.Environment`; ``workers`` is the most tool worker processes it
        may run at once (BFCL's sandbox workers, Chess's Stockfish engines)."""


def _options(name: str) -> OptionsModule:
    if name not in ENVIRONMENTS:
        raise ConfigError(f"unknown environment {name!r}; choose from {', '.join(ENVIRONMENTS)}")
    module = importlib.import_module(ENVIRONMENTS[name])
    if not isinstance(module, OptionsModule):
        raise TypeError(f"{module.__name__} lacks a member of an environment's options module (OptionsModule)")
    return module


def chosen_environment(argv: list[str] | None) -> str:
    """The environment a command line names (``--env``), the default when it names none or an unknown one (which
    the full parse then refuses): the environment whose options the command shows."""
    scout = argparse.ArgumentParser(add_help=False)
    scout.add_argument("--env", default=DEFAULT_ENVIRONMENT)
    known, _ = scout.parse_known_args(argv)
    return known.env if known.env in ENVIRONMENTS else DEFAULT_ENVIRONMENT


def add_environment_arguments(parser: argparse.ArgumentParser, *, running: bool = True,
                              argv: list[str] | None = None) -> None:
    """The options that choose an environment (``--env``, ``--setting``, each environment's own); ``running``: also
    how a run of it is carried out (``--sandbox-workers``, ``--faults``, and ``--toolset``, the older name of
    ``--setting``), which a command that only reads its docs (``export gold``) does not take.

    Only the options of the environment ``argv`` chooses (:func:`chosen_environment`) are shown; the other
    environments' are taken, hidden, so that :func:`refuse_other_environments` can name the environment an option
    belongs to instead of argparse's bare "unrecognized arguments"."""
    chosen = chosen_environment(argv)
    group = parser.add_argument_group("environment")
    group.add_argument("--env", default=DEFAULT_ENVIRONMENT,
                       help=f"environment: {', '.join(ENVIRONMENTS)} (default {DEFAULT_ENVIRONMENT}); "
                            "'--env NAME --help' shows that environment's options")
    group.add_argument("--setting", default=None,
                       help=f"what the agent is given to work with: {_options(chosen).settings()}")
    if running:
        group.add_argument("--toolset", default=None, help=argparse.SUPPRESS)  # the older name of --setting
        group.add_argument("--sandbox-workers", type=positive_int, default=None, metavar="N",
                           help="the most worker processes running tool calls at once (BFCL's sandbox, Chess's "
                                "Stockfish engines; default: one per --num-threads up to the number of cores; started "
                                "as calls need them)")
        group.add_argument("--faults", default=None, metavar="POLICY",
                           help="inject tool failures: a preset NAME-RATE[@PHASE] (NAME: flaky, chaos, timeout, "
                                "rate_limit, unavailable, delay, corrupt, drift; PHASE: exploration, test or both) "
                                "or a .json/.toml policy file (default: none)")
    shown = _OnceGroup(parser.add_argument_group(f"{chosen} options"))
    _options(chosen).add_arguments(shown)
    hidden = _OnceGroup(parser.add_argument_group(), hidden=True, taken=shown.added)
    for name in ENVIRONMENTS:
        if name != chosen:
            _options(name).add_arguments(hidden)


def refuse_other_environments(values: Mapping[str, Any]) -> None:
    """Refuse, in one line, an option of another environment than ``values``' ``--env``: it would be ignored
    (``evaluate --env bfcl --max-moves 5``). A command line's namespace holds another environment's option only
    when it was given (:func:`add_environment_arguments`)."""
    env = str(values.get("env", DEFAULT_ENVIRONMENT))
    if env not in ENVIRONMENTS:
        return  # refused by name where the environment is resolved
    mine = own_defaults(env)
    for other in ENVIRONMENTS:
        for name in own_defaults(other):
            if name not in mine and name in values:
                raise ConfigError(f"--{name.replace('_', '-')} is an option of {other} (--env {other}), not of {env}; "
                                  "drop it")


def add_refuse_repeats(group: ArgumentGroup, default: bool) -> None:
    """``--[no-]refuse-repeats``, one option for every environment whose agent loop refuses exact repeats (BrowseComp
    and Wild say it once between them: the environments' options share one group)."""
    group.add_argument("--refuse-repeats", action=argparse.BooleanOptionalAction, default=default,
                       help="BrowseComp, Wild: a call that repeats exactly (same tool, same arguments) one that worked "
                            "earlier (in the question; in the user turn) is not run, and the agent is told its result "
                            f"is above (default {'on' if default else 'off'})")


class _OnceGroup:
    """An argument group that takes an option a second environment adds again (``--refuse-repeats``, defined once
    in :func:`add_refuse_repeats`) as already there (``taken``: added to another group already); ``hidden``: its options
    are accepted but not shown in ``--help``."""

    def __init__(self, group: argparse._ArgumentGroup, *, hidden: bool = False, taken: set[str] | None = None) -> None:
        self.group = group
        self.hidden = hidden
        self.added: set[str] = set(taken or ())

    def add_argument(self, *flags: str, **kwargs: Any) -> None:
        if flags[0] not in self.added:
            self.added.add(flags[0])
            hidden = {"help": argparse.SUPPRESS, "default": argparse.SUPPRESS}  # in the namespace only when given
            self.group.add_argument(*flags, **(kwargs | hidden if self.hidden else kwargs))


def own_defaults(name: str) -> dict[str, Any]:
    """The options environment ``name`` adds, by name, with their defaults."""
    scratch = argparse.ArgumentParser(add_help=False)
    _options(name).add_arguments(scratch.add_argument_group(name))
    return {action.dest: action.default for action in scratch._actions}


def learning_of(name: str) -> str:
    """How environment ``name`` learns docs: ``online`` (per task) or ``offline`` (on a train split)."""
    return _options(name).LEARNING


def other_environments_options(name: str) -> frozenset[str]:
    """The options that environments other than ``name`` add: a run of ``name`` does not log them."""
    others = set().union(*(own_defaults(other) for other in ENVIRONMENTS if other != name))
    return frozenset(others - set(own_defaults(name)))


def options_from_values(values: Mapping[str, Any]) -> EnvironmentOptions:
    """The environment options among ``values`` (an argparse namespace's, by command-line name); ``--toolset``,
    the older name of ``--setting``, names the setting when given."""
    env = str(values.get("env", DEFAULT_ENVIRONMENT))
    setting, older = values.get("setting"), values.get("toolset")
    if older is not None:
        if setting not in (None, older):
            raise ConfigError("--toolset is the older name of --setting: give one of them")
        setting = older
    own = {name: values[name] for name in own_defaults(env) if name in values}
    return EnvironmentOptions(env, setting, values.get("faults"), own, values.get("sandbox_workers"))


def resolve(options: EnvironmentOptions) -> EnvironmentOptions:
    """The options with the environment's defaults filled in (its setting, its own options), checked before
    anything slow (data, model, MLflow store) is touched."""
    module = _options(options.env)
    if options.setting is not None and not options.setting.strip():
        raise ConfigError(f"--setting '': name a setting of {options.env} ({module.settings()})")
    defaults = own_defaults(options.env)
    unknown = sorted(set(options.own) - set(defaults))
    if unknown:
        raise ConfigError(f"{options.env} has no option {unknown[0]!r}; its options: {', '.join(defaults)}")
    if options.sandbox_workers is not None and options.sandbox_workers < 1:
        raise ConfigError(f"sandbox_workers must be at least 1, got {options.sandbox_workers}")
    resolved = replace(options, setting=options.setting or module.DEFAULT_SETTING, own={**defaults, **options.own})
    module.check(resolved)
    fault_policy(resolved)
    return resolved


def fault_policy(options: EnvironmentOptions) -> Any:
    """The :class:`~otbench.core.faults.FaultPolicy` ``faults`` names, None without one (a bad one is refused)."""
    from otbench.core.faults import PolicyError, read_policy

    if options.faults is None:
        return None
    try:
        return read_policy(options.faults)
    except PolicyError as error:
        raise ConfigError(f"--faults: {error}") from None


def tool_workers(threads: int, cap: int | None) -> int:
    """The most tool worker processes a command of ``threads`` threads runs: ``cap`` when given, else one per
    usable core; never more than the threads, which make one call at a time each.

    A tool call (a BFCL function, a Stockfish search) is CPU work: more workers than cores run no call sooner,
    and each costs a process start and its memory. A burst of 64 threads' calls is served by a few warm workers
    in milliseconds, where starting 64 of them took seconds of the cores and gigabytes.
    """
    return max(1, min(threads, cap if cap is not None else usable_cores()))


def make_environment(options: EnvironmentOptions, *, workers: int = 1) -> Any:
    """The environment ``options`` name (an :class:`~otbench.envs.base.Environment`), with a state controller
    when they name a fault policy. ``workers`` is the command's thread count; its tool worker processes are
    :func:`tool_workers` of it."""
    options = resolve(options)
    env = _options(options.env).build(options, workers=tool_workers(workers, options.sandbox_workers))
    policy = fault_policy(options)
    if policy is not None:
        from otbench.core.faults import StateController

        env.faults = StateController(policy)
    return env
