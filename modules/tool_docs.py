"""Tool documentation as DSPy state.

A :class:`DocumentedTool` holds what an agent is shown about one tool: its shown name, a
description (the signature's instructions), a parameter schema, per-parameter descriptions (the
signature's input-field descriptions) and what it returns (the output field's description).
A documented tool is a ``dspy.Predict`` whose signature *is* its documentation, and a
:class:`Toolbox` is a ``dspy.Module``: learned docs save and load with ``Module.save`` /
``Module.load`` like any other DSPy state, otbench's optimizers edit them by editing signatures,
and DSPy's own instruction optimizers (COPRO, MIPROv2, GEPA), which find a program's predictors
with ``named_predictors()`` and rewrite their instructions, rewrite the tools' descriptions. The
tool is never called as a predictor: the agent reads its docs.

The parameter schema (names, types, which are required) comes from the environment's opacity
setting; ``parameters=None`` means "undocumented": the agent is told nothing about arguments
(BFCL's names_only and names_desc settings). There, and only there, an optimizer may *learn* a
schema from what the tool itself answered (``learn_parameters``); it is marked as learned, so it
is the optimizer's output and never mistaken for what the setting showed.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import functools
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dspy
from dspy.signatures.signature import _default_instructions

from otbench.errors import ConfigError, DataError
from otbench.modules import api_tools
from otbench.modules.api_tools import JSON_TYPES

DOCS_FORMAT = "otbench.docs/1"
# Meta key of a docs file: the toolsets an optimizer worked on (the others keep the setting's docs).
OPTIMIZED_TOOLSETS = "optimized_toolsets"
_RESULT_FIELD = "result"


class _Unset(enum.Enum):
    UNSET = "unset"


UNSET = _Unset.UNSET
"""Marks a parameter with no default (``None`` is a default like any other)."""


@dataclass(frozen=True)
class ParameterSpec:
    """One parameter of the shown schema, as the environment's data gives it."""

    name: str
    """The argument name a call must use."""
    type: str = "any"
    """A type name: JSON schema's, or BFCL's richer ones (``float``, ``tuple``, ``dict``)."""
    required: bool = True
    """Whether a call must give it."""
    items: dict[str, Any] | None = field(default=None, hash=False)
    """The schema of an array's elements, when the data gives one."""
    default: Any = field(default=UNSET, hash=False)
    """The value used when a call leaves the parameter out (:data:`UNSET`: none given)."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data; ``items`` and ``default`` only when the data gave them."""
        data: dict[str, Any] = {"name": self.name, "type": self.type, "required": self.required}
        if self.items is not None:
            data["items"] = self.items
        if self.default is not UNSET:
            data["default"] = self.default
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ParameterSpec:
        return cls(str(data["name"]), str(data.get("type", "any")), bool(data.get("required", True)),
                   data.get("items"), data.get("default", UNSET))


def _openai_schema_types(schema: dict[str, Any]) -> dict[str, Any]:
    """A nested schema (an array's ``items``) with its type names mapped to JSON schema's."""
    mapped = {key: _openai_schema_types(value) if isinstance(value, dict) else value for key, value in schema.items()}
    kind = mapped.get("type")
    if isinstance(kind, str) and kind in JSON_TYPES:  # a nested schema may hold anything under "type"
        mapped["type"] = JSON_TYPES[kind]
    return mapped


def _field_name(parameter: str) -> str:
    """The signature field for a parameter; names that clash with Signature internals get a ``_`` suffix."""
    return f"{parameter}_" if hasattr(dspy.Signature, parameter) or parameter in {"instructions", "fields"} else parameter


def _make_signature(
    description: str, parameters: tuple[ParameterSpec, ...], descriptions: dict[str, str], returns: str
) -> type[dspy.Signature]:
    names = tuple(p.name for p in parameters)
    return _signature(description, names, tuple(descriptions.get(name, "") for name in names), returns)


@functools.lru_cache(maxsize=8192)
def _signature(description: str, names: tuple[str, ...], descriptions: tuple[str, ...],
               returns: str) -> type[dspy.Signature]:
    """One signature per distinct doc, made once: a signature is a pydantic model class, slow to make (milliseconds),
    and the same docs are built again and again (every ``toolbox()`` of an environment, every docs file read). Sharing
    it is safe as DSPy shares signatures between copies of a program: docs change by setting a new one."""
    fields: dict[str, Any] = {
        _field_name(name): (Any, dspy.InputField(desc=text)) for name, text in zip(names, descriptions, strict=True)
    }
    fields[_RESULT_FIELD] = (Any, dspy.OutputField(desc=returns))
    signature: type[dspy.Signature] = dspy.make_signature(fields, description)
    return signature


