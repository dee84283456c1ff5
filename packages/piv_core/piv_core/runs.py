"""Reading run directories: ``traces.jsonl`` from vf-eval, ``summary.json`` from vf-validate.

verifiers exits 0 even when every rollout failed, so whether a run is good is decided here,
from what it wrote: episodes that completed, errored or timed out, and each reward and
metric per trace. The per-trace readers (`trace_total`, `task_key`, `completion_tokens`,
`tool_calls`) are what summaries, reports and comparisons share.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
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
    failures: list[dict[str, Any]] = field(default_factory=list)
    """Episodes that errored or timed out: their ``id``, ``task`` (`task_key`), ``timeout`` flag,
    whether they left a trace (``traced``), completion ``tokens`` and ``errors``."""

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
        """Each trace's weighted reward (traces that record no rewards are left out)."""
        return [total for total in map(trace_total, self.traces) if total is not None]

    def stop_reasons(self) -> Counter[str]:
        """How many traces stopped for each ``stop_condition`` (``unknown`` when a trace records none)."""
        return Counter(str(trace.get("stop_condition") or "unknown") for trace in self.traces)

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
        if episode.get("is_timeout") or not episode.get("ok", False):
            run.failures.append(_failure(episode))
        for trace in episode.get("traces") or []:
            run.traces.append(trace)
            if not run.model:
                run.model = ((trace.get("calls") or [{}])[0] or {}).get("model", "")
    return run


def _failure(episode: dict[str, Any]) -> dict[str, Any]:
    errors = list(episode.get("errors") or [])
    for trace in episode.get("traces") or []:
        errors += trace.get("errors") or []
    tokens = episode.get("num_output_tokens")
    return {
        "id": episode.get("id"),
        "task": task_key(episode),
        "timeout": bool(episode.get("is_timeout")),
        "traced": bool(episode.get("traces")),
        "tokens": tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else 0,
        "errors": errors,
    }


def trace_total(trace: dict[str, Any]) -> float | None:
    """The trace's weighted reward, or None when it records no rewards."""
    rewards = trace.get("rewards")
    if not rewards:
        return None
    return sum(float(r.get("score") or 0.0) * float(r.get("weight", 1.0)) for r in rewards.values())


def natural_key(text: str) -> list[tuple[int, int | str]]:
    """A sort key ordering ``task-2`` before ``task-10``."""
    return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", text) if part]


def task_data(trace: dict[str, Any]) -> dict[str, Any]:
    """The task's `TaskData` fields as the trace recorded them (empty when it recorded none)."""
    return (trace.get("task") or {}).get("data") or {}


def task_key(trace: dict[str, Any]) -> str:
    """What pairs rollouts of one task across runs: the task id, else its example index, else its key."""
    data = task_data(trace)
    for value in (data.get("id"), data.get("idx"), (trace.get("task") or {}).get("key")):
        if value is not None and value != "":
            return str(value)
    return str(trace.get("id"))


def completion_tokens(trace: dict[str, Any]) -> int:
    """Tokens the model generated over the trace: ``num_output_tokens``, else its calls' usage summed."""
    recorded = trace.get("num_output_tokens")
    if isinstance(recorded, int) and not isinstance(recorded, bool):
        return recorded
    return sum(
        int(((call or {}).get("usage") or {}).get("completion_tokens") or 0)
        for call in trace.get("calls") or []
    )


def messages(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """The trace's messages in the order they were recorded."""
    return [node["message"] for node in trace.get("nodes") or [] if isinstance(node.get("message"), dict)]


def tool_calls(trace: dict[str, Any]) -> list[tuple[str, str]]:
    """Every tool call the model made, in order: (tool name, its arguments as the model wrote them)."""
    calls = []
    for message in messages(trace):
        if message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call.get("function"), dict) else call
            arguments = function.get("arguments", "")
            calls.append(
                (
                    str(function.get("name", "")),
                    arguments if isinstance(arguments, str) else json.dumps(arguments),
                )
            )
    return calls


def last_reply(trace: dict[str, Any]) -> str | None:
    """The text of the last assistant message that has any, or None."""
    for message in reversed(messages(trace)):
        if message.get("role") == "assistant" and isinstance(message.get("content"), str):
            return message["content"]
    return None


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
