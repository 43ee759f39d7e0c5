"""The pool: a thousand opaque tools the agent reaches only through ``search_tools``, as ToolGym's agents do.

Offline learning: one toolset, ``pool``, holds every tool of the chosen pool size; docs are learned on the train
tasks and scored on the test tasks, and the docs learned are what every later task's searches and calls read.
The environment drives a multi-turn loop, as BrowseComp's does: each turn the agent reads the request and every
earlier call with its result, and replies with calls. It starts with two fixed tools, ``search_tools`` and
``final_answer`` (neither in the toolbox, so no optimizer edits them, and neither ever faulted); a search returns
the top-k tools for a query, with their app and current docs, and those tools become callable for the rest of the
task (the :data:`MAX_LOADED` most recently found). Tool calls run in the sandbox's worker processes under the
names shown, through the fault controller when one is set. A task ends with ``final_answer``, or after
``max_steps`` replies, the last of which is offered ``final_answer`` alone.

Searches and tool calls are both the attempt's steps, in order: an editor reads which query found (or missed)
which tool beside what each tool did, which is what learning findable docs needs.

With the ``usage`` index (``--pool-index usage``) the environment also remembers, for each tool, the train requests
it answered (a train attempt scored right, a call of the tool that returned without error) and every later search
finds a tool by those requests as well as by its docs (:mod:`.index`); test requests are never remembered, so no
test answer leaks into the index. The memory lives as long as the environment: an optimize run learns on the train
split and scores the test split with the same one, and saves it in the docs file it writes, so that the docs
evaluated later (``--docs runs:/ID --pool-index usage``) find tools as they did when learned.
"""

from __future__ import annotations

import copy
import math
import re
import threading
from collections import OrderedDict
from typing import Any

from otbench.core.calls import DEFAULT_MAX_CALLS_PER_REPLY, CallResult, ToolCall
from otbench.core.faults import Episode, StateController, call_episode, episode
from otbench.core.sandbox import CallSandbox
from otbench.core.trajectory import Trajectory, json_text
from otbench.envs.base import Agent, Closing
from otbench.envs.pool import catalogue, docs, metrics
from otbench.envs.pool.functions import REGISTRY
from otbench.envs.pool.index import INDEXES, EmbeddingStore, MiniLmEncoder, Snapshot, ToolIndex, default_store_path
from otbench.envs.pool.settings import DEFAULT_INDEX, DEFAULT_POOL_SIZE, MAX_STEPS, POOL_SIZES, SETTINGS
from otbench.envs.pool.tasks import SPLITS, PoolTask, pool_tasks
from otbench.errors import ConfigError, DataError
from otbench.modules.reference_agents import OracleAgent
from otbench.modules.tool_docs import DocumentedTool, ParameterSpec, Toolbox

TOOLSET = "pool"
SEARCH_TOOL, ANSWER_TOOL = "search_tools", "final_answer"
DEFAULT_K, MAX_K = 5, 10
MAX_LOADED = 20
"""Tools callable at once: those the latest searches found; older ones must be found again (prompts stay short)."""
USAGE_KEPT = 16
"""Train requests remembered per tool by the usage index (the first ones answered)."""
_OUTPUT_CHARS = 300
_CALL_LINE = re.compile(r"^Call \d+:", re.MULTILINE)

POOL_INSTRUCTIONS = f"""\
You answer a request by finding tools and calling them. At first you have only {SEARCH_TOOL} and {ANSWER_TOOL}: \
call {SEARCH_TOOL} with a query saying what you need done (a few words, such as what a tool computes or looks up) \
and k, how many tools to show (at most {MAX_K}). The tools it finds join your tool list with their documentation, \
and you can call them from the next reply on. Some tools are undocumented: guess from their names, parameters and \
app, and try them. When the request needs several steps, find and call the tools one after another, feeding each \
result to the next tool. When a call returned the answer, call {ANSWER_TOOL} with the answer alone, as the tool \
returned it."""


def search_tool() -> DocumentedTool:
    """The fixed tool that finds tools."""
    return DocumentedTool(
        SEARCH_TOOL, description="Finds the tools whose documentation best matches a query and adds them to your tools.",
        parameters=[ParameterSpec("query", "string"), ParameterSpec("k", "integer", required=False, default=DEFAULT_K)],
        parameter_descriptions={"query": "what you need a tool for, in a few words",
                                "k": f"how many tools to return, 1 to {MAX_K}"},
        returns="the tools found: name, app and documentation")