class DocumentedTool(dspy.Predict):
    """The documentation of one tool as the agent sees it, held in a DSPy signature.

    The description is the signature's instructions, each parameter's description an input field's
    and what the tool returns the output field's. Whoever sets ``signature`` (``with_docs``, a DSPy
    optimizer writing ``predictor.signature``) sets the docs: there is no second copy to keep in step.
    DSPy's ``reset_copy`` resets a predictor's LM, demos and traces, not its signature, so the docs stay.
    """

    def __init__(
        self,
        name: str,
        *,
        description: str = "",
        parameters: Iterable[ParameterSpec] | None = None,
        parameter_descriptions: dict[str, str] | None = None,
        returns: str = "",
    ) -> None:
        shown = None if parameters is None else tuple(parameters)
        super().__init__(_make_signature(description, shown or (), parameter_descriptions or {}, returns))
        self.name = name
        self.parameters: tuple[ParameterSpec, ...] | None = shown
        self.parameters_learned = False

    def learn_parameters(self, parameters: Iterable[ParameterSpec]) -> bool:
        """Show a learned parameter schema; refused (False) when the setting already shows one.

        Returns whether the schema changed. Descriptions of parameters that stay are kept.
        """
        if self.parameters is not None and not self.parameters_learned:
            return False
        learned = tuple(parameters)
        if learned == self.parameters:
            return False
        kept = self.parameter_descriptions if self.parameters else {}
        self.signature = _make_signature(self.description, learned, kept, self.returns)
        self.parameters, self.parameters_learned = learned, True
        return True

    def learn_types(self, types: Mapping[str, str]) -> bool:
        """Show a type for each shown parameter that has none (``any``: an unannotated Python parameter) where
        ``types`` gives one; a shown type is never replaced. Returns whether any type changed."""
        if not self.parameters:
            return False
        typed = tuple(dataclasses.replace(p, type=types[p.name]) if p.type == "any" and types.get(p.name, "any") != "any"
                      else p for p in self.parameters)
        if typed == self.parameters:
            return False
        self.parameters = typed
        return True

    # -- what the agent sees -------------------------------------------------------------------
    @property
    def description(self) -> str:
        # DSPy fills an empty instruction with generated boilerplate; a blank doc must stay blank.
        text = self.signature.instructions
        return "" if text == _default_instructions(self.signature) else text

    @property
    def returns(self) -> str:
        text: str = self.signature.output_fields[_RESULT_FIELD].json_schema_extra["desc"]
        return text

    @property
    def parameter_descriptions(self) -> dict[str, str]:
        fields = self.signature.input_fields
        return {p.name: fields[_field_name(p.name)].json_schema_extra["desc"] for p in self.parameters or ()}

    def with_docs(
        self, *, description: str | None = None, parameter_descriptions: dict[str, str] | None = None,
        returns: str | None = None,
    ) -> None:
        """Edit the documentation in place; unknown parameter names are ignored (the schema is fixed).

        Docs held in the signature this class makes get the one made for the new docs (made once, see
        :func:`_signature`); a signature set from elsewhere (a DSPy optimizer's, a loaded state) is edited field by
        field, so whatever else it holds stays."""
        shown = self.parameters or ()
        current = self.parameter_descriptions
        if self.signature is _make_signature(self.description, shown, current, self.returns):
            known = {name: text for name, text in (parameter_descriptions or {}).items() if name in current}
            self.signature = _make_signature(self.description if description is None else description, shown,
                                             current | known, self.returns if returns is None else returns)
            return
        signature = self.signature
        if description is not None:
            signature = signature.with_instructions(description)
        for parameter, text in (parameter_descriptions or {}).items():
            if self.parameters and any(p.name == parameter for p in self.parameters):
                signature = signature.with_updated_fields(_field_name(parameter), desc=text)
        if returns is not None:
            signature = signature.with_updated_fields(_RESULT_FIELD, desc=returns)
        self.signature = signature

    def openai_schema(self) -> dict[str, Any]:
        """The tool in OpenAI's ``tools`` format; ``parameters`` is left out when undocumented."""
        function: dict[str, Any] = {"name": self.name, "description": self.description}
        if self.returns:
            function["description"] = f"{self.description} Returns: {self.returns}".strip()
        if self.parameters is not None:
            descriptions = self.parameter_descriptions
            properties: dict[str, Any] = {}
            for p in self.parameters:
                prop: dict[str, Any] = {}
                if p.type in JSON_TYPES:
                    prop["type"] = JSON_TYPES[p.type]
                if p.items is not None:
                    prop["items"] = _openai_schema_types(p.items)
                if p.default is not UNSET:
                    prop["default"] = p.default
                if descriptions.get(p.name):
                    prop["description"] = descriptions[p.name]
                properties[p.name] = prop
            function["parameters"] = {
                "type": "object",
                "properties": properties,
                "required": [p.name for p in self.parameters if p.required],
            }
        return {"type": "function", "function": function}

    # -- plain data ----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Code-free form for export: everything the agent is shown."""
        descriptions = self.parameter_descriptions
        data: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "returns": self.returns,
            "parameters": None
            if self.parameters is None
            else [
                {**p.to_dict(), "description": descriptions[p.name]}
                for p in self.parameters
            ],
        }
        if self.parameters_learned:
            data["parameters_learned"] = True
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DocumentedTool:
        raw = data.get("parameters")
        parameters = None if raw is None else [ParameterSpec.from_dict(p) for p in raw]
        tool = cls(
            str(data["name"]),
            description=str(data.get("description", "")),
            parameters=parameters,
            parameter_descriptions={p["name"]: str(p.get("description", "")) for p in raw or []},
            returns=str(data.get("returns", "")),
        )
        tool.parameters_learned = bool(data.get("parameters_learned")) and parameters is not None
        return tool

    # -- DSPy state ----------------------------------------------------------------------------
    def dump_state(self, json_mode: bool = True) -> dict[str, Any]:
        state: dict[str, Any] = {"name": self.name, "signature": self.signature.dump_state()}
        if self.parameters_learned:  # the signature's fields hold no types or required flags
            state["learned_parameters"] = [p.to_dict() for p in self.parameters or ()]
        return state

    def load_state(self, state: dict[str, Any], *, allow_unsafe_lm_state: bool = False) -> DocumentedTool:
        """Docs saved by :meth:`dump_state`; ``allow_unsafe_lm_state`` is DSPy's argument for predictors that
        keep an LM in their state, which a tool's never does."""
        if "learned_parameters" in state:
            self.learn_parameters(ParameterSpec.from_dict(p) for p in state["learned_parameters"])
        self.signature = self.signature.load_state(state["signature"])
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> DocumentedTool:
        """A twin whose docs, demos and settings change apart from this tool's: its own lists and dicts.
        Signatures are immutable classes and are shared, as are a configured LM (a client, not state) and
        the demos themselves (a BFCL toolbox holds hundreds of tools: copying is kept cheap)."""
        twin = copy.copy(self)
        memo[id(self)] = twin
        for name, value in vars(self).items():
            if isinstance(value, (list, dict)):
                setattr(twin, name, copy.copy(value))
        return twin

    def __repr__(self) -> str:
        return f"DocumentedTool({self.name!r}, description={self.description!r})"


