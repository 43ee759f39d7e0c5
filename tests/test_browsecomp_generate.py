import json

import pytest
from browsecomp_world import FIXTURE_NEWS, TINY_SPEC, tiny_dataset, tiny_env

from otbench.envs.browsecomp.dataset import build_dataset, generate, load_dataset
from otbench.envs.browsecomp.domains import DOMAINS
from otbench.envs.browsecomp.world import RELATIONS
from otbench.errors import DataError


def test_generation_is_deterministic():
    documents, questions, _ = generate(TINY_SPEC, FIXTURE_NEWS)
    dataset = tiny_dataset()
    assert [d.to_dict() for d in documents] == [d.to_dict() for d in dataset.documents]
    assert [q.to_dict() for q in questions] == [q.to_dict() for q in dataset.train + dataset.test]


def test_questions_are_multi_hop_chains_with_known_evidence_in_the_right_domain():
    dataset = tiny_dataset()
    by_id = {d.id: d for d in dataset.documents}
    questions = dataset.train + dataset.test
    assert (len(dataset.train), len(dataset.test)) == (6, 14)
    assert len({q.id for q in questions}) == len({q.text for q in questions}) == 20
    for question in questions:
        assert 2 <= len(question.hops) <= 4
        assert question.answer == question.hops[-1].answer
        for hop, following in zip(question.hops, question.hops[1:]):
            assert following.subject == hop.answer  # each hop starts from the previous hop's answer
        for hop in question.hops:
            page = by_id[hop.evidence]
            assert page.domain == hop.domain == RELATIONS[hop.relation].domain
            assert hop.answer in page.text and hop.subject in page.text


def test_the_corpus_covers_every_domain_and_confounders_share_names_across_domains():
    dataset = tiny_dataset()
    assert {d.domain for d in dataset.documents} == set(DOMAINS)
    assert {d.domain for d in dataset.documents if d.url in {a.url for a in FIXTURE_NEWS}} == {"news"}
    hop = dataset.test[0].hops[0]
    namesakes = [d for d in dataset.documents if d.title.startswith(f"{hop.subject} (")]
    assert len(namesakes) == TINY_SPEC.confounders
    assert hop.domain not in {d.domain for d in namesakes}


def test_the_oracle_answers_every_question_by_finding_all_evidence_with_the_optimal_tools():
    env = tiny_env()
    for split in ("train", "test"):
        tasks = env.tasks(split)
        trajectories = [env.rollout(env.oracle_agent(tasks), env.toolbox(), task) for task in tasks]
        summary = env.summarise(trajectories)
        for task, trajectory in zip(tasks, trajectories, strict=True):  # every hop's answer is shown
            shown = " ".join(r["snippet"] for step in trajectory.steps for r in step.output)
            assert all(hop.answer in shown for hop in task.hops)
        assert summary["accuracy"] == summary["evidence_recall"] == summary["sequence_match"] == 1.0
        assert summary["calls"] == sum(len(t.hops) for t in tasks) / len(tasks)


def test_stored_data_is_reused_and_refused_when_corrupt(tmp_path, monkeypatch):
    monkeypatch.setenv("OTBENCH_CACHE", str(tmp_path))
    directory = build_dataset(TINY_SPEC, news=FIXTURE_NEWS)
    meta = json.loads((directory / "meta.json").read_text())
    loaded = load_dataset(TINY_SPEC)
    assert loaded.fingerprint == meta["fingerprint"] and len(loaded.documents) == meta["documents"]
    assert [q.to_dict() for q in loaded.test] == [q.to_dict() for q in tiny_dataset().test]
    with (directory / "corpus.jsonl").open("a") as corpus:
        corpus.write('{"id": "x", "url": "https://example.org", "title": "x", "text": "tampered"}\n')
    with pytest.raises(DataError, match="fingerprint"):
        load_dataset(TINY_SPEC)
