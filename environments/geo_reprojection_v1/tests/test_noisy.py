"""The noisy oracle: exact at p = 0, reproducible from its random stream, and worse as p grows."""

from __future__ import annotations

import random
import statistics

import pytest
from geo_reprojection_v1 import baselines
from geo_reprojection_v1.levels import RUNGS
from geo_reprojection_v1.problem import FAMILIES
from geo_reprojection_v1.taskset import GeoConfig, GeoData, GeoTask, make_task_data
from piv_core.policy import Conversation
from piv_core.testing import score_reply


def _conversation(data: GeoData) -> Conversation:
    messages = [{"role": "system", "content": data.system_prompt}, {"role": "user", "content": data.prompt}]
    return Conversation(messages, [])


def _tasks(count: int, **knobs: object) -> list[GeoTask]:
    config = GeoConfig(**knobs)
    return [GeoTask(make_task_data(config, idx), config.task) for idx in range(count)]


@pytest.fixture(scope="module")
def easiest() -> list[GeoTask]:
    return _tasks(100, level=1, seed=17)


@pytest.mark.parametrize("knobs", [{}, *({"level": level} for level in RUNGS)])
def test_p_zero_is_the_oracle(knobs):
    for task in _tasks(30, **knobs):
        conversation = _conversation(task.data)
        assert baselines.noisy(conversation, 0.0, random.Random(5)) == baselines.oracle(conversation)


def test_the_same_seed_gives_the_same_reply():
    replies = {}
    mixed = min(level for level, rung in RUNGS.items() if len(rung["families"]) > 1)
    for task in _tasks(30, level=mixed):
        conversation = _conversation(task.data)
        first = baselines.noisy(conversation, 0.5, random.Random(f"{task.data.id}:0"))
        assert first == baselines.noisy(conversation, 0.5, random.Random(f"{task.data.id}:0"))
        replies[task.data.id] = first, baselines.noisy(conversation, 0.5, random.Random(f"{task.data.id}:1"))
    assert any(a != b for a, b in replies.values())


def _mean(tasks: list[GeoTask], p: float) -> tuple[float, float]:
    """Mean reward at `p` and the fraction of tasks with non-zero reward."""
    rewards = [
        score_reply(task, baselines.noisy(_conversation(task.data), p, random.Random(f"{i}:{p}"))).reward
        for i, task in enumerate(tasks)
    ]
    return statistics.mean(rewards), sum(r > 0 for r in rewards) / len(rewards)


def test_the_mean_reward_falls_with_p(easiest):
    means = [_mean(easiest, p)[0] for p in (0.0, 0.25, 0.5, 0.75, 1.0)]
    # The easiest rung is graded: a wrong part misses by two half-lives or more, so it keeps at most 0.2.
    assert means[0] == 1.0 and means[-1] < 0.05
    assert all(a > b for a, b in zip(means, means[1:], strict=False)), means
    for p, mean in zip((0.25, 0.5, 0.75), means[1:-1], strict=True):
        assert abs(mean - (1 - p)) < 0.12, (p, mean)


def test_at_the_easiest_rung_p_point_six_still_earns_reward_on_most_tasks(easiest):
    mean, nonzero = _mean(easiest, 0.6)
    assert nonzero >= 0.75 and 0.25 < mean < 0.55


@pytest.mark.parametrize("family", FAMILIES)
def test_every_wrong_part_parses_and_misses_its_tolerance(family):
    for task in _tasks(25, families=[family], parts_per_task=3, tolerance_scale=10.0, seed=8):
        reply = baselines.noisy(_conversation(task.data), 1.0, random.Random(task.data.id))
        scored = score_reply(task, reply)
        assert scored.metrics["answered"] == 1.0 and scored.reward == 0.0
        assert scored.metrics[f"pass_{family}"] == 0.0 and scored.metrics[f"error_{family}"] > 1.0


@pytest.mark.parametrize("p", [-0.1, 1.5, float("nan")])
def test_p_outside_zero_to_one_is_refused(p):
    task = _tasks(1)[0]
    with pytest.raises(ValueError, match="p must be"):
        baselines.noisy(_conversation(task.data), p, random.Random(0))
