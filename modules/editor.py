"""The editor: an LLM that reads what happened when tools were used and rewrites their docs.

Three jobs, as learning docs from use needs them: revise docs from one attempt (online mode), propose docs
from a mini-batch of attempts with their outcome signal, and merge the batch proposals into a
consensus (offline mode). Replies are JSON constrained by a schema and parsed as untrusted data.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import dspy

from otbench.core.trajectory import Trajectory, preview
from otbench.modules.agent import one_call_schema
from otbench.modules.lm_output import ask_json, parse_json_object, reply_text
from otbench.modules.tool_docs import DocumentedTool

EDITOR_ROLE = """\
You maintain the documentation of tools that an AI assistant calls. You study how the tools \
actually behaved when they were used and write documentation that lets the next caller use \
each tool correctly on the first try. State only what the evidence shows or clearly implies."""

REVISE_TASK = """\
Update the documentation of the tools called above where it is missing, wrong or incomplete.
- Only tools that were called above may be updated; leave out tools that were not called.
- Leave out a tool whose documentation is already accurate: it was called the way it documents \
and its result is what the request needed.
- A tool with an empty description is never accurate: if it was called, write its description \
from what the call showed, even if the call failed.
- Error messages are evidence: they reveal parameter names, types and which are required. When \
an error says a parameter name is not accepted, write that down so the next call tries another.
- Each new description is 1-2 sentences saying what the tool does, each input (name, type, \
meaning), what it returns, and how to call it.
- If nothing needs to change, reply with an empty list of updates."""

BATCH_TASK = """\
Compare how the tools behaved across these attempts and which tool choices led to good or bad \
outcomes. For each tool you have evidence about, write a description (1-3 sentences) of what it \
does, when it is the best choice and when to avoid it compared with the other tools, citing the \
evidence (for example how often it helped or failed, and in which situations)."""

MERGE_TASK = """\
Each candidate above was written from a different batch of attempts, so single candidates may \
be noisy. For every tool with at least one candidate, write one final description (1-3 \
sentences) that keeps the behaviours several batches agree on and drops claims that only one \
batch makes or that others contradict. Keep the comparisons between tools that hold up."""

DESCRIBE_TASK = """\
Write the documentation of one tool from the facts below. The facts were read by code from the \
tool's own answers, so trust them: its parameters are exactly the required and accepted names \
listed. Say in 1-2 sentences what the tool does and returns, judging from its parameter names, \
the requests it was called for and the results it returned; then give each parameter's meaning \
and expected type in a few words."""

COMPARE_TASK = """\
Write the documentation of one tool from a set of similar tools, using the facts below. The facts \
were counted by code over many attempts by an agent, so trust them. In 1-3 sentences say what \
the tool does and what its results are, naming the sources they came from when listed (what kind \
of pages those sites hold), and in which situations it is the best choice and in which to avoid \
it, naming those situations exactly as the facts do. Then give each parameter's meaning and \
expected type in a few words."""

DESCRIBE_BATCH_TASK = """\
Write the documentation of each tool below from its calls: the values it was given and what it returned. \
For each tool write one or two sentences saying what it computes or looks up, in which units, scale or format \
its inputs and its result are, and what it returns; where a request it answered is listed, say what such \
requests ask for. Where a tool has a current description, keep what its calls do not contradict, add what it \
leaves unsaid (units, scales, formats, what is returned) and correct what the calls contradict."""

REPAIR_TASK = """\
The calls tried on the request below did not answer it: a tool refused them, or what they returned was not the \
answer. The calls that answered other requests show which tool answers such a request and the form it takes. Write \
the one call that answers this request: the right tool, given the request's own values, written as the calls that \
answered write theirs."""

SHORT_REPLY = ("Be brief: one sentence for the tool, a few words for each parameter. Code adds the types, rules "
               "and a working call to the doc by itself.")
"""Appended to a describing task when replies are asked to be short: the generated tokens are the slowest a small
local model makes, and a small agent reads a short doc as well."""

SHORT_LIMITS = (200, 60)
"""The longest description and parameter meaning, in characters, a short reply may give (:data:`SHORT_REPLY`)."""

FACTS_HEADING = "Facts read by code from the tools' answers (trust them):"

_BATCH_DESCRIPTION_CHARS = 240
"""The longest description a batch reply gives a tool: a whole reply at this length still fits the batch's token
bound (about 90 a tool), so none is cut off unreadable (at 400 a tool, a reply copying its prompt was, and the batch
learned nothing)."""
_BATCH_LABELS = ("Tool:", "Current description:", "Parameters:", "- ")
"""How the lines of a batch prompt's tool blocks open: a description's line opening so is the prompt copied back."""

