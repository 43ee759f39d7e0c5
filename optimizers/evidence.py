"""What calls revealed about each tool, read by code, so a small editor writes from facts.

A 1.5B editor does not reliably infer a parameter list from a transcript, but the tools state it
themselves: a call with no arguments fails with Python's ``missing 2 required positional
arguments: 'a' and 'b'``, an unknown name with ``got an unexpected keyword argument 'x'``, and a
call that works shows which names and value types are accepted and what comes back. This module
makes those calls (:func:`probe_toolset`: one call with no arguments per tool whose parameters the
docs do not show, as any caller of a validating API may do) and reads every result into a
:class:`ToolEvidence`: short fact lines for the editor, and a parameter schema an optimizer may
show as learned docs. It reads only what the tools answered: no gold docs, calls or outcomes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any

from otbench.core.calls import CallResult, ToolCall
from otbench.core.trajectory import json_text, preview
from otbench.envs.base import Environment
from otbench.evals.invented import (
    MAX_EXAMPLES,
    Observed,
    error_rules,
    not_parameters_sentence,
    rule_type,
    stated_call_form,
    value_kind,
    without_call_form,
)
from otbench.modules.doc_sentences import call_form_sentence, rule_sentence
from otbench.modules.tool_docs import DocumentedTool, ParameterSpec, Toolbox
from otbench.optimizers.rivals import JudgedCall

_MISSING = re.compile(r"missing \d+ required (?:positional |keyword-only )?arguments?: (.+)$")
_UNEXPECTED = re.compile(r"got an unexpected (?:keyword )?argument '([^']+)'")
# pydantic's validation errors, as FastMCP servers and many APIs answer: "timezone\n  Field required [type=missing, ..."
_PYDANTIC_MISSING = re.compile(r"(?:^|\s)([A-Za-z_][A-Za-z0-9_]*)\s+Field required \[type=missing")
_PYDANTIC_EXTRA = re.compile(r"(?:^|\s)([A-Za-z_][A-Za-z0-9_]*)\s+(?:Unexpected keyword argument|Extra inputs are not "
                             r"permitted) \[type=(?:unexpected_keyword_argument|extra_forbidden)")
_QUOTED = re.compile(r"'([^']+)'")
_MAX_EXAMPLES = 3  # calls shown per kind (worked, failed): enough to generalise from, a short prompt

_TYPE_NAMES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"),
               (dict, "object"))


def json_type(value: Any) -> str:
    """The JSON-schema type of an argument value (``bool`` before ``int``: True is an int in Python)."""
    return next((name for kind, name in _TYPE_NAMES if isinstance(value, kind)), "any")


def read_error(error: str) -> tuple[list[str], str | None]:
    """The parameter names a call error reports as missing, and the name it rejected (if any): Python's own words
    for a function's call, or pydantic's for a validated one."""
    missing = _MISSING.search(error)
    unexpected = _UNEXPECTED.search(error) or _PYDANTIC_EXTRA.search(error)
    names = _QUOTED.findall(missing.group(1)) if missing else list(dict.fromkeys(_PYDANTIC_MISSING.findall(error)))
    return names, unexpected.group(1) if unexpected else None


def render_call(call: ToolCall) -> str:
    arguments = ", ".join(f"{name}={json.dumps(value, ensure_ascii=False, default=str)}"
                          for name, value in call.arguments.items()) if isinstance(call.arguments, dict) else ""
    return f"{call.name}({arguments})"


def answered_line(request: str, result: CallResult) -> str:
    """A request and the call made for it, with what it returned: ``"request" -> f(a=1) returned 2``."""
    return (f"{json.dumps(request[:200], ensure_ascii=False)} -> {render_call(result.call)} "
            f"returned {preview(result.output, 120)}")


@dataclass
class ToolEvidence:
    """Everything observed of one tool's interface and behaviour."""

    required: list[str] | None = None
    """Parameter names the tool reported as required (None: it has not said)."""
    accepted: dict[str, str] = field(default_factory=dict)
    """Argument names of calls that worked, with the JSON type of the value given."""
    rejected: list[str] = field(default_factory=list)
    """Argument names the tool refused as unexpected."""
    worked: list[str] = field(default_factory=list)
    """``f(a=1) returned 2`` lines, the first few."""
    failed: list[str] = field(default_factory=list)
    """``f(x=1) failed: ...`` lines, the first few."""
    calls: int = 0
    """Calls seen: a tool whose count grew has new evidence."""
    working: int = 0
    """Calls that worked (a fault injected into a call says nothing of the tool: not counted)."""
    input_kinds: dict[str, list[str]] = field(default_factory=dict)
    """Parameter name -> the kinds of value (``number``, ``string``...) working calls gave it."""
    output_kinds: list[str] = field(default_factory=list)
    """The kinds of what working calls returned."""
    answered: list[str] = field(default_factory=list)
    """``"request" -> f(a=1) returned 2`` lines of attempts that answered their request with this call, the first few."""
    requests_tried: int = 0
    """Requests an attempt (or a judged repeat) called this tool for, with a known outcome."""
    requests_answered: int = 0
    """Of those, the ones answered."""
    rules: dict[str, list[str]] = field(default_factory=dict)
    """Parameter name -> rules the tool's own errors stated for it ("must be one of 1d|1wk")."""
    examples: list[list[Any]] = field(default_factory=list)
    """[arguments, output] of the first working calls, as JSON data: what a claimed operation is checked on."""
    experiments: list[list[Any]] = field(default_factory=list)
    """[arguments, what came back (a preview)] of the working calls the learner made itself where no call had worked
    (:mod:`otbench.optimizers.experiments`), the first few."""
    corrections: list[list[str]] = field(default_factory=list)
    """[request, the call tried on it and how it failed (as a doc states it), the call that answered the request instead,
    what it returned]
    of the corrections the editor proposed and the task's metric confirmed (:mod:`otbench.optimizers.repairs`), the first few."""
    relation: str = ""
    """What calls on one number doubled and tripled showed the tool computes, stated by code (``Returns 1.609344
    times value.``; :mod:`otbench.optimizers.coverage`), "" where unknown."""
    runtime_errors: bool = True
    """Whether runtime errors that name no parameter are read for the type they show (``runtime_errors``)."""

    def add(self, result: CallResult) -> None:
        self.calls += 1
        arguments = result.call.arguments if isinstance(result.call.arguments, dict) else {}
        line = render_call(result.call)
        if result.ok:
            if result.injected is None:
                self.working += 1
                if len(self.examples) < MAX_EXAMPLES:
                    self.examples.append([json.loads(json_text(part)) for part in (arguments, result.output)])
                for name, value in arguments.items():
                    _note(self.input_kinds.setdefault(name, []), value_kind(value))
                _note(self.output_kinds, value_kind(result.output))
            if not arguments and self.required is None:
                self.required = []  # a call with no arguments worked: nothing is required
            for name, value in arguments.items():
                self.accepted[name] = json_type(value)
            if len(self.worked) < _MAX_EXAMPLES and line not in (w.split(" returned ")[0] for w in self.worked):
                self.worked.append(f"{line} returned {preview(result.output, 160)}")
            return
        if result.injected is None:
            for name, rule in error_rules(result.error or "", {*(self.required or []), *self.accepted, *arguments},
                                          arguments, runtime=self.runtime_errors):
                rules = self.rules.setdefault(name, [])
                if len(rules) < _MAX_EXAMPLES:
                    _note(rules, rule)
        missing, unexpected = read_error(result.error or "")
        if missing:  # Python names every missing required parameter; with no arguments given, that is all of them
            known = [] if not arguments else list(self.required or [])
            self.required = known + [name for name in missing if name not in known]
        if unexpected and unexpected not in self.rejected:
            self.rejected.append(unexpected)
        if len(self.failed) < _MAX_EXAMPLES:
            self.failed.append(f"{line} failed: {(result.error or '')[:160]}")

    def add_outcome(self, request: str, result: CallResult, answered: bool) -> None:
        """A working call made (or repeated) for ``request``, and whether the attempt then answered it."""
        self.requests_tried += 1
        self.requests_answered += answered
        line = answered_line(request, result)
        if answered and len(self.answered) < _MAX_EXAMPLES and line not in self.answered:
            self.answered.append(line)  # the same request answered by the same call again is no new example

    def outcome_lines(self) -> list[str]:
        """What the judged calls showed: how many requests this tool answered, and which. The requests it did not
        answer are left out: a small editor reads "did not answer: Convert 5 km to miles" as what the tool does."""
        if not self.requests_tried:
            return []
        lines = [f"answered {self.requests_answered} of the {self.requests_tried} requests it was tried on"]
        return lines + [f"answered the request {line}" for line in self.answered]

    def example(self, limit: int = 2) -> str:
        """Requests this tool answered, with the call that answered each, as sentences for its doc ("" if none)."""
        return " ".join(f"Example: {line}." for line in self.answered[:limit])

    def observed(self, tool: DocumentedTool, tools: Iterable[str] = ()) -> Observed:
        """This evidence as the claims judge reads it (:mod:`otbench.evals.invented`), with the interface ``tool`` shows;
        ``tools`` names the other tools of its set."""
        known = {p.name for p in tool.parameters} if tool.parameters is not None else None
        if known is not None:
            known |= set(self.accepted)
        stated = {rule_sentence(name, rule) for name, rules in self.rules.items() for rule in rules}
        return Observed(known, {name: set(kinds) for name, kinds in self.input_kinds.items()},
                        set(self.output_kinds), self.working, stated=stated, rejected=set(self.rejected),
                        tools={tool.name, *tools}, examples=[(arguments, output) for arguments, output in self.examples])

    def parameters(self) -> list[ParameterSpec] | None:
        """The schema these facts support: required names first, then other accepted names; None if unknown.

        A tool that worked with no arguments and was never seen taking any gets none: it may still
        take optional ones, and an empty schema would tell the agent it takes nothing.
        """
        if not self.required and not self.accepted:
            return None
        required = list(self.required or [])
        optional = [name for name in self.accepted if name not in required and name not in self.rejected]
        return ([ParameterSpec(name, self.shown_type(name), True) for name in required]
                + [ParameterSpec(name, self.shown_type(name), False) for name in optional])

    def stated_type(self, name: str) -> str | None:
        """The type the tool's errors said a parameter must be (or the code used it as), None where they named none."""
        return next((kind for rule in self.rules.get(name, []) if (kind := rule_type(rule))), None)

    def type_of(self, name: str) -> str:
        """A parameter's type: what the tool's errors said it must be, else what working calls gave it (an error's
        "must be a number" says more than a working call's integer)."""
        return self.stated_type(name) or self.accepted.get(name, "any")

    def shown_type(self, name: str) -> str:
        """The type shown for a parameter whose type the setting hides or the code never declared: :meth:`type_of`,
        but a whole number that worked gives ``number`` (it shows that a number works, not that a fraction fails)
        unless the errors said integer."""
        kind = self.type_of(name)
        return "number" if kind == "integer" and self.stated_type(name) != "integer" else kind

    def facts(self) -> list[str]:
        """Short statements for the editor, each backed by a call the tool answered."""
        lines = []
        if self.required is not None:
            lines.append("required parameters: " + (", ".join(self.required) or "none")
                         + " (the tool's own error message for a call without them)")
        optional = [name for name in self.accepted if name not in (self.required or [])]
        if optional:
            lines.append("also accepted: " + ", ".join(optional))
        typed = [f"{name}: {kind}" for name, kind in self.accepted.items()]
        if typed:
            lines.append("value types that worked: " + ", ".join(typed))
        if self.rejected:
            lines.append("not parameters (rejected as unexpected): " + ", ".join(self.rejected))
        lines += [f"its errors said {name} {rule}" for name, rules in self.rules.items() for rule in rules]
        return lines + self.call_lines()

    def call_lines(self) -> list[str]:
        """The calls seen, as they happened, with nothing read from them."""
        return [f"worked: {line}" for line in self.worked] + [f"failed: {line}" for line in self.failed]

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolEvidence:
        """Evidence from a checkpoint (what a field no longer kept held is left out)."""
        known = {f.name for f in fields(cls)}
        return cls(**{name: value for name, value in data.items() if name in known})


