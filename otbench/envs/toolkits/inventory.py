"""Inventory: a small in-memory stock service, items by SKU, where the order of calls matters.

What it tests: a stateful service. Calls change the store (add, restock, sell, reprice, discount,
remove) or read it (get, list, value), a reply's calls run in order, and a request's answer depends
on the calls before it in the same reply: selling a new product before adding it, or more units
than are on the shelf before a delivery is booked in, fails. Tools that change stock (restock and
sell) or price (set and discount) take the same parameters.

Errors are raised, as :class:`InventoryError` with a code first in its message (an agent reads
``InventoryError: NOT_FOUND: no item with SKU 'ZZ-999'``): ``NOT_FOUND``, ``DUPLICATE_SKU``,
``INVALID_QUANTITY`` (not a whole number of at least 1), ``INVALID_PRICE`` (not a number of at
least 0), ``INVALID_DISCOUNT`` (a percent not strictly between 0 and 100), ``INSUFFICIENT_STOCK``.
A refused call changes nothing. A SKU or name that is not text is a ``TypeError``.

State: every task starts from a fresh store seeded from its ``store_seed`` (:func:`state`, which
:class:`~otbench.envs.functions.FunctionEnvironment` enters around the task's calls and scoring); a
call made outside any task (an optimizer probing a tool) meets a fresh store seeded with
:data:`DEFAULT_SEED`. The store lives in a :class:`contextvars.ContextVar`, so rollouts on parallel
threads never share one; a tool called directly outside any of these uses one default store per
thread. Every store holds the same eight catalogue items; the seed draws their stock and prices.
The metric reads the store the calls left: the answer must be among the outputs and the store
must be in the state the request asked for.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from typing import Any

import dspy

from otbench.core.trajectory import Trajectory
from otbench.envs.toolkits.generation import Draft, Template, call, generate
from otbench.envs.toolkits.metrics import answer_metric, matches

FINGERPRINT = "c41850fe4f88d3f9"
"""The digest of the generated requests (:func:`~otbench.envs.toolkits.generation.fingerprint`)."""
SIZES = {"train": 24, "test": 60}
DEFAULT_SEED = 0
"""The seed of the store a call made outside any task runs against."""

Record = dict[str, Any]

CATALOGUE = (("KB-101", "wireless keyboard", 49.0), ("MS-202", "optical mouse", 19.0),
             ("MN-303", "27-inch monitor", 289.0), ("HD-404", "noise-cancelling headset", 129.0),
             ("CB-505", "USB-C cable", 9.0), ("WC-606", "HD webcam", 59.0), ("DK-707", "docking station", 179.0),
             ("LS-808", "laptop stand", 39.0))
"""SKU, name and list price of the items every store holds."""

NEW_PRODUCTS = (("SP-901", "bluetooth speaker"), ("MP-902", "mouse pad"), ("PB-903", "power bank"),
                ("HB-904", "USB hub"), ("MC-905", "desk microphone"), ("TB-906", "graphics tablet"),
                ("RL-907", "ring light"), ("SS-908", "SSD drive"))
"""SKUs and names of products requests add."""


class InventoryError(Exception):
    """A refused request; ``code`` says why (the message starts with it)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


class Store:
    """Items by SKU, each a record of ``sku``, ``name``, ``price`` and ``stock``."""

    def __init__(self, items: dict[str, Record]) -> None:
        self.items = items

    @classmethod
    def seeded(cls, seed: int) -> Store:
        """The catalogue with stock (0 to 60) and prices (list price +-20%) drawn from ``seed``."""
        rng = random.Random(seed)
        return cls({sku: {"sku": sku, "name": name, "price": round(price * rng.uniform(0.8, 1.2), 2),
                          "stock": rng.randint(0, 60)} for sku, name, price in CATALOGUE})

    def item(self, sku: object) -> Record:
        if not isinstance(sku, str):
            raise TypeError(f"sku must be text such as 'KB-101', got {type(sku).__name__}")
        if sku not in self.items:
            raise InventoryError("NOT_FOUND", f"no item with SKU {sku!r}")
        return self.items[sku]

    def snapshot(self) -> dict[str, Record]:
        """A copy of every item, by SKU."""
        return {sku: dict(record) for sku, record in self.items.items()}


