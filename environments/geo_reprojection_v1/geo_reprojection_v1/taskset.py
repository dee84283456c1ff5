"""geo-reprojection-v1: coordinate reprojection and geodesy, graded against PROJ.

Task: one of four families on nine projected grids. ``reproject`` WGS 84 lon/lat to a
grid's easting/northing, ``inverse`` the reverse, ``distance`` and ``bearing`` of the
geodesic between two WGS 84 points. The prompt names the EPSG codes and the datum operation
the key uses; the key is PROJ's answer for the printed inputs (`reference.solve`).
A task holds one part by default, or ``parts_per_task`` parts answered in one block.
Reward: ``within_tolerance`` (1.0): 1 when the physical error is within the family's
tolerance (1 m, 1 m, 10 m, 0.05 degrees by default), else 0; with ``task.graded`` the
smooth decay 1 / (1 + (error / (tolerance * halflife))^2); over several parts the mean
(``scoring = "fraction"``) or the lowest (``"all"``) part score. Metrics: ``error``,
``error_ratio`` (error / tolerance) and ``answered`` (the reply parsed), and per family
``has_``, ``pass_`` and ``error_`` (`scoring`). ``level`` picks a rung of `levels.RUNGS`.
``guide`` (off by default; on at the low rungs) makes the prompt say how to answer and state the
formula of a grid that has one (`prompt.task_prompt`): Web Mercator's closed form, or UTM's first
order at a rounded point (``point_decimals``, `utm`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Annotated

import verifiers.v1 as vf
from piv_core.compat import TaskData
from piv_core.runtime.confinement import SingleReply
from piv_core.runtime.timeouts import with_rollout_timeout
from piv_core.tasksets.knobs import integer, number, some_of
from piv_core.tasksets.ladder import (
    DurableKey,
    FiniteWhenMixed,
    Level,
    MixKnobs,
    apply_level,
    check_levels,
    served,
)
from piv_core.tasksets.rescoring import Rescorable, TasksetConfig, merged_config
from piv_core.tasksets.rng import Split, split_rng, task_id
from pydantic import BaseModel, ValidationInfo, field_validator, model_serializer, model_validator

from geo_reprojection_v1 import checks, generator, grading, prompt, reference, scoring, utm
from geo_reprojection_v1.grids import GRIDS
from geo_reprojection_v1.levels import RUNGS, TASK_KNOBS, task_knobs
from geo_reprojection_v1.problem import BEARING, DISTANCE, FAMILIES, REPROJECT, Problem
from geo_reprojection_v1.scoring import SCORINGS, Part, Scoring
from geo_reprojection_v1.task_config import GeoTaskConfig

DEFAULT_SEED = 20260826
MAX_PARTS = 12
"""The most parts one task may ask."""


class GeoPart(BaseModel):
    """One part of a task after the first: the same fields as the first part's in `GeoData`."""

    model_config = {"frozen": True}

    family: str
    grid: str
    inputs: list[float]
    key: list[float]
    tolerance: float

    @property
    def problem(self) -> Problem:
        return Problem(self.family, self.grid, tuple(self.inputs))


class GeoData(TaskData):
    family: str
    """reproject, inverse, distance or bearing (of the first, or only, part)."""
    grid: str
    """The grid converted to or from, or the grid whose area both geodesic points were drawn in."""
    inputs: list[float]
    """The input numbers exactly as printed in the prompt."""
    key: list[float]
    """PROJ's answer: (easting, northing), (lon, lat), (distance,) or (azimuth,)."""
    tolerance: float
    """The pass threshold quoted in the prompt: metres, or degrees for bearings."""
    more_parts: list[GeoPart] = []
    """The parts after the first, in prompt order; empty for a one-part task."""
    scoring: Scoring = "fraction"
    """How the part scores make the reward: their mean (``fraction``) or their lowest (``all``)."""
    level: int | None = None
    """The rung the task was drawn at (`levels.RUNGS`), whose task knobs score it; None for none."""

    @model_serializer(mode="wrap")
    def _compact(self, handler):
        """Leave out the part fields at their defaults, so a one-part task serialises as it always has."""
        out = handler(self)
        if not self.more_parts:
            out.pop("more_parts", None)
        if self.scoring == "fraction":
            out.pop("scoring", None)
        if self.level is None:
            out.pop("level", None)
        return out

    @property
    def problem(self) -> Problem:
        return Problem(self.family, self.grid, tuple(self.inputs))

    @property
    def parts(self) -> list[GeoPart]:
        """Every part, the first included, in prompt order."""
        first = GeoPart(
            family=self.family, grid=self.grid, inputs=self.inputs, key=self.key, tolerance=self.tolerance
        )
        return [first, *self.more_parts]


