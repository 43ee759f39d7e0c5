"""Coverage: every tool of the toolsets learned on gets evidence from its own calls, and a description from them.

Learning from the agent's attempts reaches only the tools those attempts call: on a pool of a thousand tools a
handful. Tool calls cost no tokens, so this pass makes the evidence itself, tool by tool:

1. **A working call, by experiment.** Each tool no call has worked on is called with values from the train
   requests (their numbers, quoted texts and literal-looking words: codes, dates, names) in the kind its errors
   point to, then simple probes (:func:`otbench.optimizers.experiments.candidate_arguments`), at most
   :data:`CALLS_PER_TOOL` calls. A tool whose parameters are not shown is probed first (its error names them).
2. **What it computes.** A tool that worked on one number is called again with that number doubled and tripled:
   where the results say so, code states the relation (``Returns 1.609344 times value.``), a true sentence about
   what it computes that no editor can get wrong.
3. **A request it answers.** What a tool is for is said in the words of the requests it answers, and no call on a
   request's values says which request: where a call can be judged on a train request (the environment's
   ``answers``, or playing it as a one-reply attempt), every tool's working call is given each request's values in
   its kinds, and a request it answered is kept (:data:`ANSWER_CALLS` calls a tool at most; a tool whose relation
   is known is predicted on every request and called only on those it answers). A request two tools answer says
   which of them it needs no more than a coincidence does: it is kept for neither.
4. **A description, in batches.** The editor describes :data:`TOOLS_PER_CALL` tools a call from their calls: what
   each computes or looks up, its units, scales and formats, what it returns. A tool that has a description already
   (advertised docs, a docstring) keeps what its calls do not contradict: the editor is asked to fill what is unsaid
   and correct what the calls contradict, and the sentences the calls contradict are dropped by code. Each doc
   closes, by code, with the call that worked and a request it answered.

The pass works within the learning budget (checked before each editor call; where it is spent, the tools left are
closed by code alone, which costs nothing) and reports its state after every batch, so a run interrupted half way
resumes with the tools it finished (:class:`CoverageState`).
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from otbench.core.calls import CallResult, ToolCall, read_worded_error
from otbench.core.trajectory import preview
from otbench.envs.base import Environment
from otbench.evals.invented import supported_text
from otbench.modules.editor import DocEditor, EditorExchange
from otbench.modules.tool_docs import DocumentedTool, Toolbox, tool_key
from otbench.optimizers.evidence import EvidenceBook, ToolEvidence, probe_toolset, render_call
from otbench.optimizers.experiments import WORKED, candidate_arguments, request_values
from otbench.optimizers.rivals import FixedReply

CALLS_PER_TOOL = 200
"""The most calls the pass makes to find a tool's working call (its relation's two extra calls aside): calls cost no
tokens, and a tool taking a country's code meets requests whose first code is a code system's name ("ISO")."""
ANSWER_CALLS = 1_000
"""The most calls (or played attempts) the pass makes to find a request a tool answers: calls cost no tokens (a pool
tool's, 0.05 ms), and a tool of one number meets a thousand requests of one number on the pool of 1,000. A known
relation is predicted on every request instead, and called only where the prediction answers."""
TOOLS_PER_CALL = 6
"""Tools described in one editor call: the role and task are paid once for all of them."""
RELATION = "Returns "
"""How a relation stated by code opens (so a later pass replaces it rather than adding another)."""
_ANSWERS_SOUGHT = 3
"""Requests answered sought a tool: one two tools answer is kept for neither, so a tool looks past it."""
_ANSWERED = "It answered: "
_CODE_SENTENCE = re.compile(rf" (?:{RELATION}-?\d[\d.]*(?:e[+-]\d+)? (?:times|whatever) |{WORKED}|{_ANSWERED})")
"""Where a sentence code wrote into a doc (a relation, a working call, a request answered) opens: not an editor's or a
starting doc's own "Returns the result in pounds.", which stays."""
_LITERAL = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b"                      # an ISO date
    r"|#[0-9A-Fa-f]{3,8}\b"                        # a colour
    r"|\b(?:\d{1,3}\.){3}\d{1,3}(?:/\d{1,2})?\b"   # an IP address or network
    r"|\b[A-Z][A-Za-z]+/[A-Za-z_/]+\b"             # a zone or a path (Europe/Paris)
    r"|\b[A-Z]{2,5}\b"                             # a code (CDG, FR, USD)
    r"|(?<=[a-z,] )[A-Z][^\W\d_A-Z]+(?: [A-Z][^\W\d_A-Z]+)?"   # a name in the sentence (Lyon, New York, Bhātpāra)
)


