"""geo-reprojection-v1: coordinate reprojection and geodesy, graded against PROJ.

Task: one of four families on nine projected grids. ``reproject`` WGS 84 lon/lat to a
grid's easting/northing, ``inverse`` the reverse, ``distance`` and ``bearing`` of the
geodesic between two WGS 84 points. The prompt names the EPSG codes and the datum operation
the key uses; the key is PROJ's answer for the printed inputs (`reference.solve`).
Reward: ``within_tolerance`` (1.0): 1 when the physical error is within the family's
tolerance (1 m, 1 m, 10 m, 0.05 degrees by default), else 0; with ``task.graded`` the
smooth decay 1 / (1 + (error / (tolerance * halflife))^2). Metrics: ``error``,
``error_ratio`` (error / tolerance) and ``answered`` (the reply parsed).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator

import verifiers.v1 as vf
from piv_core.compat import TaskData
from piv_core.rng import Split, split_rng, task_id
from pydantic import ValidationInfo, field_validator

from geo_reprojection_v1 import generator, grading, prompt, reference
from geo_reprojection_v1.grids import GRIDS, in_box, in_boxes
from geo_reprojection_v1.problem import BEARING, DISTANCE, FAMILIES, INVERSE, REPROJECT, Problem

DEFAULT_SEED = 20260826
ROUND_TRIP_M = 0.01
"""validate(): every coordinate must come back through PROJ within this many metres."""
KEY_AGREEMENT = {REPROJECT: 1e-6, INVERSE: 1e-6, DISTANCE: 1e-6, BEARING: 1e-9}
"""validate(): the stored key must match the re-derived one this closely (metres; degrees for bearings)."""
AREA_SLACK_DEG = 1e-7
"""validate(): how far (about a centimetre) a derived point may sit outside an area because of rounding."""


class GeoData(TaskData):
    family: str
    """reproject, inverse, distance or bearing."""
    grid: str
    """The grid converted to or from, or the grid whose area both geodesic points were drawn in."""
    inputs: list[float]
    """The input numbers exactly as printed in the prompt."""
    key: list[float]
    """PROJ's answer: (easting, northing), (lon, lat), (distance,) or (azimuth,)."""
    tolerance: float
    """The pass threshold quoted in the prompt: metres, or degrees for bearings."""

    @property
    def problem(self) -> Problem:
        return Problem(self.family, self.grid, tuple(self.inputs))


class GeoTaskConfig(vf.TaskConfig):
    graded: bool = False
    """Fold the error into the reward as 1 / (1 + (error / (tolerance * graded_halflife))^2)."""
    graded_halflife: float = 1.0
    """The error, in tolerance units, at which the graded reward is 0.5."""

    @field_validator("graded_halflife")
    @classmethod
    def _positive_halflife(cls, value: float) -> float:
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"graded_halflife must be a positive number, got {value}")
        return value


class GeoTask(vf.Task[GeoData, vf.State, GeoTaskConfig]):
    def _grade(self, trace: vf.Trace) -> grading.Grade:
        data, config = self.data, self.config
        return grading.grade(
            trace.last_reply, data.family, data.key, data.tolerance, config.graded, config.graded_halflife
        )

    @vf.reward(weight=1.0)
    async def within_tolerance(self, trace: vf.Trace) -> float:
        return self._grade(trace).within_tolerance

    @vf.metric
    async def accuracy(self, trace: vf.Trace) -> dict[str, float]:
        return self._grade(trace).metrics

    async def finalize(self, trace: vf.Trace, runtime: vf.Runtime) -> None:
        trace.info["family"] = self.data.family
        trace.info["grid"] = self.data.grid

    async def validate(self, runtime: vf.Runtime) -> bool:
        """Re-derive the key from the prompt's numbers, round-trip it and check every point's area."""
        data = self.data
        try:
            stated, tolerance = prompt.read_problem(data.prompt_text)
        except ValueError:
            return False
        problem = data.problem
        if (
            data.system_prompt != prompt.SYSTEM_PROMPT
            or tolerance != data.tolerance
            or stated.family != problem.family
            or stated.inputs != problem.inputs
            or (stated.grid and stated.grid != problem.grid)
            or problem.grid not in GRIDS
        ):
            return False
        key = reference.solve(problem)
        return (
            len(key) == len(data.key)
            and all(math.isfinite(value) for value in key)
            and grading.error(problem.family, tuple(data.key), key) <= KEY_AGREEMENT[problem.family]
            and reference.round_trip_error(problem, key) <= ROUND_TRIP_M
            and _inside(problem, key)
        )


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


