"""The suite's commands end to end: `eval` against the baseline endpoint, `validate`, `summarize`.

The repository's short names (the seeds' command lines) are exercised here; the installed
packages' prefixed names (`piv-eval`, ...) are the same entry points, and everything else
runs through them. Exit codes are checked, but every claim about scores is read from what
the run wrote (traces.jsonl / summary.json): verifiers itself exits 0 even when every rollout
failed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from piv_core.runs.reading import read_validate_run
from piv_core.testing import run_baseline_eval, run_command

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]
CONFIG = str(ROOT / "configs" / "au-bas-reconciliation.toml")


@pytest.fixture(scope="module")
def baseline_runs(tmp_path_factory):
    """oracle, blanket and garbage through the measured config file, 3 tasks each."""
    out = str(tmp_path_factory.mktemp("runs"))
    return {
        policy: run_baseline_eval(
            "au-bas-reconciliation-v1", policy, out, "@", CONFIG, num_tasks=3, command="eval"
        )
        for policy in ("oracle", "blanket", "garbage")
    }


def test_eval_oracle_through_the_config_file_scores_one(baseline_runs):
    code, output, run = baseline_runs["oracle"]
    assert code == 0, output[-3000:]
    assert (run.episodes, run.completed, run.failed) == (3, 3, 0)
    assert run.scores("rewards") == {"bas_correct": [1.0] * 3, "fault_audit": [1.0] * 3}
    assert "3 episodes, 3 completed, 0 errors, 0 timeouts" in output
    trace = run.traces[0]
    assert trace["task"]["data"]["prompt"].count("\n") > 60  # the config's 60 rows reached the taskset
    assert trace["stop_condition"] == "agent_completed"


def test_eval_exploits_score_at_the_floor(baseline_runs):
    _, _, blanket = baseline_runs["blanket"]
    _, _, garbage = baseline_runs["garbage"]
    assert blanket.scores("rewards")["bas_correct"] == [0.0] * 3
    assert max(blanket.scores("rewards")["fault_audit"]) <= 0.25
    assert garbage.scores("metrics")["parsed"] == [0.0] * 3
    assert garbage.totals() == [0.0] * 3


def test_eval_exits_non_zero_when_rollouts_fail(tmp_path):
    code, output, run = run_baseline_eval(
        "au-bas-reconciliation-v1", "no-such-policy", str(tmp_path), num_tasks=1
    )
    assert code != 0
    assert run is not None and run.errors == 1 and run.completed == 0
    assert "1 error," in output and "first error: task " in output


def test_summarize_prints_a_table_and_writes_a_chart(baseline_runs, tmp_path):
    dirs = [str(run.path) for _, _, run in baseline_runs.values()]
    png = tmp_path / "chart.png"
    code, output = run_command("summarize", *dirs, "--png", str(png))
    assert code == 0, output
    table = [line for line in output.splitlines() if line.startswith("|")]
    assert table[0].split("|")[1:8] == [
        " run ",
        " model ",
        " episodes ",
        " completed ",
        " errors ",
        " timeouts ",
        " reward ",
    ]
    assert any("baseline/oracle" in line and "1.000 ± 0.000" in line for line in table)
    assert len(table) == 2 + 3
    assert png.stat().st_size > 5_000 and png.read_bytes()[:4] == b"\x89PNG"


def test_validate_passes_every_task_and_writes_a_summary(tmp_path):
    code, output = run_command(
        "validate",
        "au-bas-reconciliation-v1",
        "-n",
        "6",
        "--taskset.num-transactions",
        "4",
        "--rich",
        "False",
        "-o",
        str(tmp_path),
        "--run.name",
        "v",
    )
    assert code == 0, output[-3000:]
    run = read_validate_run(tmp_path / "v")
    assert (run.valid, run.total) == (6, 6)
    assert json.loads((tmp_path / "v" / "summary.json").read_text())["checks"]["gold"]["valid"] == 6
    assert "validate: v: 6/6 valid" in output
