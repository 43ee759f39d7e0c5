"""EasyTool baseline: rewrite each tool's documentation without ever running a tool.

Two LLM calls per tool, as the method describes: first condense the current documentation to
the tool's core purpose, then write a functional guideline (when to use the tool and an example
of its parameters). The new description is the purpose followed by the guideline. Because no
tool is executed, the rewrite can only restate or guess from what the docs already say, which is
exactly what the benchmark sets out to show for opaque tools.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import dspy
from tqdm import tqdm

from otbench.core.parallel import parallel_map
from otbench.envs.base import Environment
from otbench.modules.lm_output import ask_json, reply_text
from otbench.modules.program import ToolAgentProgram
from otbench.modules.tool_docs import DocumentedTool, tool_key
from otbench.optimizers.base import DocOptimizer, IterationRecord, IterationTracker, apply_updates

WRITER_ROLE = """\
You write concise documentation for tools that an AI assistant calls. Work only from the \
documentation you are given; you cannot run the tools."""

CONDENSE_TASK = """\
Condense this tool's documentation to its core purpose: one sentence saying what the tool does \
and what it returns. Drop redundant detail. If the documentation says little, infer the most \
likely purpose from the tool's name and parameters."""

GUIDELINE_TASK = """\
Write a functional guideline for this tool: a usage scenario (when an assistant should call it, \
in one sentence) and an example call with plausible parameter values."""

REWRITES_PER_STEP = 25
"""Tools rewritten between two checkpoints: a pool's thousand tools take hours to rewrite on a small machine, and a
stopped run goes on from its last checkpoint rather than from the first tool."""
REWRITTEN = "rewritten"
"""Checkpoint entry: the keys of the tools rewritten so far (a resumed run skips them)."""
REWRITE_STEPS = "rewrite_steps"
"""Checkpoint entry: the steps the rewrite has logged (a resumed run numbers its next one after them)."""
REWRITE_CHANGED = "rewrite_changed"
"""Checkpoint entry: the docs the rewrite has changed so far."""

_CONDENSE_SCHEMA = {
    "type": "object",
    "properties": {"purpose": {"type": "string", "minLength": 1, "maxLength": 400}},
    "required": ["purpose"],
}
_GUIDELINE_SCHEMA = {
    "type": "object",
    "properties": {
        "scenario": {"type": "string", "minLength": 1, "maxLength": 400},
        "example_arguments": {"type": "object"},
    },
    "required": ["scenario", "example_arguments"],
}


@dataclass(frozen=True)
class Rewrite:
    """The two exchanges of one tool's rewrite and the description they produce ('' if unusable)."""

    toolset: str
    tool: str
    condense_reply: str
    guideline_reply: str
    description: str

    def to_dict(self) -> dict[str, Any]:
        return {"job": "easytool", "toolset": self.toolset, "tool": self.tool, "condense": self.condense_reply,
                "guideline": self.guideline_reply, "description": self.description}

    @property
    def updates(self) -> dict[str, str]:
        return {self.tool: self.description} if self.description else {}


class EasyToolWriter(dspy.Module):
    """The two calls per tool; ``lm`` is charged to the editor phase."""

    def __init__(self, *, max_tokens: int = 300) -> None:
        super().__init__()
        self.max_tokens = max_tokens
        self.lm: dspy.LM | None = None

    def rewrite(self, toolset: str, tool: DocumentedTool) -> Rewrite:
        docs = json.dumps(tool.to_dict(), ensure_ascii=False)
        # Role, task and reply format first (the same for every tool: the server's prefix cache serves them).
        condense_reply, condensed = ask_json(
            self.lm, system=f"{WRITER_ROLE}\n\n{CONDENSE_TASK}\n\n"
            'Reply with JSON only: {"purpose": "<one sentence>"}', user=f"Tool documentation:\n{docs}",
            schema=_CONDENSE_SCHEMA, schema_name="purpose", max_tokens=self.max_tokens)
        purpose = reply_text((condensed or {}).get("purpose"))
        guideline_reply, guideline = ask_json(
            self.lm, system=f"{WRITER_ROLE}\n\n{GUIDELINE_TASK}\n\n"
            'Reply with JSON only: {"scenario": "<when to use it>", "example_arguments": {"<parameter>": <value>}}',
            user=f"Tool documentation:\n{docs}\n\nCore purpose: {purpose or '(unknown)'}",
            schema=_GUIDELINE_SCHEMA, schema_name="guideline", max_tokens=self.max_tokens)
        return Rewrite(toolset, tool.name, condense_reply, guideline_reply,
                       compose_description(tool.name, purpose, guideline or {}))


