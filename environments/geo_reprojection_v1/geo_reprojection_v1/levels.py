"""The difficulty ladder: what each ``level`` of the taskset sets (`piv_core.tasksets.ladder`).

Rung 1 is one Web Mercator forward projection, the one grid with a closed-form spherical formula,
guided (``guide``: the prompt writes both coordinates as products with the point's numbers in place,
its longitude and its Mercator latitude in degrees evaluated, and ends on a worksheet: the products
to complete, then the answer line with names in place of numbers). Its points have a whole-number
longitude and Mercator latitude of one digit (``point_decimals`` 0, ``point_max`` 9), so each
coordinate is 111319.490793 times a whole number from 2 to 9 either way. It is graded coordinate by
coordinate (``task.graded_per_coordinate``): each scores 1 / (1 + (error / 15 km)^2) at a 1 km
tolerance, so one right coordinate earns half the reward, a product right to three figures most of
its half, and a wrong multiplier (111 km or more off) or an answer that skips the arithmetic (zeros,
the inputs, the stated numbers) under 0.02. Rung 2 is rung 1 with whole numbers up to 19
(``point_max`` 19: products such as 111319.490793 × 17); rung 3 is rung 2 with the point in tenths
of a degree (``point_decimals`` 1), so each product is by a number such as 7.3; rung 4 is rung 3
with two points a task. Rung 5 is rung 3 on a northern WGS 84 UTM zone (10N or 33N) instead of Web
Mercator: ``point_decimals`` 1 there draws the point's longitude less the central meridian, d, from
1.5 to 2.9 either way and its meridian distance in units of 110574.275822 m, μ, from 2.1 to 59.9,
both in tenths, and the prompt states UTM's first-order formula with its factors evaluated for the
point (easting = 500000 + E × d, northing = C × μ + h: a product and a sum per coordinate, within
200 m of PROJ's point, whose answer the key still is), graded like rungs 1 to 4. Rung 6 is rung 5
with d and μ in hundredths (``point_decimals`` 2: products such as 98240.999257 × 2.37 and
110574.275822 × 28.13). Rungs 7 to 10 narrow rung 6's scoring, so that more of each product's digits
count: rung 7 at a 300 m tolerance (``tolerance_scale`` 300, a 4.5 km half-life), rung 8 with a
half-life of 5 tolerances (1.5 km), rung 9 of 3 (900 m) and rung 10 of 1.5 (450 m). The formula
worked exactly stays within the tolerance, and earns 0.99 or more on average at each of them. Rung 11
asks four forward and inverse parts on the four WGS 84 grids, guided and graded at a 100 km
half-life, only the Web Mercator parts with a formula (its UTM points are drawn anywhere, so they
state none). Rungs 12 and up are pass/fail per part, unguided: rung 12 adds distance and bearing on
the null-shift grids, rung 13 is the default task mix at the default tolerances, and rung 14 asks
four parts of any family at half the default tolerances and rewards only a reply with every part
right.

The keys ``graded``, ``graded_halflife`` and ``graded_per_coordinate`` set the task knobs of
those names (`TASK_KNOBS`, `task_knobs`); every other key is a taskset knob.
"""

from __future__ import annotations

from piv_core.tasksets.ladder import check_rungs

from geo_reprojection_v1.grids import GRIDS, NULL
from geo_reprojection_v1.problem import BEARING, DISTANCE, FAMILIES, INVERSE, REPROJECT
from geo_reprojection_v1.utm import FORMULA_GRIDS as UTM_FORMULA_GRIDS

ALL_GRIDS = list(GRIDS)
WGS84_GRIDS = [name for name, grid in GRIDS.items() if grid.shift is None]
"""The grids defined on WGS 84 itself: no datum shift at all."""
NULL_SHIFT_GRIDS = [name for name, grid in GRIDS.items() if grid.shift is None or grid.shift.method == NULL]
"""Every grid whose datum shift is at most a null transformation (all but the British National Grid)."""

GUIDED_POINT = {
    "families": [REPROJECT],
    "grids": ["webmerc"],
    "tolerance_scale": 1000.0,
    "parts_per_task": 1,
    "scoring": "fraction",
    "guide": True,
    "point_decimals": 0,
    "point_max": 19,
    "graded": True,
    "graded_halflife": 15.0,
    "graded_per_coordinate": True,
}
"""Rung 2; rungs 1, 3 and 4 each change one knob of the rung below or above, rung 5 the grids of rung
3 (and it leaves ``point_max`` unset: a UTM point's numbers are bounded by its zone)."""
GUIDED_UTM_POINT = {
    **{knob: value for knob, value in GUIDED_POINT.items() if knob != "point_max"},
    "grids": list(UTM_FORMULA_GRIDS),
    "point_decimals": 1,
}
"""Rung 5: one rounded point of a northern WGS 84 UTM zone, with UTM's first-order formula."""
HUNDREDTHS_UTM_POINT = {**GUIDED_UTM_POINT, "point_decimals": 2}
"""Rung 6."""
NARROW_UTM_POINT = {**HUNDREDTHS_UTM_POINT, "tolerance_scale": 300.0}
"""Rung 7: rung 6 at 300 m, a tolerance the formula (within 200 m) meets; rungs 8 to 10 narrow its
half-life."""

RUNGS = {
    1: {**GUIDED_POINT, "point_max": 9},
    2: GUIDED_POINT,
    3: {**GUIDED_POINT, "point_decimals": 1},
    4: {**GUIDED_POINT, "point_decimals": 1, "parts_per_task": 2},
    5: GUIDED_UTM_POINT,
    6: HUNDREDTHS_UTM_POINT,
    7: NARROW_UTM_POINT,
    8: {**NARROW_UTM_POINT, "graded_halflife": 5.0},
    9: {**NARROW_UTM_POINT, "graded_halflife": 3.0},
    10: {**NARROW_UTM_POINT, "graded_halflife": 1.5},
    11: {
        "families": [REPROJECT, INVERSE],
        "grids": WGS84_GRIDS,
        "tolerance_scale": 100.0,
        "parts_per_task": 4,
        "scoring": "fraction",
        "guide": True,
        "graded": True,
        "graded_halflife": 1000.0,
    },
    12: {
        "families": [REPROJECT, INVERSE, DISTANCE, BEARING],
        "grids": NULL_SHIFT_GRIDS,
        "tolerance_scale": 10.0,
        "parts_per_task": 3,
        "scoring": "fraction",
    },
    13: {
        "families": list(FAMILIES),
        "grids": ALL_GRIDS,
        "tolerance_scale": 1.0,
        "parts_per_task": 3,
        "scoring": "fraction",
    },
    14: {
        "families": list(FAMILIES),
        "grids": ALL_GRIDS,
        "tolerance_scale": 0.5,
        "parts_per_task": 4,
        "scoring": "all",
    },
}
check_rungs(RUNGS)

TASK_KNOBS = ("graded", "graded_halflife", "graded_per_coordinate")
"""Rung keys that set a `GeoTaskConfig` field of the same name rather than a taskset knob."""


def task_knobs(level: int | None) -> dict[str, object]:
    """The task knobs rung `level` sets (none for no rung)."""
    return {} if level is None else {k: v for k, v in RUNGS[level].items() if k in TASK_KNOBS}
