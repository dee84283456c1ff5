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
    to encode it and answers 502). The episode is stopped as `reply_unrelayable` and scored like
    any other (the reply is the model's own doing; an unscored episode would be dropped by a
    trainer that drops errored rollouts); the run saves every episode, the scrubbed trace
    included, and ends by itself."""
    import os
    import subprocess
    import sys

    from piv_core.baseline.endpoint import running_endpoint

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
    assert {t["stop_condition"] for t in traces.values()} == {"reply_unrelayable"}
    assert all(t["ok"] and t["rewards"] for t in traces.values())  # scored
    assert all(sum(r["score"] for r in t["rewards"].values()) == 0.0 for t in traces.values())
    assert all("surrogates not allowed" in t["info"]["ended_by"] for t in traces.values())
    assert done.returncode == 0, done.stdout[-2000:]
    summary = next(line for line in done.stdout.splitlines() if line.startswith("eval: r: "))
    assert "2 completed" in summary and "0 errors" in summary, summary


def _unrelayable(kind: str) -> str:
    """Tool-call arguments, as sent on the wire, that the pipeline cannot relay."""
    depth = 3000
    return {
        "arrays": "[" * depth + "]" * depth,
        "objects": '{"a":' * depth + "1" + "}" * depth,
        "mixed": '[{"a":' * (depth // 2) + "1" + "}]" * (depth // 2),
        "surrogate": '{"text": "\\ud800"}',
    }[kind]


UNRELAYABLE = ["arrays", "objects", "mixed", "surrogate"]


@pytest.mark.parametrize(
    "env_id, only",
    [(env, None) for env in TEXT_ENVS] + [("beancount-ledger", kind) for kind in UNRELAYABLE[:3]],
)
def test_a_reply_that_breaks_the_exchange_is_still_scored(env_id, only, tmp_path, monkeypatch):
    """Tool calls the pipeline cannot relay (nested past the decoder's depth in each shape) end
    their episode as `reply_unrelayable`, scored: a single-reply episode at 0, a beancount-ledger
    episode on the ledger it had already had accepted (the reference ledger, written before the
    broken `submit`), never as an unscored harness error. A lone surrogate in the arguments is
    relayed and the episode scored the ordinary way."""
    import piv_core.baseline.endpoint as endpoint
    from piv_core.plugins import load
    from piv_core.policy import ToolCall
    from piv_core.testing import run_policy_eval

    assigned: dict[str, str] = {}  # each episode's kind, kept across the SDK's retries
    message = endpoint._message

    def breaking(reply, max_tokens=None, draw=None):
        built, finish, text = message(reply, max_tokens, draw)
        for call in built.get("tool_calls") or []:
            name, _, kind = call["function"]["name"].partition(":")
            if kind:
                call["function"]["name"] = name
                call["function"]["arguments"] = _unrelayable(kind)
        return built, finish, text

    solver = load(env_id).policies["reference"] if env_id == "beancount-ledger" else None

    def policy(conversation):
        kind = only or assigned.setdefault(
            conversation.head()[1], UNRELAYABLE[len(assigned) % len(UNRELAYABLE)]
        )
        reply = solver(conversation) if solver else [ToolCall("anything", {})]
        if isinstance(reply, list):
            reply = [
                ToolCall(f"{c.name}:{kind}", c.arguments) if c.name in ("submit", "anything") else c
                for c in reply
            ]
        return reply

    monkeypatch.setattr(endpoint, "_message", breaking)
    kinds = [only] if only else UNRELAYABLE
    code, output = run_policy_eval(env_id, policy, str(tmp_path), "breaking", num_tasks=len(kinds))
    traces = _traces(tmp_path / "breaking")
    assert code == 0 and len(traces) == len(kinds), output[-2000:]
    assert only or sorted(assigned.values()) == sorted(UNRELAYABLE)
    for trace in traces.values():
        users = [
            n["message"]["content"] for n in trace["nodes"] if n.get("message", {}).get("role") == "user"
        ]
        kind = only or assigned[users[0]]
        assert trace["ok"] and trace["rewards"], trace["errors"]
        reward = sum(r["score"] * r["weight"] for r in trace["rewards"].values())
        assert reward == (1.0 if env_id == "beancount-ledger" else 0.0)
        if kind != "surrogate":
            assert trace["stop_condition"] == "reply_unrelayable" and trace["info"]["ended_by"]
