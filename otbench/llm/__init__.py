"""LLM plumbing: the embedded model's weights and server, and token-metered DSPy LMs."""
