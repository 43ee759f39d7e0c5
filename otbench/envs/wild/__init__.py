"""Wild: multi-turn dialogues with users who talk like users, over BFCL's executable functions made opaque.

WildToolBench showed that tool use collapses when users pack several needs into one message, leave out
what they said before and switch between tasks, chitchat and clarification. Its own tools cannot run,
so this environment rebuilds those patterns over the BFCL functions this project implements: every call
runs, offline, against gold calls and values taken from BFCL. See ``data/PROVENANCE.md`` for how the
committed dialogues are made (``python -m otbench.envs.wild.generate``) and how they differ from
WildToolBench's annotated logs.
"""
