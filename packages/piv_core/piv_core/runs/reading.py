"""Reading run directories: ``traces.jsonl`` from vf-eval, ``summary.json`` from vf-validate.

verifiers exits 0 even when every rollout failed, so whether a run is good is decided here,
from what it wrote. verifiers 0.4 marks a timeout or an error on each trace (``is_timeout``,
``ok``, a ``stop_condition`` such as ``agent_timeout``), not always on the episode record, so
an episode counts as timed out when it or any of its traces timed out, else as errored when it
or any of its traces is not ``ok``, else as completed. Each failure keeps its reason: the first
error recorded on its traces or the episode, else the stage limit that stopped it, else the
rollout's line in the run's ``logs/latest/eval.log``. The per-trace readers (`trace_total`,
`task_key`, `completion_tokens`, `tool_calls`) are what summaries, reports and comparisons
share. Every file is read through `piv_core.runs.files`: a bad one raises `RunFileError` naming
the file, the line and the field.
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

from piv_core.runs.files import (
    RunFileError,
    ValidateSummaryRecord,
    iter_records,
    parse_json,
    read_text,
    validated,
)

TRACES_FILE = "traces.jsonl"
SUMMARY_FILE = "summary.json"
LOG_FILE = Path("logs") / "latest" / "eval.log"
"""Where vf-eval writes a run's log, under the run directory."""
LOG_BYTES = 64 * 2**20
"""The most of the log read when looking for a failure's reason."""


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
    """Episodes that errored or timed out, in file order: their ``id``, ``task`` (`task_key`),
    ``timeout`` flag, whether they left a trace (``traced``), completion ``tokens``, ``errors``
    (the episode's and its traces'), and ``reason`` (one line: why it failed, when recorded)."""
    label: str | None = None
    """The short name tables, charts and comparisons show (`run_labels`); None: derived."""
    env_id: str = ""
    """The environment the run's episodes name (empty when they name none)."""

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

    @property
    def log(self) -> Path:
        """The run's log file (verifiers writes one per attempt; this is the latest)."""
        return self.path / LOG_FILE

    def one_line(self) -> str:
        """The counts and mean reward; with a failure, the first one's reason and where the log is."""
        reward, _ = mean_stderr(self.totals())
        line = (
            f"{self.name}: {_count(self.episodes, 'episode')}, {self.completed} completed, "
            f"{_count(self.errors, 'error')}, {_count(self.timeouts, 'timeout')}, "
            + (f"mean reward {reward:.3f}" if math.isfinite(reward) else "no reward recorded")
        )
        if self.failures:
            first = self.failures[0]
            kind = "timeout" if first["timeout"] else "error"
            line += f"; first {kind}: task {first['task']}: {first['reason'] or 'no reason recorded'}"
            if self.log.is_file():
                line += f"; log: {self.log}"
        return line


NAME_PARTS = re.compile(r"(--|/)")
"""What a run name's parts are split on: vf-eval joins them with ``--``."""
NAME_TAIL = re.compile(r"--[0-9a-f]{6,}$")
"""The hash vf-eval ends a run name with."""


def _common_parts(names: list[list[str]], reverse: bool = False) -> int:
    """How many leading (or trailing) parts all `names` share."""
    count = 0
    while all(len(parts) > count for parts in names):
        at = [parts[-1 - count] if reverse else parts[count] for parts in names]
        if len(set(at)) > 1:
            break
        count += 1
    return count


def short_names(names: list[str]) -> list[str]:
    """`names` with what they all share dropped: their trailing hashes, then the leading and
    trailing ``--`` parts they have in common; `names` unchanged when that would leave one
    empty or two alike (one name alone is kept whole)."""
    if len(names) < 2:
        return list(names)
    stems = [NAME_TAIL.sub("", name) for name in names]
    if len(set(stems)) < len(stems):
        stems = list(names)
    parts = [NAME_PARTS.split(stem) for stem in stems]
    head = _common_parts(parts)
    tail = _common_parts([p[head:] for p in parts], reverse=True)
    short = ["".join(p[head : len(p) - tail]).strip("-/") for p in parts]
    if all(short) and len(set(short)) == len(short):
        return short
    return list(names)


def run_labels(runs: list[EvalRun]) -> list[str]:
    """A distinct label per run: the label it was given, else its directory name with what
    every run's name shares dropped (`short_names`), then its parent's name, then a number."""
    derived = short_names([run.name for run in runs])
    labels = [run.label or short for run, short in zip(runs, derived)]
    if len(set(labels)) < len(labels):
        labels = [
            f"{run.path.parent.name}/{run.name}" if run.label is None and labels.count(label) > 1 else label
            for run, label in zip(runs, labels)
        ]
    seen: dict[str, int] = {}
    unique = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        unique.append(label if labels.count(label) == 1 else f"{label} #{seen[label]}")
    return unique


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def iter_episodes(path: Path) -> Iterator[dict[str, Any]]:
    """Each episode record of ``<path>/traces.jsonl``, checked (`piv_core.runs.files.iter_records`)."""
    return iter_records(path / TRACES_FILE)


