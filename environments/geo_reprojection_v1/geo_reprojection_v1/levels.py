"""The difficulty ladder: what each ``level`` of the taskset sets (`piv_core.ladder`).

Rung 1 is a handful of Web Mercator forward projections, the one grid with a closed-form
spherical formula, at a kilometre's tolerance and scored by the fraction of parts right, so a
partly right reply still earns reward. Each rung above adds families and grids and tightens the
tolerance; rung 4 is the default task mix at the default tolerances, and rung 5 asks four parts
of any family at half the default tolerances and rewards only a reply with every part right.
"""

from __future__ import annotations

from piv_core.ladder import check_rungs

from geo_reprojection_v1.grids import GRIDS, NULL
from geo_reprojection_v1.problem import BEARING, DISTANCE, FAMILIES, INVERSE, REPROJECT

ALL_GRIDS = list(GRIDS)
WGS84_GRIDS = [name for name, grid in GRIDS.items() if grid.shift is None]
"""The grids defined on WGS 84 itself: no datum shift at all."""
NULL_SHIFT_GRIDS = [name for name, grid in GRIDS.items() if grid.shift is None or grid.shift.method == NULL]
"""Every grid whose datum shift is at most a null transformation (all but the British National Grid)."""

RUNGS = {
    1: {
        "families": [REPROJECT],
        "grids": ["webmerc"],
        "tolerance_scale": 1000.0,
        "parts_per_task": 1,
        "scoring": "fraction",
        "guide": True,
        "graded": True,
        "graded_halflife": 500.0,
    },
    2: {
        "families": [REPROJECT, INVERSE],
        "grids": WGS84_GRIDS,
        "tolerance_scale": 100.0,
        "parts_per_task": 4,
        "scoring": "fraction",
        "guide": True,
        "graded": True,
        "graded_halflife": 1000.0,
    },
    3: {
        "families": [REPROJECT, INVERSE, DISTANCE, BEARING],
        "grids": NULL_SHIFT_GRIDS,
        "tolerance_scale": 10.0,
        "parts_per_task": 3,
        "scoring": "fraction",
    },
    4: {
        "families": list(FAMILIES),
        "grids": ALL_GRIDS,
        "tolerance_scale": 1.0,
        "parts_per_task": 3,
        "scoring": "fraction",
    },
    5: {
        "families": list(FAMILIES),
        "grids": ALL_GRIDS,
        "tolerance_scale": 0.5,
        "parts_per_task": 4,
        "scoring": "all",
    },
}
check_rungs(RUNGS)
