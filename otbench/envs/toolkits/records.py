"""Records: filter, sort, rank, group, aggregate and join lists of records (dicts).

What it tests: operations over tabular data whose tools share their parameters (``records``,
``field`` and one more) and differ in what they do with them. ``records`` is the name of one of the
small datasets below (:data:`DATASETS`: employees, departments, orders, products) or a list of
records given in the request. Ordering is part of every answer and documented per tool: filters keep
the records' order, sorts and rankings are stable (ties keep the records' order), group results are
dicts with their keys in sorted order, a join keeps the left records' order. An unknown dataset or
field is a ``ValueError`` that lists the known ones (so an error teaches the data's shape). Every
request needs one call.
"""

from __future__ import annotations

import random
from typing import Any

import dspy

from otbench.core.trajectory import Trajectory
from otbench.envs.toolkits.generation import Draft, Template, call, generate, one_call_answer
from otbench.envs.toolkits.metrics import answer_metric

FINGERPRINT = "660845ad103617bf"
"""The digest of the generated requests (:func:`~otbench.envs.toolkits.generation.fingerprint`)."""
SIZES = {"train": 20, "test": 60}

Record = dict[str, Any]

DATASETS: dict[str, tuple[Record, ...]] = {
    "employees": tuple({"name": name, "department": department, "city": city, "salary": salary, "age": age}
                       for name, department, city, salary, age in (
        ("Ada", "Engineering", "Lisbon", 72000, 34), ("Bruno", "Sales", "Porto", 48000, 41),
        ("Chen", "Engineering", "Porto", 81000, 29), ("Dalia", "Marketing", "Lisbon", 53000, 38),
        ("Emeka", "Sales", "Lisbon", 51000, 26), ("Farah", "Finance", "Braga", 67000, 45),
        ("Goran", "Engineering", "Braga", 64000, 52), ("Hana", "Marketing", "Porto", 47000, 31),
        ("Ivo", "Finance", "Lisbon", 59000, 36), ("Jun", "Sales", "Braga", 45000, 23),
        ("Kira", "Engineering", "Lisbon", 93000, 40), ("Luis", "Marketing", "Braga", 56000, 48),
    )),
    "departments": tuple({"department": department, "floor": floor, "manager": manager}
                         for department, floor, manager in (
        ("Engineering", 3, "Kira"), ("Finance", 2, "Farah"), ("Marketing", 1, "Luis"), ("Sales", 1, "Bruno"),
    )),
    "orders": tuple({"order_id": order_id, "customer": customer, "product": product, "quantity": quantity,
                     "total": total}
                    for order_id, customer, product, quantity, total in (
        (1001, "Acme", "Desk", 2, 398.0), (1002, "Globex", "Chair", 6, 534.0), (1003, "Initech", "Lamp", 4, 118.0),
        (1004, "Acme", "Monitor", 3, 657.0), (1005, "Umbrella", "Desk", 1, 199.0),
        (1006, "Globex", "Lamp", 10, 295.0), (1007, "Initech", "Shelf", 2, 178.0),
        (1008, "Umbrella", "Chair", 4, 356.0), (1009, "Acme", "Keyboard", 5, 245.0),
        (1010, "Hooli", "Monitor", 2, 438.0), (1011, "Hooli", "Desk", 3, 597.0),
        (1012, "Globex", "Keyboard", 8, 392.0), (1013, "Initech", "Chair", 1, 89.0),
        (1014, "Umbrella", "Shelf", 6, 534.0), (1015, "Hooli", "Lamp", 2, 59.0),
    )),
    "products": tuple({"product": product, "category": category, "price": price, "rating": rating}
                      for product, category, price, rating in (
        ("Desk", "Furniture", 199.0, 4.4), ("Chair", "Furniture", 89.0, 4.1), ("Lamp", "Lighting", 29.5, 3.8),
        ("Monitor", "Electronics", 219.0, 4.6), ("Shelf", "Furniture", 89.0, 3.9),
        ("Keyboard", "Electronics", 49.0, 4.2), ("Webcam", "Electronics", 64.0, 3.5),
        ("Floor lamp", "Lighting", 74.0, 4.0),
    )),
}
"""The named datasets ``records`` may name, with their fields."""


def _records(records: object, parameter: str = "records") -> list[Record]:
    if isinstance(records, str):
        if records not in DATASETS:
            raise ValueError(f"unknown dataset {records!r}; datasets: {', '.join(DATASETS)}")
        return [dict(record) for record in DATASETS[records]]
    if not isinstance(records, list) or not all(isinstance(record, dict) for record in records):
        raise TypeError(f"{parameter} must be a dataset name or a list of records (objects), "
                        f"got {type(records).__name__}")
    return [dict(record) for record in records]


