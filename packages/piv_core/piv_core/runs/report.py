"""The HTML run report (``summarize --html``): one self-contained page for one or more runs.

The page needs nothing outside itself (inline CSS, the chart as inline SVG, no script or
remote reference) and reads top to bottom:

- the runs, each label once with its full directory;
- why each run fell short, first: what failed most (figures, fault codes, problem families,
  discrepancy kinds, errors), each with how often and links to the tasks where it happened.
  It is read from what the traces hold: the cells the answer views (`piv_core.runs.report_views`)
  mark as differing (``data-figure``, ``data-pair``, ``data-fix``) and, where a view shows none
  of that kind, the per-skill metrics below 1 on tasks that have the skill (`piv_core.runs.skills`);
- the summary table (a row per run), the run-wide metrics and the per-skill metrics (a row per
  metric, each mean over the tasks that have the skill), and the chart;
- how each run's traces stopped and which episodes failed with what errors, the paired
  comparison when exactly two runs are given (`piv_core.runs.compare`);
- one task-by-run grid of rewards (with the per-task delta when two runs are compared), then per
  task every rollout: its score components, the answer beside the key, the tool calls in order
  and the final reply. Rollouts below full marks start unfolded.
"""

from __future__ import annotations

import math
from dataclasses import replace
from html import escape
from pathlib import Path
from typing import Any

from piv_core.runs.compare import RESAMPLES, SEED, Comparison, compare, summary_lines
from piv_core.runs.reading import (
    EvalRun,
    error_text,
    last_reply,
    natural_key,
    run_labels,
    task_data,
    task_key,
    tool_calls,
    trace_total,
)
from piv_core.runs.report_failures import failures_section, task_anchor
from piv_core.runs.report_views import answer_view, view_of
from piv_core.runs.skills import FOOTNOTE
from piv_core.runs.summary import FULL_MARKS, chart_svg, metric_rows, skill_rows, table_rows

