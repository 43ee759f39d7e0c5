"""The world rendered as web pages under domain-typical URLs, with cross-domain confounders.

Each entity gets one page per domain its facts live in (a person's birth on Wikipedia, their
degree on ResearchGate...), so a fact's page is its evidence. Confounders are short pages in
*other* domains about namesakes (a racehorse, a TV series, a forum thread sharing the name) that
repeat the same relation words with wrong values: a whole-corpus search for a hop ranks them
above the evidence, a search restricted to the right domain does not see them. That is what
makes tool choice matter, as in BrowseComp-Plus.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from otbench.envs.browsecomp.anchors import NewsArticle
from otbench.envs.browsecomp.domains import DOMAINS, domain_of
from otbench.envs.browsecomp.world import LITERAL, MASCOTS, RELATIONS, Entity, World


@dataclass(frozen=True)
class Document:
    id: str
    url: str
    title: str
    text: str

    @property
    def domain(self) -> str:
        return domain_of(self.url)

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "url": self.url, "title": self.title, "text": self.text}


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


# One URL per (domain, page kind); {s} is the slug, {n} a number that keeps URLs unique.
_EVIDENCE_URLS = {
    ("wikipedia", "person"): "https://en.wikipedia.org/wiki/{s}",
    ("academic", "person"): "https://www.researchgate.net/profile/{s}",
    ("academic", "university"): "https://www.{s}.edu/about",
    ("academic", "paper"): "https://arxiv.org/abs/{n}",
    ("entertainment", "film"): "https://www.imdb.com/title/tt{n}/",
    ("business", "company"): "https://www.crunchbase.com/organization/{s}",
    ("news", "company"): "https://www.reuters.com/business/{s}-deal-{n}",
    ("sports", "club"): "https://www.espn.com/soccer/team/_/name/{s}",
    ("other", "club"): "https://{s}-supporters.blogspot.com/p/mascot.html",
    ("government", "agency"): "https://www.federalregister.gov/agencies/{s}",
    ("history", "treaty"): "https://www.history.com/topics/treaties/{s}",
    ("reference", "city"): "https://www.britannica.com/place/{s}",
    ("reference", "country"): "https://www.worldatlas.com/countries/{s}.html",
}

# Namesakes a confounder page may be about, per domain, with the URL such a page has.
_NAMESAKES = {
    "wikipedia": ("a character in a novel", "https://en.wikipedia.org/wiki/{s}_(character_{n})"),
    "academic": ("a research project", "https://scholar.example-university.edu/projects/{s}-{n}"),
    "news": ("a local news story", "https://apnews.com/article/{s}-{n}"),
    "entertainment": ("a television series", "https://www.rottentomatoes.com/tv/{s}_{n}"),
    "reference": ("a dictionary entry", "https://www.dictionary.com/browse/{s}-{n}"),
    "government": ("a registered trademark", "https://www.uspto.gov/trademarks/{s}-{n}"),
    "business": ("a small startup", "https://www.forbes.com/companies/{s}-{n}/"),
    "sports": ("a racehorse", "https://www.espn.com/horse-racing/horse/_/id/{n}/{s}"),
    "history": ("a historic sailing ship", "https://www.historynet.com/ships/{s}-{n}/"),
    "other": ("a fan forum thread", "https://forum-{n}.boards.net/thread/{s}"),
}


def _sentence(world: World, entity: Entity, relation: str, value: str | None = None) -> str:
    """One sentence stating a fact; ``value`` overrides the true object (for confounders)."""
    o = value if value is not None else world.object_name(entity, relation)
    n = entity.name
    return {
        "film.producer": f"{n} is a film produced by {o}.",
        "film.director": f"The film was directed by {o}.",
        "company.founder": f"{n} is a company founded by {o}.",
        "company.hq": f"{n} is headquartered in {o}.",
        "company.founded": f"The company was founded in the year {o}.",
        "company.acquirer": f"{o} has agreed to acquire {n}; the acquisition closed after regulatory approval.",
        "person.birthplace": f"{n} was born in {o}.",
        "person.birth_year": f"{n} was born in the year {o}.",
        "person.university": f"{n} graduated from {o}, a university.",
        "university.city": f"{n} is a university located in {o}.",
        "paper.author": f"The paper {n} lists {o} as its first author.",
        "club.city": f"{n} is a football club based in its home city of {o}.",
        "club.captain": f"The club captain of {n} is {o}.",
        "club.founded": f"The club was founded in the year {o}.",
        "club.mascot": f"The mascot of {n} is a {o}.",
        "agency.head": f"{n} is a government agency headed by {o}.",
        "agency.seat": f"The agency has its seat in {o}.",
        "treaty.city": f"The {n} was a treaty signed in the city of {o}.",
        "treaty.year": f"The treaty was signed in the year {o}.",
        "city.country": f"{n} is a city in the country of {o}.",
        "city.airport": f"The main airport of {n} is {entity.attributes.get('airport', '')} "
                        f"(IATA code {o}).",
        "country.capital": f"The capital of {n} is {o}.",
    }[relation]


def _context(entity: Entity, domain: str) -> str:
    """A sentence of harmless context so evidence pages read like pages, not fact lists."""
    a = entity.attributes
    return {
        ("wikipedia", "person"): f"{entity.name} is known as a {a.get('profession', '')}.",
        ("academic", "person"): f"Profile of {entity.name}, {a.get('profession', '')}.",
        ("entertainment", "film"): f"{entity.name} ({a.get('year', '')}) is a {a.get('genre', '')} film.",
        ("business", "company"): f"Industry focus: {a.get('industry', '')}.",
        ("reference", "city"): f"{entity.name} has a population of about {int(a.get('population', 0)):,}.",
        ("reference", "country"): f"{entity.name} lies in {a.get('continent', '')}; its currency is the "
                                  f"{a.get('currency', '')}.",
        ("academic", "paper"): f"Published in {a.get('year', '')}.",
    }.get((domain, entity.kind), "")


def _wrong_value(world: World, entity: Entity, relation: str, rng: random.Random) -> str:
    """A plausible but false object for a confounder."""
    spec = RELATIONS[relation]
    true = world.object_name(entity, relation)
    while True:
        if spec.object == LITERAL:
            if relation == "club.mascot":
                value = rng.choice(MASCOTS)
            elif relation == "city.airport":
                value = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(3))
            elif relation == "country.capital":
                value = rng.choice(world.of_kind("city")).name
            else:
                value = str(int(true) + rng.choice((-1, 1)) * rng.randint(1, 30))
        else:
            value = rng.choice(world.of_kind(spec.object)).name
        if value != true:
            return value


@dataclass
class Corpus:
    """Documents plus where each fact is stated: ``evidence[(entity id, relation)]`` is a doc id."""

    documents: list[Document]
    evidence: dict[tuple[str, str], str]


def render_corpus(world: World, news: list[NewsArticle], *, seed: int, confounders: int = 5,
                  place_confounders: int = 3) -> Corpus:
    """Evidence pages for every (entity, domain) with facts, namesake confounders, then the real news.

    Evidence pages carry a paragraph of filler, as real pages carry more than the one fact asked
    for; confounders are short. Real places get fewer confounders: many pages mention them anyway.
    """
    from faker import Faker

    rng = random.Random(seed + 1)
    fake = Faker("en_US")
    fake.seed_instance(seed + 1)
    documents: list[Document] = []
    evidence: dict[tuple[str, str], str] = {}
    counter = iter(range(10_000_000, 99_999_999))
    for entity in world.entities.values():
        by_domain: dict[str, list[str]] = {}
        for relation in entity.facts:
            by_domain.setdefault(RELATIONS[relation].domain, []).append(relation)
        for domain, relations in by_domain.items():
            url = _EVIDENCE_URLS[(domain, entity.kind)].format(s=slug(entity.name), n=next(counter))
            text = " ".join(filter(None, [_context(entity, domain),
                                          *(_sentence(world, entity, r) for r in relations),
                                          fake.paragraph(nb_sentences=4)]))
            doc = Document(f"d{len(documents)}", url, entity.name, text)
            documents.append(doc)
            evidence.update({(entity.id, r): doc.id for r in relations})
            others = [d for d in DOMAINS if d != domain]
            count = place_confounders if entity.kind in ("city", "country") else confounders
            for other in rng.sample(others, min(count, len(others))):
                role, pattern = _NAMESAKES[other]
                wrong = " ".join(_sentence(world, entity, r, _wrong_value(world, entity, r, rng)) for r in relations)
                text = f"{entity.name} is also the name of {role}, unrelated to the {entity.kind}. {wrong}"
                documents.append(Document(f"d{len(documents)}", pattern.format(s=slug(entity.name), n=next(counter)),
                                          f"{entity.name} ({role})", text))
    for article in news:
        documents.append(Document(f"d{len(documents)}", article.url, article.title, article.text))
    return Corpus(documents, evidence)
