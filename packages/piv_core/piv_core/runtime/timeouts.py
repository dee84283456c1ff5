"""The rollout timeout every environment of the suite ships: no model stream holds an episode forever.

verifiers stops an agent at its rollout timeout (the trace stops as ``agent_timeout``, is marked
``is_timeout``, and is still finalized and scored), but applies none unless one is configured.
Each environment's taskset therefore gives every task it serves a default, as the task's own
agent timeout (``TaskData.timeout.agent``). The command line and a config file still decide:
``--env.agent.timeout.rollout SECONDS`` (``[env.agent.timeout] rollout = ...``) takes precedence
over a task's own value in verifiers 0.4 and 0.3.1 alike.

A default is a generous bound on an honest episode, derived from its limits rather than measured
on one machine: `rollout_seconds` allows the episode's output tokens at `SLOWEST_TOKENS_PER_SECOND`
plus `TURN_SECONDS` per model turn (request latency, queueing, tool calls), rounded up to whole
minutes. A single reply (`SINGLE_REPLY_TOKENS`) gets 15 minutes; beancount-ledger's episode (its
turn limit and token ceiling) 30.

The default is applied where a taskset serves its tasks, not where task data is derived, so what
defines a task (its fields, the digests a release certifies and ``bench/task_hashes.py``) is unchanged.
A task that already names its own agent timeout keeps it.
"""

from __future__ import annotations

import math
from typing import TypeVar

SLOWEST_TOKENS_PER_SECOND = 40
"""The slowest generation a default allows for (a large model on a loaded endpoint)."""
TURN_SECONDS = 30
"""What a default allows per model turn beyond generation: latency, queueing, tool calls."""
SINGLE_REPLY_TOKENS = 32_768
"""The longest single reply a default allows for (a long reasoning reply)."""

Data = TypeVar("Data")


def rollout_seconds(output_tokens: int, turns: int = 1) -> float:
    """A default rollout timeout for an episode of at most `output_tokens` over `turns` model turns."""
    if output_tokens < 0 or turns < 1:
        raise ValueError(f"rollout_seconds: output_tokens >= 0 and turns >= 1, not {output_tokens}, {turns}")
    seconds = output_tokens / SLOWEST_TOKENS_PER_SECOND + turns * TURN_SECONDS
    return float(math.ceil(seconds / 60) * 60)


SINGLE_REPLY_SECONDS = rollout_seconds(SINGLE_REPLY_TOKENS)
"""The default rollout timeout of a single-reply environment (900 s)."""


def with_rollout_timeout(data: Data, seconds: float = SINGLE_REPLY_SECONDS) -> Data:
    """Task data `data` with `seconds` as its agent timeout, unless it names one already.

    Task data without verifiers' ``timeout`` field (none is known, but a release might drop it)
    is returned unchanged: the command-line timeout is then the only one."""
    timeout = getattr(data, "timeout", None)
    if timeout is None or not hasattr(timeout, "agent") or timeout.agent is not None:
        return data
    return data.model_copy(update={"timeout": timeout.model_copy(update={"agent": float(seconds)})})  # type: ignore[attr-defined]


__all__ = [
    "SINGLE_REPLY_SECONDS",
    "SINGLE_REPLY_TOKENS",
    "SLOWEST_TOKENS_PER_SECOND",
    "TURN_SECONDS",
    "rollout_seconds",
    "with_rollout_timeout",
]