_CURRENT: ContextVar[Store | None] = ContextVar("otbench_inventory_store", default=None)
_OUTSIDE = threading.local()


def current_store() -> Store:
    """The store calls run against: the task's, else this thread's default one."""
    store = _CURRENT.get()
    if store is None:
        store = getattr(_OUTSIDE, "store", None)
        if store is None:
            store = _OUTSIDE.store = Store.seeded(DEFAULT_SEED)
    return store


@contextmanager
def opened_store(seed: int) -> Iterator[Store]:
    """A fresh store seeded with ``seed`` for the calls made inside the block (in this context only)."""
    store = Store.seeded(seed)
    token = _CURRENT.set(store)
    try:
        yield store
    finally:
        _CURRENT.reset(token)


def state(task: dspy.Example | None) -> AbstractContextManager[Store]:
    """The :data:`~otbench.envs.functions.StateFactory` of this family: a task's own fresh store, or a default one."""
    return opened_store(int(task.get("store_seed", DEFAULT_SEED)) if task is not None else DEFAULT_SEED)


def _quantity(quantity: object) -> int:
    if isinstance(quantity, bool) or not isinstance(quantity, int) or quantity < 1:
        raise InventoryError("INVALID_QUANTITY", f"quantity must be a whole number of at least 1, got {quantity!r}")
    return quantity


def _price(price: object) -> float:
    if isinstance(price, bool) or not isinstance(price, (int, float)) or price < 0:
        raise InventoryError("INVALID_PRICE", f"price must be a number of at least 0, got {price!r}")
    return round(float(price), 2)


def add_item(sku: str, name: str, price: float, stock: int = 0) -> Record:
    """Add a new item to the catalogue with its SKU, name, price and starting stock (default 0); returns its
    record (sku, name, price, stock). Fails with DUPLICATE_SKU when the SKU exists, INVALID_PRICE or
    INVALID_QUANTITY (a starting stock must be a whole number of at least 0)."""
    store = current_store()
    if not isinstance(sku, str) or not isinstance(name, str):
        raise TypeError("sku and name must be text")
    if sku in store.items:
        raise InventoryError("DUPLICATE_SKU", f"an item with SKU {sku!r} exists")
    cost = _price(price)
    if isinstance(stock, bool) or not isinstance(stock, int) or stock < 0:
        raise InventoryError("INVALID_QUANTITY", f"stock must be a whole number of at least 0, got {stock!r}")
    store.items[sku] = {"sku": sku, "name": name, "price": cost, "stock": stock}
    return dict(store.items[sku])


def get_item(sku: str) -> Record:
    """The record of the item with this SKU: sku, name, price and stock. Fails with NOT_FOUND."""
    return dict(current_store().item(sku))


def list_skus(min_stock: int = 0) -> list[str]:
    """The SKUs of the items with at least min_stock units in stock (default 0: every item), sorted."""
    if isinstance(min_stock, bool) or not isinstance(min_stock, int):
        raise TypeError(f"min_stock must be a whole number, got {type(min_stock).__name__}")
    return sorted(sku for sku, record in current_store().items.items() if record["stock"] >= min_stock)


def restock_item(sku: str, quantity: int) -> int:
    """Book in a delivery: add quantity units to the item's stock; returns the new stock. Fails with NOT_FOUND or
    INVALID_QUANTITY."""
    record = current_store().item(sku)
    record["stock"] += _quantity(quantity)
    return int(record["stock"])


def sell_units(sku: str, quantity: int) -> int:
    """Record a sale: take quantity units out of the item's stock; returns the stock left. Fails with NOT_FOUND,
    INVALID_QUANTITY or INSUFFICIENT_STOCK (more units than in stock)."""
    record = current_store().item(sku)
    count = _quantity(quantity)
    if count > record["stock"]:
        raise InventoryError("INSUFFICIENT_STOCK", f"{sku} has {record['stock']} units, fewer than {count}")
    record["stock"] -= count
    return int(record["stock"])


