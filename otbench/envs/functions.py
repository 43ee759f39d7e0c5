"""Your own tools, tasks and metric as an environment: plain Python functions, ``dspy.Example``s, a score.

The functions are shown to the agent as *you* wrote them: each function's name is the tool's name
and its docstring the tool's description (none, or an empty one, shows a blank doc), which is how
opaque tools are made here. Their parameters are shown from the signature (names, types from the
annotations, required unless defaulted), or hidden with ``show_parameters=False``.

Every example is one task: its ``question`` field (``question_field``) is the request the agent
answers with tool calls, which run in this process (your own code, trusted as such). The metric
``(example, trajectory) -> float | bool`` scores an attempt from the calls it made and what they
returned (``trajectory.steps``, ``trajectory.outputs``); it may also return an object with
``score`` and ``feedback`` (such as ``dspy.Prediction(score=..., feedback=...)``), whose feedback
an editor then reads. One toolset is shared by all tasks, so docs are learned offline: on the
train examples, then scored on the test ones.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import typing
from collections.abc import Callable, Sequence
from typing import Any, Self

import dspy

from modules.agent import FUNCTION_CALLING_INSTRUCTIONS, FunctionCallingAgent
from modules.program import ToolAgentProgram
from modules.tool_docs import DocumentedTool, ParameterSpec, Toolbox
from otbench.calls import CallResult, ToolCall
from otbench.envs.base import Agent
from otbench.errors import ConfigError
from otbench.faults import Episode, StateController, call_episode, episode
from otbench.trajectory import Trajectory

Metric = Callable[[dspy.Example, Trajectory], Any]
"""``(example, trajectory) -> float | bool``, or an object with ``score`` (and ``feedback``)."""

TOOLSET = "tools"
SCORE = "score"

_JSON_TYPES: dict[object, str] = {int: "integer", float: "number", str: "string", bool: "boolean", list: "array", tuple: "array",
               dict: "object"}


def task_id(example: dspy.Example) -> str:
    """The example's ``id`` field, else a digest of its fields: equal examples are the same task."""
    if example.get("id") is not None:
        return str(example.get("id"))
    fields = json.dumps(example.toDict(), sort_keys=True, default=repr)
    return hashlib.sha256(fields.encode()).hexdigest()[:12]


def shown_parameters(function: Callable[..., Any]) -> list[ParameterSpec]:
    """The parameters a signature shows: keyword-callable ones, typed by their annotations (also when they
    are strings, as under ``from __future__ import annotations``)."""
    try:
        hints = typing.get_type_hints(function)
    except (NameError, TypeError):  # an annotation that does not resolve: the parameter shows no type
        hints = {}
    parameters = []
    for parameter in inspect.signature(function).parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD, parameter.POSITIONAL_ONLY):
            continue
        annotation = hints.get(parameter.name)
        kind = _JSON_TYPES.get(typing.get_origin(annotation) or annotation, "any")
        parameters.append(ParameterSpec(parameter.name, kind, parameter.default is parameter.empty))
    return parameters


