"""The rungs of rounded UTM points: the first-order formula their prompts state, how close it is to
PROJ, a solver that reads only the prompt, the floor of answers that skip the work, and the knobs."""

from __future__ import annotations

import asyncio
import math
import random
import re
import statistics
from decimal import Decimal

import pytest
from geo_reprojection_v1 import baselines, formula, generator, prompt, reference, utm
from geo_reprojection_v1.levels import RUNGS
from geo_reprojection_v1.problem import REPROJECT, Problem
from geo_reprojection_v1.taskset import GeoConfig, GeoTask, make_task_data
from piv_core.baseline.shortcuts import conversation_of
from piv_core.testing import score_reply
from pydantic import ValidationError

UTM_RUNGS = [
    level for level, rung in RUNGS.items() if rung.get("point_decimals") and rung["grids"] != ["webmerc"]
]


def _halflife_m(level: int) -> float:
    """The rung's half-life in metres: its tolerance times its graded half-life."""
    config = GeoConfig(level=level)
    return config.tolerance("reproject") * config.task.graded_halflife


LOOSE = [level for level in UTM_RUNGS if _halflife_m(level) == 15000.0]
"""The UTM rungs graded at a 15 km half-life, where the products are the work and the curvature
term a correction inside the half-life; the rungs above them narrow the scoring."""


def _tasks(count: int, **knobs: object) -> list[GeoTask]:
    config = GeoConfig(**knobs)
    return [GeoTask(make_task_data(config, idx), config.task) for idx in range(count)]


def _valid(task: GeoTask) -> bool:
    return asyncio.run(task.validate(None))  # type: ignore[arg-type]


def _reply(values) -> str:
    return "Working.\n<answer>" + ", ".join(repr(float(v)) for v in values) + "</answer>"


@pytest.fixture(scope="module", params=UTM_RUNGS)
def rung(request) -> list[GeoTask]:
    return _tasks(200, level=request.param, seed=11)


@pytest.fixture(scope="module", params=LOOSE)
def loose(request) -> list[GeoTask]:
    return _tasks(200, level=request.param, seed=11)


def test_the_utm_rungs_sit_between_the_web_mercator_points_and_the_mixed_parts_one_knob_apart():
    first, last = UTM_RUNGS[0], UTM_RUNGS[-1]
    assert UTM_RUNGS == list(range(first, last + 1))
    assert RUNGS[first - 1]["grids"] == ["webmerc"] and len(RUNGS[last + 1]["families"]) == 2
    config = GeoConfig(level=first)
    assert config.grids == list(utm.FORMULA_GRIDS) == ["utm10n", "utm33n"] and config.point_decimals == 1
    assert config.guide and config.task.graded_per_coordinate and config.task.graded_halflife == 15.0
    assert config.tolerance("reproject") == 1000.0 and config.parts_per_task == 1
    for lower, upper in zip(UTM_RUNGS, UTM_RUNGS[1:], strict=False):
        changed = {knob for knob in RUNGS[upper] if RUNGS[upper][knob] != RUNGS[lower].get(knob)}
        assert len(changed) == 1 and RUNGS[upper].keys() == RUNGS[lower].keys(), (lower, upper, changed)
    assert [RUNGS[level]["point_decimals"] for level in UTM_RUNGS] == [1] + [2] * (len(UTM_RUNGS) - 1)
    halflives = [_halflife_m(level) for level in UTM_RUNGS]
    assert halflives == sorted(halflives, reverse=True) and halflives[-1] < 1000.0 < halflives[0]


def test_the_formula_is_within_its_stated_bound_of_proj_at_every_rounded_point():
    worst = 0.0
    for grid in utm.FORMULA_GRIDS:
        meridian = utm.central_meridian(grid)
        for lat in (0.5, 10.0, 33.3, 60.0, 80.0):  # μ is PROJ's northing on the central meridian over C
            northing = reference.forward(grid, meridian, lat)[1]
            assert utm.arc(lat) * utm.PER_DEGREE_M == pytest.approx(northing, abs=1e-3)
        for offset, mu in _rounded_numbers():
            problem = Problem(REPROJECT, grid, utm.point(grid, offset, mu))
            found = utm.numbers(problem)
            assert found is not None and (found.offset, found.mu) == (offset, mu)
            worked, key = formula.formula_answer(problem), reference.solve(problem)
            worst = max(worst, math.hypot(worked[0] - key[0], worked[1] - key[1]))
    assert 100.0 < worst <= utm.FORMULA_BOUND_M == 200.0, worst


