"""The command wrappers' argument handling and the run-directory readers."""

from __future__ import annotations

import json

from piv_core.cli import _flag_given, _toml_value, _with_local_defaults
from piv_core.runs import mean_stderr, read_eval_run, read_validate_run
from piv_core.summary import render_groups, render_table


def test_local_runtime_is_added_only_when_nothing_picks_one(tmp_path):
    config = tmp_path / "run.toml"
    config.write_text('[env.agent.runtime]\ntype = "docker"\n')
    assert _with_local_defaults(["x"], "--env.agent.runtime", "env.agent.runtime.type")[-2:] == [
        "--env.agent.runtime.type",
        "subprocess",
    ]
    assert _with_local_defaults(
        ["x", "--env.agent.runtime.type", "prime"], "--env.agent.runtime", "env.agent.runtime.type"
    ) == [
        "x",
        "--env.agent.runtime.type",
        "prime",
    ]
    assert _with_local_defaults(["@", str(config)], "--env.agent.runtime", "env.agent.runtime.type") == [
        "@",
        str(config),
    ]
    assert _toml_value(["@", str(config)], "env.agent.runtime.type") == "docker"
    assert _toml_value(["@", str(tmp_path / "missing.toml")], "model") is None
    assert _flag_given(["--run.name=x"], "--run.name") and not _flag_given(["--run"], "--run.name")


def _episode(ok=True, timeout=False, rewards=None, metrics=None):
    trace = {"rewards": rewards or {}, "metrics": metrics or {}, "calls": [{"model": "baseline/oracle"}]}
    return {"ok": ok, "is_timeout": timeout, "traces": [trace] if ok else []}


def test_read_eval_run_counts_outcomes_and_weights_rewards(tmp_path):
    episodes = [
        _episode(
            rewards={"a": {"score": 1.0, "weight": 0.6}, "b": {"score": 0.5, "weight": 0.4}}, metrics={"m": 2}
        ),
        _episode(
            rewards={"a": {"score": 0.0, "weight": 0.6}, "b": {"score": 1.0, "weight": 0.4}}, metrics={"m": 4}
        ),
        _episode(ok=False),
        _episode(ok=False, timeout=True),
    ]
    (tmp_path / "traces.jsonl").write_text("\n".join(json.dumps(e) for e in episodes) + "\n")
    run = read_eval_run(tmp_path)
    assert (run.episodes, run.completed, run.errors, run.timeouts, run.failed) == (4, 2, 1, 1, 2)
    assert run.totals() == [0.8, 0.4]
    assert run.scores("metrics") == {"m": [2.0, 4.0]}
    assert run.model == "baseline/oracle"
    table = render_table([run])
    assert "| 4 | 2 | 1 | 1 |" in table and "0.600 ± 0.200" in table and "3.000 ± 1.000" in table


def test_read_validate_run(tmp_path):
    (tmp_path / "summary.json").write_text(json.dumps({"total": 5, "outcomes": {"valid": 4, "invalid": 1}}))
    run = read_validate_run(tmp_path)
    assert (run.valid, run.total, run.ok) == (4, 5, False)


def test_mean_stderr():
    assert mean_stderr([1.0]) == (1.0, 0.0)
    mean, stderr = mean_stderr([0.0, 1.0])
    assert mean == 0.5 and abs(stderr - 0.5) < 1e-12


def test_render_groups_splits_by_an_info_key(tmp_path):
    def traced(family, score, error, answered):
        return {
            "ok": True,
            "traces": [
                {
                    "rewards": {"pass": {"score": score, "weight": 1.0}},
                    "metrics": {"error": error, "answered": answered},
                    "info": {"family": family},
                }
            ],
        }

    episodes = [traced("a", 1.0, 0.0, 1.0), traced("a", 0.0, 9.0, 1.0), traced("b", 0.0, -1.0, 0.0)]
    (tmp_path / "traces.jsonl").write_text("\n".join(json.dumps(e) for e in episodes))
    table = render_groups([read_eval_run(tmp_path)], "family", median="error", where="answered")
    assert "| 1/2 at 1.0, median error 4.5 | 0/1 at 1.0, no error (1 without answered) |" in table