def _note(kinds: list[str], kind: str) -> None:
    if kind not in kinds:
        kinds.append(kind)


class EvidenceBook:
    """Evidence for every tool of a run, keyed by toolset and tool name; ``runtime_errors`` says whether runtime
    errors naming no parameter are read for a type (:class:`ToolEvidence`)."""

    def __init__(self, *, runtime_errors: bool = True) -> None:
        self.tools: dict[str, dict[str, ToolEvidence]] = {}
        self.runtime_errors = runtime_errors

    def of(self, toolset: str, tool: str) -> ToolEvidence:
        return self.tools.setdefault(toolset, {}).setdefault(tool, ToolEvidence(runtime_errors=self.runtime_errors))

    def add(self, toolset: str, results: Iterable[CallResult], known: set[str]) -> None:
        """Record results of calls to tools named in ``known`` (calls to other names say nothing of a tool)."""
        for result in results:
            if result.call.name in known:
                self.of(toolset, result.call.name).add(result)

    def add_judged(self, toolset: str, judged: Iterable[JudgedCall], known: set[str]) -> None:
        """Record judged calls: the call itself where it is new evidence (a repeat on a rival), and its outcome."""
        for item in judged:
            if item.result.call.name in known:
                evidence = self.of(toolset, item.result.call.name)
                if item.repeat:
                    evidence.add(item.result)
                evidence.add_outcome(item.request, item.result, item.answered)

    def teach(self, toolbox: Toolbox, toolset: str) -> int:
        """Show each tool of ``toolset`` the schema its evidence supports, where the setting shows none, and the type
        its evidence supports for each shown parameter that has none (an unannotated Python parameter); returns how
        many tools' schemas changed."""
        changed = 0
        for tool in toolbox.toolset(toolset):
            evidence = self.tools.get(toolset, {}).get(tool.name)
            if evidence is None:
                continue
            learned = evidence.parameters()
            schema = learned is not None and tool.learn_parameters(learned)
            changed += schema or tool.learn_types({p.name: evidence.shown_type(p.name) for p in tool.parameters or ()})
        return changed

    def state_rules(self, toolbox: Toolbox, toolset: str) -> int:
        """Write what the tools' own errors said into their docs: each rule in its parameter's description (where
        the schema shows that parameter and the description lacks it), and, for a tool no call has worked on whose
        schema was learned or that refused argument names, the form of a call and the names it refused as its
        description, after what the description already says (its starting words are kept; a form stated before is
        replaced) (a shown schema alone says the form already; what the tool refused is news). Returns how many
        tools' docs changed."""
        changed = 0
        for tool in toolbox.toolset(toolset):
            evidence = self.tools.get(toolset, {}).get(tool.name)
            if evidence is None:
                continue
            before = tool.to_dict()
            shown = {p.name for p in tool.parameters or ()}
            current = tool.parameter_descriptions
            additions = {}
            for name, rules in evidence.rules.items():
                missing = [rule_sentence(name, rule) for rule in rules if rule_sentence(name, rule) not in current[name]] \
                    if name in shown else []
                if missing:
                    said = current[name].strip()
                    said = f"{said}." if said and said[-1] not in ".!?" else said  # a sentence of its own each
                    additions[name] = " ".join([said, *missing]).strip()
            description = None
            refused = [name for name in evidence.rejected if name not in shown]
            if (tool.parameters_learned or refused) and not evidence.working:  # nothing else is known of it
                stated = [call_form_sentence(tool.name, [p.name for p in tool.parameters or () if p.required]),
                          *([not_parameters_sentence(refused)] if refused else [])]
                if stated_call_form(tool.description) != stated:
                    description = " ".join(sentence for sentence in (without_call_form(tool.description), *stated)
                                           if sentence)
            tool.with_docs(description=description, parameter_descriptions=additions)
            changed += tool.to_dict() != before
        return changed

    def to_dict(self) -> dict[str, Any]:
        return {toolset: {name: evidence.to_dict() for name, evidence in tools.items()}
                for toolset, tools in self.tools.items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, runtime_errors: bool = True) -> EvidenceBook:
        book = cls(runtime_errors=runtime_errors)
        book.tools = {toolset: {name: ToolEvidence.from_dict(e) for name, e in tools.items()}
                      for toolset, tools in data.items()}
        return book


def needs_probe(tool: DocumentedTool) -> bool:
    """A tool whose docs show no parameters: one call with none makes it list the required ones."""
    return tool.parameters is None or tool.parameters_learned


def probe_toolset(env: Environment, toolbox: Toolbox, toolset: str) -> list[CallResult]:
    """Call each tool of ``toolset`` whose parameters are not shown, once, with no arguments."""
    return [env.execute(toolset, ToolCall(tool.name, {})) for tool in toolbox.toolset(toolset) if needs_probe(tool)]
