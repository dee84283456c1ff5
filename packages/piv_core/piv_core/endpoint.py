"""The baseline endpoint: an OpenAI-compatible chat-completions server for scripted policies.

Every command, test and benchmark in the suite runs the real verifiers pipeline with no API
key by pointing the client at this server. A request for model ``baseline/<policy>`` (or
just ``<policy>``) is answered by the policy of that name that the environment registers in
its ``<package>.baselines`` module as ``POLICIES: dict[str, Policy]``.

One endpoint serves every installed environment. Which environment a request belongs to is
read from the request itself: its system prompt (the first system message, or the first
user message where a harness folds the system prompt into it) contains exactly one
environment's system prompt. So one client, one base URL and one model name serve a
multi-environment run, as a trainer with several sources drives it. An environment's
system prompt is the ``SYSTEM_PROMPT_MARK`` (a text every one of its system prompts contains,
for an environment whose prompt varies with its knobs) or else the ``SYSTEM_PROMPT`` of its
``baselines`` module, else of its ``prompt`` or ``contract`` module. ``oracle`` and
``reference`` both name an environment's solver, so ``baseline/oracle`` earns full marks on
every environment of such a run.

A policy is a plain function of the conversation so far (`Conversation`) returning either
the assistant's text or a list of `ToolCall`s, optionally wrapped in `Reasoned` to come with a
reasoning field (``reasoning_content``) as reasoning models send it. Policies are stateless: a
multi-turn policy reads what it needs from the transcript, so concurrent rollouts never
interfere.

Policies of graded skill: an environment whose ``baselines`` module defines
``noisy(conversation, p, rng)`` (`NoisyPolicy`) is also served as ``baseline/noisy-<p>`` for
any p in [0, 1]: its solver, erring on each row, figure or discrepancy with probability p,
drawing only from `rng`. The endpoint seeds `rng` from the environment, p, the task (its system
and first user message) and the rollout's draw: the n-th first-turn request for a task gets
draw n, so the rollouts of a group differ from one another while a run's multiset of rewards is
reproducible. Later turns of a multi-turn rollout recover the draw from the ids of the tool
calls the endpoint made in it (``call_n<draw>_…``), so every turn of a rollout sees the same
errors.

The wire format is what verifiers' harnesses expect: ``POST /v1/chat/completions`` answers
with Server-Sent Events when ``stream`` is true (content or ``tool_calls`` deltas, a
``finish_reason`` chunk, a usage chunk when asked for, then ``data: [DONE]``) and with a
plain JSON completion otherwise; ``GET /v1/models`` lists the policies.

Run it on its own with ``piv-baseline [--env <env-id>] [--port N]`` (every installed
environment unless ``--env`` names some); the ``eval`` / ``piv-eval`` command starts one
automatically for ``--model baseline/<policy>``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import importlib
import importlib.metadata
import importlib.util
import json
import math
import random
import re
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from piv_core.knobs import argument

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


@dataclass(frozen=True)
class Reasoned:
    """A reply that comes with a reasoning field, sent as ``reasoning_content`` beside it."""

    reply: str | list[ToolCall]
    reasoning: str


Reply = str | list[ToolCall] | Reasoned
Policy = Callable[[Conversation], Reply]
NoisyPolicy = Callable[[Conversation, float, random.Random], Reply]
"""An environment's solver that errs on each item with probability p, drawing only from the rng."""

NOISY = re.compile(r"noisy-(?P<p>[0-9]+(?:\.[0-9]+)?)")
_DRAW_ID = re.compile(r"call_n(?P<draw>[0-9]{1,9})_")


def noisy_share(name: str) -> float | None:
    """The p of policy name ``noisy-<p>`` (None for any other name); ValueError outside [0, 1]."""
    match = NOISY.fullmatch(name)
    if match is None:
        return None
    p = float(match["p"])
    if not (math.isfinite(p) and 0.0 <= p <= 1.0):
        raise ValueError(f"noisy-<p> needs p between 0 and 1, got {match['p']}")
    return p


SOLVER_NAMES = ("oracle", "reference")
"""Names of an environment's full-marks solver; a request for either reaches the one it has."""
PROMPT_MODULES = ("baselines", "prompt", "contract")
"""Where an environment's ``SYSTEM_PROMPT_MARK`` or ``SYSTEM_PROMPT`` is looked up, in this order."""
PROMPT_NAMES = ("SYSTEM_PROMPT_MARK", "SYSTEM_PROMPT")
"""What marks an environment's requests: a text all its system prompts contain, else its one prompt."""


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


