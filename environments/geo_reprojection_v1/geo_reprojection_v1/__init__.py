"""geo-reprojection-v1: coordinate reprojection and geodesy on WGS 84, graded against PROJ."""

from piv_core.runtime import SingleReplyHarness

from geo_reprojection_v1.taskset import GeoConfig, GeoData, GeoTask, GeoTaskConfig, GeoTaskset

__all__ = ["GeoConfig", "GeoData", "GeoTask", "GeoTaskConfig", "GeoTaskset", "SingleReplyHarness"]
