"""Summaries of eval runs: a markdown table and a bar chart comparing runs.

Rows are runs; columns are episode counts, then the mean ± standard error of the weighted
reward, each reward and each metric over the run's traces. `render_groups` splits each run by a
key the traces record (``trace.info[key]``, else the task data's field), e.g. a task family.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path

from piv_core.runs import EvalRun, mean_stderr

FULL_MARKS = 1.0 - 1e-9


def _cell(values: list[float]) -> str:
    mean, stderr = mean_stderr(values)
    return "–" if math.isnan(mean) else f"{mean:.3f} ± {stderr:.3f}"


def _columns(runs: list[EvalRun], kind: str) -> list[str]:
    names: dict[str, None] = {}
    for run in runs:
        names.update(dict.fromkeys(run.scores(kind)))
    return list(names)


def render_table(runs: list[EvalRun]) -> str:
    rewards, metrics = _columns(runs, "rewards"), _columns(runs, "metrics")
    header = ["run", "model", "episodes", "completed", "errors", "timeouts", "reward", *rewards, *metrics]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for run in runs:
        reward_scores, metric_scores = run.scores("rewards"), run.scores("metrics")
        cells = [
            run.name,
            run.model or "–",
            str(run.episodes),
            str(run.completed),
            str(run.errors),
            str(run.timeouts),
        ]
        cells.append(_cell(run.totals()))
        cells += [_cell(reward_scores.get(name, [])) for name in rewards]
        cells += [_cell(metric_scores.get(name, [])) for name in metrics]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


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
    for run in runs:
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
                values = [float(t["metrics"][median]) for t in kept if median in (t.get("metrics") or {})]
                cell += f", median {median} {statistics.median(values):.4g}" if values else f", no {median}"
                if len(kept) < len(traces):
                    cell += f" ({len(traces) - len(kept)} without {where})"
            cells.append(cell)
        lines.append(f"| {run.name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_chart(runs: list[EvalRun], path: Path) -> None:
    """Grouped bars: one group per reward (and the weighted total), one bar per run, with stderr whiskers."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = ["reward", *_columns(runs, "rewards")]
    width = 0.8 / max(1, len(runs))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(names) * max(1, len(runs)) ** 0.5), 4.0))
    for i, run in enumerate(runs):
        columns = {"reward": run.totals(), **run.scores("rewards")}
        stats = [mean_stderr(columns.get(name, [])) for name in names]
        means = [0.0 if math.isnan(m) else m for m, _ in stats]
        errs = [0.0 if math.isnan(s) else s for _, s in stats]
        positions = [j + (i - (len(runs) - 1) / 2) * width for j in range(len(names))]
        ax.bar(positions, means, width, yerr=errs, capsize=3, label=run.model or run.name)
    ax.set_xticks(range(len(names)), names)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("mean score (± stderr)")
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