def tool_key(toolset: str, name: str) -> str:
    """State key of a tool: tools of different toolsets (one per BFCL test) never share docs."""
    return f"{toolset}::{name}"


def _listed(toolset: str, tools: Any) -> list[Any]:
    if not isinstance(tools, list):
        raise DataError(f"toolset {toolset!r}: its tools must be a list, not {type(tools).__name__}")
    return tools


def _checked_tool(toolset: str, data: Any) -> DocumentedTool:
    """A tool of a docs file, its name a non-empty text, its texts texts, and its parameters objects with names an
    agent can write (non-empty, no spaces), each once; else refused, saying which tool and what is wrong."""
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not data["name"].strip():
        raise DataError(f"toolset {toolset!r}: every tool must be an object with a non-empty 'name' text")
    where = f"toolset {toolset!r}, tool {data['name']!r}"
    raw = data.get("parameters")
    if raw is not None and (not isinstance(raw, list) or not all(
            isinstance(parameter, dict) and isinstance(parameter.get("name"), str) for parameter in raw)):
        raise DataError(f"{where}: 'parameters' must be a list of objects with a 'name'")
    for field_name in ("description", "returns"):
        if not isinstance(data.get(field_name, ""), str):
            raise DataError(f"{where}: {field_name!r} must be text, not {type(data[field_name]).__name__}")
    names = [parameter["name"] for parameter in raw or ()]
    for parameter in raw or ():
        name = parameter["name"]
        if not name or any(character.isspace() for character in name):
            raise DataError(f"{where}: parameter name {name!r} is not one a call can use (empty, or with spaces)")
        if not isinstance(parameter.get("description", ""), str) or not isinstance(parameter.get("type", ""), str):
            raise DataError(f"{where}, parameter {name!r}: 'description' and 'type' must be text")
        if names.count(name) > 1:
            raise DataError(f"{where}: parameter {name!r} is listed twice")
    return DocumentedTool.from_dict(data)


