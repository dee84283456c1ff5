"""Through the real commands, as an operator would: a small release minted by the preflight, then
`eval` against the baseline endpoint on its keyed worlds (no development override anywhere).

The four runs start together (module fixture) so the suite stays short; each test reads its own.
"""

import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from beancount_ledger import contract, keys, release
from beancount_ledger.taskset import make_task_data
from piv_core.testing import run_baseline_eval, run_command

SECRET = "an operator's secret for the end-to-end release"
RUNS = {
    "reference": ["bank_recon_001", "eval:0", "train:0:hard"],
    "silent": ["bank_recon_001"],
    "verbose": ["eval:1"],
    "late": ["train:0"],
}


@pytest.fixture(scope="module")
def preflight(tmp_path_factory):
    """Preflight 1 train, 2 eval and 1 hard world into a fresh manifest."""
    home = tmp_path_factory.mktemp("operator")
    with pytest.MonkeyPatch.context() as env:
        env.setenv(keys.SECRET_ENV, SECRET)
        env.delenv(release.OVERRIDE_ENV, raising=False)
        env.setenv("HOME", str(home))
        code, output = run_command(
            "beancount-ledger-preflight", "--train", "1", "--eval", "2", "--hard", "1", "--workers", "2"
        )
        yield code, output, home / ".piv" / "beancount-ledger" / "manifest.json"


@pytest.fixture(scope="module")
def runs(preflight, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e")
    assert preflight[0] == 0, preflight[1][-3000:]

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
def test_the_preflight_releases_every_world_through_both_phases(preflight):
    code, output, manifest = preflight
    assert code == 0, output[-3000:]
    assert "phase 1 (offline gates): 4/4 worlds passed" in output
    assert "phase 2 (serving door): 4/4 records verified" in output
    assert "released: 4/4 (train 1/1, eval 2/2, hard 1/1)" in output
    records = json.loads(manifest.read_text())["body"]["records"]
    assert sorted(records) == ["eval:0", "eval:1", "train:0", "train:0:hard"]


@pytest.mark.e2e
def test_unreleased_selectors_are_refused_by_eval(runs, tmp_path):
    code, output, run = run_baseline_eval(
        "beancount-ledger", "reference", str(tmp_path), "--env.taskset.selectors", '["eval:2"]', num_tasks=1
    )
    assert code != 0 and run is None
    assert "not in the manifest" in output and "'eval:2'" in output


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
    trace = runs["verbose"]["eval:1"]
    assert trace["stop_condition"] == "token_ceiling"
    # The last request asked for exactly what was left; the endpoint cut the reply there.
    assert trace["num_output_tokens"] == contract.TOKEN_CEILING, trace["num_output_tokens"]
    # The ledger written before the ceiling is scored although submit was never called.
    assert trace["metrics"]["submitted"] == 0.0 and trace["rewards"]["ledger"]["score"] == 1.0


@pytest.mark.e2e
def test_tool_calls_on_the_last_turn_are_not_executed(runs):
    trace = runs["late"]["train:0"]
    assert trace["stop_condition"] == "turn_limit"
    sampled = _sampled(trace)
    assert len(sampled) == contract.MAX_TURNS
    last = sampled[-1]["message"]
    assert [c["name"] for c in last["tool_calls"]] == ["write_ledger", "submit"]
    # Neither the write of the untouched ledger nor the submit ran: the reference ledger is scored.
    assert trace["info"]["submitted"] is False and trace["metrics"]["submitted"] == 0.0
    assert trace["rewards"]["ledger"]["score"] == 1.0
    assert trace["info"]["tool_calls"].get("submit", 0) == 0