def _rounded_numbers():
    """Every (d, μ) of tenths, and of hundredths every d with every 40th μ and the band's ends."""
    for decimals in utm.DECIMALS:
        arcs = utm.ARCS[decimals]
        if decimals > 1:
            arcs = sorted({*arcs[::40], arcs[0], arcs[-1]})
        for offset in utm.OFFSETS[decimals]:
            for mu in arcs:
                yield offset, mu
                yield -offset, mu


def test_a_utm_point_drawn_anywhere_states_no_formula():
    rng = random.Random(5)
    for grid in utm.FORMULA_GRIDS:
        assert not any(utm.numbers(Problem(REPROJECT, grid, generator.point(rng, grid))) for _ in range(3000))
    for task in _tasks(60, level=max(UTM_RUNGS) + 1):
        for part, text in zip(task.data.parts, prompt.part_texts(task.data.prompt), strict=True):
            assert ("Formula: " in text) == (part.grid == "webmerc"), task.data.id


_WORKSHEET = re.compile(
    r"^easting(\d*) = (\S+) \+ (\S+) × (\S+) = \2 \+ <product> = <sum>\n"
    r"northing\1 = (\S+) × (\S+) \+ (\S+) = <product> \+ \7 = <sum>$",
    re.MULTILINE,
)


def _solve_from_the_prompt(text: str) -> list[Decimal]:
    """What a solver that reads only the prompt's worksheet and does its arithmetic answers: each
    point's easting and northing, in the worksheet's order."""
    values = []
    for found in _WORKSHEET.finditer(text):
        false_easting, per_degree, offset, meridian, mu, curvature = map(Decimal, found.groups()[1:])
        values += [false_easting + per_degree * offset, meridian * mu + curvature]
    return values


def test_a_solver_reading_only_the_prompt_works_the_worksheet_to_within_the_bound(rung):
    # The formula is within 200 m of PROJ, so worked exactly it earns at least what a 200 m error does.
    (halflife,) = {_halflife_m(task.data.level) for task in rung}
    floor, rewards = 1 / (1 + (200.0 / halflife) ** 2), []
    for task in rung:
        text, parts = task.data.prompt, task.data.parts
        assert text.count("within 200 m of the exact point") == text.count("Formula: ") == len(parts)
        values = _solve_from_the_prompt(text)
        assert len(values) == 2 * len(parts), task.data.id
        for part, easting, northing in zip(parts, values[::2], values[1::2], strict=True):
            key = part.key
            assert math.hypot(float(easting) - key[0], float(northing) - key[1]) <= 200.0, task.data.id
        rewards.append(score_reply(task, _reply(values)).reward)
        assert rewards[-1] >= floor, task.data.id
        assert _valid(task), task.data.id
    assert statistics.mean(rewards) > 0.99


def test_each_rung_draws_its_decimals_over_the_whole_band_on_both_zones(rung):
    (decimals,) = {RUNGS[task.data.level]["point_decimals"] for task in rung}
    problems = [Problem(REPROJECT, p.grid, tuple(p.inputs)) for t in rung for p in t.data.parts]
    found = [utm.numbers(problem) for problem in problems]
    assert all(found) and {problem.grid for problem in problems} == set(utm.FORMULA_GRIDS)
    offsets, arcs = {abs(f.offset) for f in found}, {f.mu for f in found}
    assert offsets <= set(utm.OFFSETS[decimals]) and min(offsets) < 1.6 and max(offsets) > 2.8
    assert arcs <= set(utm.ARCS[decimals]) and min(arcs) < 5 and max(arcs) > 55
    assert {f.offset > 0 for f in found} == {True, False}


def _numbers(task: GeoTask) -> tuple[float, ...]:
    found = utm.numbers(Problem(REPROJECT, task.data.grid, tuple(task.data.inputs)))
    lon, lat = task.data.inputs
    easting, northing = task.data.key
    return (*found, utm.PER_DEGREE_M, lon, lat, easting, northing)


