"""The baseline endpoint: an OpenAI-compatible chat-completions server for scripted policies.

Every command, test and benchmark in the suite runs the real verifiers pipeline with no API
key by pointing the client at this server. A request for model ``baseline/<policy>`` (or just
``<policy>``) is answered by the policy of that name that the environment registers
(`piv_core.plugins`); ``oracle`` and ``reference`` both name an environment's solver, so
``baseline/oracle`` earns full marks on every environment of a run. An environment with a
noisy solver is also served as ``baseline/noisy-<p>`` for any p in [0, 1], seeded per task and
rollout (`piv_core.baseline.rollout_seeding`).

One endpoint can serve several environments. Which environment a request belongs to is read
from the request itself: its system prompt (the first system message, or the first user message
where a harness folds the system prompt into it) starts with exactly one served environment's
`mark` (`piv_core.plugins.carries`); a request that starts with none, or with the marks of two,
is answered with an error that says so, never routed by guess. So one client, one base URL and
one model name serve a multi-environment run, as a trainer with several sources drives it. An
environment served alone needs no mark: every request is its.

The wire format is what verifiers' harnesses expect: ``POST /v1/chat/completions`` answers
with Server-Sent Events when ``stream`` is true (content or ``tool_calls`` deltas, a
``finish_reason`` chunk, a usage chunk when asked for, then ``data: [DONE]``) and with a
plain JSON completion otherwise; ``GET /v1/models`` lists the policies.

Run it on its own with ``piv-baseline [--env <env-id>] [--port N]`` (every registered
environment that loads unless ``--env`` names some); the ``eval`` / ``piv-eval`` command starts
one automatically for ``--model baseline/<policy>``, serving only the environment it evaluates,
so no other installed registration is even imported.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from itertools import combinations
from typing import Any

from aiohttp import web

from piv_core import plugins
from piv_core.baseline.rollout_seeding import Draws, seeded_rng, task_key, tool_call_id
from piv_core.plugins import EnvironmentPlugin, Registration, policy_names, policy_of
from piv_core.policy import MODEL_PREFIX, Conversation, Policy, Reasoned, Reply, noisy_share, policy_name
from piv_core.tasksets.knobs import argument


def estimate_tokens(text: str) -> int:
    """A rough token count (4 characters a token) for the usage block."""
    return max(1, (len(text) + 3) // 4) if text else 0


def _message(
    reply: Reply, max_tokens: int | None = None, draw: int | None = None
) -> tuple[dict[str, Any], str, str]:
    """The assistant message for `reply`, its finish reason and its text for token counting.

    Like a real model, a reply longer than `max_tokens` is cut off with finish reason
    ``length``: text keeps its first `max_tokens` tokens' worth, tool calls are dropped whole.
    A `Reasoned` reply's reasoning comes first and counts against `max_tokens` too. Tool call
    ids carry `draw` when given (see `noisy_share`).
    """
    if isinstance(reply, Reasoned):
        budget = None if max_tokens is None else max(0, max_tokens - estimate_tokens(reply.reasoning))
        message, finish, text = _message(reply.reply, budget, draw)
        return {**message, "reasoning_content": reply.reasoning}, finish, reply.reasoning + text
    if isinstance(reply, str):
        if max_tokens is not None and estimate_tokens(reply) > max_tokens:
            cut = reply[: 4 * max(0, max_tokens)]
            return {"role": "assistant", "content": cut}, "length", cut
        return {"role": "assistant", "content": reply}, "stop", reply
    calls = [
        {
            "id": tool_call_id(draw),
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


class Unrecognised(LookupError):
    """A request whose system prompt starts with none of the served environments' marks, or with two."""