class GeoTask(Rescorable, DurableKey, SingleReply, vf.Task[GeoData, vf.State, GeoTaskConfig]):
    def stated_knobs(self) -> dict[str, object]:
        """The task knobs of the rung the task was drawn at: in a mix of rungs they score it."""
        return task_knobs(self.data.level)

    def _grade(self, trace: vf.Trace) -> scoring.TaskGrade:
        data, config = self.data, self.scoring_config(trace)
        parts = [Part(part.family, tuple(part.key), config.tolerance(part.tolerance)) for part in data.parts]
        return scoring.grade_task(
            trace.last_reply,
            parts,
            data.scoring,
            config.graded,
            config.graded_halflife,
            config.graded_per_coordinate,
        )

    @vf.reward(weight=1.0)
    async def within_tolerance(self, trace: vf.Trace) -> float:
        return self._grade(trace).reward

    @vf.metric
    async def accuracy(self, trace: vf.Trace) -> dict[str, float]:
        return self._grade(trace).metrics

    async def finalize(self, trace: vf.Trace, runtime: vf.Runtime) -> None:
        trace.info["family"] = self.data.family
        trace.info["grid"] = self.data.grid

    async def validate(self, runtime: vf.Runtime) -> bool:
        """The prompts are the ones the task's parts, scoring and knobs render, character for
        character; every part's key is re-derived from the numbers the prompt states, round-tripped,
        and every point's area checked."""
        data, config = self.data, merged_config(self.config, None, self.stated_knobs())
        parts = data.parts
        guided = prompt.guided(data.prompt_text)
        rendered = prompt.task_prompt(
            [(part.problem, part.tolerance) for part in parts],
            data.scoring,
            config.graded,
            config.graded_halflife,
            guided,
            config.graded_per_coordinate,
        )
        if data.system_prompt != prompt.system_prompt(guided) or data.prompt_text != rendered:
            return False
        try:
            stated = prompt.read_problems(data.prompt_text)
        except ValueError:
            return False
        if len(stated) != len(parts):
            return False
        texts = prompt.part_texts(data.prompt_text)
        return all(
            checks.part_holds(part.problem, part.key, part.tolerance, *told)
            and checks.formula_holds(part.problem, part.key, part.tolerance, text, guided)
            for part, told, text in zip(parts, stated, texts, strict=True)
        )


