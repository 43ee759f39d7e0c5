"""What Wild's ``--setting`` chooses from, in a module of its own so ``--help`` lists it without importing DSPy."""

from otbench.envs.bfcl.settings import SETTINGS

__all__ = ["DEFAULT_SETTING", "SETTINGS"]

DEFAULT_SETTING = "names_only"
"""BFCL's default: the tools are opaque names, nothing else."""
