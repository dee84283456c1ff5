"""What the harness hands its chat loop for one episode, and what the loop leaves for the harness.

The chat loop runs inside verifiers' bundled chat program, whose entry point takes only the
arguments of its command line; the harness's own choices (`LedgerHarnessConfig`) reach the loop
through a context variable instead, set around the program by `LedgerHarness.launch` and read
by `chat_loop.run_chat_loop` in the same task. The loop puts its transcript there, the messages
exactly as it holds them, so that once the program has ended the harness can record on the trace
the replies the model was given that no later request carried.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any


@dataclass
class LoopEpisode:
    """One episode's channel between the harness and its chat loop."""

    replay_reasoning: bool
    """Whether prior turns' reasoning fields go back to the model in later requests."""
    transcript: list[dict[str, Any]] = field(default_factory=list)
    """The loop's messages (the very list it sends), filled as the episode runs."""


EPISODE: ContextVar[LoopEpisode | None] = ContextVar("beancount_ledger_loop_episode", default=None)
