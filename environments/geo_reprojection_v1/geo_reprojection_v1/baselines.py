"""Scripted policies for the baseline endpoint; each reads only the prompt it is sent.

Every policy answers each part of a prompt in turn, in one answer block.

- ``oracle``: reads the problem out of the prompt and asks pyproj, building its transformer
  from the EPSG codes and the datum operation *named in the prompt* (looked up in PROJ's
  database, not taken from the environment's frozen pipelines). Scoring 1.0 shows the prompt
  alone determines the key.
- ``ballpark``: projects without any datum shift (WGS 84 coordinates fed straight to the
  grid's own geographic datum), otherwise like the oracle. Right on the WGS 84, GDA2020 and
  NZGD2000 grids, about a hundred metres off on the British National Grid.
- ``spherical``: haversine distance and spherical initial bearing on the mean-radius sphere;
  projection rows as the oracle. Off by a few parts per thousand.
- ``echo``: repeats the input numbers as the answer.
- ``thousands``: the oracle's numbers with their digits grouped in threes (commas before the
  decimal point, spaces after it), which the parser reads as extra numbers.
- ``garbage``: prose with numbers in it and no answer block.
- ``noisy(conversation, p, rng)``: the oracle, but each part independently answered with a
  realistic mistake with probability ``p`` (see `noisy`); not in `POLICIES`, since it takes
  a rate and a random stream.
"""

from __future__ import annotations

import math
import random
import re
import warnings
from functools import cache

from piv_core.policy import Conversation, Policy
from pyproj import CRS, Geod, Transformer
from pyproj.enums import TransformDirection
from pyproj.transformer import TransformerGroup

from geo_reprojection_v1.grading import error
from geo_reprojection_v1.problem import BEARING, DISTANCE, INVERSE, REPROJECT, Problem
from geo_reprojection_v1.prompt import part_texts, read_problem, stated_halflife, stated_per_coordinate

MEAN_RADIUS_M = 6371008.8
"""The IUGG mean Earth radius, the sphere of the `spherical` baseline."""

_OPERATION = re.compile(r'"([^"]+)" \(EPSG:\d+\)')
_GRID_EPSG = re.compile(r"^(?:From|To): .*?\(EPSG:(\d+)\)", re.MULTILINE)
ORACLE_NOTE = "Computed with PROJ for the stated operation.\n"


@cache
def _named(epsg: int, operation: str | None) -> Transformer:
    """WGS 84 -> EPSG:`epsg` through the named EPSG operation (the only candidate when None)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PROJ notes that the OSTN15 grid is not installed
        group = TransformerGroup("EPSG:4326", f"EPSG:{epsg}", always_xy=True, allow_ballpark=False)
    candidates = [
        t for t in group.transformers if operation is None or f" {operation} " in f" {t.description} "
    ]
    if len(candidates) != 1:
        raise ValueError(f"no single PROJ operation to EPSG:{epsg} via {operation!r}")
    return candidates[0]


@cache
def _wgs84() -> Geod:
    return Geod(ellps="WGS84")


@cache
def _ballpark(epsg: int) -> Transformer:
    """The grid's projection alone: its own geographic datum -> grid, no datum shift."""
    crs = CRS.from_epsg(epsg)
    return Transformer.from_crs(crs.geodetic_crs, crs, always_xy=True)


def _solve_part(text: str, project: bool = True) -> tuple[float, ...]:
    """The answer to the one part `text` states (`project` False: without the datum shift)."""
    problem, _ = read_problem(text)
    family, _, inputs = problem
    if family in (REPROJECT, INVERSE):
        epsg = int(next(code for code in _GRID_EPSG.findall(text) if code != "4326"))
        operation = _OPERATION.search(text)
        transformer = _named(epsg, operation.group(1) if operation else None) if project else _ballpark(epsg)
        direction = TransformDirection.INVERSE if family == INVERSE else TransformDirection.FORWARD
        return transformer.transform(*inputs, direction=direction)
    azimuth, _, distance = _wgs84().inv(*inputs)
    return (distance,) if family == DISTANCE else (azimuth % 360.0,)


def _solve(text: str, project: bool = True) -> tuple[float, ...]:
    """Every part's answer, in part order."""
    return tuple(value for part in part_texts(text) for value in _solve_part(part, project))


def _problems(text: str) -> list[Problem]:
    return [read_problem(part)[0] for part in part_texts(text)]


def _reply(values: tuple[float, ...] | list[str]) -> str:
    return "<answer>" + ", ".join(v if isinstance(v, str) else repr(float(v)) for v in values) + "</answer>"


def _grouped(value: float) -> str:
    """`value` to six decimals with digits grouped in threes: 3,941,601.087 123."""
    whole, fraction = f"{value:,.6f}".split(".")
    return f"{whole}.{fraction[:3]} {fraction[3:]}"


def oracle(conversation: Conversation) -> str:
    return ORACLE_NOTE + _reply(_solve(conversation.user_text))


def ballpark(conversation: Conversation) -> str:
    return _reply(_solve(conversation.user_text, project=False))