_REPEATED = ("Your first answer was a call already tried above, which will not answer it again: write the call "
             "another way, as the calls that answered write theirs.")
_REPAIR_REPLY = 'Reply with JSON only: {"name": "<tool name>", "arguments": {"<parameter>": <value>}}'

_REPLY = 'Reply with JSON only: {"updates": [{"name": "<tool name>", "description": "<new description>"}]}'


def updates_schema(tool_names: list[str], *, required: int = 0) -> dict[str, Any]:
    """JSON schema of an editor reply; descriptions are bounded so a looping model stops.

    ``required`` is the least number of updates: small models otherwise answer "nothing to
    change" even for a called tool that has no description at all.
    """
    return {
        "type": "object",
        "properties": {
            "updates": {
                "type": "array",
                "minItems": required,
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string", "enum": tool_names},
                                   "description": {"type": "string", "minLength": 1, "maxLength": 700}},
                    "required": ["name", "description"],
                },
            }
        },
        "required": ["updates"],
    }


def render_docs(tools: list[DocumentedTool]) -> str:
    return "\n".join(json.dumps(tool.to_dict(), ensure_ascii=False) for tool in tools)


def render_attempt(trajectory: Trajectory, *, show_outcome: bool) -> str:
    """An attempt as the editor reads it: request, each call with its result, optionally the outcome."""
    lines = [f"Request: {trajectory.question}"]
    if not trajectory.steps:
        lines.append(f"No tool was called ({trajectory.parse_error or 'no call'}).")
    for number, step in enumerate(trajectory.steps, start=1):
        arguments = json.dumps(step.call.arguments, ensure_ascii=False, default=str)
        result = f"returned {preview(step.output, 300)}" if step.ok else f"failed: {step.error}"
        lines.append(f"Call {number}: {step.call.name}({arguments}) {result}")
    if show_outcome:
        lines.append(f"Outcome: {'success' if trajectory.success else 'failure'}")
        if trajectory.feedback:
            lines.append(f"Feedback: {trajectory.feedback}")
    return "\n".join(lines)


def _facts_section(facts: dict[str, list[str]] | None) -> str:
    """The facts about a toolset's tools as a prompt section (empty when there are none)."""
    known = "".join(f"\n- {name}: {line}" for name, lines in sorted((facts or {}).items()) for line in lines)
    return f"\n\n{FACTS_HEADING}{known}" if known else ""


def describe_schema(parameters: list[str], *, limits: tuple[int, int] = (500, 160)) -> dict[str, Any]:
    """A structured doc: the description, and one short meaning per known parameter (all of them); ``limits``: the
    longest description and meaning, in characters."""
    meanings = {name: {"type": "string", "minLength": 1, "maxLength": limits[1]} for name in parameters}
    properties: dict[str, Any] = {"description": {"type": "string", "minLength": 1, "maxLength": limits[0]}}
    if parameters:
        properties["parameters"] = {"type": "object", "properties": meanings, "required": list(parameters)}
    return {"type": "object", "properties": properties, "required": list(properties)}


