"""Through the real `eval` command: traces.jsonl holds every tool reply the model's calls got
(the last executed turn's included, and the unexecuted final turn's calls with their error),
and the reasoning-replay knob decides what later requests carry, with both arms recorded.

The reasoning arms run against an endpoint of this test's own (`piv_core.testing.run_policy_eval`
serving one policy): the reference bookkeeper with a reasoning field on every reply (`Reasoned`), which
also records every request it answers.
"""

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from beancount_ledger import baselines, contract, harness, limits
from piv_core.policy import Conversation, Reasoned
from piv_core.testing import run_baseline_eval, run_policy_eval


def _traces(run_dir) -> list[dict]:
    lines = (run_dir / "traces.jsonl").read_text().splitlines()
    return [trace for line in lines for trace in json.loads(line)["traces"]]


def _unanswered(trace: dict) -> list[str]:
    """Ids of the tool calls the model made that no tool message in the trace answers."""
    called = [
        call["id"]
        for node in trace["nodes"]
        if node.get("sampled")
        for call in node["message"].get("tool_calls") or []
    ]
    answered = {
        node["message"].get("tool_call_id") for node in trace["nodes"] if node["message"]["role"] == "tool"
    }
    return [c for c in called if c not in answered]


@pytest.fixture(scope="module")
def baseline_runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("loop-e2e")

    def one(policy: str):
        code, output, _ = run_baseline_eval("beancount-ledger", policy, str(out), num_tasks=1)
        assert code == 0, output[-2000:]
        return _traces(out / f"beancount-ledger--{policy}")[0]

    with ThreadPoolExecutor(2) as pool:
        return dict(zip(["reference", "late"], pool.map(one, ["reference", "late"])))


@pytest.mark.e2e
def test_the_last_executed_turns_replies_are_in_the_trace(baseline_runs):
    trace = baseline_runs["reference"]
    assert trace["stop_condition"] == "submitted" and trace["rewards"]["ledger"]["score"] == 1.0
    assert _unanswered(trace) == []
    last = trace["nodes"][-1]["message"]
    assert (
        last["role"] == "tool"
        and last["name"] == "submit"
        and last["content"].startswith("submitted (revision 1)")
    )


@pytest.mark.e2e
def test_the_final_turns_unexecuted_calls_are_in_the_trace_with_their_error(baseline_runs):
    trace = baseline_runs["late"]
    assert trace["stop_condition"] == "turn_limit"
    assert _unanswered(trace) == []
    sampled = [n for n in trace["nodes"] if n.get("sampled")]
    assert len(sampled) == limits.MAX_TURNS
    final_ids = [c["id"] for c in sampled[-1]["message"]["tool_calls"]]
    replies = {
        n["message"]["tool_call_id"]: n["message"] for n in trace["nodes"] if n["message"]["role"] == "tool"
    }
    assert [replies[i]["content"] for i in final_ids] == [harness.unexecuted_error("turn_limit")] * 2
    # Recorded, not run: the write of the untouched ledger and the submit never happened.
    assert trace["info"]["submitted"] is False and trace["rewards"]["ledger"]["score"] == 1.0


class Recorder:
    """The reasoned reference policy, keeping every request's messages."""

    def __init__(self) -> None:
        self.requests: list[list[dict]] = []
        self.lock = threading.Lock()

    def __call__(self, conversation: Conversation) -> Reasoned:
        with self.lock:
            self.requests.append(conversation.messages)
        turn = sum(1 for m in conversation.messages if m.get("role") == "assistant")
        return Reasoned(baselines.reference(conversation), reasoning=f"reasoning of turn {turn}")


@pytest.fixture(scope="module")
def reasoning_arms(tmp_path_factory):
    out = tmp_path_factory.mktemp("reasoning")
    arms = {}
    for replay in (True, False):
        recorder = Recorder()
        name = f"replay-{replay}"
        knob = [] if replay else ["--env.agent.harness.id", "beancount-ledger"]
        knob += [] if replay else ["--env.agent.harness.replay-reasoning", "False"]
        code, output = run_policy_eval("beancount-ledger", recorder, str(out), name, *knob)
        assert code == 0, output[-2000:]
        arms[replay] = (recorder.requests, _traces(out / name)[0])
    return arms


def _carried(request: list[dict]) -> list[str | None]:
    return [m.get("reasoning_content") for m in request if m.get("role") == "assistant"]


@pytest.mark.e2e
def test_by_default_later_requests_carry_the_earlier_reasoning(reasoning_arms):
    requests, trace = reasoning_arms[True]
    assert [_carried(r) for r in requests] == [
        [f"reasoning of turn {t}" for t in range(n)] for n in range(len(requests))
    ]
    assert trace["rewards"]["ledger"]["score"] == 1.0 and trace["info"]["replay_reasoning"] is True
    assert trace["info"]["episode_contract"]["digest"] == contract.episode_digest()["digest"]


@pytest.mark.e2e
def test_withheld_reasoning_never_reaches_a_later_request(reasoning_arms):
    requests, trace = reasoning_arms[False]
    assert len(requests) == len(reasoning_arms[True][0]) >= 4
    assert all(_carried(r) == [None] * len(_carried(r)) for r in requests)
    assert trace["rewards"]["ledger"]["score"] == 1.0 and trace["info"]["replay_reasoning"] is False
    recorded = trace["info"]["episode_contract"]
    assert recorded["harness"] == {"replay_reasoning": False}
    assert recorded["digest"] == contract.episode_digest(replay_reasoning=False)["digest"]
    assert recorded["digest"] != contract.episode_digest()["digest"]
    # The model's replies are recorded with their reasoning; what later requests showed it is
    # recorded beside them, without.
    sampled = [n["message"] for n in trace["nodes"] if n.get("sampled")]
    assert [m.get("reasoning_content") for m in sampled] == [
        f"reasoning of turn {t}" for t in range(len(sampled))
    ]
    assert _unanswered(trace) == []
