"""The task text: every convention the key applies, stated so the prompt alone fixes the answer.

The system prompt carries the answer format and the parsing rules; the user prompt names the
family, the source and target reference systems by EPSG code, the datum operation the key
uses, the axis order and units of the answer, the tolerance, and the inputs as exact
decimals. `read_problem` is the inverse of `user_prompt`: it recovers the problem and the
tolerance from the text the model sees, which is what the oracle policy and `validate()`
work from. A task of several parts (`task_prompt`) prefixes a header with the count of parts
and numbers and the scoring statement, then each part's `user_prompt` under ``Part <n>``;
`read_problems` reads them back part by part.

With ``guide`` on (the low rungs of the ladder) a task also says how to answer: work in plain
text first, then one block for the whole question, its numbers named in order; it states the
scoring even for one part, and every Web Mercator part carries the grid's closed-form spherical
formula, a rounded UTM forward point UTM's first-order one (`formula.formula_line`); a task of
such forward parts only ends on a worksheet of their products (`guide_line`). The system prompt
then shows the block without example figures (`system_prompt`).
"""

from __future__ import annotations

import re

from geo_reprojection_v1.formula import formula_line, worksheet_lines
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

SYSTEM_PROMPT_MARK = "You answer coordinate conversion and geodesy questions."
"""A text both system prompts (plain and guided) contain: what marks this environment's requests to
the baseline endpoint (`piv_core.baseline.endpoint`)."""
_EXAMPLE = ", for example <answer>512345.678, 6123456.789</answer>."
_LAST_RULE = "- Only the last <answer> block of your reply is read; text outside it is ignored."
GUIDED_SYSTEM_PROMPT = SYSTEM_PROMPT.replace(_EXAMPLE, ".").replace(
    _LAST_RULE,
    f"{_LAST_RULE}\n- Work the answer out step by step in plain text before the block; that text is not graded.",
)
"""The system prompt of a guided task: the same rules, with no example figures that could be copied."""
if GUIDED_SYSTEM_PROMPT == SYSTEM_PROMPT or not (
    SYSTEM_PROMPT.startswith(SYSTEM_PROMPT_MARK) and SYSTEM_PROMPT_MARK in GUIDED_SYSTEM_PROMPT
):
    raise RuntimeError("the guided system prompt must differ from the plain one and share its opening mark")


def system_prompt(guide: bool = False) -> str:
    return GUIDED_SYSTEM_PROMPT if guide else SYSTEM_PROMPT


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