@dataclass(frozen=True)
class Environment:
    """One environment the endpoint serves: its policies and the system prompt that marks its requests."""

    id: str
    policies: dict[str, Policy]
    system_prompt: str | None = None
    noisy: NoisyPolicy | None = None

    @property
    def names(self) -> list[str]:
        """The policy names served, ``noisy-<p>`` standing for the graded-skill family."""
        return sorted(self.policies) + (["noisy-<p>"] if self.noisy else [])

    def policy(self, name: str) -> Policy | None:
        if name in self.policies:
            return self.policies[name]
        if name in SOLVER_NAMES:
            return next((self.policies[n] for n in SOLVER_NAMES if n in self.policies), None)
        return None


def system_prompt_of(env_id: str) -> str | None:
    """What marks environment `env_id`'s requests (see `PROMPT_NAMES`, `PROMPT_MODULES`), or None
    if it declares nothing."""
    modules = []
    for name in PROMPT_MODULES:
        try:
            modules.append(importlib.import_module(f"{env_module(env_id)}.{name}"))
        except ModuleNotFoundError:
            continue
    for attribute in PROMPT_NAMES:
        for module in modules:
            prompt = getattr(module, attribute, None)
            if isinstance(prompt, str) and prompt.strip():
                return prompt
    return None


def _noisy_of(env_id: str) -> NoisyPolicy | None:
    return getattr(importlib.import_module(f"{env_module(env_id)}.baselines"), "noisy", None)


def load_environment(env_id: str) -> Environment:
    return Environment(env_id, load_policies(env_id), system_prompt_of(env_id), _noisy_of(env_id))


def _requires_piv_core(requirement: str) -> bool:
    return re.match(r"piv[-_.]core(?![-_.a-z0-9])", requirement.strip(), re.IGNORECASE) is not None


def suite_environment_ids() -> list[str]:
    """The ids of the installed distributions that depend on piv-core and have a module of the id's
    name (found, never imported): the environments of this suite."""
    found: list[str] = []
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"] or ""
        if not any(_requires_piv_core(r) for r in dist.requires or []):
            continue
        env_id = re.sub(r"[-_.]+", "-", name).lower()
        if env_id in found:
            continue
        try:
            if importlib.util.find_spec(env_module(env_id)) is None:
                continue  # a distribution without a module of the id's name is no environment
        except (ImportError, ValueError):
            continue
        found.append(env_id)
    return sorted(found)


def installed_environments() -> dict[str, Environment]:
    """Every installed environment of the suite (`suite_environment_ids`) that registers baseline
    policies.

    A package whose ``baselines`` module exists but fails to import is reported on stderr and
    left out, so one broken install never takes the others' baselines down."""
    found: dict[str, Environment] = {}
    for env_id in suite_environment_ids():
        module = env_module(env_id)
        try:
            baselines = importlib.import_module(f"{module}.baselines")
            found[env_id] = Environment(
                env_id, dict(baselines.POLICIES), system_prompt_of(env_id), getattr(baselines, "noisy", None)
            )
        except ModuleNotFoundError as exc:
            if exc.name != f"{module}.baselines":
                print(f"baseline endpoint: leaving out {env_id}: {exc}", file=sys.stderr)
        except Exception as exc:  # reported, not fatal: the other environments still serve
            print(f"baseline endpoint: leaving out {env_id}: {type(exc).__name__}: {exc}", file=sys.stderr)
    return dict(sorted(found.items()))


