"""The tax environments' noisy auditor (`piv_core.ledger_audit.grading.erring_audit` behind each
``baselines.noisy``), tested once for both: the oracle at p = 0, reproducible from its rng, and
worse as p grows."""

from __future__ import annotations

import importlib
import random
from statistics import fmean

import pytest
from piv_core.policy import Conversation
from piv_core.testing import score_reply

LEDGERS = {
    "au_bas_reconciliation_v1": ("AuBasConfig", "AuBasTask", {}),
    "us_sut_reconciliation_v1": ("UsSutConfig", "UsSutTask", {"num_tasks": 100}),
}


class Ledger:
    """One tax environment: its baselines and its tasks under a configuration."""

    def __init__(self, package: str) -> None:
        config, task, knobs = LEDGERS[package]
        taskset = importlib.import_module(f"{package}.taskset")
        self.baselines = importlib.import_module(f"{package}.baselines")
        self._config, self._task, self._make = (
            getattr(taskset, config),
            getattr(taskset, task),
            taskset.make_task_data,
        )
        self.tasks = [self.task(idx, **knobs) for idx in range(100)]

    def task(self, idx: int, **knobs):
        return self._task(self._make(self._config(**knobs), idx))


def _conversation(task) -> Conversation:
    return Conversation([{"role": "user", "content": task.data.prompt}], [])


@pytest.fixture(scope="module", params=sorted(LEDGERS))
def ledger(request) -> Ledger:
    return Ledger(request.param)


@pytest.mark.parametrize("level", [None, 1, 7])
def test_p_zero_is_the_oracle(ledger, level):
    for idx in range(20):
        conversation = _conversation(ledger.task(idx, level=level))
        assert ledger.baselines.noisy(conversation, 0.0, random.Random(idx)) == ledger.baselines.oracle(
            conversation
        )


def test_the_same_rng_seed_gives_the_same_reply_and_others_differ(ledger):
    conversation = _conversation(ledger.tasks[0])
    replies = [ledger.baselines.noisy(conversation, 0.3, random.Random(seed)) for seed in (5, 5, 6)]
    assert replies[0] == replies[1] != replies[2]


def test_the_reward_falls_as_p_grows(ledger):
    means = []
    for p in (0.0, 0.03, 0.1, 0.3, 0.8):
        rewards = [
            score_reply(task, ledger.baselines.noisy(_conversation(task), p, random.Random(idx))).reward
            for idx, task in enumerate(ledger.tasks)
        ]
        means.append(fmean(rewards))
    assert means[0] == 1.0
    assert all(a > b for a, b in zip(means, means[1:])), means
    assert means[-1] < 0.3


@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_p_outside_zero_to_one_is_an_error(ledger, p):
    with pytest.raises(ValueError, match="p must be between 0 and 1"):
        ledger.baselines.noisy(_conversation(ledger.tasks[0]), p, random.Random(0))
