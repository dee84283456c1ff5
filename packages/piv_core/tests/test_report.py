"""The HTML run report: the answer views highlight exactly what differs, the page stands alone."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from piv_core.report import render_html, write_html
from piv_core.report_views import golden_ledger, ledger_view, submitted_ledger
from piv_core.runs import EvalRun, read_eval_run
from piv_core.testing import ReportMarks


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


def run_of(path: Path, *traces: dict) -> EvalRun:
    return EvalRun(path, "baseline/x", len(traces), len(traces), 0, 0, list(traces))


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
    episode = {"ok": True, "traces": [figure_trace(reply({"G1": "1"}, {}))]}
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


def ledger_trace(data: dict, *written: str) -> dict:
    calls = [
        {"type": "function", "name": "write_ledger", "arguments": json.dumps({"text": text})}
        for text in written
    ]
    return {
        "task": {"data": data},
        "nodes": [{"message": {"role": "assistant", "tool_calls": [c]}} for c in calls],
        "rewards": {"ledger": {"score": 0.5, "weight": 1.0}},
        "metrics": {"balances_hit": 0.5},
    }


@pytest.fixture(scope="module")
def ledger_data():
    taskset = pytest.importorskip("beancount_ledger.taskset")
    return json.loads(taskset.make_task_data("bank_recon_001").model_dump_json())


def normalized(line: str) -> str:
    return ("  " if line[:1].isspace() else "") + " ".join(line.split())


def test_the_last_write_ledger_call_is_diffed_and_rescored_against_the_key(ledger_data):
    golden = golden_ledger(ledger_data)
    lines = golden.splitlines()
    last = max(i for i, line in enumerate(lines) if "Correction:" in line)  # drop the last correction
    changed = "\n".join(lines[: last - 1]) + "\n"
    trace = ledger_trace(ledger_data, "first draft", changed)
    assert submitted_ledger(trace) == changed
    found = marked(ledger_view(trace))
    assert [m["text"] for m in found if "line" in m["class"]] == [
        "-" + normalized(x) for x in lines[last - 1 :]
    ]
    assert [m["data-fix"] for m in found if "data-fix" in m] == [ledger_data["fixes"][-1]["ref"]]
    assert [m for m in found if "line" not in m["class"] and "data-fix" not in m] == []
    same = ledger_view(ledger_trace(ledger_data, "draft", golden))
    assert marked(same) == [] and "line for line" in same
    nothing = ledger_view(ledger_trace(ledger_data))
    assert "nothing was written" in nothing
    assert len([m for m in marked(nothing) if "data-fix" in m]) == len(ledger_data["fixes"])


def test_the_ledger_the_reward_scored_is_rescored_and_a_later_rejected_write_noted(ledger_data):
    golden = golden_ledger(ledger_data)
    trace = {**ledger_trace(ledger_data, golden, 'include "/etc/passwd"'), "info": {"ledger": golden}}
    view = ledger_view(trace)
    assert "was not the ledger scored" in view
    assert not [m for m in marked(view) if "data-fix" in m]


def test_a_write_over_the_envelope_is_not_diffed(ledger_data):
    from beancount_ledger.limits import LEDGER_ENVELOPE

    huge = "x\n" * LEDGER_ENVELOPE  # a refused write: the diff would be of a 96,000-line text
    view = ledger_view(ledger_trace(ledger_data, huge))
    assert "over the" in view and "not diffed" in view
    assert not [m for m in marked(view) if "line" in m.get("class", "")]


def test_without_beancount_ledger_the_view_says_so(ledger_data, monkeypatch):
    monkeypatch.setitem(sys.modules, "beancount_ledger", None)
    view = ledger_view(ledger_trace(ledger_data, "text"))
    assert "not installed" in view and marked(view) == []


def test_summarize_writes_the_report_with_html(tmp_path, capsys):
    from piv_core.cli import summarize_main

    (tmp_path / "run").mkdir()
    episode = {"ok": True, "traces": [figure_trace(reply({"G1": "1"}, {}))]}
    (tmp_path / "run" / "traces.jsonl").write_text(json.dumps(episode) + "\n")
    summarize_main([str(tmp_path / "run"), "--no-png", "--html", str(tmp_path / "r.html")])
    assert f"report: {tmp_path / 'r.html'}" in capsys.readouterr().out
    assert {m["data-figure"] for m in marked((tmp_path / "r.html").read_text()) if "data-figure" in m} == {
        "G1",
        "1A",
        "1B",
        "net",
    }