ARGUMENTS_SHOWN = 300
"""Characters of each tool call's arguments the page shows."""
REPLY_SHOWN = 4000
"""Characters of the final reply the page shows."""

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1400px}
table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #ccc;padding:2px 6px;text-align:left;
vertical-align:top}caption{text-align:left;font-weight:600;padding:2px 0}
.summary td,.grid td{font-variant-numeric:tabular-nums}
.diff{background:#ffd6d6;color:#900;font-weight:600}.pair{display:inline-block;padding:0 4px;margin:1px;
border-radius:3px;background:#e4f1e4}.pair.diff{background:#ffd6d6}
.line{display:block}.line.add{background:#e0ffe0;color:#060}.line.del{background:#ffe0e0;color:#900}
.line.hunk{color:#57a}.line.head{color:#777}pre{background:#f6f6f6;padding:6px;overflow:auto;max-height:40em}
details.rollout{border:1px solid #ddd;margin:.4em 0;padding:.2em .6em}summary{cursor:pointer}
.full{background:#d8f3d8}.partial{background:#fff1c9}.zero{background:#ffd6d6}.note{color:#865}
.same{color:#060}section.task{margin-top:1.2em}.chart svg{max-width:100%;height:auto}
.wide{overflow-x:auto}.summary td,.scores td,.scores th{white-space:nowrap}
th.reward,td.reward{background:#eef}
.better{color:#060}.worse{color:#900}.failures td{vertical-align:top}.failures td.count{text-align:right;
font-variant-numeric:tabular-nums;white-space:nowrap}.failures a{margin-right:.35em}
.why h3{margin:.4em 0 .2em;font-size:1.05em}.why p{margin:.2em 0}
.tables{display:flex;flex-wrap:wrap;gap:0 2em;align-items:flex-start}h2{margin:.8em 0 .3em}
ul.runs{margin:.2em 0;padding-left:1.2em}ul.runs li{overflow-wrap:anywhere}
"""


def _table(header: list[str], rows: list[list[str]], css: str) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{css}"><tr>{head}</tr>{body}</table>'


def _grade(reward: float | None) -> str:
    if reward is None:
        return "zero"
    return "full" if reward >= FULL_MARKS else "partial" if reward > 0 else "zero"


def _stops_section(runs: list[EvalRun], labels: list[str]) -> str:
    parts = ["<h2>Stops and errors</h2>"]
    for run, label in zip(runs, labels):
        stops = ", ".join(f"{escape(r)}: {n}" for r, n in run.stop_reasons().most_common()) or "no traces"
        parts.append(f'<h3>{escape(label)}</h3><p class="stops">stopped: {stops}</p>')
        rows = [
            [str(f["task"]), ("timeout: " if f["timeout"] else "") + text]
            for f in run.failures
            for text in [error_text(e) for e in f["errors"]] or [f["reason"] or "(no error recorded)"]
        ]
        failed = {rollout for f in run.failures for rollout in f["rollouts"]}
        others = [t for t in run.traces if t.get("id") not in failed]
        rows += [[task_key(t), error_text(e)] for t in others for e in t.get("errors") or []]
        parts.append(_table(["task", "error"], rows, "errors") if rows else '<p class="ok">no errors</p>')
    return "".join(parts)


def _direction(delta: float) -> str:
    return "better" if delta > 0 else "worse" if delta < 0 else "tie"


def _comparison_section(c: Comparison) -> str:
    """The comparison's findings; its per-task deltas are the task grid's last column."""
    items = "".join(f"<li>{escape(line)}</li>" for line in summary_lines(c))
    return (
        f'<section class="comparison"><h2>Paired comparison: {escape(c.b_name)} vs {escape(c.a_name)}</h2>'
        f'<ul>{items}</ul><p class="note">per-task deltas: the last column of the task grid</p></section>'
    )


def _tasks(runs: list[EvalRun]) -> dict[str, list[list[dict[str, Any]]]]:
    """Each task's traces per run, tasks in natural order of their keys."""
    tasks: dict[str, list[list[dict[str, Any]]]] = {}
    for i, run in enumerate(runs):
        for trace in run.traces:
            tasks.setdefault(task_key(trace), [[] for _ in runs])[i].append(trace)
    return dict(sorted(tasks.items(), key=lambda item: natural_key(item[0])))


def _grid(
    tasks: dict[str, list[list[dict[str, Any]]]], labels: list[str], paired: Comparison | None = None
) -> str:
    """The one task-by-run grid of rewards; with a comparison, each shared task's delta B − A."""
    deltas = {p.task: p.delta for p in paired.pairs} if paired else {}
    head = "<tr><th>task</th>" + "".join(f"<th>{escape(label)}</th>" for label in labels)
    head += f"<th>delta ({escape(paired.b_name)} − {escape(paired.a_name)})</th></tr>" if paired else "</tr>"
    rows = []
    for task, per_run in tasks.items():
        cells = []
        for traces in per_run:
            rewards = [trace_total(t) or 0.0 for t in traces]
            if not rewards:
                cells.append("<td>–</td>")
                continue
            mean = math.fsum(rewards) / len(rewards)
            cells.append(f'<td class="{_grade(mean)}">{" ".join(f"{r:.3f}" for r in rewards)}</td>')
        if paired:
            delta = deltas.get(task)
            cells.append(
                "<td>–</td>" if delta is None else f'<td class="{_direction(delta)}">{delta:+.3f}</td>'
            )
        rows.append(f'<tr><td><a href="#{task_anchor(task)}">{escape(task)}</a></td>{"".join(cells)}</tr>')
    return f'<table class="grid">{head}{"".join(rows)}</table>'


def _number(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return escape(str(value))
    return f"{value:.4g}"


def _scores(trace: dict[str, Any]) -> str:
    """Rewards (with their weights) then metrics, one column each."""
    rewards = {n: r for n, r in (trace.get("rewards") or {}).items() if isinstance(r, dict)}
    metrics = trace.get("metrics") or {}
    head = "".join(
        f'<th class="reward">{escape(n)} ×{_number(r.get("weight", 1.0))}</th>' for n, r in rewards.items()
    )
    head += "".join(f"<th>{escape(n)}</th>" for n in metrics)
    cells = "".join(f'<td class="reward">{_number(r.get("score") or 0.0)}</td>' for r in rewards.values())
    cells += "".join(f"<td>{_number(v)}</td>" for v in metrics.values())
    return f'<div class="wide"><table class="scores"><tr>{head}</tr><tr>{cells}</tr></table></div>'


def _calls(trace: dict[str, Any]) -> str:
    calls = tool_calls(trace)
    if not calls:
        return ""
    items = "".join(
        f"<li><code>{escape(name)}</code> {escape(args[:ARGUMENTS_SHOWN])}"
        f"{'…' if len(args) > ARGUMENTS_SHOWN else ''}</li>"
        for name, args in calls
    )
    return f'<div class="calls"><b>tool calls ({len(calls)})</b><ol>{items}</ol></div>'


def _rollout(trace: dict[str, Any], label: str, number: int, view: str | None) -> str:
    reward = trace_total(trace)
    stop = trace.get("stop_condition") or "unknown"
    parts = ", ".join(
        f"{escape(n)} {_number(r.get('score') or 0.0)}"
        for n, r in (trace.get("rewards") or {}).items()
        if isinstance(r, dict)
    )
    reward_text = "no reward" if reward is None else f"reward {reward:.3f}" + (f" ({parts})" if parts else "")
    opened = " open" if reward is None or reward < FULL_MARKS else ""
    reply = last_reply(trace) or ""
    errors = "".join(f'<p class="diff">error: {escape(error_text(e))}</p>' for e in trace.get("errors") or [])
    return (
        f'<details class="rollout" data-run="{escape(label)}"{opened}>'
        f'<summary><span class="{_grade(reward)}">{escape(label)} #{number}: {reward_text}</span>, '
        f"stopped: {escape(str(stop))}</summary>{errors}"
        + _scores(trace)
        + (f'<div class="answer">{view}</div>' if view else "")
        + _calls(trace)
        + (
            f"<details><summary>final reply ({len(reply)} characters)</summary>"
            f"<pre>{escape(reply[:REPLY_SHOWN])}{'…' if len(reply) > REPLY_SHOWN else ''}</pre></details>"
            if reply
            else ""
        )
        + "</details>"
    )


def _views(runs: list[EvalRun]) -> dict[int, str | None]:
    """Each trace's answer view (`piv_core.runs.report_views`), by ``id(trace)``: rendered once, read by
    the failure summary and shown in the rollout."""
    views = {env_id: view_of(env_id) for env_id in {run.env_id for run in runs}}
    return {id(trace): answer_view(trace, views[run.env_id]) for run in runs for trace in run.traces}


def _task_sections(
    tasks: dict[str, list[list[dict[str, Any]]]],
    labels: list[str],
    views: dict[int, str | None],
    paired: Comparison | None,
) -> str:
    parts = ['<h2 id="tasks">Tasks</h2>', _grid(tasks, labels, paired)]
    for task, per_run in tasks.items():
        first = next(t for traces in per_run for t in traces)
        name = task_data(first).get("name")
        title = escape(task) + (f" — {escape(str(name))}" if name else "")
        parts.append(
            f'<section class="task" id="{task_anchor(task)}" data-task="{escape(task)}"><h3>{title}</h3>'
        )
        for traces, label in zip(per_run, labels):
            parts += [_rollout(trace, label, n, views.get(id(trace))) for n, trace in enumerate(traces, 1)]
        parts.append("</section>")
    return "".join(parts)


def _inline_svg(svg: str) -> str:
    """An SVG document reduced to its ``<svg>`` element, for inlining into HTML."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else ""


def _side_table(header: list[str], rows: list[list[str]], css: str, caption: str, note: str = "") -> str:
    """A table with a metric per row and a run per column, under its caption."""
    if not rows:
        return ""
    footnote = f'<p class="note">{escape(note)}</p>' if note else ""
    return f'<div class="wide"><p><b>{escape(caption)}</b></p>{_table(header, rows, css)}{footnote}</div>'


def render_html(runs: list[EvalRun], resamples: int = RESAMPLES, seed: int = SEED) -> str:
    """The whole report page for `runs` (at least one)."""
    if not runs:
        raise ValueError("render_html needs at least one run")
    labels = run_labels(runs)
    header, rows = table_rows(runs, metrics=False)
    svg = chart_svg(runs)
    chart = (
        f'<div class="chart">{_inline_svg(svg)}</div>'
        if svg
        else '<p class="note">matplotlib is not installed: no chart</p>'
    )
    listed = "".join(
        f"<li><b>{escape(label)}</b>: {escape(str(run.path))} ({escape(run.model or 'model unknown')})</li>"
        for run, label in zip(runs, labels)
    )
    comparison, paired = "", None
    if len(runs) == 2:
        try:
            paired = replace(compare(runs[0], runs[1], resamples, seed), a_name=labels[0], b_name=labels[1])
            comparison = _comparison_section(paired)
        except ValueError as error:
            comparison = f'<p class="note">no paired comparison: {escape(str(error))}</p>'
    tasks = _tasks(runs)
    views = _views(runs)
    anchors = {task_anchor(task) for task in tasks}
    tables = _side_table(*metric_rows(runs), "metrics", "run-wide metrics") + _side_table(
        *skill_rows(runs), "skills", "per-skill metrics", FOOTNOTE
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>Run report: {escape(', '.join(labels))}</title><style>{STYLE}</style></head><body>"
        f'<h1>Run report</h1><ul class="runs">{listed}</ul>'
        f"{failures_section(runs, labels, views, anchors)}"
        f'<h2>Summary</h2><div class="wide">{_table(header, rows, "summary")}</div>'
        f'<div class="tables">{tables}</div>{chart}'
        f"{_stops_section(runs, labels)}{comparison}{_task_sections(tasks, labels, views, paired)}"
        "</body></html>\n"
    )


def write_html(runs: list[EvalRun], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(runs), encoding="utf-8")
