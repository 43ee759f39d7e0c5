"""DSPy modules: tool documentation as state, and the agents that read it."""

import otbench  # noqa: F401  (sets offline-safe environment before dspy/litellm load)
