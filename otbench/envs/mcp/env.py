"""``MCPEnvironment``: an MCP server's tools, your tasks and a metric, as an environment every optimizer runs on.

One toolset, the server's tools, is shared by all tasks, so docs are learned offline: on the task file's train
tasks, then scored on its test tasks. Each call the agent makes goes to the server under the tool's real name; the
reply is read by :mod:`.replies` and the error, if any, names the tool as the agent saw it (under opaque names the
server's own names are replaced in what it answers). A server that hangs or dies fails the call it was making and
is started again (:mod:`.connection`).

A server that works on files (a database, a repository: a :class:`Fixture`) gets them built fresh in a folder of
its own for the environment's life, its command line's ``{fixture}`` naming that folder (also its working
folder). Each task's calls then run one task at a time, and the files are restored after every task and every
call made outside one, so no task sees what another changed; the agents' replies are still asked for in
parallel.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import dspy

from otbench.core.calls import DEFAULT_MAX_CALLS_PER_REPLY, CallResult, ToolCall
from otbench.core.faults import StateController, call_episode, episode
from otbench.core.trajectory import Trajectory
from otbench.envs.base import Agent, Closing, task_key
from otbench.envs.mcp import DEFAULT_TIMEOUT, SETTINGS
from otbench.envs.mcp.connection import ServerConnection
from otbench.envs.mcp.launch import ServerLaunch, http, stdio
from otbench.envs.mcp.metrics import BUILT_IN, score
from otbench.envs.mcp.shown import GoldDoc, checked_tools, documented, read_gold, scrubbed, shown_names
from otbench.envs.mcp.tasks import read_tasks
from otbench.errors import ConfigError
from otbench.modules.agent import FUNCTION_CALLING_INSTRUCTIONS, FunctionCallingAgent
from otbench.modules.program import ToolAgentProgram
from otbench.modules.reference_agents import OracleAgent
from otbench.modules.tool_docs import Toolbox

SCORE = "score"
TOOL_NAMES = "mcp_tools"
"""Meta key of the docs an MCP environment makes: each shown tool name's real one (``serve-docs`` reads it)."""
FIXTURE = "{fixture}"

Metric = Callable[[dspy.Example, Trajectory], Any]
"""A metric of your own: ``(example, trajectory) -> float | bool``, or an object with ``score`` and ``feedback``."""


@dataclass(frozen=True)
class Fixture:
    """Files a server works on: ``build(folder)`` writes them (the same files every time)."""

    build: Callable[[Path], None]


def server_launch(server: str | ServerLaunch) -> ServerLaunch:
    """A server given as a launch, a URL (``http://...``) or a command line."""
    if isinstance(server, ServerLaunch):
        return server
    return http(server) if server.startswith(("http://", "https://")) else stdio(server)