class FunctionEnvironment:
    """An :class:`~otbench.envs.base.Environment` over plain functions, examples and a metric.

    ``examples`` are the train split (what an optimizer learns from); ``test_examples`` the test
    split, the examples themselves when not given. ``instructions`` is the agent's system prompt.
    """

    name = "functions"
    setting = "given"
    primary_metric = SCORE
    metric_names = (SCORE,)
    learning = "offline"
    faults: StateController | None = None
    """Injects failures into the functions' calls when set (:mod:`otbench.faults`)."""

    def __init__(
        self, functions: Sequence[Callable[..., Any]], examples: Sequence[dspy.Example], metric: Metric, *,
        test_examples: Sequence[dspy.Example] | None = None, show_parameters: bool = True,
        question_field: str = "question", instructions: str = FUNCTION_CALLING_INSTRUCTIONS,
    ) -> None:
        self.functions: dict[str, Callable[..., Any]] = {}
        for function in functions:
            name = getattr(function, "__name__", "")
            if not callable(function) or not name.isidentifier():
                raise ConfigError(f"every tool must be a named function (a def), got {function!r}")
            if name in self.functions:
                raise ConfigError(f"two tools are named {name!r}: the agent could not tell them apart")
            self.functions[name] = function
        self.examples = list(examples)
        self.test_examples = list(test_examples) if test_examples is not None else self.examples
        for example in [*self.examples, *self.test_examples]:
            if not isinstance(example.get(question_field), str):
                raise ConfigError(f"every example needs a {question_field!r} text (the request), got {example!r}")
        self.metric = metric
        self.show_parameters = show_parameters
        self.question_field = question_field
        self.agent_instructions = instructions

    # -- the Environment contract --------------------------------------------------------------------
    def tasks(self, split: str = "test") -> list[dspy.Example]:
        if split not in ("train", "test"):
            raise ConfigError(f"split must be train or test, got {split!r}")
        return list(self.examples if split == "train" else self.test_examples)

    def toolbox(self, docs: str | None = None) -> Toolbox:
        """The docs as the functions show them; there are no truer ones to know, so ``gold`` is the same."""
        if docs not in (None, "gold"):
            raise ConfigError(f"{self.name}: docs are the functions' own or gold, not {docs!r}")
        return Toolbox({TOOLSET: [self._documented(function) for function in self.functions.values()]})

    def toolset_of(self, task: dspy.Example) -> str:
        return TOOLSET

    def execute(self, toolset: str, call: ToolCall) -> CallResult:
        """Call the function under its name; whatever it raises comes back as the error an editor reads."""
        return self._execute(call, call_episode(self.faults, toolset, call.name))

    def _execute(self, call: ToolCall, attempt: Episode) -> CallResult:
        """A call whose shape did not fit (``call.problem``) is not made, nor faulted: its reason is the error."""
        if call.problem is not None:
            return CallResult.refused(call)
        return attempt.run(call, lambda: self._call(call))

    def _call(self, call: ToolCall) -> CallResult:
        function = self.functions.get(call.name)
        if function is None:
            return CallResult(call, False, error=f"NameError: no tool named {call.name!r}")
        try:
            return CallResult(call, True, output=function(**call.arguments))
        except Exception as exc:  # noqa: BLE001 - any failure of the user's tool is an outcome to learn from
            return CallResult(call, False, error=f"{type(exc).__name__}: {exc}")

    def rollout(self, agent: Agent, toolbox: Toolbox, task: dspy.Example) -> Trajectory:
        question = task.get(self.question_field)
        reply = agent(question=question, tools=toolbox.toolset(TOOLSET))
        attempt = episode(self.faults, task_id(task))
        steps = [self._execute(call, attempt) for call in reply.calls or []]
        trajectory = Trajectory(task_id=task_id(task), toolset=TOOLSET, question=question, steps=steps,
                                reply=reply.raw, parse_error=reply.error)
        judged = self.metric(task, trajectory)
        score = float(judged.score if hasattr(judged, "score") else judged)
        trajectory.metrics = {SCORE: score}
        trajectory.success = score >= 1.0
        trajectory.feedback = str(getattr(judged, "feedback", "") or "")
        return trajectory

    def summarise(self, trajectories: list[Trajectory]) -> dict[str, float]:
        scores = [t.metrics[SCORE] for t in trajectories]
        return {SCORE: sum(scores) / len(scores) if scores else 0.0, "n": float(len(scores))}

    def oracle_agent(self, tasks: list[dspy.Example]) -> Agent:
        raise ConfigError(f"{self.name}: examples carry no gold calls, so there is no reference agent to run")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        return None

    # -- for the user ----------------------------------------------------------------------------------
    def program(self, lm: dspy.LM | None = None) -> ToolAgentProgram:
        """A student for the optimizers: the function-calling agent (``lm``, else ``dspy.settings.lm``) and
        the functions' docs."""
        agent = FunctionCallingAgent(instructions=self.agent_instructions)
        agent.lm = lm
        return ToolAgentProgram(self.toolbox(), agent)

    def dspy_tools(self, learned: ToolAgentProgram | Toolbox) -> list[dspy.Tool]:
        """The functions as ``dspy.Tool``s showing ``learned``'s docs, for any DSPy agent (``dspy.ReAct``)."""
        toolbox = learned.toolbox if isinstance(learned, ToolAgentProgram) else learned
        return toolbox.as_dspy_tools(TOOLSET, self.functions)

    def _documented(self, function: Callable[..., Any]) -> DocumentedTool:
        return DocumentedTool(function.__name__, description=inspect.getdoc(function) or "",
                              parameters=shown_parameters(function) if self.show_parameters else None)
