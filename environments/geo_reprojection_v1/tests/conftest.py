"""Shared fixtures: tasks of one family, and PROJ's own answer to a task computed without the env."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from geo_reprojection_v1.grids import GRIDS
from geo_reprojection_v1.problem import FAMILIES, INVERSE, REPROJECT
from geo_reprojection_v1.taskset import GeoConfig, GeoData, GeoTask, GeoTaskConfig, make_task_data
from pyproj import Geod, Transformer


@pytest.fixture(params=FAMILIES)
def family(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def tasks_of() -> Callable[..., list[GeoTask]]:
    def make(family: str, count: int = 12, seed: int = 7, **task_config: object) -> list[GeoTask]:
        config = GeoConfig(families=[family], seed=seed)
        return [GeoTask(make_task_data(config, i), GeoTaskConfig(**task_config)) for i in range(count)]

    return make


def _proj_answer(data: GeoData) -> tuple[float, ...]:
    """PROJ's default answer (its own operation choice, WGS 84 geodesics), not the env's frozen pipelines."""
    if data.family in (REPROJECT, INVERSE):
        transformer = Transformer.from_crs("EPSG:4326", f"EPSG:{GRIDS[data.grid].epsg}", always_xy=True)
        direction = "INVERSE" if data.family == INVERSE else "FORWARD"
        return transformer.transform(*data.inputs, direction=direction)
    azimuth, _, distance = Geod(ellps="WGS84").inv(*data.inputs)
    return (distance,) if data.family == "distance" else (azimuth,)


def _answer(values: tuple[float, ...] | list[float], decimals: int = 9) -> str:
    return "<answer>" + ", ".join(f"{value:.{decimals}f}" for value in values) + "</answer>"


@pytest.fixture
def proj_answer() -> Callable[[GeoData], tuple[float, ...]]:
    return _proj_answer


@pytest.fixture
def answer() -> Callable[..., str]:
    """An answer block of `values` with `decimals` decimals."""
    return _answer
