"""The chat loop of the package's harness, spliced into verifiers' bundled `null` chat program.

It replaces the bundled `run_chat_loop` and differs from it in these ways: a reply without tool
calls does not end the program (the model is reminded, and the episode ends after
`IDLE_TURNS` such replies in a row); every request carries ``max_tokens`` equal to what is
left of the episode's completion-token ceiling; only the first `CALLS_PER_TURN` tool calls of a
turn are run, the rest answered with an error; and prior turns' reasoning fields are sent back
to the model or withheld as the harness's ``replay_reasoning`` says (`loop_channel`). A tool
call's arguments are decoded within bounds (`piv_core.parsing.bounded_decode`: at most
`TOOL_ARGUMENTS_MAX_BYTES`, nested at most `TOOL_ARGUMENTS_MAX_DEPTH` deep, refused unread
otherwise). Arguments that are not such JSON, or not an object, or not valid Unicode (a lone
surrogate, which no transport can carry), and any failure of handling or running a tool call,
come back to the model as an error message (`tool_reply`); the loop goes on. The loop keeps its
transcript in the episode's channel, so the harness can record what the model was last given.

Two of the bundled program's per-episode costs are removed here without changing a byte on the
wire: `capped_chat` posts the request body as built (the SDK's request-parameter transform walks
every message of the growing transcript, and leaves plain JSON messages unchanged) through
`piv_core.runtime.chat_request.sdk_completion` (the SDK's request, headers and retry rule, from one pooled
connection per event loop instead of a client per episode), and
`mcp_client` builds its HTTP client with one TLS context per process instead of parsing the CA
bundle again for every episode's connection to the tool server.

The limits come from `limits`, the one place they are defined. The names this module uses
without importing (`call_mcp`, `gate_tool_call`, `bound_tool_message`, `_read_chat_completion`,
`MCP_TIMEOUT`) are the bundled program's own; this module is never imported by the package at
run time, only its source is spliced.
"""

from contextlib import AsyncExitStack, asynccontextmanager, suppress
from functools import lru_cache
from typing import TYPE_CHECKING

from piv_core.parsing.bounded_decode import (
    TOOL_ARGUMENTS_MAX_BYTES,
    TOOL_ARGUMENTS_MAX_DEPTH,
    Undecodable,
    load_json,
)
from piv_core.runtime.harness import scrub_surrogates as without_surrogates

from beancount_ledger.limits import CALLS_PER_TURN, IDLE_TURNS, REPLY_CAP, TOKEN_CEILING
from beancount_ledger.loop_channel import EPISODE, LoopEpisode

if TYPE_CHECKING:  # names provided by the bundled program
    from verifiers.v1.harnesses.utils.compaction import bound_tool_message
    from verifiers.v1.harnesses.utils.core import _read_chat_completion, call_mcp, gate_tool_call
    from verifiers.v1.harnesses.utils.mcp import MCP_TIMEOUT

REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_details")
"""The assistant-message fields providers carry a model's reasoning in."""
NUDGE = (
    "No tool was called ({idle} of {limit} consecutive replies without a tool call; "
    "the episode ends at {limit}). Continue with the tools, or call submit."
)


def within_reply_cap(message: dict) -> dict:
    """A tool message as the episode contract bounds it: whole up to `REPLY_CAP` bytes (the
    tools already cap their replies there; this also bounds an error's text). verifiers' own
    bound, a middle cut at 20,000 bytes, would hide most of a ledger the contract returns whole."""
    content = message.get("content")
    if not isinstance(content, str):
        return message
    data = content.encode("utf-8", "surrogatepass")
    if len(data) <= REPLY_CAP:
        return message
    cut = data[: REPLY_CAP - 64].decode("utf-8", "ignore")
    return {**message, "content": cut + f"\n[reply truncated at {REPLY_CAP} bytes]"}


