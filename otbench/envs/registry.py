"""Environments by name, built from command-line options."""

from __future__ import annotations

import argparse

from otbench.errors import UserError

ENVIRONMENTS = ("bfcl",)


def add_environment_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("environment")
    group.add_argument("--env", default="bfcl", help=f"environment: {', '.join(ENVIRONMENTS)}")
    group.add_argument("--setting", default="names_only",
                       help="BFCL documentation setting: gold, names_only, names_desc, names_params")
    group.add_argument("--parallel", action="store_true",
                       help="BFCL: add the exec_parallel and exec_parallel_multiple categories")
    group.add_argument("--call-timeout", type=float, default=5.0, help="seconds a tool call may run")


def check_environment_arguments(args: argparse.Namespace) -> None:
    """Refuse unknown names before anything slow (data, model, MLflow store) is touched."""
    if args.env not in ENVIRONMENTS:
        raise UserError(f"unknown environment {args.env!r}; choose from {', '.join(ENVIRONMENTS)}")
    if args.env == "bfcl":
        from otbench.envs.bfcl.opacity import SETTINGS

        if args.setting not in SETTINGS:
            raise UserError(f"unknown setting {args.setting!r}; choose from {', '.join(SETTINGS)}")


def make_environment(args: argparse.Namespace, *, workers: int = 1):  # noqa: ANN201 - an Environment
    """The environment ``args.env`` names, configured from ``args``."""
    if args.env == "bfcl":
        from otbench.envs.bfcl.data import ALL_CATEGORIES, DEFAULT_CATEGORIES
        from otbench.envs.bfcl.env import BfclEnvironment

        categories = ALL_CATEGORIES if args.parallel else DEFAULT_CATEGORIES
        return BfclEnvironment(setting=args.setting, categories=categories, call_timeout=args.call_timeout,
                               workers=workers)
    raise UserError(f"unknown environment {args.env!r}; choose from {', '.join(ENVIRONMENTS)}")
