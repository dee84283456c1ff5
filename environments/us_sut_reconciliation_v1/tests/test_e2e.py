"""End to end: the real `eval` command against the baseline endpoint, judged from the traces it writes."""

from __future__ import annotations

from pathlib import Path

import pytest
from piv_core.runs.reading import EvalRun
from piv_core.testing import run_baseline_eval

ENV_ID = "us-sut-reconciliation-v1"
NUM_TASKS = 3

pytestmark = pytest.mark.e2e


def _run(policy: str, output_dir: Path) -> EvalRun:
    code, output, run = run_baseline_eval(ENV_ID, policy, str(output_dir), num_tasks=NUM_TASKS)
    assert run is not None, output[-2000:]
    assert (run.episodes, run.completed, run.failed) == (NUM_TASKS, NUM_TASKS, 0), output[-2000:]
    assert code == 0, output[-2000:]
    return run


def test_oracle_earns_full_marks(tmp_path: Path) -> None:
    run = _run("oracle", tmp_path)
    assert len(run.traces) == NUM_TASKS
    for trace in run.traces:
        rewards = trace["rewards"]
        assert {n: r["score"] for n, r in rewards.items()} == {"return_correct": 1.0, "fault_audit": 1.0}
        assert {n: r["weight"] for n, r in rewards.items()} == {"return_correct": 0.6, "fault_audit": 0.4}
        assert trace["metrics"]["answer_parsed"] == trace["metrics"]["fields_correct"] == 1.0
    assert run.totals() == pytest.approx([1.0] * NUM_TASKS)


def test_gross_only_files_a_wrong_return_and_finds_nothing(tmp_path: Path) -> None:
    run = _run("gross-only", tmp_path)
    assert len(run.traces) == NUM_TASKS
    for trace in run.traces:
        assert trace["metrics"]["answer_parsed"] == 1.0
        assert trace["rewards"]["return_correct"]["score"] == 0.0
        assert trace["rewards"]["fault_audit"]["score"] == 0.0
    assert max(run.totals()) == 0.0
