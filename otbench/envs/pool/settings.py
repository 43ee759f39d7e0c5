"""What the pool's ``--setting`` and ``--pool-size`` choose from, in a module of their own so ``--help`` lists them
without importing DSPy or the tools."""

from otbench.envs.bfcl.settings import SETTINGS

__all__ = ["DEFAULT_INDEX", "DEFAULT_POOL_SIZE", "DEFAULT_SETTING", "INDEXES", "MAX_STEPS", "POOL_SIZES", "SETTINGS"]

DEFAULT_SETTING = "names_only"
"""BFCL's default: every tool shows an opaque name, nothing else."""
POOL_SIZES = ("30", "300", "1000", "all")
"""How many tools the pool holds, each size among the next: the first N of one fixed order of the whole catalogue."""
DEFAULT_POOL_SIZE = "1000"
MAX_STEPS = 10
"""Replies per task: the deepest workflow takes three searches, three calls and the answer; three to recover."""
INDEXES = ("docs", "usage")
"""What ``search_tools`` finds a tool by: its current docs, or its docs and the train requests it answered."""
DEFAULT_INDEX = "docs"
