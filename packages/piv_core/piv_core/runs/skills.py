"""Per-skill metrics: which metrics are about one skill, and which traces' tasks have that skill.

Environments record a metric per fault code, problem family or discrepancy kind under fixed
names (``recall_<code>``, ``pass_<family>``, ``resolved_<kind>``, ...), and each is 0 on a task
that has no such item. Beside it they record a presence metric (``keyed_<code>``, ``has_<kind>``)
that tells "missed it" from "the task had none". This module owns that rule: `applies` says
whether a skill metric is about something a trace's task has, and `skill_values` keeps only
those traces, so a per-skill mean is over the tasks that have the skill. `signal`, `summarize`
and the run report all read per-skill metrics through it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

SKILL_PREFIXES = ("recall_", "pass_", "resolved_")
"""Per-skill metrics, reported per policy (`piv_core.cli.signal_health`)."""
PRESENCE_PREFIXES = ("keyed_", "has_")
"""Metrics saying whether (or how often) a task has the code, family or kind a skill metric is about."""
PAIRED_PREFIXES = ("precision_", "error_")
"""Further per-skill metrics, counted as such where a presence metric names the same suffix."""
FIGURE_SUFFIX = "_correct"
"""Per-figure metrics (``<label>_correct``): one figure of the answer right or not."""
FOOTNOTE = "per-skill means are over the tasks that have the skill (n: the traces whose task has it)"
"""What the tables say under their per-skill means."""


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def applies(metrics: Mapping[str, Any], name: str) -> bool:
    """Whether skill metric `name` is about something the trace's task has."""
    suffix = name.split("_", 1)[1]
    for prefix in PRESENCE_PREFIXES:
        present = metrics.get(prefix + suffix)
        if isinstance(present, int | float):
            return present > 0
    return True


def is_presence(name: str) -> bool:
    """Whether `name` is a presence metric (``keyed_<code>``, ``has_<kind>``)."""
    return name.startswith(PRESENCE_PREFIXES)


def is_skill(name: str, names: Iterable[str]) -> bool:
    """Whether metric `name` is per skill, among the metric `names` a run records: a
    `SKILL_PREFIXES` metric, a `PAIRED_PREFIXES` one whose suffix has a presence metric, or a
    per-figure ``<label>_correct`` metric."""
    if name.startswith(SKILL_PREFIXES) or (name.endswith(FIGURE_SUFFIX) and name != FIGURE_SUFFIX):
        return True
    if name.startswith(PAIRED_PREFIXES):
        suffix = name.split("_", 1)[1]
        recorded = set(names)
        return any(prefix + suffix in recorded for prefix in PRESENCE_PREFIXES)
    return False


def skill_values(traces: Iterable[Mapping[str, Any]], name: str) -> list[float]:
    """Metric `name` of each trace whose task has the skill (`applies`), in order."""
    values = []
    for trace in traces:
        metrics = trace.get("metrics") or {}
        value = metrics.get(name)
        if _number(value) and applies(metrics, name):
            values.append(float(value))
    return values


__all__ = [
    "FIGURE_SUFFIX",
    "FOOTNOTE",
    "PAIRED_PREFIXES",
    "PRESENCE_PREFIXES",
    "SKILL_PREFIXES",
    "applies",
    "is_presence",
    "is_skill",
    "skill_values",
]
