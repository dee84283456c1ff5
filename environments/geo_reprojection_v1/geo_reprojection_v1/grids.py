"""The nine projected grids: EPSG identity, the pinned datum shift, and where points are drawn.

Each grid's conversion from WGS 84 longitude/latitude is frozen here as a PROJ pipeline
string: the pipeline PROJ builds for ``EPSG:4326 -> EPSG:<code>`` under one named EPSG
operation, chosen once instead of left to PROJ's best-available pick (which depends on the
grids installed on the host and on ``PROJ_NETWORK``). The tests check each string against
what PROJ derives from its EPSG database for the named operation.

Points are drawn only inside rectangles that lie within the grid's EPSG area of use and,
where it is smaller, within the pinned operation's area. The British National Grid and
NZTM2000 areas are onshore, so their rectangles were laid inland (checked against a 1 km
land mask with a ~2 km margin); the MGA rectangles keep to Australian land and waters; the
WGS 84 UTM zones use their whole band; Web Mercator is drawn within +-70 degrees latitude.
"""

from __future__ import annotations

from typing import NamedTuple

Box = tuple[float, float, float, float]
"""(west, south, east, north) in WGS 84 degrees."""


class DatumShift(NamedTuple):
    """The EPSG operation between the grid's datum and WGS 84 that the key applies."""

    code: int
    name: str
    method: str
    accuracy_m: float
    area: Box


class Grid(NamedTuple):
    name: str
    """Short identifier used in task data (``mga55``, ``bng``, ...)."""
    epsg: int
    title: str
    datum: str
    shift: DatumShift | None
    """None when the grid is defined on WGS 84 itself."""
    pipeline: str
    """WGS 84 lon/lat (degrees) -> easting/northing (metres), as a PROJ pipeline string."""
    area: Box
    """The EPSG area of use of the projected CRS (bounding box)."""
    boxes: tuple[Box, ...]
    """Where points are drawn; each lies inside `area` and inside the shift's area."""
    northing_first: bool = False
    """True when the EPSG axis order is (northing, easting); answers are easting first anyway."""


_HEAD = "+proj=pipeline +step +proj=unitconvert +xy_in=deg +xy_out=rad +step "

NULL = "null transformation"
GDA2020_NULL = DatumShift(8450, "GDA2020 to WGS 84 (2)", NULL, 3.0, (93.41, -60.55, 173.34, -8.47))
NZGD2000_NULL = DatumShift(1565, "NZGD2000 to WGS 84 (1)", NULL, 1.0, (160.6, -55.95, -171.2, -25.88))
OSGB36_HELMERT = DatumShift(
    1314, "OSGB36 to WGS 84 (6)", "7-parameter Helmert (position vector)", 2.0, (-8.82, 49.79, 1.92, 60.94)
)

# Inland rectangles of Great Britain (England, Wales, Scotland).
_GB = (
    (-2.3, 51.0, -0.05, 53.45),
    (-2.75, 53.5, -1.7, 55.45),
    (-5.05, 56.55, -2.8, 57.4),
    (-3.9, 51.9, -2.4, 53.15),
    (-4.55, 55.05, -2.8, 55.85),
    (0.0, 51.9, 1.05, 52.7),
    (-1.6, 53.5, -0.8, 54.45),
    (-4.1, 50.8, -2.4, 51.1),
    (-4.7, 56.2, -3.35, 56.5),
    (-4.9, 57.5, -4.5, 58.4),
)
# Inland rectangles of the North and South Islands of New Zealand.
_NZ = (
    (168.4, -45.8, 170.5, -44.1),
    (174.9, -39.8, 176.8, -38.0),
    (171.55, -43.75, 172.6, -41.8),
    (167.6, -46.1, 168.35, -45.1),
    (170.3, -44.0, 171.5, -43.2),
    (172.65, -42.35, 173.6, -41.4),
    (176.85, -39.0, 177.8, -38.1),
    (175.3, -41.05, 176.0, -39.85),
    (168.4, -46.4, 169.7, -45.85),
    (174.9, -37.9, 175.8, -37.3),
)


