"""Invented claims: sentences of learned docs about tool behaviour that no observed call supports.

An editor with no evidence writes fiction ("takes a string as input and returns it in uppercase" for
a tool that adds two numbers), and an agent trusts fiction more than a blank doc. This module judges
learned sentences against the calls a run observed, by code, where code can tell:

- a tool that never answered a call has no observed behaviour: every sentence learned about it is
  invented;
- a sentence that names a parameter the tool's known interface does not have (``takes `text` ...``
  where the tool reported ``a`` and ``b``) is invented;
- a sentence that gives the inputs a kind (text, a number, a list...) that no working call's
  arguments had, or the result a kind that no working call returned, is invented;
- a sentence that says the tool returns nothing, where a working call returned something, or takes no
  parameters, where its interface names some, is invented.

Sentences code cannot judge (what a number means) are left to the reader: the figure is a lower
bound on invention, never a claim that the rest is true. The same judge drops such sentences before
an optimizer applies them (:func:`unsupported`), and measures docs afterwards (:func:`invented_claims`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from otbench.core.calls import CallResult
from otbench.evals.contamination import sentences
from otbench.modules.doc_sentences import CALL_FORM, rule_sentence
from otbench.modules.tool_docs import DocumentedTool, Toolbox

# Words that give a value a kind, by the JSON kind they name. Only words that name a kind and nothing else:
# "value" or "amount" say nothing of a type.
_KIND_WORDS: dict[str, tuple[str, ...]] = {
    "string": ("string", "strings", "text", "texts", "str", "uppercase", "lowercase", "characters", "word", "words"),
    "number": ("integer", "integers", "int", "number", "numbers", "float", "floats", "decimal", "numeric",
               "digits"),
    "array": ("list", "lists", "array", "arrays"),
    "boolean": ("boolean", "booleans", "bool", "true or false"),
    "object": ("dictionary", "dictionaries", "dict", "mapping", "json object"),
}
_KIND_PATTERNS = {kind: re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + r")\b")
                  for kind, words in _KIND_WORDS.items()}
_INPUT_CUE = re.compile(r"\b(?:takes?|accepts?|inputs?|expects?|given|parameters?|arguments?|pass(?:ed)?)\b")
_OUTPUT_CUE = re.compile(r"\b(?:returns?|returned|outputs?|produces?|gives? back|yields?|results? (?:is|are|in))\b")
# Ways a sentence names a parameter unmistakably: `name`, name=..., 'name' next to "parameter" or "argument".
_PARAMETER_REFERENCES = (re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`"),
                         re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*=(?!=)"),
                         re.compile(r"\b(?:parameter|argument)s?\s+(?:named\s+|called\s+)?['\"]([A-Za-z_][A-Za-z0-9_]*)['\"]"),
                         re.compile(r"['\"]([A-Za-z_][A-Za-z0-9_]*)['\"]\s+(?:parameter|argument)"))


# A rule a tool's own error states for one parameter: "'interval' must be one of 5m|1d, got 'weekly'",
# "'vertices[0]' must be a list, got dict", "quantity must be a whole number of at least 1, got 0", "'function' may
# only use numbers, the variable, ..." (tools phrase a rule with "must", "may only" or "can only" alike).
_RULE = re.compile(r"(?:^|[\s:(])(?P<quote>'?)(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P<item>\[\d+\])?'? "
                   r"(?P<modal>must|may only|can only) (?P<rule>(?:not )?[a-z]+ .+?)(?:, got .*)?$")
_EXCEPTION = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*(?:Error|Exception): ")
_RULE_LENGTH = 160
_UNEXPECTED = re.compile(r"unexpected (?:keyword )?argument '([^']+)'")
_NOT_PARAMETERS = re.compile(r"Not parameters: (.+) \(the tool refused them\)\.")
_CALL_FORM = re.compile(r"Called as ([A-Za-z_][A-Za-z0-9_]*)\((.*)\)\.")
_STATED_FORM = re.compile(rf"{CALL_FORM.pattern}| ?Not parameters: [^\n]+? \(the tool refused them\)\.")
"""The call-form and refused-names sentences inside a description, each with the space that joined it to the one
before (its parameters as ``name=…`` only, so no other sentence is taken)."""
_NOT_FOR = re.compile(r'Not for requests like "[^"]*": called for one as ([A-Za-z_][A-Za-z0-9_]*)\(.*\), '
                      r'(?:which it refused, )?'
                      r'(?:with no value the request gives|while the request names the parameters of [^"]*)\.')
_CALL_ARGUMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=…")
# Sentences that deny a tool any result or any input: false as soon as one working call returned something, or the
# tool's interface names a parameter ("It does not return anything.", "has no parameters").
_RETURNS_NOTHING = re.compile(r"\b(?:does not|doesn't|do not|don't|will not|won't) (?:return|produce|output) "
                              r"(?:anything|any(?: \w+)? (?:value|output|result|data)s?|a (?:value|result))\b"
                              r"|\breturns? (?:nothing|no (?:value|output|result)s?)\b|\bhas no (?:return value|output)\b")
_TAKES_NOTHING = re.compile(r"\b(?:has|have|takes?|accepts?|requires?|needs?|with) no (?:parameters|arguments|inputs?)\b"
                            r"|\b(?:does not|doesn't) (?:take|accept|require|need) any (?:parameters|arguments|inputs?)\b")
_CONDITION = re.compile(r"\b(?:if|when|unless|where|otherwise)\b")
_RULE_TYPES = (("integer", r"an? (?:valid )?(?:positive |non-negative )?(?:integer|whole number)"),
               ("number", r"an? (?:valid )?(?:positive |non-negative )?(?:number|float)|real number"),
               ("string", r"an? (?:valid )?(?:string|date|text)"), ("array", r"an? (?:valid )?(?:list|array|point)"),
               ("boolean", r"an? (?:valid )?(?:boolean|bool)"),
               ("object", r"an? (?:valid )?(?:dict|dictionary|object|mapping)"))
# pydantic's rule for a field, as FastMCP servers and many APIs answer: "hours  Input should be a valid integer [type=..."
_PYDANTIC_RULE = re.compile(r"(?:^|\s)(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s+Input should be (?P<rule>[^\[]+?) \[type=")


def error_rules(error: str, parameters: Iterable[str] | None = None,
                arguments: Mapping[str, Any] | None = None, *, runtime: bool = True) -> list[tuple[str, str]]:
    """(parameter, rule) pairs a tool's error states about one of ``parameters`` (None: any name the error
    quotes): a rule it spells out ("must be a number"; said of each item where the error names an item,
    ``'vertices[0]'``), or, where it quotes a text value one of ``arguments`` gave, what it says to such a value
    ("unknown dataset '…'; datasets: employees, orders"), the value left out: it was the caller's, not the tool's.
    With ``runtime``, also what a runtime error that names no parameter says of the one argument it concerns
    (:func:`runtime_rules`)."""
    known = None if parameters is None else set(parameters)
    found = runtime_rules(error, arguments or {}) if runtime else []
    validated = [(match.group("name"), f"must be {match.group('rule').strip().rstrip('.')}")
                 for match in _PYDANTIC_RULE.finditer(error) if known is None or match.group("name") in known]
    if validated:  # pydantic said each field's rule: the value it quotes is the caller's, and says no more
        return found + validated
    for line in error.splitlines():
        match = _RULE.search(line)
        if match and (match.group("name") in known if known is not None else bool(match.group("quote"))):
            # what follows a semicolon speaks of the value the call gave ("; item 0 is list [90.0, 0.0]"), not the rule
            rule = f"{match.group('modal')} {match.group('rule').split('; ')[0].strip().rstrip('.')}"
            found.append((match.group("name"), f"each item {rule}" if match.group("item") else rule))
            continue
        message = _EXCEPTION.sub("", line.strip())
        for name, value in (arguments or {}).items():
            if not isinstance(value, str):
                continue
            # Python quotes a text with an apostrophe in double quotes (its repr): "f'(x)" is the caller's value too
            quoted = next((q for q in (f"'{value}'", repr(value)) if q in message), None)
            if quoted and (value or name in message):
                said = message.replace(quoted, "'…'")
                found.append((name, f"on a wrong value says: {said[:_RULE_LENGTH]}"))
                break
    return found


def rule_type(rule: str) -> str | None:
    """The JSON-schema type a rule names ("must be an integer", "is used as a number" -> integer, number), None when
    it names none."""
    if rule.startswith(("each item", "must not", "on a wrong value")):
        return None
    return next((kind for kind, pattern in _RULE_TYPES if re.match(rf"(?:must be|is used as) (?:{pattern})\b", rule)),
                None)


# Runtime errors that name no parameter but the type of the value they failed on, and what each shows of the type
# the code wanted. Python's own messages (3.11 and later), matched on the error's last line.
_PYTHON_KINDS = {"int": "a number", "float": "a number", "complex": "a number", "str": "a text", "list": "a list",
                 "tuple": "a list", "dict": "an object"}
_OPERAND = re.compile(r"unsupported operand type\(s\) for [^:]+: '(?P<a>\w+)' and '(?P<b>\w+)'")
_COMPARED = re.compile(r"'[<>=!]+' not supported between instances of '(?P<a>\w+)' and '(?P<b>\w+)'")
_CONCATENATE = re.compile(r"can only concatenate (?P<want>str|list|tuple) \(not \"(?P<given>\w+)\"\) to")
_ATTRIBUTE = re.compile(r"'(?P<given>\w+)' object has no attribute '(?P<attribute>\w+)'")
_CONVERSION = re.compile(r"(?:float|int)\(\) argument must be a string or a (?:real )?number, not '(?P<given>\w+)'")
_REAL = re.compile(r"must be real number, not (?P<given>\w+)")
_ISO = re.compile(r"fromisoformat: argument must be str")
_INDEXED = re.compile(r"'(?P<given>\w+)' object is not subscriptable|string indices must be integers")
_ITERATED = re.compile(r"'(?P<given>\w+)' object is not iterable")
_KEY = re.compile(r"^KeyError: '(?P<key>[^']+)'$")
_ATTRIBUTE_HOLDERS = (("a text", str), ("a list", list), ("an object", dict))


def _python_type(value: Any) -> str:
    return "NoneType" if value is None else type(value).__name__


def _runtime_kind(line: str, given_types: set[str]) -> tuple[str | None, str] | None:
    """(the Python type the failing value had, or None where the error does not say; what the code used it as);
    ``given_types`` are the types of the call's arguments, which tell the caller's operand from the code's own."""
    if match := _OPERAND.search(line) or _COMPARED.search(line):
        a, b = match.group("a"), match.group("b")
        if a == b or {a, b} <= given_types:
            return None  # which value was the caller's, and what was wanted, the error does not say
        return next(((given, f"is used as {_PYTHON_KINDS[other]}") for given, other in ((a, b), (b, a))
                     if given in given_types and other in _PYTHON_KINDS), None)
    if match := _CONCATENATE.search(line):
        return match.group("given"), f"is used as {_PYTHON_KINDS[match.group('want')]}"
    if match := _ATTRIBUTE.search(line):
        holders = [kind for kind, holder in _ATTRIBUTE_HOLDERS if hasattr(holder, match.group("attribute"))]
        if not holders:
            return None  # an attribute of the code's own objects says nothing of a plain value
        return match.group("given"), f"is used as {' or '.join(holders)} (its .{match.group('attribute')} is read)"
    if match := _CONVERSION.search(line) or _REAL.search(line):
        return match.group("given"), "is used as a number"
    if _ISO.search(line):
        return None, "is used as a text (an ISO date)"
    if match := _INDEXED.search(line):
        return match.groupdict().get("given") or "str", "is read by key or position (an object or a list)"
    if match := _ITERATED.search(line):
        return match.group("given"), "is iterated over (a list or a text)"
    if match := _KEY.search(line):
        return "dict", f"is used as an object with the key '{match.group('key')}'"
    return None


