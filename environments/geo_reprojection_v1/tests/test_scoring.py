"""Per-family metrics: on every trace, named after the families, zero where a family is absent."""

from __future__ import annotations

import pytest
from geo_reprojection_v1 import baselines, scoring
from geo_reprojection_v1.problem import FAMILIES
from geo_reprojection_v1.scoring import Part, grade_task, metric_name
from geo_reprojection_v1.taskset import GeoConfig, GeoTask, make_task_data
from piv_core.policy import Conversation
from piv_core.testing import score_reply

NAMES = {"error", "error_ratio", "answered"} | {
    f"{kind}_{family}" for kind in ("has", "pass", "error") for family in FAMILIES
}


def _oracle(task: GeoTask) -> str:
    data = task.data
    messages = [{"role": "system", "content": data.system_prompt}, {"role": "user", "content": data.prompt}]
    return baselines.oracle(Conversation(messages, []))


def test_metric_names_are_lower_case_with_underscores():
    assert metric_name("Reproject") == "reproject"
    assert metric_name("Grid-Shift 2") == "grid_shift_2"
    assert {metric_name(family) for family in FAMILIES} == set(FAMILIES)


@pytest.mark.parametrize(
    "knobs", [{}, {"level": 3}, {"level": 5}, {"level": 6}, {"level": 10}, {"level": 12}]
)
def test_every_trace_carries_every_metric_and_absent_families_read_zero(knobs):
    config = GeoConfig(**knobs)
    for idx in range(20):
        task = GeoTask(make_task_data(config, idx), config.task)
        present = {part.family for part in task.data.parts}
        for reply in (_oracle(task), "no answer", None):
            metrics = score_reply(task, reply).metrics
            assert NAMES <= set(metrics), set(metrics) ^ NAMES
            for family in FAMILIES:
                has = metrics[f"has_{family}"]
                assert has == float(family in present)
                if not has:
                    assert metrics[f"pass_{family}"] == 0.0 and metrics[f"error_{family}"] == 0.0
                elif reply is None or reply == "no answer":
                    assert metrics[f"pass_{family}"] == 0.0 and metrics[f"error_{family}"] == -1.0
                else:
                    assert metrics[f"pass_{family}"] == 1.0 and 0.0 <= metrics[f"error_{family}"] < 1e-2


def test_a_family_passes_only_when_all_its_parts_pass_and_reports_its_worst_ratio():
    parts = [Part("distance", (1000.0,), 10.0), Part("distance", (2000.0,), 10.0)]
    parts.append(Part("bearing", (90.0,), 0.05))
    graded = grade_task("<answer>1005, 2030, 90.01</answer>", parts)
    metrics = graded.metrics
    assert graded.reward == pytest.approx(2 / 3)
    assert metrics["pass_distance"] == 0.0 and metrics["error_distance"] == pytest.approx(3.0)
    assert metrics["pass_bearing"] == 1.0 and metrics["error_bearing"] == pytest.approx(0.2)
    assert metrics["error_ratio"] == pytest.approx(3.0) and metrics["error"] == pytest.approx(30.0)
    assert metrics["has_reproject"] == metrics["pass_reproject"] == metrics["error_reproject"] == 0.0
    assert grade_task("<answer>1005, 2030, 90.01</answer>", parts, "all").reward == 0.0


def test_a_pass_in_graded_mode_is_still_within_tolerance():
    parts = [Part("distance", (1000.0,), 10.0)]
    near = grade_task("<answer>1009</answer>", parts, graded=True)
    assert 0.5 < near.reward < 1.0 and near.metrics["pass_distance"] == 1.0
    far = grade_task("<answer>1011</answer>", parts, graded=True)
    assert 0.0 < far.reward < 0.5 and far.metrics["pass_distance"] == 0.0


def test_a_task_has_at_least_one_part():
    with pytest.raises(ValueError, match="at least one part"):
        scoring.grade_task("<answer>1</answer>", [])
