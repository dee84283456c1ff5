"""UTM's first-order formula on the northern WGS 84 zones, and the points it is stated for.

A point of a northern WGS 84 UTM zone projects, to first order in its longitude's offset d (in
degrees) from the zone's central meridian, to

    easting = 500000 + E × d,  northing = C × μ + h,

where E = k0 · N · cos φ · π / 180 is the grid metres per degree of longitude at the point's
latitude φ, C = a (1 − e²) π / 180 (`PER_DEGREE_M`) the metres of meridian per degree at the
equator, μ the point's meridian arc from the equator times k0 in units of C (so that C × μ is
the northing at the central meridian), and h = k0 · N · sin φ · cos φ · (d in radians)² / 2 the
curvature term; k0 = 0.9996 and N the ellipsoid's prime-vertical radius at φ. A rounded point
(`point`, `numbers`) has d and μ in tenths or in hundredths (`DECIMALS`), the last decimal of each
non-zero: d from 1.5 to 2.9 either way (`OFFSETS`), so that the easting is 80 km or more from the
false easting and the point lies inside its zone, and μ from 2.1 to 59.9 (`ARCS`), latitudes of
about 2 to 60 degrees north. There the formula, its factors rounded as stated (E to 6 decimals, h
to 0.1 m), is within `FORMULA_BOUND_M` of PROJ's point; the key is PROJ's all the same
(`reference.solve`).
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

from geo_reprojection_v1.grids import GRIDS, Grid
from geo_reprojection_v1.problem import REPROJECT, Problem, degrees

SEMI_MAJOR_M = 6378137.0
FLATTENING = 1 / 298.257223563
E2 = FLATTENING * (2 - FLATTENING)
"""The WGS 84 eccentricity squared."""
K0 = 0.9996
"""UTM's scale on the central meridian."""
FALSE_EASTING_M = 500000
PER_DEGREE_M = round(SEMI_MAJOR_M * (1 - E2) * math.pi / 180, 6)
"""C: metres of meridian per degree at the equator, to the micrometre as the formula prints it."""
FORMULA_BOUND_M = 200.0
"""What the formula gives is within this many metres of PROJ's point (the prompt says so, and
`validate()` checks it); the worst over every rounded point is about 140 m (d = 2.9 near the
equator, where the third-order easting term is largest)."""


DECIMALS = (1, 2)
"""The decimals a rounded point's d and μ may have: tenths, or hundredths."""


def _steps(low: float, high: float, decimals: int) -> tuple[float, ...]:
    """Every number of `decimals` decimals, the last of them non-zero, from `low` to `high`."""
    scale = 10**decimals
    every = range(round(low * scale), round(high * scale) + 1)
    return tuple(round(steps / scale, decimals) for steps in every if steps % 10)


OFFSETS = {decimals: _steps(1.5, 2.9, decimals) for decimals in DECIMALS}
"""By decimals, the sizes of a rounded point's d, the longitude less the central meridian (either
sign)."""
ARCS = {decimals: _steps(2.1, 59.9, decimals) for decimals in DECIMALS}
"""By decimals, a rounded point's μ, its scaled meridian arc in units of `PER_DEGREE_M` (north
only)."""
_KNOWN = {decimals: (frozenset(OFFSETS[decimals]), frozenset(ARCS[decimals])) for decimals in DECIMALS}


def _zone(grid: Grid) -> tuple[int, bool] | None:
    """(zone, south) of a WGS 84 UTM grid, None for any other grid."""
    found = re.search(r"\+proj=utm \+zone=(\d+)( \+south)? \+ellps=WGS84$", grid.pipeline)
    return (int(found.group(1)), bool(found.group(2))) if found and grid.shift is None else None


FORMULA_GRIDS = tuple(name for name, grid in GRIDS.items() if (zone := _zone(grid)) and not zone[1])
"""The northern WGS 84 UTM zones: the grids a rounded point is drawn on and the formula stated for."""


def central_meridian(grid: str) -> float:
    zone = _zone(GRIDS[grid])
    if zone is None or zone[1]:
        raise ValueError(f"{grid} is not a northern WGS 84 UTM zone")
    return 6.0 * zone[0] - 183.0


_N = FLATTENING / (2 - FLATTENING)
_ARC = (
    (1 + _N**2 / 4 + _N**4 / 64),
    -1.5 * (_N - _N**3 / 8),
    15 / 16 * (_N**2 - _N**4 / 4),
    -35 / 48 * _N**3,
    315 / 512 * _N**4,
)


def arc(latitude: float) -> float:
    """μ of a latitude (degrees): k0 times its meridian arc from the equator, in units of C
    (Helmert's series, within a micrometre of the arc)."""
    phi = math.radians(latitude)
    series = _ARC[0] * phi + sum(c * math.sin(2 * k * phi) for k, c in enumerate(_ARC[1:], 1))
    return K0 * SEMI_MAJOR_M / (1 + _N) * series / PER_DEGREE_M


def latitude(mu: float) -> float:
    """The latitude (degrees) whose `arc` is `mu` (Newton's method from the spherical guess)."""
    phi = math.radians(mu)
    for _ in range(8):
        slope = (
            K0 * SEMI_MAJOR_M * (1 - E2) / (1 - E2 * math.sin(phi) ** 2) ** 1.5 * math.pi / 180 / PER_DEGREE_M
        )
        phi += math.radians((mu - arc(math.degrees(phi))) / slope)
    return math.degrees(phi)


def point(grid: str, offset: float, mu: float) -> tuple[float, float]:
    """The WGS 84 (lon, lat), printed to six decimals, of a rounded point: `offset` degrees east of
    the grid's central meridian, on the latitude whose `arc` is `mu`."""
    return float(degrees(central_meridian(grid) + offset)), float(degrees(latitude(mu)))


class Numbers(NamedTuple):
    """The formula's numbers for one point, as the prompt states them."""

    offset: float
    """d: the longitude less the central meridian, in degrees (tenths or hundredths)."""
    mu: float
    """μ, with as many decimals as d."""
    per_degree: float
    """E, to 6 decimals."""
    curvature: float
    """h, to 0.1 m."""


def numbers(problem: Problem) -> Numbers | None:
    """The formula's numbers when the problem is a forward projection of a rounded point (`point` of
    some d in `OFFSETS` either way and μ in `ARCS`, of the same decimals, exactly as printed), else
    None: only such a point's guided prompt states the formula, so a point drawn anywhere else never
    does."""
    if problem.family != REPROJECT or problem.grid not in FORMULA_GRIDS:
        return None
    lon, lat = problem.inputs
    exact_offset, exact_mu = lon - central_meridian(problem.grid), arc(lat)
    for decimals, (offsets, arcs) in _KNOWN.items():
        offset, mu = round(exact_offset, decimals), round(exact_mu, decimals)
        if abs(offset) in offsets and mu in arcs and point(problem.grid, offset, mu) == (lon, lat):
            break
    else:
        return None
    phi = math.radians(lat)
    normal = SEMI_MAJOR_M / math.sqrt(1 - E2 * math.sin(phi) ** 2)
    per_degree = round(K0 * normal * math.cos(phi) * math.pi / 180, 6)
    curvature = round(K0 * normal * math.sin(phi) * math.cos(phi) * math.radians(offset) ** 2 / 2, 1)
    return Numbers(offset, mu, per_degree, curvature)


def answer(found: Numbers) -> tuple[float, float]:
    """What the formula gives: (500000 + E × d, C × μ + h)."""
    return FALSE_EASTING_M + found.per_degree * found.offset, PER_DEGREE_M * found.mu + found.curvature