@dataclass(frozen=True)
class EditorExchange:
    """One editor call, kept for the run's artefacts: what it was asked and what it proposed.

    ``parameter_updates`` holds per-parameter meanings of a structured doc (tool -> name -> text).
    """

    job: str
    prompt: str
    reply: str
    updates: dict[str, str]
    parameter_updates: dict[str, dict[str, str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = {"job": self.job, "prompt": self.prompt, "reply": self.reply, "updates": self.updates}
        if self.parameter_updates:
            data["parameter_updates"] = self.parameter_updates
        return data


def parse_updates(text: str, allowed: set[str]) -> dict[str, str]:
    """``{tool: description}`` from an editor reply; unknown tools, blanks and junk are dropped."""
    data = parse_json_object(text) or {}
    items = data.get("updates", [])
    updates = {}
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("name") in allowed and isinstance(item.get("description"), str):
            description = " ".join(item["description"].split())
            if description:
                updates[item["name"]] = description
    return updates


class DocEditor(dspy.Module):
    """Asks the editor LM for documentation updates. ``lm`` is charged to the editor phase."""

    def __init__(self, *, max_tokens: int = 700) -> None:
        super().__init__()
        self.max_tokens = max_tokens
        self.lm: dspy.LM | None = None

    def _ask(self, job: str, task: str, prompt: str, tool_names: list[str], *, required: int = 0,
             **lm_kwargs: Any) -> EditorExchange:
        """One editor call. The role, the job's task and the reply format are the system message, the same
        for every call of a job, so the server's prefix cache serves them; the evidence comes last."""
        reply, _ = ask_json(self.lm, system=f"{EDITOR_ROLE}\n\n{task}\n\n{_REPLY}", user=prompt,
                            schema=updates_schema(tool_names, required=required), schema_name="doc_updates",
                            max_tokens=self.max_tokens, **lm_kwargs)
        return EditorExchange(job, prompt, reply, parse_updates(reply, set(tool_names)))

    def revise(self, tools: list[DocumentedTool], trajectory: Trajectory, *, show_outcome: bool,
               facts: dict[str, list[str]] | None = None) -> EditorExchange:
        """Online mode: updates for the tools called in one attempt (empty when nothing was called).

        ``facts`` (tool -> fact lines read by code) are added to the evidence when given.
        """
        called = sorted({step.call.name for step in trajectory.steps} & {tool.name for tool in tools})
        prompt = (f"Current documentation (one JSON object per tool):\n{render_docs(tools)}\n\n"
                  f"What happened:\n{render_attempt(trajectory, show_outcome=show_outcome)}"
                  + _facts_section(facts))
        if not called:
            return EditorExchange("revise", prompt, "", {})
        blank = [tool for tool in tools if tool.name in called and not tool.description]
        return self._ask("revise", REVISE_TASK, prompt, called, required=1 if blank else 0)

    def describe(self, tool: DocumentedTool, facts: list[str], requests: list[str] | None, *,
                 task: str = DESCRIBE_TASK, show_current: bool = True, short: bool = False) -> EditorExchange:
        """One tool, only its evidence: a structured doc (description plus each known parameter's meaning).

        ``requests`` are the requests it was called for (None: not shown, as for an offline toolset whose
        tasks all read alike); ``task`` is :data:`DESCRIBE_TASK` (one attempt's tool) or
        :data:`COMPARE_TASK` (a tool among similar ones, from usage counts). Without ``show_current`` the
        current description is left out: a small model copies a generic one instead of using the facts.
        ``short`` asks for a brief doc (:data:`SHORT_REPLY`), bounded by :data:`SHORT_LIMITS`.
        """
        if short:
            task = f"{task}\n{SHORT_REPLY}"
        parameters = [p.name for p in tool.parameters or ()]
        current = f"\nCurrent description: {tool.description or '(none)'}" if show_current else ""
        prompt = (f"Tool: {tool.name}{current}\n\n"
                  f"{FACTS_HEADING}\n" + "\n".join(f"- {line}" for line in facts))
        if requests is not None:
            shown = "\n".join(f"- {request}" for request in requests) or "- (none yet)"
            prompt += f"\n\nRequests it was called for:\n{shown}"
        reply_format = ('Reply with JSON only: {"description": "<what it does and returns>"'
                        + (', "parameters": {"<name>": "<meaning and type>"}}' if parameters else "}"))
        reply, data = ask_json(self.lm, system=f"{EDITOR_ROLE}\n\n{task}\n\n{reply_format}", user=prompt,
                               schema=describe_schema(parameters, **({"limits": SHORT_LIMITS} if short else {})),
                               schema_name="tool_doc", max_tokens=self.max_tokens)
        data = data or {}
        description = reply_text(data.get("description"))
        meanings = data.get("parameters")
        meanings = meanings if isinstance(meanings, dict) else {}
        texts = {name: reply_text(text) for name, text in meanings.items() if name in parameters}
        cleaned = {name: text for name, text in texts.items() if text}
        return EditorExchange("describe", prompt, reply, {tool.name: description} if description else {},
                              {tool.name: cleaned} if cleaned else {})

    def propose_call(self, tools: list[DocumentedTool], request: str, tried: list[str], answered: list[str], *,
                     repeated: bool = False) -> tuple[EditorExchange, dict[str, Any] | None]:
        """One call (``{"name": ..., "arguments": {...}}``) of one of ``tools`` that should answer ``request``, written
        from the calls tried on it that did not (``tried``) and those that answered other requests (``answered``):
        lines read by code. ``repeated``: the editor's first answer was a call already tried, and it is told so. None
        where the reply gives none; the reply is constrained to the tools' names and parsed as untrusted data."""
        shown = "\n".join(f"- {tool.name}({', '.join(f'{p.name}: {p.type}' for p in tool.parameters or ())})"
                           + (f": {tool.description[:200]}" if tool.description else "") for tool in tools)
        prompt = (f"Tools:\n{shown}\n\nRequest: {request}\n\nTried on it, without answering it:\n"
                  + "\n".join(f"- {line}" for line in tried)
                  + "\n\nCalls that answered other requests:\n" + "\n".join(f"- {line}" for line in answered)
                  + (f"\n\n{_REPEATED}" if repeated else ""))
        reply, data = ask_json(self.lm, system=f"{EDITOR_ROLE}\n\n{REPAIR_TASK}\n\n{_REPAIR_REPLY}", user=prompt,
                               schema=one_call_schema([tool.name for tool in tools]), schema_name="tool_call",
                               max_tokens=min(self.max_tokens, 200))
        exchange = EditorExchange("repair", prompt, reply, {})
        data = data or {}
        names = {tool.name for tool in tools}
        if data.get("name") not in names or not isinstance(data.get("arguments"), dict):
            return exchange, None
        return exchange, {"name": data["name"], "arguments": data["arguments"]}

    def describe_batch(self, tools: list[DocumentedTool], facts: dict[str, list[str]]) -> EditorExchange:
        """Several tools in one call, each from its own calls (``facts``: tool -> lines read by code): one description
        per tool. The role and task are paid once for the batch, and the server's prefix cache serves them to the
        next batch."""
        blocks = []
        for tool in tools:
            parameters = ", ".join(f"{p.name} ({p.type})" for p in tool.parameters or ()) or "(not known)"
            lines = "\n".join(f"- {line}" for line in facts.get(tool.name, ()))
            current = f"Current description: {tool.description}\n" if tool.description else ""  # "(none)" was copied
            blocks.append(f"Tool: {tool.name}\n{current}Parameters: {parameters}\n{lines}")
        names = [tool.name for tool in tools]
        schema = {"type": "object", "required": ["tools"], "properties": {"tools": {
            "type": "array", "minItems": len(names), "maxItems": len(names), "items": {
                "type": "object", "required": ["name", "description"], "properties": {
                    "name": {"type": "string", "enum": names},
                    "description": {"type": "string", "minLength": 1, "maxLength": _BATCH_DESCRIPTION_CHARS}}}}}}
        reply_format = 'Reply with JSON only: {"tools": [{"name": "<tool name>", "description": "<its description>"}]}'
        prompt = "\n\n".join(blocks)
        reply, data = ask_json(self.lm, system=f"{EDITOR_ROLE}\n\n{DESCRIBE_BATCH_TASK}\n\n{reply_format}", user=prompt,
                               schema=schema, schema_name="tool_docs", max_tokens=min(self.max_tokens * 2,
                                                                                        90 * len(names) + 40))
        items = (data or {}).get("tools")
        updates = {}
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and item.get("name") in names and item["name"] not in updates:
                text = _whole_sentences(reply_text(_before_echo(item.get("description"))))
                if text:
                    updates[item["name"]] = text
        return EditorExchange("describe_batch", prompt, reply, updates)

    def analyse_batch(self, tools: list[DocumentedTool], batch: list[Trajectory],
                      facts: dict[str, list[str]] | None = None) -> EditorExchange:
        """Offline mode: candidate docs from one mini-batch, with each attempt's outcome signal.

        ``facts`` (tool -> fact lines counted by code over all attempts) are added when given.
        """
        attempts = "\n\n".join(f"Attempt {i}:\n{render_attempt(t, show_outcome=True)}" for i, t in enumerate(batch, 1))
        prompt = (f"Current documentation (one JSON object per tool):\n{render_docs(tools)}\n\n"
                  f"{len(batch)} attempts by an agent using these tools:\n\n{attempts}"
                  + _facts_section(facts))
        return self._ask("batch", BATCH_TASK, prompt, [tool.name for tool in tools])

    def merge(self, tools: list[DocumentedTool], proposals: list[dict[str, str]]) -> EditorExchange:
        """Offline mode: consensus of the batch proposals."""
        candidates = "\n\n".join(
            f"Batch {i}:\n" + "\n".join(f"- {name}: {text}" for name, text in sorted(proposal.items()))
            for i, proposal in enumerate(proposals, 1) if proposal
        )
        prompt = (f"Current documentation (one JSON object per tool):\n{render_docs(tools)}\n\n"
                  f"Candidate descriptions:\n\n{candidates}")
        names = sorted({name for proposal in proposals for name in proposal})
        return self._ask("merge", MERGE_TASK, prompt, names)


def _before_echo(description: Any) -> Any:
    """A batch reply's description up to the first line that copies the prompt's tool block back (its parameters and
    the facts of its calls: a small model given a current description goes on into them); anything else as it is."""
    if not isinstance(description, str):
        return description
    lines = description.split("\n")
    end = next((index for index, line in enumerate(lines) if index and line.lstrip().startswith(_BATCH_LABELS)),
               len(lines))
    return "\n".join(lines[:end])


def _whole_sentences(text: str) -> str:
    """A batch description cut off at its bound, back to its last whole sentence (where it has one): a sentence cut
    in the middle ("...looking up the ISO code and return") reads as a fault of the tool's doc."""
    if len(text) < _BATCH_DESCRIPTION_CHARS - 1:
        return text
    end = max(text.rfind(". "), text.rfind("! "), text.rfind("? "))
    return text[:end + 1] if end > 0 else text
