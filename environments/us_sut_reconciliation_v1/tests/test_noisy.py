"""The noisy oracle: the oracle at p = 0, reproducible from its rng, and worse as p grows."""

from __future__ import annotations

import random
from statistics import fmean

import pytest
from piv_core.endpoint import Conversation
from piv_core.testing import score_reply
from us_sut_reconciliation_v1 import baselines
from us_sut_reconciliation_v1.taskset import UsSutConfig, UsSutTask, make_task_data


def _conversation(task: UsSutTask) -> Conversation:
    return Conversation([{"role": "user", "content": task.data.prompt}], [])


TASKS = [UsSutTask(make_task_data(UsSutConfig(num_tasks=100), idx)) for idx in range(100)]


@pytest.mark.parametrize("level", [None, 1, 6])
def test_p_zero_is_the_oracle(level):
    for idx in range(20):
        task = UsSutTask(make_task_data(UsSutConfig(level=level), idx))
        conversation = _conversation(task)
        assert baselines.noisy(conversation, 0.0, random.Random(idx)) == baselines.oracle(conversation)


def test_the_same_rng_seed_gives_the_same_reply_and_others_differ():
    conversation = _conversation(TASKS[0])
    replies = [baselines.noisy(conversation, 0.3, random.Random(seed)) for seed in (5, 5, 6)]
    assert replies[0] == replies[1] != replies[2]


def test_the_reward_falls_as_p_grows():
    means = []
    for p in (0.0, 0.03, 0.1, 0.3, 0.8):
        rewards = [
            score_reply(task, baselines.noisy(_conversation(task), p, random.Random(idx))).reward
            for idx, task in enumerate(TASKS)
        ]
        means.append(fmean(rewards))
    assert means[0] == 1.0
    assert all(a > b for a, b in zip(means, means[1:])), means
    assert means[-1] < 0.3


@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_p_outside_zero_to_one_is_an_error(p):
    with pytest.raises(ValueError, match="p must be between 0 and 1"):
        baselines.noisy(_conversation(TASKS[0]), p, random.Random(0))
