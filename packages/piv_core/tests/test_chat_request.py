"""The single-reply harness's model turn against verifiers' chat program, request for request.

A scripted chat endpoint answers each request with the next of a scenario's responses (a
reply, a reply that calls a tool, one with two choices, a stream cut before its finish
reason, an error event, bad JSON, a 4xx or 5xx with or without retry headers, a dropped
connection). Every scenario runs twice: through `run_chat_program` (the bundled program,
with the SDK) and through `SingleReplyHarness.launch` (`piv_core.runtime.chat_request`, the program
only for what follows a non-plain reply). With `random` seeded the same, the two must send the
same requests (body bytes and every header), sleep the same backoffs, and end with the same
exit code and the same final error line.

The whole matrix runs again with the SDK's public path forced (``PIV_OPENAI_FAST_PATH=0``, and
the private pieces of `piv_core.runtime.openai_internals` made unusable), so the fallback episode is the
program's too, hence the fast path's. `sdk_completion` (beancount-ledger's loop) is compared with
its public path, ``client.post``, the same way. How a broken private piece turns the fast path off
is `test_openai_probe.py`'s.
"""

from __future__ import annotations

import asyncio
import json
import random
from types import SimpleNamespace

import anyio
import httpx
import openai
import pytest
import verifiers.v1 as vf
from aiohttp import web
from piv_core.compat import IN_PROCESS_HARNESS

if not IN_PROCESS_HARNESS:
    pytest.skip("the in-process harness runs verifiers 0.4's chat program", allow_module_level=True)

from piv_core.runtime import chat_request  # noqa: E402
from piv_core.runtime import openai_internals as sdk_internals  # noqa: E402
from piv_core.runtime.harness import (  # noqa: E402
    SingleReplyHarness,
    opening_messages,
    program_namespace,
    run_chat_program,
)
from verifiers.v1.harnesses.null import NullHarnessConfig  # noqa: E402
from verifiers.v1.harnesses.utils.launch import CHAT_PROGRAM_SOURCE  # noqa: E402

CHUNK = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}


def _choice(delta: dict, finish: str | None = None, index: int = 0) -> dict:
    return {"index": index, "delta": delta, "finish_reason": finish}


