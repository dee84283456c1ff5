"""What the reward pays at every rung: no rule over surface features earns as much as an honest
audit that errs on 3 rows in 10, nor half the oracle's; the answers that skip the work stay below
an honest audit erring on every other row; and an honest audit's reward falls as it errs more.

The shortcut search fits decision tables over the features `shortcuts.AuBasSurface` reads on the
train split and judges them on the eval split (`piv_core.shortcuts.search`)."""

from __future__ import annotations

import random

import pytest
from au_bas_reconciliation_v1 import baselines
from au_bas_reconciliation_v1.levels import RUNGS
from au_bas_reconciliation_v1.shortcuts import WEIGHTS, AuBasSurface
from au_bas_reconciliation_v1.taskset import AuBasConfig, AuBasTask, make_task_data
from piv_core.shortcuts import MOVES, conversation_of, held_out_mean, policy_mean, search
from piv_core.testing import score_reply

SURFACE = AuBasSurface()
SAMPLES = {1: (40, 150), 2: (40, 150), 3: (30, 80), 4: (16, 40), 5: (8, 16), 6: (4, 8)}
"""Tasks a rung's tables are fitted on and judged on (fewer where ledgers are long)."""


def _tasks(level: int, split: str, count: int) -> list:
    return [make_task_data(AuBasConfig(level=level, split=split), idx) for idx in range(count)]


def _noisy(p: float):
    rng = random.Random(7)
    return lambda conversation: baselines.noisy(conversation, p, rng)


DEGENERATE = {
    "empty": lambda conversation: '<answer>{"faults": {}}</answer>',
    "example copied": baselines.example,
    "everything flagged": baselines.blanket,
    "garbage": baselines.garbage,
}
"""Answers that skip the work, besides one move for every row (the books copied, zeros, every row
flagged with its own code or every code: `piv_core.shortcuts.MOVES`)."""


@pytest.mark.parametrize("level", sorted(RUNGS))
def test_no_rule_over_surface_features_pays_like_the_work(level):
    fit, test = (_tasks(level, split, n) for split, n in zip(("train", "eval"), SAMPLES[level]))
    found = search(SURFACE, fit, test, depth=2 if level <= 3 else 1)
    honest = policy_mean(SURFACE, test, _noisy(0.3))
    assert found.mean <= min(honest, 0.5), (found, honest)


@pytest.mark.parametrize("level", sorted(RUNGS))
def test_the_reward_orders_behaviour(level):
    tasks = _tasks(level, "eval", SAMPLES[level][1])
    noisy = [policy_mean(SURFACE, tasks, _noisy(p)) for p in (0.0, 0.1, 0.3, 0.5)]
    assert noisy[0] == pytest.approx(1.0) and noisy == sorted(noisy, reverse=True), noisy
    floor = {name: policy_mean(SURFACE, tasks, policy) for name, policy in DEGENERATE.items()}
    floor |= {move: held_out_mean(SURFACE, tasks, (), {(): move}) for move in MOVES}
    assert max(floor.values()) < noisy[-1], (floor, noisy)


def test_the_surface_scores_as_the_task_does():
    assert {name: getattr(AuBasTask, name)._vf_weight for name in WEIGHTS} == WEIGHTS
    for level in (1, 2, 4):
        for data in _tasks(level, "eval", 5):
            task, conversation = AuBasTask(data), conversation_of(data)
            for reply in (
                baselines.noisy(conversation, 0.3, random.Random(1)),
                baselines.blanket(conversation),
            ):
                assert SURFACE.reward(data, reply) == pytest.approx(score_reply(task, reply).reward)