def answer_tool() -> DocumentedTool:
    """The fixed tool the agent answers with."""
    return DocumentedTool(ANSWER_TOOL, description="Gives your final answer to the request. Ends the task.",
                          parameters=[ParameterSpec("answer", "any")],
                          parameter_descriptions={"answer": "the answer alone, as the tool returned it"})


def setting_name(setting: str, pool_size: str, max_steps: int, index: str = DEFAULT_INDEX) -> str:
    """What MLflow groups runs by: the setting, plus the pool size, step budget and index where they are not the
    defaults."""
    changed = [f"pool={pool_size}" if pool_size != DEFAULT_POOL_SIZE else "",
               f"steps={max_steps}" if max_steps != MAX_STEPS else "",
               f"index={index}" if index != DEFAULT_INDEX else ""]
    return " ".join([setting, *filter(None, changed)])


def _line(number: int, result: CallResult) -> str:
    """One call and its result, as the agent reads it."""
    call = result.call
    if call.name == SEARCH_TOOL and result.ok:
        found = ", ".join(f"{tool['name']} ({tool['app']})" for tool in result.output) or "nothing"
        return f"Call {number}: {SEARCH_TOOL}({json_text(call.arguments)}) -> found {found}"
    if result.ok:
        shown = json_text(result.output)
        if len(shown) > _OUTPUT_CHARS:
            shown = f"{shown[:_OUTPUT_CHARS]}... ({len(shown)} characters)"
    else:
        shown = "error: " + " ".join(str(result.error).split())
    return f"Call {number}: {call.name}({json_text(call.arguments)}) -> {shown}"


def turn_text(request: str, steps: list[CallResult], replies_left: int) -> str:
    """What the agent reads each turn: the request, every earlier call with its result, and what it may do now."""
    lines = [request, ""]
    lines.extend(_line(number, step) for number, step in enumerate(steps, start=1))
    if steps:
        lines.append("")
    if replies_left > 1:
        lines.append(f"Replies left: {replies_left}. Search for tools, call a tool you found, or call {ANSWER_TOOL}.")
    else:
        lines.append(f"This is your last reply: call {ANSWER_TOOL} now with your best answer.")
    return "\n".join(lines)


