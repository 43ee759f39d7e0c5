"""The generated world: fictional people, companies, films, clubs... tied to real cities.

Fictional entities come from a seeded Faker, so no model can answer from memory; real anchors
(cities, countries, airports) keep the world plausible. Every fact is a :class:`Relation` of a
subject, and every relation lives in exactly one URL domain: that is what makes one domain tool
the right one for each hop of a question.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from otbench.envs.browsecomp.anchors import City, Country


@dataclass(frozen=True)
class Relation:
    """A kind of fact: its subject kind, object kind (an entity kind or ``literal``), home domain.

    ``keywords`` is what an optimal searcher adds to the subject's name; ``phrase`` describes the
    object from the subject's description in a question (``{s}``).
    """

    name: str
    subject: str
    object: str
    domain: str
    keywords: str
    phrase: str


LITERAL = "literal"
RELATIONS: dict[str, Relation] = {r.name: r for r in (
    Relation("film.producer", "film", "company", "entertainment", "film produced by", "the company that produced {s}"),
    Relation("film.director", "film", "person", "entertainment", "film directed by", "the director of {s}"),
    Relation("company.founder", "company", "person", "business", "company founded by", "the founder of {s}"),
    Relation("company.hq", "company", "city", "business", "headquartered in", "the city where {s} is headquartered"),
    Relation("company.founded", "company", LITERAL, "business", "company founded in year",
             "the year in which {s} was founded"),
    Relation("company.acquirer", "company", "company", "news", "acquire acquisition",
             "the company that acquired {s}"),
    Relation("person.birthplace", "person", "city", "wikipedia", "born in", "the city where {s} was born"),
    Relation("person.birth_year", "person", LITERAL, "wikipedia", "born year", "the year in which {s} was born"),
    Relation("person.university", "person", "university", "academic", "graduated from university",
             "the university from which {s} graduated"),
    Relation("university.city", "university", "city", "academic", "university located in",
             "the city where {s} is located"),
    Relation("paper.author", "paper", "person", "academic", "paper first author", "the first author of {s}"),
    Relation("club.city", "club", "city", "sports", "club based in home city", "the home city of {s}"),
    Relation("club.captain", "club", "person", "sports", "club captain", "the captain of {s}"),
    Relation("club.founded", "club", LITERAL, "sports", "club founded in year", "the year in which {s} was founded"),
    Relation("club.mascot", "club", LITERAL, "other", "mascot", "the animal that is the mascot of {s}"),
    Relation("agency.head", "agency", "person", "government", "agency headed by", "the head of {s}"),
    Relation("agency.seat", "agency", "city", "government", "agency seat in", "the city where {s} has its seat"),
    Relation("treaty.city", "treaty", "city", "history", "treaty signed in city", "the city where {s} was signed"),
    Relation("treaty.year", "treaty", LITERAL, "history", "treaty signed in year", "the year in which {s} was signed"),
    Relation("city.country", "city", "country", "reference", "city country", "the country in which {s} lies"),
    Relation("city.airport", "city", LITERAL, "reference", "airport IATA code",
             "the IATA code of the main airport of {s}"),
    Relation("country.capital", "country", LITERAL, "reference", "country capital", "the capital of {s}"),
)}

# How a question first names an entity of each kind it can start from.
OPENING = {
    "film": "the film “{n}”", "company": "the company {n}", "club": "the football club {n}",
    "agency": "the government agency {n}", "treaty": "the {n}", "paper": "the paper “{n}”",
}


@dataclass
class Entity:
    """Anything facts are about; ``facts`` maps a relation name to an entity id or a literal string."""

    id: str
    kind: str
    name: str
    facts: dict[str, str] = field(default_factory=dict)
    attributes: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class WorldSize:
    """How many fictional entities of each kind to invent (the real cities are all used)."""

    people: int = 500
    companies: int = 220
    films: int = 180
    clubs: int = 120
    agencies: int = 90
    treaties: int = 90
    papers: int = 140
    universities: int = 40
    acquisitions: int = 70


TINY = WorldSize(people=60, companies=20, films=15, clubs=10, agencies=8, treaties=8, papers=10,
                 universities=5, acquisitions=5)

_PROFESSIONS = ("entrepreneur", "chemist", "film director", "economist", "architect", "footballer", "diplomat",
                "novelist", "engineer", "historian", "composer", "physician")
_GENRES = ("drama", "thriller", "comedy", "documentary", "science-fiction", "romance", "animated")
_CLUB_SUFFIXES = ("Rovers", "United", "Athletic", "Wanderers", "Albion", "Rangers", "Town")
_AGENCY_HEADS = ("Bureau", "Office", "Directorate", "Commission", "Agency")
_AGENCY_TOPICS = ("Standards", "Oversight", "Development", "Affairs", "Planning", "Resources", "Safety")
_UNIVERSITY_KINDS = ("University", "Institute of Technology", "College", "Polytechnic")
_TREATY_SUFFIXES = ("burg", "ford", "ton", "heim", "vale", "mouth", "stead")
MASCOTS = ("heron", "badger", "lynx", "otter", "falcon", "bison", "stag", "fox", "owl", "wolf", "marten", "crane")


class World:
    """All entities, by id, with the real anchors they hang off."""

    def __init__(self, entities: dict[str, Entity]) -> None:
        self.entities = entities

    def of_kind(self, kind: str) -> list[Entity]:
        return [e for e in self.entities.values() if e.kind == kind]

    def object_name(self, entity: Entity, relation: str) -> str:
        """The answer a fact gives: the object's name, or the literal itself."""
        value = entity.facts[relation]
        target = self.entities.get(value) if RELATIONS[relation].object != LITERAL else None
        return target.name if target else value


