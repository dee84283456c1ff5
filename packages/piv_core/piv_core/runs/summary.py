"""Summaries of eval runs: a markdown table, a per-skill table and a bar chart comparing runs.

Rows are runs, each labelled by `piv_core.runs.reading.run_labels` (the label given, else its directory
name less what all the runs' names share); columns are episode counts, the mean ± standard
error of the weighted reward, how the traces stopped, then each reward and each run-wide metric
over the run's traces. The per-skill metrics (`piv_core.runs.skills`: ``recall_<code>``,
``pass_<family>``, ...) are a table of their own, a metric per row, each mean over only the
traces whose task has that skill. A count metric (`COUNT_PREFIXES`, such as ``calls_<tool>``) that a trace
does not record counts as 0 there, since environments record only the tools that were called.
`render_groups` splits each run by a key the traces record (``trace.info[key]``, else the task
data's field), e.g. a task family. The chart has one bar per run, labelled like the table, the
legend under the plot, and each mean written over its bar (a 0 drawn as a sliver labelled "0").
"""

from __future__ import annotations

import io
import math
import statistics
from pathlib import Path

from piv_core.runs.reading import EvalRun, mean_stderr, run_labels
from piv_core.runs.skills import FOOTNOTE, is_presence, is_skill, skill_values

FULL_MARKS = 1.0 - 1e-9
COUNT_PREFIXES = ("calls_", "num_")
"""Metrics with these prefixes are counts: a trace that does not record one counted 0."""


def _cell(values: list[float]) -> str:
    mean, stderr = mean_stderr(values)
    return "–" if math.isnan(mean) else f"{mean:.3f} ± {stderr:.3f}"


def _columns(runs: list[EvalRun], kind: str) -> list[str]:
    names: dict[str, None] = {}
    for run in runs:
        names.update(dict.fromkeys(run.scores(kind)))
    return list(names)


def is_count(name: str) -> bool:
    return name.startswith(COUNT_PREFIXES)


def metric_values(run: EvalRun, name: str) -> list[float]:
    """Per-trace values of metric `name`; for a count, 0 in each scored trace that lacks it."""
    if not is_count(name):
        return run.scores("metrics").get(name, [])
    values = []
    for trace in run.traces:
        if not trace.get("rewards") and not trace.get("metrics"):
            continue
        value = (trace.get("metrics") or {}).get(name, 0.0)
        values.append(float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0)
    return values


def stops_cell(run: EvalRun) -> str:
    """How the run's traces stopped, most frequent first: ``submitted 2, turn_limit 1``."""
    return ", ".join(f"{reason} {count}" for reason, count in run.stop_reasons().most_common()) or "–"


def _split_metrics(runs: list[EvalRun]) -> tuple[list[str], list[str]]:
    """The metric columns: the run-wide ones, then the per-skill ones (`piv_core.runs.skills`);
    presence metrics (``keyed_*``, ``has_*``) are neither, they count the tasks a skill has."""
    names = _columns(runs, "metrics")
    recorded = [run.scores("metrics").keys() for run in runs]
    skills = [n for n in names if any(is_skill(n, mine) for mine in recorded)]
    general = [n for n in names if n not in skills and not is_presence(n)]
    return general, skills


def table_rows(runs: list[EvalRun], metrics: bool = True) -> tuple[list[str], list[list[str]]]:
    """The summary table's header and one row of cells per run (markdown and HTML share them):
    counts, the reward, stops, each reward, and (with `metrics`) each run-wide metric. The
    per-skill metrics are in `skill_rows`."""
    rewards = _columns(runs, "rewards")
    general = _split_metrics(runs)[0] if metrics else []
    header = ["run", "model", "episodes", "completed", "errors", "timeouts", "reward", "stops"]
    header += [*rewards, *general]
    rows = []
    for run, label in zip(runs, run_labels(runs)):
        reward_scores = run.scores("rewards")
        cells = [
            label,
            run.model or "–",
            str(run.episodes),
            str(run.completed),
            str(run.errors),
            str(run.timeouts),
            _cell(run.totals()),
            stops_cell(run),
        ]
        cells += [_cell(reward_scores.get(name, [])) for name in rewards]
        cells += [_cell(metric_values(run, name)) for name in general]
        rows.append(cells)
    return header, rows


def metric_rows(runs: list[EvalRun]) -> tuple[list[str], list[list[str]]]:
    """The run-wide metrics turned on their side: one row per metric, one column per run."""
    header = ["metric", *run_labels(runs)]
    general = _split_metrics(runs)[0]
    return header, [[name, *(_cell(metric_values(run, name)) for run in runs)] for name in general]


def skill_rows(runs: list[EvalRun]) -> tuple[list[str], list[list[str]]]:
    """One row per per-skill metric, one column per run: its mean ± stderr over the traces whose
    task has the skill (`piv_core.runs.skills.skill_values`) and how many those are; "–" where none."""
    header = ["per-skill metric", *run_labels(runs)]
    rows = []
    for name in _split_metrics(runs)[1]:
        cells = [name]
        for run in runs:
            values = skill_values(run.traces, name)
            cells.append(f"{_cell(values)} (n={len(values)})" if values else "–")
        rows.append(cells)
    return header, rows