def policy_name(model: str) -> str:
    return model[len(MODEL_PREFIX) :] if model.startswith(MODEL_PREFIX) else model


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
            "id": f"call_{'' if draw is None else f'n{draw}_'}{uuid.uuid4().hex[:24]}",
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
    """An aiohttp app answering chat completions with the policies of the environments given.

    `environments` is a list of `Environment`s, or one environment's policies as a plain dict
    (then every request goes to them)."""

    def __init__(self, environments: list[Environment] | dict[str, Policy]) -> None:
        if isinstance(environments, dict):
            environments = [Environment("", dict(environments))]
        if not environments:
            raise ValueError("no environment to serve: install one, or name its policies")
        self.environments = list(environments)
        prompts = [e.system_prompt for e in self.environments if e.system_prompt]
        if len(prompts) != len(set(prompts)):
            raise ValueError("two environments share a system prompt; requests could not be told apart")
        if len(self.environments) > 1 and len(prompts) != len(self.environments):
            unmarked = [e.id for e in self.environments if not e.system_prompt]
            raise ValueError(f"environments without a system prompt cannot share an endpoint: {unmarked}")
        # Longest first, so a prompt that contains another's is still told apart.
        self._by_prompt = sorted(
            (e for e in self.environments if e.system_prompt), key=lambda e: -len(e.system_prompt or "")
        )
        self._draws: dict[str, int] = {}
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

    def recognise(self, conversation: Conversation) -> Environment | None:
        """The environment whose system prompt the request carries (the only one when one is served)."""
        if len(self.environments) == 1:
            return self.environments[0]
        system = next((m for m in conversation.messages if m.get("role") in ("system", "developer")), None)
        user = next((m for m in conversation.messages if m.get("role") == "user"), None)
        head = [Conversation.text(m) for m in (system, user) if m is not None]
        for environment in self._by_prompt:
            if any(environment.system_prompt in text for text in head):  # type: ignore[operator]
                return environment
        return None

    def draw(self, key: str, conversation: Conversation) -> int:
        """The rollout's draw: read back from its earlier tool calls, else the next for this task."""
        for message in conversation.messages:
            calls = message.get("tool_calls") if message.get("role") == "assistant" else None
            for call in calls or []:
                if isinstance(call, dict) and (match := _DRAW_ID.match(str(call.get("id", "")))):
                    return int(match["draw"])
        if any(m.get("role") == "assistant" for m in conversation.messages):
            return 0  # a multi-turn rollout whose turns made no tool call: its first draw
        draw = self._draws.get(key, 0)
        self._draws[key] = draw + 1
        return draw

    def noisy_reply(self, environment: Environment, p: float, name: str, conversation: Conversation):
        """`environment`'s noisy solver at share `p`, seeded per task and rollout; (reply, draw)."""
        head = [
            Conversation.text(m)
            for m in (
                next((m for m in conversation.messages if m.get("role") in ("system", "developer")), {}),
                next((m for m in conversation.messages if m.get("role") == "user"), {}),
            )
        ]
        task = hashlib.sha256("\0".join([environment.id, name, *head]).encode()).hexdigest()
        draw = self.draw(task, conversation)
        seed = int.from_bytes(hashlib.sha256(f"{task}:{draw}".encode()).digest()[:8], "big")
        return environment.noisy(conversation, p, random.Random(seed)), draw  # type: ignore[misc]

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
        environment = self.recognise(conversation)
        if environment is None:
            served = ", ".join(e.id for e in self.environments)
            return _error(
                400,
                f"the request's system prompt is none of the served environments' ({served}); an "
                "environment whose system prompt varies marks its requests with SYSTEM_PROMPT_MARK",
            )
        name = policy_name(model)
        try:
            p = noisy_share(name)
        except ValueError as exc:
            return _error(404, f"unknown baseline policy {model!r}: {exc}")
        policy = environment.policy(name)
        if policy is None and (p is None or environment.noisy is None):
            known = ", ".join(MODEL_PREFIX + n for n in environment.names)
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


def serving(*env_ids: str) -> list[Environment]:
    """Every installed environment, plus those of `env_ids` that are importable without being
    installed (a module on ``PYTHONPATH``, as verifiers' loader allows)."""
    found = installed_environments()
    modules = {env_module(env_id) for env_id in found}
    extra = [load_environment(env_id) for env_id in env_ids if env_id and env_module(env_id) not in modules]
    return [*found.values(), *extra]


Served = str | list[str | Environment] | dict[str, Policy] | None
"""What an endpoint serves: None (every installed environment), an environment id, a list of
ids or `Environment`s, or one environment's policies as a plain dict."""


def _environments(which: Served) -> list[Environment] | dict[str, Policy]:
    if which is None:
        return list(installed_environments().values())
    if isinstance(which, str):
        return [load_environment(which)]
    if isinstance(which, dict):
        return which
    return [e if isinstance(e, Environment) else load_environment(e) for e in which]


@contextmanager
def running_endpoint(which: Served = None, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Serve `which` (see `Served`; by default every installed environment) on a free loopback
    port in a background thread; yields the base URL."""
    endpoint = BaselineEndpoint(_environments(which))
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
        description="Serve the baseline policies of every installed piv environment, or of those named.",
    )
    parser.add_argument(
        "--env", action="append", help="an environment id to serve (repeatable; default: every installed one)"
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=argument(most=65535), default=8765)
    args = parser.parse_args(argv)
    endpoint = BaselineEndpoint(_environments(args.env))
    for environment in endpoint.environments:
        policies = ", ".join(MODEL_PREFIX + p for p in environment.names)
        print(f"{environment.id}: {policies}")
    print(f"serving on http://{args.host}:{args.port}/v1", flush=True)
    web.run_app(endpoint.app, host=args.host, port=args.port, print=None, access_log=None)


if __name__ == "__main__":
    main()
