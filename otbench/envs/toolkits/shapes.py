"""Shapes: six measures of circles, spheres, squares and cubes, written as everyday untyped Python.

What it tests: learning tools whose parameters are shown but say nothing of their type, with no
argument checks, whose errors are the Python runtime's own. Every tool takes one parameter named for the
object it measures (``circle``, ``ball``, ``piece``) though it wants the object's radius or side as a
number, as much everyday code does, with no annotation and no validation: a value that is not a number
(an object such as ``{"radius": 2}``) fails inside the arithmetic (``TypeError: unsupported operand type(s)
for ** or pow(): 'dict' and 'int'``), an error that names no parameter. Tools come in pairs taking the same
parameter, so its name does not say which measure a tool computes: only what it returned for a value does. Results are rounded to 4
decimals. Every request needs one call.
"""

from __future__ import annotations

import math

import dspy

from otbench.core.trajectory import Trajectory
from otbench.envs.toolkits.generation import Template, generate, number_draw, one_call_answer
from otbench.envs.toolkits.metrics import answer_metric

FINGERPRINT = "1b139224d3feb816"
"""The digest of the generated requests (:func:`~otbench.envs.toolkits.generation.fingerprint`)."""
SIZES = {"train": 12, "test": 42}
UNTYPED = True
"""The tools carry no annotations and check no argument: the runtime's errors are all a caller sees."""


def circle_area(circle):
    """Area of a circle, pi * circle ** 2, rounded to 4 decimals: ``circle`` is the radius itself, a number."""
    return round(math.pi * circle ** 2, 4)


def circle_circumference(circle):
    """Circumference of a circle, 2 * pi * circle, rounded to 4 decimals: ``circle`` is the radius itself, a
    number."""
    return round(2 * math.pi * circle, 4)


def sphere_volume(ball):
    """Volume of a sphere, 4/3 * pi * ball ** 3, rounded to 4 decimals: ``ball`` is the radius itself, a number."""
    return round(4 / 3 * math.pi * ball ** 3, 4)


def sphere_surface_area(ball):
    """Surface area of a sphere, 4 * pi * ball ** 2, rounded to 4 decimals: ``ball`` is the radius itself, a
    number."""
    return round(4 * math.pi * ball ** 2, 4)


def square_area(piece):
    """Area of a square, piece ** 2, rounded to 4 decimals: ``piece`` is the side length itself, a number."""
    return round(piece ** 2, 4)


def cube_volume(piece):
    """Volume of a cube, piece ** 3, rounded to 4 decimals: ``piece`` is the edge length itself, a number."""
    return round(piece ** 3, 4)


TOOLS = (circle_area, circle_circumference, sphere_volume, sphere_surface_area, square_area, cube_volume)


TEMPLATES = (
    Template(("A round table top has a radius of {v} m. What is its area in square metres?",
              "What is the area of a circle whose radius is {v}?"),
             ("A circular pond has a radius of {v} metres; how much surface does it cover?",
              "How many square metres does a round rug of radius {v} m cover?",
              "A pizza has a radius of {v} cm. What is the area of its top?"),
             number_draw("circle_area", "circle", 0.5, 40, decimals=1)),
    Template(("A circular running track has a radius of {v} m. How long is one lap?",
              "What is the circumference of a circle of radius {v}?"),
             ("How much fencing goes once around a round garden of radius {v} metres?",
              "A wheel has a radius of {v} cm; how far does it roll in one turn?",
              "What length of ribbon wraps once around a round cake of radius {v} cm?"),
             number_draw("circle_circumference", "circle", 0.5, 40, decimals=1)),
    Template(("A ball has a radius of {v} cm. What is its volume?",
              "What is the volume of a sphere of radius {v}?"),
             ("How much water fills a spherical tank of radius {v} metres?",
              "A globe has a radius of {v} cm; how much space does it take up inside?",
              "What volume of air is in a round balloon of radius {v} cm?"),
             number_draw("sphere_volume", "ball", 0.5, 30, decimals=1)),
    Template(("A ball has a radius of {v} cm. What is the area of its surface?",
              "What is the surface area of a sphere of radius {v}?"),
             ("How much paint area does a spherical tank of radius {v} metres have on its outside?",
              "A globe has a radius of {v} cm; how much map fits on its surface?",
              "What area of leather covers a round ball of radius {v} cm?"),
             number_draw("sphere_surface_area", "ball", 0.5, 30, decimals=1)),
    Template(("A square tile has sides of {v} cm. What is its area?",
              "What is the area of a square with side {v}?"),
             ("A square courtyard is {v} metres on each side; how much ground does it cover?",
              "How many square centimetres is a square photo {v} cm wide and {v} cm tall?",
              "A square field measures {v} m along each edge. What is its area?"),
             number_draw("square_area", "piece", 1, 60, decimals=1)),
    Template(("A cube has edges of {v} cm. What is its volume?",
              "What is the volume of a cube with side {v}?"),
             ("How much water does a cubic tank {v} metres on each edge hold?",
              "A dice is {v} cm along each edge; what is its volume?",
              "A cube-shaped box measures {v} cm on every side. How much does it hold?"),
             number_draw("cube_volume", "piece", 1, 40, decimals=1)),
)


def examples() -> dict[str, list[dspy.Example]]:
    """The train and test requests."""
    return generate("shapes", TEMPLATES, SIZES, one_call_answer(TOOLS))


def metric(example: dspy.Example, trajectory: Trajectory) -> dspy.Prediction:
    """The measure among the outputs, in one call."""
    return answer_metric(example, trajectory)
