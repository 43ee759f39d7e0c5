"""What BFCL's ``--setting`` chooses from, in a module of its own so ``--help`` lists it without importing DSPy."""

SETTINGS = ("gold", "names_only", "names_desc", "names_params")
"""How much of each test's true docs its tools show: all of them, names only, names and descriptions, names and
parameters (:mod:`otbench.envs.bfcl.opacity`)."""
