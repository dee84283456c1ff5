"""Procedural problems: a family, a grid and input coordinates drawn inside the grid's area.

The generator decides what is asked; it never computes the answer (that is
`reference.solve`, from the printed inputs). For `inverse` it projects the drawn point to
make the grid coordinate it shows, then rounds it to the millimetre like every printed input.
Everything is drawn from the `random.Random` it is handed, so a problem is a pure function
of its seed. With ``point_decimals`` (`rounded_point`) a Web Mercator forward part's point is one
whose closed-form formula multiplies by numbers of that many decimals (whole numbers, or tenths),
no larger than ``point_max`` allows (single digits, or up to 19.9); a forward part on a northern
WGS 84 UTM zone (``point_decimals`` 1 or 2) is a point whose first-order formula multiplies by
numbers in tenths or hundredths (`utm.point`: d from 1.5 to 2.9 either way, μ from 2.1 to 59.9).
"""

from __future__ import annotations

import math
import random

from geo_reprojection_v1 import reference, utm
from geo_reprojection_v1.formula import mercator_latitude
from geo_reprojection_v1.grids import GRIDS, Box, in_boxes
from geo_reprojection_v1.problem import DISTANCE, INVERSE, REPROJECT, Problem, degrees, printed

GRID_NAMES = tuple(GRIDS)
ROUNDED_GRIDS = ("webmerc", *utm.FORMULA_GRIDS)
"""The grids whose forward parts ``point_decimals`` rounds: those whose forward formula a guided
prompt states (for UTM, only at a rounded point)."""
UTM_DECIMALS = utm.DECIMALS
"""The ``point_decimals`` a UTM point takes: its d and μ in tenths, or in hundredths."""

MIN_SEPARATION_DEG = 0.01
"""Point B lies this far (in degrees, roughly a kilometre) or more from point A ..."""
MAX_SEPARATION_DEG = 20.0
"""... and at most this far, drawn log-uniformly, so short and long geodesics both occur."""
_TRIES = 32


def _pick(rng: random.Random, options: tuple[str, ...]) -> str:
    return options[int(rng.random() * len(options))]


def _box(rng: random.Random, boxes: tuple[Box, ...]) -> Box:
    """One of `boxes`, chosen in proportion to its area in square degrees."""
    areas = [(east - west) * (north - south) for west, south, east, north in boxes]
    target = rng.random() * sum(areas)
    for box, area in zip(boxes, areas, strict=True):
        if target < area:
            return box
        target -= area
    return boxes[-1]


def _micro(rng: random.Random, low: float, high: float) -> float:
    """A value in [low, high) on the millionth-of-a-degree grid the prompt prints."""
    start, stop = round(low * 1e6), round(high * 1e6)
    return (start + int(rng.random() * (stop - start))) / 1e6


def point(rng: random.Random, grid: str) -> tuple[float, float]:
    """A WGS 84 (lon, lat), printed to six decimals, inside one of the grid's sampling boxes."""
    west, south, east, north = _box(rng, GRIDS[grid].boxes)
    return _micro(rng, west, east), _micro(rng, south, north)


POINT_MIN = 2
"""The least whole part of a rounded point's longitude and Mercator latitude: never 0 or 1, so that
neither coordinate of the answer is 0 or the formula's constant itself."""
POINT_MAXES = (9, 19)
"""The largest whole part they may have: single digits (9), or up to 19 (the default)."""
POINT_DECIMALS = (0, 1)
"""The decimals a rounded point may have: whole degrees, or tenths of a degree."""


def _rounded_latitude(mercator: float) -> float:
    """The latitude, printed to six decimals, whose Mercator latitude is `mercator` degrees."""
    return float(degrees(math.degrees(2.0 * math.atan(math.exp(math.radians(mercator)))) - 90.0))


def _survives(size: float) -> bool:
    """Whether a Mercator latitude of `size` degrees either way comes back from its printed latitude."""
    return all(mercator_latitude(_rounded_latitude(m)) == m for m in (size, -size))


