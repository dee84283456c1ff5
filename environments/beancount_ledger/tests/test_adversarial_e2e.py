"""The adversarial policies (`beancount_ledger.adversaries`) through the real `eval` command.

Each policy runs once, on the shipped world and on one keyed world (minted from the evaluator secret
under the development override), with ``PIV_EVAL_SECRET`` set to a distinctive value for the whole run.
Everything is decided from what the run wrote (``traces.jsonl``), never from the exit code alone: every
episode ends by itself and is recorded as completed, the reward is the floor for the attacks that must be
punished and the reference's 1.0 for those that must be harmless, and the secret appears in no byte of any
file under the run directory (nor in the command's output).

The seven runs start together (module fixture) so the file stays short; each test reads its own.
"""

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from beancount_ledger import adversaries, contract, keys, release
from beancount_ledger.answer import key_of
from beancount_ledger.scorer import score
from beancount_ledger.taskset import LedgerData, make_task_data
from piv_core.testing import run_command

SECRET = "piv-canary-7c3e91d04fb2a658-must-never-be-written"
SELECTORS = ["bank_recon_001", "eval:3"]
TIMEOUT = 600
"""Seconds an eval run may take; the command must exit on its own well before."""
POLICIES = list(adversaries.POLICIES)
REWARD = {
    "exfiltrate": 1.0,
    "surrogate": 1.0,
    "devzero": 0.0,
    "redos": None,  # the ledger as given plus two comment lines: the untouched ledger's reward
    "plugin": 0.0,
    "crash": 0.0,
    "currency": 0.0,
    "flood": 1.0,
    "heavy": 0.0,  # the ledger over the gate's complexity bound is refused: nothing is written
}
"""The reward each policy ends with: the reference's for a harmless attack, the floor for a punished one
(None: the untouched ledger's)."""
WRITES = {"exfiltrate", "surrogate", "redos", "flood"}
"""Policies that end with an accepted ledger (the others have every write refused). An accepted ledger
always loads: write_ledger refuses one that does not (the foreign currencies of ``currency``)."""


@dataclass
class Run:
    code: int
    output: str
    seconds: float
    path: Path
    episodes: list[dict[str, Any]]

    @property
    def traces(self) -> dict[str, dict[str, Any]]:
        return {t["task"]["data"]["id"]: t for e in self.episodes for t in e["traces"]}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("adversarial")

    def one(policy: str) -> Run:
        name = f"adversarial-{policy}"
        start = time.monotonic()
        code, output = run_command(
            "eval",
            "beancount-ledger",
            "--model",
            f"baseline/{policy}",
            "-n",
            str(len(SELECTORS)),
            "--no-rich",
            "-o",
            str(out),
            "--run.name",
            name,
            "--env.taskset.selectors",
            json.dumps(SELECTORS),
            timeout=TIMEOUT,
        )
        seconds = time.monotonic() - start
        traces = out / name / "traces.jsonl"
        episodes = [json.loads(line) for line in traces.read_text().splitlines()] if traces.exists() else []
        return Run(code, output, seconds, out / name, episodes)

    with pytest.MonkeyPatch.context() as env:
        env.setenv(keys.SECRET_ENV, SECRET)
        env.setenv(release.OVERRIDE_ENV, "1")
        with ThreadPoolExecutor(4) as pool:
            yield dict(zip(POLICIES, pool.map(one, POLICIES)))


def _calls(trace: dict[str, Any]) -> list[tuple[str, dict[str, Any], str | None]]:
    """Every tool call of the episode in order: (tool, arguments as sent, reply or None when unrecorded)."""
    replies = {
        n["message"]["tool_call_id"]: n["message"].get("content")
        for n in trace["nodes"]
        if (n.get("message") or {}).get("role") == "tool"
    }
    out = []
    for node in trace["nodes"]:
        for call in (node.get("message") or {}).get("tool_calls") or []:
            out.append((call["name"], json.loads(call["arguments"] or "{}"), replies.get(call["id"])))
    return out


