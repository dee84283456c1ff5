"""What a scripted policy is: the conversation it reads and the reply it gives.

A policy is a plain function of the conversation so far (`Conversation`) returning either the
assistant's text or a list of `ToolCall`s, optionally wrapped in `Reasoned` to come with a
reasoning field (``reasoning_content``) as reasoning models send it. Policies are stateless: a
multi-turn policy reads what it needs from the transcript, so concurrent rollouts never interfere.

A `NoisyPolicy` is an environment's solver of graded skill: it errs on each row, figure or
discrepancy with probability p, drawing only from the `random.Random` it is given. It is served as
``baseline/noisy-<p>`` (`noisy_share` reads the p).
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

MODEL_PREFIX = "baseline/"
"""The model-name prefix that asks the baseline endpoint for a scripted policy."""
SOLVER_NAMES = ("oracle", "reference")
"""Names of an environment's full-marks solver; a request for either reaches the one it has."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call a policy makes; `arguments` is JSON-encoded on the wire."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Conversation:
    """What a policy sees: the request's messages and tool schemas."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]

    @staticmethod
    def text(message: dict[str, Any]) -> str:
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
        return ""

    @property
    def user_text(self) -> str:
        return "\n\n".join(self.text(m) for m in self.messages if m.get("role") == "user")

    def offers(self, tool: str) -> bool:
        """Whether the request offers a tool named `tool` (OpenAI's nested or flat schema)."""
        return any(
            isinstance(spec, dict) and tool in (spec.get("name"), (spec.get("function") or {}).get("name"))
            for spec in self.tools
        )

    @property
    def tool_replies(self) -> list[str]:
        """The text of every tool reply so far, in order."""
        return [self.text(m) for m in self.messages if m.get("role") == "tool"]

    def head(self) -> list[str]:
        """The text of the first system (or developer) message and of the first user message
        (empty where there is none): what identifies the task a request belongs to."""
        system = next((m for m in self.messages if m.get("role") in ("system", "developer")), {})
        user = next((m for m in self.messages if m.get("role") == "user"), {})
        return [self.text(system), self.text(user)]


@dataclass(frozen=True)
class Reasoned:
    """A reply that comes with a reasoning field, sent as ``reasoning_content`` beside it."""

    reply: str | list[ToolCall]
    reasoning: str


Reply = str | list[ToolCall] | Reasoned
Policy = Callable[[Conversation], Reply]
NoisyPolicy = Callable[[Conversation, float, random.Random], Reply]
"""An environment's solver that errs on each item with probability p, drawing only from the rng."""


def calling_first(solve: Policy, tool: str, calls: Callable[[Conversation], list[dict[str, Any]]]) -> Policy:
    """`solve`, but where the request offers `tool` and no tool has answered yet, first one reply
    calling `tool` once for each argument set `calls` gives (none: `solve` at once)."""

    def policy(conversation: Conversation) -> Reply:
        if conversation.offers(tool) and not conversation.tool_replies:
            wanted = calls(conversation)
            if wanted:
                return [ToolCall(tool, arguments) for arguments in wanted]
        return solve(conversation)

    return policy


NOISY = re.compile(r"noisy-(?P<p>[0-9]+(?:\.[0-9]+)?)")


def noisy_share(name: str) -> float | None:
    """The p of policy name ``noisy-<p>`` (None for any other name); ValueError outside [0, 1]."""
    match = NOISY.fullmatch(name)
    if match is None:
        return None
    p = float(match["p"])
    if not (math.isfinite(p) and 0.0 <= p <= 1.0):
        raise ValueError(f"noisy-<p> needs p between 0 and 1, got {match['p']}")
    return p


def policy_name(model: str) -> str:
    """The policy a model name asks for: ``baseline/oracle`` and ``oracle`` both name ``oracle``."""
    return model[len(MODEL_PREFIX) :] if model.startswith(MODEL_PREFIX) else model
