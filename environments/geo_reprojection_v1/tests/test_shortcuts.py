"""No answer read off the page pays like the work, at any rung.

The fitted surface answer (`geo_reprojection_v1.shortcuts`: a printed number or 1 for each number the
reply owes, its point moved and its sign chosen, fitted on train tasks and judged on eval tasks) stays
at or below the scripted solver that gets 3 parts in 10 wrong (`noisy-0.3`) and at most half the
oracle's reward, and at the rungs of rounded UTM points at most half the least a 1.5B model earned on
their held-out tasks (`MODEL_MEANS`): a reward there comes from the products. The answers that ignore
the point earn at most a tenth of `noisy-0.3`."""

from __future__ import annotations

import random

import pytest
from geo_reprojection_v1 import baselines
from geo_reprojection_v1.levels import RUNGS
from geo_reprojection_v1.shortcuts import degenerate_means, fit, mean, reward, tasks
from piv_core.baseline.shortcuts import conversation_of
from piv_core.testing import score_reply

MODEL_MEANS = {5: 0.306, 6: 0.335, 7: 0.164, 8: 0.054, 9: 0.031, 10: 0.025}
"""The least mean reward Qwen2.5-Coder-1.5B earned at each rung of rounded UTM points on held-out
tasks (`results/real-model.md`): rung 5 0.306 to 0.444, rung 6 0.335 and 0.359, rung 7 0.245 and
0.164, rung 8 0.054 to 0.127, rung 9 0.031 and 0.087, rung 10 0.025 to 0.062."""


@pytest.mark.parametrize("level", sorted(RUNGS))
def test_no_answer_read_off_the_page_pays_like_the_work(level):
    fitted, test = tasks(level, "train", 12), tasks(level, "eval", 40)
    best = mean(test, fit(fitted))
    rng = random.Random(3)
    honest = sum(
        score_reply(task, baselines.noisy(conversation_of(task.data), 0.3, rng)).reward for task, _ in test
    ) / len(test)
    assert best <= min(honest, 0.5), (best, honest)
    floor = degenerate_means(test)
    assert max(floor.values()) <= honest / 10, (floor, honest)
    rung = RUNGS[level]
    if rung.get("point_decimals") is not None and rung["grids"] != ["webmerc"]:
        assert best <= MODEL_MEANS[level] / 2, best


def test_the_surface_scores_as_the_task_does():
    for level in (1, 3, 5, 6, 9, 10, 11):
        for task, _ in tasks(level, "eval", 3):
            values = [v for part in task.data.parts for v in part.key]
            reply = "<answer>" + ", ".join(repr(v) for v in values) + "</answer>"
            assert reward(task, values) == pytest.approx(score_reply(task, reply).reward)