def _field(rows: list[Record], field: object, parameter: str = "field") -> str:
    if not isinstance(field, str):
        raise TypeError(f"{parameter} must be a field name, got {type(field).__name__}")
    known = list(dict.fromkeys(key for row in rows for key in row))
    if field not in known:
        raise ValueError(f"unknown {parameter} {field!r}; the records' fields: {', '.join(known)}")
    return field


def _count(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a whole number of at least 1, got {k!r}")
    return k


def _number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    return value


def filter_equal(records: str | list[Record], field: str, value: Any) -> list[Record]:
    """The records whose field equals value, in their order. records: a dataset name (employees, departments,
    orders, products) or a list of records."""
    rows = _records(records)
    key = _field(rows, field)
    return [row for row in rows if row.get(key) == value]


def filter_greater(records: str | list[Record], field: str, threshold: float) -> list[Record]:
    """The records whose numeric field is strictly greater than threshold, in their order. records: a dataset
    name (employees, departments, orders, products) or a list of records."""
    rows = _records(records)
    key, limit = _field(rows, field), _number("threshold", threshold)
    return [row for row in rows if isinstance(row.get(key), (int, float)) and row[key] > limit]


def filter_less(records: str | list[Record], field: str, threshold: float) -> list[Record]:
    """The records whose numeric field is strictly less than threshold, in their order. records: a dataset name
    (employees, departments, orders, products) or a list of records."""
    rows = _records(records)
    key, limit = _field(rows, field), _number("threshold", threshold)
    return [row for row in rows if isinstance(row.get(key), (int, float)) and row[key] < limit]


def sort_records(records: str | list[Record], field: str, descending: bool = False) -> list[Record]:
    """All records sorted by field, ascending unless descending is true; records with equal values keep their
    order. records: a dataset name (employees, departments, orders, products) or a list of records."""
    rows = _records(records)
    key = _field(rows, field)
    return sorted(rows, key=lambda row: row[key], reverse=bool(descending))


def top_k(records: str | list[Record], field: str, k: int) -> list[Record]:
    """The k records with the largest field values, largest first (ties keep the records' order). records: a
    dataset name (employees, departments, orders, products) or a list of records."""
    rows = _records(records)
    key, count = _field(rows, field), _count(k)
    return sorted(rows, key=lambda row: row[key], reverse=True)[:count]


def bottom_k(records: str | list[Record], field: str, k: int) -> list[Record]:
    """The k records with the smallest field values, smallest first (ties keep the records' order). records: a
    dataset name (employees, departments, orders, products) or a list of records."""
    rows = _records(records)
    key, count = _field(rows, field), _count(k)
    return sorted(rows, key=lambda row: row[key])[:count]


def count_by(records: str | list[Record], field: str) -> dict[str, int]:
    """How many records have each value of field, as {value: count} with the values in sorted order. records: a
    dataset name (employees, departments, orders, products) or a list of records."""
    rows = _records(records)
    key = _field(rows, field)
    counts: dict[str, int] = {}
    for row in rows:
        counts[str(row[key])] = counts.get(str(row[key]), 0) + 1
    return dict(sorted(counts.items()))


def sum_by(records: str | list[Record], group_field: str, value_field: str) -> dict[str, float]:
    """The sum of value_field over the records of each group_field value, as {group: sum} with the groups in
    sorted order. records: a dataset name (employees, departments, orders, products) or a list of records."""
    rows = _records(records)
    group, value = _field(rows, group_field, "group_field"), _field(rows, value_field, "value_field")
    sums: dict[str, float] = {}
    for row in rows:
        sums[str(row[group])] = sums.get(str(row[group]), 0) + _number(value_field, row[value])
    return dict(sorted(sums.items()))


def average_of(records: str | list[Record], field: str) -> float:
    """The mean of the numeric field over all records, rounded to 2 decimals. records: a dataset name
    (employees, departments, orders, products) or a list of records."""
    rows = _records(records)
    key = _field(rows, field)
    values = [_number(key, row[key]) for row in rows]
    return round(sum(values) / len(values), 2)


def join_records(left: str | list[Record], right: str | list[Record], on: str) -> list[Record]:
    """Each left record merged with every right record that has the same value of the field on (an inner join),
    in the left records' order, then the right ones'. left and right: dataset names (employees, departments,
    orders, products) or lists of records."""
    lefts, rights = _records(left, "left"), _records(right, "right")
    key = _field(lefts, on, "on")
    _field(rights, on, "on")
    return [{**row, **match} for row in lefts for match in rights if match.get(key) == row.get(key)]


TOOLS = (filter_equal, filter_greater, filter_less, sort_records, top_k, bottom_k, count_by, sum_by, average_of,
         join_records)


def _pick(*choices: tuple[dict[str, Any], dict[str, Any]], tool: str) -> Any:
    """A draw among fixed (slots, arguments) choices for ``tool``."""
    def draw(rng: random.Random) -> Draft:
        slots, arguments = rng.choice(choices)
        return Draft(slots, [call(tool, **arguments)])
    return draw


def _threshold(tool: str, options: tuple[tuple[str, str, int, int], ...]) -> Any:
    """A draw of (dataset, field) with a whole threshold in [low, high] (thousands for salaries)."""
    def draw(rng: random.Random) -> Draft:
        dataset, field, low, high = rng.choice(options)
        step = 1000 if high >= 10000 else 1
        threshold = rng.randint(low // step, high // step) * step
        article = "an" if field[0] in "aeiou" else "a"
        return Draft({"subject": dataset, "measure": f"{article} {field}", "field": field, "x": threshold},
                     [call(tool, records=dataset, field=field, threshold=threshold)])
    return draw


def _ranked(tool: str, options: tuple[tuple[str, str, str], ...]) -> Any:
    def draw(rng: random.Random) -> Draft:
        dataset, field, noun = rng.choice(options)
        k = rng.randint(2, 5)
        return Draft({"k": k, "what": noun}, [call(tool, records=dataset, field=field, k=k)])
    return draw


def _scores(rng: random.Random) -> list[Record]:
    names = rng.sample(["Ana", "Ben", "Cai", "Dev", "Eli", "Fay", "Gus", "Ines"], rng.randint(3, 5))
    return [{"student": name, "score": rng.randint(40, 100)} for name in names]


def _inline_sort(rng: random.Random) -> Draft:
    scores = _scores(rng)
    shown = ", ".join(f"{row['student']} {row['score']}" for row in scores)
    return Draft({"shown": shown, "rows": scores},
                 [call("sort_records", records=scores, field="score", descending=True)])


def _inline_filter(rng: random.Random) -> Draft:
    scores = _scores(rng)
    shown = ", ".join(f"{row['student']} {row['score']}" for row in scores)
    cut = rng.choice([50, 60, 70, 80])
    return Draft({"shown": shown, "x": cut}, [call("filter_greater", records=scores, field="score", threshold=cut)])


_DEPARTMENTS = ("Engineering", "Sales", "Marketing", "Finance")
_CITIES = ("Lisbon", "Porto", "Braga")
_CUSTOMERS = ("Acme", "Globex", "Initech", "Umbrella", "Hooli")
_CATEGORIES = ("Furniture", "Lighting", "Electronics")

def _selection(what: str, dataset: str, field: str, value: str) -> tuple[dict[str, Any], dict[str, Any]]:
    return {"what": what}, {"records": dataset, "field": field, "value": value}


TEMPLATES = (
    Template(("Show me the {what}.", "Which are the {what}?"),
             ("List all {what}.", "I need every record of the {what}.", "Give me the {what}, please."),
             _pick(*[_selection(f"employees in the {d} department", "employees", "department", d) for d in _DEPARTMENTS],
                   *[_selection(f"orders placed by {c}", "orders", "customer", c) for c in _CUSTOMERS],
                   *[_selection(f"employees based in {c}", "employees", "city", c) for c in _CITIES],
                   *[_selection(f"products in the {c} category", "products", "category", c) for c in _CATEGORIES],
                   tool="filter_equal")),
    Template(("Which {subject} have {measure} above {x}?",),
             ("List the {subject} whose {field} is more than {x}.",
              "I need all {subject} with {measure} greater than {x}.",
              "Any {subject} with {measure} over {x}? Show them."),
             _threshold("filter_greater", (("employees", "salary", 45000, 90000), ("employees", "age", 25, 50),
                                           ("orders", "total", 60, 650), ("orders", "quantity", 1, 9),
                                           ("products", "price", 30, 210)))),
    Template(("Which {subject} have {measure} below {x}?",),
             ("List the {subject} whose {field} is less than {x}.",
              "I need all {subject} with {measure} lower than {x}.",
              "Any {subject} with {measure} under {x}? Show them."),
             _threshold("filter_less", (("employees", "salary", 46000, 94000), ("employees", "age", 24, 52),
                                        ("orders", "total", 60, 650), ("orders", "quantity", 2, 10),
                                        ("products", "price", 30, 220), ("products", "rating", 4, 5)))),
    Template(("Sort the {subject} {order}.",),
             ("List the {subject} {order}, please.", "I want the {subject} ordered {order}.",
              "Arrange the {subject} {order}."),
             _pick(*[({"subject": subject, "order": order}, {"records": subject, "field": field, "descending": down})
                     for subject, field, order, down in (
                         ("products", "price", "by price, cheapest first", False),
                         ("employees", "age", "by age, youngest first", False),
                         ("orders", "total", "by total, largest first", True),
                         ("employees", "salary", "by salary, highest first", True),
                         ("products", "rating", "by rating, best first", True),
                         ("employees", "name", "by name, alphabetically", False),
                         ("orders", "quantity", "by quantity, smallest first", False),
                         ("departments", "floor", "by floor, lowest first", False))],
                   tool="sort_records")),
    Template(("Who are the {k} {what}?",),
             ("List our {k} {what}.", "I need the {k} {what}, in order.", "Name the {k} {what} for me."),
             _ranked("top_k", (("employees", "salary", "highest-paid employees"),
                               ("employees", "age", "oldest employees"),
                               ("orders", "total", "largest orders by total"),
                               ("orders", "quantity", "orders with the most units"),
                               ("products", "price", "most expensive products"),
                               ("products", "rating", "best-rated products")))),
    Template(("Who are the {k} {what}?",),
             ("List our {k} {what}.", "I need the {k} {what}, in order.", "Name the {k} {what} for me."),
             _ranked("bottom_k", (("employees", "salary", "lowest-paid employees"),
                                  ("employees", "age", "youngest employees"),
                                  ("orders", "total", "smallest orders by total"),
                                  ("orders", "quantity", "orders with the fewest units"),
                                  ("products", "price", "cheapest products"),
                                  ("products", "rating", "worst-rated products")))),
    Template(("How many {subject} are there per {group}?",),
             ("Count the {subject} for each {group}.", "Give me a tally of {subject} by {group}.",
              "Break down the number of {subject} by {group}."),
             _pick(*[({"subject": subject, "group": group}, {"records": subject, "field": group})
                     for subject, group in (("employees", "department"), ("orders", "customer"),
                                            ("products", "category"), ("employees", "city"), ("orders", "product"),
                                            ("departments", "floor"))],
                   tool="count_by")),
    Template(("What is the {what}?",),
             ("Add up the {what}.", "Sum it up for me: the {what}.", "I need totals: the {what}."),
             _pick(({"what": "total order value per customer"},
                    {"records": "orders", "group_field": "customer", "value_field": "total"}),
                   ({"what": "total salary per department"},
                    {"records": "employees", "group_field": "department", "value_field": "salary"}),
                   ({"what": "number of units ordered per product"},
                    {"records": "orders", "group_field": "product", "value_field": "quantity"}),
                   ({"what": "total salary paid in each city"},
                    {"records": "employees", "group_field": "city", "value_field": "salary"}),
                   ({"what": "revenue per product from the orders' totals"},
                    {"records": "orders", "group_field": "product", "value_field": "total"}),
                   ({"what": "units bought by each customer"},
                    {"records": "orders", "group_field": "customer", "value_field": "quantity"}),
                   tool="sum_by")),
    Template(("What is the average {measure}?",),
             ("On average, what is the {measure}?", "Give me the mean {measure}.",
              "Work out the typical (mean) {measure}."),
             _pick(*[({"measure": measure}, {"records": dataset, "field": field}) for measure, dataset, field in (
                 ("salary of our employees", "employees", "salary"), ("age of our employees", "employees", "age"),
                 ("rating of our products", "products", "rating"), ("price of our products", "products", "price"),
                 ("order total", "orders", "total"), ("quantity per order", "orders", "quantity"))],
                   tool="average_of")),
    Template(("Combine the {what}.",),
             ("Merge the {what} into one list.", "Match up the {what}.", "Join the {what} for me."),
             _pick(({"what": "orders with their product details, matching on product"},
                    {"left": "orders", "right": "products", "on": "product"}),
                   ({"what": "employees with their department's floor and manager (by department)"},
                    {"left": "employees", "right": "departments", "on": "department"}),
                   ({"what": "products with the orders placed for each, matching on product"},
                    {"left": "products", "right": "orders", "on": "product"}),
                   ({"what": "departments with the employees in each (by department)"},
                    {"left": "departments", "right": "employees", "on": "department"}),
                   tool="join_records")),
    Template(("Here are test scores as records of student and score: {shown}. Sort them by score, highest first.",),
             ("My class's scores (student, score): {shown}. Rank them from best to worst score.",),
             _inline_sort),
    Template(("Here are test scores as records of student and score: {shown}. Which students scored above {x}?",),
             ("My class's scores (student, score): {shown}. Who got more than {x}?",),
             _inline_filter),
)

def examples() -> dict[str, list[dspy.Example]]:
    """The train and test requests."""
    return generate("records", TEMPLATES, SIZES, one_call_answer(TOOLS))


def metric(example: dspy.Example, trajectory: Trajectory) -> dspy.Prediction:
    """The records, groups or number asked for among the outputs, in one call."""
    return answer_metric(example, trajectory)
