"""What BrowseComp's ``--setting`` chooses from, in a module of its own so ``--help`` lists it without importing
DSPy."""

SETTINGS = ("domains", "domains+all")
"""Which search tools the agent has: the ten domain searches, or those and a whole-corpus search."""
DEFAULT_SETTING = SETTINGS[0]