def _events(*choices_per_chunk: list[dict], usage: bool = True) -> list[dict]:
    chunks = [{**CHUNK, "choices": choices} for choices in choices_per_chunk]
    if usage:
        chunks.append(
            {**CHUNK, "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}
        )
    return chunks


TOOL_CALL = {
    "index": 0,
    "id": "call_1",
    "type": "function",
    "function": {"name": "lookup", "arguments": '{"a": 1}'},
}
RESPONSES = {
    "reply": (
        "sse",
        _events([_choice({"role": "assistant", "content": "<answer>1</answer>"})], [_choice({}, "stop")]),
    ),
    "reasoned": (
        "sse",
        _events(
            [_choice({"role": "assistant", "reasoning_content": "think", "content": ""})],
            [_choice({"content": "done"}, "stop")],
        ),
    ),
    "empty_reason": ("sse", _events([_choice({"role": "assistant", "content": "x"}, "")])),
    "tool_call": (
        "sse",
        _events([_choice({"role": "assistant", "tool_calls": [TOOL_CALL]})], [_choice({}, "tool_calls")]),
    ),
    "bad_arguments": (
        "sse",
        _events(
            [
                _choice(
                    {
                        "role": "assistant",
                        "tool_calls": [{**TOOL_CALL, "function": {"name": "x", "arguments": "{"}}],
                    }
                )
            ],
            [_choice({}, "tool_calls")],
        ),
    ),
    # The interception's framing of a generated turn (training): one chunk with the whole message.
    "framed": (
        "sse",
        [
            {
                **CHUNK,
                "choices": [
                    {
                        "index": 0,
                        "delta": {
                            "role": "assistant",
                            "content": "<answer>2</answer>",
                            "reasoning_content": "r",
                        },
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
            }
        ],
    ),
    "two_choices": (
        "sse",
        _events(
            [_choice({"role": "assistant", "content": "a"}, "stop"), _choice({"content": "b"}, "stop", 1)]
        ),
    ),
    "list_content": ("sse", _events([_choice({"role": "assistant", "content": ["odd"]}, "stop")])),
    # What a hostile model can make of a reply: thousands of chunks, one huge chunk, JSON nested
    # past any parser's depth, a lone surrogate escape.
    "many_chunks": (
        "sse",
        _events(
            [_choice({"role": "assistant", "content": ""})],
            *([_choice({"content": "x"})] for _ in range(2000)),
            [_choice({}, "stop")],
        ),
    ),
    "huge_chunk": ("sse", _events([_choice({"role": "assistant", "content": "y" * 1_000_000}, "stop")])),
    "deep_json": ("raw", b"data: " + b"[" * 100_000 + b"]" * 100_000 + b"\n\n"),
    "surrogate": (
        "raw",
        b'data: {"object": "chat.completion.chunk", "choices": '
        b'[{"index": 0, "delta": {"content": "\\ud800"}, "finish_reason": "stop"}]}\n\n',
    ),
    # A chunk the SDK's reader skips: not marked as a chat completion chunk.
    "unmarked": (
        "raw",
        b'data: {"choices": [{"index": 0, "delta": {"content": "a"}, "finish_reason": "stop"}]}\n\n',
    ),
    "cut": ("sse", _events([_choice({"role": "assistant", "content": "half"})], usage=False)),
    "nothing": ("sse", []),
    "error_event": ("raw", b'data: {"error": {"message": "upstream broke"}}\n\n'),
    "bad_json": ("raw", b"data: {not json\n\n"),
    # The program's reader fails on the first chunk, before the error event after it arrives.
    "odd_then_error": (
        "raw",
        b'data: {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", '
        b'"choices": [{"index": 0, "delta": null}]}\n\n'
        b'data: {"error": {"message": "upstream broke"}}\n\n',
    ),
    "text_then_error": (
        "raw",
        b'data: {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", '
        b'"choices": [{"index": 0, "delta": {"content": "par"}}]}\n\n'
        b'data: {"error": {"message": "upstream broke"}}\n\n',
    ),
    "400": ("status", 400, {}, {"error": {"message": "rollout stopped: turn_limit"}}),
    "401": ("status", 401, {}, {"error": {"message": "unauthorized"}}),
    "409": ("status", 409, {}, {"error": {"message": "rollout concluded"}}),
    "429": ("status", 429, {"retry-after-ms": "3"}, {"error": {"message": "slow down"}}),
    "500": ("status", 500, {}, {"error": {"message": "boom"}}),
    "502_no_retry": ("status", 502, {"x-should-retry": "false"}, "plain text"),
    "drop": ("drop",),
}


class Endpoint:
    """A chat endpoint answering request n with the scenario's n-th response (then replies)."""

    def __init__(self) -> None:
        self.script: list[str] = []
        self.seen: list[tuple[bytes, dict[str, str]]] = []

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        self.seen.append((body, {k.lower(): v for k, v in request.headers.items()}))
        name = self.script[len(self.seen) - 1] if len(self.seen) <= len(self.script) else "reply"
        kind, *rest = RESPONSES[name]
        if kind == "drop":
            request.transport.close()
            return web.Response()
        if kind == "status":
            code, headers, payload = rest
            text = payload if isinstance(payload, str) else json.dumps(payload)
            return web.Response(status=code, text=text, headers=headers)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        if kind == "raw":
            await response.write(rest[0])
        else:
            for chunk in rest[0]:
                await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
            if rest[0] and rest[0][-1].get("usage"):
                await response.write(b"data: [DONE]\n\n")
        return response


@pytest.fixture
def served(monkeypatch):
    """(endpoint, base URL, recorded sleeps), with every backoff recorded instead of slept."""
    endpoint = Endpoint()
    sleeps: list[float] = []
    real_sleep = asyncio.sleep

    async def sleep(delay, *args, **kwargs):
        if delay:
            sleeps.append(round(delay, 9))
        return await real_sleep(0)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    monkeypatch.setattr(anyio, "sleep", sleep)
    return endpoint, sleeps


async def _serve(endpoint: Endpoint):
    app = web.Application()
    app.router.add_post("/v1/chat/completions", endpoint.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}/v1"


DATA = vf.TaskData(prompt="Reconcile the ledger. \u00e9", system_prompt="You are an auditor.")


def _outcome(result) -> tuple[int, str]:
    lines = [line for line in result.stderr.strip().splitlines() if line.strip()]
    return result.exit_code, lines[-1] if lines else ""


async def _both(endpoint: Endpoint, sleeps: list[float], script: list[str]) -> dict[str, tuple]:
    runner, base_url = await _serve(endpoint)
    ctx = SimpleNamespace(model="policy-7")
    harness = SingleReplyHarness(NullHarnessConfig())
    system_prompt, prompt = harness.resolve_prompt(DATA)
    runs = {}
    try:
        for path in ("program", "harness"):
            endpoint.script, endpoint.seen = list(script), []
            sleeps.clear()
            random.seed(20261201)
            trace = SimpleNamespace(nodes=[], id="t", calls=[], info={}, stop_condition=None)
            if path == "program":
                result = await run_chat_program(
                    CHAT_PROGRAM_SOURCE,
                    harness.config,
                    ctx,
                    trace,
                    base_url,
                    "sk-secret",
                    {},
                    system_prompt,
                    prompt,
                )
            else:
                result = await harness.launch(ctx, trace, None, base_url, "sk-secret", {}, DATA)
            runs[path] = (endpoint.seen, list(sleeps), _outcome(result))
    finally:
        await runner.cleanup()
    return runs


def _scenarios() -> list[list[str]]:
    names = sorted(RESPONSES)
    single = [[name] for name in names]
    pairs = [[first, "cut"] for first in ("cut", "500", "drop", "429")]
    rng = random.Random(7)
    sampled = [[rng.choice(names) for _ in range(rng.randint(2, 4))] for _ in range(40)]
    return single + pairs + sampled + [["500", "500", "500"], ["cut", "cut", "cut"], ["drop", "drop", "drop"]]


def _force_public(monkeypatch) -> None:
    """The SDK's public path from here on, with every private piece unusable if reached."""
    sdk_internals.available.cache_clear()
    monkeypatch.setenv(sdk_internals.FORCE_PUBLIC, "0")
    monkeypatch.setattr(sdk_internals, "_found", {})


@pytest.fixture(params=["fast", "public"])
def sdk_path(request, monkeypatch):
    if request.param == "public":
        _force_public(monkeypatch)
    yield request.param
    if request.param == "public":
        sdk_internals.available.cache_clear()


@pytest.mark.parametrize("script", _scenarios(), ids=lambda s: "+".join(s))
def test_the_harness_turn_is_the_programs(served, sdk_path, script):
    assert chat_request.fast_path() is (sdk_path == "fast")
    endpoint, sleeps = served
    runs = asyncio.run(_both(endpoint, sleeps, script))
    (program_seen, program_sleeps, program_end) = runs["program"]
    (harness_seen, harness_sleeps, harness_end) = runs["harness"]
    assert [body for body, _ in harness_seen] == [body for body, _ in program_seen]
    assert [headers for _, headers in harness_seen] == [headers for _, headers in program_seen]
    assert harness_sleeps == program_sleeps
    assert harness_end == program_end


@pytest.mark.parametrize("reply", ["reply", "reasoned", "framed"])
def test_a_plain_reply_needs_no_sdk_objects(served, reply):
    """The common cases stay cheap: a streamed or a framed (training) text reply is judged from
    its JSON, no completion built."""
    endpoint, _ = served
    endpoint.script = [reply]

    async def turn():
        runner, base_url = await _serve(endpoint)
        try:
            messages = opening_messages("sys", "task")
            return await chat_request.request_turn(base_url, "k", "m", messages, read_chat_completion=None)
        finally:
            await runner.cleanup()

    result = asyncio.run(turn())
    assert result.completion is None and result.chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    body = json.loads(endpoint.seen[0][0])
    assert body == {
        "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "task"}],
        "model": "m",
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def test_opening_messages_read_task_messages_as_the_program_does():
    messages = [
        vf.UserMessage(content="first"),
        vf.AssistantMessage(content="ok"),
        vf.UserMessage(content="go"),
    ]
    opened = opening_messages("sys", messages)
    assert [m["role"] for m in opened] == ["system", "user", "assistant", "user"]
    assert opening_messages(None, "") == [] and opening_messages("", "x") == [
        {"role": "user", "content": "x"}
    ]


def test_with_tool_servers_the_program_runs_whole(monkeypatch):
    """Tools configured for a single-reply task: nothing is requested ahead of the program."""
    from verifiers.v1.runtimes import ProgramResult

    def no_request(*args, **kwargs):
        raise AssertionError("requested ahead of the program")

    calls = []

    async def run_program(self, ctx, trace, endpoint, secret, mcp_urls, data, url, answered=None):
        calls.append((mcp_urls, answered))
        return ProgramResult(exit_code=0, stdout="", stderr="")

    monkeypatch.setattr(chat_request, "request_turn", no_request)
    monkeypatch.setattr(SingleReplyHarness, "run_program", run_program)
    harness = SingleReplyHarness(NullHarnessConfig())
    trace = SimpleNamespace(nodes=[], id="t", calls=[], info={}, stop_condition=None)
    servers = {"tools": "http://127.0.0.1:1/mcp"}
    result = asyncio.run(
        harness.launch(SimpleNamespace(model="m"), trace, None, "http://x/v1", "k", servers, DATA)
    )
    assert result.exit_code == 0 and calls == [(servers, None)]


SDK_COMPLETION_SCRIPTS = [
    ["reply"],
    ["reasoned"],
    ["tool_call"],
    ["two_choices"],
    ["framed"],
    ["unmarked"],
    ["cut"],
    ["nothing"],
    ["error_event"],
    ["bad_json"],
    ["text_then_error"],
    ["400"],
    ["401"],
    ["409", "reply"],
    ["429", "reply"],
    ["500", "500", "500"],
    ["502_no_retry"],
    ["drop", "reply"],
    ["drop", "drop", "drop"],
]


def _completion_outcome(completion) -> tuple:
    return ("completion", completion.model_dump(mode="json"))


@pytest.mark.parametrize("script", SDK_COMPLETION_SCRIPTS, ids=lambda s: "+".join(s))
def test_sdk_completion_is_the_sdks_post(served, monkeypatch, script):
    """`sdk_completion` on the fast path and on the SDK's own ``client.post``: the same requests,
    backoffs and completion (or error)."""
    endpoint, sleeps = served
    reader = program_namespace(CHAT_PROGRAM_SOURCE)["_read_chat_completion"]
    body = chat_request.chat_body("policy-7", opening_messages("sys", "task \u00e9"), None, 512)

    async def both() -> dict[str, tuple]:
        runner, base_url = await _serve(endpoint)
        runs = {}
        try:
            for path in ("fast", "public"):
                if path == "public":
                    _force_public(monkeypatch)
                assert chat_request.fast_path() is (path == "fast")
                endpoint.script, endpoint.seen = list(script), []
                sleeps.clear()
                random.seed(20261202)
                http = httpx.AsyncClient()
                client = openai.AsyncOpenAI(base_url=base_url, api_key="sk-secret", http_client=http)
                try:
                    outcome = _completion_outcome(await chat_request.sdk_completion(client, body, reader))
                except Exception as error:
                    outcome = ("error", type(error).__name__, str(error))
                finally:
                    await client.close()
                runs[path] = (endpoint.seen, list(sleeps), outcome)
        finally:
            await runner.cleanup()
            sdk_internals.available.cache_clear()
        return runs

    runs = asyncio.run(both())
    assert runs["fast"][0] and runs["fast"] == runs["public"]
