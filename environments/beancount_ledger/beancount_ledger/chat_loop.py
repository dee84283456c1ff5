"""The chat loop of the package's harness, spliced into verifiers' bundled `null` chat program.

It replaces the bundled `run_chat_loop` and differs from it in two ways: a reply without tool
calls does not end the program (the model is reminded, and the episode ends after
`IDLE_LIMIT` such replies in a row), and every request carries ``max_tokens`` equal to what is
left of the episode's completion-token ceiling; only the first `CALLS_PER_TURN` tool calls of a
turn are run, the rest answered with an error. Arguments that are not valid Unicode (a lone
surrogate, which no transport can carry) and any failure of a tool call come back to the
model as an error message; the loop goes on. The names it uses without importing
(`call_mcp`, `gate_tool_call`, `bound_tool_message`, `_read_chat_completion`) are the bundled
program's own; this module is never imported by the package at run time.
"""

import json
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names provided by the bundled program
    from verifiers.v1.harnesses.utils.compaction import bound_tool_message
    from verifiers.v1.harnesses.utils.core import _read_chat_completion, call_mcp, gate_tool_call

_SURROGATE = re.compile("[\ud800-\udfff]")
IDLE_LIMIT = 3
TOKEN_CEILING = 40_000
CALLS_PER_TURN = 16
NUDGE = (
    "No tool was called ({idle} of {limit} consecutive replies without a tool call; "
    "the episode ends at {limit}). Continue with the tools, or call submit."
)


def without_surrogates(value):
    """`value` (a JSON-like message) with every lone surrogate replaced by U+FFFD: a reply that
    carries one could not be sent back to the model in the next request."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {without_surrogates(k): without_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_surrogates(v) for v in value]
    return value


def unicode_problem(value) -> str | None:
    """Why `value` (decoded tool arguments) cannot be sent as UTF-8, else None."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as e:
        return f"error: the arguments are not valid Unicode ({e.reason}); resend them as valid text"
    return None


async def capped_chat(client, model, messages, tools, max_tokens):
    """One streamed completion with ``max_tokens`` set."""
    raw_stream = await client.chat.completions.create(
        model=model,
        messages=messages,
        tools=tools,
        max_tokens=max_tokens,
        stream=True,
        stream_options={"include_usage": True},
    )
    return await _read_chat_completion(raw_stream)


async def run_chat_loop(args, compactor, messages, dispatch, servers, tool_client) -> None:
    idle, used = 0, 0
    while used < TOKEN_CEILING:
        completion = await capped_chat(
            compactor.client, compactor.model, messages, compactor.tools, TOKEN_CEILING - used
        )
        used += completion.usage.completion_tokens if completion.usage else 0
        message = completion.choices[0].message
        messages.append(without_surrogates(message.model_dump(exclude_none=True)))
        if not message.tool_calls:
            idle += 1
            if idle >= IDLE_LIMIT:
                return
            messages.append({"role": "user", "content": NUDGE.format(idle=idle, limit=IDLE_LIMIT)})
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
            try:
                tool_args = json.loads(call.function.arguments or "{}")
            except json.JSONDecodeError as e:
                content = f"error: invalid JSON in tool arguments ({e}); resend the call with valid JSON"
            else:
                if not isinstance(tool_args, dict):
                    content = "error: tool arguments must be a JSON object; resend as an object"
                elif name not in dispatch:
                    content = f"error: unknown tool {name!r}"
                elif problem := unicode_problem(tool_args):
                    content = problem
                else:
                    try:
                        content = await call_mcp(servers, dispatch, name, tool_args)
                    except Exception as e:
                        content = f"error: the {name} call failed ({type(e).__name__}); try again"
            messages.append(
                without_surrogates(
                    bound_tool_message(
                        {"role": "tool", "tool_call_id": call.id, "content": content, "name": name}
                    )
                )
            )


if __name__ == "__main__":
    asyncio.run(main())  # noqa: F821 - the bundled program's entry point
