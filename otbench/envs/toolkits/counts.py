"""Counts: six small computations over a text or a number, written as everyday untyped Python.

What it tests, beside :mod:`.shapes` and on other errors: tools whose parameters are shown with no type
and no argument check, named for what the value stands for (``document``, ``invoice``, ``quantity``) rather
than what it is (a text, a number), whose failures are the runtime's attribute, conversion and operand errors
(``AttributeError: 'dict' object has no attribute 'split'``, ``TypeError: float() argument must be a
string or a real number, not 'dict'``, ``TypeError: must be real number, not dict``), none naming a
parameter. Three tools take ``document`` and all return a count; two take ``quantity``; one takes ``invoice``.
Every request needs one call.
"""

from __future__ import annotations

import math
import random
from typing import Any

import dspy

from otbench.core.trajectory import Trajectory
from otbench.envs.toolkits.generation import Draft, Template, call, generate, number_draw, one_call_answer
from otbench.envs.toolkits.metrics import answer_metric

FINGERPRINT = "c384adc430f76668"
"""The digest of the generated requests (:func:`~otbench.envs.toolkits.generation.fingerprint`)."""
SIZES = {"train": 12, "test": 42}
UNTYPED = True
"""The tools carry no annotations and check no argument: the runtime's errors are all a caller sees."""


def word_count(document):
    """How many words ``document`` has (split on whitespace): ``document`` is the text itself, a string."""
    return len(document.split())


def vowel_count(document):
    """How many vowels (a, e, i, o, u, in either case) ``document`` has: ``document`` is the text itself, a
    string."""
    return sum(letter in "aeiou" for letter in document.lower())


def letter_count(document):
    """How many characters ``document`` has, spaces left out: ``document`` is the text itself, a string."""
    return len(document.replace(" ", ""))


def to_cents(invoice):
    """An amount of money in cents, invoice * 100 rounded to a whole number: ``invoice`` is the amount itself, a
    number or a numeric string."""
    return round(float(invoice) * 100)


def square_root(quantity):
    """The square root of ``quantity``, rounded to 4 decimals: ``quantity`` is the number itself, not negative."""
    return round(math.sqrt(quantity), 4)


def cube_root(quantity):
    """The cube root of ``quantity`` (quantity ** (1/3)), rounded to 4 decimals: ``quantity`` is the number itself,
    not negative."""
    return round(quantity ** (1 / 3), 4)


TOOLS = (word_count, vowel_count, letter_count, to_cents, square_root, cube_root)

_WORDS = ("red", "apple", "river", "stone", "quiet", "morning", "garden", "light", "paper", "ocean", "violin",
          "window", "bright", "under", "silver", "yellow", "island", "orange", "ticket", "autumn")


def _text(tool: str) -> Any:
    """A draw of a phrase of three to six words, counted by ``tool``."""
    def draw(rng: random.Random) -> Draft:
        phrase = " ".join(rng.sample(_WORDS, rng.randint(3, 6)))
        return Draft({"t": phrase}, [call(tool, document=phrase)])
    return draw


TEMPLATES = (
    Template(('How many words are in the phrase "{t}"?',
              'Count the words of "{t}".'),
             ('My title reads "{t}". How many words does it have?',
              'What is the word count of the line "{t}"?',
              'Tell me how many words "{t}" contains.'),
             _text("word_count")),
    Template(('How many vowels are in "{t}"?',
              'Count the vowels in the phrase "{t}".'),
             ('How many of the letters in "{t}" are vowels?',
              'The password hint is "{t}"; how many vowels does it contain?',
              'Give the number of vowels in the line "{t}".'),
             _text("vowel_count")),
    Template(('How many characters, not counting spaces, are in "{t}"?',
              'Count the characters of "{t}" without the spaces.'),
             ('Leaving spaces out, how long is "{t}" in characters?',
              'The banner says "{t}". How many characters must be cut out, spaces excluded?',
              'What is the length of "{t}" if spaces are not counted?'),
             _text("letter_count")),
    Template(("How many cents is {v} dollars?",
              "Convert ${v} to cents."),
             ("The bill is {v} euros; what is that in cents?",
              "Express a price of {v} in cents.",
              "My balance is {v} dollars. How many cents do I have?"),
             number_draw("to_cents", "invoice", 1, 500, decimals=2)),
    Template(("What is the square root of {v}?",
              "Take the square root of {v}."),
             ("A square plot has an area of {v} square metres. How long is each side?",
              "Which number multiplied by itself gives {v}?",
              "Give me the square root of the number {v}."),
             number_draw("square_root", "quantity", 2, 5000)),
    Template(("What is the cube root of {v}?",
              "Take the cube root of {v}."),
             ("A cube holds {v} cubic centimetres. How long is each edge?",
              "Which number cubed gives {v}?",
              "Give me the cube root of the number {v}."),
             number_draw("cube_root", "quantity", 2, 5000)),
)


def examples() -> dict[str, list[dspy.Example]]:
    """The train and test requests."""
    return generate("counts", TEMPLATES, SIZES, one_call_answer(TOOLS))


def metric(example: dspy.Example, trajectory: Trajectory) -> dspy.Prediction:
    """The count among the outputs, in one call."""
    return answer_metric(example, trajectory)
