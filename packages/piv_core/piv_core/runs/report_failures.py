"""What the run report shows first: why each run fell short.

Per run, what failed most (figures, fault codes, problem families, discrepancy kinds, errors),
each with how often and links to the tasks where it happened. It is read from what the traces
hold: the cells the answer views (`piv_core.runs.report_views`) mark as differing (``data-figure``,
``data-pair``, ``data-fix``) and, where a view shows none of that kind, the per-skill metrics
below 1 on tasks that have the skill (`piv_core.runs.skills`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html import escape
from html.parser import HTMLParser
from typing import Any

from piv_core.runs.reading import EvalRun, error_text, natural_key, task_data, task_key, trace_total
from piv_core.runs.skills import FIGURE_SUFFIX, applies
from piv_core.runs.summary import FULL_MARKS

FAILURES_SHOWN = 8
"""Rows of each run's failure summary (the most frequent failures)."""
LINKS_SHOWN = 12
"""Task links in one row of the failure summary; the rest are counted."""


def task_anchor(task: str) -> str:
    """The id of a task's section in the report."""
    return "task-" + re.sub(r"[^A-Za-z0-9_-]", "_", task)


class _Marks(HTMLParser):
    """The attributes of every element of class ``diff`` in an answer view."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.marked: list[dict[str, str]] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if "diff" in found.get("class", "").split():
            self.marked.append(found)


@dataclass
class Failure:
    """One kind of failure in one run: where it happened and how often."""

    what: str
    tasks: dict[str, None] = field(default_factory=dict)
    rollouts: int = 0
    times: int = 0
    """Occurrences (a rollout can miss several pairs of one fault code)."""


def _trace_failures(trace: dict[str, Any], view: str | None) -> dict[str, int]:
    """What went wrong in one rollout, each with how many times: the cells its answer view marks,
    then the per-skill metrics below 1 (on tasks that have the skill) of kinds the view does not show."""
    found: dict[str, int] = {}

    def add(what: str) -> None:
        found[what] = found.get(what, 0) + 1

    fixes = {
        str(f.get("ref")): f.get("kind") for f in task_data(trace).get("fixes") or [] if isinstance(f, dict)
    }
    for mark in _Marks(view).marked if view else []:
        if "data-figure" in mark:
            add(f"figure {mark['data-figure']}: wrong or missing")
        elif "data-pair" in mark:
            code = mark["data-pair"].rsplit("/", 1)[-1]
            add(f"fault code {code}: " + ("missed" if mark.get("data-side") == "key" else "claimed wrongly"))
        elif "data-fix" in mark:
            add(f"discrepancy kind {fixes.get(mark['data-fix']) or mark['data-fix']}: not resolved")
    shown = view or ""
    metrics = trace.get("metrics") or {}
    for name, value in metrics.items():
        if "_" not in name or not isinstance(value, int | float) or value >= 1 or not applies(metrics, name):
            continue
        suffix = name.split("_", 1)[-1]
        if name.startswith("pass_"):
            add(f"problem family {suffix}: failed")
        elif name.startswith("resolved_") and "data-fix" not in shown:
            add(f"discrepancy kind {suffix}: not resolved")
        elif name.startswith("recall_") and "data-pair" not in shown:
            add(f"fault code {suffix}: missed")
        elif name.startswith("precision_") and "data-pair" not in shown:
            add(f"fault code {suffix}: claimed wrongly")
        elif name.endswith(FIGURE_SUFFIX) and name != FIGURE_SUFFIX and "data-figure" not in shown:
            add(f"figure {name.removesuffix(FIGURE_SUFFIX)}: wrong or missing")
    for error in trace.get("errors") or []:
        add(f"error: {error_text(error)[:120]}")
    if trace.get("is_timeout"):
        add(f"timeout: {trace.get('stop_condition') or 'timed out'}")
    return found


def failures_of(run: EvalRun, views: dict[int, str | None]) -> list[Failure]:
    """`run`'s failures, most widespread first (by tasks, then rollouts, then occurrences).

    `views` holds each trace's answer view by ``id(trace)``. An episode that failed without
    leaving a trace counts under its recorded reason."""
    failures: dict[str, Failure] = {}
    for trace in run.traces:
        for what, times in _trace_failures(trace, views.get(id(trace))).items():
            failure = failures.setdefault(what, Failure(what))
            failure.tasks[task_key(trace)] = None
            failure.rollouts += 1
            failure.times += times
    for episode in run.failures:
        if episode.get("traced"):
            continue
        what = ("timeout: " if episode["timeout"] else "error: ") + str(
            episode["reason"] or "no reason recorded"
        )
        failure = failures.setdefault(what[:130], Failure(what[:130]))
        failure.tasks[str(episode["task"])] = None
        failure.rollouts += 1
        failure.times += 1
    return sorted(failures.values(), key=lambda f: (-len(f.tasks), -f.rollouts, -f.times, f.what))


def _task_prefix(tasks: list[str]) -> str:
    """What every one of `tasks` starts with, up to its last ``-`` or ``_`` (so links can show
    only the rest); "" when that is little or nothing."""
    if len(tasks) < 2:
        return ""
    first, last = min(tasks), max(tasks)
    common = next((i for i, (x, y) in enumerate(zip(first, last)) if x != y), min(len(first), len(last)))
    cut = max(first.rfind("-", 0, common), first.rfind("_", 0, common)) + 1
    return first[:cut] if cut >= 4 and all(len(t) > cut for t in tasks) else ""


def failures_section(
    runs: list[EvalRun], labels: list[str], views: dict[int, str | None], anchors: set[str]
) -> str:
    """Per run, what failed most, each row linking to the tasks where it happened."""
    parts = ['<section class="failures-summary" id="why"><h2>Why runs fell short</h2><div class="why">']
    for run, label in zip(runs, labels):
        totals = [trace_total(t) for t in run.traces]
        short = sum(1 for t in totals if t is None or t < FULL_MARKS) + sum(
            1 for f in run.failures if not f.get("traced")
        )
        rollouts = len(run.traces) + sum(1 for f in run.failures if not f.get("traced"))
        head = f"<h3>{escape(label)}: {short} of {rollouts} rollouts below full marks</h3>"
        found = failures_of(run, views)
        if not found:
            note = "every rollout at full marks" if not short else "nothing recorded says what failed"
            parts.append(f'<div data-run="{escape(label)}">{head}<p class="ok">{note}</p></div>')
            continue
        rows = []
        prefix = _task_prefix([t for f in found for t in f.tasks])
        for failure in found[:FAILURES_SHOWN]:
            tasks = sorted(failure.tasks, key=natural_key)
            links = " ".join(
                f'<a href="#{task_anchor(t)}" title="{escape(t)}">{escape(t[len(prefix) :])}</a>'
                if task_anchor(t) in anchors
                else escape(t)
                for t in tasks[:LINKS_SHOWN]
            )
            more = f" +{len(tasks) - LINKS_SHOWN} more" if len(tasks) > LINKS_SHOWN else ""
            times = f", {failure.times} times" if failure.times != failure.rollouts else ""
            rows.append(
                f'<tr data-failure="{escape(failure.what)}"><td>{escape(failure.what)}</td>'
                f'<td class="count">{len(tasks)} tasks ({failure.rollouts} rollouts{times})</td>'
                f"<td>{links}{more}</td></tr>"
            )
        rest = len(found) - FAILURES_SHOWN
        tail = f'<p class="note">{rest} less frequent failures: see the tasks below</p>' if rest > 0 else ""
        parts.append(
            f'<div data-run="{escape(label)}">{head}<table class="failures"><tr><th>what failed</th>'
            f"<th>where</th><th>tasks{f' ({escape(prefix)}…)' if prefix else ''}</th></tr>"
            f"{''.join(rows)}</table>{tail}</div>"
        )
    return "".join(parts) + "</div></section>"
