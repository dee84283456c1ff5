"""Reading a reply and measuring its physical error against the key.

The parser: the last ``<answer>`` block (fence tolerated) is split on commas and whitespace;
every piece must be a plain ASCII decimal or scientific-notation number and there must be
exactly as many as the family asks for, else the reply is unparseable (reward 0,
``answered`` 0). Because commas separate numbers, digit grouping such as ``3,941,601.087``
is unparseable, not merely wrong. The split is a string operation and each piece is matched
on its own, so reading takes time linear in the reply; a reply is parsed once however many
rewards and metrics read it.

The error is metres for ``reproject`` (straight line in the grid), ``inverse`` (geodesic on
WGS 84) and ``distance``; degrees around the circle for ``bearing``. It is always finite: an
answer PROJ cannot evaluate (a latitude off the ellipsoid, an overflowing literal) and any
larger error read as the sentinel, half the meridian (20003931.5 m) or 180 degrees, which
never passes. Grading never raises.
"""

from __future__ import annotations

import math
import re
import sys
from typing import NamedTuple

from piv_core import last_answer_block
from piv_core.parsing.answer import parsed_once

from geo_reprojection_v1.problem import ARITY, BEARING, DISTANCE, INVERSE, REPROJECT
from geo_reprojection_v1.reference import geodesic_distance

SENTINEL_M = 20003931.5
"""Half the WGS 84 meridian in metres: the error of an answer that cannot be evaluated."""
SENTINEL_DEG = 180.0
"""The largest circular error in degrees, used likewise for bearings."""

_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
"""One piece of a block body: a plain ASCII decimal or scientific-notation number."""


class Grade(NamedTuple):
    within_tolerance: float
    error: float
    error_ratio: float
    answered: float

    @property
    def metrics(self) -> dict[str, float]:
        return {"error": self.error, "error_ratio": self.error_ratio, "answered": self.answered}


UNANSWERED = Grade(0.0, -1.0, -1.0, 0.0)


@parsed_once
def parse_numbers(reply: str | None, count: int) -> tuple[float, ...] | None:
    """The `count` numbers of the reply's last answer block, or None when it is unparseable.

    Commas and whitespace (``str.isspace``, as the pattern class ``\\s`` has it) separate the
    pieces; at most `count` splits are made, so a body of many numbers is never split into a
    list of them all.
    """
    body = last_answer_block(reply)
    if body is None:
        return None
    pieces = body.replace(",", " ").split(maxsplit=count)
    if len(pieces) != count or not all(_NUMBER.fullmatch(piece) for piece in pieces):
        return None
    return tuple(map(float, pieces))


def sentinel(family: str) -> float:
    return SENTINEL_DEG if family == BEARING else SENTINEL_M


def error(family: str, answer: tuple[float, ...], key: tuple[float, ...]) -> float:
    """The physical error of `answer` against `key`, at most the family's sentinel."""
    if family == REPROJECT:
        value = math.hypot(answer[0] - key[0], answer[1] - key[1])
    elif family == INVERSE:
        lon, lat = answer
        value = geodesic_distance(lon, lat, *key) if math.isfinite(lon) and -90.0 <= lat <= 90.0 else math.inf
    elif family == DISTANCE:
        value = abs(answer[0] - key[0])
    elif family == BEARING:
        turn = (answer[0] - key[0]) % 360.0 if math.isfinite(answer[0]) else math.inf
        value = min(turn, 360.0 - turn)
    else:
        raise ValueError(f"unknown family {family!r}")
    cap = sentinel(family)
    return value if math.isfinite(value) and value < cap else cap


def grade(
    reply: str | None,
    family: str,
    key: tuple[float, ...] | list[float],
    tolerance: float,
    graded: bool = False,
    halflife: float = 1.0,
    per_coordinate: bool = False,
) -> Grade:
    """Score `reply`: pass/fail at `tolerance`; `graded`: 1 / (1 + (error / (tolerance * halflife))^2);
    `per_coordinate` (graded only): a ``reproject`` answer's easting and northing are each scored
    so, on that coordinate's own error, and the answer scores their mean."""
    answer = parse_numbers(reply, ARITY[family])
    if answer is None:
        return UNANSWERED
    return grade_answer(answer, family, key, tolerance, graded, halflife, per_coordinate)


def _decay(err: float, scale: float) -> float:
    scaled = err / scale
    return 1.0 / (1.0 + scaled * scaled)


def grade_answer(
    answer: tuple[float, ...],
    family: str,
    key: tuple[float, ...] | list[float],
    tolerance: float,
    graded: bool = False,
    halflife: float = 1.0,
    per_coordinate: bool = False,
) -> Grade:
    """Score the parsed numbers of one answer (see `grade`)."""
    err = error(family, answer, tuple(key))
    ratio = err / tolerance
    if not math.isfinite(ratio):
        ratio = sys.float_info.max
    if graded:
        scale = tolerance * halflife
        if not passable(family, err):
            reward = 0.0
        elif per_coordinate and family == REPROJECT:
            reward = sum(_decay(abs(a - k), scale) for a, k in zip(answer, key, strict=True)) / 2.0
        else:
            reward = _decay(err, scale)
    else:
        reward = float(passes(family, err, tolerance))
    return Grade(reward, err, ratio, 1.0)


def passable(family: str, err: float) -> bool:
    """Whether an error is a measured one rather than the sentinel of an unevaluable answer."""
    return err < sentinel(family)


def passes(family: str, err: float, tolerance: float) -> bool:
    """Whether an error is within `tolerance` (the sentinel never is)."""
    return passable(family, err) and err <= tolerance
