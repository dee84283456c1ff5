"""The HTML run report: the answer views highlight exactly what differs, the page stands alone."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from piv_core.runs.reading import EvalRun, read_eval_run
from piv_core.runs.report import render_html, write_html
from piv_core.testing import ReportMarks, register_environment

ENV_ID = "figures-env"
"""An environment registered for these tests, shown by the core's `figures_view`."""


@pytest.fixture(autouse=True)
def registered(tmp_path_factory, monkeypatch):
    site = tmp_path_factory.mktemp("site")
    (site / "figures_env.py").write_text(
        '"""A test environment."""\n'
        "from piv_core.plugins import Registration\n"
        "from piv_core.runs.report_views import figures_view\n"
        f"PLUGIN = Registration({ENV_ID!r}, {{}}, answer_view=figures_view)\n"
    )
    register_environment(site, ENV_ID, "figures_env:PLUGIN")
    monkeypatch.syspath_prepend(str(site))


def marked(html: str) -> list[dict]:
    return ReportMarks(html).marked


def reply(figures: dict, faults: dict) -> str:
    return "done\n<answer>" + json.dumps({**figures, "faults": faults}) + "</answer>"


def figure_trace(answer: str, task: str = "t-0", reward: float = 0.0) -> dict:
    data = {
        "id": task,
        "idx": 0,
        "name": "Shop 2024-04",
        "resources": {"cpus": 2},  # a runtime mapping of ints, ahead of the key's figures
        "timeout": {"seconds": 60},
        "bas": {"G1": 10000, "1A": 909, "1B": 500, "net": 409},
        "faults": {"T1": ["outside_period"], "T3": ["duplicate_invoice", "gst_miscalculated"]},
    }
    return {
        "task": {"data": data},
        "nodes": [
            {"message": {"role": "user", "content": "ledger"}},
            {"message": {"role": "assistant", "content": answer}},
        ],
        "rewards": {
            "bas_correct": {"score": reward, "weight": 0.6},
            "fault_audit": {"score": 0.5, "weight": 0.4},
        },
        "metrics": {"parsed": 1.0},
        "stop_condition": "agent_completed",
        "calls": [{"model": "baseline/x", "usage": {"completion_tokens": 10}}],
    }


def run_of(path: Path, *traces: dict, env_id: str = ENV_ID) -> EvalRun:
    return EvalRun(path, "baseline/x", len(traces), len(traces), 0, 0, list(traces), env_id=env_id)


def test_exactly_the_differing_figures_and_pairs_are_marked(tmp_path):
    answer = reply(
        {"G1": "100.00", "1A": "9.10", "1B": "5.00"},  # 1A off by a cent, net missing
        {"T1": "outside_period", "T2": ["gst_miscalculated"], "T3": ["duplicate_invoice"]},
    )
    found = marked(render_html([run_of(tmp_path / "a", figure_trace(answer))]))
    figures = {m["data-figure"] for m in found if "data-figure" in m}
    pairs = {(m["data-side"], m["data-pair"]) for m in found if "data-pair" in m}
    assert figures == {"1A", "net"}
    assert pairs == {("answer", "T2/gst_miscalculated"), ("key", "T3/gst_miscalculated")}
    assert all(m["data-task"] == "t-0" and m["data-run"] == "a" for m in found)


def test_a_right_answer_marks_nothing_and_an_unparseable_one_marks_every_key_cell(tmp_path):
    right = reply(
        {"G1": "100.00", "1A": "9.09", "1B": "5.00", "net": 4.09},
        {"T1": ["outside_period"], "T3": ["gst_miscalculated", "duplicate_invoice"]},
    )
    assert marked(render_html([run_of(tmp_path / "a", figure_trace(right, reward=1.0))])) == []
    found = marked(render_html([run_of(tmp_path / "a", figure_trace("no answer block"))]))
    assert {m["data-figure"] for m in found if "data-figure" in m} == {"G1", "1A", "1B", "net"}
    assert {m["data-pair"] for m in found if "data-pair" in m} == {
        "T1/outside_period",
        "T3/duplicate_invoice",
        "T3/gst_miscalculated",
    }


