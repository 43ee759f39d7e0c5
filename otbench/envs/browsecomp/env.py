"""BrowseComp Domains: answer multi-hop questions by searching a corpus with opaque domain tools.

Offline learning: one toolset shared by all questions, docs learned on the train split and scored
on the test split. The environment drives a multi-turn loop: each turn the agent sees the
question and every earlier call with its results, and makes one call, either a search or the
fixed ``final_answer`` tool (never part of the toolbox, so never edited). When the search budget
is spent, only ``final_answer`` is offered. An exact repeat of an earlier search is refused (by default): it spends
a search, runs nothing, and the next turn says where its results already are.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from otbench.core.calls import CallResult, ToolCall, earlier_identical
from otbench.core.faults import Episode, StateController, call_episode, episode
from otbench.core.trajectory import Trajectory
from otbench.envs.base import Agent, Closing
from otbench.envs.browsecomp import defaults
from otbench.envs.browsecomp.dataset import DEFAULT_SPEC, Dataset, GenerationSpec, load_dataset
from otbench.envs.browsecomp.metrics import METRIC_NAMES, score_attempt, summarise
from otbench.envs.browsecomp.questions import Question
from otbench.envs.browsecomp.retrieval import RETRIEVERS, open_retriever
from otbench.envs.browsecomp.settings import SETTINGS
from otbench.envs.browsecomp.tools import ANSWER_TOOL, Searcher, answer_tool, documented_tools, tool_names
from otbench.errors import ConfigError
from otbench.modules.reference_agents import OracleAgent
from otbench.modules.tool_docs import Toolbox

BROWSECOMP_INSTRUCTIONS = """\
You answer a question that needs several facts looked up one after another, by searching a \
collection of web pages with the tools given. Each reply calls exactly one tool: a search tool \
with a query (a name plus what you want to know about it works best), or final_answer once you \
know the answer. Only the first call of a reply runs. Search results show the start of each \
page. When a tool is undocumented or you are unsure what it covers, try it: that is how its \
behaviour is learned. Pages about other things that share a name can appear: check that a \
result is about the entity you mean. Give the answer alone (a name, a year or a code), not a sentence."""

_CALL_LINE = re.compile(r"^Call \d+:", re.MULTILINE)


def _render_results(output: Any) -> str:
    if not output:
        return "  (no results)"
    return "\n".join(f"  {i}. {r['title']} | {r['url']} | {' '.join(r['snippet'].split())}"
                     for i, r in enumerate(output, start=1))


def turn_text(question: str, steps: list[CallResult], calls_left: int, repeated: int | None = None) -> str:
    """What the agent reads each turn: the question, every earlier call and its results, the budget, and, when
    its last call repeated call number ``repeated`` and was not run, that its results are already there."""
    lines = [question, ""]
    for number, step in enumerate(steps, start=1):
        query = step.call.arguments.get("query")
        lines.append(f"Call {number}: {step.call.name}(query={query!r})")
        lines.append(_render_results(step.output) if step.ok else f"  error: {step.error}")
    if steps:
        lines.append("")
    if repeated is not None:
        lines.append(f"Your last call repeated call {repeated} exactly, so it was not run: its results are above. "
                     "Search for something new, such as a name those results give, or another tool.")
    if calls_left > 0:
        lines.append(f"Searches left: {calls_left}. Search, or call {ANSWER_TOOL} if you know the answer.")
    else:
        lines.append(f"No searches left: call {ANSWER_TOOL} now with your best answer.")
    return "\n".join(lines)


def setting_name(setting: str, retriever: str, snippet_chars: int, max_calls: int,
                 repeats_refused: bool = defaults.REPEATS_REFUSED) -> str:
    """What MLflow groups runs by: the setting, plus every retrieval option that differs from its default."""
    changed = [retriever if retriever != "bm25" else "",
               f"snippet={snippet_chars}" if snippet_chars != defaults.SNIPPET_CHARS else "",
               f"calls={max_calls}" if max_calls != defaults.MAX_CALLS else "",
               "" if repeats_refused == defaults.REPEATS_REFUSED else f"repeats={'refused' if repeats_refused else 'run'}"]
    return " ".join([setting, *filter(None, changed)])


class BrowseCompEnvironment(Closing):
    """BrowseComp Domains under one setting (``domains`` or ``domains+all``: which search tools there are).

    ``setting`` names the setting and any non-default retrieval option (runs are grouped by it); ``toolset``
    is the id of the one toolset all questions share, named after the setting;
    ``retriever`` is ``bm25`` or ``dense``; ``k`` results per search, taken from the first
    ``depth`` whole-corpus hits of the tool's domain; snippets are cut at ``snippet_chars``;
    ``repeats_refused``: an exact repeat of an earlier search of the question spends a search and runs nothing.
    """

    name = "browsecomp"
    primary_metric = "accuracy"
    tie_break_metric = "evidence_recall"
    metric_names = METRIC_NAMES
    learning = "offline"
    one_reply = False
    agent_instructions = BROWSECOMP_INSTRUCTIONS
    faults: StateController | None = None
    """Injects failures into searches when set (:mod:`otbench.core.faults`); ``final_answer`` is never faulted."""

    def __init__(
        self, *, setting: str = SETTINGS[0], retriever: str = "bm25", snippet_chars: int = defaults.SNIPPET_CHARS,
        max_calls: int = defaults.MAX_CALLS, k: int = defaults.K, depth: int = defaults.DEPTH,
        spec: GenerationSpec = DEFAULT_SPEC, dataset: Dataset | None = None,
        repeats_refused: bool = defaults.REPEATS_REFUSED,
    ) -> None:
        if setting not in SETTINGS:
            raise ConfigError(f"unknown setting {setting!r}; choose from {', '.join(SETTINGS)}")
        if retriever not in RETRIEVERS:
            raise ConfigError(f"unknown retriever {retriever!r}; choose from {', '.join(RETRIEVERS)}")
        self.toolset = setting
        self.setting = setting_name(setting, retriever, snippet_chars, max_calls, repeats_refused)
        self.max_calls = max_calls
        self.repeats_refused = repeats_refused
        self.dataset = dataset or load_dataset(spec)
        index = open_retriever(retriever, self.dataset.documents, Path(self.dataset.directory) / "index",
                               self.dataset.fingerprint)
        self.searcher = Searcher(index, self.dataset.documents, k=k, depth=depth, snippet_chars=snippet_chars)
        self.domain_of_tool = tool_names(setting)
        self.tool_of_domain = {domain: name for name, domain in self.domain_of_tool.items()}
        self.answer_tool = answer_tool()  # built once: making a DSPy signature costs milliseconds

    # -- the Environment interface -------------------------------------------------------------
    def tasks(self, split: str = "test") -> list[Question]:
        if split == "train":
            return list(self.dataset.train)
        if split == "test":
            return list(self.dataset.test)
        raise ConfigError(f"unknown split {split!r}; BrowseComp has train and test")

    def toolbox(self, docs: str | None = None) -> Toolbox:
        if docs not in (None, "gold"):
            raise ConfigError(f"BrowseComp's docs are its setting's own or gold, not {docs!r}")
        return Toolbox({self.toolset: documented_tools(self.toolset, gold=docs == "gold")},
                       meta={"env": self.name, "setting": self.setting, "docs": docs or "base"})

    def toolset_of(self, task: Question) -> str:
        return self.toolset

    def execute(self, toolset: str, call: ToolCall) -> CallResult:
        """One search outside any question (Play2Prompt's tool play)."""
        return self._search(call, [], [], call_episode(self.faults, toolset, call.name))

    def rollout(self, agent: Agent, toolbox: Toolbox, task: Question) -> Trajectory:
        search_tools = toolbox.toolset(self.toolset)
        steps: list[CallResult] = []
        seen: list[str] = []
        called_domains: list[str] = []
        raws: list[str] = []
        errors: list[str] = []
        answer: str | None = None
        repeated: int | None = None  # the earlier call the last one repeated, when it was refused
        refused_repeats = 0
        attempt = episode(self.faults, task.id)
        for turn in range(self.max_calls + 1):
            calls_left = 0 if turn == self.max_calls else self.max_calls - len(steps) - refused_repeats
            offered = [*search_tools, self.answer_tool] if calls_left > 0 else [self.answer_tool]
            reply = agent(question=turn_text(task.text, steps, calls_left, repeated), tools=offered)
            repeated = None
            raws.append(reply.raw)
            if not reply.calls:
                errors.append(reply.error or "no call")
                continue
            call = reply.calls[0]
            if call.name == ANSWER_TOOL and call.problem is None:
                answer = str(call.arguments.get("answer", ""))
                break
            if calls_left <= 0:  # only the answer tool was offered: nothing else runs
                errors.append(call.refusal() if call.problem else
                              f"called {call.name!r} with no searches left")
                continue
            repeated = earlier_identical(call, steps) if self.repeats_refused else None
            if repeated is not None:
                refused_repeats += 1
                continue
            steps.append(self._search(call, seen, called_domains, attempt, set(task.evidence)))
        score = score_attempt(answer=answer, gold=task.answer, seen=seen, evidence=task.evidence,
                              called_domains=called_domains, optimal_domains=task.domains)
        found = sum(e in set(seen) for e in task.evidence)
        feedback = (f"answered {answer!r}; the correct answer is {task.answer!r}" if answer is not None
                    else f"gave no answer; the correct answer is {task.answer!r}")
        feedback += f"; {found} of the {len(task.evidence)} pages needed appeared in search results"
        if refused_repeats:
            feedback += f"; {refused_repeats} exact repeat(s) of an earlier search were not run"
        return Trajectory(task_id=task.id, toolset=self.toolset, question=task.text, steps=steps,
                          reply="\n".join(raws), parse_error="; ".join(errors) or None, metrics=score.as_dict(),
                          success=score.accuracy == 1.0, feedback=feedback)

    def summarise(self, trajectories: list[Trajectory]) -> dict[str, float]:
        return summarise([t.metrics for t in trajectories])

    def oracle_agent(self, tasks: list[Question]) -> OracleAgent:
        """Searches each hop's domain with the optimal query, then answers: it must score 1 everywhere."""
        plans = {task.text: self.oracle_calls(task) for task in tasks}

        def next_call(text: str) -> list[ToolCall]:
            question = text.split("\n\n", 1)[0]
            return [plans[question][len(_CALL_LINE.findall(text))]]

        return OracleAgent(next_call)

    # -- BrowseComp specifics ------------------------------------------------------------------
    def oracle_calls(self, task: Question) -> list[ToolCall]:
        searches = [ToolCall(self.tool_of_domain[hop.domain], {"query": hop.query}) for hop in task.hops]
        return [*searches, ToolCall(ANSWER_TOOL, {"answer": task.answer})]

    def _search(self, call: ToolCall, seen: list[str], called_domains: list[str], attempt: Episode,
                needed: set[str] | None = None) -> CallResult:
        """Run one search through the attempt's faults: the pages it saw are those the agent was shown (none
        after a failure or a drifted reply, the first ones of a truncated list)."""
        pages: list[str] = []
        result = attempt.run(call, lambda: self._run_search(call, pages, called_domains, needed))
        if result.injected == "corrupt" and isinstance(result.output, list):
            pages = pages[:len(result.output)]
        elif result.injected not in (None, "delay"):
            pages = []
        seen.extend(pages)
        return result

    def _run_search(self, call: ToolCall, seen: list[str], called_domains: list[str],
                    needed: set[str] | None) -> CallResult:
        """Run one search; within a question its value is 1 when a result was a page the question needed
        (the per-call share of the outcome the attempt's feedback reports as "k of the n pages needed")."""
        if call.problem is not None:
            return CallResult.refused(call)
        domain = self.domain_of_tool.get(call.name)
        if domain is None:
            return CallResult(call, False, error=f"NameError: no tool named {call.name!r}")
        query = call.arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            return CallResult(call, False, error=f"TypeError: {call.name}() needs a non-empty string argument 'query'")
        called_domains.append(domain)
        results = self.searcher.search(query, domain)
        seen.extend(r.doc_id for r in results)
        return CallResult(call, True, output=[r.to_dict() for r in results],
                          value=None if needed is None else float(any(r.doc_id in needed for r in results)))

