"""verifiers' ``vf-replay`` on every environment's runs (`piv_core.tasksets.rescoring`), through the real
commands: a run re-scored as it is gives its own scores, and re-scored under a changed scoring knob
gives what a fresh ``eval`` under that knob gives the same replies, each trace saying which rules
scored it. The knobs changed are scoring-only ones, so the fresh run's prompts, and the scripted
policy's replies, are the run's own (checked)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from piv_core.tasksets.rescoring import SCORED_UNDER
from piv_core.testing import run_baseline_eval, run_command

pytestmark = pytest.mark.e2e

CASES = {
    "au-bas-reconciliation-v1": (["--env.taskset.num-transactions", "8"], {"figure-credit": "partial"}),
    "us-sut-reconciliation-v1": ([], {"figure-credit": "partial"}),
    "geo-reprojection-v1": ([], {"graded": "True", "graded-halflife": "1e7"}),
    "beancount-ledger": (
        ["--env.taskset.selectors", '["dev:0:level13", "dev:1:level13"]'],
        {"scorer-contract": "5"},
    ),
}
"""Per environment: the run's knobs, and the scoring knobs a re-scoring changes, with their new
values (geo: a one-part task's prompt does not state its scoring; a half-life of 10,000 km gives
the scripted policy's far misses some credit)."""


def _scored(run_dir: Path) -> dict[str, tuple[float, str, dict]]:
    """Each trace of a run by task id: its reward, its last reply, and the rules it was scored under."""
    out = {}
    for line in (run_dir / "traces.jsonl").read_text().splitlines():
        for trace in json.loads(line)["traces"]:
            reward = sum(r["score"] * r["weight"] for r in trace["rewards"].values())
            replies = [_without_call_ids(n["message"]) for n in trace["nodes"] if n.get("sampled")]
            out[trace["task"]["data"]["id"]] = (
                round(reward, 9),
                json.dumps(replies),
                trace["info"][SCORED_UNDER],
            )
    return out


def _without_call_ids(message: dict) -> dict:
    """A reply without its tool calls' ids, which the endpoint draws at random for each call."""
    calls = [{k: v for k, v in call.items() if k != "id"} for call in message.get("tool_calls") or []]
    return {**message, "tool_calls": calls}


def _flags(prefix: str, changes: dict[str, str]) -> list[str]:
    return [part for knob, value in changes.items() for part in (prefix + knob, value)]


def _as_recorded(value: str) -> object:
    """A knob's command-line text as its value is recorded (``True`` -> true, ``1e7`` -> 1e7)."""
    try:
        return json.loads(value.lower())
    except ValueError:
        return value


def _replay(run_dir: Path, out: Path, *flags: str) -> dict[str, tuple[float, str, dict]]:
    code, output = run_command("vf-replay", str(run_dir), "--no-rich", "-o", str(out), *flags, timeout=300)
    assert code == 0 and "Traceback" not in output, output[-3000:]
    return _scored(out)


@pytest.mark.parametrize("env_id", list(CASES))
def test_a_run_re_scored_as_it_is_and_under_a_changed_knob_matches_a_fresh_eval(
    tmp_path, monkeypatch, env_id
):
    knobs, changes = CASES[env_id]
    monkeypatch.setenv("PIV_DEV_UNMANIFESTED", "1")  # beancount-ledger's dev worlds, for tests
    code, output, run = run_baseline_eval(env_id, "noisy-0.3", str(tmp_path), *knobs, num_tasks=3)
    assert code == 0 and run is not None, output[-3000:]
    run_dir = tmp_path / f"{env_id}--noisy-0.3"
    original = _scored(run_dir)
    assert len(original) >= 2

    as_is = _replay(run_dir, tmp_path / "as-is")
    assert {k: v[:2] for k, v in as_is.items()} == {k: v[:2] for k, v in original.items()}

    changed = _replay(run_dir, tmp_path / "changed", *_flags("--taskset.task.", changes))
    fresh_flags = _flags("--env.taskset.task.", changes)
    code, output, _ = run_baseline_eval(
        env_id, "noisy-0.3", str(tmp_path / "fresh"), *knobs, *fresh_flags, num_tasks=3
    )
    assert code == 0, output[-3000:]
    fresh = _scored(tmp_path / "fresh" / f"{env_id}--noisy-0.3")
    assert {k: v[1] for k, v in fresh.items()} == {k: v[1] for k, v in original.items()}  # the same replies
    assert {k: v[0] for k, v in changed.items()} == {k: v[0] for k, v in fresh.items()}
    assert {k: v[0] for k, v in changed.items()} != {k: v[0] for k, v in original.items()}  # the knob counts

    for task_id, (_, _, rules) in changed.items():
        assert rules["environment"] == env_id and rules["version"]
        assert rules == fresh[task_id][2] != original[task_id][2]
        for knob, value in changes.items():
            assert rules["task"][knob.replace("-", "_")] == _as_recorded(value)
