"""The four documentation settings of BFCL-Opaque, applied per test: ``gold`` (the true docs), ``names_only``
(opaque names, nothing else), ``names_desc`` (plus the true descriptions) and ``names_params`` (plus the
parameter schema, descriptions blanked).

Each test gets its own copy of its tools, renamed ``function_1..N`` in the order the test lists
them (except in ``gold``), so learning on one test never leaks into another.
"""

from __future__ import annotations

from typing import Any

from otbench.envs.bfcl.settings import SETTINGS
from otbench.errors import ConfigError
from otbench.modules.tool_docs import UNSET, DocumentedTool, ParameterSpec


def shown_names(functions: tuple[dict[str, Any], ...], setting: str) -> dict[str, str]:
    """Map shown name -> real function name for one test."""
    if setting == "gold":
        return {f["name"]: f["name"] for f in functions}
    return {f"function_{index}": f["name"] for index, f in enumerate(functions, start=1)}


def _without_descriptions(schema: dict[str, Any]) -> dict[str, Any]:
    return {key: _without_descriptions(value) if isinstance(value, dict) else value
            for key, value in schema.items() if key != "description"}


def _parameters(function: dict[str, Any], *, descriptions: bool) -> list[ParameterSpec]:
    """The function's parameter schema as BFCL's data gives it: types, array items and defaults.

    Without ``descriptions`` (names_params) the descriptions nested in array items go too.
    """
    schema = function.get("parameters", {})
    required = set(schema.get("required", []))
    parameters = []
    for name, spec in schema.get("properties", {}).items():
        items = spec.get("items")
        if isinstance(items, dict) and not descriptions:
            items = _without_descriptions(items)
        parameters.append(ParameterSpec(name, str(spec.get("type", "any")), name in required,
                                        items if isinstance(items, dict) else None, spec.get("default", UNSET)))
    return parameters


def documented_tools(functions: tuple[dict[str, Any], ...], setting: str) -> list[DocumentedTool]:
    """The docs an agent sees for one test's functions under ``setting``."""
    if setting not in SETTINGS:
        raise ConfigError(f"unknown setting {setting!r}; choose from {', '.join(SETTINGS)}")
    tools = []
    for shown, function in zip(shown_names(functions, setting), functions, strict=True):
        properties = function.get("parameters", {}).get("properties", {})
        if setting == "gold":
            tool = DocumentedTool(
                shown,
                description=function.get("description", ""),
                parameters=_parameters(function, descriptions=True),
                parameter_descriptions={name: spec.get("description", "") for name, spec in properties.items()},
            )
        elif setting == "names_only":
            tool = DocumentedTool(shown)
        elif setting == "names_desc":
            tool = DocumentedTool(shown, description=function.get("description", ""))
        else:  # names_params: names and types kept, every description blanked
            tool = DocumentedTool(shown, parameters=_parameters(function, descriptions=False))
        tools.append(tool)
    return tools