def set_price(sku: str, price: float) -> float:
    """Give the item a new price; returns the price it replaced. Fails with NOT_FOUND or INVALID_PRICE."""
    record = current_store().item(sku)
    before, record["price"] = record["price"], _price(price)
    return float(before)


def apply_discount(sku: str, percent: float) -> float:
    """Lower the item's price by percent (strictly between 0 and 100), rounded to cents; returns the new price.
    Fails with NOT_FOUND or INVALID_DISCOUNT."""
    record = current_store().item(sku)
    if isinstance(percent, bool) or not isinstance(percent, (int, float)) or not 0 < percent < 100:
        raise InventoryError("INVALID_DISCOUNT", f"percent must be a number between 0 and 100, got {percent!r}")
    record["price"] = round(record["price"] * (1 - percent / 100), 2)
    return float(record["price"])


def remove_item(sku: str) -> Record:
    """Take the item out of the catalogue; returns the record it had. Fails with NOT_FOUND."""
    store = current_store()
    record = store.item(sku)
    del store.items[sku]
    return dict(record)


def stock_value(sku: str) -> float:
    """What the item's stock is worth: its price times its units in stock, rounded to cents. Fails with
    NOT_FOUND."""
    record = current_store().item(sku)
    return round(record["price"] * record["stock"], 2)


def total_value() -> float:
    """What the whole stock is worth: the sum over every item of its price times its units, rounded to cents."""
    return round(sum(record["price"] * record["stock"] for record in current_store().items.values()), 2)


TOOLS = (add_item, get_item, list_skus, restock_item, sell_units, set_price, apply_discount, remove_item,
         stock_value, total_value)

_BY_NAME: dict[str, Callable[..., Any]] = {tool.__name__: tool for tool in TOOLS}


# -- requests -----------------------------------------------------------------------------------------------
def _drawn(rng: random.Random) -> tuple[int, Store]:
    seed = rng.randrange(1, 1_000_000)
    return seed, Store.seeded(seed)


def _stocked(rng: random.Random, store: Store, at_least: int = 1) -> Record:
    return rng.choice([record for record in store.items.values() if record["stock"] >= at_least])


def _one_item(build: Callable[[random.Random, Record], tuple[dict[str, Any], dict[str, Any]]], tool: str,
              at_least: int = 0) -> Callable[[random.Random], Draft]:
    """A request on one catalogue item with at least ``at_least`` units: ``build`` gives its slots and arguments."""
    def draw(rng: random.Random) -> Draft:
        seed, store = _drawn(rng)
        item = _stocked(rng, store, at_least)
        slots, arguments = build(rng, item)
        return Draft({"sku": item["sku"], "name": item["name"], **slots}, [call(tool, sku=item["sku"], **arguments)],
                     {"store_seed": seed})
    return draw


def _restock_build(rng: random.Random, item: Record) -> tuple[dict[str, Any], dict[str, Any]]:
    quantity = rng.randint(5, 50)
    return {"q": quantity}, {"quantity": quantity}


def _sell_build(rng: random.Random, item: Record) -> tuple[dict[str, Any], dict[str, Any]]:
    quantity = rng.randint(1, item["stock"])
    return {"q": quantity}, {"quantity": quantity}


def _discount_build(rng: random.Random, item: Record) -> tuple[dict[str, Any], dict[str, Any]]:
    percent = rng.choice([5, 10, 15, 20, 25, 30, 40, 50])
    return {"p": percent}, {"percent": percent}


def _new_price(rng: random.Random, item: Record) -> float:
    return round(item["price"] * rng.choice([0.75, 0.85, 0.9, 1.1, 1.15, 1.25]), 2)


def _reprice_build(rng: random.Random, item: Record) -> tuple[dict[str, Any], dict[str, Any]]:
    price = _new_price(rng, item)
    return {"price": price}, {"price": price}


def _nothing(rng: random.Random, item: Record) -> tuple[dict[str, Any], dict[str, Any]]:
    return {}, {}


def _listing(rng: random.Random) -> Draft:
    seed, _store = _drawn(rng)
    least = rng.randint(10, 50)
    return Draft({"n": least}, [call("list_skus", min_stock=least)], {"store_seed": seed})


