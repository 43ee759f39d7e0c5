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

:meth:`FunctionEnvironment.opaque` shows any functions the way the benchmark shows its tools: under
the names ``function_1..N`` in a seeded order, with no docstring (``names_only`` also hides the
parameters, ``names_params`` shows them; ``gold`` shows the true docstring and parameters under the
same opaque names). The real names never reach the agent: each function runs as a copy whose code
object carries the shown name, so Python's own errors name the tool as the agent saw it. The true
docs are the environment's gold docs (``toolbox("gold")``, ``--docs gold``), and examples that carry
their gold calls (``calls``: ``[{"name": <real name>, "arguments": {...}}, ...]`` in order) give an
oracle agent that replays them under the shown names.

Stateful tools (a store, a session) get their state from ``state``, a factory of context managers:
the environment enters ``state(task)`` around each task's calls and its scoring, and ``state(None)``
around every call made outside any task (an optimizer probing a tool or replaying a call). Rollouts
run on parallel threads, so such a factory keeps its state in a :class:`contextvars.ContextVar`, which
each thread sets for itself.
"""

from __future__ import annotations

import copy
import inspect
import random
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from functools import partial
from typing import Any

import dspy

from otbench.core.calls import CallResult, ToolCall
from otbench.core.faults import StateController, call_episode, episode
from otbench.core.opaque import PRESENTATIONS, renamed
from otbench.core.trajectory import Trajectory
from otbench.envs.base import Agent, Closing, task_key
from otbench.errors import ConfigError
from otbench.modules.agent import FUNCTION_CALLING_INSTRUCTIONS, FunctionCallingAgent
from otbench.modules.program import ToolAgentProgram
from otbench.modules.reference_agents import OracleAgent
from otbench.modules.tool_docs import DocumentedTool, ParameterSpec, Toolbox

Metric = Callable[[dspy.Example, Trajectory], Any]
"""``(example, trajectory) -> float | bool``, or an object with ``score`` (and ``feedback``)."""

StateFactory = Callable[[dspy.Example | None], AbstractContextManager[object]]
"""Opens the state stateful tools run against: a task's (its calls and its scoring run inside), or with
None, the state of one call made outside any task."""

TOOLSET = "tools"
SCORE = "score"

_JSON_TYPES: dict[object, str] = {int: "integer", float: "number", str: "string", bool: "boolean", list: "array", tuple: "array",
               dict: "object"}


def task_id(example: dspy.Example) -> str:
    """The example's ``id`` field, else a digest of its fields: equal examples are the same task."""
    return task_key(example)


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