class GeoConfig(vf.TasksetConfig):
    families: list[str] = list(FAMILIES)
    """Families to draw from; each task picks one uniformly."""
    position_tolerance_m: float = 1.0
    """Pass threshold for reproject and inverse tasks, in metres."""
    distance_tolerance_m: float = 10.0
    """Pass threshold for distance tasks, in metres."""
    bearing_tolerance_deg: float = 0.05
    """Pass threshold for bearing tasks, in degrees."""
    seed: int = DEFAULT_SEED
    """Generator seed; task i depends only on (split, seed, i, families) and the tolerances."""
    split: Split = "train"
    """``train`` (the default) or ``eval``: two disjoint task streams under every seed
    (`piv_core.rng`); evaluate on ``eval`` what was trained on ``train``."""
    task: GeoTaskConfig = GeoTaskConfig()

    @field_validator("families")
    @classmethod
    def _known_families(cls, value: list[str]) -> list[str]:
        unknown = [family for family in value if family not in FAMILIES]
        if unknown or not value or len(set(value)) != len(value):
            raise ValueError(
                f"families must be a non-empty list of distinct names from {list(FAMILIES)}, got {value}"
            )
        return value

    @field_validator("position_tolerance_m", "distance_tolerance_m", "bearing_tolerance_deg")
    @classmethod
    def _positive_tolerance(cls, value: float, info: ValidationInfo) -> float:
        cap = grading.SENTINEL_DEG if info.field_name == "bearing_tolerance_deg" else grading.SENTINEL_M
        if not (math.isfinite(value) and 0 < value < cap):
            raise ValueError(f"{info.field_name} must be positive and below {cap:g}, got {value}")
        return value

    def tolerance(self, family: str) -> float:
        if family == DISTANCE:
            return self.distance_tolerance_m
        if family == BEARING:
            return self.bearing_tolerance_deg
        return self.position_tolerance_m


def task_data(
    problem: Problem,
    tolerance: float,
    idx: int | None = None,
    seed: int | None = None,
    split: Split = "train",
) -> GeoData:
    """The task for `problem`: prompt, key (from `reference.solve`) and tolerance."""
    key = reference.solve(problem)
    return GeoData(
        idx=idx,
        id=task_id("geo", split, seed, idx) if idx is not None and seed is not None else None,
        name=f"{problem.family} {problem.grid}",
        system_prompt=prompt.SYSTEM_PROMPT,
        prompt=prompt.user_prompt(problem, tolerance),
        family=problem.family,
        grid=problem.grid,
        inputs=list(problem.inputs),
        key=list(key),
        tolerance=tolerance,
    )


def make_task_data(config: GeoConfig, idx: int) -> GeoData:
    """Task `idx` of the stream `config` describes."""
    problem = generator.generate(split_rng(config.split, config.seed, idx), tuple(config.families))
    return task_data(problem, config.tolerance(problem.family), idx, config.seed, config.split)


class GeoTaskset(vf.Taskset[GeoTask, GeoConfig]):
    INFINITE = True

    def load(self) -> Iterator[GeoTask]:
        for idx in itertools.count():
            yield GeoTask(make_task_data(self.config, idx), self.config.task)
