"""Reading run directories: ``traces.jsonl`` from vf-eval, ``summary.json`` from vf-validate.

verifiers exits 0 even when every rollout failed, so whether a run is good is decided here,
from what it wrote: episodes that completed, errored or timed out, and each reward and
metric per trace.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

TRACES_FILE = "traces.jsonl"
SUMMARY_FILE = "summary.json"


def mean_stderr(values: list[float]) -> tuple[float, float]:
    """Mean and standard error of the mean (0 for fewer than two values)."""
    if not values:
        return math.nan, math.nan
    if len(values) < 2:
        return values[0], 0.0
    mean = fmean(values)
    variance = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
    return mean, math.sqrt(variance / len(values))


@dataclass
class EvalRun:
    """What one vf-eval run directory holds, reduced to the figures a summary needs."""

    path: Path
    model: str = ""
    episodes: int = 0
    completed: int = 0
    errors: int = 0
    timeouts: int = 0
    traces: list[dict[str, Any]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def failed(self) -> int:
        return self.errors + self.timeouts

    def scores(self, kind: str) -> dict[str, list[float]]:
        """Per-trace values of each reward (`kind="rewards"`) or metric (`"metrics"`), in first-seen order."""
        columns: dict[str, list[float]] = {}
        for trace in self.traces:
            for name, value in (trace.get(kind) or {}).items():
                score = value.get("score") if isinstance(value, dict) else value
                if isinstance(score, int | float) and not isinstance(score, bool):
                    columns.setdefault(name, []).append(float(score))
        return columns

    def totals(self) -> list[float]:
        """Each trace's weighted reward."""
        return [
            sum(
                float(r.get("score") or 0.0) * float(r.get("weight", 1.0))
                for r in (t.get("rewards") or {}).values()
            )
            for t in self.traces
            if t.get("rewards")
        ]

    def one_line(self) -> str:
        reward, _ = mean_stderr(self.totals())
        return (
            f"{self.name}: {self.episodes} episodes, {self.completed} completed, {self.errors} errors, "
            f"{self.timeouts} timeouts, mean reward {reward:.3f}"
        )


def iter_episodes(path: Path) -> Iterator[dict[str, Any]]:
    with (path / TRACES_FILE).open() as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def read_eval_run(path: str | Path) -> EvalRun:
    """Read ``<path>/traces.jsonl``; raises FileNotFoundError when the run wrote none."""
    run = EvalRun(Path(path))
    for episode in iter_episodes(run.path):
        run.episodes += 1
        if episode.get("is_timeout"):
            run.timeouts += 1
        elif not episode.get("ok", False):
            run.errors += 1
        else:
            run.completed += 1
        for trace in episode.get("traces") or []:
            run.traces.append(trace)
            if not run.model:
                run.model = ((trace.get("calls") or [{}])[0] or {}).get("model", "")
    return run


@dataclass
class ValidateRun:
    path: Path
    summary: dict[str, Any]

    @property
    def total(self) -> int:
        return int(self.summary.get("total") or 0)

    @property
    def valid(self) -> int:
        return int((self.summary.get("outcomes") or {}).get("valid") or 0)

    @property
    def ok(self) -> bool:
        return self.total > 0 and self.valid == self.total

    def one_line(self) -> str:
        return f"{self.path.name}: {self.valid}/{self.total} valid"


def read_validate_run(path: str | Path) -> ValidateRun:
    path = Path(path)
    return ValidateRun(path, json.loads((path / SUMMARY_FILE).read_text()))
