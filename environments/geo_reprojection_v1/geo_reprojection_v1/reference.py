"""The authority: the reference answer is what PROJ computes for a problem's printed inputs.

Projections run through each grid's frozen pipeline (`grids.Grid.pipeline`), built once per
process; geodesics are PROJ's (GeographicLib's algorithm) on the WGS 84 ellipsoid. Nothing
here is hand-written geometry. `solve` never sees how a problem was generated, so a generator
bug surfaces in `validate()` as a key that disagrees with its inputs or fails the round trip.
"""

from __future__ import annotations

import math
from functools import cache

from pyproj import Geod, Transformer
from pyproj.enums import TransformDirection

from geo_reprojection_v1.grids import GRIDS
from geo_reprojection_v1.problem import BEARING, DISTANCE, INVERSE, REPROJECT, Problem

_INVERSE = TransformDirection.INVERSE


@cache
def transformer(grid: str) -> Transformer:
    """WGS 84 lon/lat -> `grid` easting/northing under the pinned operation (inverse: the reverse)."""
    return Transformer.from_pipeline(GRIDS[grid].pipeline)


@cache
def wgs84() -> Geod:
    return Geod(ellps="WGS84")


def forward(grid: str, lon: float, lat: float) -> tuple[float, float]:
    """(easting, northing) in metres; (inf, inf) where PROJ cannot evaluate the point."""
    return transformer(grid).transform(lon, lat)


def inverse(grid: str, easting: float, northing: float) -> tuple[float, float]:
    """WGS 84 (lon, lat) in degrees; (inf, inf) where PROJ cannot evaluate the point."""
    return transformer(grid).transform(easting, northing, direction=_INVERSE)


def azimuth_360(azimuth: float) -> float:
    """An azimuth in degrees folded into [0, 360)."""
    folded = azimuth % 360.0
    return 0.0 if folded == 360.0 else folded


def geodesic(lon_a: float, lat_a: float, lon_b: float, lat_b: float) -> tuple[float, float]:
    """(distance in metres, initial azimuth in [0, 360) degrees) of the geodesic from A to B."""
    azimuth, _, distance = wgs84().inv(lon_a, lat_a, lon_b, lat_b)
    return distance, azimuth_360(azimuth)


def geodesic_distance(lon_a: float, lat_a: float, lon_b: float, lat_b: float) -> float:
    """Metres between two points on the WGS 84 ellipsoid; nan where a latitude is off it."""
    return wgs84().inv(lon_a, lat_a, lon_b, lat_b)[2]


def solve(problem: Problem) -> tuple[float, ...]:
    """The key: (easting, northing), (lon, lat), (distance,) or (azimuth,) for the problem's family."""
    family, grid, inputs = problem
    if family == REPROJECT:
        return forward(grid, *inputs)
    if family == INVERSE:
        return inverse(grid, *inputs)
    distance, azimuth = geodesic(*inputs)
    if family == DISTANCE:
        return (distance,)
    if family == BEARING:
        return (azimuth,)
    raise ValueError(f"unknown family {family!r}")


def round_trip_error(problem: Problem, key: tuple[float, ...]) -> float:
    """Metres between the problem's input point and the key taken back through PROJ.

    reproject / inverse: the key converted the other way; distance / bearing: point B
    recovered by the direct geodesic problem from A with the key's distance or azimuth.
    """
    family, grid, inputs = problem
    if family == REPROJECT:
        lon, lat = inverse(grid, *key)
        return geodesic_distance(lon, lat, *inputs)
    if family == INVERSE:
        easting, northing = forward(grid, *key)
        return math.hypot(easting - inputs[0], northing - inputs[1])
    lon_a, lat_a, lon_b, lat_b = inputs
    distance, azimuth = geodesic(*inputs)
    if family == DISTANCE:
        distance = key[0]
    else:
        azimuth = key[0]
    lon, lat, _ = wgs84().fwd(lon_a, lat_a, azimuth, distance)
    return geodesic_distance(lon, lat, lon_b, lat_b)