class PoolEnvironment(Closing):
    """The pool of ``pool_size`` tools (30, 300, 1000 or all) under one of BFCL's settings.

    ``index`` searches the docs (default: all-MiniLM-L6-v2 embeddings kept in the cache, loaded at the first
    search); ``index_kind`` is ``docs`` or ``usage`` (module docstring); ``workers`` and ``call_timeout`` bound the
    sandbox as on BFCL. Close it (or use ``with``) to stop the
    sandbox's workers.
    """

    name = "pool"
    primary_metric = "accuracy"
    tie_break_metric = "recall_at_5"
    metric_names = metrics.METRIC_NAMES
    metric_rules = metrics.METRIC_RULES
    learning = "offline"
    one_reply = False
    agent_instructions = POOL_INSTRUCTIONS
    faults: StateController | None = None
    """Injects failures into pool tool calls when set (:mod:`otbench.core.faults`); searches and answers never fail."""

    def __init__(self, *, setting: str = "names_only", pool_size: str = DEFAULT_POOL_SIZE, max_steps: int = MAX_STEPS,
                 index: ToolIndex | None = None, index_kind: str = DEFAULT_INDEX, workers: int = 1,
                 call_timeout: float = 5.0,
                 max_calls_per_reply: int = DEFAULT_MAX_CALLS_PER_REPLY) -> None:
        if setting not in SETTINGS:
            raise ConfigError(f"unknown setting {setting!r}; choose from {', '.join(SETTINGS)}")
        if pool_size not in POOL_SIZES:
            raise ConfigError(f"unknown pool size {pool_size!r}; choose from {', '.join(POOL_SIZES)}")
        if max_steps < 2 or max_calls_per_reply < 1:
            raise ConfigError("--pool-steps must be at least 2 (a search, then the answer)")
        if index_kind not in INDEXES:
            raise ConfigError(f"unknown pool index {index_kind!r}; choose from {', '.join(INDEXES)}")
        self.pool_setting, self.pool_size, self.max_steps = setting, pool_size, max_steps
        self.max_calls_per_reply = max_calls_per_reply
        self.index_kind = index_kind
        self.setting = setting_name(setting, pool_size, max_steps, index_kind)
        self.usage: dict[str, list[str]] = {}
        """Shown tool name -> the train requests it answered (the ``usage`` index only)."""
        self._usage_lock = threading.Lock()
        self.specs = list(catalogue.pool(pool_size))
        self.to_real = {catalogue.shown_names()[spec.name]: spec.name for spec in self.specs}
        self.to_shown = {real: shown for shown, real in self.to_real.items()}
        self.apps = docs.app_names(self.specs, setting)
        self._index = index
        self._index_lock = threading.Lock()
        self._texts: dict[str, tuple[Any, tuple[ParameterSpec, ...] | None, str]] = {}
        self._prototypes: dict[str | None, Toolbox] = {}
        self.search, self.answer = search_tool(), answer_tool()
        self.sandbox = CallSandbox(REGISTRY, timeout=call_timeout, workers=workers)

    # -- the Environment contract ------------------------------------------------------------------------------
    def tasks(self, split: str = "test") -> list[PoolTask]:
        if split not in SPLITS:
            raise ConfigError(f"unknown split {split!r}; the pool has train and test")
        return pool_tasks(self.to_shown, split)

    def toolbox(self, docs_source: str | None = None) -> Toolbox:
        """The setting's docs of every pool tool, or with ``"gold"`` their true docs, under the same names."""
        if docs_source not in (None, "gold"):
            raise ConfigError(f"the pool's docs are its setting's own or gold, not {docs_source!r}")
        if docs_source not in self._prototypes:
            tools = docs.setting_tools(self.specs, docs_source or self.pool_setting)
            self._prototypes[docs_source] = Toolbox({TOOLSET: tools}, meta={
                "env": self.name, "setting": self.setting, "docs": docs_source or "base"})
        return copy.deepcopy(self._prototypes[docs_source])

    def toolset_of(self, task: PoolTask) -> str:
        return TOOLSET

    def execute(self, toolset: str, call: ToolCall) -> CallResult:
        """One call of a pool tool outside any task (an optimizer exploring it); searching needs a task's docs."""
        if call.name in (SEARCH_TOOL, ANSWER_TOOL):
            return CallResult(call, False, error=f"{call.name} runs only inside a task")
        return self._run(call, call_episode(self.faults, toolset, call.name))

    def rollout(self, agent: Agent, toolbox: Toolbox, task: PoolTask) -> Trajectory:
        current = {tool.name: tool for tool in toolbox.toolset(TOOLSET) if tool.name in self.to_real}
        with self._usage_lock:
            usage = {name: tuple(requests) for name, requests in self.usage.items()}
        snapshot = self.index.snapshot(self.doc_entries(toolbox), usage)
        needed = [self.to_shown[real] for real in task.needs]
        attempt = episode(self.faults, task.id)
        steps: list[CallResult] = []
        rankings: list[list[str]] = []
        loaded: OrderedDict[str, None] = OrderedDict()
        raws, errors = [], []
        answer: Any = None
        answered = False
        for turn in range(self.max_steps):
            left = self.max_steps - turn
            offered = [self.answer] if left == 1 else [self.search, *(current[name] for name in loaded), self.answer]
            reply = agent(question=turn_text(task.text, steps, left), tools=offered)
            raws.append(reply.raw)
            if not reply.calls:
                errors.append(reply.error or "no call")
                continue
            for call in reply.calls[: self.max_calls_per_reply]:
                if call.name == ANSWER_TOOL and call.problem is None:
                    answer, answered = call.arguments.get("answer"), True
                    break
                if left == 1:
                    errors.append(call.refusal() if call.problem else f"called {call.name!r} on the last reply")
                elif call.name == SEARCH_TOOL:
                    steps.append(self._search(call, snapshot, current, loaded, rankings, set(needed)))
                else:
                    steps.append(self._call(call, loaded, attempt))
            if answered:
                break
        calls = [step for step in steps if step.call.name != SEARCH_TOOL]
        score = metrics.score_attempt(answer=answer, answered=answered, expected=task.answer,
                                      outputs=[step.output for step in calls if step.ok], needed=needed,
                                      rankings=rankings, calls=len(calls))
        if score["accuracy"] == 1.0:
            self._remember(task, [step.call.name for step in calls if step.ok])
        found = sum(rank is not None for rank in metrics.best_ranks(needed, rankings).values())
        feedback = (f"answered {answer!r}; the correct answer is {task.answer!r}" if answered
                    else f"gave no answer; the correct answer is {task.answer!r}")
        feedback += f"; its searches found {found} of the {len(needed)} tool(s) the request needs"
        return Trajectory(task_id=task.id, toolset=TOOLSET, question=task.text, steps=steps,
                          reply="\n".join(raws), parse_error="; ".join(errors) or None,
                          metrics={**score, "tools_needed": float(len(needed))}, success=score["accuracy"] == 1.0,
                          feedback=feedback)

    def answers(self, task: PoolTask, output: Any, *, within: float = 0.0) -> bool:
        """Whether one call's ``output`` is ``task``'s answer itself: a request's answer is what the tool it needs
        returns, and within the accuracy metric's tolerance one of a thousand tools' outputs lands on an unrelated
        request's answer by chance about once a tool. ``within``: the relative distance still counted, for a number
        predicted rather than returned."""
        expected = task.answer
        if not _is_number(expected) or not _is_number(output):
            return metrics.matches(expected, output)
        if not within:
            return bool(output == expected)
        try:
            return math.isclose(output, expected, rel_tol=within)
        except OverflowError:  # an integer too large for a float
            return bool(output == expected)

    def summarise(self, trajectories: list[Trajectory]) -> dict[str, float]:
        return metrics.summarise([t.metrics for t in trajectories])

    def breakdown(self, trajectories: list[Trajectory]) -> dict[str, list[dict[str, Any]]]:
        """Accuracy and retrieval by how many tools a task needs (one, or a workflow of two or three)."""
        rows = []
        for needed in sorted({t.metrics.get("tools_needed", 1.0) for t in trajectories}):
            group = [t.metrics for t in trajectories if t.metrics.get("tools_needed", 1.0) == needed]
            summary = metrics.summarise(group)
            rows.append({"tools_needed": int(needed), "n": len(group),
                         **{name: round(summary[name], 4) for name in ("accuracy", "recall_at_5", "ndcg_at_10")}})
        return {"pool_breakdown": rows}

    def oracle_agent(self, tasks: list[PoolTask]) -> OracleAgent:
        """Finds each tool the task needs by its name, calls the gold calls in order and answers: it must score 1
        on accuracy and on every recall."""
        plans = {task.text: self.oracle_calls(task) for task in tasks}

        def next_call(text: str) -> list[ToolCall]:
            request = text.split("\n\n", 1)[0]
            return [plans[request][len(_CALL_LINE.findall(text))]]

        return OracleAgent(next_call)

    # -- the pool's own ----------------------------------------------------------------------------------------
    def _remember(self, task: PoolTask, tools: list[str]) -> None:
        """The usage index's memory: a train request answered right, for each tool it called without error."""
        if self.index_kind != "usage" or task.split != "train":
            return
        with self._usage_lock:
            for name in dict.fromkeys(tools):
                if name in self.to_real:
                    requests = self.usage.setdefault(name, [])
                    if task.text not in requests and len(requests) < USAGE_KEPT:
                        requests.append(task.text)

    def memory(self) -> dict[str, Any]:
        """The usage index's memory, saved with the docs learned beside it (empty with the ``docs`` index)."""
        with self._usage_lock:
            usage = {name: list(requests) for name, requests in self.usage.items()}
        return {"env": self.name, "usage": usage} if usage else {}

    def restore_memory(self, memory: dict[str, Any]) -> None:
        """Take back the usage index's memory saved with docs (read by the ``usage`` index only; tools not in this
        pool size are skipped, as a pool of 300 holds only part of what the pool of 1,000 learned)."""
        usage = memory.get("usage")
        if memory.get("env") != self.name or self.index_kind != "usage" or usage is None:
            return
        if not isinstance(usage, dict) or not all(
                isinstance(requests, list) and all(isinstance(text, str) for text in requests)
                for requests in usage.values()):
            raise DataError("the docs' saved usage memory must map tool names to lists of requests")
        with self._usage_lock:
            for name, requests in usage.items():
                if name in self.to_real:
                    kept = self.usage.setdefault(name, [])
                    kept.extend(text for text in requests if text not in kept)
                    del kept[USAGE_KEPT:]

    def oracle_calls(self, task: PoolTask) -> list[ToolCall]:
        searches = [ToolCall(SEARCH_TOOL, {"query": self.to_shown[real], "k": 1}) for real in task.needs]
        calls = [ToolCall(self.to_shown[call.tool], dict(call.arguments)) for call in task.calls]
        return [*searches, *calls, ToolCall(ANSWER_TOOL, {"answer": task.answer})]

    @property
    def index(self) -> ToolIndex:
        """The search index; the default one (the embedding model) is loaded at the first search."""
        with self._index_lock:
            if self._index is None:
                encoder = MiniLmEncoder()
                self._index = ToolIndex(EmbeddingStore(encoder, default_store_path(encoder)))
            return self._index

    def doc_entries(self, toolbox: Toolbox) -> list[tuple[str, str]]:
        """``(name, doc text)`` of every pool tool in ``toolbox``: what the index embeds for these docs."""
        return [(tool.name, self._text(tool)) for tool in toolbox.toolset(TOOLSET) if tool.name in self.to_real]

    def _text(self, tool: DocumentedTool) -> str:
        """The tool's doc text for the index, kept while its docs (signature and schema) stay the same objects."""
        kept = self._texts.get(tool.name)
        if kept is not None and kept[0] is tool.signature and kept[1] == tool.parameters:
            return kept[2]
        text = docs.doc_text(tool, self.apps[tool.name])
        self._texts[tool.name] = (tool.signature, tool.parameters, text)
        return text

    def _search(self, call: ToolCall, snapshot: Snapshot, current: dict[str, DocumentedTool],
                loaded: OrderedDict[str, None], rankings: list[list[str]], needed: set[str]) -> CallResult:
        """Run one search: the top ``k`` tools with their docs, loaded for the rest of the task; the index's
        ranking to :data:`metrics.DEPTH` is kept for the retrieval metrics. Its value is 1 when a tool shown is one
        the task needs (what an optimizer compares searches by)."""
        if call.problem is not None:
            return CallResult.refused(call)
        query, k = call.arguments.get("query"), call.arguments.get("k", DEFAULT_K)
        if not isinstance(query, str) or not query.strip():
            return CallResult(call, False, error=f"TypeError: {SEARCH_TOOL}() needs a non-empty string 'query'")
        if isinstance(k, float) and k.is_integer():  # JSON's 5.0 is a whole number
            k = int(k)
        if isinstance(k, bool) or not isinstance(k, int):
            return CallResult(call, False, error=f"TypeError: {SEARCH_TOOL}() 'k' must be a whole number from 1 to "
                                                 f"{MAX_K}")
        shown = max(1, min(k, MAX_K))
        ranking = self.index.search(snapshot, query, metrics.DEPTH)
        rankings.append(ranking)
        found = ranking[:shown]
        for name in found:
            loaded[name] = None
            loaded.move_to_end(name)
        while len(loaded) > MAX_LOADED:
            loaded.popitem(last=False)
        output = [{**current[name].to_dict(), "app": self.apps[name]} for name in found]
        return CallResult(call, True, output=output, value=float(bool(needed & set(found))))

    def _call(self, call: ToolCall, loaded: OrderedDict[str, None], attempt: Episode) -> CallResult:
        if call.problem is None and call.name in self.to_real and call.name not in loaded:
            return CallResult(call, False, error=f"NameError: {call.name} is not loaded: find it with {SEARCH_TOOL} "
                                                 "first")
        return self._run(call, attempt)

    def _run(self, call: ToolCall, attempt: Episode) -> CallResult:
        return attempt.run(call, lambda: self.sandbox.run(call, self.to_real.get(call.name)))

    def close(self) -> None:
        self.sandbox.close()


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
