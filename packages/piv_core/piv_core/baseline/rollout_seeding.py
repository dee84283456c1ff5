"""Which rollout of a group a request belongs to, and the seed a noisy policy draws from for it.

The endpoint seeds a `NoisyPolicy`'s rng from the environment, the policy name, the task (its
system and first user message) and the rollout's draw: the n-th first-turn request for a task gets
draw n, so the rollouts of a group differ from one another while a run's multiset of rewards is
reproducible. Later turns of a multi-turn rollout recover the draw from the ids of the tool calls
the endpoint made in it (`tool_call_id`), so every turn of a rollout sees the same errors.
"""

from __future__ import annotations

import hashlib
import random
import re
import uuid

from piv_core.policy import Conversation

_DRAW_ID = re.compile(r"call_n(?P<draw>[0-9]{1,9})_")


def tool_call_id(draw: int | None) -> str:
    """A fresh tool-call id, carrying `draw` when given."""
    return f"call_{'' if draw is None else f'n{draw}_'}{uuid.uuid4().hex[:24]}"


def task_key(env_id: str, name: str, conversation: Conversation) -> str:
    """What identifies a task for policy `name` of environment `env_id`."""
    return hashlib.sha256("\0".join([env_id, name, *conversation.head()]).encode()).hexdigest()


def seeded_rng(key: str, draw: int) -> random.Random:
    """The rng of rollout `draw` of the task `key` names."""
    return random.Random(int.from_bytes(hashlib.sha256(f"{key}:{draw}".encode()).digest()[:8], "big"))


class Draws:
    """Counts the first-turn requests per task, so each rollout of a group gets its own draw."""

    def __init__(self) -> None:
        self._next: dict[str, int] = {}

    def of(self, key: str, conversation: Conversation) -> int:
        """The rollout's draw: read back from its earlier tool calls, else the next for this task."""
        for message in conversation.messages:
            calls = message.get("tool_calls") if message.get("role") == "assistant" else None
            for call in calls or []:
                if isinstance(call, dict) and (match := _DRAW_ID.match(str(call.get("id", "")))):
                    return int(match["draw"])
        if any(m.get("role") == "assistant" for m in conversation.messages):
            return 0  # a multi-turn rollout whose turns made no tool call: its first draw
        draw = self._next.get(key, 0)
        self._next[key] = draw + 1
        return draw
