"""The guided low rungs: how to answer, the Web Mercator formula, graded scoring, and the floor."""

from __future__ import annotations

import asyncio
import math
import statistics

import pytest
from geo_reprojection_v1 import baselines, formula, prompt
from geo_reprojection_v1.grids import GRIDS
from geo_reprojection_v1.levels import RUNGS
from geo_reprojection_v1.problem import INVERSE, REPROJECT, Problem
from geo_reprojection_v1.reference import solve
from geo_reprojection_v1.taskset import GeoConfig, GeoData, GeoTask, GeoTaskConfig, make_task_data
from piv_core.policy import Conversation
from piv_core.testing import score_reply
from pydantic import ValidationError

GUIDED = [level for level, rung in RUNGS.items() if rung.get("guide")]
MIXED = min(level for level, rung in RUNGS.items() if len(rung["families"]) > 1)
"""The guided rung of forward and inverse parts on every WGS 84 grid."""
UNGUIDED = min(set(RUNGS) - set(GUIDED))


def _tasks(count: int, **knobs: object) -> list[GeoTask]:
    config = GeoConfig(**knobs)
    return [GeoTask(make_task_data(config, idx), config.task) for idx in range(count)]


def _valid(task: GeoTask) -> bool:
    return asyncio.run(task.validate(None))  # type: ignore[arg-type]


def _reply(values: list[float]) -> str:
    return "Working.\n<answer>" + ", ".join(repr(float(v)) for v in values) + "</answer>"


def _mean(tasks: list[GeoTask], answer) -> float:
    return statistics.mean(
        score_reply(task, _reply([v for part in task.data.parts for v in answer(part)])).reward
        for task in tasks
    )


def test_the_low_rungs_are_guided_and_graded_and_the_top_is_not():
    assert GUIDED and GUIDED == list(range(1, len(GUIDED) + 1))
    top = RUNGS[max(RUNGS)]
    assert "guide" not in top and "graded" not in top and "graded_halflife" not in top
    for level in GUIDED:
        config = GeoConfig(level=level)
        assert (
            config.guide
            and config.task.graded
            and config.task.graded_halflife == RUNGS[level]["graded_halflife"]
        )


def test_guide_off_is_the_prompt_as_it_was():
    for knobs in ({}, {"parts_per_task": 3}, {"level": UNGUIDED}):
        data = make_task_data(GeoConfig(**knobs), 2)
        assert data.system_prompt == prompt.SYSTEM_PROMPT and not prompt.guided(data.prompt)
        assert "Formula:" not in data.prompt and "How to answer" not in data.prompt


@pytest.mark.parametrize("parts", [1, 3])
def test_a_guided_prompt_says_how_to_answer_and_shows_no_figures(parts):
    for task in _tasks(
        10,
        families=["reproject", "inverse"],
        grids=["webmerc", "utm33n"],
        parts_per_task=parts,
        guide=True,
        seed=4,
    ):
        data = task.data
        assert data.system_prompt == prompt.GUIDED_SYSTEM_PROMPT and "512345" not in data.system_prompt
        assert "plain text" in data.system_prompt and prompt.guided(data.prompt)
        last = data.prompt.split("\n\n")[-1]
        worksheet = all(part.family == "reproject" and part.grid == "webmerc" for part in data.parts)
        assert last.startswith(prompt.GUIDE_OPENING)
        assert "<product>" in last if worksheet else "step by step" in last, last
        assert last.splitlines()[-1].startswith("<answer>") and data.prompt.endswith("</answer>")
        block = last[last.index("<answer>") : last.index("</answer>")]
        assert not any(ch.isdigit() for ch in block.replace("1", "").replace("2", "").replace("3", ""))
        assert prompt.stated_scoring(data.prompt) is not None
        for part, text in zip(data.parts, prompt.part_texts(data.prompt), strict=True):
            assert ("Formula: " in text) == (part.grid == "webmerc")
        assert _valid(task), data.id


def test_the_stated_formula_agrees_with_proj_to_six_centimetres():
    worst = 0.0
    for lon in range(-165, 166, 15):
        for lat in range(-70, 71, 7):
            for lon_off, lat_off in ((0.0, 0.0), (0.123456, -0.654321)):
                point = (lon + lon_off, lat + lat_off)
                problem = Problem(REPROJECT, "webmerc", point)
                key = solve(problem)
                worked = formula.formula_answer(problem)
                worst = max(worst, math.hypot(worked[0] - key[0], worked[1] - key[1]))
                back = Problem(INVERSE, "webmerc", tuple(round(v, 3) for v in key))
                lon_lat = formula.formula_answer(back)
                assert lon_lat == pytest.approx(solve(back), abs=1e-8)
    assert worst < 0.06  # the Mercator latitude is stated to six decimals, as the inputs are


