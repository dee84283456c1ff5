"""Task data: validate() re-derives every key, the oracle solves from the prompt, tasks are deterministic."""

from __future__ import annotations

import asyncio

import pytest
from geo_reprojection_v1 import SingleReplyHarness, baselines, prompt
from geo_reprojection_v1.problem import FAMILIES
from geo_reprojection_v1.taskset import GeoConfig, GeoData, GeoTask, GeoTaskConfig, GeoTaskset, make_task_data
from piv_core.policy import Conversation
from piv_core.testing import score_reply
from pydantic import ValidationError


def _valid(task: GeoTask) -> bool:
    return asyncio.run(task.validate(None))  # type: ignore[arg-type]


def _tampered(task: GeoTask, **update) -> GeoTask:
    """`task` with its data changed (verifiers 0.4's `Task.with_data`, which 0.3.1 lacks)."""
    return GeoTask(task.data.model_copy(update=update), task.config)


def test_validate_accepts_generated_tasks():
    config = GeoConfig(seed=11)
    for idx in range(200):
        task = GeoTask(make_task_data(config, idx))
        assert _valid(task), task.data


def test_validate_rejects_a_tampered_key(family, tasks_of):
    for task in tasks_of(family, count=5):
        for nudge in (1e-3, 1.0, -100.0):
            key = list(task.data.key)
            key[-1] += nudge
            assert not _valid(_tampered(task, key=key)), (family, nudge)


def test_validate_rejects_inputs_or_tolerance_that_disagree_with_the_prompt(family, tasks_of):
    task = tasks_of(family, count=1)[0]
    inputs = list(task.data.inputs)
    inputs[0] += 0.5
    assert not _valid(_tampered(task, inputs=inputs))
    assert not _valid(_tampered(task, tolerance=task.data.tolerance * 2))
    assert not _valid(_tampered(task, prompt=task.data.prompt.replace("Point", "Spot")))
    assert not _valid(_tampered(task, system_prompt="Answer anything."))


def test_prompt_reads_back_to_the_problem():
    config = GeoConfig(position_tolerance_m=0.25, distance_tolerance_m=12.5, bearing_tolerance_deg=0.001)
    for idx in range(100):
        data = make_task_data(config, idx)
        problem, tolerance = prompt.read_problem(data.prompt)
        assert problem.family == data.family and problem.inputs == tuple(data.inputs)
        assert tolerance == data.tolerance == config.tolerance(data.family)
        assert problem.grid in ("", data.grid)


def test_task_data_survives_a_json_round_trip():
    for idx in range(20):
        data = make_task_data(GeoConfig(), idx)
        assert GeoData.model_validate_json(data.model_dump_json()) == data


def test_families_knob_restricts_the_stream():
    config = GeoConfig(families=["bearing", "inverse"])
    assert {make_task_data(config, i).family for i in range(60)} == {"bearing", "inverse"}


@pytest.mark.parametrize(
    ("knobs", "named"),
    [
        ({"families": ["reproject", "geocode"]}, "families"),
        ({"families": []}, "families"),
        ({"families": ["distance", "distance"]}, "families"),
        ({"position_tolerance_m": 0.0}, "position_tolerance_m"),
        ({"distance_tolerance_m": -5.0}, "distance_tolerance_m"),
        ({"bearing_tolerance_deg": float("inf")}, "bearing_tolerance_deg"),
        ({"bearing_tolerance_deg": 180.0}, "bearing_tolerance_deg"),
        ({"position_tolerance_m": float("nan")}, "position_tolerance_m"),
    ],
)
def test_misconfiguration_fails_at_load_naming_the_knob(knobs, named):
    with pytest.raises(ValidationError, match=named):
        GeoConfig(**knobs)


@pytest.mark.parametrize("halflife", [0.0, -1.0, float("inf")])
def test_graded_halflife_must_be_positive(halflife):
    with pytest.raises(ValidationError, match="graded_halflife"):
        GeoTaskConfig(graded_halflife=halflife)


def test_oracle_scores_one_on_many_seeds():
    for seed in (1, 2, 3, 20260826, 987654321):
        config = GeoConfig(seed=seed)
        for idx in range(40):
            task = GeoTask(make_task_data(config, idx))
            messages = [
                {"role": "system", "content": task.data.system_prompt},
                {"role": "user", "content": task.data.prompt},
            ]
            scored = score_reply(task, baselines.oracle(Conversation(messages, [])))
            assert scored.rewards["within_tolerance"] == 1.0, (seed, idx, task.data.family, task.data.grid)
            assert scored.metrics["error"] < 1e-3


def test_exports_one_taskset_and_the_single_reply_harness():
    import geo_reprojection_v1

    assert geo_reprojection_v1.GeoTaskset is GeoTaskset
    assert "SingleReplyHarness" in geo_reprojection_v1.__all__ and SingleReplyHarness
    assert sum(name.endswith("Taskset") for name in geo_reprojection_v1.__all__) == 1


def test_every_family_and_grid_occurs():
    data = [make_task_data(GeoConfig(), i) for i in range(400)]
    assert {d.family for d in data} == set(FAMILIES)
    assert len({(d.family, d.grid) for d in data}) == len(FAMILIES) * 9
