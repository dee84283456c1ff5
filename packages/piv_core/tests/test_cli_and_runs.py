"""The command wrappers' argument handling and the run-directory readers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from piv_core.cli.commands import _flag_given, _toml_value, _with_local_defaults
from piv_core.runs.reading import (
    EvalRun,
    completion_tokens,
    last_reply,
    mean_stderr,
    natural_key,
    read_eval_run,
    read_validate_run,
    task_key,
    tool_calls,
    trace_total,
)
from piv_core.runs.summary import chart_labels, metric_values, render_groups, render_table, run_labels


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
    with pytest.raises(SystemExit, match="missing.toml: No such file"):
        _toml_value(["@", str(tmp_path / "missing.toml")], "model")
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


def _write(path, *episodes):
    path.mkdir(parents=True)
    (path / "traces.jsonl").write_text("".join(json.dumps(e) + "\n" for e in episodes))
    return path


def test_summary_tells_runs_of_one_model_apart_counts_absent_calls_as_0_and_shows_stops(tmp_path):
    def tool_episode(stop, metrics):
        trace = {"rewards": {"r": {"score": 1.0}}, "metrics": metrics, "stop_condition": stop}
        return {"ok": True, "traces": [{**trace, "calls": [{"model": "baseline/oracle"}]}]}

    runs = [
        read_eval_run(
            _write(
                tmp_path / parent / "oracle",
                tool_episode("submitted", {"calls_grep": 2.0}),
                tool_episode("submitted", {}),
                tool_episode("turn_limit", {}),
            )
        )
        for parent in ("x", "y", "z")
    ]
    assert run_labels(runs) == ["x/oracle", "y/oracle", "z/oracle"]
    assert chart_labels(runs) == [f"{p}/oracle (baseline/oracle)" for p in "xyz"]
    table = render_table(runs)
    assert (
        "| x/oracle | baseline/oracle | 3 | 3 | 0 | 0 | 1.000 ± 0.000 | submitted 2, turn_limit 1 |" in table
    )
    assert "0.667 ± 0.667" in table  # calls_grep: 2, 0, 0
    assert metric_values(runs[0], "calls_grep") == [2.0, 0.0, 0.0]


def test_run_labels_number_runs_that_share_a_path_name():
    runs = [EvalRun(Path("/r/a")), EvalRun(Path("/r/a")), EvalRun(Path("/s/b"))]
    assert run_labels(runs) == ["r/a #1", "r/a #2", "b"]


def test_trace_readers():
    trace = {
        "task": {"data": {"idx": 3}},
        "calls": [{"usage": {"completion_tokens": 4}}, {"usage": {"completion_tokens": 6}}],
        "nodes": [
            {"message": {"role": "assistant", "content": "first"}},
            {"message": {"role": "assistant", "tool_calls": [{"name": "grep", "arguments": '{"p": 1}'}]}},
            {"message": {"role": "tool", "content": "x"}},
            {
                "message": {
                    "role": "assistant",
                    "tool_calls": [{"function": {"name": "submit", "arguments": {}}}],
                }
            },
        ],
    }
    assert (task_key(trace), completion_tokens(trace), trace_total(trace)) == ("3", 10, None)
    assert tool_calls(trace) == [("grep", '{"p": 1}'), ("submit", "{}")]
    assert last_reply(trace) == "first"
    assert sorted(["t-10", "t-2", "b", "t-1"], key=natural_key) == ["b", "t-1", "t-2", "t-10"]


def test_failed_episodes_are_kept_with_their_task_and_errors(tmp_path):
    failed = {"ok": False, "task": {"data": {"id": "t-1"}}, "errors": ["boom"], "num_output_tokens": 9}
    run = read_eval_run(_write(tmp_path / "r", failed, {"ok": False, "is_timeout": True, "traces": [{}]}))
    assert run.failures[0] == {
        "id": None,
        "task": "t-1",
        "timeout": False,
        "traced": False,
        "tokens": 9,
        "errors": ["boom"],
        "reason": "boom",
        "rollouts": [],
    }
    assert run.failures[1]["timeout"] and run.failures[1]["traced"]


def test_timeouts_and_errors_are_counted_from_the_traces(tmp_path):
    """verifiers 0.4 marks a timeout or an error on the trace; the episode record can still read ok."""
    timed_out = {
        "id": "t",
        "task": {"data": {"timeout": {"agent": 900.0}}},
        "agent": {"config": {"timeout": {"rollout": 4.0}}},
        "ok": True,
        "is_timeout": True,
        "stop_condition": "agent_timeout",
        "errors": [],
    }
    failed = {
        "id": "f",
        "ok": False,
        "errors": [{"type": "ProviderError", "message": "All connection attempts failed"}],
    }
    silent = {"id": "abc123", "ok": False, "errors": []}
    run_dir = _write(
        tmp_path / "r",
        {"ok": True, "traces": [timed_out]},
        {"ok": True, "traces": [failed]},
        {"ok": True, "traces": [silent]},
        {"ok": True, "traces": [{"ok": True, "rewards": {"r": {"score": 1.0}}}]},
    )
    log = run_dir / "logs" / "latest" / "eval.log"
    log.parent.mkdir(parents=True)
    log.write_text(
        "21:40:49 INFO start\n21:40:49 WARNING model call failed: id=abc123 ProviderError: refused\n"
    )
    run = read_eval_run(run_dir)
    assert (run.episodes, run.completed, run.errors, run.timeouts) == (4, 1, 2, 1)
    assert [f["reason"] for f in run.failures] == [
        "agent_timeout (the 4 s rollout limit)",
        "ProviderError: All connection attempts failed",
        "model call failed: ProviderError: refused",
    ]
    line = run.one_line()
    assert line.startswith("r: 4 episodes, 1 completed, 2 errors, 1 timeout, mean reward 1.000; ")
    assert "first timeout: task t: agent_timeout (the 4 s rollout limit)" in line and str(log) in line
    del timed_out["agent"]
    run = read_eval_run(_write(tmp_path / "s", {"ok": True, "traces": [timed_out]}))
    assert run.failures[0]["reason"] == "agent_timeout (the 900 s rollout limit)"
    assert run.one_line() == (
        "s: 1 episode, 0 completed, 0 errors, 1 timeout, no reward recorded; "
        "first timeout: task t: agent_timeout (the 900 s rollout limit)"
    )


@pytest.mark.parametrize("command", ["eval", "validate"])
@pytest.mark.parametrize(
    "body, says",
    [
        ('level = "1"', "level must be a TOML integer, got '1'"),
        ("level = true", "level must be a TOML integer, got True"),
        ("level = 1.0", "level must be a TOML integer, got 1.0"),
        ("level = [", "not TOML"),
    ],
)
def test_config_files_are_checked_before_verifiers_reads_them(tmp_path, command, body, says):
    from piv_core.cli import commands as cli

    table = "[env.taskset]" if command == "eval" else "[taskset]"
    config = tmp_path / "run.toml"
    config.write_text(f'{table}\nid = "au-bas-reconciliation-v1"\n{body}\n')
    main = cli.eval_main if command == "eval" else cli.validate_main
    with pytest.raises(SystemExit) as raised:
        main(["@", str(config), "--model", "baseline/oracle", "-n", "1"])
    assert says in str(raised.value.code) and str(config) in str(raised.value.code)


@pytest.mark.parametrize("target", ["/dev/zero", "directory"])
def test_a_config_file_that_is_not_a_regular_file_is_refused(tmp_path, target):
    from piv_core.cli import commands as cli

    path = tmp_path if target == "directory" else tmp_path / "zero.toml"
    if target != "directory":
        path.symlink_to(target)
    with pytest.raises(SystemExit) as raised:
        cli.eval_main(["@", str(path), "--model", "baseline/oracle", "-n", "1"])
    assert "not a regular file" in str(raised.value.code)
