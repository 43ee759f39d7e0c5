"""The pool environment: its catalogue, tasks, settings, index, metrics and rollouts, hermetic (a hashing encoder
stands in for the sentence-transformers model; the tests marked ``embedded`` use the real one)."""

import argparse
import hashlib
import itertools
import json
import re
from collections import Counter

import numpy as np
import pytest
from scripted_lm import prompt_text, scripted_lm, shown_tools

from otbench.core.calls import ToolCall
from otbench.envs.pool import catalogue, docs, metrics, retrieval, tasks
from otbench.envs.pool.env import ANSWER_TOOL, SEARCH_TOOL, TOOLSET, PoolEnvironment, setting_name
from otbench.envs.pool.index import EmbeddingStore, Snapshot, ToolIndex, with_usage
from otbench.envs.registry import add_environment_arguments, options_from_values, resolve
from otbench.errors import ConfigError, DataError
from otbench.llm.metering import TokenLedger
from otbench.modules.agent import AgentReply, FunctionCallingAgent
from otbench.modules.editor import DocEditor
from otbench.modules.program import ToolAgentProgram
from otbench.optimizers.toolobserver.knobs import PAPER
from otbench.optimizers.toolobserver.teleprompter import ToolObserver
from otbench.run.docs_io import apply_docs, keep_memory


