"""Finite mixes of rungs for curricula (`piv_core.tasksets.ladder`): what a trainer's difficulty pools need.

prime-rl's ``DifficultyPoolSampler`` lists a finite taskset (``type(taskset).INFINITE`` false),
refuses duplicate ``Task.key``s and keeps each task's latest group mean by key across steps and
resumes. So a mix must be finite, serve each rung's own tasks, and key every task uniquely and
durably: the same key in every process, and whatever mix or position the task is served in.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections.abc import Sequence

import pytest
import verifiers.v1 as vf
from pydantic import ValidationError
from verifiers.v1.utils.loaders import taskset_config_type

MIXED = ("au-bas-reconciliation-v1", "us-sut-reconciliation-v1", "geo-reprojection-v1")


def _tasks(env_id: str, n: int | None = None, **knobs) -> list:
    """The tasks of `env_id` under `knobs`: all of them, or the first `n`."""
    return list(itertools.islice(vf.load_taskset(taskset_config_type(env_id)(id=env_id, **knobs)), n))


def _content(task) -> dict:
    return task.data.model_dump(mode="json", exclude={"idx"})


@pytest.mark.parametrize("env_id", MIXED)
def test_a_mix_is_finite_and_serves_each_rungs_own_tasks_interleaved(env_id):
    taskset = vf.load_taskset(taskset_config_type(env_id)(id=env_id, levels=[3, 1, 2], tasks_per_level=4))
    assert type(taskset).INFINITE is False and taskset.bounded
    tasks = list(taskset)
    assert isinstance(tasks, Sequence) and len(tasks) == 12
    assert [task.data.level for task in tasks] == [3, 1, 2] * 4
    for level in (1, 2, 3):
        alone = _tasks(env_id, level=level, n=4)
        served = [task for task in tasks if task.data.level == level]
        assert [_content(t) for t in served] == [_content(t) for t in alone]
        assert [t.key for t in served] == [t.key for t in alone]  # the same key, mixed or alone
    assert len({task.key for task in tasks}) == len(tasks)


@pytest.mark.parametrize("env_id", MIXED)
def test_a_mix_under_other_knobs_is_still_each_rungs_task(env_id):
    mixed = _tasks(env_id, levels=[1, 2], tasks_per_level=2, seed=11, split="eval")
    alone = _tasks(env_id, level=2, n=2, seed=11, split="eval")
    assert [_content(t) for t in mixed if t.data.level == 2] == [_content(t) for t in alone]


@pytest.mark.parametrize("env_id", MIXED)
def test_keys_are_the_same_in_another_process_and_in_another_mix(env_id):
    here = [task.key for task in _tasks(env_id, levels=[1, 2, 3], tasks_per_level=3)]
    script = (
        "import json, verifiers.v1 as vf\n"
        "from verifiers.v1.utils.loaders import taskset_config_type\n"
        f"c = taskset_config_type({env_id!r})(id={env_id!r}, levels=[1, 2, 3], tasks_per_level=3)\n"
        "print(json.dumps([t.key for t in vf.load_taskset(c)]))\n"
    )
    there = json.loads(subprocess.run([sys.executable, "-c", script], capture_output=True, check=True).stdout)
    assert there == here
    other = {task.key for task in _tasks(env_id, levels=[3, 2], tasks_per_level=3)}
    assert other == set(here[1::3] + here[2::3])  # rungs 2 and 3, whatever their positions


@pytest.mark.parametrize("env_id", MIXED)
def test_a_task_outside_any_mix_is_keyed_by_its_content_alone(env_id):
    first, second = _tasks(env_id, n=2)
    moved = type(first)(first.data.model_copy(update={"idx": 99}), first.config)
    assert moved.key == first.key != second.key and moved.hash != first.hash


@pytest.mark.parametrize("env_id", MIXED)
@pytest.mark.parametrize(
    ("knobs", "named"),
    [
        ({"levels": []}, "levels must be a non-empty list"),
        ({"levels": [1, 1]}, "levels must be a non-empty list of distinct rungs"),
        ({"levels": [0, 1]}, "levels must be between 1 and"),
        ({"levels": [1, 99]}, "levels must be between 1 and"),
        ({"levels": [1, True]}, "levels"),
        ({"levels": [1, 2], "level": 1}, "levels and level were both given"),
        ({"tasks_per_level": 5}, "tasks_per_level was given without levels"),
        ({"levels": [1], "tasks_per_level": 0}, "tasks_per_level must be >= 1"),
        ({"levels": [1], "tasks_per_level": 10_001}, "tasks_per_level must be <= 10000"),
    ],
)
def test_a_bad_mix_fails_at_load_naming_the_knob(env_id, knobs, named):
    with pytest.raises(ValidationError, match=named):
        taskset_config_type(env_id)(id=env_id, **knobs)


def test_a_knob_given_with_a_mix_must_agree_with_every_rung():
    config = taskset_config_type("au-bas-reconciliation-v1")
    with pytest.raises(
        ValidationError,
        match="levels 1: level 1 sets num_transactions to 4, but num_transactions was given as 30",
    ):
        config(id="au-bas-reconciliation-v1", levels=[1, 2], num_transactions=30)
    # A knob no rung sets is every rung's: the seed.
    assert {t.data.id.rsplit("-", 2)[-2] for t in _tasks("au-bas-reconciliation-v1", levels=[1], seed=5)} == {
        "5"
    }


def test_a_mix_too_big_to_hold_fails_naming_the_knob():
    with pytest.raises(ValidationError, match="tasks_per_level must be <= .* with levels="):
        taskset_config_type("us-sut-reconciliation-v1")(
            id="us-sut-reconciliation-v1", levels=[1, 9, 10, 11], tasks_per_level=10_000
        )


@pytest.mark.parametrize("env_id", MIXED)
def test_a_mix_read_back_from_its_dump_serves_the_same_tasks(env_id):
    config = taskset_config_type(env_id)(id=env_id, levels=[2, 1], tasks_per_level=2)
    again = type(config).model_validate(config.model_dump())  # a saved or served config: every knob present
    assert [t.key for t in vf.load_taskset(again)] == [t.key for t in vf.load_taskset(config)]


@pytest.mark.parametrize("served", [False, True])
def test_each_geo_task_in_a_mix_is_scored_as_its_rung_scores_it(served):
    """Rung 1 grades each coordinate on a 15 km half-life, rung 12 passes or fails each part; in a
    mix the rung's scoring comes with the task, also where the task config is read back whole."""
    import asyncio
    import random

    from piv_core.baseline.shortcuts import conversation_of
    from piv_core.plugins import load
    from piv_core.testing import score_reply

    env_id, noisy, rng = "geo-reprojection-v1", load("geo-reprojection-v1").noisy, random.Random(3)
    config = taskset_config_type(env_id)(id=env_id, levels=[1, 12], tasks_per_level=4)
    if served:
        config = type(config).model_validate(config.model_dump())
    alone = {t.key: t for level in (1, 12) for t in _tasks(env_id, level=level, n=4)}
    rewards = set()
    for task in vf.load_taskset(config):
        reply = noisy(conversation_of(task.data), 0.5, rng)
        assert score_reply(task, reply).reward == score_reply(alone[task.key], reply).reward
        rewards.add(score_reply(task, reply).reward)
        assert asyncio.run(task.validate(None))
    assert any(0 < r < 1 for r in rewards)  # rung 1's graded partial credit reached the mix