def test_validate_rejects_a_tampered_guide_formula_or_system_prompt():
    for task in _tasks(4, level=MIXED, seed=5):
        data = task.data
        assert _valid(task)
        line = formula.formula_line(Problem(REPROJECT, "webmerc", (1.0, 2.0)))
        for update in (
            {"system_prompt": prompt.SYSTEM_PROMPT},
            {"prompt": data.prompt.replace("step by step", "quickly")},
            {"prompt": data.prompt.replace(prompt.GUIDE_OPENING, "Answer: ")},
            {"prompt": data.prompt.replace("6378137 × ln", "6371000 × ln")},
            {"prompt": data.prompt.replace("(45° + latitude / 2)) = ", "(45° + latitude / 2)) = 1")},
            {"prompt": data.prompt.replace("EASTING1, NORTHING1", "NORTHING1, EASTING1")},
            {"prompt": data.prompt.replace("Datum shift: none;", f"{line}\nDatum shift: none;", 1)},
        ):
            if update.get("prompt") == data.prompt:
                continue
            assert not _valid(GeoTask(data.model_copy(update=update), task.config)), update


def test_a_level_that_sets_the_task_knobs_refuses_other_values_naming_them():
    halflife = RUNGS[1]["graded_halflife"]
    with pytest.raises(ValidationError, match="task.graded"):
        GeoConfig(level=1, task=GeoTaskConfig(graded=False))
    with pytest.raises(ValidationError, match="task.graded_halflife"):
        GeoConfig(level=1, task=GeoTaskConfig(graded_halflife=halflife + 1))
    with pytest.raises(ValidationError, match="guide"):
        GeoConfig(level=1, guide=False)
    same = GeoConfig(level=1, guide=True, task=GeoTaskConfig(graded=True, graded_halflife=halflife))
    assert same.task == GeoConfig(level=1).task
    again = GeoConfig.model_validate(GeoConfig(level=1).model_dump())
    assert again.task == GeoConfig(level=1).task and again.guide
    # A rung that does not list the task knobs leaves them as given.
    assert GeoConfig(level=UNGUIDED, task=GeoTaskConfig(graded=True)).task.graded


ROUNDED = [
    level
    for level, rung in RUNGS.items()
    if rung.get("point_decimals") is not None and rung["grids"] == ["webmerc"]
]
"""The rungs of rounded Web Mercator points, each part's formula a worksheet of two products (the
rung of rounded UTM points has its own tests, `test_utm`)."""


