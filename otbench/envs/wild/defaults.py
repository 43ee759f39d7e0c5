"""Default loop settings of Wild, in a module of their own so ``--help`` can show them without importing DSPy."""

MAX_STEPS = 5
"""Replies per user turn: the deepest task needs three rounds of calls and an answer; one more to recover."""
REPEATS_REFUSED = True
"""A call that repeats exactly (same tool, same arguments) one that worked earlier in the same user turn is not run,
and the conversation says its result is above; a reply of nothing but such repeats ends the turn. The small agent
rarely ends a turn itself, and otherwise fills it with calls whose results it already has."""
ANSWER_CUE = True
"""Once calls ran in a turn, the agent's prompt ends with how to answer (``reply_to_user``, spelled out) instead of
only saying it is its turn."""
