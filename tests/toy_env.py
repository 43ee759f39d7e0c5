"""A tiny environment for optimizer tests: two arithmetic tools behind opaque names.

``function_1`` adds and ``function_2`` multiplies. A scripted agent calls whichever tool the
docs say adds, so documentation quality decides the score, as in the real environments.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from scripted_lm import prompt_text, request_of, shown_tools

from otbench.core.calls import CallResult, ToolCall
from otbench.core.trajectory import Trajectory
from otbench.modules.tool_docs import DocumentedTool, ParameterSpec, Toolbox

IMPLEMENTATIONS = {"function_1": lambda a, b: a + b, "function_2": lambda a, b: a * b}


@dataclass(frozen=True)
class ToyTask:
    id: str
    question: str
    a: int
    b: int


class ToyEnvironment:
    name = "toy"
    setting = "opaque"
    primary_metric = "E"
    metric_names = ("E",)
    agent_instructions = "Call the tool that answers the request."

    def __init__(self, n_tasks: int = 4, *, shared: bool = False, hide_parameters: bool = False) -> None:
        self.shared = shared
        self.hide_parameters = hide_parameters
        self.learning = "offline" if shared else "online"
        self._tasks = [ToyTask(f"t{i}", f"add {i + 2} and 3", i + 2, 3) for i in range(n_tasks)]

    def tasks(self, split: str = "test") -> list[ToyTask]:
        return list(self._tasks)

    def toolset_of(self, task: ToyTask) -> str:
        return "shared" if self.shared else task.id

    def execute(self, toolset: str, call: ToolCall) -> CallResult:
        try:
            return CallResult(call, True, output=IMPLEMENTATIONS[call.name](**call.arguments))
        except (KeyError, TypeError) as error:
            return CallResult(call, False, error=f"{type(error).__name__}: {error}")

    def toolbox(self, docs: str | None = None) -> Toolbox:
        def tools() -> list[DocumentedTool]:
            shown = None if self.hide_parameters else [ParameterSpec("a", "integer"), ParameterSpec("b", "integer")]
            return [DocumentedTool(n, parameters=shown) for n in IMPLEMENTATIONS]
        ids = ["shared"] if self.shared else [t.id for t in self._tasks]
        return Toolbox({toolset: tools() for toolset in ids})

    def rollout(self, agent, toolbox: Toolbox, task: ToyTask) -> Trajectory:
        reply = agent(question=task.question, tools=toolbox.toolset(self.toolset_of(task)))
        steps = [self.execute(self.toolset_of(task), call) for call in reply.calls or []]
        success = any(step.ok and step.output == task.a + task.b for step in steps)
        return Trajectory(task_id=task.id, toolset=self.toolset_of(task), question=task.question, steps=steps,
                          reply=reply.raw, metrics={"E": float(success)}, success=success,
                          feedback=f"expected {task.a + task.b}")

    def summarise(self, trajectories: list[Trajectory]) -> dict[str, float]:
        return {"E": sum(t.metrics["E"] for t in trajectories) / len(trajectories), "n": float(len(trajectories))}


def _documented(content: str, marker: str) -> dict[str, str]:
    """Tool name -> description from the JSON lines that follow ``marker`` in a prompt."""
    docs = {}
    for line in content.split(marker, 1)[1].splitlines():
        if line.startswith("{"):
            tool = json.loads(line)
            tool = tool.get("function", tool)
            docs[tool["name"]] = tool.get("description", "")
    return docs


def docs_aware_agent_reply(messages: list[dict[str, str]]) -> str:
    """Scripted agent: the tool documented as adding; else explore the last undocumented tool."""
    numbers = [int(word) for word in request_of(messages).split() if word.isdigit()]
    docs = {tool["name"]: tool.get("description", "") for tool in shown_tools(messages)}
    adders = [name for name, text in docs.items() if "adds" in text.lower()]
    blank = [name for name, text in docs.items() if not text]
    choice = (adders or blank[-1:] or ["function_2"])[0]
    return json.dumps({"calls": [{"name": choice, "arguments": {"a": numbers[0], "b": numbers[1]}}]})


def truthful_editor_reply(messages: list[dict[str, str]]) -> str:
    """Scripted editor: document a called, still-blank tool truthfully; nothing once all are documented."""
    content = prompt_text(messages)
    docs = _documented(content, "Current documentation (one JSON object per tool):")
    truth = {"function_1": "Adds a and b.", "function_2": "Multiplies a and b."}
    called = [name for name in truth if f"{name}(" in content.split("What happened:")[-1]]
    updates = [{"name": name, "description": truth[name]} for name in called if not docs.get(name)]
    return json.dumps({"updates": updates})