@pytest.fixture(scope="module", params=ROUNDED)
def rounded(request) -> list[GeoTask]:
    return _tasks(200 // RUNGS[request.param]["parts_per_task"], level=request.param, seed=11)


def test_at_the_rounded_rungs_no_degenerate_answer_earns_more_than_a_rough_honest_one(rounded):
    def rough(part, error):
        lon, lat = part.inputs
        return formula.formula_answer(Problem(REPROJECT, part.grid, (lon, lat)))[0] * (1 + error), part.key[
            1
        ] * (1 + error)

    degenerate = {
        "zero": lambda part: (0.0, 0.0),
        "echo": lambda part: tuple(part.inputs),
        "example": lambda part: (512345.678, 6123456.789),
        "swapped": lambda part: (part.key[1], part.key[0]),
        "lat_lon_swapped": lambda part: tuple(reversed(part.inputs)),
        "stated_factors": lambda part: (part.inputs[0], formula.mercator_latitude(part.inputs[1])),
        "stated_constant": lambda part: (formula.PER_DEGREE_M, formula.PER_DEGREE_M),
    }
    # Swapped coordinates are the right answer where a point's two numbers are equal (one part in
    # sixteen at single digits): judged where they differ.
    differ = [
        task
        for task in rounded
        if all(part.inputs[0] != formula.mercator_latitude(part.inputs[1]) for part in task.data.parts)
    ]
    floor = {
        name: _mean(differ if name == "swapped" else rounded, answer) for name, answer in degenerate.items()
    }
    # Every coordinate is 111319.490793 times a number of 2 to 19.9: an honest product right to
    # three or four figures earns most of the reward, a wrong multiplier (111 km off or more) little.
    honest = {error: _mean(rounded, lambda part, e=error: rough(part, e)) for error in (0.001, 0.005, 0.01)}
    assert max(floor.values()) < 0.03, floor
    assert honest[0.001] > 0.8 and honest[0.005] > 0.3 and honest[0.01] > 0.1, honest
    assert min(honest.values()) > 3 * max(floor.values()), (honest, floor)


def test_at_the_rounded_rungs_each_coordinate_earns_its_share(rounded):
    for task in rounded[:50]:
        keys = [value for part in task.data.parts for value in part.key]
        share = 1 / len(keys)
        for wrong in range(len(keys)):
            answer = [value + 3e6 * (i == wrong) for i, value in enumerate(keys)]
            reward = score_reply(task, _reply(answer)).reward
            assert reward == pytest.approx(1 - share, abs=0.001), (task.data.id, wrong)
        assert score_reply(task, _reply(keys)).reward == pytest.approx(1.0)
        assert score_reply(task, _reply([v + 3e6 for v in keys])).reward == pytest.approx(0.0, abs=0.001)


def test_the_rounded_rungs_multiply_by_the_rungs_numbers_only(rounded):
    (level,) = {task.data.level for task in rounded}
    places, largest = RUNGS[level]["point_decimals"], RUNGS[level]["point_max"]
    sizes = set()
    for task in rounded:
        worksheet = task.data.prompt.split("How to answer: ")[1]
        tags = [""] if len(task.data.parts) == 1 else [str(i) for i in range(1, len(task.data.parts) + 1)]
        for tag, part in zip(tags, task.data.parts, strict=True):
            lon, lat = part.inputs
            mercator = formula.mercator_latitude(lat)
            for value in (lon, mercator):
                assert round(value, places) == value and (round(value) == value) == (places == 0), (
                    task.data.id
                )
            sizes |= {abs(lon), abs(mercator)}
            assert f"easting{tag} = 111319.490793 × {formula.stated_factor(lon)} = <product>" in worksheet
            assert (
                f"northing{tag} = 111319.490793 × {formula.stated_factor(mercator)} = <product>" in worksheet
            )
    if places == 0:
        assert sizes == set(range(2, largest + 1))
    else:
        assert min(sizes) < 3 and largest < max(sizes) < largest + 1 and len(sizes) > 100


def test_graded_rungs_score_the_oracle_one_and_noisy_wrong_parts_at_most_a_fifth():
    import random

    for level in GUIDED:
        for task in _tasks(20, level=level, seed=6):
            data: GeoData = task.data
            conversation = Conversation(
                [{"role": "system", "content": data.system_prompt}, {"role": "user", "content": data.prompt}],
                [],
            )
            assert score_reply(task, baselines.oracle(conversation)).reward == 1.0
            wrong = score_reply(task, baselines.noisy(conversation, 1.0, random.Random(data.id)))
            assert wrong.metrics["answered"] == 1.0 and wrong.reward <= 0.2, data.id
    assert set(GRIDS) >= {"webmerc"}


def test_the_baseline_endpoint_knows_the_guided_system_prompt_as_this_environments():
    from piv_core import plugins

    mark = plugins.load("geo-reprojection-v1").mark
    assert mark == prompt.SYSTEM_PROMPT_MARK
    assert mark in prompt.SYSTEM_PROMPT and mark in prompt.GUIDED_SYSTEM_PROMPT


@pytest.mark.parametrize(
    ("knobs", "named"),
    [
        (
            {"point_decimals": 0},
            "point_decimals draws Web Mercator or northern WGS 84 UTM forward points only",
        ),
        ({"point_decimals": 1, "families": ["reproject"], "grids": ["utm56s"]}, "point_decimals draws"),
        (
            {"point_decimals": 2, "families": ["reproject"], "grids": ["webmerc"]},
            "point_decimals must be one of",
        ),
        ({"point_decimals": True, "families": ["reproject"], "grids": ["webmerc"]}, "point_decimals"),
        ({"task": {"graded_per_coordinate": True}}, "graded_per_coordinate needs graded"),
        ({"level": 1, "point_decimals": 1}, "point_decimals was given"),
        ({"level": 3, "point_decimals": 0}, "point_decimals was given"),
        ({"level": 1, "point_max": 19}, "point_max was given"),
        ({"level": 2, "point_max": 9}, "point_max was given"),
        ({"point_max": 9}, "point_max 9 bounds rounded points only"),
        (
            {"point_decimals": 0, "families": ["reproject"], "grids": ["webmerc"], "point_max": 12},
            "point_max must be",
        ),
        ({"level": MIXED, "point_max": 9}, "point_max 9 bounds rounded points only"),
        (
            {"level": 1, "task": {"graded": True, "graded_per_coordinate": False}},
            "task.graded_per_coordinate",
        ),
    ],
)
def test_the_rung_one_knobs_fail_at_load_naming_themselves(knobs, named):
    with pytest.raises(ValidationError, match=named):
        GeoConfig(**knobs)


@pytest.mark.parametrize("largest", [9, 19])
@pytest.mark.parametrize("decimals", [0, 1])
def test_point_decimals_alone_draws_rounded_points_on_web_mercator(decimals, largest):
    config = GeoConfig(point_decimals=decimals, point_max=largest, families=["reproject"], grids=["webmerc"])
    dumped = {**config.model_dump(), "point_decimals": str(decimals), "point_max": str(largest)}
    assert GeoConfig.model_validate(dumped) == config
    for idx in range(30):
        lon, lat = make_task_data(config, idx).inputs
        for value in (lon, formula.mercator_latitude(lat)):
            assert 2 <= abs(value) < largest + 1 and round(value, decimals) == value, (idx, value)
            assert (round(value) == value) == (decimals == 0), (idx, value)