def unicode_problem(value) -> str | None:
    """Why `value` (decoded tool arguments) cannot be sent as UTF-8, else None; its strings (keys
    included) are walked without recursion."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError as e:
                return f"error: the arguments are not valid Unicode ({e.reason}); resend them as valid text"
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return None


def assistant_turn(message, replay_reasoning: bool) -> dict:
    """The reply as the next requests carry it: whole, or without its reasoning fields."""
    turn = message.model_dump(exclude_none=True)
    if not replay_reasoning:
        for name in REASONING_FIELDS:
            turn.pop(name, None)
    return without_surrogates(turn)


async def capped_chat(client, model, messages, tools, max_tokens):
    """One streamed completion with ``max_tokens`` set: the request the SDK's ``client.post`` makes
    for this body, retried and failed by the SDK's rule, and its stream read by the program's
    ``_read_chat_completion``, without the SDK's per-request machinery (`piv_core.runtime.chat_request`)."""
    from piv_core.runtime.chat_request import chat_body, sdk_completion

    return await sdk_completion(client, chat_body(model, messages, tools, max_tokens), _read_chat_completion)


@lru_cache(maxsize=1)
def _tls_context():
    """The TLS context an MCP HTTP client builds by default, built once per process."""
    import httpx2

    return httpx2.create_ssl_context()


@asynccontextmanager
async def mcp_client(spec):
    """The bundled `mcp_client`, its HTTP client made as `create_mcp_http_client` makes it
    (redirects followed, the spec's headers and timeouts) with the process's TLS context."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    stack = AsyncExitStack()
    try:
        timeout = httpx2.Timeout(spec.get("timeout", MCP_TIMEOUT), connect=spec.get("connect_timeout", 5.0))
        options = {"follow_redirects": True, "timeout": timeout, "verify": _tls_context()}
        if spec.get("headers"):
            options["headers"] = spec["headers"]
        http_client = await stack.enter_async_context(httpx2.AsyncClient(**options))
        transport = streamable_http_client(spec["url"], http_client=http_client)
        yield await stack.enter_async_context(Client(transport))
    finally:
        with suppress(Exception):
            await stack.aclose()


async def tool_reply(call, dispatch, servers):
    """What the model is told for one tool call: the tool's reply, or an error naming what was
    wrong. Nothing raised while its arguments are decoded and checked or the tool is run leaves
    here (a cancellation does)."""
    name = call.function.name
    try:
        try:
            tool_args = load_json(
                call.function.arguments or "{}",
                max_depth=TOOL_ARGUMENTS_MAX_DEPTH,
                max_bytes=TOOL_ARGUMENTS_MAX_BYTES,
                where="tool arguments",
            )
        except Undecodable as e:
            return f"error: {e}; resend the call with valid JSON"
        if not isinstance(tool_args, dict):
            return "error: tool arguments must be a JSON object; resend as an object"
        if name not in dispatch:
            return f"error: unknown tool {name!r}"
        if problem := unicode_problem(tool_args):
            return problem
        return await call_mcp(servers, dispatch, name, tool_args)
    except Exception as e:
        return f"error: the {name} call failed ({type(e).__name__}); try again"


async def run_chat_loop(args, compactor, messages, dispatch, servers, tool_client) -> None:
    episode = EPISODE.get() or LoopEpisode(replay_reasoning=True)
    episode.transcript = messages
    idle, used = 0, 0
    while used < TOKEN_CEILING:
        completion = await capped_chat(
            compactor.client, compactor.model, messages, compactor.tools, TOKEN_CEILING - used
        )
        used += completion.usage.completion_tokens if completion.usage else 0
        message = completion.choices[0].message
        messages.append(assistant_turn(message, episode.replay_reasoning))
        if not message.tool_calls:
            idle += 1
            if idle >= IDLE_TURNS:
                return
            messages.append({"role": "user", "content": NUDGE.format(idle=idle, limit=IDLE_TURNS)})
            continue
        idle = 0
        for index, call in enumerate(message.tool_calls):
            name = call.function.name
            if index >= CALLS_PER_TURN:
                content = (
                    f"error: only the first {CALLS_PER_TURN} tool calls of a turn are run; this one was not"
                )
                messages.append(
                    without_surrogates(
                        {"role": "tool", "tool_call_id": call.id, "content": content, "name": name}
                    )
                )
                continue
            if args.tool_interception_url:
                decision = await gate_tool_call(tool_client, args.tool_interception_url, args.api_key, call)
                if decision["action"] == "deny":
                    messages.append(without_surrogates(bound_tool_message(decision["message"])))
                    continue
            content = await tool_reply(call, dispatch, servers)
            messages.append(
                without_surrogates(
                    within_reply_cap(
                        {"role": "tool", "tool_call_id": call.id, "content": content, "name": name}
                    )
                )
            )


if __name__ == "__main__":
    asyncio.run(main())  # noqa: F821 - the bundled program's entry point
