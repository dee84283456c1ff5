"""What an answer read off the page earns at a rung: the fitted surface answer and the degenerate ones.

A surface answer writes, for each number the reply owes, one of the numbers its part's text prints
(a coordinate, a stated factor, an EPSG code, the worksheet's figures) or 1, its point moved from
three places left to six right, either sign, or 0: no product and no projection. Each answer slot's
choice is fitted on train tasks by coordinate ascent on the task's own scoring (`fit`) and judged on
eval tasks (`mean`). The degenerate answers (`DEGENERATE`) ignore the point altogether. The tests
bound both by the honest work (`tests/test_shortcuts.py`); `bench/shortcuts.py` prints them per rung.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from geo_reprojection_v1 import prompt, scoring
from geo_reprojection_v1.taskset import GeoConfig, GeoPart, GeoTask, make_task_data

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
SHIFTS = range(-3, 7)
"""How far a surface answer may move a printed number's point (10**k)."""
EXAMPLE = (512345.678, 6123456.789)
"""The answer-format example the system prompt once printed."""

Slot = tuple[int, int]
"""(part, number within the part) of one number a reply owes."""
Choice = dict[Slot, tuple[int, int, int]]
"""A surface answer: per slot, (which printed number, the point's shift, the sign; 0 writes 0)."""
Tasks = list[tuple[GeoTask, list[list[float]]]]
"""Tasks, each with the numbers each of its parts prints."""

DEGENERATE: dict[str, Callable[[GeoPart], list[float]]] = {
    "zeros": lambda part: [0.0] * len(part.key),
    "echo": lambda part: [*part.inputs, *[0.0] * len(part.key)][: len(part.key)],
    "example": lambda part: list(EXAMPLE[: len(part.key)]),
}
"""Answers that ignore the point, per part: every number 0, the part's input numbers copied, the old
answer-format example."""


def printed(task: GeoTask) -> list[list[float]]:
    """The numbers each part's text prints, in order (the first 12), 1 first."""
    texts = prompt.part_texts(task.data.prompt_text)
    return [[1.0, *(float(x) for x in _NUMBER.findall(text)[:12])] for text in texts]


def reward(task: GeoTask, values: list[float]) -> float:
    """The task's reward for an answer block of `values`, scored as the environment scores it."""
    data, config = task.data, task.config
    parts = [scoring.Part(part.family, tuple(part.key), part.tolerance) for part in data.parts]
    reply = "<answer>" + ", ".join(repr(v) for v in values) + "</answer>"
    how = (config.graded, config.graded_halflife, config.graded_per_coordinate)
    return scoring.grade_task(reply, parts, data.scoring, *how).reward


def _slots(task: GeoTask) -> list[Slot]:
    return [(i, j) for i, part in enumerate(task.data.parts) for j in range(len(part.key))]


def answer(task: GeoTask, numbers: list[list[float]], choice: Choice) -> list[float]:
    """The values `choice` writes for `task`, whose parts print `numbers`."""
    values = []
    for slot in _slots(task):
        index, shift, sign = choice.get(slot, (0, 0, 0))
        row = numbers[slot[0]]
        values.append(0.0 if sign == 0 else sign * row[min(index, len(row) - 1)] * 10.0**shift)
    return values


def mean(tasks: Tasks, choice: Choice) -> float:
    """The mean reward of the surface answer `choice` over `tasks`."""
    return sum(reward(task, answer(task, numbers, choice)) for task, numbers in tasks) / len(tasks)


def fit(tasks: Tasks) -> Choice:
    """The surface answer that earns most on `tasks`, slot by slot, two passes."""
    slots = sorted({slot for task, _ in tasks for slot in _slots(task)})
    width = max(len(row) for _, numbers in tasks for row in numbers)
    options = [(0, 0, 0)] + [(i, k, s) for i in range(width) for k in SHIFTS for s in (1, -1)]
    choice: Choice = {}
    for _ in range(2):
        for slot in slots:
            choice[slot] = max(options, key=lambda option: mean(tasks, {**choice, slot: option}))
    return choice


def tasks(level: int, split: str, count: int) -> Tasks:
    """The first `count` tasks of a rung's split, each with the numbers its parts print."""
    config = GeoConfig(level=level, split=split)
    built = [GeoTask(make_task_data(config, idx), config.task) for idx in range(count)]
    return [(task, printed(task)) for task in built]


def degenerate_means(judged: Tasks) -> dict[str, float]:
    """Each `DEGENERATE` answer's mean reward over `judged`."""
    means = {}
    for name, make in DEGENERATE.items():
        answers = [[v for part in task.data.parts for v in make(part)] for task, _ in judged]
        rewards = [reward(task, values) for (task, _), values in zip(judged, answers)]
        means[name] = sum(rewards) / len(judged)
    return means
