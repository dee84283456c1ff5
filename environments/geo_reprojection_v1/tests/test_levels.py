"""The difficulty ladder and its knobs: every rung is valid, graded as its prompt says, and solvable."""

from __future__ import annotations

import asyncio
import pathlib

import pytest
from geo_reprojection_v1 import baselines, prompt
from geo_reprojection_v1.grids import GRIDS
from geo_reprojection_v1.levels import RUNGS, TASK_KNOBS
from geo_reprojection_v1.problem import ARITY, FAMILIES
from geo_reprojection_v1.taskset import GeoConfig, GeoData, GeoTask, GeoTaskConfig, make_task_data
from piv_core.policy import Conversation
from piv_core.tasksets.ladder import rung_table
from piv_core.testing import score_reply
from pydantic import ValidationError

LEVELS = sorted(RUNGS)
UNGUIDED = min(level for level, rung in RUNGS.items() if not rung.get("guide"))
"""The first rung that is neither guided nor graded: pass/fail per part."""
README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def _conversation(data: GeoData) -> Conversation:
    messages = [{"role": "system", "content": data.system_prompt}, {"role": "user", "content": data.prompt}]
    return Conversation(messages, [])


def _valid(task: GeoTask) -> bool:
    return asyncio.run(task.validate(None))  # type: ignore[arg-type]


def _tasks(level: int, count: int, seed: int = 3, **task_config: object) -> list[GeoTask]:
    config = GeoConfig(level=level, seed=seed, task=GeoTaskConfig(**task_config))
    return [GeoTask(make_task_data(config, idx), config.task) for idx in range(count)]


def test_the_ladder_has_four_rungs_or_more_numbered_from_one_and_each_passes_the_knob_checks():
    assert len(RUNGS) >= 4 and LEVELS == list(range(1, len(RUNGS) + 1))
    for level, rung in RUNGS.items():
        knobs = {name: value for name, value in rung.items() if name not in TASK_KNOBS}
        task = {name: value for name, value in rung.items() if name in TASK_KNOBS}
        config = GeoConfig(**knobs, task=GeoTaskConfig(**task))
        assert {name: getattr(config, name) for name in knobs} == knobs
        leveled = GeoConfig(level=level)
        assert {name: getattr(leveled, name) for name in knobs} == knobs
        assert {name: getattr(leveled.task, name) for name in task} == task


def test_rungs_only_ever_widen_the_mix_and_tighten_the_tolerance():
    # The rounded-point rungs each keep to the grids of one formula (Web Mercator's, then UTM's); every
    # rung above them draws from every grid of the rungs below it.
    for lower, upper in zip(LEVELS, LEVELS[1:], strict=False):
        low, high = RUNGS[lower], RUNGS[upper]
        assert set(low["families"]) <= set(high["families"])
        assert high["tolerance_scale"] <= low["tolerance_scale"]
        if "point_decimals" not in high:
            below = {grid for level in LEVELS if level <= lower for grid in RUNGS[level]["grids"]}
            assert below <= set(high["grids"]), (lower, upper)
    top = RUNGS[LEVELS[-1]]
    assert set(top["families"]) == set(FAMILIES) and set(top["grids"]) == set(GRIDS)
    assert top["tolerance_scale"] < 1.0 and top["parts_per_task"] > 1 and top["scoring"] == "all"
    bottom = RUNGS[LEVELS[0]]
    assert len(bottom["families"]) == 1 and len(bottom["grids"]) == 1 and bottom["scoring"] == "fraction"


@pytest.mark.parametrize("level", LEVELS)
def test_oracle_scores_one_and_validate_passes_at_every_level(level):
    for seed in (3, 20260826):
        for task in _tasks(level, 25, seed):
            assert _valid(task), task.data.id
            scored = score_reply(task, baselines.oracle(_conversation(task.data)))
            assert scored.reward == 1.0, task.data.id
            assert all(scored.metrics[f"pass_{f}"] == scored.metrics[f"has_{f}"] for f in FAMILIES)


@pytest.mark.parametrize("level", LEVELS)
def test_the_prompt_states_every_part_its_tolerance_and_the_scoring(level):
    config = GeoConfig(level=level)
    for idx in range(20):
        data = make_task_data(config, idx)
        parts = data.parts
        assert len(parts) == config.parts_per_task
        stated = prompt.read_problems(data.prompt)
        assert [(p.family, p.inputs, t) for p, t in stated] == [
            (part.family, tuple(part.inputs), config.tolerance(part.family)) for part in parts
        ]
        assert {part.family for part in parts} <= set(config.families)
        assert {part.grid for part in parts} <= set(config.grids)
        numbers = sum(ARITY[part.family] for part in parts)
        assert len(parts) == 1 or f"{numbers} numbers in all" in data.prompt
        assert prompt.stated_scoring(data.prompt) == prompt.scoring_line(
            len(parts),
            config.scoring,
            config.task.graded,
            config.task.graded_halflife,
            config.task.graded_per_coordinate,
        )
        assert prompt.guided(data.prompt) == config.guide


