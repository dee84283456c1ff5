"""The signal report's statistics, on hand-made groups, and the command through the real eval."""

from __future__ import annotations

import pytest
from piv_core.cli import signal_health
from piv_core.cli.signal_health import PolicyResult, differing_share


def _result(policy: str, rewards: dict[str, list[float]], skills=None) -> PolicyResult:
    return PolicyResult(policy, max(len(v) for v in rewards.values()), rewards, skills or {})


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


def test_render_lists_every_skill_metric():
    a = _result("oracle", {"a": [1.0]}, {"recall_x": [1.0], "recall_y": [0.5]})
    b = _result("silent", {"a": [0.0]}, {"recall_x": [0.0]})
    table = signal_health.render("env", 2, [a, b], 1)
    assert "level 2" in table and "`recall_x`" in table and "`recall_y`" in table
    assert "| `silent` | 1 | 1 | 0.000 | 0.00 | 1.00 | 0 | – | – | – | 0.00 | – |" in table


def test_the_ladder_names_the_rungs_with_signal_and_the_cliffs():
    """Signal: a mean of 0.05 or more and a group that varies. A cliff: keeping under 0.3 of the
    mean of a rung above 0.05; below that floor any step is allowed."""
    model = {
        1: {"a": [0.5, 1.0], "b": [0.0, 0.5]},  # 0.5, both groups vary
        2: {"a": [0.2, 0.0], "b": [0.2, 0.2]},  # 0.15: keeps 0.30 of 0.5, one group varies
        3: {"a": [0.04, 0.0], "b": [0.0, 0.0]},  # 0.01: under the floor, and 0.07 of 0.15
        5: {"a": [0.0, 0.0], "b": [0.0, 0.0]},  # 0: no cliff below a rung under the floor
        6: {"a": [0.1, 0.1], "b": [0.1, 0.1]},  # 0.1 but no group varies: no signal
    }
    by_level = {
        level: [_result("m", rewards), PolicyResult("oracle", 1, {t: [1.0] for t in rewards})]
        for level, rewards in model.items()
    }
    text = signal_health.ladder("env", by_level)
    body = text.split("|---|---|---|---|---|\n")[1].split("\n\n")[0]
    cells = [[cell.strip() for cell in line.split("|")[1:-1]] for line in body.splitlines()]
    assert cells == [
        ["1", "0.500", "1.00", "yes", "–"],
        ["2", "0.150", "0.50", "yes", "0.30"],
        ["3", "0.010", "0.50", "no", "0.07: **cliff**"],
        ["5", "0.000", "0.00", "no", "0.00 of rung 3"],
        ["6", "0.100", "0.00", "no", "–"],
    ]
    assert "the ladder for `m`" in text and "`oracle`" not in text  # deterministic policies: no ladder
    assert "2 (1, 2)" in text and "cliffs (keeping under 0.3 of a rung above 0.05): 2 → 3." in text
    assert signal_health.ladder("env", {1: by_level[1]}) == ""  # one rung: nothing to compare


def test_a_run_over_rungs_ends_on_the_ladder(tmp_path, monkeypatch, capsys):
    means = {1: [1.0, 0.5], 2: [0.0, 0.1]}

    def run(env_id, policy, level, tasks, group, runs, knobs, **options):
        return _result(policy, {"a": means[level], "b": means[level][::-1]})

    monkeypatch.setattr(signal_health, "run_policy", run)
    out = tmp_path / "signal.md"
    signal_health.main(["env", "--levels", "1,2", "--model", "m", "-r", "2", "-o", str(out)])
    written = out.read_text()
    assert written.endswith("cliffs (keeping under 0.3 of a rung above 0.05): 1 → 2.\n")
    assert "### env, level 2" in written and "### env, the ladder for `m`" in capsys.readouterr().out


