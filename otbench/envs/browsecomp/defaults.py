"""Default search settings, in a module of their own so ``--help`` can show them without importing DSPy."""

K = 5
"""Results per search, as in the paper."""
DEPTH = 100
"""Whole-corpus hits a domain tool filters: deep enough that namesakes cannot hide a domain's page."""
SNIPPET_CHARS = 300
"""Characters of page text per result: the start of a page states its facts."""
MAX_CALLS = 10
"""Search calls per question: 2.5x the longest chain (4 hops), room to recover from a wrong tool."""
REPEATS_REFUSED = True
"""An exact repeat of an earlier search of the same question (same tool, same query) is not run and the agent is
told so: a small agent otherwise spends most of its budget on searches whose results it already has."""
