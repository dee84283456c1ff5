"""A task's reward over its parts, and the per-family metrics every trace carries.

A task asks one part (the default) or several; one answer block holds every part's numbers in
part order, so a block with the wrong count leaves every part unanswered. Each part is graded
on its own (`grading.grade_answer`, graded or pass/fail, a grid point as a whole or coordinate by
coordinate); ``fraction`` scoring rewards the mean of the part scores,
``all`` the lowest. A one-part task scores exactly as `grading.grade` does.

Per family ``f`` (lower-cased, non-alphanumerics as ``_``) every trace carries ``has_f`` (1 when
the task has a part of that family), ``pass_f`` (1 when all of them are within tolerance) and
``error_f`` (their worst error relative to tolerance, ``error / tolerance``; -1 when the reply
is unparseable), all 0 when the task has no such part.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal, NamedTuple

from geo_reprojection_v1.grading import UNANSWERED, Grade, grade, grade_answer, parse_numbers, passes
from geo_reprojection_v1.problem import ARITY, FAMILIES

Scoring = Literal["fraction", "all"]
SCORINGS: tuple[Scoring, ...] = ("fraction", "all")


class Part(NamedTuple):
    family: str
    key: tuple[float, ...]
    tolerance: float


def metric_name(family: str) -> str:
    """`family` as a metric-name suffix: lower-cased, every non-alphanumeric as ``_``."""
    return re.sub(r"[^a-z0-9]", "_", family.lower())


class TaskGrade(NamedTuple):
    reward: float
    parts: tuple[Part, ...]
    grades: tuple[Grade, ...]

    @property
    def metrics(self) -> dict[str, float]:
        """``error`` / ``error_ratio`` of the worst part (by ratio), ``answered``, and per family."""
        worst = max(self.grades, key=lambda g: g.error_ratio)
        out = {"error": worst.error, "error_ratio": worst.error_ratio, "answered": worst.answered}
        for family in FAMILIES:
            name = metric_name(family)
            mine = [
                (part, g) for part, g in zip(self.parts, self.grades, strict=True) if part.family == family
            ]
            out[f"has_{name}"] = float(bool(mine))
            out[f"pass_{name}"] = float(
                bool(mine) and all(g.answered and passes(family, g.error, part.tolerance) for part, g in mine)
            )
            out[f"error_{name}"] = max((g.error_ratio for _, g in mine), default=0.0)
        return out


def grade_task(
    reply: str | None,
    parts: Sequence[Part],
    scoring: Scoring = "fraction",
    graded: bool = False,
    halflife: float = 1.0,
    per_coordinate: bool = False,
) -> TaskGrade:
    """Score `reply` against every part; the reward per `scoring` (see the module docstring)."""
    if not parts:
        raise ValueError("a task has at least one part")
    how = (graded, halflife, per_coordinate)
    if len(parts) == 1:
        (part,) = parts
        grades: tuple[Grade, ...] = (grade(reply, part.family, part.key, part.tolerance, *how),)
    else:
        answer = parse_numbers(reply, sum(ARITY[part.family] for part in parts))
        if answer is None:
            grades = (UNANSWERED,) * len(parts)
        else:
            grades, start = (), 0
            for part in parts:
                end = start + ARITY[part.family]
                grades += (grade_answer(answer[start:end], part.family, part.key, part.tolerance, *how),)
                start = end
    scores = [g.within_tolerance for g in grades]
    reward = min(scores) if scoring == "all" else sum(scores) / len(scores)
    return TaskGrade(reward, tuple(parts), grades)