def test_a_wrong_part_costs_its_share_under_fraction_and_everything_under_all():
    for level, expected in ((LEVELS[-2], 2 / 3), (LEVELS[-1], 0.0)):
        for task in _tasks(level, 5):
            values = list(baselines._solve(task.data.prompt))
            values[0] += 1e7
            reply = "<answer>" + ", ".join(repr(v) for v in values) + "</answer>"
            scored = score_reply(task, reply)
            assert scored.reward == expected, (level, task.data.id)
            family = task.data.family
            assert scored.metrics[f"pass_{family}"] == 0.0 and scored.metrics[f"error_{family}"] > 1.0


def test_a_wrong_count_of_numbers_leaves_every_part_unanswered():
    task = _tasks(3, 1)[0]
    values = baselines._solve(task.data.prompt)[:-1]
    scored = score_reply(task, "<answer>" + ", ".join(repr(v) for v in values) + "</answer>")
    assert scored.reward == 0.0 and scored.metrics["answered"] == 0.0


def test_graded_parts_are_announced_and_averaged():
    knobs = {"families": ["reproject"], "grids": ["webmerc"], "tolerance_scale": 1000.0, "parts_per_task": 4}
    config = GeoConfig(**knobs, seed=3, task=GeoTaskConfig(graded=True, graded_halflife=2.0))
    for task in [GeoTask(make_task_data(config, idx), config.task) for idx in range(5)]:
        assert "1 / (1 + (e / (2 * t))^2)" in task.data.prompt and _valid(task)
        values = list(baselines._solve(task.data.prompt))
        values[0] += 2.0 * task.data.tolerance  # part 1 at exactly one halflife: scores 0.5
        scored = score_reply(task, "<answer>" + ", ".join(repr(v) for v in values) + "</answer>")
        assert scored.reward == pytest.approx((0.5 + 3.0) / 4.0)


def test_validate_rejects_a_tampered_part_or_scoring_statement():
    for task in _tasks(UNGUIDED, 6):
        data = task.data
        more = list(data.more_parts)
        key = list(more[-1].key)
        key[-1] += 1.0
        more[-1] = more[-1].model_copy(update={"key": key})
        for update in (
            {"more_parts": more},
            {"more_parts": data.more_parts[:-1]},
            {"scoring": "all"},
            {"prompt": data.prompt.replace("mean of the", "lowest of the")},
            {"prompt": data.prompt.replace("Part 2\n", "Part 3\n")},
        ):
            assert not _valid(GeoTask(data.model_copy(update=update), task.config)), update
        assert not _valid(GeoTask(data, GeoTaskConfig(graded=True)))


def test_level_unset_is_the_default_stream_and_each_level_has_its_own_ids():
    assert make_task_data(GeoConfig(), 4) == make_task_data(GeoConfig(level=None), 4)
    assert make_task_data(GeoConfig(seed=9), 4).id == "geo-9-4"
    ids = {make_task_data(GeoConfig(level=level, seed=9), 4).id for level in LEVELS}
    assert len(ids) == len(LEVELS) and "geo-9-4" not in ids
    assert make_task_data(GeoConfig(level=2, split="eval", seed=9), 4).id == "geo-level2-eval-9-4"


def test_one_part_tasks_serialise_as_before_and_multi_part_tasks_round_trip():
    single = make_task_data(GeoConfig(), 0).model_dump()
    assert "more_parts" not in single and "scoring" not in single
    for level in LEVELS:
        data = make_task_data(GeoConfig(level=level), 1)
        assert GeoData.model_validate_json(data.model_dump_json()) == data


@pytest.mark.parametrize(
    ("knobs", "named"),
    [
        ({"level": 0}, "level"),
        ({"level": len(RUNGS) + 1}, "level"),
        ({"level": 1, "families": ["bearing"]}, "families"),
        ({"level": 2, "parts_per_task": 9}, "parts_per_task"),
        ({"level": 3, "position_tolerance_m": 2.0}, "position_tolerance_m"),
        ({"level": 4, "bearing_tolerance_deg": 0.1}, "bearing_tolerance_deg"),
        ({"grids": ["mga55", "atlantis"]}, "grids"),
        ({"grids": []}, "grids"),
        ({"grids": ["bng", "bng"]}, "grids"),
        ({"tolerance_scale": 0.0}, "tolerance_scale"),
        ({"tolerance_scale": float("nan")}, "tolerance_scale"),
        ({"tolerance_scale": 5000.0}, "tolerance_scale"),
        ({"parts_per_task": 0}, "parts_per_task"),
        ({"parts_per_task": 13}, "parts_per_task"),
        ({"scoring": "most"}, "scoring"),
    ],
)
def test_ladder_knob_misconfiguration_fails_at_load_naming_the_knob(knobs, named):
    with pytest.raises(ValidationError, match=named):
        GeoConfig(**knobs)


def test_a_knob_given_as_its_rungs_value_is_accepted():
    config = GeoConfig(level=1, grids=["webmerc"], scoring="fraction")
    assert config.parts_per_task == RUNGS[1]["parts_per_task"]


def test_tolerance_scale_multiplies_every_tolerance_to_twelve_digits():
    config = GeoConfig(tolerance_scale=0.1, bearing_tolerance_deg=0.3)
    assert config.tolerance("reproject") == 0.1 and config.tolerance("distance") == 1.0
    assert config.tolerance("bearing") == 0.03


def test_the_readme_carries_the_ladder_table():
    assert rung_table(RUNGS) in README.read_text()
