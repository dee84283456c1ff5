"""The real `eval` pipeline against the baseline endpoint, judged from the traces it writes."""

from __future__ import annotations

import pytest
from piv_core.testing import run_baseline_eval

ENV_ID = "geo-reprojection-v1"
pytestmark = pytest.mark.e2e


def _traces(policy: str, tmp_path) -> list[dict]:
    _, output, run = run_baseline_eval(ENV_ID, policy, str(tmp_path), num_tasks=4)
    assert run is not None, output[-2000:]
    assert run.completed == 4 and run.failed == 0, output[-2000:]
    return run.traces


def test_oracle_passes_every_task(tmp_path):
    traces = _traces("oracle", tmp_path)
    assert len(traces) == 4
    for trace in traces:
        assert trace["rewards"]["within_tolerance"]["score"] == 1.0
        assert trace["metrics"]["answered"] == 1.0 and trace["metrics"]["error"] < 1e-3
        assert trace["info"]["family"] == trace["task"]["data"]["family"]


def test_echo_fails_every_task(tmp_path):
    traces = _traces("echo", tmp_path)
    assert len(traces) == 4
    for trace in traces:
        assert trace["rewards"]["within_tolerance"]["score"] == 0.0
        metrics = trace["metrics"]
        assert metrics["answered"] == 0.0 or metrics["error_ratio"] > 100
