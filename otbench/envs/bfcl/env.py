"""BFCL-Opaque: BFCL's executable tests with their tools' documentation degraded.

Every test is its own toolset (test-time learning per instance). Calls execute in a sandbox
under the names the agent saw, and are scored with E, P and A against the gold calls, whose
outputs come from executing them with the same functions. Scoring happens under the shown names
too (gold calls renamed), so a call to a hidden real name is a call to an unknown tool.

A reply's calls beyond ``max_calls_per_reply`` are not run: they are failed calls, as are calls
whose shape did not fit (:func:`otbench.core.calls.checked_call`), so one reply costs at most that
many executions, each returning at most ``max_output_bytes``.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

from otbench.core.calls import DEFAULT_MAX_CALLS_PER_REPLY, CallResult, ToolCall
from otbench.core.faults import Episode, StateController, call_episode, episode
from otbench.core.sandbox import DEFAULT_MAX_OUTPUT_BYTES, CallSandbox
from otbench.core.trajectory import Trajectory
from otbench.envs.base import Agent, Closing
from otbench.envs.bfcl.data import DEFAULT_CATEGORIES, BfclTest, load_tests
from otbench.envs.bfcl.gold import parse_call
from otbench.envs.bfcl.metrics import TestScore, score_test, summarise
from otbench.envs.bfcl.opacity import SETTINGS, documented_tools, shown_names
from otbench.errors import ConfigError
from otbench.modules.agent import FUNCTION_CALLING_INSTRUCTIONS
from otbench.modules.reference_agents import OracleAgent
from otbench.modules.tool_docs import Toolbox

FUNCTION_REGISTRY = "otbench.envs.bfcl.functions:FUNCTIONS"


class BfclEnvironment(Closing):
    """BFCL-Opaque under one documentation setting.

    ``call_timeout`` bounds every execution (CPU seconds, so load does not change verdicts);
    ``workers`` is the number of sandbox processes, one per concurrent rollout;
    ``max_calls_per_reply`` and ``max_output_bytes`` bound what one reply can cost. Close it (or
    use ``with``) to stop the workers. ``faults``, when set, injects failures into the agent's calls
    (never into the gold calls scoring compares them with).
    """

    name = "bfcl"
    primary_metric = "E"
    metric_names = ("E", "P", "A")
    learning = "online"
    one_reply = True
    replayable_calls = True
    agent_instructions = FUNCTION_CALLING_INSTRUCTIONS
    faults: StateController | None = None

    def __init__(
        self, *, setting: str = "names_only", categories: tuple[str, ...] = DEFAULT_CATEGORIES,
        tests: list[BfclTest] | None = None, call_timeout: float = 5.0, workers: int = 1,
        max_calls_per_reply: int = DEFAULT_MAX_CALLS_PER_REPLY, max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    ) -> None:
        if setting not in SETTINGS:
            raise ConfigError(f"unknown setting {setting!r}; choose from {', '.join(SETTINGS)}")
        if max_calls_per_reply < 1 or max_output_bytes < 1:
            raise ConfigError("--max-calls-per-reply and --max-output-bytes must be at least 1")
        self.setting = setting
        self.max_calls_per_reply = max_calls_per_reply
        self._tests = tests if tests is not None else load_tests(categories)
        self._by_id = {test.id: test for test in self._tests}
        self.sandbox = CallSandbox(FUNCTION_REGISTRY, timeout=call_timeout, workers=workers,
                                   max_output_bytes=max_output_bytes)
        self._gold_outputs: dict[str, list[Any]] = {}
        self._gold_lock = threading.Lock()

    # -- the Environment interface -------------------------------------------------------------
    def tasks(self, split: str = "test") -> list[BfclTest]:
        if split != "test":
            raise ConfigError("BFCL-Opaque has only a test split: it learns per test, at test time")
        return list(self._tests)

    def toolbox(self, docs: str | None = None) -> Toolbox:
        """The setting's docs; ``gold``: the gold setting's (BFCL's true docs, under the functions' real names)."""
        chosen = docs or self.setting
        return Toolbox(
            {test.id: documented_tools(test.functions, chosen) for test in self._tests},
            meta={"env": self.name, "setting": chosen},
        )

    def toolset_of(self, task: BfclTest) -> str:
        return task.id

    def execute(self, toolset: str, call: ToolCall) -> CallResult:
        task = self._by_id.get(toolset)
        if task is None:
            raise KeyError(f"no BFCL test {toolset!r}")
        return self._execute(call, shown_names(task.functions, self.setting), call_episode(self.faults, toolset, call.name))

    def rollout(self, agent: Agent, toolbox: Toolbox, task: BfclTest) -> Trajectory:
        reply = agent(question=task.question, tools=toolbox.toolset(task.id))
        to_real = shown_names(task.functions, self.setting)
        calls = None if reply.calls is None else self._within_cap(reply.calls)
        attempt = episode(self.faults, task.id)
        steps = [self._execute(call, to_real, attempt) for call in calls or []]
        score = self.score(task, calls, steps)
        return Trajectory(
            task_id=task.id, toolset=task.id, question=task.question, steps=steps, reply=reply.raw,
            parse_error=reply.error, metrics={"E": score.E, "P": score.P, "A": score.A}, success=score.E == 1.0,
        )

    def summarise(self, trajectories: list[Trajectory]) -> dict[str, float]:
        return summarise([TestScore(**{k: t.metrics[k] for k in ("E", "P", "A")}) for t in trajectories])

    def oracle_agent(self, tasks: list[BfclTest]) -> OracleAgent:
        answers = {task.question: self.oracle_calls(task) for task in tasks}
        return OracleAgent(lambda question: answers[question])

    # -- BFCL specifics ------------------------------------------------------------------------
    def gold_calls(self, task: BfclTest) -> list[ToolCall]:
        return [parse_call(text) for text in task.ground_truth]

    def oracle_calls(self, task: BfclTest) -> list[ToolCall]:
        """The gold calls under the names this setting shows (what a perfect agent would emit)."""
        to_shown = {real: shown for shown, real in shown_names(task.functions, self.setting).items()}
        return [ToolCall(to_shown[call.name], call.arguments) for call in self.gold_calls(task)]

    def gold_outputs(self, task: BfclTest) -> list[Any]:
        with self._gold_lock:
            cached = self._gold_outputs.get(task.id)
        if cached is None:
            cached = []
            for call in self.gold_calls(task):
                ok, output = self.sandbox.call(call.name, call.name, call.arguments)
                if not ok:
                    raise RuntimeError(f"{task.id}: gold call {call.name} failed: {output}")
                cached.append(output)
            with self._gold_lock:
                self._gold_outputs[task.id] = cached
        return cached

    def score(self, task: BfclTest, calls: list[ToolCall] | None, steps: list[CallResult]) -> TestScore:
        """E, P and A of ``calls`` (under the shown names; None when the reply held no call) and their ``steps``."""
        to_shown = {real: shown for shown, real in shown_names(task.functions, self.setting).items()}
        return score_test(
            model_calls=calls,
            model_results=steps,
            gold_calls=self.oracle_calls(task),
            gold_outputs=self.gold_outputs(task),
            result_types=task.result_types,
            schemas={to_shown[f["name"]]: f for f in task.functions},
        )

    def _within_cap(self, calls: list[ToolCall]) -> list[ToolCall]:
        """``calls``, those past the cap turned into failed calls that say why they were not run."""
        cap = self.max_calls_per_reply
        if len(calls) <= cap:
            return calls
        problem = f"not run: the reply made {len(calls)} calls, more than the {cap} allowed"
        return [*calls[:cap], *(call if call.problem else dataclasses.replace(call, problem=problem)
                                for call in calls[cap:])]

    def _execute(self, call: ToolCall, to_real: dict[str, str], attempt: Episode) -> CallResult:
        return attempt.run(call, lambda: self._run(call, to_real))

    def _run(self, call: ToolCall, to_real: dict[str, str]) -> CallResult:
        return self.sandbox.run(call, to_real.get(call.name))

    def close(self) -> None:
        self.sandbox.close()