def read_eval_run(path: str | Path) -> EvalRun:
    """Read ``<path>/traces.jsonl``; raises FileNotFoundError when the run wrote none and
    `RunFileError` when a record is bad."""
    run = EvalRun(Path(path))
    for episode in iter_episodes(run.path):
        traces = episode.get("traces") or []
        run.episodes += 1
        env = episode.get("env")
        if not run.env_id and isinstance(env, dict) and isinstance(env.get("id"), str):
            run.env_id = env["id"]
        timed_out = episode.get("is_timeout") or any(t.get("is_timeout") for t in traces)
        errored = not episode.get("ok", False) or any(not t.get("ok", True) for t in traces)
        if timed_out:
            run.timeouts += 1
        elif errored:
            run.errors += 1
        else:
            run.completed += 1
        if timed_out or errored:
            run.failures.append(_failure(episode, bool(timed_out)))
        for trace in traces:
            run.traces.append(trace)
            if not run.model:
                run.model = ((trace.get("calls") or [{}])[0] or {}).get("model") or ""
    if not run.episodes:
        raise RunFileError(f"{run.path / TRACES_FILE}: holds no episode record")
    for failure in run.failures:
        if failure["reason"] is None:
            failure["reason"] = _logged_reason(run.log, failure["rollouts"])
    return run


def error_text(error: Any) -> str:
    """One recorded error as text: ``Type: message`` for verifiers' records, else as written."""
    if isinstance(error, dict):
        kind = error.get("type") or error.get("error") or "error"
        return f"{kind}: {error.get('message') or error.get('detail') or ''}".strip().rstrip(":")
    return str(error)


TRACEBACK = "Traceback (most recent call last):"
REASON_CHARS = 300
"""The most characters of a failure's reason the one-line summary shows."""


def _one_line(text: str) -> str:
    """`text` on one line: a traceback inside it reduced to its last line (the exception raised)."""
    head, found, tail = text.partition(TRACEBACK)
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    if found and lines:
        head = f"{head.strip()} {lines[-1]}"
    line = " ".join(head.split())
    return line if len(line) <= REASON_CHARS else line[: REASON_CHARS - 1] + "…"


def _limit(trace: dict[str, Any]) -> Any:
    """The rollout limit (seconds) that applied to `trace`: its agent's, else its task's own."""
    configured = (((trace.get("agent") or {}).get("config") or {}).get("timeout") or {}).get("rollout")
    return configured if configured is not None else (task_data(trace).get("timeout") or {}).get("agent")


def _failure(episode: dict[str, Any], timed_out: bool) -> dict[str, Any]:
    traces = episode.get("traces") or []
    errors = [e for trace in traces for e in trace.get("errors") or []] + list(episode.get("errors") or [])
    reason = _one_line(error_text(errors[0])) if errors else None
    stopped = next((t for t in traces if t.get("is_timeout")), None)
    if reason is None and stopped is not None:
        limit = _limit(stopped)
        reason = str(stopped.get("stop_condition") or "timeout")
        if stopped.get("stop_condition") == "agent_timeout" and isinstance(limit, int | float):
            reason += f" (the {limit:g} s rollout limit)"
    tokens = episode.get("num_output_tokens")
    return {
        "id": episode.get("id"),
        "task": task_key(episode if episode.get("task") or not traces else traces[0]),
        "timeout": timed_out,
        "traced": bool(traces),
        "tokens": tokens or 0,
        "errors": errors,
        "reason": reason,
        "rollouts": [i for i in [*(t.get("id") for t in traces), episode.get("id")] if i],
    }


def _logged_reason(log: Path, rollouts: list[str]) -> str | None:
    """The message of the log's first warning or error about one of `rollouts`, or None."""
    if not rollouts:
        return None
    try:
        text = read_text(log, LOG_BYTES) if log.exists() else ""
    except RunFileError:
        return None
    ids = re.compile("|".join(re.escape(r) for r in rollouts))
    for line in text.splitlines():
        level = re.search(r"\b(WARNING|ERROR|CRITICAL)\b\s*", line)
        if level and ids.search(line):
            message = _one_line(re.sub(r"\bid=\S+\s*", "", line[level.end() :]))
            return message or None
    return None


def trace_total(trace: dict[str, Any]) -> float | None:
    """The trace's weighted reward, or None when it records none (or scoring never ran: every
    reward recorded as null)."""
    rewards = [r for r in (trace.get("rewards") or {}).values() if isinstance(r, dict)]
    if not rewards:
        return None
    return math.fsum(float(r.get("score") or 0.0) * float(r.get("weight", 1.0)) for r in rewards)


def natural_key(text: str) -> list[tuple[int, int | str]]:
    """A sort key ordering ``task-2`` before ``task-10``."""
    key: list[tuple[int, int | str]] = []
    for part in re.split(r"([0-9]+)", text):
        if part.isascii() and part.isdigit():
            digits = part.lstrip("0") or "0"
            key += [(0, len(digits)), (0, digits)]  # numeric order without converting the digits
        elif part:
            key.append((1, part))
    return key


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


CHARS_PER_TOKEN = 4
"""Characters a token, for an estimate where the server reported no token usage."""


def output_tokens(trace: dict[str, Any]) -> tuple[int, bool]:
    """Tokens the model generated over the trace, and whether that is an estimate: the recorded
    count (`completion_tokens`) when above 0, else the text of its assistant messages (replies and
    tool-call arguments) at `CHARS_PER_TOKEN` characters a token (a server whose stream carries
    no usage, such as llama.cpp's, leaves the count at 0); (0, False) when it wrote nothing."""
    recorded = completion_tokens(trace)
    if recorded:
        return recorded, False
    chars = 0
    for message in messages(trace):
        if message.get("role") != "assistant":
            continue
        content = message.get("content")
        chars += len(content) if isinstance(content, str) else 0
    chars += sum(len(name) + len(arguments) for name, arguments in tool_calls(trace))
    return (math.ceil(chars / CHARS_PER_TOKEN), True) if chars else (0, False)


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
    """Read ``<path>/summary.json``; raises FileNotFoundError or `RunFileError` as `read_eval_run`."""
    path = Path(path)
    where = path / SUMMARY_FILE
    summary = validated(parse_json(read_text(where), str(where)), ValidateSummaryRecord, str(where))
    return ValidateRun(path, summary)
