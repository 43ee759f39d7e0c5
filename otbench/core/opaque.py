"""Opaque tools: the ways they are shown, and a function under another name, as Python itself knows it.

An opaque tool must not give its real name away, and the most telling place a name appears is
Python's own error for a call that does not fit: ``function_3() missing 1 required positional
argument: 'sku'`` is how an agent (and an editor) learns parameter names, so it must name the tool
as the agent saw it. That text comes from the code object (``co_name``, ``co_qualname``), which a
``**kwargs`` wrapper would leave as it is; the copy made here carries a renamed code object, and is
otherwise the same function (globals, defaults, closure, annotations).
"""

from __future__ import annotations

import types

PRESENTATIONS = ("names_only", "names_params", "gold")
"""How functions are shown under opaque names: no description and no parameters, parameters without a
description, or the true docstring and parameters."""


def renamed(function: types.FunctionType, name: str, *, doc: str | None) -> types.FunctionType:
    """A copy of ``function`` named ``name`` everywhere Python names it, with ``doc`` as its docstring."""
    code = function.__code__.replace(co_name=name, co_qualname=name)
    twin = types.FunctionType(code, function.__globals__, name, function.__defaults__, function.__closure__)
    twin.__kwdefaults__ = dict(function.__kwdefaults__) if function.__kwdefaults__ else None
    twin.__annotations__ = dict(function.__annotations__)
    twin.__doc__ = doc
    return twin
