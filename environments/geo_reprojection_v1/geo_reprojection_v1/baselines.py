"""Scripted policies for the baseline endpoint; each reads only the prompt it is sent.

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
"""

from __future__ import annotations

import math
import re
import warnings
from functools import cache

from piv_core.endpoint import Conversation, Policy
from pyproj import CRS, Geod, Transformer
from pyproj.enums import TransformDirection
from pyproj.transformer import TransformerGroup

from geo_reprojection_v1.problem import BEARING, DISTANCE, INVERSE, REPROJECT
from geo_reprojection_v1.prompt import read_problem

MEAN_RADIUS_M = 6371008.8
"""The IUGG mean Earth radius, the sphere of the `spherical` baseline."""

_OPERATION = re.compile(r'"([^"]+)" \(EPSG:\d+\)')
_GRID_EPSG = re.compile(r"^(?:From|To): .*?\(EPSG:(\d+)\)", re.MULTILINE)


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


def _solve(text: str, project: bool = True) -> tuple[float, ...]:
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


def _reply(values: tuple[float, ...] | list[str]) -> str:
    return "<answer>" + ", ".join(v if isinstance(v, str) else repr(float(v)) for v in values) + "</answer>"


def _grouped(value: float) -> str:
    """`value` to six decimals with digits grouped in threes: 3,941,601.087 123."""
    whole, fraction = f"{value:,.6f}".split(".")
    return f"{whole}.{fraction[:3]} {fraction[3:]}"


def oracle(conversation: Conversation) -> str:
    return "Computed with PROJ for the stated operation.\n" + _reply(_solve(conversation.user_text))


def ballpark(conversation: Conversation) -> str:
    return _reply(_solve(conversation.user_text, project=False))


def spherical(conversation: Conversation) -> str:
    text = conversation.user_text
    problem, _ = read_problem(text)
    if problem.family not in (DISTANCE, BEARING):
        return oracle(conversation)
    lon_a, lat_a, lon_b, lat_b = (math.radians(v) for v in problem.inputs)
    d_lon, d_lat = lon_b - lon_a, lat_b - lat_a
    if problem.family == DISTANCE:
        h = math.sin(d_lat / 2) ** 2 + math.cos(lat_a) * math.cos(lat_b) * math.sin(d_lon / 2) ** 2
        return _reply((2 * MEAN_RADIUS_M * math.asin(math.sqrt(h)),))
    y = math.sin(d_lon) * math.cos(lat_b)
    x = math.cos(lat_a) * math.sin(lat_b) - math.sin(lat_a) * math.cos(lat_b) * math.cos(d_lon)
    return _reply((math.degrees(math.atan2(y, x)) % 360.0,))


def echo(conversation: Conversation) -> str:
    problem, _ = read_problem(conversation.user_text)
    return _reply(problem.inputs)


def thousands(conversation: Conversation) -> str:
    return _reply([_grouped(value) for value in _solve(conversation.user_text)])


def garbage(conversation: Conversation) -> str:
    problem, _ = read_problem(conversation.user_text)
    numbers = " and ".join(f"{value:g}" for value in problem.inputs)
    return f"Starting from {numbers}, the result should be close to the inputs; a GIS would tell for sure."


POLICIES: dict[str, Policy] = {
    "oracle": oracle,
    "ballpark": ballpark,
    "spherical": spherical,
    "echo": echo,
    "thousands": thousands,
    "garbage": garbage,
}
