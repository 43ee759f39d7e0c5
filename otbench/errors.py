"""The one exception type that means "the user asked for something that cannot be done".

Command-line entry points catch it and print its message on one line with exit code 2; anything
else is a bug and keeps its traceback.
"""


class UserError(Exception):
    """A mistake in what the user asked for (unknown option value, missing file, bad model...)."""