class GeoConfig(TasksetConfig, MixKnobs):
    families: Annotated[list[str], some_of(FAMILIES, in_their_order=False)] = list(FAMILIES)
    """Families to draw from; each part picks one uniformly."""
    grids: Annotated[list[str], some_of(list(GRIDS), in_their_order=False)] = list(GRIDS)
    """Grids to draw from (for distance and bearing, the area of both points); each part picks one."""
    position_tolerance_m: Annotated[float, number()] = 1.0
    """Pass threshold for reproject and inverse tasks, in metres."""
    distance_tolerance_m: Annotated[float, number()] = 10.0
    """Pass threshold for distance tasks, in metres."""
    bearing_tolerance_deg: Annotated[float, number()] = 0.05
    """Pass threshold for bearing tasks, in degrees."""
    tolerance_scale: Annotated[float, number()] = 1.0
    """Every tolerance above is multiplied by this (the ladder's loosening or tightening)."""
    parts_per_task: Annotated[int, integer()] = 1
    """Problems per task, answered in one block; 1 (the default) is the one-problem task."""
    scoring: Scoring = "fraction"
    """With several parts: reward the mean part score (``fraction``) or the lowest (``all``)."""
    guide: bool = False
    """Say in the prompt how to answer (plain-text working, then one block whose numbers are named in
    order), state the scoring even for one part, and give each Web Mercator part its closed-form
    formula (and a rounded UTM point, see ``point_decimals``, UTM's first-order one); the system
    prompt's example then shows no figures. Off: the prompt as it always was."""
    point_decimals: Annotated[int | None, integer()] = None
    """Draw each Web Mercator forward part's point with a longitude and a Mercator latitude of this
    many decimals, 2 degrees or more either way (`point_max` bounds them): 0, whole numbers; 1,
    tenths (a non-zero tenth), so its stated formula multiplies by such numbers; needs families
    [reproject] and grids [webmerc]. Or, 1 or 2, on northern WGS 84 UTM zones (grids some of
    [utm10n, utm33n]): each point's longitude less the central meridian, d, and its meridian
    distance in units of 110574.275822 m, μ, in tenths or in hundredths, the last decimal non-zero
    (d 1.5 to 2.9 either way, μ 2.1 to 59.9), so that a guided prompt states UTM's first-order
    formula with its factors evaluated (`utm`).
    Unset (the default): any point."""
    point_max: Annotated[int, integer()] = generator.POINT_MAXES[-1]
    """The largest whole part of a rounded Web Mercator point's numbers (with ``point_decimals`` set):
    9, single digits (2 to 9.9 degrees either way), so each product is by a one-digit number; 19 (the
    default), 2 to 19.9. A UTM point's numbers are bounded by its zone: leave it unset there."""
    level: Level = None
    """A rung of `levels.RUNGS` (1 easiest): sets families, grids, tolerance_scale,
    parts_per_task, scoring and, where the rung lists them, guide, point_decimals, point_max, task.graded,
    task.graded_halflife and task.graded_per_coordinate. Unset: those knobs as given."""
    seed: Annotated[int, integer()] = DEFAULT_SEED
    """Generator seed; task i depends only on (split, seed, i), the knobs above and the tolerances."""
    split: Split = "train"
    """``train`` (the default) or ``eval``: two disjoint task streams under every seed
    (`piv_core.tasksets.rng`); evaluate on ``eval`` what was trained on ``train``."""
    task: GeoTaskConfig = GeoTaskConfig()

    @field_validator("position_tolerance_m", "distance_tolerance_m", "bearing_tolerance_deg")
    @classmethod
    def _positive_tolerance(cls, value: float, info: ValidationInfo) -> float:
        cap = grading.SENTINEL_DEG if info.field_name == "bearing_tolerance_deg" else grading.SENTINEL_M
        if not (math.isfinite(value) and 0 < value < cap):
            raise ValueError(f"{info.field_name} must be positive and below {cap:g}, got {value}")
        return value

    @field_validator("tolerance_scale")
    @classmethod
    def _positive_scale(cls, value: float) -> float:
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"tolerance_scale must be a positive number, got {value}")
        return value

    @field_validator("parts_per_task")
    @classmethod
    def _parts_in_range(cls, value: int) -> int:
        if not 1 <= value <= MAX_PARTS:
            raise ValueError(f"parts_per_task must be between 1 and {MAX_PARTS}, got {value}")
        return value

    @field_validator("point_decimals", "point_max")
    @classmethod
    def _known_rounding(cls, value: int | None, info: ValidationInfo) -> int | None:
        if info.field_name == "point_decimals":
            known = tuple(sorted({*generator.POINT_DECIMALS, *generator.UTM_DECIMALS}))
        else:
            known = generator.POINT_MAXES
        if value is not None and value not in known:
            raise ValueError(f"{info.field_name} must be one of {list(known)}, got {value}")
        return value

    @field_validator("scoring")
    @classmethod
    def _known_scoring(cls, value: str) -> str:
        if value not in SCORINGS:
            raise ValueError(f"scoring must be one of {list(SCORINGS)}, got {value!r}")
        return value

    @model_validator(mode="after")
    def _level(self) -> GeoConfig:
        check_levels(self, RUNGS)
        if self.level is not None:
            # A base tolerance at its default is what a dumped and re-read config carries: not a conflict.
            fields = type(self).model_fields
            fixed = [
                name
                for name in TOLERANCE_KNOBS
                if name in self.model_fields_set and getattr(self, name) != fields[name].default
            ]
            if fixed:
                raise ValueError(
                    f"level {self.level} fixes the tolerances through tolerance_scale, but {fixed[0]} "
                    f"was given: leave {fixed[0]} unset, or leave level unset"
                )
        apply_level(self, {n: {k: v for k, v in r.items() if k not in TASK_KNOBS} for n, r in RUNGS.items()})
        self._task_level()
        self._rounding()
        for family in FAMILIES:
            cap = grading.sentinel(family)
            if not self.tolerance(family) < cap:
                raise ValueError(
                    f"tolerance_scale {self.tolerance_scale:g} makes the {family} tolerance "
                    f"{self.tolerance(family):g}, not below {cap:g}"
                )
        return self

    def _rounding(self) -> None:
        """``point_decimals`` and ``point_max`` fit the families and grids (raised naming the knob)."""
        default_max = generator.POINT_MAXES[-1]
        if self.point_decimals is None:
            if self.point_max != default_max:
                raise ValueError(f"point_max {self.point_max} bounds rounded points only: set point_decimals")
            return
        on_utm = set(self.grids) <= set(utm.FORMULA_GRIDS)
        if self.families != [REPROJECT] or not (self.grids == ["webmerc"] or on_utm):
            raise ValueError(
                "point_decimals draws Web Mercator or northern WGS 84 UTM forward points only: it needs "
                f"families ['reproject'] and grids ['webmerc'] or some of {list(utm.FORMULA_GRIDS)}, got "
                f"{self.families} and {self.grids}"
            )
        if on_utm and self.point_decimals not in generator.UTM_DECIMALS:
            raise ValueError(
                f"point_decimals {self.point_decimals} on a UTM zone: a UTM point's d and μ are drawn in "
                f"tenths or hundredths, so point_decimals must be one of {list(generator.UTM_DECIMALS)} there"
            )
        if not on_utm and self.point_decimals not in generator.POINT_DECIMALS:
            raise ValueError(
                f"point_decimals {self.point_decimals} on Web Mercator: its points are drawn in whole "
                f"degrees or tenths, so point_decimals must be one of {list(generator.POINT_DECIMALS)} there"
            )
        if on_utm and self.point_max != default_max:
            raise ValueError(
                f"point_max {self.point_max} bounds Web Mercator rounded points only: a UTM point's d and μ "
                "are bounded by its zone and band (1.5 to 2.9 either way, 2.1 to 59.9); leave point_max unset"
            )

    def _task_level(self) -> None:
        """Fill in the task knobs the rung lists (`TASK_KNOBS`), refusing a given value that differs."""
        wanted = task_knobs(self.level)
        for name, value in wanted.items():
            given = getattr(self.task, name)
            if name in self.task.model_fields_set and given != value:
                raise ValueError(
                    f"level {self.level} sets task.{name} to {value!r}, but task.{name} was given as "
                    f"{given!r}: leave task.{name} unset, or leave level unset"
                )
        if wanted:
            object.__setattr__(self, "task", self.task.model_copy(update=wanted))

    def tolerance(self, family: str) -> float:
        """The family's pass threshold: its tolerance knob times `tolerance_scale`, to 12 digits."""
        if family == DISTANCE:
            base = self.distance_tolerance_m
        elif family == BEARING:
            base = self.bearing_tolerance_deg
        else:
            base = self.position_tolerance_m
        return base if self.tolerance_scale == 1.0 else float(f"{base * self.tolerance_scale:.12g}")


