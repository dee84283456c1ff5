"""The in-process harnesses against verifiers' process-based ones, through the real `eval`.

The single-reply environments' default harness runs verifiers' chat program in-process; its
traces must carry what the process-based `null` harness's carry (every message, every call's
model, sampling, usage and finish reason, the rewards and metrics), differing only in ids and
times. `null` stays selectable (`bash` runs only in a container: tests/test_confinement.py).
"""

import json
from pathlib import Path

import pytest
from piv_core.testing import run_baseline_eval

pytestmark = pytest.mark.e2e

TEXT_ENVS = ["au-bas-reconciliation-v1", "us-sut-reconciliation-v1", "geo-reprojection-v1"]
VOLATILE = {"id", "timestamp", "time", "timing", "agent"}


def _traces(run_dir: Path) -> dict[str, dict]:
    lines = (run_dir / "traces.jsonl").read_text().splitlines()
    traces = [t for line in lines for t in json.loads(line)["traces"]]
    return {t["task"]["data"]["id"]: t for t in traces}


def _content(value):
    """A trace without its ids, timestamps and harness identity."""
    if isinstance(value, dict):
        return {k: _content(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_content(v) for v in value]
    return value


@pytest.mark.parametrize("env_id", TEXT_ENVS)
def test_in_process_traces_match_the_null_harness(env_id, tmp_path):
    runs = {}
    for harness in ("default", "null"):
        extra = () if harness == "default" else ("--env.agent.harness.id", "null")
        out = tmp_path / harness
        code, output, _ = run_baseline_eval(env_id, "oracle", str(out), *extra, num_tasks=3)
        assert code == 0, output[-2000:]
        runs[harness] = _traces(out / f"{env_id}--oracle")
    assert sorted(runs["default"]) == sorted(runs["null"]) and len(runs["null"]) == 3
    for task_id, trace in runs["default"].items():
        other = runs["null"][task_id]
        assert trace["agent"]["config"]["harness"]["id"] == env_id
        assert other["agent"]["config"]["harness"]["id"] == "null"
        assert trace["ok"] and trace["stop_condition"] == other["stop_condition"] == "agent_completed"
        assert _content(trace) == _content(other)


def test_a_reply_with_a_lone_surrogate_loses_nothing(tmp_path):
    """verifiers' interception server cannot forward a reply carrying a lone surrogate (it fails
    to encode it and answers 502), so such an episode ends as a harness error with no reward, as
    `piv_core.harness` says; the run still saves every episode, the scrubbed trace included, and
    ends by itself, its summary naming the reason."""
    import os
    import subprocess
    import sys

    from piv_core.endpoint import running_endpoint

    def policy(conversation):
        return "<answer>\ud800</answer>"

    with running_endpoint({"surrogate": policy}) as url:
        done = subprocess.run(
            [
                os.path.join(os.path.dirname(sys.executable), "eval"),
                "au-bas-reconciliation-v1",
                "--model",
                "surrogate",
                "-n",
                "2",
                "--no-rich",
                "-o",
                str(tmp_path),
                "--run.name",
                "r",
                "--client.base-url",
                url,
                "--client.api-key-var",
                "PIV_TEST_KEY",
            ],
            capture_output=True,
            text=True,
            env={**os.environ, "PIV_TEST_KEY": "x"},
            timeout=600,
            stdin=subprocess.DEVNULL,
        )
    traces = _traces(tmp_path / "r")
    assert len(traces) == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert {t["stop_condition"] for t in traces.values()} == {"harness_error"}
    assert all(not t["rewards"] and not t["ok"] for t in traces.values())  # not scored
    replies = [n["message"]["content"] for t in traces.values() for n in t["nodes"] if n.get("message")]
    assert "<answer>\ufffd</answer>" in replies  # scrubbed, so the run could be saved
    assert done.returncode != 0  # errored episodes are reported, not hidden
    summary = next(line for line in done.stdout.splitlines() if line.startswith("eval: r: "))
    assert "2 errors" in summary and "surrogates not allowed" in summary, summary
    assert "Traceback" not in summary
