"""An independent check of the geodesic keys: GeographicLib's own Python implementation."""

from __future__ import annotations

from geo_reprojection_v1.problem import BEARING, DISTANCE
from geo_reprojection_v1.taskset import GeoConfig, make_task_data
from geographiclib.geodesic import Geodesic


def _tasks(family: str, count: int = 300):
    config = GeoConfig(families=[family], seed=31)
    return [make_task_data(config, idx) for idx in range(count)]


def test_distance_keys_match_geographiclib():
    for data in _tasks(DISTANCE):
        lon_a, lat_a, lon_b, lat_b = data.inputs
        solution = Geodesic.WGS84.Inverse(lat_a, lon_a, lat_b, lon_b)
        assert abs(solution["s12"] - data.key[0]) < 1e-6, data.inputs


def test_bearing_keys_match_geographiclib():
    for data in _tasks(BEARING):
        lon_a, lat_a, lon_b, lat_b = data.inputs
        azimuth = Geodesic.WGS84.Inverse(lat_a, lon_a, lat_b, lon_b)["azi1"] % 360.0
        turn = abs(azimuth - data.key[0]) % 360.0
        assert min(turn, 360.0 - turn) < 1e-7, data.inputs
        assert 0.0 <= data.key[0] < 360.0


def test_the_ellipsoid_is_wgs84():
    assert Geodesic.WGS84.a == 6378137.0
    assert abs(1 / Geodesic.WGS84.f - 298.257223563) < 1e-9