def _mga(zone: int, area: Box, boxes: tuple[Box, ...]) -> Grid:
    return Grid(
        f"mga{zone}",
        7800 + zone,
        f"GDA2020 / MGA zone {zone}",
        "GDA2020",
        GDA2020_NULL,
        _HEAD + f"+proj=utm +zone={zone} +south +ellps=GRS80",
        area,
        boxes,
    )


def _utm(zone: int, south: bool, area: Box) -> Grid:
    hemisphere, epsg = ("S", 32700 + zone) if south else ("N", 32600 + zone)
    pipeline = _HEAD + f"+proj=utm +zone={zone}{' +south' if south else ''} +ellps=WGS84"
    title = f"WGS 84 / UTM zone {zone}{hemisphere}"
    return Grid(f"utm{zone}{hemisphere.lower()}", epsg, title, "WGS 84", None, pipeline, area, (area,))


GRIDS: dict[str, Grid] = {
    grid.name: grid
    for grid in (
        _mga(54, (138.0, -48.19, 144.01, -9.08), ((138.0, -38.0, 144.0, -11.0),)),
        _mga(55, (144.0, -50.89, 150.01, -9.23), ((144.0, -43.5, 150.0, -16.0),)),
        _mga(
            56,
            (150.0, -58.96, 156.0, -13.87),
            ((150.0, -37.5, 153.0, -28.0), (150.0, -28.0, 156.0, -18.0)),
        ),
        _utm(10, False, (-126.0, 0.0, -120.0, 84.0)),
        _utm(33, False, (12.0, 0.0, 18.0, 84.0)),
        _utm(56, True, (150.0, -80.0, 156.0, 0.0)),
        Grid(
            "bng",
            27700,
            "OSGB36 / British National Grid",
            "OSGB36",
            OSGB36_HELMERT,
            _HEAD + "+proj=push +v_3 +step +proj=cart +ellps=WGS84 +step +inv +proj=helmert +x=446.448 "
            "+y=-125.157 +z=542.06 +rx=0.15 +ry=0.247 +rz=0.842 +s=-20.489 +convention=position_vector "
            "+step +inv +proj=cart +ellps=airy +step +proj=pop +v_3 +step +proj=tmerc +lat_0=49 +lon_0=-2 "
            "+k=0.9996012717 +x_0=400000 +y_0=-100000 +ellps=airy",
            (-9.01, 49.75, 2.01, 61.01),
            _GB,
        ),
        Grid(
            "nztm",
            2193,
            "NZGD2000 / New Zealand Transverse Mercator 2000",
            "NZGD2000",
            NZGD2000_NULL,
            _HEAD + "+proj=tmerc +lat_0=0 +lon_0=173 +k=0.9996 +x_0=1600000 +y_0=10000000 +ellps=GRS80",
            (166.37, -47.33, 178.63, -34.1),
            _NZ,
            northing_first=True,
        ),
        Grid(
            "webmerc",
            3857,
            "WGS 84 / Pseudo-Mercator (Web Mercator)",
            "WGS 84",
            None,
            _HEAD + "+proj=webmerc +lat_0=0 +lon_0=0 +x_0=0 +y_0=0 +ellps=WGS84",
            (-180.0, -85.06, 180.0, 85.06),
            ((-180.0, -70.0, 180.0, 70.0),),
        ),
    )
}
BY_EPSG: dict[int, Grid] = {grid.epsg: grid for grid in GRIDS.values()}


def in_box(box: Box, lon: float, lat: float, slack: float = 0.0) -> bool:
    """Whether (lon, lat) lies in `box`; a box whose east edge is west of its west edge crosses 180."""
    west, south, east, north = box
    if not south - slack <= lat <= north + slack:
        return False
    if west <= east:
        return west - slack <= lon <= east + slack
    return lon >= west - slack or lon <= east + slack


def in_boxes(boxes: tuple[Box, ...], lon: float, lat: float, slack: float = 0.0) -> bool:
    return any(in_box(box, lon, lat, slack) for box in boxes)