def _add_then_sell(rng: random.Random) -> Draft:
    seed, _ = _drawn(rng)
    sku, name = rng.choice(NEW_PRODUCTS)
    price, units = round(rng.uniform(8, 150), 2), rng.randint(10, 40)
    sold = rng.randint(1, units - 1)
    return Draft({"sku": sku, "name": name, "price": price, "s": units, "q": sold},
                 [call("add_item", sku=sku, name=name, price=price, stock=units),
                  call("sell_units", sku=sku, quantity=sold)], {"store_seed": seed})


def _restock_then_sell(rng: random.Random) -> Draft:
    """More units sold than were in stock before the delivery: only delivery-then-sale works."""
    seed, store = _drawn(rng)
    item = _stocked(rng, store, 0)
    arrived = rng.randint(10, 40)
    sold = rng.randint(item["stock"] + 1, item["stock"] + arrived)
    return Draft({"sku": item["sku"], "name": item["name"], "q": arrived, "q2": sold},
                 [call("restock_item", sku=item["sku"], quantity=arrived),
                  call("sell_units", sku=item["sku"], quantity=sold)], {"store_seed": seed})


def _reprice_then_total(rng: random.Random) -> Draft:
    seed, store = _drawn(rng)
    item = _stocked(rng, store, 1)
    price = _new_price(rng, item)
    return Draft({"sku": item["sku"], "name": item["name"], "price": price},
                 [call("set_price", sku=item["sku"], price=price), call("total_value")], {"store_seed": seed})


def _remove_then_list(rng: random.Random) -> Draft:
    """The removed item has at least the listed stock: listing first would still show it."""
    seed, store = _drawn(rng)
    item = _stocked(rng, store, 10)
    least = rng.randint(5, item["stock"])
    return Draft({"sku": item["sku"], "name": item["name"], "n": least},
                 [call("remove_item", sku=item["sku"]), call("list_skus", min_stock=least)], {"store_seed": seed})


def _discount_then_value(rng: random.Random) -> Draft:
    seed, store = _drawn(rng)
    item = _stocked(rng, store, 1)
    slots, arguments = _discount_build(rng, item)
    return Draft({"sku": item["sku"], "name": item["name"], **slots},
                 [call("apply_discount", sku=item["sku"], **arguments), call("stock_value", sku=item["sku"])],
                 {"store_seed": seed})