@pytest.mark.e2e
def test_signal_through_eval(tmp_path, capsys):
    out = tmp_path / "signal.md"
    signal_health.main(
        ["geo-reprojection-v1", "--levels", "1", "-n", "4", "-r", "3", "--noisy", "0,0.6"]
        + ["--runs", str(tmp_path / "runs"), "-o", str(out)]
    )
    table = out.read_text()
    assert "### geo-reprojection-v1, level 1" in table and "level 1" in capsys.readouterr().out
    rows = {
        line.split("|")[1].strip(): line.split("|")[2:]
        for line in table.splitlines()
        if line.startswith("| `")
    }
    assert float(rows["`oracle`"][2]) == 1.0
    assert float(rows["`noisy-0`"][2]) == 1.0 and float(rows["`noisy-0`"][4]) == 1.0  # p=0 is the oracle
    assert float(rows["`noisy-0.6`"][2]) < 1.0
    replies, parsed = rows["`noisy-0.6`"][1].strip(), rows["`noisy-0.6`"][6].strip()
    assert (replies, parsed) == ("12", "1.00")
    assert "`pass_reproject`" in table
    assert (tmp_path / "runs" / "geo-reprojection-v1--L1--noisy-0.6" / "traces.jsonl").exists()


def test_skill_means_count_only_tasks_that_have_the_skill(tmp_path):
    from piv_core.runs.reading import EvalRun

    def trace(task, recall, keyed):
        return {
            "task": {"data": {"id": task}},
            "rewards": {"r": {"score": 1.0, "weight": 1.0}},
            "metrics": {"recall_x": recall, "keyed_x": keyed, "recall_y": 0.0, "keyed_y": 0, "pass_z": 1.0},
        }

    run = EvalRun(tmp_path, traces=[trace("a", 1.0, 2), trace("b", 0.0, 0), trace("c", 0.5, 1)])
    result = PolicyResult.of("oracle", 1, run)
    assert result.skills == {"recall_x": [1.0, 0.5], "recall_y": [], "pass_z": [1.0, 1.0, 1.0]}
    table = signal_health.render("env", 1, [result], 3)
    assert "| 1.00 | 0.75 | – |" in table  # pass_z, recall_x, recall_y


@pytest.mark.e2e
def test_signal_for_a_named_model(tmp_path):
    """``--model`` runs that model alone, a group per task, through eval's own client arguments
    (here the baseline endpoint's model name, as a real endpoint's would be)."""
    out = tmp_path / "signal.md"
    signal_health.main(
        ["geo-reprojection-v1", "--levels", "1", "-n", "3", "-r", "2", "--model", "baseline/noisy-0.6"]
        + ["--runs", str(tmp_path / "runs"), "-o", str(out), "--sampling.temperature", "1.0"]
    )
    rows = [line.split("|")[1:-1] for line in out.read_text().splitlines() if line.startswith("| `")]
    assert [row[0].strip() for row in rows] == ["`baseline/noisy-0.6`"]
    assert [cell.strip() for cell in rows[0][1:3]] == ["2", "6"]  # group, replies
    assert (tmp_path / "runs" / "geo-reprojection-v1--L1--baseline_noisy-0.6" / "traces.jsonl").exists()


def test_the_mean_is_split_by_reward_function(tmp_path):
    from piv_core.runs.reading import EvalRun

    def trace(figures, audit):
        rewards = {"figures": {"score": figures, "weight": 0.6}, "audit": {"score": audit, "weight": 0.4}}
        return {"task": {"data": {"id": "a"}}, "rewards": rewards, "metrics": {}}

    result = PolicyResult.of("m", 2, EvalRun(tmp_path, traces=[trace(1.0, 0.0), trace(0.0, 0.5)]))
    assert result.mean == pytest.approx(0.4)
    assert result.parts_cell() == "audit 0.100 + figures 0.300"


def test_tokens_are_estimated_only_where_no_usage_was_reported(tmp_path):
    from piv_core.runs.reading import EvalRun

    def trace(task, tokens, reply):
        return {
            "task": {"data": {"id": task}},
            "rewards": {"r": {"score": 1.0, "weight": 1.0}},
            "metrics": {"parsed": 1.0},
            "num_output_tokens": tokens,
            "nodes": [{"message": {"role": "assistant", "content": reply}}],
        }

    reported = PolicyResult.of("m", 1, EvalRun(tmp_path, traces=[trace("a", 10, "x" * 400)]))
    assert reported.tokens_cell() == "10"
    assert reported.parts_cell() == "–"  # one reward function: nothing to split
    estimated = PolicyResult.of("m", 1, EvalRun(tmp_path, traces=[trace("a", None, "x" * 401)]))
    assert estimated.tokens_cell() == "~101"