TOLERANCE_KNOBS = ("position_tolerance_m", "distance_tolerance_m", "bearing_tolerance_deg")


def _part(problem: Problem, tolerance: float) -> GeoPart:
    key = reference.solve(problem)
    return GeoPart(
        family=problem.family,
        grid=problem.grid,
        inputs=list(problem.inputs),
        key=list(key),
        tolerance=tolerance,
    )


def task_data(
    problem: Problem | list[Problem],
    tolerance: float | list[float],
    idx: int | None = None,
    seed: int | None = None,
    split: Split = "train",
    scoring: Scoring = "fraction",
    task_config: GeoTaskConfig | None = None,
    prefix: str = "geo",
    guide: bool = False,
    level: int | None = None,
) -> GeoData:
    """The task for `problem` (or for a list of problems, one part each): prompt, keys and tolerances.

    `task_config` (graded or not) only enters the prompt of a task with several parts or a guided
    one, whose scoring statement names it; `prefix` begins the task id; `guide` as `GeoConfig.guide`;
    `level` the rung it is drawn at.
    """
    problems = problem if isinstance(problem, list) else [problem]
    tolerances = tolerance if isinstance(tolerance, list) else [tolerance]
    if not problems or len(tolerances) != len(problems):
        raise ValueError(f"{len(problems)} problems need as many tolerances, got {len(tolerances)}")
    config = task_config or GeoTaskConfig()
    first, *more = [_part(p, t) for p, t in zip(problems, tolerances, strict=True)]
    text = prompt.task_prompt(
        list(zip(problems, tolerances, strict=True)),
        scoring,
        config.graded,
        config.graded_halflife,
        guide,
        config.graded_per_coordinate,
    )
    return GeoData(
        idx=idx,
        id=task_id(prefix, split, seed, idx) if idx is not None and seed is not None else None,
        name=", ".join(f"{p.family} {p.grid}" for p in problems),
        system_prompt=prompt.system_prompt(guide),
        prompt=text,
        family=first.family,
        grid=first.grid,
        inputs=first.inputs,
        key=first.key,
        tolerance=first.tolerance,
        more_parts=more,
        scoring=scoring if more else "fraction",
        level=level,
    )


def make_task_data(config: GeoConfig, idx: int) -> GeoData:
    """Task `idx` of the stream `config` describes (its parts drawn one after another)."""
    rng = split_rng(config.split, config.seed, idx)
    families, grids = tuple(config.families), tuple(config.grids)
    problems = [
        generator.generate(rng, families, grids, config.point_decimals, config.point_max)
        for _ in range(config.parts_per_task)
    ]
    return task_data(
        problems,
        [config.tolerance(p.family) for p in problems],
        idx,
        config.seed,
        config.split,
        config.scoring,
        config.task,
        "geo" if config.level is None else f"geo-level{config.level}",
        config.guide,
        config.level,
    )


class GeoTaskset(FiniteWhenMixed, vf.Taskset[GeoTask, GeoConfig]):
    INFINITE = True

    def load(self) -> Iterator[GeoTask]:
        for data in served(self.config, make_task_data):
            yield GeoTask(with_rollout_timeout(data), self.config.task)
