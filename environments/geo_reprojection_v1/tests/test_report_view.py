"""The run report's view of a coordinate answer: the error is marked only beyond the tolerance."""

from __future__ import annotations

from pathlib import Path

from piv_core.runs.reading import EvalRun
from piv_core.runs.report import render_html
from piv_core.testing import ReportMarks


def marked(html: str) -> list[dict]:
    return ReportMarks(html).marked


def run_of(path: Path, trace: dict) -> EvalRun:
    return EvalRun(path, "baseline/x", 1, 1, 0, 0, [trace], env_id="geo-reprojection-v1")


def geo_trace(answer: str, error: float) -> dict:
    data = {"id": "g-0", "family": "distance", "grid": "mga54", "inputs": [1, 2, 3, 4], "key": [1625.7]}
    return {
        "task": {"data": {**data, "tolerance": 10.0}},
        "nodes": [{"message": {"role": "assistant", "content": answer}}],
        "rewards": {"within_tolerance": {"score": float(error <= 10), "weight": 1.0}},
        "metrics": {"error": error, "answered": 1.0},
    }


def test_a_coordinate_error_is_marked_only_beyond_its_tolerance(tmp_path):
    inside = render_html([run_of(tmp_path / "g", geo_trace("<answer>1630</answer>", 4.3))])
    assert marked(inside) == [] and "tolerance 10 m" in inside
    outside = marked(render_html([run_of(tmp_path / "g", geo_trace("<answer>1700</answer>", 74.3))]))
    assert [m["text"] for m in outside] == ["74.3 m"]
    unanswered = marked(render_html([run_of(tmp_path / "g", geo_trace("none", -1.0))]))
    assert [m["text"] for m in unanswered] == ["unanswered"]
