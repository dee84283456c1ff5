"""The frozen pipelines are PROJ's own for the named operations, and the datum shift is pinned."""

from __future__ import annotations

import math
import random
import warnings

import pytest
from geo_reprojection_v1 import generator, reference
from geo_reprojection_v1.grids import GRIDS, in_box
from geo_reprojection_v1.problem import INVERSE, REPROJECT, Problem, printed
from geo_reprojection_v1.taskset import GeoTask, task_data
from piv_core.testing import score_reply
from pyproj import CRS, Transformer
from pyproj.crs import CoordinateOperation
from pyproj.transformer import TransformerGroup

NORTH_SEA = (1.98, 53.0)
"""Inside the British National Grid's area but outside that of OSGB36 to WGS 84 (6)."""
WESTERN_APPROACHES = (-8.95, 50.0)
"""Likewise; here PROJ's default also inverts with a ballpark."""


def _named_operation(grid) -> Transformer:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        group = TransformerGroup("EPSG:4326", f"EPSG:{grid.epsg}", always_xy=True, allow_ballpark=False)
    if grid.shift is None:
        assert len(group.transformers) == 1
        return group.transformers[0]
    [named] = [t for t in group.transformers if f" {grid.shift.name} " in f" {t.description} "]
    return named


@pytest.mark.parametrize("name", list(GRIDS))
def test_frozen_pipeline_is_projs_for_the_named_operation(name):
    grid = GRIDS[name]
    assert _named_operation(grid).to_proj4() == grid.pipeline


@pytest.mark.parametrize("name", list(GRIDS))
def test_grid_facts_match_the_epsg_database(name):
    grid = GRIDS[name]
    crs = CRS.from_epsg(grid.epsg)
    assert crs.name.startswith(grid.title.split(" (")[0])
    assert tuple(crs.area_of_use.bounds) == pytest.approx(grid.area)
    assert ([axis.abbrev for axis in crs.axis_info] == ["N", "E"]) == grid.northing_first
    if grid.shift is not None:
        operation = CoordinateOperation.from_epsg(grid.shift.code)
        assert operation.name == grid.shift.name
        assert operation.accuracy == grid.shift.accuracy_m
        assert tuple(operation.area_of_use.bounds) == pytest.approx(grid.shift.area)


@pytest.mark.parametrize("name", list(GRIDS))
def test_sampling_boxes_lie_inside_both_areas(name):
    grid = GRIDS[name]
    areas = [grid.area] + ([grid.shift.area] if grid.shift else [])
    for west, south, east, north in grid.boxes:
        for lon, lat in ((west, south), (west, north), (east, south), (east, north)):
            assert all(in_box(area, lon, lat) for area in areas), (name, lon, lat)


@pytest.mark.parametrize("name", list(GRIDS))
def test_drawn_points_round_trip_within_a_centimetre(name):
    rng = random.Random(name)
    for _ in range(200):
        lon, lat = generator.point(rng, name)
        easting, northing = reference.forward(name, lon, lat)
        back = reference.inverse(name, easting, northing)
        assert reference.geodesic_distance(*back, lon, lat) < 0.01


def test_bng_default_choice_differs_from_the_pinned_one_in_the_north_sea():
    default = Transformer.from_crs("EPSG:4326", "EPSG:27700", always_xy=True).transform(*NORTH_SEA)
    pinned = reference.forward("bng", *NORTH_SEA)
    assert pinned == pytest.approx((667145.257, 352153.656), abs=1e-3)
    assert math.dist(default, pinned) > 100


@pytest.mark.parametrize("family", [REPROJECT, INVERSE])
def test_bng_key_is_graded_against_the_pinned_operation(family):
    """Where PROJ's default falls back to a ballpark, the key and the grade still follow op (6)."""
    default = Transformer.from_crs("EPSG:4326", "EPSG:27700", always_xy=True)
    if family == REPROJECT:
        inputs = NORTH_SEA
        pinned, unpinned = reference.forward("bng", *inputs), default.transform(*inputs)
    else:
        inputs = printed(INVERSE, reference.forward("bng", *WESTERN_APPROACHES))
        pinned, unpinned = reference.inverse("bng", *inputs), default.transform(*inputs, direction="INVERSE")
    task = GeoTask(task_data(Problem(family, "bng", inputs), 1.0))
    assert task.data.key == pytest.approx(list(pinned), abs=1e-9)
    right = score_reply(task, f"<answer>{pinned[0]!r}, {pinned[1]!r}</answer>")
    assert right.rewards["within_tolerance"] == 1.0
    wrong = score_reply(task, f"<answer>{unpinned[0]!r}, {unpinned[1]!r}</answer>")
    assert wrong.rewards["within_tolerance"] == 0.0 and wrong.metrics["error"] > 50


def test_bng_prompt_names_the_helmert_shift_not_ostn15():
    task = GeoTask(task_data(Problem(REPROJECT, "bng", (-1.5, 52.5)), 1.0))
    assert '"OSGB36 to WGS 84 (6)" (EPSG:1314)' in task.data.prompt
    assert "not the OSTN15 grid" in task.data.prompt
