"""Compact GBNF grammars from the JSON schemas of constrained replies, for the embedded model.

Hosted models get a reply schema as ``response_format``; llama.cpp turns such a schema into a
grammar that allows whitespace anywhere, and the small model then pretty-prints its JSON, which
doubles the tokens it generates. The grammar written here from the *same* schema admits only
compact JSON (no insignificant whitespace), so one schema stays the single source of truth and
only its rendering differs by model.

It also enforces what llama.cpp's own conversion ignores: ``propertyNames`` patterns (argument
names are identifiers, never prose). Only the schema features the project's replies use are
supported; any other feature raises :class:`UnsupportedSchema` instead of being silently dropped,
so a new reply schema is caught by the tests that render every one of them.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

# A JSON string character: anything but a quote, a backslash or a control character, or an escape.
_CHAR = r'[^"\\\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})'
_BASE_RULES = {
    "value": "object | array | string | number | boolean | null",
    "object": '"{" ( string ":" value ( "," string ":" value )* )? "}"',
    "array": '"[" ( value ( "," value )* )? "]"',
    "string": '"\\"" char* "\\""',
    "char": _CHAR,
    "number": '"-"? ( "0" | [1-9] [0-9]{0,15} ) ( "." [0-9]{1,20} )? ( [eE] [-+]? [0-9]{1,3} )?',
    "integer": '"-"? ( "0" | [1-9] [0-9]{0,15} )',
    "boolean": '"true" | "false"',
    "null": '"null"',
}
# Integer ranges up to this many values are spelt out exactly (a 1-10 score); wider or open ones admit any
# integer of at most 16 digits (the parser still reads what comes back; bounds are not scored).
_MAX_ENUMERATED_INTEGERS = 100
# The regular-expression subset ``pattern`` may use: anchors, character classes and single
# characters, each optionally repeated (``[A-Za-z_][A-Za-z0-9_]{0,39}`` and the like).
_PATTERN_ATOM = re.compile(r"(\[(?:\\.|[^\]\\])+\]|\\.|[^\[\]\\(){}*+?|^$.])(\{\d+(?:,\d*)?\}|[*+?])?")


class UnsupportedSchema(ValueError):
    """The schema uses a feature this converter does not render (name the feature, then extend it here)."""


def _literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    return json.dumps(text, ensure_ascii=False)


def _json_literal(value: Any) -> str:
    """A JSON value as the exact compact text the model must write, as a GBNF literal."""
    return _literal(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


class _Builder:
    """Collects named rules while walking a schema; rules with equal bodies are written once."""

    def __init__(self) -> None:
        self.rules: dict[str, str] = {}
        self._names: dict[str, str] = {}

    def rule(self, hint: str, body: str) -> str:
        """A rule name for ``body``, reusing an earlier rule with the same body."""
        if body in self._names:
            return self._names[body]
        base = re.sub(r"[^a-z0-9]+", "-", hint.lower()).strip("-") or "rule"
        name, number = base, 1
        while name in self.rules or name in _BASE_RULES or name == "root":
            number += 1
            name = f"{base}-{number}"
        self.rules[name] = body
        self._names[body] = name
        return name

    def value(self, schema: Any, hint: str) -> str:
        """The GBNF expression (a rule name or a literal alternation) for values of ``schema``."""
        if schema is True or schema == {}:
            return "value"
        if not isinstance(schema, dict):
            raise UnsupportedSchema(f"schema at {hint!r} must be an object, got {schema!r}")
        if "enum" in schema:
            return self.rule(hint, " | ".join(_json_literal(v) for v in schema["enum"]))
        if "const" in schema:
            return self.rule(hint, _json_literal(schema["const"]))
        kind = schema.get("type")
        unsupported = set(schema) & {"anyOf", "oneOf", "allOf", "not", "$ref", "if", "patternProperties"}
        if unsupported or isinstance(kind, list):
            raise UnsupportedSchema(f"schema at {hint!r} uses {sorted(unsupported) or 'a list of types'}")
        if kind == "object":
            return self._object(schema, hint)
        if kind == "array":
            return self._array(schema, hint)
        if kind == "string":
            return self._string(schema, hint)
        if kind == "integer":
            return self._integer(schema, hint)
        if kind in ("number", "boolean", "null"):
            return kind
        if kind is None:
            return "value"
        raise UnsupportedSchema(f"schema at {hint!r} has unknown type {kind!r}")

    def _object(self, schema: dict[str, Any], hint: str) -> str:
        properties: dict[str, Any] = schema.get("properties") or {}
        if not properties:  # a free-form object; keys may be constrained by ``propertyNames``
            names = schema.get("propertyNames")
            key = self._string(names, f"{hint}-key") if names else "string"
            member = f'{key} ":" value'
            return self.rule(hint, f'"{{" ( {member} ( "," {member} )* )? "}}"')
        fixed, extra = self._members(schema, hint)
        if fixed:
            body = ' "," '.join(fixed) + _optional_members(extra)
        else:  # all optional: kept in order, each only after the one before it
            body = f"( {_chain(extra)} )?"
        return self.rule(hint, f'"{{" {body} "}}"')

    def _members(self, schema: dict[str, Any], hint: str) -> tuple[list[str], list[str]]:
        """An object's required and optional members (``"name":`` and its value's expression), each in declared
        order."""
        properties: dict[str, Any] = schema.get("properties") or {}
        required = set(schema.get("required", []))
        members = {name: f'{_literal(_literal(name) + ":")} {self.value(value, f"{hint}-{name}")}'
                   for name, value in properties.items()}
        return ([member for name, member in members.items() if name in required],
                [member for name, member in members.items() if name not in required])

    def _array(self, schema: dict[str, Any], hint: str) -> str:
        if schema.get("maxItems") is not None and int(schema["maxItems"]) == 0:
            return self.rule(hint, '"[" "]"')
        item = self.value(schema.get("items", {}), f"{hint}-item")
        more = self._more_items(schema, item)
        return self.rule(hint, f'"[" {item} {more} "]"' if int(schema.get("minItems", 0)) >= 1
                         else f'"[" ( {item} {more} )? "]"')

    @staticmethod
    def _more_items(schema: dict[str, Any], item: str) -> str:
        """The items of an array after its first, as many as its bounds allow."""
        low, high = int(schema.get("minItems", 0)), schema.get("maxItems")
        return _repeat(f'"," {item}', max(low - 1, 0), None if high is None else int(high) - 1)

    def _string(self, schema: dict[str, Any], hint: str) -> str:
        if "enum" in schema:
            return self.rule(hint, " | ".join(_json_literal(v) for v in schema["enum"]))
        if "pattern" in schema:
            return self.rule(hint, f'"\\"" {_pattern(schema["pattern"])} "\\""')
        low, high = int(schema.get("minLength", 0)), schema.get("maxLength")
        if low == 0 and high is None:
            return "string"
        return self.rule(hint, f'"\\"" {_repeat("char", low, None if high is None else int(high))} "\\""')

    def _integer(self, schema: dict[str, Any], hint: str) -> str:
        low, high = schema.get("minimum"), schema.get("maximum")
        if low is None or high is None or int(high) - int(low) >= _MAX_ENUMERATED_INTEGERS:
            return "integer"
        # Longest first, so "10" is tried before "1" (GBNF alternatives are not ordered, but it reads better).
        numbers = sorted(range(int(low), int(high) + 1), key=lambda n: (-len(str(n)), n))
        return self.rule(hint, " | ".join(_literal(str(n)) for n in numbers))

    def opening(self, schema: Any, hint: str) -> tuple[str, str | None, tuple[str, ...]]:
        """What every compact value of ``schema`` starts with: the forced text, the GBNF expression of the rest (None:
        the value is that text), and a few texts the rest may start with (where the model's tokens may split). The
        rest is built from the same rules as :meth:`value`, so the two together admit exactly the same values."""
        if not isinstance(schema, dict) or not schema:
            return "", self.value(schema, hint), ()
        fixed = schema["enum"] if "enum" in schema else [schema["const"]] if "const" in schema else None
        if fixed is not None:
            texts = [json.dumps(value, ensure_ascii=False, separators=(",", ":")) for value in fixed]
            common = os.path.commonprefix(texts)
            rests = [text[len(common):] for text in texts]
            if all(rests):
                return common, self.rule(f"{hint}-rest", " | ".join(_literal(rest) for rest in rests)), tuple(rests)
            return (common, None, ()) if len(set(texts)) == 1 else ("", self.value(schema, hint), ())
        kind = schema.get("type")
        if kind == "object":
            return self._object_opening(schema, hint)
        if kind == "array" and int(schema.get("minItems", 0)) >= 1:
            item_text, item_rest, samples = self.opening(schema.get("items", {}), f"{hint}-item")
            tail = f'{self._more_items(schema, self.value(schema.get("items", {}), f"{hint}-item"))} "]"'.strip()
            if item_rest is None:
                return "[" + item_text, tail, (",", "]")
            return "[" + item_text, f"{item_rest} {tail}", samples
        if kind == "string" and "pattern" not in schema:
            low, high = int(schema.get("minLength", 0)), schema.get("maxLength")
            content = _repeat("char", low, None if high is None else int(high))
            return '"', f'{content} "\\""'.strip(), ("a", "A", "1", " ")
        return "", self.value(schema, hint), ()

    def _object_opening(self, schema: dict[str, Any], hint: str) -> tuple[str, str | None, tuple[str, ...]]:
        """:meth:`opening` of an object: its brace, then each required member's name and the forced text of its
        value, up to the first value that is not forced."""
        properties: dict[str, Any] = schema.get("properties") or {}
        required = [name for name in properties if name in set(schema.get("required", []))]
        if not required:
            return "{", self.rules[self._object(schema, hint)].removeprefix('"{"').strip(), ('"a', "}")
        fixed, optional = self._members(schema, hint)
        extra = _optional_members(optional)
        text = "{"
        for index, name in enumerate(required):
            value_text, value_rest, samples = self.opening(properties[name], f"{hint}-{name}")
            text += ("," if index else "") + _literal(name) + ":" + value_text
            if value_rest is not None:
                tail = "".join(f' "," {member}' for member in fixed[index + 1:])
                return text, f'{value_rest}{tail}{extra} "}}"', samples
        return (text, f'{extra.strip()} "}}"', (",", "}")) if optional else (text + "}", None, ())


def _optional_members(members: list[str]) -> str:
    """Optional members after the required ones: each may follow, in declared order."""
    return "".join(f' ( "," {member} )?' for member in members)


def _chain(members: list[str]) -> str:
    """``a ( "," b ( "," c )? )?``: a prefix of ``members`` in order, at least the first."""
    head, *rest = members
    return head + (f' ( "," {_chain(rest)} )?' if rest else "")


def _repeat(expression: str, low: int, high: int | None) -> str:
    """``expression`` repeated ``low`` to ``high`` times (unbounded when ``high`` is None)."""
    if high is not None and high < low:
        raise UnsupportedSchema(f"a bound of {high} below the least count {low}")
    if high is None:
        return f"( {expression} ){{{low},}}" if low else f"( {expression} )*"
    if high == 0:
        return ""
    return f"( {expression} ){{{low},{high}}}"


def _pattern(pattern: str) -> str:
    """A GBNF sequence for an anchored regular expression made of classes and single characters."""
    body = pattern.removeprefix("^").removesuffix("$")
    parts, position = [], 0
    while position < len(body):
        match = _PATTERN_ATOM.match(body, position)
        if match is None:
            raise UnsupportedSchema(f"pattern {pattern!r}: only character classes and characters, each optionally "
                                    f"repeated, are supported (stopped at {body[position:]!r})")
        atom, quantifier = match.groups()
        if atom.startswith("\\"):
            atom = _literal(atom[1])
        elif not atom.startswith("["):
            atom = _literal(atom)
        parts.append(atom + (quantifier or ""))
        position = match.end()
    return " ".join(parts)


@lru_cache(maxsize=256)
def _grammar_of(schema_json: str) -> str:
    builder = _Builder()
    root = builder.value(json.loads(schema_json), "reply")
    rules = {"root": root, **builder.rules, **_BASE_RULES}
    return "\n".join(f"{name} ::= {body}" for name, body in rules.items()) + "\n"


def schema_to_gbnf(schema: dict[str, Any]) -> str:
    """A llama.cpp GBNF grammar that admits exactly the compact JSON texts valid under ``schema``.

    Cached by the schema's JSON (properties keep their declared order, which the grammar follows).
    """
    return _grammar_of(json.dumps(schema))


@dataclass(frozen=True)
class Opening:
    """What every compact reply under a schema starts with, and the grammar of the rest.

    A reply's opening (``{"calls":[{"name":"``) is the same for every request: the grammar allows one text there.
    Written into the prompt as the start of the model's reply, it is read as prompt tokens (about three times as
    fast as generated ones on a CPU) instead of generated a token at a time; the model then writes only the rest,
    under :meth:`grammar_after`, which admits exactly the rests of the replies the whole schema admits."""

    text: str
    """The forced text (empty when a reply's first character is free)."""
    samples: tuple[str, ...]
    """A few texts the rest may start with: a tokenizer splits the opening where it splits these continuations, and
    only a part every one of them agrees on is written for the model (:func:`agreed_prefix`)."""
    rest: str | None
    """The GBNF expression of what follows ``text`` (None: the reply is ``text`` alone)."""
    rules: tuple[tuple[str, str], ...]
    """The named rules ``rest`` uses."""

    def grammar_after(self, written: str) -> str:
        """The grammar of a reply after ``written``, a prefix of :attr:`text` already written for the model."""
        if not self.text.startswith(written) or (self.rest is None and written == self.text):
            raise ValueError(f"{written!r} does not open a reply that has a rest to write")
        left = self.text[len(written):]
        root = " ".join(part for part in (_literal(left) if left else "", self.rest or "") if part)
        rules = {"root": root, **dict(self.rules), **_BASE_RULES}
        return "\n".join(f"{name} ::= {body}" for name, body in rules.items()) + "\n"


@lru_cache(maxsize=256)
def _opening_of(schema_json: str) -> Opening:
    builder = _Builder()
    text, rest, samples = builder.opening(json.loads(schema_json), "reply")
    return Opening(text, samples, rest, tuple(builder.rules.items()))


def schema_opening(schema: dict[str, Any]) -> Opening:
    """The :class:`Opening` of compact replies under ``schema`` (cached by the schema's JSON)."""
    return _opening_of(json.dumps(schema))


def agreed_prefix(opening: Opening, pieces: Callable[[str], list[str] | None]) -> str:
    """The longest start of ``opening.text`` that ends where the model's tokens end, whatever follows it.

    ``pieces`` splits a text into the model's tokens (None: it cannot). A text cut inside what would be one token
    (``":{"`` cut after ``":``) leaves the model to continue from a split it never saw, and it writes worse; so the
    opening is cut at a token boundary that its tokenization shares with every sample continuation."""
    if not opening.text or opening.rest is None:
        return ""
    alone = pieces(opening.text)
    if not alone:
        return ""
    agreed = len(alone)
    for sample in opening.samples:
        continued = pieces(opening.text + sample)
        if continued is None:
            return ""
        agreed = next((index for index, (one, other) in enumerate(zip(alone[:agreed], continued))
                       if one != other), min(agreed, len(continued)))
    written = "".join(alone[:agreed])
    return written if opening.text.startswith(written) else ""


_IDENTIFIER_KEY = r'"\"" [A-Za-z_] [A-Za-z0-9_]{0,39} "\""'
"""An argument name that is an identifier, as a GBNF JSON string (a small model writes prose keys without it)."""
TOOL_CALL_OPENINGS = (("<tool_call>\n", "\n</tool_call>"), ("```json\n", "\n```"))
"""How a call may be written in a chat reply, opening and closing around its compact JSON: in the tags of the
Hermes/Qwen chat templates (as they render earlier calls), or in the JSON code fence small models write by habit."""
TEXT_CANNOT_START = "<`{"
"""First characters a text reply cannot have in a grammar that also admits calls: every call opens with one."""


@dataclass(frozen=True)
class CallableTool:
    """A tool as a grammar of calls sees it: its name, the JSON schema of its arguments, and whether the arguments
    must follow that schema (``strict``) or only be an object whose names are the declared ones or identifiers."""

    name: str
    parameters: dict[str, Any]
    strict: bool = False


def tool_call_grammar(tools: Sequence[CallableTool], *, text: bool, several: bool) -> str:
    """A llama.cpp GBNF grammar for a chat reply that calls ``tools``: one call (``several``: one or more, a line
    apart), each ``{"name":...,"arguments":{...}}`` in compact JSON between one of :data:`TOOL_CALL_OPENINGS`; with
    ``text``, a text reply is admitted instead, which never opens like a call (:data:`TEXT_CANNOT_START`, nor
    whitespace).

    A call is always one of the offered tools with an object of arguments, so whatever the model writes under this
    grammar reads back as valid calls or as text, never as a call of something that was not offered. Raises
    :class:`UnsupportedSchema` for a strict tool whose schema this module does not render.
    """
    builder = _Builder()
    bodies = []
    for tool in tools:
        arguments = builder.value(tool.parameters, f"{tool.name}-arguments") if tool.strict else \
            _named_arguments(builder, tool)
        opening = _literal('{"name":' + json.dumps(tool.name, ensure_ascii=False) + ',"arguments":')
        bodies.append(builder.rule(f"call-{tool.name}", f'{opening} {arguments} "}}"'))
    body = builder.rule("call-body", " | ".join(bodies))
    call = builder.rule("call", " | ".join(f"{_literal(opening)} {body} {_literal(closing)}"
                                           for opening, closing in TOOL_CALL_OPENINGS))
    calls = builder.rule("calls", f'{call} ( "\\n" "\\n"? {call} )*' if several else call)
    cannot_start = "".join(TEXT_CANNOT_START)
    reply = builder.rule("text", f'[^{cannot_start} \\t\\r\\n] [^\\x00]*') if text else None
    rules = {"root": f"{calls} | {reply}" if reply else calls, **builder.rules, **_BASE_RULES}
    return "\n".join(f"{name} ::= {rule}" for name, rule in rules.items()) + "\n"


def _named_arguments(builder: _Builder, tool: CallableTool) -> str:
    """An object of any values whose names are the tool's declared parameters or identifiers."""
    declared = (tool.parameters.get("properties") or {}) if isinstance(tool.parameters, dict) else {}
    names = [_literal(json.dumps(name, ensure_ascii=False)) for name in declared
             if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,39}", str(name))]
    key = builder.rule("argument-name", " | ".join([_IDENTIFIER_KEY, *names]))
    member = f'{key} ":" value'
    return builder.rule(f"{tool.name}-arguments", f'"{{" ( {member} ( "," {member} )* )? "}}"')


def schema_as_grammar(request: dict[str, Any]) -> dict[str, Any]:
    """``request`` with a JSON-schema ``response_format`` replaced by the equivalent compact grammar.

    llama.cpp refuses a request that has both, so the schema is removed; the grammar travels in
    ``extra_body``, which the OpenAI-compatible client forwards as a top-level field. A request
    without a reply schema is returned unchanged.
    """
    schema = reply_schema(request)
    if schema is None:
        return request
    rest = {key: value for key, value in request.items() if key != "response_format"}
    rest["extra_body"] = {**(request.get("extra_body") or {}), "grammar": schema_to_gbnf(schema)}
    return rest


def reply_schema(request: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request's ``response_format`` asks replies to follow (any object for ``json_object``);
    None when it asks for none."""
    response_format = request.get("response_format")
    if not isinstance(response_format, dict) or response_format.get("type") not in ("json_schema", "json_object"):
        return None
    schema = (response_format.get("json_schema") or {}).get("schema") if response_format["type"] == "json_schema" \
        else None
    return schema or {"type": "object"}
