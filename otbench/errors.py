"""The exceptions otbench raises for what it cannot do as asked, by kind.

Library code raises these; it never prints or exits. Only the command line
(:func:`otbench.exits.run_main`) turns an :class:`OtbenchError` into one line on stderr and exit code 2;
anything else is a bug and keeps its traceback. Each message is one line a user can act on.
"""


class OtbenchError(Exception):
    """Something otbench cannot do as asked; the message says what and, where it can, how to fix it."""


class ConfigError(OtbenchError, ValueError):
    """Options or arguments that name nothing known, fall outside their bounds or contradict each other
    (an unknown environment, setting, optimizer or model; a knob below its minimum). A ``ValueError`` too,
    as Python code expects of a bad argument."""


class DataError(OtbenchError):
    """Data otbench reads is missing, malformed or not what it should be: a docs file, a run's checkpoint or
    artefact, generated positions or corpora whose fingerprint does not match, a model file's bytes."""


class SetupError(OtbenchError):
    """Something the machine must provide is missing or broken: a program (Stockfish, Chromium), an installed
    package, a download, a server that would not start."""


class RunError(OtbenchError):
    """A run that started could not finish as asked (a failure stopped it, or its budget ran out); what it
    finished is kept."""


UserError = OtbenchError
"""The one exception type of earlier releases: code that catches it still catches every otbench error."""