def runtime_rules(error: str, arguments: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(parameter, rule) pairs read from a runtime error that names no parameter (``unsupported operand type(s) for
    *: 'dict' and 'float'``, ``'dict' object has no attribute 'split'``, ``float() argument must be ... not 'dict'``,
    ``KeyError: 'price'``): the argument it concerns is the call's only one, or its only one of the type the error
    names; the rule says what the code used that value as, and quotes the error, so it states what was observed and
    nothing beyond (the code *used* a number; whether a numeric text would also do, it did not say)."""
    lines = [line.strip() for line in error.splitlines() if line.strip()]
    if not lines or not arguments:
        return []
    read = _runtime_kind(lines[-1], {_python_type(value) for value in arguments.values()})
    if read is None:
        return []
    given, use = read
    if len(arguments) == 1:
        (name,) = arguments
    else:
        typed = [name for name, value in arguments.items() if given is not None and _python_type(value) == given]
        if len(typed) != 1:
            return []
        (name,) = typed
    if given is not None and _python_type(arguments[name]) != given:
        return []  # the error is about a value of the code's own, not the caller's
    said = _EXCEPTION.sub("", lines[-1])[:_RULE_LENGTH]
    return [(name, f"{use}: given {_article(given or _python_type(arguments[name]))} the runtime said \"{said}\"")]


def _article(python_type: str) -> str:
    return f"an {python_type}" if python_type[:1] in "aeiou" else f"a {python_type}"


def _number(arguments: Mapping[str, Any]) -> float | None:
    values = [v for v in arguments.values() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return float(values[0]) if len(values) == 1 == len(arguments) else None


def _text(arguments: Mapping[str, Any]) -> str | None:
    values = [v for v in arguments.values() if isinstance(v, str)]
    return values[0] if len(values) == 1 == len(arguments) else None


def _close(output: Any, expected: float) -> bool:
    return isinstance(output, (int, float)) and not isinstance(output, bool) and \
        math.isclose(float(output), expected, rel_tol=1e-3, abs_tol=1e-6)


def _on_number(check: Callable[[float, Any], bool]) -> Callable[[Mapping[str, Any], Any], bool | None]:
    def judged(arguments: Mapping[str, Any], output: Any) -> bool | None:
        x = _number(arguments)
        return None if x is None else check(x, output)
    return judged


def _on_text(check: Callable[[str, Any], bool]) -> Callable[[Mapping[str, Any], Any], bool | None]:
    def judged(arguments: Mapping[str, Any], output: Any) -> bool | None:
        text = _text(arguments)
        return None if text is None else check(text, output)
    return judged


def _numbers(arguments: Mapping[str, Any]) -> list[float] | None:
    """The numbers a call combined: its arguments when all are plain numbers (two or more), or its one argument's
    list of numbers."""
    values = list(arguments.values())
    if len(values) == 1 and isinstance(values[0], list):
        values = values[0]
    numeric = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return [float(v) for v in numeric] if len(numeric) == len(values) >= 2 else None


def _on_numbers(check: Callable[[list[float], Any], bool]) -> Callable[[Mapping[str, Any], Any], bool | None]:
    def judged(arguments: Mapping[str, Any], output: Any) -> bool | None:
        numbers = _numbers(arguments)
        return True if numbers is None else check(numbers, output)  # other inputs cannot refute it: not judged
    return judged


# Operations a description can name whose result code can check on a call that took one number (or one text, or
# several numbers: a sum, a product):
# a claim that no such working call bears out, where the tool had some, is invented. Only unmistakable phrasings.
_OPERATIONS: tuple[tuple[re.Pattern[str], Callable[[Mapping[str, Any], Any], bool | None]], ...] = (
    (re.compile(r"\bsquare roots?\b"), _on_number(lambda x, out: x >= 0 and _close(out, math.sqrt(x)))),
    (re.compile(r"\bsquared\b|\bthe square of\b|\bits square\b"), _on_number(lambda x, out: _close(out, x * x))),
    (re.compile(r"\bnegates?\b|\bnegative counterpart\b|\bthe negative of\b"),
     _on_number(lambda x, out: _close(out, -x))),
    (re.compile(r"\babsolute value\b"), _on_number(lambda x, out: _close(out, abs(x)))),
    (re.compile(r"\bfactorial\b"), _on_number(lambda x, out: x.is_integer() and 0 <= x <= 170
                                             and _close(out, float(math.factorial(int(x)))))),
    (re.compile(r"\be raised to\b|\bexponential of\b|\bthe exponential\b"),
     _on_number(lambda x, out: x < 700 and _close(out, math.exp(x)))),
    (re.compile(r"\bnatural logarithm\b|\bnatural log\b"), _on_number(lambda x, out: x > 0 and _close(out, math.log(x)))),
    (re.compile(r"\breciprocal\b|\bmultiplicative inverse\b"),
     _on_number(lambda x, out: x != 0 and _close(out, 1 / x))),
    (re.compile(r"\bcubed?\b(?! roots?\b| (?:metres?|meters?|feet|foot|inch(?:es)?|yards?|miles?|centimet|kilomet))"),
     _on_number(lambda x, out: _close(out, x ** 3))),
    (re.compile(r"\btwice\b|\bdoubles (?:it|the)\b"), _on_number(lambda x, out: _close(out, 2 * x))),
    (re.compile(r"\bhalf of\b|\bhalves\b"), _on_number(lambda x, out: _close(out, x / 2))),
    (re.compile(r"\buppercase\b|\bupper case\b"), _on_text(lambda t, out: out == t.upper())),
    (re.compile(r"\blowercase\b|\blower case\b"), _on_text(lambda t, out: out == t.lower())),
    (re.compile(r"\breverse[sd]?\b|\breverse order\b"), _on_text(lambda t, out: out == t[::-1])),
    (re.compile(r"\bits length\b|\blength of (?:the |a )?(?:input |given )?(?:string|text)\b|\bnumber of characters\b"),
     _on_text(lambda t, out: type(out) is int and out == len(t))),
    (re.compile(r"\btheir sum\b|\bthe sum of (?:the |its |two |all )?(?:numbers|integers|values|inputs|arguments|a and b)\b"
                r"|\badds (?:up )?(?:two|the two|them|the numbers|a and b)\b"),
     _on_numbers(lambda xs, out: _close(out, math.fsum(xs)))),
    (re.compile(r"\btheir product\b|\bmultiplies (?:two|the two|them|the numbers|a and b)\b"),
     _on_numbers(lambda xs, out: _close(out, math.prod(xs)))),
)


def _operation_unsupported(sentence: str, examples: Sequence[tuple[Mapping[str, Any], Any]]) -> str | None:
    for pattern, check in _OPERATIONS:
        named = pattern.search(sentence)
        if named is None:
            continue
        verdicts = [check(arguments, output) for arguments, output in examples]
        judged = [verdict for verdict in verdicts if verdict is not None]
        if examples and not any(judged):
            return f"says it computes the {named.group(0)}, which none of its working calls did"
    return None


def value_kind(value: Any) -> str:
    """The JSON kind of a value (numbers as one kind: an integer is a number, a number may be whole)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "other"


@dataclass
class Observed:
    """What a run saw one tool do: the evidence its learned sentences are judged against."""

    parameters: set[str] | None = None
    """Its known parameter names (shown, learned, or accepted by a working call); None: unknown."""
    input_kinds: dict[str, set[str]] = field(default_factory=dict)
    """Parameter name -> kinds of the values working calls gave it."""
    output_kinds: set[str] = field(default_factory=set)
    """Kinds of what working calls returned."""
    worked: int = 0
    """Calls that worked."""
    stated: set[str] = field(default_factory=set)
    """Sentences the tool's own errors support (:func:`rule_sentence`)."""
    tools: set[str] = field(default_factory=set)
    """Names of the tools of its set: a sentence that names one (``the `function_2` tool``) names no parameter."""
    rejected: set[str] = field(default_factory=set)
    """Argument names the tool refused as unexpected."""
    examples: list[tuple[Mapping[str, Any], Any]] = field(default_factory=list)
    """(arguments, output) of the first working calls: what an operation a sentence names is checked on."""

    def add(self, result: CallResult) -> None:
        if result.injected is not None:
            return
        if not result.ok:
            error = result.error or ""
            arguments = result.call.arguments if isinstance(result.call.arguments, dict) else {}
            known = (self.parameters or set()) | set(arguments)
            self.stated.update(rule_sentence(name, rule) for name, rule in error_rules(error, known, arguments))
            self.rejected.update(_UNEXPECTED.findall(error))
            return
        self.worked += 1
        arguments = result.call.arguments if isinstance(result.call.arguments, dict) else {}
        if len(self.examples) < MAX_EXAMPLES:
            self.examples.append((arguments, result.output))
        for name, value in arguments.items():
            self.input_kinds.setdefault(name, set()).add(value_kind(value))
            if self.parameters is not None:
                self.parameters.add(name)
        self.output_kinds.add(value_kind(result.output))


def observe(tools: Sequence[DocumentedTool], calls: Iterable[CallResult]) -> dict[str, Observed]:
    """What the calls showed of each tool, by name; a tool's interface is known where its docs show (or learned)
    a parameter schema."""
    names = {tool.name for tool in tools}
    seen = {tool.name: Observed({p.name for p in tool.parameters} if tool.parameters is not None else None,
                                tools=names)
            for tool in tools}
    for result in calls:
        if result.call.name in seen:
            seen[result.call.name].add(result)
    return seen


MAX_EXAMPLES = 8
"""Working calls kept per tool for checking the operations sentences name."""

_VALUES_IN_ERROR = re.compile(r"'[^']*'|\"[^\"]*\"|-?\d+(?:\.\d+)?")


def judged_calls(calls: Iterable[tuple[str, CallResult]]) -> Iterator[tuple[str, CallResult]]:
    """The calls of ``calls`` (in order) that show the judge something the ones before did not, per tool: its first
    :data:`MAX_EXAMPLES` working calls and each working call with new kinds of values in or out, and each failed call
    whose error has a new form (its quoted values and numbers aside). A pass that calls a thousand tools a thousand
    times each shows the judge little more than this; a run's calls are kept so, where they are kept for a resume on
    another machine."""
    seen: dict[tuple[str, str], set[Any]] = {}
    examples: dict[tuple[str, str], int] = {}
    for toolset, result in calls:
        if result.injected is not None:
            continue  # the judge reads no injected fault
        tool = (toolset, result.call.name)
        arguments = result.call.arguments if isinstance(result.call.arguments, dict) else {}
        if result.ok:
            shown: Any = ("worked", tuple(sorted((name, value_kind(value)) for name, value in arguments.items())),
                          value_kind(result.output))
            examples[tool] = examples.get(tool, 0) + 1
            new = examples[tool] <= MAX_EXAMPLES
        else:
            shown = ("failed", tuple(sorted(arguments)), _VALUES_IN_ERROR.sub("_", result.error or ""))
            new = False
        shown_before = seen.setdefault(tool, set())
        if new or shown not in shown_before:
            shown_before.add(shown)
            yield toolset, result


def _kinds_in(text: str) -> set[str]:
    return {kind for kind, pattern in _KIND_PATTERNS.items() if pattern.search(text)}


def _named_parameters(sentence: str) -> set[str]:
    names: set[str] = set()
    for pattern in _PARAMETER_REFERENCES:
        names.update(pattern.findall(sentence))
    return names


def why_unsupported(sentence: str, observed: Observed, *, parameter: str | None = None) -> str | None:
    """Why the observed calls contradict ``sentence`` (about a tool, or about one of its parameters' meaning
    when ``parameter`` is given), None when code finds nothing against it."""
    if sentence in observed.stated:
        return None
    refused = _NOT_PARAMETERS.fullmatch(sentence)
    if refused and set(refused.group(1).split(", ")) <= observed.rejected:
        return None
    not_for = _NOT_FOR.fullmatch(sentence)
    if not_for and not_for.group(1) in observed.tools:
        return None
    form = _CALL_FORM.fullmatch(sentence)
    if form and form.group(1) in observed.tools and observed.parameters is not None and \
            set(_CALL_ARGUMENT.findall(form.group(2))) <= observed.parameters:
        return None
    if observed.worked == 0:
        return "no call to the tool has worked"
    lowered = sentence.lower()
    if observed.parameters:
        unknown = sorted(name for name in _named_parameters(sentence)
                         if name not in observed.parameters and name not in observed.tools)
        if unknown:
            return f"names {unknown[0]!r}, not one of its parameters ({', '.join(sorted(observed.parameters))})"
    unnamed = lowered  # a tool named "twice" is named, not said to double
    for name in observed.tools:
        unnamed = re.sub(rf"\b{re.escape(name.lower())}\b", " ", unnamed)
    operation = _operation_unsupported(unnamed, observed.examples)
    if operation is not None:
        return operation
    if parameter is None:
        denied = _denied(lowered, observed)
        if denied is not None:
            return denied
    given = set().union(*observed.input_kinds.values()) if observed.input_kinds else set()
    if parameter is not None:
        given = observed.input_kinds.get(parameter, set())
        claimed = _kinds_in(lowered.split(" return")[0])
        if given and claimed and not claimed & given:
            return f"gives {parameter} a kind ({', '.join(sorted(claimed))}) no working call gave it"
        return None
    output = _OUTPUT_CUE.search(lowered)
    inputs_text, output_text = (lowered[: output.start()], lowered[output.end():]) if output else (lowered, "")
    claimed_output = _kinds_in(output_text)
    if claimed_output and observed.output_kinds and not claimed_output & observed.output_kinds:
        return f"says it returns {', '.join(sorted(claimed_output))}, but it returned " \
               f"{', '.join(sorted(observed.output_kinds))}"
    claimed_input = _kinds_in(inputs_text) if _INPUT_CUE.search(inputs_text) else set()
    if claimed_input and given and not claimed_input & given:
        return f"says it takes {', '.join(sorted(claimed_input))}, but working calls gave it " \
               f"{', '.join(sorted(given))}"
    return None


def _denied(sentence: str, observed: Observed) -> str | None:
    """Why a sentence that denies the tool any result or any parameter is false, None when it denies neither, only
    under a condition ("returns nothing if the list is empty"), or the calls do not contradict it."""
    if _CONDITION.search(sentence):
        return None
    returned = sorted({value_kind(output) for _, output in observed.examples if output not in (None, "", [], {})})
    if returned and _RETURNS_NOTHING.search(sentence):
        return f"says it returns nothing, but its calls returned {', '.join(returned)}"
    parameters = sorted(observed.parameters or set(observed.input_kinds))
    if parameters and _TAKES_NOTHING.search(sentence):
        return f"says it takes no parameters, but it has {', '.join(parameters)}"
    return None


def without_call_form(description: str) -> str:
    """``description`` without the sentences :func:`~otbench.modules.doc_sentences.call_form_sentence` and
    :func:`not_parameters_sentence` write: what a tool's doc says besides the form of a call (its starting words, what
    an editor wrote), which code stating the form again must keep."""
    return _STATED_FORM.sub("", description).strip()


def stated_call_form(description: str) -> list[str]:
    """The sentences :func:`~otbench.modules.doc_sentences.call_form_sentence` and :func:`not_parameters_sentence`
    wrote into ``description``, in order: code stating the same again leaves the doc as it is (moving them would
    change the doc, and every prompt that shows it, for nothing)."""
    return [match.group(0).strip() for match in _STATED_FORM.finditer(description)]


def not_parameters_sentence(names: Iterable[str]) -> str:
    """How learned docs state the argument names a tool refused as unexpected."""
    return f"Not parameters: {', '.join(names)} (the tool refused them)."


def not_for_sentence(request: str, call: str, reason: str) -> str:
    """How learned docs state, by code, that a tool's call did not fit the request it was made for
    (``request_values``, ``refused_requests``): the request's first words, the call, and why, as one sentence."""
    words = re.sub(r"[.!?\"]+(?=\s|$)|\"", "", request).split()
    excerpt = " ".join(words[:16]) + ("…" if len(words) > 16 else "")
    return f'Not for requests like "{excerpt}": called for one as {call}, {reason}.'


def unsupported(text: str, observed: Observed, *, parameter: str | None = None) -> list[tuple[str, str]]:
    """The sentences of ``text`` the observed calls contradict, each with the reason."""
    found = []
    for sentence in sentences(text):
        reason = why_unsupported(sentence, observed, parameter=parameter)
        if reason is not None:
            found.append((sentence, reason))
    return found


def supported_text(text: str, observed: Observed, *, parameter: str | None = None) -> str:
    """``text`` without the sentences the observed calls contradict."""
    dropped = {sentence for sentence, _ in unsupported(text, observed, parameter=parameter)}
    return " ".join(sentence for sentence in sentences(text) if sentence not in dropped)


@dataclass(frozen=True)
class InventedClaims:
    """``count`` learned sentences (of ``sentences`` new ones) state behaviour no observed call supports;
    ``quotes`` holds them with the reason, by ``toolset/tool``."""

    count: int
    sentences: int
    quotes: Mapping[str, list[dict[str, str]]] = field(default_factory=dict)

    def metrics(self) -> dict[str, float]:
        return {"invented_claims": float(self.count),
                "invented_claim_share": self.count / self.sentences if self.sentences else 0.0}


def _learned_texts(tool: DocumentedTool, before: DocumentedTool | None) -> list[tuple[str, str | None]]:
    """(sentence, parameter it describes or None) for every sentence of ``tool``'s docs not in ``before``'s."""
    known: set[str] = set()
    if before is not None:
        known.update(sentences(before.description))
        for text in before.parameter_descriptions.values():
            known.update(sentences(text))
    found: list[tuple[str, str | None]] = [(sentence, None) for sentence in sentences(tool.description)
                                           if sentence not in known]
    for name, text in tool.parameter_descriptions.items():
        found += [(sentence, name) for sentence in sentences(text) if sentence not in known]
    return found


def invented_claims(learned: Toolbox, start: Toolbox, calls: Iterable[tuple[str, CallResult]],
                    toolsets: Sequence[str] | None = None) -> InventedClaims:
    """The invented claims of ``learned`` (over ``toolsets``, default all) against the ``start`` docs and the
    ``(toolset, call result)`` pairs the run observed."""
    by_toolset: dict[str, list[CallResult]] = {}
    for toolset, result in calls:
        by_toolset.setdefault(toolset, []).append(result)
    count = total = 0
    quotes: dict[str, list[dict[str, str]]] = {}
    for toolset in toolsets if toolsets is not None else learned.toolset_ids():
        tools = learned.toolset(toolset)
        seen = observe(tools, by_toolset.get(toolset, []))
        for tool in tools:
            for sentence, parameter in _learned_texts(tool, start.get(toolset, tool.name)):
                total += 1
                reason = why_unsupported(sentence, seen[tool.name], parameter=parameter)
                if reason is not None:
                    count += 1
                    where = f" (parameter {parameter})" if parameter else ""
                    quotes.setdefault(f"{toolset}/{tool.name}", []).append(
                        {"sentence": sentence + where, "why": reason})
    return InventedClaims(count, total, quotes)
