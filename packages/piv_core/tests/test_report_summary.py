"""What summaries and the run report tell first: why runs failed, per-skill means over the tasks
that have the skill, a zero that shows, short run labels, where the files go, estimated tokens."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from piv_core.cli.commands import summarize_main
from piv_core.runs import report, skills
from piv_core.runs.compare import compare, summary_lines
from piv_core.runs.compare import main as compare_main
from piv_core.runs.reading import EvalRun, output_tokens, read_eval_run, run_labels, short_names
from piv_core.runs.report import render_html
from piv_core.runs.summary import render_skills, skill_rows, table_rows

ROOT = Path(__file__).resolve().parents[3]


def audit_trace(task: str, reward: float, metrics: dict, reply: str = "<answer>{}</answer>") -> dict:
    return {
        "task": {"data": {"id": task}},
        "nodes": [{"message": {"role": "assistant", "content": reply}}],
        "rewards": {"r": {"score": reward, "weight": 1.0}},
        "metrics": metrics,
        "stop_condition": "agent_completed",
    }


def audit_run(path: Path, *traces: dict) -> EvalRun:
    return EvalRun(path, "m", len(traces), len(traces), 0, 0, list(traces))


def skill_metrics(g1: float, recall: float, keyed: float) -> dict:
    return {"parsed": 1.0, "g1_correct": g1, "recall_dup": recall, "keyed_dup": keyed}


NOISY = [
    audit_trace("t-1", 0.0, skill_metrics(0.0, 0.5, 2.0)),
    audit_trace("t-2", 0.0, skill_metrics(0.0, 1.0, 1.0)),
    audit_trace("t-3", 0.0, skill_metrics(0.0, 0.0, 0.0)),  # no dup in this task: not a miss
    audit_trace("t-4", 1.0, skill_metrics(1.0, 1.0, 3.0)),
]
ORACLE = [
    audit_trace(f"t-{i}", 1.0, skill_metrics(1.0, 1.0 if i != 3 else 0.0, float(i != 3)))
    for i in (1, 2, 3, 4)
]


def anchors(html: str) -> set[str]:
    return set(re.findall(r' id="([^"]+)"', html))


def failure_rows(html: str) -> list[tuple[str, str, list[str]]]:
    """Each failure-summary row: what failed, its count cell, the anchors it links to."""
    section = html[html.index('id="why"') : html.index("<h2>Summary</h2>")]
    rows = re.findall(
        r'<tr data-failure="([^"]+)"><td>[^<]*</td><td class="count">([^<]*)</td><td>(.*?)</td></tr>', section
    )
    return [(what, count, re.findall(r'href="#([^"]+)"', links)) for what, count, links in rows]


def test_the_failure_summary_comes_first_and_links_the_most_missed_figure_to_its_tasks(tmp_path):
    html = render_html([audit_run(tmp_path / "oracle", *ORACLE), audit_run(tmp_path / "noisy", *NOISY)])
    assert html.index('id="why"') < html.index("<h2>Summary</h2>") < html.index('id="tasks"')
    rows = failure_rows(html)
    what, count, links = rows[0]
    assert what == "figure g1: wrong or missing" and count.startswith("3 tasks (3 rollouts")
    assert links == ["task-t-1", "task-t-2", "task-t-3"] and set(links) <= anchors(html)
    assert ("fault code dup: missed", "1 tasks (1 rollouts)", ["task-t-1"]) in rows  # t-3 has no dup
    assert "oracle: 0 of 4 rollouts below full marks" in html and "every rollout at full marks" in html


def test_the_failure_summary_counts_the_cells_the_answer_view_marks(tmp_path, monkeypatch):
    def view(trace: dict, registered) -> str:
        if trace["task"]["data"]["id"] == "t-4":
            return '<td class="figure" data-figure="1A">ok</td>'
        return (
            '<td class="figure diff" data-figure="1A">x</td>'
            '<span class="pair diff" data-side="key" data-pair="T1/dup">dup</span>'
            '<span class="pair diff" data-side="key" data-pair="T2/dup">dup</span>'
            '<span class="pair diff" data-side="answer" data-pair="T9/late">late</span>'
        )

    monkeypatch.setattr(report, "answer_view", view)
    html = render_html([audit_run(tmp_path / "noisy", *NOISY)])
    rows = {what: (count, links) for what, count, links in failure_rows(html)}
    assert rows["fault code dup: missed"][0] == "3 tasks (3 rollouts, 6 times)"
    assert rows["fault code late: claimed wrongly"][1] == ["task-t-1", "task-t-2", "task-t-3"]
    assert rows["figure 1A: wrong or missing"][0].startswith("3 tasks")
    assert "figure g1: wrong or missing" not in rows  # the view shows figures: its marks are what counts


def test_one_task_grid_and_the_summary_table_holds_no_per_skill_column(tmp_path):
    runs = [audit_run(tmp_path / "oracle", *ORACLE), audit_run(tmp_path / "noisy", *NOISY)]
    html = render_html(runs)
    assert html.count('<table class="grid">') == 1 and "<th>delta (noisy − oracle)</th>" in html
    assert "<th>delta</th>" not in html  # the comparison no longer repeats the grid
    summary = html[html.index('<table class="summary">') :]
    summary = summary[: summary.index("</table>")]
    assert not {"g1_correct", "recall_dup", "keyed_dup", "parsed"} & set(
        re.findall(r"<th>([^<]+)</th>", summary)
    )
    assert '<table class="skills">' in html and skills.FOOTNOTE in html
    header, _ = table_rows(runs)
    assert "recall_dup" not in header and "keyed_dup" not in header and "parsed" in header


def test_a_per_skill_mean_leaves_out_the_tasks_without_the_skill(tmp_path):
    runs = [audit_run(tmp_path / "oracle", *ORACLE)]
    rows = {row[0]: row[1] for row in skill_rows(runs)[1]}
    assert rows["recall_dup"] == "1.000 ± 0.000 (n=3)"  # t-3 has no dup: its 0 is not a miss
    assert rows["g1_correct"] == "1.000 ± 0.000 (n=4)"
    text = render_skills(runs)
    assert "recall_dup" in text and text.endswith(skills.FOOTNOTE + ".")
    assert not [line for line in text.splitlines() if line.startswith("|")]  # not a second run table
    assert skills.skill_values(ORACLE, "recall_dup") == [1.0, 1.0, 1.0]
    assert not skills.applies({"has_bearing": 0.0}, "pass_bearing")
    assert skills.applies({"keyed_dup": 2.0}, "recall_dup") and skills.applies({}, "recall_dup")
    assert skills.is_skill("precision_dup", ["keyed_dup"]) and not skills.is_skill("error_ratio", ["error"])


def test_a_zero_mean_is_drawn_and_labelled(tmp_path):
    pytest.importorskip("matplotlib")
    from piv_core.runs.summary import _figure

    zero = audit_run(tmp_path / "zero", audit_trace("t-1", 0.0, {}), audit_trace("t-2", 0.0, {}))
    half = audit_run(tmp_path / "half", audit_trace("t-1", 1.0, {}), audit_trace("t-2", 0.0, {}))
    fig = _figure([zero, half])
    ax = fig.axes[0]
    bars = [p for p in ax.patches if p.get_width() > 0]
    assert len(bars) == 4 and min(p.get_height() for p in bars) > 0  # the zeros are not invisible
    assert sorted(t.get_text() for t in ax.texts) == ["0", "0", "0.50", "0.50"]


def test_labels_drop_what_the_run_names_share_and_can_be_given(tmp_path, capsys):
    names = [
        "au-bas-reconciliation-v1--baseline--oracle--null--546d99e4",
        "au-bas-reconciliation-v1--baseline--noisy-0.3--null--77536d92",
    ]
    assert short_names(names) == ["oracle", "noisy-0.3"]
    assert short_names(names[:1]) == names[:1] and short_names(["a", "a"]) == ["a", "a"]
    dirs = [tmp_path / name for name in names]
    for path, reward in zip(dirs, (1.0, 0.0)):
        path.mkdir()
        (path / "traces.jsonl").write_text(
            json.dumps({"ok": True, "traces": [audit_trace("t-1", reward, {})]}) + "\n"
        )
    assert run_labels([read_eval_run(d) for d in dirs]) == ["oracle", "noisy-0.3"]
    compare_main([*map(str, dirs), "--resamples", "10"])
    out = capsys.readouterr().out
    assert "## noisy-0.3 vs oracle" in out and f"- A = oracle: {dirs[0]}" in out
    assert out.count(names[0]) == 1  # the full name once, the label everywhere else
    compare_main([*map(str, dirs), "--resamples", "10", "--label", "O", "--label", "N"])
    assert "## N vs O" in capsys.readouterr().out
    summarize_main([*map(str, dirs), "--no-png", "--label", "first", "--label", "second"])
    out = capsys.readouterr().out
    assert "| first |" in out and "| second |" in out and f"- first: {dirs[0]}" in out
    with pytest.raises(SystemExit):
        summarize_main([*map(str, dirs), "--no-png", "--label", "only-one"])


def test_summaries_go_under_outputs_one_name_per_set_of_runs(tmp_path, monkeypatch, capsys):
    pytest.importorskip("matplotlib")
    runs = []
    for name in ("x--oracle", "x--blanket", "x--silent"):
        (tmp_path / "runs" / name).mkdir(parents=True)
        trace = audit_trace("t-1", 1.0, {})
        (tmp_path / "runs" / name / "traces.jsonl").write_text(
            json.dumps({"ok": True, "traces": [trace]}) + "\n"
        )
        runs.append(str(tmp_path / "runs" / name))
    monkeypatch.chdir(tmp_path)
    summarize_main([runs[0], runs[1], "--html"])
    summarize_main([runs[0], runs[2]])
    written = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "outputs").rglob("*.*"))
    assert len(written) == 3 and all(p.startswith("outputs/summaries/") for p in written)
    assert {Path(p).suffix for p in written} == {".png", ".html"}
    assert not (tmp_path / "runs" / "summary.png").exists() and not (tmp_path / "report.html").exists()
    summarize_main([runs[0], "--no-png", "--html", "-o", str(tmp_path / "mine" / "r")])
    assert (tmp_path / "mine" / "r.html").is_file()
    capsys.readouterr()


def test_gitignore_covers_what_the_commands_write():
    paths = ["outputs/summaries/a--1234.png", "outputs/summaries/a--1234.html", "outputs/au-bas/tasks.jsonl"]
    paths += ["report.html", "data/au-bas/tasks.jsonl"]  # where the commands wrote before
    done = subprocess.run(["git", "check-ignore", *paths], cwd=ROOT, capture_output=True, text=True)
    assert sorted(done.stdout.split()) == sorted(paths)


def test_tokens_a_server_did_not_report_are_estimated_and_marked(tmp_path):
    reported = {**audit_trace("t-1", 1.0, {}, "x" * 40), "num_output_tokens": 25}
    silent = {**audit_trace("t-1", 1.0, {}, "y" * 40), "num_output_tokens": 0}
    assert output_tokens(reported) == (25, False) and output_tokens(silent) == (10, True)
    assert output_tokens({"num_output_tokens": 0}) == (0, False)
    c = compare(audit_run(tmp_path / "a", reported), audit_run(tmp_path / "b", silent), resamples=20)
    assert (c.b_tokens, c.b_estimated, c.a_estimated) == (10, 1, 0)
    lines = summary_lines(c)
    assert "b ~10.0 (~10 tokens / 1 at 1.0)" in lines[3] and "a 25.0 (25 tokens" in lines[3]
    assert lines[4].startswith("tokens per correct delivery, ratio b / a: ~0.400")
    assert lines[5].startswith("~ marks estimated output tokens") and "b 1 of 1" in lines[5]
    nothing = compare(
        audit_run(tmp_path / "a", reported),
        audit_run(tmp_path / "b", {"num_output_tokens": 0, **audit_trace("t-1", 1.0, {}, "")}),
        resamples=20,
    )
    assert "b unknown (no token count recorded)" in summary_lines(nothing)[3]