class BaselineEndpoint:
    """An aiohttp app answering chat completions with the policies of the environments given.

    `environments` is a list of `EnvironmentPlugin`s, or one environment's policies as a plain
    mapping (then every request goes to them). One environment alone answers every request, unless
    the endpoint is `shared` (it stands for every registered environment, so a request of one that
    was refused must not reach the one left): then a request must carry a served mark whenever the
    environments have marks."""

    def __init__(
        self, environments: list[EnvironmentPlugin] | Mapping[str, Policy], shared: bool = False
    ) -> None:
        if isinstance(environments, Mapping):
            environments = [Registration("", dict(environments))]
        if not environments:
            raise ValueError("no environment to serve: install one, or name its policies")
        self.environments = list(environments)
        self.by_mark = len(self.environments) > 1 or (shared and all(e.mark for e in self.environments))
        if len(self.environments) > 1:
            unmarked = [e.id for e in self.environments if not e.mark]
            if unmarked:
                raise ValueError(f"environments without a mark cannot share an endpoint: {unmarked}")
            for a, b in combinations(self.environments, 2):
                if plugins.marks_overlap(a.mark or "", b.mark or ""):
                    raise ValueError(
                        f"{a.id} and {b.id} share a mark (one starts with the other: "
                        f"{plugins.shown(a.mark or '')!r}, {plugins.shown(b.mark or '')!r}); "
                        "their requests could not be told apart"
                    )
        self._draws = Draws()
        self.app = web.Application(client_max_size=64 * 1024 * 1024)
        self.app.router.add_post("/v1/chat/completions", self.chat)
        self.app.router.add_post("/chat/completions", self.chat)
        self.app.router.add_get("/v1/models", self.models)
        self.app.router.add_get("/models", self.models)

    @property
    def policies(self) -> dict[str, Policy]:
        """Every policy served, by name (an environment's own name wins over a later one's)."""
        merged: dict[str, Policy] = {}
        for environment in self.environments:
            for name, policy in environment.policies.items():
                merged.setdefault(name, policy)
        return merged

    def recognise(self, conversation: Conversation) -> EnvironmentPlugin:
        """The environment whose mark the request's system prompt carries (the only one when one
        is served); `Unrecognised` when it carries none of the served marks, or more than one."""
        if not self.by_mark:
            return self.environments[0]
        head = conversation.head()
        found = [e for e in self.environments if any(plugins.carries(t, e.mark or "") for t in head)]
        if len(found) == 1:
            return found[0]
        if found:
            raise Unrecognised(
                f"the request carries the marks of {len(found)} served environments "
                f"({', '.join(e.id for e in found)}): its system prompt starts with one, its first user "
                "message with another; it is answered by none of them"
            )
        served = ", ".join(e.id for e in self.environments)
        raise Unrecognised(
            f"the request's system prompt carries none of the served environments' marks ({served}); "
            "an environment registers the text its system prompts start with as its plugin's `mark`"
        )

    def noisy_reply(self, environment: EnvironmentPlugin, p: float, name: str, conversation: Conversation):
        """`environment`'s noisy solver at share `p`, seeded per task and rollout; (reply, draw)."""
        key = task_key(environment.id, name, conversation)
        draw = self._draws.of(key, conversation)
        return environment.noisy(conversation, p, seeded_rng(key, draw)), draw  # type: ignore[misc]

    async def models(self, request: web.Request) -> web.Response:
        names = list(self.policies) + (["noisy-<p>"] if any(e.noisy for e in self.environments) else [])
        data = [{"id": MODEL_PREFIX + name, "object": "model", "owned_by": "baseline"} for name in names]
        return web.json_response({"object": "list", "data": data})

    async def chat(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "request body is not JSON")
        model = str(body.get("model", ""))
        conversation = Conversation(list(body.get("messages") or []), list(body.get("tools") or []))
        try:
            environment = self.recognise(conversation)
        except Unrecognised as exc:
            return _error(400, str(exc))
        name = policy_name(model)
        try:
            p = noisy_share(name)
        except ValueError as exc:
            return _error(404, f"unknown baseline policy {model!r}: {exc}")
        policy = policy_of(environment, name)
        if policy is None and (p is None or environment.noisy is None):
            known = ", ".join(MODEL_PREFIX + n for n in policy_names(environment))
            where = f" for {environment.id}" if environment.id else ""
            return _error(404, f"unknown baseline policy {model!r}{where}; known: {known}")
        draw = None
        try:
            if policy is not None:
                reply = policy(conversation)
            else:
                reply, draw = self.noisy_reply(environment, p, name, conversation)  # type: ignore[arg-type]
        except Exception as exc:  # a policy bug is reported to the client, not swallowed
            return _error(500, f"policy {model!r} failed: {type(exc).__name__}: {exc}")
        except BaseException as exc:  # SystemExit from a policy must not stop the server
            if isinstance(exc, asyncio.CancelledError):
                raise
            return _error(500, f"policy {model!r} failed: {type(exc).__name__}: {exc}")
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
        message, finish, text = _message(reply, int(limit) if isinstance(limit, int | float) else None, draw)
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
        if "reasoning_content" in message:
            reasoning: dict[str, Any] = {
                "role": "assistant",
                "content": "",
                "reasoning_content": message["reasoning_content"],
            }
            await response.write(
                _sse({**chunk, "choices": [{"index": 0, "delta": reasoning, "finish_reason": None}]})
            )
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


def serving(*env_ids: str) -> list[EnvironmentPlugin]:
    """The environments `env_ids` names, and no other (every registered one that loads when none is
    named): `plugins.NotRegistered` or `plugins.Refused`, naming the distribution, for one that
    cannot be served."""
    named = [env_id for env_id in env_ids if env_id]
    return list((plugins.load_served(named) if named else plugins.load_all()).values())


Served = str | list[str | EnvironmentPlugin] | Mapping[str, Policy] | None
"""What an endpoint serves: None (every registered environment that loads), an environment id, a
list of ids or `EnvironmentPlugin`s, or one environment's policies as a plain mapping."""


def endpoint_for(which: Served) -> BaselineEndpoint:
    """The endpoint serving `which` (see `Served`); for None, a shared one (`BaselineEndpoint`)."""
    if which is None:
        return BaselineEndpoint(list(plugins.load_all().values()), shared=True)
    if isinstance(which, str):
        return BaselineEndpoint(serving(which))
    if isinstance(which, Mapping):
        return BaselineEndpoint(which)
    loaded = plugins.load_served([e for e in which if isinstance(e, str)])
    return BaselineEndpoint([loaded[e] if isinstance(e, str) else e for e in which])


@contextmanager
def running_endpoint(which: Served = None, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Serve `which` (see `Served`; by default every installed environment) on a free loopback
    port in a background thread; yields the base URL."""
    endpoint = endpoint_for(which)
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
    parser = argparse.ArgumentParser(
        prog="piv-baseline",
        description="Serve the baseline policies of every registered piv environment, or of those named.",
    )
    parser.add_argument(
        "--env", action="append", help="an environment id to serve (repeatable; default: all registered)"
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=argument(most=65535), default=8765)
    args = parser.parse_args(argv)
    try:
        endpoint = endpoint_for(args.env)
    except (plugins.NotRegistered, plugins.Refused, ValueError) as error:
        raise SystemExit(f"piv-baseline: {error}") from None
    for environment in endpoint.environments:
        policies = ", ".join(MODEL_PREFIX + p for p in policy_names(environment))
        print(f"{environment.id}: {policies}")
    print(f"serving on http://{args.host}:{args.port}/v1", flush=True)
    web.run_app(endpoint.app, host=args.host, port=args.port, print=None, access_log=None)


if __name__ == "__main__":
    main()