def _sizes(decimals: int, high: int) -> tuple[float, ...]:
    """The sizes a rounded point's numbers are drawn from, in order: each whole number from
    `POINT_MIN` to `high` (``decimals`` 0), or each number of that range with a non-zero tenth
    (``decimals`` 1), less the few whose Mercator latitude the six-decimal latitude printed for it
    does not give back."""
    steps = [0] if decimals == 0 else range(1, 10)
    every = [round(whole + step / 10, 1) for whole in range(POINT_MIN, high + 1) for step in steps]
    return tuple(size for size in every if _survives(size))


SIZES = {(decimals, high): _sizes(decimals, high) for decimals in POINT_DECIMALS for high in POINT_MAXES}
if any(len(SIZES[0, high]) != high - POINT_MIN + 1 for high in POINT_MAXES):
    raise RuntimeError("a whole Mercator latitude does not survive the six-decimal latitude printed for it")


def _rounded(rng: random.Random, decimals: int, high: int) -> float:
    sizes = SIZES[decimals, high]
    size = sizes[int(rng.random() * len(sizes))]
    return size if rng.random() < 0.5 else -size


def rounded_point(rng: random.Random, decimals: int, high: int = POINT_MAXES[-1]) -> tuple[float, float]:
    """A Web Mercator point: a WGS 84 (lon, lat) whose longitude has `decimals` decimals (0: a whole
    number of degrees) and whose Mercator latitude as the prompt prints it
    (`formula.mercator_latitude`) has them too, each of them from `POINT_MIN` to `high` (and its
    tenths) either way: the latitude is printed to six decimals like every input, and gives the
    Mercator latitude back exactly (`SIZES` holds only such values)."""
    lon = _rounded(rng, decimals, high)
    return lon, _rounded_latitude(_rounded(rng, decimals, high))


def rounded_utm_point(rng: random.Random, grid: str, decimals: int) -> tuple[float, float]:
    """A point of a northern WGS 84 UTM zone whose d and μ have `decimals` decimals, the last
    non-zero (`utm.point`)."""
    offsets, arcs = utm.OFFSETS[decimals], utm.ARCS[decimals]
    offset = offsets[int(rng.random() * len(offsets))]
    offset = offset if rng.random() < 0.5 else -offset
    return utm.point(grid, offset, arcs[int(rng.random() * len(arcs))])


def _second_point(rng: random.Random, grid: str, lon: float, lat: float) -> tuple[float, float]:
    """Point B: a log-uniform step from A in a random direction, kept inside the grid's boxes."""
    boxes = GRIDS[grid].boxes
    for _ in range(_TRIES):
        step = MIN_SEPARATION_DEG * (MAX_SEPARATION_DEG / MIN_SEPARATION_DEG) ** rng.random()
        turn = 2 * math.pi * rng.random()
        b = printed(DISTANCE, (lon + step * math.cos(turn), lat + step * math.sin(turn)))
        if in_boxes(boxes, *b):
            return b[0], b[1]
    while (b := point(rng, grid)) == (lon, lat):
        pass
    return b


def generate(
    rng: random.Random,
    families: tuple[str, ...],
    grids: tuple[str, ...] = GRID_NAMES,
    point_decimals: int | None = None,
    point_max: int = POINT_MAXES[-1],
) -> Problem:
    """One problem: a family from `families`, a grid from `grids`, inputs as the prompt prints them;
    `point_decimals` (0 or 1): a Web Mercator forward part's point is a `rounded_point` of them, its
    numbers' whole parts at most `point_max`; a northern UTM zone's (1 or 2), a `rounded_utm_point`."""
    family, grid = _pick(rng, families), _pick(rng, grids)
    rounded = point_decimals is not None and family == REPROJECT and grid in ROUNDED_GRIDS
    if rounded and grid != "webmerc":
        lon, lat = rounded_utm_point(rng, grid, point_decimals)
    else:
        lon, lat = rounded_point(rng, point_decimals, point_max) if rounded else point(rng, grid)
    if family == REPROJECT:
        return Problem(family, grid, (lon, lat))
    if family == INVERSE:
        return Problem(family, grid, printed(INVERSE, reference.forward(grid, lon, lat)))
    return Problem(family, grid, (lon, lat, *_second_point(rng, grid, lon, lat)))
