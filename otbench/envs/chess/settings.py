"""What Chess's ``--setting`` chooses from and the move question's defaults, in a module of its own so
``--help`` lists them without importing DSPy."""

SETTINGS = ("phase", "skill", "elo")
"""Which engines the agent picks from: phase specialists, fixed search depths, or nominal ratings
(:mod:`otbench.envs.chess.tools`)."""
DEFAULT_SETTING = "phase"
PHASE_NAMED = True
"""Whether the move question names the game phase by default (``--phase-name``)."""