def test_the_page_stands_alone_and_escapes_what_the_model_wrote(tmp_path):
    hostile = reply({"G1": "<img src=x onerror=alert(1)>"}, {"<script>alert(1)</script>": ["x"]})
    html = render_html([run_of(tmp_path / "a", figure_trace(hostile))])
    assert not {"script", "img", "link", "iframe"} & set(ReportMarks(html).tags)
    assert "src=" not in html.replace("&lt;img src=x", "")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<style>" in html
    if importlib.util.find_spec("matplotlib") is not None:
        assert "<svg" in html  # the chart is inline
    huge = render_html([run_of(tmp_path / "a", figure_trace(reply({"G1": "9" * 100_000}, {})))])
    assert [m["text"] for m in marked(huge) if m.get("data-figure") == "G1"] == ["9" * 80 + "…"]
    assert "9" * 4001 not in huge  # the reply itself is shown cut too


def test_comparison_section_only_for_exactly_two_runs(tmp_path):
    one = figure_trace(reply({"G1": "100.00"}, {}))
    runs = [run_of(tmp_path / name, one) for name in ("a", "b", "c")]
    assert "Paired comparison" not in render_html(runs[:1])
    assert "Paired comparison: b vs a" in render_html(runs[:2])
    assert "Paired comparison" not in render_html(runs)
    same_name = [run_of(tmp_path / parent / "oracle", one) for parent in ("x", "y")]
    assert "Paired comparison: y/oracle vs x/oracle" in render_html(same_name)


def test_three_runs_of_one_model_are_told_apart(tmp_path):
    one = figure_trace(reply({"G1": "100.00"}, {}))
    runs = [run_of(tmp_path / parent / "oracle", one) for parent in ("x", "y", "z")]
    html = render_html(runs)
    for label in ("x/oracle", "y/oracle", "z/oracle"):
        assert f'data-run="{label}"' in html and f"{label} (baseline/x)" in html


def test_write_html_from_a_run_directory(tmp_path):
    episode = {"env": {"id": ENV_ID}, "ok": True, "traces": [figure_trace(reply({"G1": "1"}, {}))]}
    failed = {
        "ok": False,
        "task": {"data": {"id": "t-9"}},
        "errors": [{"type": "Boom", "message": "it broke"}],
    }
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "traces.jsonl").write_text(json.dumps(episode) + "\n" + json.dumps(failed) + "\n")
    write_html([read_eval_run(tmp_path / "run")], tmp_path / "out" / "report.html")
    html = (tmp_path / "out" / "report.html").read_text()
    assert "<td>t-9</td><td>Boom: it broke</td>" in html and "agent_completed: 1" in html


def test_summarize_writes_the_report_with_html(tmp_path, capsys):
    from piv_core.cli.commands import summarize_main

    (tmp_path / "run").mkdir()
    episode = {"env": {"id": ENV_ID}, "ok": True, "traces": [figure_trace(reply({"G1": "1"}, {}))]}
    (tmp_path / "run" / "traces.jsonl").write_text(json.dumps(episode) + "\n")
    summarize_main([str(tmp_path / "run"), "--no-png", "--html", str(tmp_path / "r.html")])
    assert f"report: {tmp_path / 'r.html'}" in capsys.readouterr().out
    assert {m["data-figure"] for m in marked((tmp_path / "r.html").read_text()) if "data-figure" in m} == {
        "G1",
        "1A",
        "1B",
        "net",
    }


def test_a_run_of_an_environment_not_registered_here_gets_no_answer_view(tmp_path):
    answer = reply({"G1": "1"}, {})
    for env_id in ("", "not-registered-env"):
        html = render_html([run_of(tmp_path / "a", figure_trace(answer), env_id=env_id)])
        assert 'data-figure="G1"' not in html and "&lt;answer&gt;" in html  # the reply is still shown
