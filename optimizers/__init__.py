"""Documentation optimizers written as DSPy teleprompters."""

import otbench  # noqa: F401  (sets offline-safe environment before dspy/litellm load)
