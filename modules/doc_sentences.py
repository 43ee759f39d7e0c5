"""The sentences code writes into learned docs about a tool's interface, written and recognised in one place.

Optimizers write them from the tools' errors; the judge of invented claims (:mod:`otbench.evals.invented`) takes
them as evidence; and the agent's terse view of a tool (:func:`terse_description`, :func:`terse_meaning`) leaves out
what its signature line already says. Keeping the wording here is what lets all three agree on it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
CALL_FORM = re.compile(rf" ?Called as {_NAME}\((?:{_NAME}=…(?:, )?)*\)\.")
"""A call-form sentence (:func:`call_form_sentence`) inside a description, with the space that joined it."""
_RULE_SOURCE = re.compile(rf" \(its own error for {_NAME}\)(?=\.)")
# A rule that says only the type a parameter must have ("Must be a string"), which a signature line shows as its type.
_TYPE_RULE = re.compile(r" ?Must be an? (?:string|list|array|integer|int|number|float|dict|object|boolean|bool)\.")


def call_form_sentence(tool: str, parameters: Iterable[str]) -> str:
    """How learned docs state the form of a call, from the parameters a tool's own error named as required."""
    return f"Called as {tool}({', '.join(f'{name}=…' for name in parameters)})."


def rule_sentence(parameter: str, rule: str) -> str:
    """How learned docs state a rule a tool's error gave: the sentence the judge recognises as evidence."""
    return f"{rule[0].upper()}{rule[1:]} (its own error for {parameter})."


def terse_description(description: str) -> str:
    """``description`` as an agent that reads the tool's signature line needs it: without the call-form sentence (the
    line lists the same parameters) and without the note of which error a rule came from."""
    return _RULE_SOURCE.sub("", CALL_FORM.sub("", description)).strip()


def terse_meaning(meaning: str, *, type_shown: bool) -> str:
    """A parameter's meaning as that agent needs it: without a rule that only says the type the signature line shows
    (``type_shown``), and without the note of which error a rule came from."""
    meaning = _RULE_SOURCE.sub("", meaning)
    return (_TYPE_RULE.sub("", meaning) if type_shown else meaning).strip()
