"""What Chess's ``--setting`` chooses from, in a module of its own so ``--help`` lists it without importing DSPy."""

SETTINGS = ("phase", "skill", "elo")
"""Which engines the agent picks from: phase specialists, fixed search depths, or nominal ratings
(:mod:`otbench.envs.chess.tools`)."""
DEFAULT_SETTING = "phase"
