"""The formula a guided prompt states for a part, and the worksheet lines that work it out.

Web Mercator has a closed-form spherical formula: a forward part states both coordinates as
products with the point's numbers in place (its longitude and its Mercator latitude), within 6 cm
of PROJ (`formula_answer`); an inverse part states the three steps back. A forward part of a
northern WGS 84 UTM zone states UTM's first-order formula with its factors evaluated for the point
(`utm`), only where the point is a rounded one (``point_decimals`` draws them: d and μ in tenths or
hundredths), within `utm.FORMULA_BOUND_M` of PROJ, which the prompt says; a UTM point drawn anywhere
states none, as before. The key is PROJ's in every case (`reference.solve`): the formula is an
instruction the prompt gives, checked against PROJ by `validate()` (`checks.formula_holds`).
"""

from __future__ import annotations

import math

from geo_reprojection_v1 import utm
from geo_reprojection_v1.problem import INVERSE, REPROJECT, Problem

SPHERE_M = 6378137.0
"""The radius of the Web Mercator sphere: the WGS 84 semi-major axis."""
PER_DEGREE_M = 111319.490793
"""``SPHERE_M * pi / 180`` to the micrometre as the formula prints it: metres of easting per degree."""
MERCATOR_DECIMALS = 6
"""Decimals of the printed Mercator latitude, the inputs' own: the northing they give is within
6 cm of the unrounded one, a small part of any guided tolerance (100 m or more)."""
FORMULA_GRIDS = ("webmerc", *utm.FORMULA_GRIDS)
"""The grids a guided prompt may state a formula for: Web Mercator's every part, a UTM zone's
rounded forward points."""
_SPHERE = "Web Mercator is the Mercator projection of a sphere of radius R = 6378137 m"


def mercator_latitude(latitude: float) -> float:
    """(180 / pi) * ln(tan(45° + latitude / 2)): the northing in degrees of the equator, so that
    northing = `PER_DEGREE_M` * it, rounded as the prompt prints it."""
    return round(math.degrees(math.log(math.tan(math.radians(45.0 + latitude / 2.0)))), MERCATOR_DECIMALS)


def stated_factor(value: float) -> str:
    """A factor of the stated formula, to six decimals without trailing zeros (a whole number bare)."""
    text = f"{value:.{MERCATOR_DECIMALS}f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def formula_line(problem: Problem) -> str | None:
    """The formula a guided prompt states for the part, or None when it states none.

    For a Web Mercator forward projection it writes both coordinates as products with this point's
    numbers in place (its longitude and its Mercator latitude, evaluated), so what is left to work
    is two multiplications by the same factor; an inverse is left to work in full. A UTM forward
    projection of a rounded point (`utm.numbers`) gets the first-order formula with its factors
    evaluated: a product and a sum per coordinate; any other UTM part, none."""
    if problem.grid not in FORMULA_GRIDS:
        return None
    if problem.grid != "webmerc":
        found = utm.numbers(problem)
        return None if found is None else _utm_line(problem.grid, found)
    if problem.family == REPROJECT:
        longitude = stated_factor(problem.inputs[0])
        value = stated_factor(mercator_latitude(problem.inputs[1]))
        return (
            f"Formula: for this point, easting = {PER_DEGREE_M} × {longitude} and northing = {PER_DEGREE_M} "
            f"× {value}. Multiply these two out as written. ({_SPHERE}; {PER_DEGREE_M} is R × π / 180, "
            f"{longitude} is the longitude in degrees and {value} the point's Mercator latitude in degrees, "
            "(180 / π) × ln(tan(45° + latitude / 2)), already worked out; nothing needs converting to "
            "radians.)"
        )
    if problem.family == INVERSE:
        return (
            f"Formula: {_SPHERE}. Work in degrees throughout: (1) longitude = easting / {PER_DEGREE_M}; "
            "(2) t = exp(northing / 6378137), e to that power; (3) latitude = 2 × atan(t) − 90, where atan "
            "gives an angle in degrees. A negative easting gives a western longitude and a negative "
            "northing a southern latitude."
        )
    return None


def formula_answer(problem: Problem) -> tuple[float, float]:
    """The answer the stated formula gives, worked from the numbers the prompt prints."""
    if problem.grid != "webmerc":
        found = utm.numbers(problem)
        if found is None:
            raise ValueError(f"no formula for a {problem.family} part on {problem.grid} at {problem.inputs}")
        return utm.answer(found)
    first, second = problem.inputs
    if problem.family == REPROJECT:
        return PER_DEGREE_M * first, PER_DEGREE_M * mercator_latitude(second)
    if problem.family == INVERSE:
        return first / PER_DEGREE_M, math.degrees(2.0 * math.atan(math.exp(second / SPHERE_M))) - 90.0
    raise ValueError(f"no formula for a {problem.family} part")


def formula_bound(problem: Problem) -> float | None:
    """The distance from PROJ's point within which the part's prompt says its formula falls (metres),
    or None where the prompt states no bound (Web Mercator's formula is all but exact)."""
    return utm.FORMULA_BOUND_M if problem.grid != "webmerc" and formula_line(problem) else None


def _utm_factors(found: utm.Numbers) -> tuple[str, str, str, str, str]:
    """E, d, C, μ and h as the formula and its worksheet print them."""
    return (
        stated_factor(found.per_degree),
        stated_factor(found.offset),
        stated_factor(utm.PER_DEGREE_M),
        stated_factor(found.mu),
        _tenth(found.curvature),
    )


def _utm_line(grid: str, found: utm.Numbers) -> str:
    east, offset, per_degree, mu, curve = _utm_factors(found)
    meridian = stated_factor(utm.central_meridian(grid))
    return (
        f"Formula: for this point, easting = {utm.FALSE_EASTING_M} + {east} × {offset} and northing = "
        f"{per_degree} × {mu} + {curve}. Work these out as written. (UTM is a transverse Mercator projection "
        f"scaled by {utm.K0} with {utm.FALSE_EASTING_M} m added to the easting; {offset} is the longitude "
        f"less the zone's central meridian {meridian}, {east} the grid metres per degree of longitude at "
        f"this latitude, {mu} the point's meridian distance from the equator (times {utm.K0}) in units of "
        f"{per_degree} m, and {curve} the curvature term, all already worked out; the formula is within "
        f"{utm.FORMULA_BOUND_M:g} m of the exact point.)"
    )


def _tenth(value: float) -> str:
    """A number of at most one decimal as the formula prints it (a whole number bare)."""
    return stated_factor(round(value, 1))


def worksheet_lines(problem: Problem, tag: str = "") -> list[str]:
    """The lines a guided forward part's worksheet asks to complete: a product per coordinate, and
    for a UTM point the sum it goes into; `tag` numbers the coordinates by part."""
    if problem.grid == "webmerc":
        return [
            f"{axis}{tag} = {PER_DEGREE_M} × {stated_factor(value)} = <product>"
            for axis, value in (
                ("easting", problem.inputs[0]),
                ("northing", mercator_latitude(problem.inputs[1])),
            )
        ]
    found = utm.numbers(problem)
    if found is None:
        raise ValueError(f"no worksheet for a {problem.family} part on {problem.grid} at {problem.inputs}")
    east, offset, per_degree, mu, curve = _utm_factors(found)
    false = utm.FALSE_EASTING_M
    return [
        f"easting{tag} = {false} + {east} × {offset} = {false} + <product> = <sum>",
        f"northing{tag} = {per_degree} × {mu} + {curve} = <product> + {curve} = <sum>",
    ]
