"""The paired comparison: exact sign test, seeded bootstrap, pairing and tokens per correct delivery."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import pytest
from piv_core.runs.compare import compare, main, pair_tasks, percentile, rollouts, sign_test, summary_lines
from piv_core.runs.reading import EvalRun


@pytest.mark.parametrize(
    ("wins", "losses", "p"),
    [
        (0, 0, Fraction(1)),  # no discordant task: no evidence
        (1, 0, Fraction(1)),  # 2 * 1/2
        (3, 0, Fraction(1, 4)),  # 2 * 1/8
        (0, 5, Fraction(1, 16)),  # 2 * 1/32
        (6, 0, Fraction(1, 32)),  # 2 * 1/64
        (4, 1, Fraction(3, 8)),  # 2 * (1 + 5) / 32
        (2, 2, Fraction(1)),  # 2 * (1 + 4 + 6) / 16 > 1
        (7, 2, Fraction(23, 128)),  # 2 * (1 + 9 + 36) / 512
        (2, 8, Fraction(7, 64)),  # 2 * (1 + 10 + 45) / 1024
    ],
)
def test_sign_test_matches_hand_computed_p_values(wins, losses, p):
    assert sign_test(wins, losses) == p
    assert sign_test(losses, wins) == p


def test_sign_test_rejects_negative_counts():
    with pytest.raises(ValueError, match="wins=-1"):
        sign_test(-1, 3)


def test_percentile_interpolates_between_order_statistics():
    assert percentile([4.0, 1.0, 3.0, 2.0], 0.5) == 2.5
    assert percentile([4.0, 1.0, 3.0, 2.0], 0.0) == 1.0
    assert percentile([4.0, 1.0, 3.0, 2.0], 1.0) == 4.0
    assert percentile([0.0, 10.0], 0.25) == 2.5
    with pytest.raises(ValueError, match="q must be"):
        percentile([1.0], 1.5)
    with pytest.raises(ValueError):
        percentile([], 0.5)


def trace(task: str, reward: float, tokens: int) -> dict:
    return {
        "task": {"data": {"id": task}},
        "rewards": {"r": {"score": reward, "weight": 1.0}},
        "num_output_tokens": tokens,
    }


def run(name: str, *traces: dict, failures: list[dict] | None = None) -> EvalRun:
    return EvalRun(Path("/runs") / name, "m", len(traces), len(traces), 0, 0, list(traces), failures or [])


A = run(
    "a",
    *(trace(f"t{i}", reward, 100) for i, reward in enumerate([1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.5, 1.0])),
    trace("only-a", 1.0, 100),
)
B = run(
    "b",
    # two rollouts per shared task: task t0 averages 0.5, t2 averages 1.0, ...
    *(trace(f"t{i}", reward, 50) for i, reward in enumerate([1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0])),
    *(trace(f"t{i}", reward, 50) for i, reward in enumerate([0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 0.5, 0.0])),
    trace("only-b", 0.0, 50),
    trace("only-b2", 0.0, 50),
)


def test_pairs_average_rollouts_per_task_and_count_the_unshared():
    pairs, only_a, only_b = pair_tasks(rollouts(A), rollouts(B))
    assert (only_a, only_b) == (1, 2)
    assert [p.task for p in pairs] == [f"t{i}" for i in range(8)]
    assert [p.delta for p in pairs] == [-0.5, 0.0, 1.0, 0.0, 0.0, 0.0, 0.25, -1.0]
    assert [p.b_rollouts for p in pairs] == [2] * 8


def test_comparison_figures_by_hand():
    c = compare(A, B, resamples=2000, seed=7)
    assert c.mean_delta == pytest.approx(-0.25 / 8)
    assert (c.b_better, c.a_better) == (2, 2) and c.sign_p == 1
    # A: 8 rollouts x 100 tokens, 5 at 1.0; B: 16 rollouts x 50 tokens, 10 at 1.0.
    assert (c.a_tokens, c.a_correct, c.b_tokens, c.b_correct) == (800, 5, 800, 10)
    assert c.a_tokens_per_correct == 160.0 and c.b_tokens_per_correct == 80.0
    assert c.ratio == 0.5
    assert c.delta_interval.low <= c.mean_delta <= c.delta_interval.high
    assert c.delta_interval.low < c.delta_interval.high
    assert c.ratio_interval is not None and c.ratio_interval.low <= c.ratio <= c.ratio_interval.high
    lines = summary_lines(c)
    assert "sign test: b better on 2, a better on 2 of 4 discordant tasks; exact two-sided p = 1" in lines[2]
    assert lines[4].startswith("tokens per correct delivery, ratio b / a: 0.500, 95% bootstrap interval [")


def test_bootstrap_is_deterministic_under_its_seed():
    first, again, other = compare(A, B, 500, seed=3), compare(A, B, 500, seed=3), compare(A, B, 500, seed=4)
    assert (first.delta_interval, first.ratio_interval) == (again.delta_interval, again.ratio_interval)
    assert (first.delta_interval, first.ratio_interval) != (other.delta_interval, other.ratio_interval)


def test_a_failed_episode_without_a_trace_is_a_zero_reward_rollout():
    failed = run("c", trace("t0", 1.0, 10), failures=[{"task": "t1", "traced": False, "tokens": 7}])
    c = compare(run("a", trace("t0", 1.0, 10), trace("t1", 1.0, 10)), failed, resamples=50)
    assert [p.delta for p in c.pairs] == [0.0, -1.0]
    assert (c.b_tokens, c.b_correct) == (17, 1)


def test_no_correct_delivery_leaves_the_ratio_undefined():
    c = compare(run("a", trace("t0", 1.0, 10)), run("b", trace("t0", 0.0, 10)), resamples=50)
    assert math.isinf(c.b_tokens_per_correct) and math.isnan(c.ratio)
    assert c.ratio_interval is None and c.ratio_left_out == 50


def test_no_shared_task_and_bad_knobs_are_errors():
    with pytest.raises(ValueError, match="share no task"):
        compare(run("a", trace("x", 1.0, 1)), run("b", trace("y", 1.0, 1)))
    with pytest.raises(ValueError, match="resamples must be >= 1"):
        compare(A, B, resamples=0)


def write_run(path: Path, *traces: dict) -> Path:
    path.mkdir(parents=True)
    (path / "traces.jsonl").write_text(
        "".join(json.dumps({"ok": True, "traces": [t]}) + "\n" for t in traces)
    )
    return path


def test_main_prints_markdown_and_exits_2_on_nothing_shared(tmp_path, capsys):
    a = write_run(tmp_path / "a", trace("t0", 1.0, 5), trace("t1", 1.0, 5), trace("t2", 1.0, 5))
    b = write_run(tmp_path / "b", trace("t0", 0.0, 5), trace("t1", 0.0, 5), trace("t2", 0.0, 5))
    main([str(a), str(b), "--resamples", "100"])
    out = capsys.readouterr().out
    assert "## b vs a (paired by task)" in out
    assert "mean reward difference (b − a): -1.0000, 95% bootstrap interval [-1.0000, -1.0000]" in out
    assert "exact two-sided p = 0.25 (1/4)" in out and "| t2 | 1.000 (n=1) | 0.000 (n=1) | -1.000 |" in out
    c = write_run(tmp_path / "c", trace("zz", 1.0, 5))
    with pytest.raises(SystemExit) as stop:
        main([str(a), str(c)])
    assert stop.value.code == 2 and "share no task" in capsys.readouterr().err