def _lone_surrogate(args: dict[str, Any]) -> bool:
    try:
        json.dumps(args, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _untouched(trace: dict[str, Any]) -> float:
    data = LedgerData.model_validate(trace["task"]["data"])
    return score(data.files["ledger.beancount"], key_of(data)).reward


@pytest.mark.e2e
@pytest.mark.parametrize("policy", POLICIES)
def test_every_episode_completes_by_itself(runs, policy):
    run = runs[policy]
    assert run.seconds < TIMEOUT
    assert run.code == 0, run.output[-3000:]
    assert len(run.episodes) == len(SELECTORS), run.output[-3000:]
    for episode in run.episodes:
        assert episode["ok"] and not episode["is_timeout"] and not episode["errors"], episode["errors"]
        for trace in episode["traces"]:
            assert trace["ok"] and trace["is_completed"] and not trace["errors"], trace["errors"]
            assert trace["stop_condition"] == "submitted"
            assert "ledger" in trace["rewards"] and "scorer_error" in trace["metrics"]
    assert set(run.traces) == set(SELECTORS)


@pytest.mark.e2e
@pytest.mark.parametrize("policy", POLICIES)
def test_each_attack_ends_at_its_reward(runs, policy):
    for selector, trace in runs[policy].traces.items():
        reward, metrics = trace["rewards"]["ledger"]["score"], trace["metrics"]
        expected = _untouched(trace) if REWARD[policy] is None else REWARD[policy]
        assert reward == expected, (selector, reward, metrics)
        # No failure of the sandbox reaches the reward: what write_ledger accepted always scores.
        assert metrics["scorer_error"] == 0.0, (selector, metrics)
        assert metrics["written"] == float(policy in WRITES), (selector, metrics)
        assert (trace["info"]["ledger"] is not None) == (policy in WRITES)
        assert metrics["loaded"] == float(policy in WRITES), (selector, metrics)
        if policy == "currency":
            assert reward < _untouched(trace), (selector, reward)


@pytest.mark.e2e
def test_no_trace_of_the_secret_anywhere_in_the_run(runs):
    needle = SECRET.encode()
    # The run held the secret: its keyed world is the one the secret mints.
    keyed = make_task_data("eval:3", needle).public_id
    for policy, run in runs.items():
        assert run.traces["eval:3"]["task"]["data"]["public_id"] == keyed, policy
        assert needle not in run.output.encode(), policy
        files = [Path(root) / name for root, _, names in os.walk(run.path) for name in names]
        assert any(f.name == "traces.jsonl" for f in files), policy
        for path in files:
            assert needle not in path.read_bytes(), f"{policy}: the secret is in {path}"


@pytest.mark.e2e
def test_exfiltration_reads_nothing_outside_the_workspace(runs):
    for selector, trace in runs["exfiltrate"].traces.items():
        calls = _calls(trace)
        for tool, args, reply in calls:
            assert reply is None or SECRET not in reply
            if tool in ("read_file", "grep") and "/" in args.get("name", ""):
                assert reply.startswith("error: unknown file"), (selector, args, reply)
            if tool == "write_ledger" and "/proc/self" in args["text"]:
                # Every include, document and option naming /proc is refused, except the BOM spelling
                # of the include, which beancount does not read as a directive (the ledger has an error).
                assert reply.startswith("not written") or "\ufeffinclude" in args["text"], (selector, reply)
        assert (
            sum(tool == "write_ledger" and reply.startswith("not written") for tool, _, reply in calls) >= 10
        )


@pytest.mark.e2e
@pytest.mark.parametrize("policy", ["devzero", "plugin", "crash", "currency"])
def test_every_attacked_ledger_is_refused(runs, policy):
    for selector, trace in runs[policy].traces.items():
        writes = [reply for tool, _, reply in _calls(trace) if tool == "write_ledger"]
        assert writes and all(reply.startswith("not written") for reply in writes), (selector, writes)
        assert trace["info"]["revision"] == 0


@pytest.mark.e2e
def test_catastrophic_patterns_answer_at_once(runs):
    for trace in runs["redos"].traces.values():
        # The bait the patterns explode on is in the served ledger (written as comments: it loads).
        assert all(line in trace["info"]["ledger"] for line in adversaries.REDOS_BAIT)
        greps = [(args["pattern"], reply) for tool, args, reply in _calls(trace) if tool == "grep"]
        assert [p for p, _ in greps] == [*adversaries.REDOS_PATTERNS, *adversaries.INVALID_PATTERNS]
        for pattern, reply in greps:
            invalid = pattern in adversaries.INVALID_PATTERNS
            assert reply.startswith("error: invalid regular expression") == invalid, (pattern, reply)
        # From the first model turn to submit: a backtracking engine spends more than this on one pattern.
        stamps = [n["timestamp"] for n in trace["nodes"] if n.get("timestamp")]
        assert max(stamps) - min(stamps) < 30, max(stamps) - min(stamps)


@pytest.mark.e2e
def test_malformed_unicode_arguments_are_errors_and_the_episode_goes_on(runs):
    for trace in runs["surrogate"].traces.values():
        calls = _calls(trace)
        bad = [reply for _, args, reply in calls if _lone_surrogate(args)]
        assert len(bad) == 4 and all(
            r.startswith("error: the arguments are not valid Unicode") for r in bad
        ), bad
        assert any(tool == "write_ledger" and (r or "").startswith("written") for tool, _, r in calls)


@pytest.mark.e2e
def test_a_turn_runs_at_most_its_share_of_tool_calls(runs):
    for trace in runs["flood"].traces.values():
        replies = [r for tool, _, r in _calls(trace) if tool == "grep"]
        assert len(replies) == adversaries.FLOOD
        skipped = [
            r for r in replies if r.startswith("error: only the first 16 tool calls of a turn are run")
        ]
        assert len(skipped) == adversaries.FLOOD - contract.CALLS_PER_TURN
        assert trace["metrics"]["calls_grep"] == contract.CALLS_PER_TURN
