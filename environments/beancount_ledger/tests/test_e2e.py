"""Through the real `eval` command against the baseline endpoint."""

import pytest
from piv_core.testing import run_baseline_eval

SELECTORS = ["--env.taskset.selectors", '["bank_recon_001","dev:3"]']


@pytest.mark.e2e
def test_reference_scores_one(tmp_path):
    code, output, run = run_baseline_eval(
        "beancount-ledger", "reference", str(tmp_path), *SELECTORS, num_tasks=2
    )
    assert code == 0, output[-2000:]
    assert "mean reward 1.000" in output, output[-2000:]


@pytest.mark.e2e
def test_silent_ends_after_three_idle_turns(tmp_path):
    import json

    code, output, _ = run_baseline_eval(
        "beancount-ledger", "silent", str(tmp_path), *SELECTORS[:1], '["bank_recon_001"]', num_tasks=1
    )
    assert code == 0, output[-2000:]
    (line,) = (tmp_path / "beancount-ledger--silent" / "traces.jsonl").read_text().splitlines()
    trace = json.loads(line)["traces"][0]
    assert trace["stop_condition"] == "idle_turns"
    assert sum(1 for n in trace["nodes"] if n.get("sampled")) == 3
    assert trace["rewards"]["ledger"]["score"] == 0.0
    assert trace["info"]["episode_contract"]["versions"]["episode_contract"] == 1
