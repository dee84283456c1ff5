"""What a task asks: its family, its grid, and the input numbers exactly as the prompt prints them.

Inputs are printed to six decimals (degrees) or three (metres) and a `Problem` holds the
printed values, so the key derived from a `Problem` is the key of the prompt's numbers.
"""

from __future__ import annotations

from typing import NamedTuple

REPROJECT = "reproject"
INVERSE = "inverse"
DISTANCE = "distance"
BEARING = "bearing"
FAMILIES = (REPROJECT, INVERSE, DISTANCE, BEARING)

ARITY = {REPROJECT: 2, INVERSE: 2, DISTANCE: 1, BEARING: 1}
"""How many numbers an answer holds."""
UNITS = {REPROJECT: "m", INVERSE: "m", DISTANCE: "m", BEARING: "°"}
"""The unit of the error (and of the tolerance) per family."""

DEGREE_DECIMALS = 6
METRE_DECIMALS = 3


class Problem(NamedTuple):
    family: str
    grid: str
    """The target grid (reproject), the source grid (inverse), or the area both points lie in."""
    inputs: tuple[float, ...]
    """reproject (lon, lat); inverse (easting, northing); distance, bearing (lon_a, lat_a, lon_b, lat_b)."""


def degrees(value: float) -> str:
    return f"{value:.{DEGREE_DECIMALS}f}"


def metres(value: float) -> str:
    return f"{value:.{METRE_DECIMALS}f}"


def printed(family: str, values: tuple[float, ...]) -> tuple[float, ...]:
    """`values` rounded exactly as the prompt prints them."""
    fmt = metres if family == INVERSE else degrees
    return tuple(float(fmt(value)) for value in values)
