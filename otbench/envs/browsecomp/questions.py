"""Multi-hop questions: chains of 2-4 facts across domains with a short answer.

A question starts from a fictional entity named in its text and follows facts (film -> its
producer -> that company's founder -> their birthplace -> its airport code). Each hop has one
evidence page in one domain, so the optimal tool sequence is the hops' domains in order, and
the optimal query for a hop is the subject's name plus the relation's keywords.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from otbench.envs.browsecomp.render import Corpus
from otbench.envs.browsecomp.world import LITERAL, OPENING, RELATIONS, World


@dataclass(frozen=True)
class Hop:
    """One fact of a chain: who it is about, which relation, where it is stated, what it gives."""

    subject: str
    relation: str
    domain: str
    query: str
    evidence: str
    answer: str


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    answer: str
    hops: tuple[Hop, ...]

    @property
    def evidence(self) -> tuple[str, ...]:
        return tuple(hop.evidence for hop in self.hops)

    @property
    def domains(self) -> tuple[str, ...]:
        return tuple(hop.domain for hop in self.hops)

    def to_dict(self) -> dict:
        return {"id": self.id, "text": self.text, "answer": self.answer,
                "hops": [hop.__dict__ for hop in self.hops]}

    @classmethod
    def from_dict(cls, data: dict) -> Question:
        return cls(data["id"], data["text"], data["answer"], tuple(Hop(**hop) for hop in data["hops"]))


HOP_WEIGHTS = {2: 0.4, 3: 0.4, 4: 0.2}


def _outgoing(kind: str) -> list[str]:
    return [r.name for r in RELATIONS.values() if r.subject == kind]


def _chain(world: World, rng: random.Random, hops: int) -> list[tuple[str, str]] | None:
    """(entity id, relation) pairs of a random walk of ``hops`` facts, or None if it dead-ends."""
    entity = rng.choice([e for e in world.entities.values() if e.kind in OPENING])
    chain: list[tuple[str, str]] = []
    for step in range(hops):
        choices = [r for r in _outgoing(entity.kind) if r in entity.facts]
        if any(RELATIONS[r].domain == "reference" for _, r in chain):
            # at most one hop about real places: chains stay mostly fictional and spread over domains
            choices = [r for r in choices if RELATIONS[r].domain != "reference"]
        if step < hops - 1:
            choices = [r for r in choices if RELATIONS[r].object != LITERAL]
        if not choices:
            return None
        relation = rng.choice(sorted(choices))
        chain.append((entity.id, relation))
        if step < hops - 1:
            entity = world.entities[entity.facts[relation]]
    return chain


def make_question(world: World, corpus: Corpus, chain: list[tuple[str, str]], question_id: str) -> Question:
    first = world.entities[chain[0][0]]
    description = OPENING[first.kind].format(n=first.name)
    hops = []
    for entity_id, relation in chain:
        entity = world.entities[entity_id]
        spec = RELATIONS[relation]
        description = spec.phrase.format(s=description)
        hops.append(Hop(entity.name, relation, spec.domain, f"{entity.name} {spec.keywords}",
                        corpus.evidence[(entity_id, relation)], world.object_name(entity, relation)))
    return Question(question_id, f"What is {description}?", hops[-1].answer, tuple(hops))


def candidate_questions(world: World, corpus: Corpus, *, seed: int, count: int) -> list[Question]:
    """``count`` distinct random chains (distinct texts), numbered in the order drawn."""
    rng = random.Random(seed + 2)
    sizes, weights = zip(*HOP_WEIGHTS.items())
    seen: set[str] = set()
    questions: list[Question] = []
    attempts = 0
    while len(questions) < count and attempts < count * 50:
        attempts += 1
        chain = _chain(world, rng, rng.choices(sizes, weights)[0])
        if chain is None:
            continue
        question = make_question(world, corpus, chain, f"q{len(questions):04d}")
        if question.text not in seen:
            seen.add(question.text)
            questions.append(question)
    return questions