def _by_name(functions: Sequence[Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    named: dict[str, Callable[..., Any]] = {}
    for function in functions:
        name = getattr(function, "__name__", "")
        if not callable(function) or not name.isidentifier():
            raise ConfigError(f"every tool must be a named function (a def), got {function!r}")
        if name in named:
            raise ConfigError(f"two tools are named {name!r}: the agent could not tell them apart")
        named[name] = function
    return named


class FunctionEnvironment(Closing):
    """An :class:`~otbench.envs.base.Environment` over plain functions, examples and a metric.

    ``examples`` are the train split (what an optimizer learns from); ``test_examples`` the test
    split, the examples themselves when not given. ``instructions`` is the agent's system prompt.
    ``gold_docs`` are the true docs under the shown names (default: the docs as shown); ``real_names``
    maps a shown name to the name the examples' gold calls use (default: the same); ``state`` opens
    the state of stateful tools (see the module's docstring). ``name``, ``setting`` and ``toolset`` are
    what runs and learned docs are filed under.
    """

    primary_metric = SCORE
    metric_names = (SCORE,)
    learning = "offline"
    one_reply = True
    faults: StateController | None = None
    """Injects failures into the functions' calls when set (:mod:`otbench.core.faults`)."""

    def __init__(
        self, functions: Sequence[Callable[..., Any]], examples: Sequence[dspy.Example], metric: Metric, *,
        test_examples: Sequence[dspy.Example] | None = None, show_parameters: bool = True,
        question_field: str = "question", instructions: str = FUNCTION_CALLING_INSTRUCTIONS,
        gold_docs: Sequence[DocumentedTool] | None = None, real_names: Mapping[str, str] | None = None,
        state: StateFactory | None = None, name: str = "functions", setting: str = "given", toolset: str = TOOLSET,
    ) -> None:
        self.functions = _by_name(functions)
        self.name, self.setting, self.toolset = name, setting, toolset
        self.gold_docs = {tool.name: tool for tool in gold_docs or ()}
        self.real_names = dict(real_names or {})
        for shown in [*self.gold_docs, *self.real_names]:
            if shown not in self.functions:
                raise ConfigError(f"gold docs or a real name given for {shown!r}, which is none of the tools")
        self.state = state
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
        """The docs as the functions show them, or with ``gold`` the true docs (those shown where none were given)."""
        if docs not in (None, "gold"):
            raise ConfigError(f"{self.name}: docs are the functions' own or gold, not {docs!r}")
        tools = [copy.deepcopy(self.gold_docs[name]) if docs == "gold" and name in self.gold_docs
                 else self._documented(function) for name, function in self.functions.items()]
        return Toolbox({self.toolset: tools}, meta={"env": self.name, "setting": self.setting, "docs": docs or "base"})

    def toolset_of(self, task: dspy.Example) -> str:
        return self.toolset

    def execute(self, toolset: str, call: ToolCall) -> CallResult:
        """Call the function under its name, in a state of its own; whatever it raises comes back as the error an
        editor reads."""
        with self._state(None):
            return call_episode(self.faults, toolset, call.name).run(call, partial(self._call, call))

    def _state(self, task: dspy.Example | None) -> AbstractContextManager[object]:
        return self.state(task) if self.state is not None else nullcontext()

    def _call(self, call: ToolCall) -> CallResult:
        """A call whose shape did not fit (``call.problem``) is not made (an episode does not fault it either): its
        reason is the error."""
        if call.problem is not None:
            return CallResult.refused(call)
        function = self.functions.get(call.name)
        if function is None:
            return CallResult(call, False, error=f"NameError: no tool named {call.name!r}")
        try:
            return CallResult(call, True, output=function(**call.arguments))
        except Exception as exc:  # noqa: BLE001 - any failure of the user's tool is an outcome to learn from
            return CallResult(call, False, error=f"{type(exc).__name__}: {exc}")

    def rollout(self, agent: Agent, toolbox: Toolbox, task: dspy.Example) -> Trajectory:
        question = task.get(self.question_field)
        reply = agent(question=question, tools=toolbox.toolset(self.toolset))
        attempt = episode(self.faults, task_id(task))
        with self._state(task):  # the calls run in order against the task's own state, which is scored as they left it
            steps = [attempt.run(call, partial(self._call, call)) for call in reply.calls or []]
            trajectory = Trajectory(task_id=task_id(task), toolset=self.toolset, question=question, steps=steps,
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

    def oracle_agent(self, tasks: list[dspy.Example]) -> OracleAgent:
        """Replays each task's gold calls (its ``calls``) under the names the agent is shown."""
        shown_of = {self.real_names.get(shown, shown): shown for shown in self.functions}
        answers: dict[str, list[ToolCall]] = {}
        for task in tasks:
            if not isinstance(task.get("calls"), list):
                raise ConfigError(f"{self.name}: examples carry no gold calls, so there is no reference agent to run")
            calls = []
            for gold in task.get("calls"):
                shown = shown_of.get(gold["name"])
                if shown is None:
                    raise ConfigError(f"{self.name}: a gold call names {gold['name']!r}, which is none of the tools")
                calls.append(ToolCall(shown, dict(gold["arguments"])))
            question = task.get(self.question_field)
            if answers.setdefault(question, calls) != calls:
                raise ConfigError(f"{self.name}: two examples ask {question!r} with different gold calls")
        return OracleAgent(lambda question: answers[question])


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
        return toolbox.as_dspy_tools(self.toolset, self.functions)

    @classmethod
    def opaque(
        cls, functions: Sequence[Callable[..., Any]], examples: Sequence[dspy.Example], metric: Metric, *,
        presentation: str = "names_only", seed: int = 0, **options: Any,
    ) -> FunctionEnvironment:
        """``functions`` shown as ``function_1..N`` in an order ``seed`` shuffles, under ``presentation`` (one of
        :data:`PRESENTATIONS`), with their true docs as gold docs; ``options`` are the constructor's.

        Each tool runs as a copy of its function whose code carries the shown name, so a call that does not fit
        fails with ``function_3() missing 1 required positional argument: 'sku'``; gold calls in the examples
        name the real functions, and the oracle agent replays them under the shown names.
        """
        if presentation not in PRESENTATIONS:
            raise ConfigError(f"unknown presentation {presentation!r}; choose from {', '.join(PRESENTATIONS)}")
        order: list[types.FunctionType] = []
        for function in _by_name(functions).values():
            if not isinstance(function, types.FunctionType):
                raise ConfigError(f"opaque names need plain functions (a def) to rename, got {function!r}")
            order.append(function)
        random.Random(seed).shuffle(order)
        shown = {f"function_{index}": function for index, function in enumerate(order, start=1)}
        copies = [renamed(function, name, doc=function.__doc__ if presentation == "gold" else None)
                  for name, function in shown.items()]
        gold = [DocumentedTool(name, description=inspect.getdoc(function) or "", parameters=shown_parameters(function))
                for name, function in shown.items()]
        return cls(copies, examples, metric, show_parameters=presentation != "names_only", gold_docs=gold,
                   real_names={name: function.__name__ for name, function in shown.items()}, setting=presentation,
                   **options)

    def _documented(self, function: Callable[..., Any]) -> DocumentedTool:
        return DocumentedTool(function.__name__, description=inspect.getdoc(function) or "",
                              parameters=shown_parameters(function) if self.show_parameters else None)
