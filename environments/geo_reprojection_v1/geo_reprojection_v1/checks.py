"""What `validate()` re-derives for one part of a task from its prompt text alone: the key from PROJ,
the round trip back through PROJ, every point inside the grid's areas, and the formula the part states
(within the part's tolerance of PROJ's key, and within the bound the prompt states where it states one)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from geo_reprojection_v1 import formula, grading, reference
from geo_reprojection_v1.grids import GRIDS, in_box, in_boxes
from geo_reprojection_v1.problem import BEARING, DISTANCE, INVERSE, REPROJECT, Problem

ROUND_TRIP_M = 0.01
"""Every coordinate must come back through PROJ within this many metres."""
KEY_AGREEMENT = {REPROJECT: 1e-6, INVERSE: 1e-6, DISTANCE: 1e-6, BEARING: 1e-9}
"""The stored key must match the re-derived one this closely (metres; degrees for bearings)."""
AREA_SLACK_DEG = 1e-7
"""How far (about a centimetre) a derived point may sit outside an area because of rounding."""


def part_holds(
    problem: Problem, key: Sequence[float], tolerance: float, stated: Problem, stated_tolerance: float
) -> bool:
    """A part (`problem`, its stored `key` and `tolerance`) agrees with what its text states, and
    its key with PROJ."""
    if (
        stated_tolerance != tolerance
        or stated.family != problem.family
        or stated.inputs != problem.inputs
        or (stated.grid and stated.grid != problem.grid)
        or problem.grid not in GRIDS
    ):
        return False
    derived = reference.solve(problem)
    return (
        len(derived) == len(key)
        and all(math.isfinite(value) for value in derived)
        and grading.error(problem.family, tuple(key), derived) <= KEY_AGREEMENT[problem.family]
        and reference.round_trip_error(problem, derived) <= ROUND_TRIP_M
        and _inside(problem, derived)
    )


def formula_holds(problem: Problem, key: Sequence[float], tolerance: float, text: str, guided: bool) -> bool:
    """A part's text states a formula exactly when it is guided and the part has one
    (`formula.formula_line`); then it is that formula, and what the formula gives is within the
    part's tolerance of the key, and within the bound the prompt states (a UTM point's 200 m)."""
    stated = [line for line in text.splitlines() if line.startswith("Formula: ")]
    expected = formula.formula_line(problem) if guided else None
    if stated != ([expected] if expected else []):
        return False
    if expected is None:
        return True
    error = grading.error(problem.family, formula.formula_answer(problem), tuple(key))
    bound = formula.formula_bound(problem)
    if bound is not None and not (f"within {bound:g} m of the exact point" in expected and error <= bound):
        return False
    return grading.passes(problem.family, error, tolerance)


def _inside(problem: Problem, key: tuple[float, ...]) -> bool:
    """Every WGS 84 point of the problem lies in the grid's area of use and its datum shift's area."""
    family, grid_name, inputs = problem
    grid = GRIDS[grid_name]
    points = [key] if family == INVERSE else [inputs[i : i + 2] for i in range(0, len(inputs), 2)]
    areas = [grid.area] + ([grid.shift.area] if grid.shift else [])
    return all(
        in_boxes(grid.boxes, lon, lat, AREA_SLACK_DEG)
        and all(in_box(area, lon, lat, AREA_SLACK_DEG) for area in areas)
        for lon, lat in points
    )