def compose_description(name: str, purpose: str, guideline: dict[str, Any]) -> str:
    """Purpose, scenario and example call as one description; parts the model left out are skipped."""
    parts = [purpose] if purpose else []
    scenario = reply_text(guideline.get("scenario"))
    if scenario:
        parts.append(f"Use it when: {scenario}")
    example = guideline.get("example_arguments")
    if isinstance(example, dict) and example:
        parts.append(f"Example: {name}({json.dumps(example, ensure_ascii=False, default=str)})")
    return " ".join(parts)


class EasyTool(DocOptimizer):
    """Teleprompter: condense and add guidelines to every tool of the train tasks' toolsets, then score them.

    Nothing is learned from use: the rewrite is logged :data:`REWRITES_PER_STEP` tools a step, the last one scoring the
    new docs.
    ``editor_lm`` is the writer's LM (default: ``dspy.settings.lm`` when it is called).
    """

    def __init__(self, *, env: Environment, writer: EasyToolWriter | None = None, editor_lm: dspy.LM | None = None,
                 num_threads: int = 1, tracker: IterationTracker | None = None, progress: bool = True,
                 probe: bool = False, experiment: bool = False, token_budget: int | None = None,
                 coverage: bool = False, worded_errors: bool = True, request_scales: bool = False,
                 gate: bool = True, keep_evidence: bool = True) -> None:
        super().__init__(env=env, num_threads=num_threads, tracker=tracker, progress=progress, probe=probe,
                         experiment=experiment, token_budget=token_budget,
                         coverage=coverage, worded_errors=worded_errors,
                         request_scales=request_scales, gate=gate, keep_evidence=keep_evidence)
        self.writer = writer or EasyToolWriter()
        if editor_lm is not None:
            self.writer.lm = editor_lm

    def _lms(self, program: ToolAgentProgram) -> dict[str, Any]:
        return {**super()._lms(program), "editor": self.writer.lm or dspy.settings.lm}

    def _optimize(self, student: ToolAgentProgram, trainset: list[Any], resume: dict[str, Any]) -> None:
        """Rewrite the docs of every tool the train tasks use, in toolset order, then score them on the train tasks.
        Under a learning budget the rewrites stop where it runs out: the method has no way to tell which tools
        matter, having never run one.

        The rewrites are logged :data:`REWRITES_PER_STEP` tools a step, the last step also scoring the docs: a
        ``resume`` checkpoint goes on after the tools it lists as rewritten (on another machine too, where no LM cache
        holds the finished calls), and one whose scoring finished leaves nothing to do.
        """
        if "next_step" in resume:
            return
        if REWRITTEN not in resume:  # a resumed rewrite's docs have had the shared help already
            self._shared_help(student.toolbox, trainset)
        rewritten = list(resume.get(REWRITTEN, []))
        step, changed = int(resume.get(REWRITE_STEPS, 0)), int(resume.get(REWRITE_CHANGED, 0))
        jobs = [(toolset, tool) for toolset in self._toolsets(trainset) for tool in student.toolbox.toolset(toolset)
                if tool_key(toolset, tool.name) not in rewritten]

        def rewrite(job: tuple[str, DocumentedTool]) -> Rewrite | None:
            return None if self.learning_budget.exhausted() else self.writer.rewrite(*job)

        def checkpoint(finished: bool) -> dict[str, Any]:
            done = {"next_step": 1} if finished else {REWRITTEN: list(rewritten), REWRITE_STEPS: step + 1,
                                                     REWRITE_CHANGED: changed}
            return {**done, "docs": student.toolbox.to_json()}

        with tqdm(total=len(rewritten) + len(jobs), initial=len(rewritten), desc="easytool: rewrite", unit="tool",
                  dynamic_ncols=True, disable=not self.progress) as bar:
            while True:
                chunk, jobs = jobs[:REWRITES_PER_STEP], jobs[REWRITES_PER_STEP:]
                rewrites = [r for r in parallel_map(rewrite, chunk, num_threads=self.num_threads, progress=False)
                            if r is not None]
                bar.update(len(chunk))
                changed += sum(apply_updates(student.toolbox, r.toolset, r.updates) for r in rewrites)
                rewritten += [tool_key(r.toolset, r.tool) for r in rewrites]
                if not jobs or self.learning_budget.exhausted():
                    break
                metrics = {"docs_changed": float(changed), "tools_rewritten": float(len(rewritten))}
                self.tracker.log_iteration(IterationRecord(step, metrics, student.toolbox.deepcopy(), [], rewrites,
                                                           checkpoint(False)))
                step += 1
        trajectories = self._rollouts(student, trainset, "easytool: evaluate")
        metrics = {**self.env.summarise(trajectories), "docs_changed": float(changed),
                   "tools_rewritten": float(len(rewritten))}
        self.tracker.log_iteration(IterationRecord(step, metrics, student.toolbox.deepcopy(), trajectories, rewrites,
                                                   checkpoint(True)))
        self.final_trajectories = trajectories