class MCPEnvironment(Closing):
    """An :class:`~otbench.envs.base.Environment` over an MCP server's tools.

    ``server`` is a command line that starts the server (stdio), a URL (streamable HTTP) or a
    :class:`~otbench.envs.mcp.launch.ServerLaunch`; ``tasks`` a task file (:mod:`.tasks`) or the
    ``{"train": [...], "test": [...]}`` examples; ``setting`` one of :data:`~otbench.envs.mcp.SETTINGS`;
    ``metric`` a built-in metric's name (:mod:`.metrics`) or a function of your own; ``gold_docs`` a gold docs
    file (:mod:`.shown`); ``timeout`` the seconds a call may take. The server starts here and stops when the
    environment is closed (``with`` or :meth:`close`).
    """

    primary_metric = SCORE
    metric_names = (SCORE,)
    learning = "offline"
    one_reply = True
    faults: StateController | None = None
    """Injects failures into the calls when set (:mod:`otbench.core.faults`)."""

    def __init__(
        self, server: str | ServerLaunch, tasks: str | Path | Mapping[str, Sequence[dspy.Example]], *,
        setting: str = "base", metric: str | Metric = BUILT_IN[0], tolerance: float = 1e-6,
        gold_docs: str | Path | None = None, timeout: float = DEFAULT_TIMEOUT, fixture: Fixture | None = None,
        name: str = "mcp", toolset: str = "mcp", instructions: str = FUNCTION_CALLING_INSTRUCTIONS,
    ) -> None:
        if setting not in SETTINGS:
            raise ConfigError(f"unknown MCP setting {setting!r}; choose from {', '.join(SETTINGS)}")
        if isinstance(metric, str) and metric not in BUILT_IN:
            raise ConfigError(f"unknown metric {metric!r}; choose from {', '.join(BUILT_IN)} or give a function")
        splits = read_tasks(Path(tasks)) if isinstance(tasks, (str, Path)) else {k: list(v) for k, v in tasks.items()}
        self.examples, self.test_examples = list(splits.get("train", [])), list(splits.get("test", []))
        self.name, self.setting, self.toolset = name, setting, toolset
        self.metric, self.tolerance = metric, tolerance
        self.agent_instructions = instructions
        launch = server_launch(server)
        self._folder = Path(tempfile.mkdtemp(prefix="otbench-mcp-")) if fixture is not None else None
        if fixture is not None and self._folder is not None:
            fixture.build(self._folder / "pristine")
            self._restore()
            launch = within(launch, self._folder / "work")
        self._turns: AbstractContextManager[object] = threading.Lock() if fixture is not None else nullcontext()
        self.connection = ServerConnection(launch, timeout=timeout)
        self._closed = weakref.finalize(self, _close, self.connection, self._folder)
        try:
            self.tools = {tool.name: tool for tool in checked_tools(self.connection.open())}
            self.shown = shown_names(list(self.tools), setting)
            self.shown_of = {real: shown for shown, real in self.shown.items()}
            self.gold: dict[str, GoldDoc] = read_gold(Path(gold_docs), list(self.tools)) if gold_docs else {}
            if setting == "gold" and not self.gold:
                raise ConfigError("the gold setting shows the true docs: give them (--gold-docs FILE)")
            self._check_tasks()
        except BaseException:
            self.close()  # a server that started for nothing is stopped at once
            raise

    def _check_tasks(self) -> None:
        """Refuse, before any run, tasks whose calls name no tool of the server or whose metric cannot read them."""
        for task in [*self.examples, *self.test_examples]:
            if not isinstance(task.get("question"), str):
                raise ConfigError(f"every task needs a question text, got {task!r}")
            for call in task.get("calls") or []:
                if call["name"] not in self.tools:
                    raise ConfigError(f"a task's calls name {call['name']!r}, which is none of the server's tools "
                                      f"({', '.join(self.tools)})")
            metric = task.get("metric") or (self.metric if isinstance(self.metric, str) else None)
            if metric == "calls" and task.get("calls") is None:
                raise ConfigError(f"task {task.get('question')!r}: the calls metric needs its calls")
            if metric == "numeric":
                answer = task.get("answer")
                if isinstance(answer, bool) or not isinstance(answer, (int, float, str)):
                    raise ConfigError(f"task {task.get('question')!r}: the numeric metric needs a number as answer")

    # -- the Environment contract --------------------------------------------------------------------------
    def tasks(self, split: str = "test") -> list[dspy.Example]:
        if split not in ("train", "test"):
            raise ConfigError(f"split must be train or test, got {split!r}")
        return list(self.examples if split == "train" else self.test_examples)

    def toolbox(self, docs: str | None = None) -> Toolbox:
        """The setting's docs, or with ``gold`` the true docs under the names the setting shows (a tool the gold docs
        leave out is shown as the server advertises it)."""
        if docs not in (None, "gold"):
            raise ConfigError(f"{self.name}: docs are the setting's own or gold, not {docs!r}")
        if docs == "gold" and not self.gold:
            raise ConfigError(f"{self.name}: no gold docs were given (--gold-docs FILE)")
        tools = []
        for shown, real in self.shown.items():
            true = docs == "gold" or self.setting == "gold"
            setting = "base" if true else self.setting
            tools.append(documented(self.tools[real], shown, setting, self.gold.get(real) if true else None))
        return Toolbox({self.toolset: tools}, meta={"env": self.name, "setting": self.setting, "docs": docs or "base",
                                                   TOOL_NAMES: dict(self.shown)})

    def toolset_of(self, task: dspy.Example) -> str:
        return self.toolset

    def execute(self, toolset: str, call: ToolCall) -> CallResult:
        """One call outside any task (an optimizer trying a tool); a server's files are restored after it."""
        with self._turn():
            return call_episode(self.faults, toolset, call.name).run(call, partial(self._call, call))

    def rollout(self, agent: Agent, toolbox: Toolbox, task: dspy.Example) -> Trajectory:
        question = task.get("question")
        reply = agent(question=question, tools=toolbox.toolset(self.toolset))
        attempt = episode(self.faults, task_key(task))
        calls = list(reply.calls or [])
        with self._turn():  # the reply's calls run in order, against files no other task is changing
            steps = [attempt.run(call, partial(self._call, call)) if number < DEFAULT_MAX_CALLS_PER_REPLY else
                     CallResult(call, False, error=f"not run: a reply runs at most {DEFAULT_MAX_CALLS_PER_REPLY} calls")
                     for number, call in enumerate(calls)]
        trajectory = Trajectory(task_id=task_key(task), toolset=self.toolset, question=question, steps=steps,
                                reply=reply.raw, parse_error=reply.error)
        value, feedback = self._score(task, trajectory)
        trajectory.metrics = {SCORE: value}
        trajectory.success = value >= 1.0
        trajectory.feedback = feedback
        return trajectory

    def summarise(self, trajectories: list[Trajectory]) -> dict[str, float]:
        scores = [t.metrics[SCORE] for t in trajectories]
        return {SCORE: sum(scores) / len(scores) if scores else 0.0, "n": float(len(scores))}

    def oracle_agent(self, tasks: list[dspy.Example]) -> OracleAgent:
        """Replays each task's ``calls`` under the names the agent is shown."""
        answers: dict[str, list[ToolCall]] = {}
        for task in tasks:
            if task.get("calls") is None:
                raise ConfigError(f"{self.name}: task {task.get('question')!r} has no calls, so there is no reference "
                                  "agent to run")
            calls = [ToolCall(self.shown_of[call["name"]], dict(call["arguments"])) for call in task.get("calls")]
            if answers.setdefault(task.get("question"), calls) != calls:
                raise ConfigError(f"{self.name}: two tasks ask {task.get('question')!r} with different calls")
        return OracleAgent(lambda question: answers[question])


    def close(self) -> None:
        """Stop the server and remove its files."""
        self._closed()

    # -- calls ---------------------------------------------------------------------------------------------
    @contextmanager
    def _turn(self) -> Iterator[None]:
        with self._turns:
            try:
                yield
            finally:
                if self._folder is not None:
                    self._restore()

    def _call(self, call: ToolCall) -> CallResult:
        """A call whose shape did not fit (``call.problem``) is not made (an episode does not fault it either): its
        reason is the error."""
        if call.problem is not None:
            return CallResult.refused(call)
        real = self.shown.get(call.name)
        if real is None:
            return CallResult(call, False, error=f"NameError: no tool named {call.name!r}")
        output, error = self.connection.call(real, call.arguments, shown=call.name)
        if error is None:
            return CallResult(call, True, output=output)
        if real != call.name:  # the SDK names a tool's arguments after its function: branchArguments gives git_branch away
            error = re.sub(r"\b[A-Za-z_][A-Za-z0-9_]*Arguments\b", f"{call.name}Arguments", error)
        return CallResult(call, False, error=scrubbed(error, self.shown_of))

    def _score(self, task: dspy.Example, trajectory: Trajectory) -> tuple[float, str]:
        metric = task.get("metric") or self.metric
        if isinstance(metric, str):
            return score(metric, task, trajectory, tolerance=self.tolerance, real_of=self.shown)
        judged = metric(task, trajectory)
        return float(judged.score if hasattr(judged, "score") else judged), str(getattr(judged, "feedback", "") or "")

    def _restore(self) -> None:
        """The server's files as built: what a task changed, added or removed is undone."""
        assert self._folder is not None
        pristine, work = self._folder / "pristine", self._folder / "work"
        work.mkdir(exist_ok=True)
        for entry in work.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        shutil.copytree(pristine, work, symlinks=True, dirs_exist_ok=True)

    # -- for the user ----------------------------------------------------------------------------------------
    def program(self, lm: dspy.LM | None = None) -> ToolAgentProgram:
        """A student for the optimizers: the function-calling agent (``lm``, else ``dspy.settings.lm``) and the
        setting's docs."""
        agent = FunctionCallingAgent(instructions=self.agent_instructions)
        agent.lm = lm
        return ToolAgentProgram(self.toolbox(), agent)

    def dspy_tools(self, learned: ToolAgentProgram | Toolbox) -> list[dspy.Tool]:
        """The server's tools as ``dspy.Tool``s showing ``learned``'s docs, each calling the server (a failed call
        returns its error text), for any DSPy agent (``dspy.ReAct``)."""
        toolbox = learned.toolbox if isinstance(learned, ToolAgentProgram) else learned
        return toolbox.as_dspy_tools(self.toolset, {shown: self._caller(shown) for shown in self.shown})

    def _caller(self, shown: str) -> Callable[..., Any]:
        def call(**arguments: Any) -> Any:
            result = self.execute(self.toolset, ToolCall(shown, arguments))
            return result.output if result.ok else result.error

        call.__name__ = shown
        return call


def within(launch: ServerLaunch, folder: Path) -> ServerLaunch:
    """``launch`` run in ``folder``, its arguments' ``{fixture}`` naming it."""
    command = tuple(part.replace(FIXTURE, str(folder)) for part in launch.command)
    return replace(launch, command=command, cwd=folder)


def _close(connection: ServerConnection, folder: Path | None) -> None:
    connection.close()
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