def _spherical(problem: Problem) -> tuple[float]:
    """Haversine distance or spherical initial bearing on the mean-radius sphere."""
    lon_a, lat_a, lon_b, lat_b = (math.radians(v) for v in problem.inputs)
    d_lon, d_lat = lon_b - lon_a, lat_b - lat_a
    if problem.family == DISTANCE:
        h = math.sin(d_lat / 2) ** 2 + math.cos(lat_a) * math.cos(lat_b) * math.sin(d_lon / 2) ** 2
        return (2 * MEAN_RADIUS_M * math.asin(math.sqrt(h)),)
    y = math.sin(d_lon) * math.cos(lat_b)
    x = math.cos(lat_a) * math.sin(lat_b) - math.sin(lat_a) * math.cos(lat_b) * math.cos(d_lon)
    return (math.degrees(math.atan2(y, x)) % 360.0,)


def spherical(conversation: Conversation) -> str:
    parts = part_texts(conversation.user_text)
    problems = [read_problem(part)[0] for part in parts]
    if all(problem.family not in (DISTANCE, BEARING) for problem in problems):
        return oracle(conversation)
    values: list[float] = []
    for part, problem in zip(parts, problems, strict=True):
        values += _spherical(problem) if problem.family in (DISTANCE, BEARING) else _solve_part(part)
    return _reply(tuple(values))


def echo(conversation: Conversation) -> str:
    return _reply(tuple(value for problem in _problems(conversation.user_text) for value in problem.inputs))


def thousands(conversation: Conversation) -> str:
    return _reply([_grouped(value) for value in _solve(conversation.user_text)])


def garbage(conversation: Conversation) -> str:
    inputs = [value for problem in _problems(conversation.user_text) for value in problem.inputs]
    numbers = " and ".join(f"{value:g}" for value in inputs)
    return f"Starting from {numbers}, the result should be close to the inputs; a GIS would tell for sure."


def _mistakes(part: str, problem: Problem, right: tuple[float, ...]) -> list[tuple[float, ...]]:
    """Errors people make on this family: swapped axes, a skipped datum shift, a flipped sign,
    a spherical shortcut, the back azimuth or a counter-clockwise angle."""
    if problem.family == REPROJECT:
        easting, northing = right
        return [(northing, easting), _solve_part(part, project=False), (-easting, northing)]
    if problem.family == INVERSE:
        lon, lat = right
        return [(lat, lon), _solve_part(part, project=False), (-lon, lat), (lon, -lat)]
    if problem.family == DISTANCE:
        return [_spherical(problem)]
    azimuth = right[0]
    return [((azimuth + 180.0) % 360.0,), ((360.0 - azimuth) % 360.0,), _spherical(problem)]


def _offset(
    problem: Problem, right: tuple[float, ...], distance: float, rng: random.Random
) -> tuple[float, ...]:
    """`right` moved `distance` (metres; degrees, at most 180, for bearings) in a random direction."""
    turn = 2 * math.pi * rng.random()
    if problem.family == REPROJECT:
        return right[0] + distance * math.cos(turn), right[1] + distance * math.sin(turn)
    if problem.family == INVERSE:
        lon, lat, _ = _wgs84().fwd(right[0], right[1], math.degrees(turn), distance)
        return lon, lat
    sign = 1.0 if turn < math.pi else -1.0
    if problem.family == DISTANCE:
        return (right[0] + sign * distance,)
    return ((right[0] + sign * min(distance, 180.0)) % 360.0,)


def _wrong(
    part: str,
    right: tuple[float, ...],
    rng: random.Random,
    halflife: float | None = None,
    per_coordinate: bool = False,
) -> tuple[float, ...]:
    """A realistic wrong answer to the part: one of `_mistakes` or an offset of 2-10 tolerances,
    drawn at random among those that miss the stated tolerance. Under graded scoring (`halflife`
    the prompt states) a miss is counted in half-lives: an offset of 2-10 of them, and a mistake
    only where it misses by more than two, so a wrong part scores at most 0.2 at any half-life;
    scored coordinate by coordinate (`per_coordinate`), a grid point misses so on both."""
    problem, tolerance = read_problem(part)
    unit = tolerance if halflife is None else tolerance * halflife
    miss = tolerance if halflife is None else 2.0 * unit
    off = _offset(problem, right, unit * (2 + 8 * rng.random()), rng)
    candidates = [*_mistakes(part, problem, right), off]
    rng.shuffle(candidates)
    each = per_coordinate and problem.family == REPROJECT
    for candidate in candidates:
        if each and min(abs(a - b) for a, b in zip(candidate, right, strict=True)) > miss:
            return candidate
        if not each and error(problem.family, candidate, right) > miss:
            return candidate
    if each:
        return tuple(value + unit * 100 for value in right)
    return _offset(problem, right, unit * 100, rng)


def noisy(conversation: Conversation, p: float, rng: random.Random) -> str:
    """The oracle's reply with each part independently replaced, with probability `p`, by a realistic
    wrong answer (`_wrong`). Only `rng` supplies randomness; ``p = 0`` is the oracle's reply exactly."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be between 0 and 1, got {p}")
    values: list[float] = []
    halflife = stated_halflife(conversation.user_text)
    per_coordinate = stated_per_coordinate(conversation.user_text)
    for part in part_texts(conversation.user_text):
        right = _solve_part(part)
        values += _wrong(part, right, rng, halflife, per_coordinate) if rng.random() < p else right
    return ORACLE_NOTE + _reply(tuple(values))


POLICIES: dict[str, Policy] = {
    "oracle": oracle,
    "ballpark": ballpark,
    "spherical": spherical,
    "echo": echo,
    "thousands": thousands,
    "garbage": garbage,
}
