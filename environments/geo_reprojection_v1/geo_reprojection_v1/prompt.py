"""The task text: every convention the key applies, stated so the prompt alone fixes the answer.

The system prompt carries the answer format and the parsing rules; the user prompt names the
family, the source and target reference systems by EPSG code, the datum operation the key
uses, the axis order and units of the answer, the tolerance, and the inputs as exact
decimals. `read_problem` is the inverse of `user_prompt`: it recovers the problem and the
tolerance from the text the model sees, which is what the oracle policy and `validate()`
work from. A task of several parts (`task_prompt`) prefixes a header with the count of parts
and numbers and the scoring statement, then each part's `user_prompt` under ``Part <n>``;
`read_problems` reads them back part by part.
"""

from __future__ import annotations

import re

from geo_reprojection_v1.grids import BY_EPSG, GRIDS, Grid
from geo_reprojection_v1.problem import (
    ARITY,
    BEARING,
    DISTANCE,
    INVERSE,
    REPROJECT,
    Problem,
    degrees,
    metres,
)
from geo_reprojection_v1.scoring import Scoring

SYSTEM_PROMPT = """You answer coordinate conversion and geodesy questions. Each question states its \
inputs, the reference system of every coordinate (by EPSG code), the datum transformation to use where \
one is needed, the form of the answer and the tolerance it is checked against.

CONVENTIONS
- The printed input values are exact.
- WGS 84 longitudes and latitudes are in decimal degrees; east and north are positive.
- Projected coordinates are in metres; give the easting first and the northing second.
- A geodesic is the shortest path on the WGS 84 ellipsoid (a = 6378137 m, 1/f = 298.257223563), \
not on a sphere.
- A bearing (azimuth) is in degrees clockwise from true north.

ANSWER FORMAT
- End your reply with one <answer>...</answer> block holding only the requested numbers, in the \
requested order, separated by a comma or a space, for example <answer>512345.678, 6123456.789</answer>.
- Write plain decimal numbers (scientific notation is also read), with no units, labels or degree signs.
- Do not group digits. A comma always separates two numbers, so 6,123,456.789 reads as three numbers \
and the answer is rejected.
- The block must hold exactly as many numbers as the question asks for, or it is rejected.
- Only the last <answer> block of your reply is read; text outside it is ignored."""

WGS84 = "WGS 84 (EPSG:4326), longitude and latitude in decimal degrees"

HEADLINES = {
    REPROJECT: "Convert a WGS 84 longitude/latitude to projected grid coordinates.",
    INVERSE: "Convert projected grid coordinates to a WGS 84 longitude/latitude.",
    DISTANCE: "Find the geodesic distance between two points.",
    BEARING: "Find the initial bearing of the geodesic from point A to point B.",
}
_FAMILY_OF = {headline: family for family, headline in HEADLINES.items()}


def _tolerance(value: float) -> str:
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def _grid_line(grid: Grid) -> str:
    order = (
        "easting and northing in metres (the EPSG definition lists the northing first; "
        "answer with the easting first anyway)"
        if grid.northing_first
        else "easting and northing in metres"
    )
    return f"{grid.title} (EPSG:{grid.epsg}), {order}"


def datum_line(grid: Grid) -> str:
    """How the key moves between the grid's datum and WGS 84."""
    shift = grid.shift
    if shift is None:
        return "Datum shift: none; the grid is defined on WGS 84 itself."
    if shift.method == "null transformation":
        return (
            f"Datum shift: treat {grid.datum} and WGS 84 as coincident, the EPSG null transformation "
            f'"{shift.name}" (EPSG:{shift.code}).'
        )
    return (
        f'Datum shift: between {grid.datum} and WGS 84 use the EPSG operation "{shift.name}" '
        f"(EPSG:{shift.code}), the {shift.method} transformation, not the OSTN15 grid."
    )


def user_prompt(problem: Problem, tolerance: float) -> str:
    family, grid_name, inputs = problem
    grid, tol = GRIDS[grid_name], _tolerance(tolerance)
    lines = [f"Task: {HEADLINES[family]}"]
    if family == REPROJECT:
        lon, lat = inputs
        lines += [
            f"From: {WGS84}",
            f"To: {_grid_line(grid)}",
            datum_line(grid),
            f"Point: longitude {degrees(lon)}, latitude {degrees(lat)}",
            "Answer: two numbers, the easting then the northing, in metres.",
            f"Tolerance: within {tol} m of the reference point, measured as the straight-line distance "
            "in the grid's metres.",
        ]
    elif family == INVERSE:
        easting, northing = inputs
        lines += [
            f"From: {_grid_line(grid)}",
            f"To: {WGS84}",
            datum_line(grid),
            f"Point: easting {metres(easting)}, northing {metres(northing)}",
            "Answer: two numbers, the longitude then the latitude, in decimal degrees.",
            f"Tolerance: within {tol} m of the reference point, measured as the geodesic distance on the "
            "WGS 84 ellipsoid.",
        ]
    else:
        lon_a, lat_a, lon_b, lat_b = inputs
        lines += [
            f"Points: {WGS84}",
            f"Point A: longitude {degrees(lon_a)}, latitude {degrees(lat_a)}",
            f"Point B: longitude {degrees(lon_b)}, latitude {degrees(lat_b)}",
        ]
        if family == DISTANCE:
            lines += [
                "Answer: one number, the length in metres of the geodesic between A and B on the WGS 84 "
                "ellipsoid.",
                f"Tolerance: within {tol} m of the reference distance.",
            ]
        else:
            lines += [
                "Answer: one number, the azimuth at A of the geodesic from A to B on the WGS 84 ellipsoid, "
                "in degrees clockwise from true north.",
                f"Tolerance: within {tol} degrees of the reference azimuth, compared around the circle "
                "(any equivalent angle modulo 360 is accepted).",
            ]
    return "\n".join(lines)