TEMPLATES = (
    Template(("A delivery of {q} units of the {name} ({sku}) just arrived. How many do we have in stock now?",),
             ("We just received {q} more of the {name}, SKU {sku}. What's the stock level after booking them in?",
              "Book in a shipment of {q} units for {sku} ({name}) and tell me the new stock count.",
              "Our supplier dropped off {q} x {sku}. How many are on the shelf now?"),
             _one_item(_restock_build, "restock_item")),
    Template(("We sold {q} units of {sku} ({name}) this morning. How many are left?",),
             ("A customer just bought {q} of the {name} ({sku}). Record the sale: how many remain?",
              "Ship {q} units of {sku} to a customer and tell me what's left in stock.",
              "Take {q} units of the {name} ({sku}) out of stock for an order. What's the remaining quantity?"),
             _one_item(_sell_build, "sell_units", at_least=1)),
    Template(("What are the current price and stock of {sku}?",),
             ("Look up item {sku} for me: its full record, please.", "What do we have on file for SKU {sku}?",
              "Pull up the details of the {name} ({sku})."),
             _one_item(_nothing, "get_item")),
    Template(("Put {sku} ({name}) on sale at {p}% off. What's its new price?",),
             ("Mark the {name} ({sku}) down by {p} percent; what does it cost afterwards?",
              "Apply a {p}% discount to {sku} and tell me the resulting price.",
              "Cut the price of {sku} by {p}%. New price?"),
             _one_item(_discount_build, "apply_discount")),
    Template(("Change the price of {sku} to {price}. What did it cost before?",),
             ("Reprice {sku} ({name}) at {price}, and tell me the old price.",
              "Set {sku}'s price to {price}; what was the price before the change?",
              "From today {sku} sells for {price}. What price did it have until now?"),
             _one_item(_reprice_build, "set_price")),
    Template(("Which SKUs have at least {n} units in stock?",),
             ("List the items with {n} or more units on hand.", ("Which products could fill an order of {n} units "
              "right now?"), "Give me every SKU whose stock is {n} or higher."),
             _listing),
    Template(("What is the stock of {sku} ({name}) worth at its current price?",),
             ("How much money is tied up in our {name} stock ({sku})?", "Value the {sku} stock at the current price.",
              "What's the total value of the units of {sku} we hold?"),
             _one_item(_nothing, "stock_value")),
    Template((("Add a new product: {name}, SKU {sku}, priced {price}, with {s} units. Then sell {q} of them. "
              "How many remain?"),),
             (("We're listing a new {name} under SKU {sku} at {price} with {s} units in stock; an order for {q} comes "
              "in straight away. How many are left after it ships?"),
              "Create item {sku} ({name}, price {price}, {s} in stock), then record a sale of {q}. What's the stock now?",
              ("New product {sku}: a {name} at {price}, {s} units. Sell {q} right after adding it and tell me the "
              "stock left.")),
             _add_then_sell),
    Template(("{q} units of {sku} arrived, and then a customer ordered {q2}. How many are left after both?",),
             (("First book in a delivery of {q} of the {name} ({sku}), then fulfil an order of {q2}. What stock "
              "remains?"),
              "Receive {q} units of {sku} and afterwards sell {q2} of them; how many do we have at the end?",
              "After restocking {sku} with {q} units, we shipped {q2}. Stock now?"),
             _restock_then_sell),
    Template(("Set the price of {sku} to {price}, then tell me what the whole inventory is worth.",),
             ("Reprice {sku} to {price} and then give me the total value of all stock.",
              "After changing {sku}'s price to {price}, what is everything in stock worth?",
              "Update the {name} ({sku}) to cost {price}; then value the entire inventory."),
             _reprice_then_total),
    Template(("Discontinue {sku}, then list the SKUs that still have at least {n} units.",),
             (("Remove the {name} ({sku}) from the catalogue and tell me which items have {n} or more in stock "
              "afterwards."),
              "Delete item {sku}; after that, which SKUs hold at least {n} units?",
              "Drop {sku} from the range, then give me the SKUs with a stock of {n} or more."),
             _remove_then_list),
    Template(("Discount {sku} by {p}% and tell me what its stock is worth afterwards.",),
             ("Take {p} percent off the {name} ({sku}), then value its stock at the new price.",
              "After a {p}% markdown on {sku}, how much is the stock of it worth?",
              "Reduce {sku}'s price by {p}% and then tell me the value of the units we hold."),
             _discount_then_value),
)


def _answer(draft: Draft) -> dict[str, Any]:
    """The last gold call's output, and what the calls changed in the store (SKU -> record, None: removed)."""
    with opened_store(draft.fields["store_seed"]) as store:
        before = store.snapshot()
        outputs = [_BY_NAME[gold["name"]](**gold["arguments"]) for gold in draft.calls]
        after = store.snapshot()
    changes = {sku: after.get(sku) for sku in sorted(set(before) | set(after)) if before.get(sku) != after.get(sku)}
    return {"answer": outputs[-1], "state_changes": changes}


def examples() -> dict[str, list[dspy.Example]]:
    """The train and test requests."""
    return generate("inventory", TEMPLATES, SIZES, _answer)


def _state_problem(example: dspy.Example) -> str | None:
    expected = Store.seeded(int(example.store_seed)).snapshot()
    for sku, record in example.state_changes.items():
        if record is None:
            expected.pop(sku, None)
        else:
            expected[sku] = record
    if matches(expected, current_store().snapshot()):
        return None
    return "The store was not left as the request asked: an item's stock or price, or which items exist, differs."


def metric(example: dspy.Example, trajectory: Trajectory) -> dspy.Prediction:
    """The answer among the outputs, in no more calls than needed, and the store left as the request asked (read
    from the task's store, so it is scored inside the task's state)."""
    return answer_metric(example, trajectory, state_check=_state_problem)
