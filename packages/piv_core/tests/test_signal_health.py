"""The signal report's statistics, on hand-made groups, and the command through the real eval."""

from __future__ import annotations

import pytest
from piv_core import signal_health
from piv_core.signal_health import PolicyResult, differing_share


def _result(policy: str, rewards: dict[str, list[float]], recall=None) -> PolicyResult:
    return PolicyResult(policy, max(len(v) for v in rewards.values()), rewards, recall or {})


def test_group_statistics_by_hand():
    r = _result("noisy-0.3", {"a": [1.0, 1.0, 1.0], "b": [0.0, 0.5, 1.0], "c": [0.0, 0.0, 0.0]})
    assert r.mean == pytest.approx(4.5 / 9)
    assert r.zero_variance_share == pytest.approx(2 / 3)  # a and c: every rollout the same
    assert r.nonzero_share == pytest.approx(2 / 3)  # a and b have a mean above 0
    assert r.task_means() == {"a": 1.0, "b": 0.5, "c": 0.0}


def test_differing_share_counts_tasks_that_tell_policies_apart():
    oracle = _result("oracle", {"a": [1.0], "b": [1.0], "c": [1.0], "d": [1.0]})
    noisy = _result("noisy-0.6", {"a": [1.0, 1.0], "b": [0.0, 1.0], "c": [0.0, 0.0], "e": [0.0]})
    # shared tasks a, b, c: a agrees (1 vs 1), b (1 vs .5) and c (1 vs 0) differ
    assert differing_share([oracle, noisy]) == pytest.approx(2 / 3)
    assert differing_share([oracle]) == 0.0


def test_render_lists_every_recall_metric():
    a = _result("oracle", {"a": [1.0]}, {"recall_x": [1.0], "recall_y": [0.5]})
    b = _result("silent", {"a": [0.0]}, {"recall_x": [0.0]})
    table = signal_health.render("env", 2, [a, b], 1)
    assert "level 2" in table and "`recall_x`" in table and "`recall_y`" in table
    assert "| `silent` | 1 | 0.000 | 0.00 | 1.00 | 0 | 0.00 | 0.00 |" in table