def render_table(runs: list[EvalRun]) -> str:
    header, rows = table_rows(runs)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    return "\n".join(lines)


def render_skills(runs: list[EvalRun]) -> str:
    """The per-skill table as aligned text in a fenced block, with its footnote ("" when the runs
    record no per-skill metric): a skill per line, so thirty codes never widen the run table."""
    header, rows = skill_rows(runs)
    if not rows:
        return ""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in [header, *rows]
    ]
    return "\n".join(["```", *lines, "```", f"{FOOTNOTE}."])


def _group_of(trace: dict, key: str) -> str | None:
    value = (trace.get("info") or {}).get(key)
    if value is None:
        value = ((trace.get("task") or {}).get("data") or {}).get(key)
    return None if value is None else str(value)


def render_groups(runs: list[EvalRun], key: str, median: str | None = None, where: str | None = None) -> str:
    """Per run and per value of `key`: traces at full marks, and the median of metric `median`
    over the traces whose metric `where` is 1.0 (all traces when `where` is None)."""
    groups: dict[str, None] = {}
    for run in runs:
        groups.update(dict.fromkeys(g for t in run.traces if (g := _group_of(t, key)) is not None))
    lines = ["| run | " + " | ".join(groups) + " |", "|---|" + "---|" * len(groups)]
    for run, label in zip(runs, run_labels(runs)):
        totals = dict(zip((id(t) for t in run.traces if t.get("rewards")), run.totals()))
        cells = []
        for group in groups:
            traces = [t for t in run.traces if _group_of(t, key) == group and id(t) in totals]
            if not traces:
                cells.append("–")
                continue
            cell = f"{sum(totals[id(t)] >= FULL_MARKS for t in traces)}/{len(traces)} at 1.0"
            if median:
                kept = [t for t in traces if where is None or (t.get("metrics") or {}).get(where) == 1.0]
                values = [v for t in kept if (v := (t.get("metrics") or {}).get(median)) is not None]
                cell += f", median {median} {statistics.median(values):.4g}" if values else f", no {median}"
                if len(kept) < len(traces):
                    cell += f" ({len(traces) - len(kept)} without {where})"
            cells.append(cell)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def chart_labels(runs: list[EvalRun]) -> list[str]:
    """The chart's legend: each run's label, with its model when that says something more."""
    return [
        f"{label} ({run.model})" if run.model and run.model != label else label
        for run, label in zip(runs, run_labels(runs))
    ]


ZERO_HEIGHT = 0.012
"""The height a mean of exactly 0 is drawn at, so it shows as a sliver, not as no bar."""


def _figure(runs: list[EvalRun]):  # noqa: ANN202 - a matplotlib Figure, imported lazily
    """Grouped bars: one group per reward (and the weighted total), one bar per run, with stderr
    whiskers and each mean written over its bar. A mean of 0 is a thin bar labelled "0"; a run
    that records no such reward gets no bar and "n/a"."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = ["reward", *_columns(runs, "rewards")]
    width = 0.8 / max(1, len(runs))
    width_in = max(6.0, 1.6 * len(names) * max(1, len(runs)) ** 0.5)
    legend_rows = len(runs) if max(len(label) for label in chart_labels(runs)) > 40 else (len(runs) + 2) // 3
    fig, ax = plt.subplots(figsize=(width_in, 4.0 + 0.22 * legend_rows))
    for i, (run, label) in enumerate(zip(runs, chart_labels(runs))):
        columns = {"reward": run.totals(), **run.scores("rewards")}
        stats = [mean_stderr(columns.get(name, [])) for name in names]
        positions = [j + (i - (len(runs) - 1) / 2) * width for j in range(len(names))]
        heights = [0.0 if math.isnan(m) else max(m, ZERO_HEIGHT) for m, _ in stats]
        errs = [0.0 if math.isnan(s) else s for _, s in stats]
        bars = ax.bar(positions, heights, width, yerr=errs, capsize=3, label=label)
        texts = ["n/a" if math.isnan(m) else "0" if m == 0 else f"{m:.2f}" for m, _ in stats]
        ax.bar_label(bars, labels=texts, padding=2, fontsize=7)
    ax.set_xticks(range(len(names)), names)
    ax.set_ylim(0, 1.12)
    ax.set_ylabel("mean score (± stderr)")
    columns = 1 if legend_rows == len(runs) else min(3, len(runs))
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=columns, frameon=False)
    fig.tight_layout()
    return fig


def write_chart(runs: list[EvalRun], path: Path) -> None:
    """The chart as a PNG at `path`."""
    import matplotlib.pyplot as plt

    fig = _figure(runs)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def chart_svg(runs: list[EvalRun]) -> str | None:
    """The chart as an SVG document with its text kept as text, or None when matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        return None
    import matplotlib.pyplot as plt

    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "piv"}):
        fig = _figure(runs)
        out = io.StringIO()
        fig.savefig(out, format="svg", metadata={"Date": None})
    plt.close(fig)
    return out.getvalue()
