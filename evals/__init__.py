"""Metrics and the evaluation harness."""

import otbench  # noqa: F401  (sets offline-safe environment before dspy/litellm load)
