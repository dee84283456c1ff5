"""The package's harness: verifiers' `null` chat program with the episode contract's chat loop,
run in-process, and a trace that holds everything the model was given.

The stock `null` harness ends at the first reply without a tool call; this one runs
`chat_loop.run_chat_loop` instead (three idle replies end it, every request is capped at the
tokens left). The program is verifiers' bundled chat program with that loop spliced in; it is
executed in the env server's process by `piv_core.runtime.harness.run_chat_program` (no process per
episode), calling the task's tool servers and the interception endpoint exactly as the script
would. Exported from the package, it is the default harness of ``beancount-ledger``.

Knob (``--env.agent.harness.replay-reasoning``): ``replay_reasoning`` (default True, what the
chat program has always done) sends prior turns' reasoning fields back to the model in later
requests; False withholds them. The choice is recorded on every trace (``info.replay_reasoning``)
and in its episode digest (`contract.episode_digest`), which is unchanged for the default.

verifiers records a turn's input only when a later request carries it, so an episode ended by a
stop would leave out what the model was last given: the tool replies of the last executed turn
(`submitted` ends the episode before the next request), and the final reply's tool calls, which
are never executed (`turn_limit`, `token_ceiling`). Once the program has ended, `record_unsent`
adds both to the trace's message graph, the unexecuted calls with the error that says why they
were not run, so traces.jsonl holds every reply the model's calls got.
"""

from __future__ import annotations

import inspect
from functools import lru_cache
from typing import Any

from piv_core.runtime.harness import InProcessNullHarness
from verifiers.v1.clients import ModelContext
from verifiers.v1.harness import Harness
from verifiers.v1.harnesses.null.harness import NullHarnessConfig
from verifiers.v1.runtimes import ProgramResult, Runtime
from verifiers.v1.task import TaskData
from verifiers.v1.trace import Trace

from beancount_ledger import chat_loop, contract, limits
from beancount_ledger.loop_channel import EPISODE, LoopEpisode
from beancount_ledger.verifiers_internals import (
    CHAT_MODULES,
    CHAT_PROGRAM,
    bundle_program,
    parse_message,
    prepare_turn,
)

_GUARD = 'if __name__ == "__main__":\n    asyncio.run(main())\n'


@lru_cache(maxsize=1)
def program_source() -> str:
    """The bundled chat program with its entry point moved after our `run_chat_loop`."""
    bundled = bundle_program(CHAT_PROGRAM, *CHAT_MODULES)
    if not bundled.rstrip().endswith(_GUARD.rstrip()):
        raise RuntimeError("verifiers' chat program changed shape; chat_loop cannot be spliced in")
    head = bundled.rstrip()[: -len(_GUARD.rstrip())]
    loop = inspect.getsource(chat_loop).replace("if TYPE_CHECKING:", "if False:", 1)
    return f"{head}\n{loop}"


def unexecuted_error(stop_condition: str | None) -> str:
    """What a tool call of the episode's final reply gets instead of being run."""
    if stop_condition == "turn_limit":
        last = limits.MAX_TURNS
        return f"error: not run; turn {last} is the episode's last and its tool calls are never executed"
    if stop_condition == "token_ceiling":
        return (
            f"error: not run; this reply reached the episode's {limits.TOKEN_CEILING:,}-token "
            "completion ceiling, which ended the episode"
        )
    return f"error: not run; the episode had ended ({stop_condition or 'stopped'})"


def _root_tools(trace: Trace, node: int) -> list[Any]:
    while trace.nodes[node].parent is not None:
        node = trace.nodes[node].parent
    return list(trace.nodes[node].tools)


def record_unsent(trace: Trace, episode: LoopEpisode) -> int:
    """Add to `trace` what the chat loop gave the model that no request carried (see the module
    docstring); returns the number of messages added."""
    sampled = [i for i, node in enumerate(trace.nodes) if node.sampled]
    if not sampled or not episode.transcript:
        return 0
    prompt = [parse_message(message) for message in episode.transcript]
    received = sum(1 for message in episode.transcript if message.get("role") == "assistant")
    if trace.num_turns > received:
        # The last reply was recorded at the model boundary but withheld from the loop by a stop.
        final = trace.nodes[sampled[-1]].message
        prompt.append(final)
        error = unexecuted_error(trace.stop_condition)
        prompt += [
            parse_message({"role": "tool", "tool_call_id": call.id, "content": error, "name": call.name})
            for call in final.tool_calls or []
        ]
    before = len(trace.nodes)
    prepare_turn(trace, prompt, _root_tools(trace, sampled[0])).commit_prompt()
    return len(trace.nodes) - before


class LedgerHarnessConfig(NullHarnessConfig):
    replay_reasoning: bool = contract.REPLAY_REASONING
    """Send prior turns' reasoning fields (``reasoning_content``, ``reasoning``,
    ``reasoning_details``) back to the model in later requests; False withholds them."""


class LedgerHarness(InProcessNullHarness, Harness[LedgerHarnessConfig]):
    """`null` with the contract's chat loop (idle-turn limit, per-request token cap), in-process."""

    config: LedgerHarnessConfig

    def program_source(self) -> str:
        return program_source()

    async def launch(
        self,
        ctx: ModelContext,
        trace: Trace,
        runtime: Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: TaskData,
        tool_interception_url: str | None = None,
    ) -> ProgramResult:
        episode = LoopEpisode(replay_reasoning=self.config.replay_reasoning)
        trace.info["replay_reasoning"] = episode.replay_reasoning
        token = EPISODE.set(episode)
        try:
            return await super().launch(
                ctx, trace, runtime, endpoint, secret, mcp_urls, data, tool_interception_url
            )
        finally:
            EPISODE.reset(token)
            record_unsent(trace, episode)