EASTINGS = {
    "zero": lambda d, mu, e, h, c, lon, lat, x, y: 0.0,
    "longitude": lambda d, mu, e, h, c, lon, lat, x, y: lon,
    "latitude": lambda d, mu, e, h, c, lon, lat, x, y: lat,
    "false easting alone": lambda d, mu, e, h, c, lon, lat, x, y: 500000.0,
    "500000 + d": lambda d, mu, e, h, c, lon, lat, x, y: 500000 + d,
    "500000 + E": lambda d, mu, e, h, c, lon, lat, x, y: 500000 + e,
    "500000 + E + d": lambda d, mu, e, h, c, lon, lat, x, y: 500000 + e + d,
    "E × d without 500000": lambda d, mu, e, h, c, lon, lat, x, y: e * d,
    "500000 − E × d": lambda d, mu, e, h, c, lon, lat, x, y: 500000 - e * d,
    "E": lambda d, mu, e, h, c, lon, lat, x, y: e,
    "the northing": lambda d, mu, e, h, c, lon, lat, x, y: y,
}
"""Eastings that skip the product E × d, or misplace it."""
NORTHINGS = {
    "zero": lambda d, mu, e, h, c, lon, lat, x, y: 0.0,
    "latitude": lambda d, mu, e, h, c, lon, lat, x, y: lat,
    "C": lambda d, mu, e, h, c, lon, lat, x, y: c,
    "μ + h": lambda d, mu, e, h, c, lon, lat, x, y: mu + h,
    "C + μ + h": lambda d, mu, e, h, c, lon, lat, x, y: c + mu + h,
    "C + h": lambda d, mu, e, h, c, lon, lat, x, y: c + h,
    "h": lambda d, mu, e, h, c, lon, lat, x, y: h,
    "500000": lambda d, mu, e, h, c, lon, lat, x, y: 500000.0,
    "the easting": lambda d, mu, e, h, c, lon, lat, x, y: x,
}
"""Northings that skip the product C × μ."""


def _mean(tasks: list[GeoTask], easting, northing) -> float:
    return statistics.mean(
        score_reply(task, _reply((easting(*_numbers(task)), northing(*_numbers(task))))).reward
        for task in tasks
    )


def test_no_answer_that_skips_both_products_earns_more_than_three_hundredths(rung):
    floor = {(a, b): _mean(rung, EASTINGS[a], NORTHINGS[b]) for a in EASTINGS for b in NORTHINGS}
    assert max(floor.values()) < 0.03, max(floor.items(), key=lambda item: item[1])


def test_each_product_earns_its_half_and_the_curvature_term_a_small_part(loose):
    def right(d, mu, e, h, c, lon, lat, x, y):
        return x

    def north(d, mu, e, h, c, lon, lat, x, y):
        return y

    # One right coordinate earns half, whatever the other skips.
    for name, easting in EASTINGS.items():
        assert 0.5 <= _mean(loose, easting, north) < 0.515, name
    for name, northing in NORTHINGS.items():
        assert 0.5 <= _mean(loose, right, northing) < 0.515, name
    # The formula worked without its curvature term h (at most 4.1 km) is a near-right answer: the
    # term is a correction inside the 15 km half-life, not the work; the products are.
    without_h = _mean(loose, lambda d, mu, e, h, c, *_: 500000 + e * d, lambda d, mu, e, h, c, *_: c * mu)
    assert 0.95 < without_h < 1.0, without_h
    rough = {
        error: _mean(
            loose,
            lambda d, mu, e, h, c, *_, r=error: 500000 + e * d * (1 + r),
            lambda d, mu, e, h, c, *_, r=error: c * mu * (1 + r) + h,
        )
        for error in (0.001, 0.01, 0.05)
    }
    # Products right to 0.1 %, 1 % and 5 % (a northing of up to 6.6 Mm is 66 km out at 1 %).
    assert rough[0.001] > 0.95 and rough[0.01] > 0.6 and rough[0.05] > 0.3, rough


def test_each_narrower_rung_pays_less_for_rough_products_and_the_formula_worked_exactly_nearly_all():
    # Products 0.1 % out (up to 6.6 km on a northing) and the curvature term left out (up to 4.1 km)
    # earn less at each rung that narrows the half-life; the formula worked exactly keeps over 0.99.
    exact = (lambda d, mu, e, h, c, *_: 500000 + e * d, lambda d, mu, e, h, c, *_: c * mu + h)
    rough = (lambda d, mu, e, h, c, *_: 500000 + e * d * 1.001, lambda d, mu, e, h, c, *_: c * mu * 1.001 + h)
    without_h = (exact[0], lambda d, mu, e, h, c, *_: c * mu)
    previous = None
    for level in LOOSE[-1:] + [level for level in UTM_RUNGS if level not in LOOSE]:
        tasks = _tasks(100, level=level, seed=11)
        assert _mean(tasks, *exact) > 0.99, level
        now = (_mean(tasks, *rough), _mean(tasks, *without_h))
        if previous is not None:
            assert now[0] < previous[0] and now[1] < previous[1], (level, now, previous)
        previous = now
    # At the narrowest, products 0.1 % out keep under half, and so does a northing without h.
    assert previous[0] < 0.5 and previous[1] < 0.6, previous