class HashingEncoder:
    """A bag of words hashed into 256 dimensions, unit length: texts sharing words are near (a test stand-in for
    the embedding model)."""

    name = "hashing"

    def __init__(self) -> None:
        self.calls = 0

    def encode(self, texts):
        self.calls += 1
        rows = np.zeros((len(texts), 256), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                rows[row, int(hashlib.md5(word.encode()).hexdigest()[:6], 16) % 256] += 1
            rows[row] /= max(float(np.linalg.norm(rows[row])), 1e-9)
        return rows


def _env(**kwargs):
    return PoolEnvironment(index=ToolIndex(EmbeddingStore(HashingEncoder())), **{"pool_size": "30", **kwargs})


class ScriptedAgent:
    """Replies with the given calls in turn (one reply each) and records what it was shown."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.seen = []

    def __call__(self, *, question, tools, **_):
        self.seen.append((question, [tool.name for tool in tools]))
        call = self.replies.pop(0) if self.replies else ToolCall(ANSWER_TOOL, {"answer": "unknown"})
        return AgentReply(raw=json.dumps(call.to_dict()), calls=[call])


# -- the catalogue and its tasks ---------------------------------------------------------------------------------
def test_the_catalogue_holds_a_thousand_tools_in_forty_apps_under_unique_names_and_its_pools_nest():
    specs = catalogue.all_tools()
    assert len(specs) >= 1000 and len({spec.app for spec in specs}) >= 40
    assert len({spec.name for spec in specs}) == len(specs)
    assert len({id(spec.function) for spec in specs}) == len(specs)  # no function under two names
    assert len(set(catalogue.shown_names().values())) == len(specs)
    sizes = [catalogue.pool(size) for size in ("30", "300", "1000", "all")]
    assert [len(pool) for pool in sizes] == [30, 300, 1000, len(specs)]
    for small, large in itertools.pairwise(sizes):
        assert large[: len(small)] == small
    assert len({spec.app for spec in sizes[0]}) >= 8  # even the 30 span many apps
    apps = Counter(spec.app for spec in sizes[0])
    assert any(count >= 2 for count in apps.values())  # and hold confusable neighbours


def test_every_pool_has_single_requests_and_workflows_and_a_smaller_pools_tasks_are_among_a_larger_ones():
    counts = {}
    for size in ("30", "300"):
        names = [spec.name for spec in catalogue.pool(size)]
        test = tasks.pool_tasks(names, "test")
        counts[size] = {task.id for task in test}
        kinds = Counter(len(task.calls) for task in test)
        assert kinds[1] == 2 * len(names) and kinds[2] > 0 and kinds[3] > 0
    assert counts["30"] <= counts["300"]


def test_answers_are_what_the_gold_calls_return_and_train_never_repeats_a_test_request():
    every = tasks.all_tasks()
    assert len({task.id for task in every}) == len(every)
    specs = catalogue.by_name()
    for task in every[::97]:
        fed = None
        for position, call in enumerate(task.calls):
            arguments = dict(call.arguments)
            if position:
                assert fed in arguments.values()
            assert specs[call.tool].function(**arguments) == call.output
            fed = call.output
    train = [task for task in every if task.split == "train"]
    test = [task for task in every if task.split == "test"]
    assert not {task.text for task in train} & {task.text for task in test}
    assert not {tasks._key(task.calls) for task in train} & {tasks._key(task.calls) for task in test}
    assert all(spec.name not in task.text for task in test[::50] for spec in specs.values() if len(spec.name) > 12)


def test_the_settings_show_bfcls_share_of_the_true_docs_under_the_same_opaque_names():
    specs = list(catalogue.pool("30"))
    shown = {setting: docs.setting_tools(specs, setting) for setting in ("names_only", "names_params", "names_desc",
                                                                          "gold")}
    names = {setting: [tool.name for tool in tools] for setting, tools in shown.items()}
    assert len({tuple(listed) for listed in names.values()}) == 1 and names["gold"][0].startswith("tool_")
    only, params, described, gold = (shown[s][0] for s in ("names_only", "names_params", "names_desc", "gold"))
    assert not only.description and only.parameters is None
    assert not params.description and params.parameters and not any(params.parameter_descriptions.values())
    assert described.description and gold.description
    assert any(gold.parameter_descriptions.values()) or not gold.parameters
    apps = docs.app_names(specs, "names_only")
    assert all(re.fullmatch(r"app_\d\d", app) for app in apps.values())
    assert docs.doc_text(only, apps[only.name]) == f"{only.name} ({apps[only.name]})."


# -- the index ---------------------------------------------------------------------------------------------------
def test_the_store_encodes_only_docs_it_has_not_seen_and_keeps_them_on_disk(tmp_path):
    encoder = HashingEncoder()
    store = EmbeddingStore(encoder, tmp_path / "vectors.npz")
    index = ToolIndex(store)
    first = index.snapshot([("tool_1", "adds two numbers"), ("tool_2", "the capital of a country")])
    assert store.encoded == 2
    assert index.snapshot([("tool_1", "adds two numbers"), ("tool_2", "the capital of a country")]) is first
    index.snapshot([("tool_1", "adds two numbers"), ("tool_2", "the capital city of a country")])
    assert store.encoded == 3  # only the changed docs
    assert index.search(first, "what is the capital of France", 2)[0] == "tool_2"
    assert index.search(first, "tool_1", 2) == ["tool_1", "tool_2"]  # a name finds its tool first
    reopened = EmbeddingStore(HashingEncoder(), tmp_path / "vectors.npz")
    assert len(reopened) == 3


def test_a_usage_index_moves_a_tool_towards_the_requests_it_answered():
    encoder = HashingEncoder()
    docs_only = encoder.encode(["tool_7 (app_01).", "tool_8 (app_01)."])
    request = encoder.encode(["how far is Paris from Rome"])
    moved = with_usage(docs_only, [request, None])
    assert np.allclose(np.linalg.norm(moved, axis=1), 1.0)
    assert float(moved[0] @ request[0]) > float(docs_only[0] @ request[0])
    assert np.array_equal(moved[1], docs_only[1])
    snapshot = Snapshot(("tool_7", "tool_8"), moved)
    assert snapshot.nearest(request[0], 1) == ["tool_7"]


# -- metrics -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("expected, given, right", [
    (3.14159, "3.1416", True), (42, "42.0", True), (42, 41.9, False), (True, "yes", True), (False, True, False),
    ("Paris", " paris. ", True), ([1, 2, 3], "1, 2, 3", True), ([1, 2], [1, 2, 3], False), (7, "7 or 8", False),
])
def test_answers_match_as_people_write_them(expected, given, right):
    assert metrics.answer_matches(expected, given) is right


def test_recall_and_ndcg_take_each_tools_best_rank_over_the_searches():
    rankings = [["a", "x", "y"], ["x", "y", "z", "b"]]
    scores = metrics.retrieval_scores(["a", "b"], rankings)
    assert scores["recall_at_1"] == 0.5 and scores["recall_at_5"] == 1.0
    assert scores["ndcg_at_10"] == pytest.approx(0.5 * (1 + 1 / np.log2(5)))
    assert metrics.retrieval_scores(["c"], rankings)["recall_at_10"] == 0.0
    right = metrics.score_attempt(answer=5, answered=True, expected=5, outputs=[], needed=["a"], rankings=[],
                                  calls=0)
    assert right["accuracy"] == 0.0  # an answer no tool returned is not tool use


# -- rollouts ----------------------------------------------------------------------------------------------------
def test_the_oracle_scores_one_on_every_measure_in_the_smallest_and_the_whole_pool():
    for size, step in (("30", 1), ("all", 250)):
        with _env(pool_size=size) as env:
            chosen = env.tasks("test")[::step]
            agent = env.oracle_agent(chosen)
            scored = env.summarise([env.rollout(agent, env.toolbox(), task) for task in chosen])
            assert {name: scored[name] for name in ("accuracy", "recall_at_1", "ndcg_at_10")} == {
                "accuracy": 1.0, "recall_at_1": 1.0, "ndcg_at_10": 1.0}


def test_a_tool_is_called_only_once_a_search_found_it_and_searches_are_steps():
    with _env(setting="gold") as env:
        task = next(task for task in env.tasks("test") if len(task.calls) == 1)
        tool = env.to_shown[task.calls[0].tool]
        agent = ScriptedAgent(ToolCall(tool, task.calls[0].arguments), ToolCall(SEARCH_TOOL, {"query": tool, "k": 2}),
                              ToolCall(tool, task.calls[0].arguments), ToolCall(ANSWER_TOOL, {"answer": task.answer}))
        trajectory = env.rollout(agent, env.toolbox(), task)
        assert [step.call.name for step in trajectory.steps] == [tool, SEARCH_TOOL, tool]
        assert "is not loaded" in trajectory.steps[0].error and trajectory.steps[2].ok
        assert agent.seen[0][1] == [SEARCH_TOOL, ANSWER_TOOL] and tool in agent.seen[2][1]
        assert trajectory.steps[1].value == 1.0 and trajectory.steps[1].output[0]["name"] == tool
        assert trajectory.metrics["accuracy"] == 1.0 and trajectory.metrics["recall_at_1"] == 1.0
        assert "Call 2: search_tools" in agent.seen[-1][0]


def test_only_the_answer_is_offered_on_the_last_reply_and_bad_searches_are_errors():
    with _env(max_steps=3) as env:
        task = env.tasks("test")[0]
        agent = ScriptedAgent(ToolCall(SEARCH_TOOL, {"query": ""}), ToolCall(SEARCH_TOOL, {"query": "x", "k": "two"}),
                              ToolCall(SEARCH_TOOL, {"query": "x"}))
        trajectory = env.rollout(agent, env.toolbox(), task)
        assert [step.ok for step in trajectory.steps] == [False, False]
        assert agent.seen[-1][1] == [ANSWER_TOOL] and "last reply" in agent.seen[-1][0]
        assert trajectory.metrics["accuracy"] == 0.0 and not trajectory.success


def test_the_usage_index_remembers_train_requests_answered_right_and_never_test_ones():
    with _env(index_kind="usage") as env:
        assert env.setting == "names_only pool=30 index=usage"
        for split in ("test", "train"):
            task = next(task for task in env.tasks(split) if len(task.calls) == 1)
            env.rollout(env.oracle_agent([task]), env.toolbox(), task)
        tool = env.to_shown[task.calls[0].tool]
        assert env.usage == {tool: [task.text]}


def test_the_usage_memory_is_saved_with_the_docs_and_restored_only_for_the_usage_index(tmp_path):
    with _env(index_kind="usage") as learned:
        task = next(task for task in learned.tasks("train") if len(task.calls) == 1)
        learned.rollout(learned.oracle_agent([task]), learned.toolbox(), task)
        docs = learned.toolbox()
        keep_memory(docs, learned)
        path = docs.write(tmp_path / "final_docs.json")
        remembered = learned.usage
    with _env(index_kind="usage") as later:
        assert apply_docs(later.toolbox(), str(path), restore=later.restore_memory) == 30
        assert later.usage == remembered
    with _env() as docs_index:
        apply_docs(docs_index.toolbox(), str(path), restore=docs_index.restore_memory)
        assert docs_index.usage == {} and docs_index.memory() == {}
    with _env(index_kind="usage") as later, pytest.raises(DataError, match="usage memory"):
        later.restore_memory({"env": "pool", "usage": {"tool_0001": "not a list"}})


def test_options_choose_the_pool_and_refuse_bad_values():
    def parse(argv):
        parser = argparse.ArgumentParser()
        add_environment_arguments(parser, argv=argv)
        return resolve(options_from_values(vars(parser.parse_args(argv))))

    options = parse(["--env", "pool", "--pool-size", "300", "--pool-index", "usage"])
    assert options.setting == "names_only" and options.own["pool_size"] == "300"
    for argv, message in ((["--pool-size", "31"], "unknown pool size"), (["--pool-index", "bm25"], "unknown pool index"),
                          (["--setting", "domains"], "unknown setting"), (["--pool-steps", "1"], "at least 2")):
        with pytest.raises(ConfigError, match=message):
            parse(["--env", "pool", *argv])
    assert setting_name("gold", "1000", 10) == "gold"


# -- retrieval with no agent -------------------------------------------------------------------------------------
def test_won_searches_are_needed_tools_brought_into_the_top_k_with_the_tools_they_passed():
    with _env() as env:
        task = next(task for task in env.tasks("test") if len(task.needs) == 1)
        tool = env.to_shown[task.needs[0]]
        others = [name for name in env.to_real if name != tool]
        before, after = [*others[:6], tool], [others[0], tool, *others[1:6]]
        won = retrieval.won_searches([task], [before], [after], env.to_shown, k=5)
        assert won == [retrieval.WonSearch(tool, task.text, 7, 2, tuple(others[1:6]))]
        assert retrieval.won_searches([task], [after], [after], env.to_shown) == []
        assert retrieval.won_searches([task], [others[:10]], [after], env.to_shown)[0].before is None


def test_request_retrieval_scores_docs_sources_and_the_usage_index_only_from_train_requests():
    index = ToolIndex(EmbeddingStore(HashingEncoder()))
    scores = {}
    for setting in ("names_only", "gold"):
        with PoolEnvironment(setting=setting, pool_size="30", index=index) as env:
            test = env.tasks("test")
            snapshot = index.snapshot(env.doc_entries(env.toolbox()))
            scores[setting] = retrieval.score_requests(snapshot, index, test, env.to_shown)
            usage = retrieval.train_usage(env.tasks("train"), env.to_shown)
            with pytest.raises(ValueError, match="only train requests"):
                retrieval.train_usage(test, env.to_shown)
            used = retrieval.score_requests(index.snapshot(env.doc_entries(env.toolbox()), usage), index, test,
                                            env.to_shown)
            scores[f"{setting}+usage"] = used
    summary = {name: retrieval.summary(scored)["recall_at_5"].value for name, scored in scores.items()}
    assert summary["gold"] > summary["names_only"]
    assert summary["names_only+usage"] > summary["names_only"]
    gain = retrieval.paired(scores["names_only+usage"], scores["names_only"], "recall_at_5")
    assert gain.value > 0 and gain.n == len(scores["gold"])


# -- learning ----------------------------------------------------------------------------------------------------
def _offered(content):
    return [function["name"] for function in shown_tools([{"role": "user", "content": content}])] \
        if "Tools:" in content else []


def test_toolobserver_learns_pool_docs_offline_and_the_index_embeds_the_learned_docs():
    """Learning's own calls are counted, so the gate (which scores both docs and embeds the learned ones first) is
    off: the index embeds the learned tool's docs again when a task first meets them."""
    encoder = HashingEncoder()
    env = PoolEnvironment(pool_size="30", index=ToolIndex(EmbeddingStore(encoder)))
    train = [task for task in env.tasks("train") if len(task.calls) == 1][:3]
    learned_tool = env.to_shown[train[0].calls[0].tool]

    def agent_reply(messages):
        content = prompt_text(messages)
        if "Call 1:" not in content:
            request = content.split("Request: ")[1].split("\n")[0]
            return json.dumps({"calls": [{"name": SEARCH_TOOL, "arguments": {"query": request, "k": 3}}]})
        return json.dumps({"calls": [{"name": ANSWER_TOOL, "arguments": {"answer": "unknown"}}]})

    def editor_reply(messages):
        return json.dumps({"updates": [{"name": learned_tool, "description": "Answers the first train request."}]})

    ledger = TokenLedger()
    agent, editor = FunctionCallingAgent(instructions=env.agent_instructions), DocEditor()
    agent.lm = scripted_lm(agent_reply, ledger=ledger, phase="agent")
    editor.lm = scripted_lm(editor_reply, ledger=ledger, phase="editor")
    with env:
        program = ToolObserver(env=env, editor=editor, mode="offline", improvements=PAPER, max_iterations=1,
                               batch_size=3, gate=False, progress=False).compile(ToolAgentProgram(env.toolbox(), agent),
                                                                    trainset=train)
        assert program.toolbox.get(TOOLSET, learned_tool).description == "Answers the first train request."
        before = env.index.store.encoded
        texts = dict(env.doc_entries(program.toolbox))
        assert "Answers the first train request." in texts[learned_tool]
        env.rollout(env.oracle_agent(train[:1]), program.toolbox, train[0])
        assert env.index.store.encoded == before + 1  # only the learned tool's docs are embedded again
    assert ledger.phase("agent").calls == 2 * len(train) and ledger.phase("editor").calls >= 1
    assert SEARCH_TOOL in _offered(prompt_text(agent.lm.engine.requests[0]))


@pytest.mark.embedded
def test_with_the_real_encoder_gold_docs_find_the_tools_requests_need_better_than_opaque_names():
    from otbench.envs.pool.index import MiniLmEncoder

    index = ToolIndex(EmbeddingStore(MiniLmEncoder()))
    recall = {}
    for setting in ("names_only", "gold"):
        with PoolEnvironment(setting=setting, pool_size="30", index=index) as env:
            snapshot = index.snapshot(env.doc_entries(env.toolbox()))
            scored = retrieval.score_requests(snapshot, index, env.tasks("test"), env.to_shown)
            recall[setting] = retrieval.summary(scored)["recall_at_5"].value
    assert recall["gold"] >= 0.8 > recall["names_only"] + 0.3


def test_a_call_answers_a_train_request_only_with_the_answer_itself_or_within_a_prediction_s_reach():
    """The pool says whether one call's output is a request's answer with no run (the coverage pass seeks so a request
    each tool answers): a request's answer is what the tool it needs returns, exactly; a near number is not it."""
    from otbench.envs.toolkits.metrics import matches

    with _env() as env:
        task = next(task for task in env.tasks("train") if len(task.calls) == 1 and isinstance(task.answer, float))
        gold = task.calls[0]
        output = env.execute(TOOLSET, ToolCall(env.to_shown[gold.tool], gold.arguments)).output
        assert env.answers(task, output)
        assert not env.answers(task, output * 1.0005) and env.answers(task, output * 1.0005, within=2e-3)
        assert not env.answers(task, 10 ** 400)  # a factorial's integer, too large for a float, is compared too
        assert not matches(2.5, 10 ** 400) and matches(10 ** 400, 10 ** 400)