def build_world(seed: int, size: WorldSize, cities: list[City], countries: dict[str, Country]) -> World:
    """Invent the fictional entities with a seeded Faker and wire their facts to each other and to cities."""
    from faker import Faker

    fake = Faker("en_US")
    fake.seed_instance(seed)
    rng = random.Random(seed)
    taken: set[str] = {c.name for c in cities} | set(countries)
    entities: dict[str, Entity] = {}

    def unique(make) -> str:  # a zero-argument name factory
        while True:
            name = make().strip()
            if name and name not in taken:
                taken.add(name)
                return name

    def add(kind: str, name: str, **attributes: str) -> Entity:
        entity = Entity(f"{kind}:{sum(e.kind == kind for e in entities.values())}", kind, name,
                        attributes=dict(attributes))
        entities[entity.id] = entity
        return entity

    country_ids = {name: add("country", name, continent=c.continent, currency=c.currency).id
                   for name, c in sorted(countries.items())}
    city_entities = []
    for city in cities:
        entity = add("city", city.name, population=str(city.population), airport=city.airport_name)
        entity.facts["city.country"] = country_ids[city.country]
        entity.facts["city.airport"] = city.airport_code
        city_entities.append(entity)
    for name, country in sorted(countries.items()):
        entities[country_ids[name]].facts["country.capital"] = country.capital

    universities = [add("university", unique(lambda: f"{fake.last_name()} {rng.choice(_UNIVERSITY_KINDS)}"))
                    for _ in range(size.universities)]
    for university in universities:
        university.facts["university.city"] = rng.choice(city_entities).id
    people = [add("person", unique(lambda: f"{fake.first_name()} {fake.last_name()}"),
                  profession=rng.choice(_PROFESSIONS)) for _ in range(size.people)]
    for person in people:
        person.facts["person.birthplace"] = rng.choice(city_entities).id
        person.facts["person.birth_year"] = str(rng.randint(1935, 1995))
        if rng.random() < 0.6:
            person.facts["person.university"] = rng.choice(universities).id
    companies = [add("company", unique(fake.company), industry=fake.bs()) for _ in range(size.companies)]
    for company in companies:
        company.facts["company.founder"] = rng.choice(people).id
        company.facts["company.hq"] = rng.choice(city_entities).id
        company.facts["company.founded"] = str(rng.randint(1950, 2015))
    for target, acquirer in zip(rng.sample(companies, size.acquisitions), rng.sample(companies, size.acquisitions)):
        if target is not acquirer:
            target.facts["company.acquirer"] = acquirer.id
    for _ in range(size.films):
        film = add("film", unique(lambda: " ".join(fake.words(rng.randint(2, 3))).title()),
                   genre=rng.choice(_GENRES), year=str(rng.randint(1970, 2022)))
        film.facts["film.producer"] = rng.choice(companies).id
        film.facts["film.director"] = rng.choice(people).id
    for _ in range(size.clubs):
        club = add("club", unique(lambda: f"{fake.city()} {rng.choice(_CLUB_SUFFIXES)}"))
        club.facts.update({"club.city": rng.choice(city_entities).id, "club.captain": rng.choice(people).id,
                           "club.founded": str(rng.randint(1870, 1990)), "club.mascot": rng.choice(MASCOTS)})
    for _ in range(size.agencies):
        agency = add("agency", unique(lambda: f"{rng.choice(_AGENCY_HEADS)} of {fake.word().title()} "
                                              f"{rng.choice(_AGENCY_TOPICS)}"))
        agency.facts.update({"agency.head": rng.choice(people).id, "agency.seat": rng.choice(city_entities).id})
    for _ in range(size.treaties):
        treaty = add("treaty", unique(lambda: f"Treaty of {fake.last_name()}{rng.choice(_TREATY_SUFFIXES)}"))
        treaty.facts.update({"treaty.city": rng.choice(city_entities).id, "treaty.year": str(rng.randint(1600, 1920))})
    for _ in range(size.papers):
        paper = add("paper", unique(lambda: fake.catch_phrase().title()), year=str(rng.randint(1980, 2024)))
        paper.facts["paper.author"] = rng.choice(people).id
    return World(entities)