def test_validate_rejects_a_tampered_utm_formula_or_worksheet(rung):
    for task in rung[:6]:
        data = task.data
        found = utm.numbers(Problem(REPROJECT, data.grid, tuple(data.inputs)))
        h = formula.stated_factor(found.curvature)
        line = next(line for line in data.prompt.splitlines() if line.startswith("Formula: "))
        for update in (
            data.prompt.replace(line + "\n", ""),
            data.prompt.replace("within 200 m of the exact point", "within 20 m of the exact point"),
            data.prompt.replace(f"+ {h}.", f"+ {h}1."),
            data.prompt.replace(f"+ {h} = <product>", f"+ {h}1 = <product>"),
            data.prompt.replace("= <sum>", "= <product>", 1),
            data.prompt.replace("easting = 500000 +", "easting = 400000 +"),
            data.prompt.replace("110574.275822", "110574.275823"),
        ):
            assert update != data.prompt
            assert not _valid(GeoTask(data.model_copy(update={"prompt": update}), task.config)), update


def test_the_noisy_solver_falls_with_p_and_the_oracle_scores_one(rung):
    means = [
        statistics.mean(
            score_reply(
                t, baselines.noisy(conversation_of(t.data), p, random.Random(f"{t.data.id}:{p}"))
            ).reward
            for t in rung[:100]
        )
        for p in (0.0, 0.25, 0.5, 0.75, 1.0)
    ]
    assert means[0] == 1.0 and means[-1] < 0.05 and all(a > b for a, b in zip(means, means[1:], strict=False))


@pytest.mark.parametrize(
    ("knobs", "named"),
    [
        ({"point_decimals": 1, "families": ["reproject"], "grids": ["utm56s"]}, "point_decimals draws"),
        (
            {"point_decimals": 1, "families": ["reproject"], "grids": ["webmerc", "utm33n"]},
            "point_decimals draws",
        ),
        (
            {"point_decimals": 1, "families": ["reproject", "inverse"], "grids": ["utm33n"]},
            "point_decimals draws",
        ),
        (
            {"point_decimals": 0, "families": ["reproject"], "grids": ["utm10n"]},
            "point_decimals 0 on a UTM zone",
        ),
        (
            {"point_decimals": 1, "families": ["reproject"], "grids": ["utm33n"], "point_max": 9},
            "point_max 9",
        ),
        (
            {"point_decimals": 2, "families": ["reproject"], "grids": ["webmerc"]},
            "point_decimals 2 on Web Mercator",
        ),
        ({"point_decimals": 3, "families": ["reproject"], "grids": ["utm10n"]}, r"one of \[0, 1, 2\]"),
        ({"level": 5, "point_max": 9}, "point_max 9 bounds Web Mercator rounded points only"),
        ({"level": 5, "point_decimals": 0}, "point_decimals was given"),
        ({"level": 5, "grids": ["webmerc"]}, "grids"),
    ],
)
def test_the_utm_rounding_fails_at_load_naming_the_knob(knobs, named):
    with pytest.raises(ValidationError, match=named):
        GeoConfig(**knobs)


@pytest.mark.parametrize("guide", [False, True])
@pytest.mark.parametrize("decimals", utm.DECIMALS)
def test_point_decimals_alone_draws_rounded_utm_points(guide, decimals):
    config = GeoConfig(point_decimals=decimals, families=["reproject"], grids=["utm33n"], guide=guide, seed=2)
    for idx in range(30):
        data = make_task_data(config, idx)
        found = utm.numbers(Problem(REPROJECT, "utm33n", tuple(data.inputs)))
        assert found is not None and round(found.mu, decimals) == found.mu != round(found.mu, decimals - 1)
        assert ("Formula: " in data.prompt) == guide and ("<sum>" in data.prompt) == guide