def user_prompt(problem: Problem, tolerance: float, guide: bool = False) -> str:
    """One part's text; `guide` adds the grid's formula where it has one (`formula_line`)."""
    family, grid_name, inputs = problem
    grid, tol = GRIDS[grid_name], _tolerance(tolerance)
    lines = [f"Task: {HEADLINES[family]}"]
    formula = [line] if guide and (line := formula_line(problem)) else []
    if family == REPROJECT:
        lon, lat = inputs
        lines += [
            f"From: {WGS84}",
            f"To: {_grid_line(grid)}",
            datum_line(grid),
            *formula,
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
            *formula,
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


_EACH_COORDINATE = (
    "; a grid point's easting and northing are scored so one by one, e being that coordinate's own "
    "error, and the point scores their mean"
)


def scoring_line(
    count: int, scoring: Scoring, graded: bool = False, halflife: float = 1.0, per_coordinate: bool = False
) -> str:
    """How a task of `count` parts is rewarded, as its prompt states it (a one-part task states it
    only when guided); `per_coordinate` as `grading.grade`'s."""
    by_coordinate = _EACH_COORDINATE if graded and per_coordinate else ""
    if count == 1:
        if graded:
            rule = (
                f"your reward is 1 / (1 + (e / ({_tolerance(halflife)} * t))^2), where e is your answer's "
                f"error and t the tolerance{by_coordinate}"
            )
        else:
            rule = "your reward is 1 when your answer is within the tolerance and 0 otherwise"
        return f"Scoring: {rule}. An answer block with the wrong count of numbers scores 0."
    if graded:
        each = (
            f"each part scores 1 / (1 + (e / ({_tolerance(halflife)} * t))^2), where e is the part's error "
            f"and t its tolerance{by_coordinate}"
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


ANSWER_NAMES = {
    REPROJECT: ("easting", "northing"),
    INVERSE: ("longitude", "latitude"),
    DISTANCE: ("distance",),
    BEARING: ("azimuth",),
}
"""What each number of a family's answer is, in answer order."""
GUIDE_OPENING = "How to answer: "


_COUNTS = {2: "two", 4: "four", 6: "six", 8: "eight"}


def _worksheet(problems: list[Problem]) -> str:
    """How to answer a task of forward parts with a formula only: each formula's lines to copy and
    complete (`formula.worksheet_lines`: a Web Mercator point's two products, a UTM point's product
    and sum per coordinate), then the answer line (the results are placeholders, nothing to copy).
    One part names its coordinates EASTING and NORTHING; several number them by part."""
    tags = [""] if len(problems) == 1 else [str(i) for i in range(1, len(problems) + 1)]
    products = [
        line for tag, problem in zip(tags, problems, strict=True) for line in worksheet_lines(problem, tag)
    ]
    sums = any("<sum>" in line for line in products)
    names = [f"{name}{tag}" for tag in tags for name in ("EASTING", "NORTHING")]
    if len(problems) == 1:
        put, rule = "putting your easting in place of EASTING and your northing in place of NORTHING", ""
    else:
        put = (
            f"with every name in it replaced by your {'sum' if sums else 'product'} on the line of that "
            "name, EASTING1 by the easting1 line's, and so on"
        )
        rule = "; an answer line that still holds a name scores 0"
    lines, count = "\n".join(products), _COUNTS.get(len(products), str(len(products)))
    each = " and each <sum> with the sum" if sums else ""
    return (
        f"{GUIDE_OPENING}copy the {count} lines below, replacing each <product> with the product "
        f"worked out digit by digit{each}, then end your reply with the answer line, {put} (plain "
        f"numbers{rule}, no digit grouping).\n{lines}\n<answer>{', '.join(names)}</answer>"
    )


def guide_line(problems: list[Problem]) -> str:
    """How to answer, for a guided task: working first, then the one block as its last line, with a
    capitalised name in place of each number (no figures to copy). A task of forward parts with a
    formula only gets a worksheet instead: its formulas' products to complete (`_worksheet`)."""
    if all(formula_line(p) and p.family == REPROJECT for p in problems):
        return _worksheet(problems)
    if len(problems) == 1:
        names = [name.upper() for name in ANSWER_NAMES[problems[0].family]]
        where = " and ".join(f"your {name.lower()} in place of {name}" for name in names)
        rest = ""
    else:
        names = [f"{name.upper()}{i}" for i, p in enumerate(problems, 1) for name in ANSWER_NAMES[p.family]]
        first = ANSWER_NAMES[problems[0].family][0]
        where = f"part 1's {first} in place of {first.upper()}1, and so on for every part"
        rest = " Write one block for the whole question, not one per part: only the last block is read."
    return (
        f"{GUIDE_OPENING}first work it out step by step in plain text, writing down every intermediate "
        f"number. Then finish your reply with the line below, putting {where} (plain numbers, no digit "
        f"grouping).{rest}\n<answer>{', '.join(names)}</answer>"
    )


def guided(text: str) -> bool:
    """Whether a user prompt is guided (says how to answer)."""
    return any(line.startswith(GUIDE_OPENING) for line in text.splitlines())


def task_prompt(
    parts: list[tuple[Problem, float]],
    scoring: Scoring,
    graded: bool = False,
    halflife: float = 1.0,
    guide: bool = False,
    per_coordinate: bool = False,
) -> str:
    """The user prompt of a task: `user_prompt` for one part; for several, a header and each part.

    `guide`: the prompt ends with how to answer (`guide_line`), a one-part task states its
    scoring too (after the part), and Web Mercator parts state their formula."""
    problems = [problem for problem, _ in parts]
    scored = scoring_line(len(parts), scoring, graded, halflife, per_coordinate)
    if len(parts) == 1:
        body = user_prompt(*parts[0], guide)
        return f"{body}\n{scored}\n\n{guide_line(problems)}" if guide else body
    numbers = sum(ARITY[problem.family] for problem in problems)
    blocks = [
        f"This question has {len(parts)} parts. Answer all of them in one <answer> block: the numbers of "
        f"part 1, then those of part 2, and so on, {numbers} numbers in all.\n{scored}"
    ]
    blocks += [
        f"Part {i}\n{user_prompt(problem, tolerance, guide)}"
        for i, (problem, tolerance) in enumerate(parts, 1)
    ]
    if guide:
        blocks.append(guide_line(problems))
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


_HALFLIFE = re.compile(r"^Scoring: .*? 1 / \(1 \+ \(e / \((\S+) \* t\)\)\^2\)", re.MULTILINE)


def stated_halflife(text: str) -> float | None:
    """The graded half-life (in tolerances) the prompt's scoring statement names, or None when the
    prompt states no graded scoring."""
    found = _HALFLIFE.search(text)
    return float(found.group(1)) if found else None


def stated_per_coordinate(text: str) -> bool:
    """Whether the prompt's scoring statement scores a grid point coordinate by coordinate."""
    found = stated_scoring(text)
    return found is not None and _EACH_COORDINATE in found


def read_problems(text: str) -> list[tuple[Problem, float]]:
    """Each part's problem and tolerance (`read_problem` per part); raises ValueError like it."""
    return [read_problem(part) for part in part_texts(text)]