def request_literals(request: str) -> list[Any]:
    """A request's values as a caller would pass them: its numbers and quoted texts
    (:func:`~otbench.optimizers.experiments.request_values`), then the words that read as literal values rather than
    prose (dates, codes, colours, addresses, zones, names inside the sentence)."""
    values = request_values(request)
    for match in _LITERAL.finditer(request):
        text = match.group(0)
        if text not in values:
            values.append(text)
    return values


@dataclass
class CoverageState:
    """What the pass has done, kept in every checkpoint after it so a resumed run goes on where it stopped."""

    tried: list[str] = field(default_factory=list)
    """Tool keys whose experiments are finished (a working call found, or its calls spent)."""
    described: list[str] = field(default_factory=list)
    """Tool keys the editor described (or that were left as they were: nothing was known of them)."""
    finished: bool = False
    """Whether every tool has been through the pass."""
    editor_calls: int = 0
    sought: list[str] = field(default_factory=list)
    """Toolsets whose tools have been sought a request they answer (step 3)."""

    def to_dict(self) -> dict[str, Any]:
        return {"tried": list(self.tried), "described": list(self.described), "finished": self.finished,
                "editor_calls": self.editor_calls, "sought": list(self.sought)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CoverageState:
        return cls(list(data.get("tried", [])), list(data.get("described", [])), bool(data.get("finished")),
                   int(data.get("editor_calls", 0)), list(data.get("sought", [])))


@dataclass(frozen=True)
class Batch:
    """One batch's outcome, reported as it finishes."""

    tools: tuple[str, ...]
    """The tool keys it covered."""
    exchange: EditorExchange | None
    """The editor's call (None: no tool of the batch had anything to describe)."""
    changed: int
    """Tools whose docs changed."""


class Coverage:
    """The pass over every tool of ``toolsets`` (see the module's docstring)."""

    def __init__(self, env: Environment, editor: DocEditor, *, judge: bool, exhausted: Callable[[], bool],
                 tools_per_call: int | None = None) -> None:
        self.env = env
        self.editor = editor
        self.judge = judge
        self.exhausted = exhausted
        self.tools_per_call = tools_per_call or TOOLS_PER_CALL

    def toolsets(self, tasks: Sequence[Any]) -> list[str]:
        """The toolsets the pass covers: those of ``tasks``, in their order."""
        return list(dict.fromkeys(self.env.toolset_of(task) for task in tasks))

    def run(self, toolbox: Toolbox, tasks: Sequence[Any], book: EvidenceBook, state: CoverageState,
            report: Callable[[Batch], None]) -> CoverageState:
        """Cover every tool of the tasks' toolsets not yet covered, reporting each batch as it finishes."""
        for toolset in self.toolsets(tasks):
            requests = [(task, self.request_of(task)) for task in tasks if self.env.toolset_of(task) == toolset]
            tools = toolbox.toolset(toolset)
            names = {tool.name for tool in tools}
            if any(key not in state.tried for key in (tool_key(toolset, tool.name) for tool in tools)):
                book.add(toolset, [read_worded_error(r) for r in probe_toolset(self.env, toolbox, toolset)], names)
                book.teach(toolbox, toolset)
            for tool in tools:  # calls only, no tokens: all of them before any description
                key = tool_key(toolset, tool.name)
                if key not in state.tried:
                    self.experiment(toolset, tool, requests, book)
                    state.tried.append(key)
            if self.judge and toolset not in state.sought:
                self.seek_answers(toolbox, toolset, tools, requests, book)
                state.sought.append(toolset)
            pending = [tool for tool in tools if tool_key(toolset, tool.name) not in state.described]
            for start in range(0, len(pending), self.tools_per_call):
                if self.exhausted():  # no tokens left to describe the rest: code still states what their calls showed
                    for tool in pending[start:]:
                        apply_evidence(tool, "", book.of(toolset, tool.name))
                    return state
                report(self._describe(toolbox, toolset, pending[start:start + self.tools_per_call], book, state))
            book.state_rules(toolbox, toolset)  # what their errors said, by code: all that is known of the others
        state.finished = True
        return state

    def request_of(self, task: Any) -> str:
        """A task's request, as its attempt states it (a rollout with no call: the environment's own words)."""
        return str(getattr(task, "question", None) or getattr(task, "text", None) or "")

    # -- evidence ------------------------------------------------------------------------------------------------
    def _call(self, toolset: str, name: str, arguments: dict[str, Any], book: EvidenceBook) -> CallResult:
        result = read_worded_error(self.env.execute(toolset, ToolCall(name, arguments)))
        book.of(toolset, name).add(result)
        return result

    def experiment(self, toolset: str, tool: DocumentedTool, requests: list[tuple[Any, str]],
                    book: EvidenceBook) -> None:
        """Find a working call of ``tool`` (unless one is known), then what its results say it computes."""
        evidence = book.of(toolset, tool.name)
        working = next((example for example in evidence.examples), None)
        if working is None:
            found = self._search(toolset, tool, requests, book)
            working = [found[2], None] if found else None
        if working is None:
            return
        self._relation(toolset, tool.name, working[0] if isinstance(working[0], dict) else {}, book)

    def _search(self, toolset: str, tool: DocumentedTool, requests: list[tuple[Any, str]],
                book: EvidenceBook) -> tuple[Any, str, dict[str, Any]] | None:
        """Calls of ``tool`` with the requests' values until one works or :data:`CALLS_PER_TOOL` are spent; the task,
        request and arguments of the one that worked."""
        tried: list[dict[str, Any]] = []
        for task, request, arguments in self._candidates(tool, book.of(toolset, tool.name), requests):
            if arguments in tried:
                continue
            tried.append(arguments)
            if self._call(toolset, tool.name, arguments, book).ok:
                return task, request, arguments
            if len(tried) >= CALLS_PER_TOOL:
                break
        return None

    def _candidates(self, tool: DocumentedTool, evidence: ToolEvidence,
                    requests: list[tuple[Any, str]]) -> Iterator[tuple[Any, str, dict[str, Any]]]:
        """Argument sets to try, one request's best guess at a time, the requests in the tool's own order
        (:func:`_own_order`)."""
        ordered = [requests[index] for index in _own_order(tool, evidence, [request for _, request in requests])]
        fitting = [(task, request) for task, request in ordered if request_literals(request)]
        for task, request in fitting or ordered:
            values = request_literals(request)
            literal_request = " ".join(f'"{value}"' if isinstance(value, str) else str(value) for value in values)
            for guess, _ in candidate_arguments(tool, evidence, literal_request, []):
                for arguments in list(_filled(guess, values)) or [guess]:  # each value of a kind in its one place
                    yield task, request, arguments
                break

    def _relation(self, toolset: str, name: str, arguments: dict[str, Any], book: EvidenceBook) -> None:
        """Where a call worked on one number, call again with it doubled and tripled: what the results say of the
        relation is kept on the tool's evidence (:meth:`ToolEvidence.relation`)."""
        numeric = [key for key, value in arguments.items() if _is_real(value)]
        if len(numeric) != 1 or book.of(toolset, name).relation:
            return
        (parameter,) = numeric
        points = []
        for factor in (1, 2, 3):
            given = {**arguments, parameter: arguments[parameter] * factor}
            result = self._call(toolset, name, given, book) if factor > 1 else None
            output = result.output if result is not None and result.ok else None
            if factor == 1:
                output = next((out for args, out in book.of(toolset, name).examples if args == arguments), None)
            if not _is_real(output) or not _is_real(given[parameter]):
                return
            points.append((float(given[parameter]), float(output)))
        book.of(toolset, name).relation = relation_sentence(parameter, points)

    # -- requests answered ---------------------------------------------------------------------------------------
    def seek_answers(self, toolbox: Toolbox, toolset: str, tools: list[DocumentedTool],
                      requests: list[tuple[Any, str]], book: EvidenceBook) -> None:
        """Step 3 of the module's docstring: each tool with a working call and no request answered gets one, where a
        request answers to its call alone."""
        found: dict[int, list[CallResult]] = {}
        values = [request_literals(request) for _, request in requests]
        for tool in tools:
            evidence = book.of(toolset, tool.name)
            if evidence.answered or not evidence.examples or not isinstance(evidence.examples[0][0], dict):
                continue
            working = evidence.examples[0][0]
            order = sorted(_own_order(tool, evidence, [request for _, request in requests]),
                           key=lambda index: _surplus(working, values[index]))
            for index, result in self._answering(toolbox, toolset, tool.name, book,
                                                 [(index, requests[index][0], values[index]) for index in order]):
                found.setdefault(index, []).append(result)
        for index, results in sorted(found.items()):
            if len(results) == 1:  # two tools answer it: it says which one no more than a coincidence does
                evidence = book.of(toolset, results[0].call.name)
                if not evidence.answered:
                    evidence.add_outcome(requests[index][1], results[0], True)

    def _answering(self, toolbox: Toolbox, toolset: str, name: str, book: EvidenceBook,
                   requests: list[tuple[int, Any, list[Any]]]) -> Iterator[tuple[int, CallResult]]:
        """Of ``(index, task, its request's values)``, the requests ``name``'s working call answers given their values,
        the first :data:`_ANSWERS_SOUGHT`, each with the call that answered it: a call is made where the tool's line
        predicts the answer (every request is predicted) or, with no line, on each request in turn; :data:`ANSWER_CALLS`
        calls at most."""
        line = _line_of(book.of(toolset, name)) if self._answers is not None else None
        working = book.of(toolset, name).examples[0][0]
        spent = answered = 0
        for index, task, values in requests:
            for arguments in _filled(working, values):
                if line is not None:
                    parameter, slope, intercept = line
                    if not _is_real(arguments[parameter]):
                        continue  # a number beyond any float: the line predicts nothing of it
                    given = float(arguments[parameter])
                    if given == 0.0 and intercept == 0.0:
                        continue  # every tool of a line through 0 returns 0 for it: it says nothing of this one
                    if not self._answers_output(task, slope * given + intercept, within=_ROUNDED):
                        continue
                if spent >= ANSWER_CALLS:
                    return
                spent += 1
                call = ToolCall(name, arguments)
                if self._answers is None:  # played as the attempt's one reply: the task's metric judges it
                    played = self.env.rollout(FixedReply([call]), toolbox, task)
                    result = read_worded_error(played.steps[-1]) if played.steps else None
                    if result is None or not result.ok or not played.success:
                        continue
                else:
                    result = read_worded_error(self.env.execute(toolset, call))
                    if not result.ok or not self._answers_output(task, result.output):
                        continue
                book.of(toolset, name).add(result)
                yield index, result
                answered += 1
                break
            if answered >= _ANSWERS_SOUGHT:
                return

    @property
    def _answers(self) -> Callable[..., bool] | None:
        answers = getattr(self.env, "answers", None)
        return answers if callable(answers) else None

    def _answers_output(self, task: Any, output: Any, *, within: float = 0.0) -> bool:
        """Whether ``output`` is ``task``'s answer, by the environment's ``answers`` (``within``: for an output
        predicted rather than returned)."""
        return bool(self._answers is not None and self._answers(task, output, within=within))

    # -- description ---------------------------------------------------------------------------------------------
    def _describe(self, toolbox: Toolbox, toolset: str, batch: list[DocumentedTool], book: EvidenceBook,
                  state: CoverageState) -> Batch:
        """One editor call for the batch's tools a call worked on; the docs then closed by code."""
        known = [tool for tool in batch if book.of(toolset, tool.name).working]
        exchange = None
        changed = 0
        if known and not self.exhausted():
            facts = {tool.name: _fact_lines(book.of(toolset, tool.name)) for tool in known}
            exchange = self.editor.describe_batch(known, facts)
            state.editor_calls += 1
            names = [tool.name for tool in toolbox.toolset(toolset)]
            for tool in known:
                text = exchange.updates.get(tool.name, "")
                text = supported_text(text, book.of(toolset, tool.name).observed(tool, names)) if text else ""
                changed += apply_evidence(tool, text, book.of(toolset, tool.name))
        state.described.extend(tool_key(toolset, tool.name) for tool in batch
                               if tool not in known or exchange is not None)
        return Batch(tuple(tool_key(toolset, tool.name) for tool in batch), exchange, changed)


def _own_order(tool: DocumentedTool, evidence: ToolEvidence, requests: list[str]) -> list[int]:
    """The requests' indexes in the order ``tool`` tries them: first those that name its parameters (a ``country`` is
    sought in a request about a country), then the others from an offset of its own (a stable digest of its name), so
    the tools of one pool do not all try the same requests first."""
    if not requests:
        return []
    offset = int(hashlib.sha256(tool.name.encode()).hexdigest(), 16) % len(requests)
    order = list(range(offset, len(requests))) + list(range(offset))
    words = _name_words([p.name for p in tool.parameters or ()] or list(evidence.required or []))
    return sorted(order, key=lambda index: -_mentions(requests[index], words))


def _name_words(names: list[str]) -> set[str]:
    """The words of parameter names (``source_timezone`` -> source, timezone; ``cityName`` -> city, name), those long
    enough to say something."""
    words = set()
    for name in names:
        for part in re.split(r"[_\W]+|(?<=[a-z])(?=[A-Z])", name):
            if len(part) >= 3:
                words.add(part.lower())
    return words


def _mentions(request: str, words: set[str]) -> int:
    """How many of ``words`` a request says (a word or its first four letters: ``country`` in "countries")."""
    said = request.lower()
    return sum(word in said or (len(word) > 4 and word[:4] in said) for word in words)


def _fact_lines(evidence: ToolEvidence) -> list[str]:
    """What the editor is told of one tool: its calls as made, the relation code read, a request it answered."""
    lines = [f"answered the request {line}" for line in evidence.answered[:1]]  # first: what the tool is for
    lines += [f"worked: {line}" for line in evidence.worked] + [f"failed: {line}" for line in evidence.failed[:1]]
    if evidence.relation:
        lines.append(f"read by code from its results: {evidence.relation}")
    return lines


def apply_evidence(tool: DocumentedTool, description: str, evidence: ToolEvidence) -> int:
    """Set the tool's description: the editor's (or, where it wrote nothing the calls support, the one it had), opened
    by code with a request it answered (the words it is searched by, and a call an agent can copy: a search index
    reads a doc's first words most) and closed with the relation and, where no request was answered, the call that
    worked. Returns 1 if it changed."""
    opening, closing = _evidence_sentences(tool, evidence)
    kept = description or tool.description
    kept = kept.removeprefix(opening) if opening else kept
    if found := _CODE_SENTENCE.search(kept):  # a sentence code wrote before: those close a doc, so the rest goes too
        kept = kept[:found.start()]
    closing = [sentence for sentence in closing if sentence not in kept]
    return _set_description(tool, " ".join(part for part in (opening, kept.strip(), *closing) if part))


def keep_evidence(tool: DocumentedTool, evidence: ToolEvidence) -> int:
    """Give a doc an optimizer rewrote after the pass the sentences the pass wrote by code from the tool's calls, laid
    out as the pass laid them (``keep_evidence``): a request it answered opens it, the relation and the call that
    worked close it. An optimizer that rewrites a doc in its own words tends to drop them or move them to the end, and
    with them the words the tool is searched by; they are facts its calls showed, which no later evidence touched.
    The optimizer's words stay as written between them (a sentence of its own that repeats one of them, as an
    ``Example:`` citing the same request, is dropped for the one the pass placed). Returns 1 if it changed."""
    opening, closing = _evidence_sentences(tool, evidence)
    text = tool.description
    if text.startswith(opening) and all(_has(text, sentence) for sentence in closing):
        return 0  # as the pass left it, or rewritten around its sentences
    rest = text
    for sentence in (opening, *(f"Example: {line}." for line in evidence.answered[:1]), *closing):
        rest = rest.replace(sentence, " ") if sentence else rest
    rest = re.sub(r"[ \t]{2,}", " ", rest).strip()
    closing = [sentence for sentence in closing if not _has(rest, sentence)]
    return _set_description(tool, " ".join(part for part in (opening, rest, *closing) if part))


def _has(text: str, sentence: str) -> bool:
    """Whether a doc says one of the pass's sentences: as written, or, for the call that worked, any call that worked
    (a checkpoint may keep its arguments in another order than the doc shows them)."""
    return sentence in text or (sentence.startswith(WORKED) and WORKED in text)


def _evidence_sentences(tool: DocumentedTool, evidence: ToolEvidence) -> tuple[str, list[str]]:
    """The sentences the pass writes by code into ``tool``'s doc: the one that opens it (a request it answered, "" if
    none) and those that close it (the relation; the call that worked, where no request was answered)."""
    opening = f"{_ANSWERED}{evidence.answered[0]}." if evidence.answered else ""
    closing = [evidence.relation] if evidence.relation else []
    if evidence.examples and not opening:
        arguments, output = evidence.examples[0]
        closing.append(f"{WORKED}{render_call(ToolCall(tool.name, arguments))} returned {preview(output, 120)}.")
    return opening, closing


def _set_description(tool: DocumentedTool, text: str) -> int:
    """Set ``tool``'s description to ``text``; 1 if that changed it."""
    if text == tool.description:
        return 0
    tool.with_docs(description=text)
    return 1


def fitted_line(points: list[tuple[float, float]]) -> tuple[float, float] | None:
    """The ``(slope, intercept)`` of the line three ``(input, result)`` points lie on (a constant: slope 0; an intercept
    within rounding of 0: 0), None where they lie on none or where the inputs are not three distinct values (a
    tool's calls on the same input twice say nothing of its slope)."""
    (x1, y1), (x2, y2), (x3, y3) = points
    if len({x1, x2, x3}) < 3:
        return None
    if math.isclose(y1, y2, rel_tol=1e-12) and math.isclose(y2, y3, rel_tol=1e-12):
        return 0.0, y1
    slope = (y2 - y1) / (x2 - x1)
    intercept = y1 - slope * x1
    if not math.isclose(y3, slope * x3 + intercept, rel_tol=_ROUNDED, abs_tol=1e-9):
        return None  # within what a tool's rounding of its results leaves
    if math.isclose(intercept, 0.0, abs_tol=_ROUNDED * max(abs(y1), abs(y2), abs(y3), 1e-9)):
        return slope, 0.0
    return slope, intercept


def relation_sentence(parameter: str, points: list[tuple[float, float]]) -> str:
    """What three ``(input, result)`` points of a one-number call say the tool computes, as a sentence: a constant
    factor (``Returns 1.609344 times value.``), a line (``Returns 1.8 times value plus 32.``), a constant, or
    nothing ("") where they fit none of these."""
    line = fitted_line(points)
    if line is None:
        return ""
    slope, intercept = line
    if slope == 0.0:
        shown = ", ".join(_shown(x) for x, _ in points)
        return f"{RELATION}{_shown(intercept)} whatever {parameter} is (for {parameter} = {shown})."
    if intercept == 0.0:
        return f"{RELATION}{_shown(slope)} times {parameter}."
    sign = "plus" if intercept > 0 else "minus"
    return f"{RELATION}{_shown(slope)} times {parameter} {sign} {_shown(abs(intercept))}."


def _line_of(evidence: ToolEvidence) -> tuple[str, float, float] | None:
    """The ``(parameter, slope, intercept)`` of the line a tool's working calls on one number lie on (its relation's
    calls, kept in its examples), None where they are not three such calls on one line of nonzero slope."""
    points: dict[float, float] = {}
    parameter = None
    for arguments, output in evidence.examples:
        numeric = [name for name, value in arguments.items() if _is_real(value)] if isinstance(arguments, dict) else []
        if len(numeric) != 1 or not _is_real(output) or parameter not in (None, numeric[0]):
            continue
        parameter = numeric[0]
        points.setdefault(float(arguments[parameter]), float(output))
    line = fitted_line(list(points.items())[:3]) if len(points) >= 3 and parameter is not None else None
    return (parameter, *line) if line is not None and parameter is not None and line[0] != 0.0 else None


def _surplus(working: dict[str, Any], values: list[Any]) -> float:
    """How many more numbers and texts a request has than a working call has places for (none short: infinite). A
    request asking for what a tool computes gives it all its values and few others."""
    extra = [sum(map(kind, values)) - sum(map(kind, working.values())) for kind in (_is_number, _is_text)]
    return math.inf if min(extra) < 0 else float(sum(extra))


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


def _filled(working: dict[str, Any], values: list[Any]) -> Iterator[dict[str, Any]]:
    """A working call's arguments with a request's values in their places, kind for kind (its numbers in the number
    places, its texts in the text places, in order; a kind's one place given each of the request's values of that kind
    in turn: "the airport nearest to Mombasa" holds the code system's name "IATA" too). Nothing where the request has
    too few values."""
    choices = []
    for kind in (_is_number, _is_text):
        places = [name for name, value in working.items() if kind(value)]
        given = list(dict.fromkeys(value for value in values if kind(value)))
        if len(given) < len(places):
            return
        choices.append([dict(zip(places, given))] if len(places) != 1 else [{places[0]: value} for value in given])
    if any(choices[0][0]) or any(choices[1][0]):
        for numbers, texts in itertools.product(*choices):
            yield {**working, **numbers, **texts}


_ROUNDED = 2e-3
"""How far a result may be from the line and still lie on it: tools round what they return."""


def _shown(number: float) -> str:
    return f"{number:.7g}"


def _is_number(value: Any) -> TypeGuard[float]:
    """A number of a request or a call, integers of any size among them (a factorial's answer outgrows a float)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return isinstance(value, int) or math.isfinite(value)


def _is_real(value: Any) -> TypeGuard[float]:
    """A number a line can be fitted through: one a float holds."""
    if not _is_number(value):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False
