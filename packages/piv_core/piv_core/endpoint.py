"""The baseline endpoint: an OpenAI-compatible chat-completions server for scripted policies.

Every command, test and benchmark in the suite runs the real verifiers pipeline with no API
key by pointing the client at this server. A request for model ``baseline/<policy>`` (or
just ``<policy>``) is answered by the policy of that name that the environment registers in
its ``<package>.baselines`` module as ``POLICIES: dict[str, Policy]``.

A policy is a plain function of the conversation so far (`Conversation`) returning either
the assistant's text or a list of `ToolCall`s. Policies are stateless: a multi-turn policy
reads what it needs from the transcript, so concurrent rollouts never interfere.

The wire format is what verifiers' harnesses expect: ``POST /v1/chat/completions`` answers
with Server-Sent Events when ``stream`` is true (content or ``tool_calls`` deltas, a
``finish_reason`` chunk, a usage chunk when asked for, then ``data: [DONE]``) and with a
plain JSON completion otherwise; ``GET /v1/models`` lists the policies.

Run it on its own with ``baseline-endpoint --env <env-id> [--port N]``; the ``eval`` command
starts one automatically for ``--model baseline/<policy>``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

MODEL_PREFIX = "baseline/"


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


Reply = str | list[ToolCall]
Policy = Callable[[Conversation], Reply]


def env_module(env_id: str) -> str:
    """The import name of an environment id, as verifiers resolves it."""
    return env_id.rsplit("/", 1)[-1].split("@", 1)[0].replace("-", "_").lower()


def load_policies(env_id: str) -> dict[str, Policy]:
    """The policies registered by environment `env_id` (its ``baselines.POLICIES``)."""
    module_name = f"{env_module(env_id)}.baselines"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise SystemExit(f"environment {env_id!r} has no baseline policies ({module_name}: {exc})") from exc
    return dict(module.POLICIES)


def policy_name(model: str) -> str:
    return model[len(MODEL_PREFIX) :] if model.startswith(MODEL_PREFIX) else model


def estimate_tokens(text: str) -> int:
    """A rough token count (4 characters a token) for the usage block."""
    return max(1, (len(text) + 3) // 4) if text else 0


def _message(reply: Reply, max_tokens: int | None = None) -> tuple[dict[str, Any], str, str]:
    """The assistant message for `reply`, its finish reason and its text for token counting.

    Like a real model, a reply longer than `max_tokens` is cut off with finish reason
    ``length``: text keeps its first `max_tokens` tokens' worth, tool calls are dropped whole.
    """
    if isinstance(reply, str):
        if max_tokens is not None and estimate_tokens(reply) > max_tokens:
            cut = reply[: 4 * max(0, max_tokens)]
            return {"role": "assistant", "content": cut}, "length", cut
        return {"role": "assistant", "content": reply}, "stop", reply
    calls = [
        {
            "id": f"call_{uuid.uuid4().hex[:24]}",
            "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
        }
        for call in reply
    ]
    text = "".join(c["function"]["name"] + c["function"]["arguments"] for c in calls)
    if max_tokens is not None and estimate_tokens(text) > max_tokens:
        return {"role": "assistant", "content": ""}, "length", ""
    return {"role": "assistant", "content": None, "tool_calls": calls}, "tool_calls", text


def _sse(payload: dict[str, Any] | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return f"data: {data}\n\n".encode()


class BaselineEndpoint:
    """An aiohttp app answering chat completions with the given policies."""

    def __init__(self, policies: dict[str, Policy]) -> None:
        self.policies = policies
        self.app = web.Application(client_max_size=64 * 1024 * 1024)
        self.app.router.add_post("/v1/chat/completions", self.chat)
        self.app.router.add_post("/chat/completions", self.chat)
        self.app.router.add_get("/v1/models", self.models)
        self.app.router.add_get("/models", self.models)

    async def models(self, request: web.Request) -> web.Response:
        data = [
            {"id": MODEL_PREFIX + name, "object": "model", "owned_by": "baseline"} for name in self.policies
        ]
        return web.json_response({"object": "list", "data": data})

    async def chat(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "request body is not JSON")
        model = str(body.get("model", ""))
        policy = self.policies.get(policy_name(model))
        if policy is None:
            known = ", ".join(MODEL_PREFIX + name for name in sorted(self.policies))
            return _error(404, f"unknown baseline policy {model!r}; known: {known}")
        conversation = Conversation(list(body.get("messages") or []), list(body.get("tools") or []))
        try:
            reply = policy(conversation)
        except Exception as exc:  # a policy bug is reported to the client, not swallowed
            return _error(500, f"policy {model!r} failed: {type(exc).__name__}: {exc}")
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
        message, finish, text = _message(reply, int(limit) if isinstance(limit, int | float) else None)
        prompt_tokens = sum(estimate_tokens(Conversation.text(m)) for m in conversation.messages)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": estimate_tokens(text),
            "total_tokens": prompt_tokens + estimate_tokens(text),
        }
        ident, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())
        head = {"id": ident, "created": created, "model": model}
        if not body.get("stream"):
            choice = {"index": 0, "message": message, "finish_reason": finish}
            return web.json_response(
                {**head, "object": "chat.completion", "choices": [choice], "usage": usage}
            )
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        chunk = {**head, "object": "chat.completion.chunk"}
        delta: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
        if "tool_calls" in message:
            delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(message["tool_calls"])]
        await response.write(
            _sse({**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
        )
        await response.write(_sse({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}))
        if (body.get("stream_options") or {}).get("include_usage"):
            await response.write(_sse({**chunk, "choices": [], "usage": usage}))
        await response.write(_sse("[DONE]"))
        await response.write_eof()
        return response


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": "baseline_error"}}, status=status)


@contextmanager
def running_endpoint(
    policies: str | dict[str, Policy], host: str = "127.0.0.1", port: int = 0
) -> Iterator[str]:
    """Serve `policies` (or those of the environment id given) on a free loopback port in a
    background thread; yields the base URL."""
    endpoint = BaselineEndpoint(load_policies(policies) if isinstance(policies, str) else policies)
    loop = asyncio.new_event_loop()
    started = threading.Event()
    box: dict[str, Any] = {}

    async def start() -> None:
        runner = web.AppRunner(endpoint.app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        await site.start()
        box["runner"] = runner
        box["port"] = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def serve() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(start())
        except BaseException as exc:  # surfaced to the caller below
            box["error"] = exc
            started.set()
            return
        started.set()
        loop.run_forever()
        loop.run_until_complete(box["runner"].cleanup())
        loop.close()

    thread = threading.Thread(target=serve, name="baseline-endpoint", daemon=True)
    thread.start()
    started.wait()
    if "error" in box:
        raise RuntimeError(f"baseline endpoint failed to start: {box['error']}") from box["error"]
    try:
        yield f"http://{host}:{box['port']}/v1"
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve an environment's scripted baseline policies.")
    parser.add_argument("--env", required=True, help="environment id, e.g. au-bas-reconciliation-v1")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args(argv)
    endpoint = BaselineEndpoint(load_policies(args.env))
    print(
        f"serving {', '.join(MODEL_PREFIX + p for p in endpoint.policies)} on http://{args.host}:{args.port}/v1"
    )
    web.run_app(endpoint.app, host=args.host, port=args.port, print=None, access_log=None)


if __name__ == "__main__":
    main()