def _checked_toolset(toolset: str, tools: Any) -> list[DocumentedTool]:
    """A toolset of a docs file: its tools checked, each name once (a second doc of a tool would silently win)."""
    checked = [_checked_tool(toolset, tool) for tool in _listed(toolset, tools)]
    names = [tool.name for tool in checked]
    twice = next((name for name in names if names.count(name) > 1), None)
    if twice is not None:
        raise DataError(f"toolset {toolset!r}: tool {twice!r} is documented twice")
    return checked


class Toolbox(dspy.Module):
    """All documented tools of a run, grouped in toolsets.

    BFCL gives every test its own toolset (learning on one test never leaks into another);
    Chess and BrowseComp have one shared toolset. Save/load with DSPy's ``save``/``load``, or
    with :meth:`to_json`/:meth:`from_json` for a code-free file other agents can read.
    """

    def __init__(self, tools: dict[str, list[DocumentedTool]] | None = None, *, meta: dict[str, Any] | None = None):
        super().__init__()
        self.tools: dict[str, DocumentedTool] = {}
        self.meta: dict[str, Any] = dict(meta or {})
        for toolset, members in (tools or {}).items():
            for tool in members:
                self.tools[tool_key(toolset, tool.name)] = tool

    def toolset_ids(self) -> list[str]:
        return list(dict.fromkeys(key.split("::", 1)[0] for key in self.tools))

    def toolset(self, toolset: str) -> list[DocumentedTool]:
        prefix = f"{toolset}::"
        return [tool for key, tool in self.tools.items() if key.startswith(prefix)]

    def get(self, toolset: str, name: str) -> DocumentedTool | None:
        return self.tools.get(tool_key(toolset, name))

    def to_json(self) -> dict[str, Any]:
        return {
            "format": DOCS_FORMAT,
            "meta": self.meta,
            "toolsets": {ts: [tool.to_dict() for tool in self.toolset(ts)] for ts in self.toolset_ids()},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Toolbox:
        """A toolbox from :meth:`to_json`'s data, which may come from anywhere (a file a user gives): its shape is
        checked and anything else refused with what is wrong (:class:`~otbench.errors.DataError`)."""
        if data.get("format") != DOCS_FORMAT:
            raise DataError(f"not an otbench docs file (expected format {DOCS_FORMAT!r})")
        toolsets = data.get("toolsets")
        if not isinstance(toolsets, dict):
            raise DataError("its 'toolsets' must be an object of toolset id -> list of tools, "
                            f"not {type(toolsets).__name__}")
        meta = data.get("meta", {})
        if not isinstance(meta, dict):
            raise DataError(f"its 'meta' must be an object, not {type(meta).__name__}")
        return cls({str(ts): _checked_toolset(ts, tools) for ts, tools in toolsets.items()}, meta=meta)

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json(), indent=2))
        return path

    def adopt_docs(self, learned: Toolbox) -> int:
        """Copy descriptions from ``learned`` onto matching tools here; returns how many tools matched.

        The schema stays this toolbox's own: a docs file learned in one setting can be tried in
        another without smuggling in parameter names the setting hides. A schema the optimizer
        learned is its output, and is taken where this toolbox shows none.
        """
        matched = 0
        for key, tool in self.tools.items():
            source = learned.tools.get(key)
            if source is None:
                continue
            if source.parameters_learned and source.parameters is not None:  # refused where the setting shows one
                tool.learn_parameters(source.parameters)
            tool.with_docs(
                description=source.description,
                parameter_descriptions=source.parameter_descriptions,
                returns=source.returns,
            )
            matched += 1
        return matched

    def as_dspy_tools(self, toolset: str, functions: dict[str, Callable[..., Any]]) -> list[dspy.Tool]:
        """``dspy.Tool`` objects carrying the learned docs, for a downstream agent (e.g. ``dspy.ReAct``).

        ``functions`` maps each shown tool name to the callable that implements it. The learned
        description is kept even when blank (``dspy.Tool`` would put the function's docstring in
        its place); where no parameters were shown or learned, the function's own signature says
        which arguments it takes.
        """
        tools = []
        for tool in self.toolset(toolset):
            if tool.name not in functions:
                raise ConfigError(f"no implementation given for tool {tool.name!r}")
            args = api_tools.parameters_schema(tool)["properties"] if tool.parameters is not None else None
            downstream = dspy.Tool(functions[tool.name], name=tool.name, args=args)
            downstream.desc = api_tools.description(tool)
            tools.append(downstream)
        return tools

    @classmethod
    def read(cls, path: str | Path) -> Toolbox:
        """Read an otbench docs file (what ``optimize`` writes as ``final_docs.json``)."""
        return cls.from_json(json.loads(Path(path).read_text()))

    def forward(self, toolset: str) -> list[DocumentedTool]:
        """A toolbox is called for the current docs of one toolset."""
        return self.toolset(toolset)