_NUMBER = r"(-?\d+(?:\.\d+)?)"
_TASK = re.compile(r"^Task: (.+)$", re.MULTILINE)
_EPSG = re.compile(r"^(?:From|To): .*?\(EPSG:(\d+)\)", re.MULTILINE | re.ASCII)
_GRID_POINT = re.compile(rf"^Point: easting {_NUMBER}, northing {_NUMBER}$", re.MULTILINE | re.ASCII)
_LONLAT = rf"longitude {_NUMBER}, latitude {_NUMBER}$"
_POINT = re.compile(rf"^Point: {_LONLAT}", re.MULTILINE | re.ASCII)
_POINTS = re.compile(rf"^Point A: {_LONLAT}\n^Point B: {_LONLAT}", re.MULTILINE | re.ASCII)
_TOLERANCE = re.compile(r"^Tolerance: within (\S+) (?:m|degrees) ", re.MULTILINE)


def read_problem(text: str) -> tuple[Problem, float]:
    """The problem and tolerance stated in a user prompt; raises ValueError when they are not there.

    For distance and bearing the prompt names no grid, so the problem's grid is empty.
    """
    task, tolerance = _TASK.search(text), _TOLERANCE.search(text)
    family = _FAMILY_OF.get(task.group(1)) if task else None
    if family is None or tolerance is None:
        raise ValueError("prompt states no known task or no tolerance")
    if family in (DISTANCE, BEARING):
        found = _POINTS.search(text)
        grid = ""
    else:
        found = (_POINT if family == REPROJECT else _GRID_POINT).search(text)
        codes = [int(code) for code in _EPSG.findall(text) if int(code) in BY_EPSG]
        if len(codes) != 1:
            raise ValueError("prompt names no single known grid")
        grid = BY_EPSG[codes[0]].name
    if found is None:
        raise ValueError(f"prompt states no input point for a {family} task")
    return Problem(family, grid, tuple(float(value) for value in found.groups())), float(tolerance.group(1))


_PART = re.compile(r"^Part (\d+)$", re.MULTILINE | re.ASCII)
_SCORING = re.compile(r"^Scoring: .*$", re.MULTILINE)


def scoring_line(count: int, scoring: Scoring, graded: bool = False, halflife: float = 1.0) -> str:
    """How a task of `count` parts is rewarded, as its prompt states it."""
    if graded:
        each = (
            f"each part scores 1 / (1 + (e / ({_tolerance(halflife)} * t))^2), where e is the part's error "
            "and t its tolerance"
        )
    else:
        each = "each part scores 1 when its answer is within that part's tolerance and 0 otherwise"
    whole = (
        f"your reward is the lowest of the {count} part scores"
        if scoring == "all"
        else f"your reward is the mean of the {count} part scores"
    )
    return (
        f"Scoring: {each}; {whole}. An answer block with the wrong count of numbers scores 0 on every part."
    )


def task_prompt(
    parts: list[tuple[Problem, float]], scoring: Scoring, graded: bool = False, halflife: float = 1.0
) -> str:
    """The user prompt of a task: `user_prompt` for one part; for several, a header and each part."""
    if len(parts) == 1:
        return user_prompt(*parts[0])
    numbers = sum(ARITY[problem.family] for problem, _ in parts)
    blocks = [
        f"This question has {len(parts)} parts. Answer all of them in one <answer> block: the numbers of "
        f"part 1, then those of part 2, and so on, {numbers} numbers in all.\n"
        + scoring_line(len(parts), scoring, graded, halflife)
    ]
    blocks += [
        f"Part {i}\n{user_prompt(problem, tolerance)}" for i, (problem, tolerance) in enumerate(parts, 1)
    ]
    return "\n\n".join(blocks)


def part_texts(text: str) -> list[str]:
    """The text of each part of a prompt (the whole prompt when it has one part).

    Raises ValueError when the parts are not numbered 1, 2, ... in order.
    """
    pieces = _PART.split(text)
    if len(pieces) == 1:
        return [text]
    numbers, bodies = pieces[1::2], pieces[2::2]
    if numbers != [str(i) for i in range(1, len(numbers) + 1)]:
        raise ValueError("prompt parts are not numbered 1, 2, ... in order")
    return [body.strip("\n") for body in bodies]


def stated_scoring(text: str) -> str | None:
    """The prompt's scoring statement, or None when it has none (a one-part prompt)."""
    found = _SCORING.search(text)
    return found.group(0) if found else None


def read_problems(text: str) -> list[tuple[Problem, float]]:
    """Each part's problem and tolerance (`read_problem` per part); raises ValueError like it."""
    return [read_problem(part) for part in part_texts(text)]
