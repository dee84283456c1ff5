"""Through the real `eval` command against the baseline endpoint: the episode contract's stops.

The four runs start together (module fixture) so the suite stays short; each test reads its own.
"""

import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from beancount_ledger import contract
from beancount_ledger.taskset import make_task_data
from piv_core.testing import run_baseline_eval

RUNS = {
    "reference": ["bank_recon_001", "dev:3"],
    "silent": ["bank_recon_001"],
    "verbose": ["dev:5"],
    "late": ["dev:8"],
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e")

    def one(policy: str):
        selectors = RUNS[policy]
        code, output, _ = run_baseline_eval(
            "beancount-ledger",
            policy,
            str(out),
            "--env.taskset.selectors",
            json.dumps(selectors),
            num_tasks=len(selectors),
        )
        assert code == 0, output[-2000:]
        lines = (out / f"beancount-ledger--{policy}" / "traces.jsonl").read_text().splitlines()
        traces = [t for line in lines for t in json.loads(line)["traces"]]
        return {t["task"]["data"]["id"]: t for t in traces}

    with ThreadPoolExecutor(len(RUNS)) as pool:
        return dict(zip(RUNS, pool.map(one, RUNS)))


def _sampled(trace):
    return [n for n in trace["nodes"] if n.get("sampled")]


@pytest.mark.e2e
def test_reference_scores_one_in_concurrent_isolated_workspaces(runs):
    traces = runs["reference"]
    assert set(traces) == set(RUNS["reference"])
    for selector, trace in traces.items():
        assert trace["rewards"]["ledger"]["score"] == 1.0
        assert trace["stop_condition"] == "submitted"
        # Each rollout read and corrected its own world's ledger, never the other's.
        original = make_task_data(selector).files["ledger.beancount"]
        assert trace["info"]["ledger"].startswith(original.rstrip())


@pytest.mark.e2e
def test_silent_ends_after_three_idle_turns(runs):
    trace = runs["silent"]["bank_recon_001"]
    assert trace["stop_condition"] == "idle_turns"
    assert len(_sampled(trace)) == contract.IDLE_TURNS
    assert trace["rewards"]["ledger"]["score"] == 0.0
    assert trace["info"]["episode_contract"]["versions"] == contract.VERSIONS


@pytest.mark.e2e
def test_token_ceiling_caps_every_request_and_ends_the_episode(runs):
    trace = runs["verbose"]["dev:5"]
    assert trace["stop_condition"] == "token_ceiling"
    # The last request asked for exactly what was left; the endpoint cut the reply there.
    assert trace["num_output_tokens"] == contract.TOKEN_CEILING, trace["num_output_tokens"]
    # The ledger written before the ceiling is scored although submit was never called.
    assert trace["metrics"]["submitted"] == 0.0 and trace["rewards"]["ledger"]["score"] == 1.0


@pytest.mark.e2e
def test_tool_calls_on_the_last_turn_are_not_executed(runs):
    trace = runs["late"]["dev:8"]
    assert trace["stop_condition"] == "turn_limit"
    sampled = _sampled(trace)
    assert len(sampled) == contract.MAX_TURNS
    last = sampled[-1]["message"]
    assert [c["name"] for c in last["tool_calls"]] == ["write_ledger", "submit"]
    # Neither the write of the untouched ledger nor the submit ran: the reference ledger is scored.
    assert trace["info"]["submitted"] is False and trace["metrics"]["submitted"] == 0.0
    assert trace["rewards"]["ledger"]["score"] == 1.0
    assert trace["info"]["tool_calls"].get("submit", 0) == 0
