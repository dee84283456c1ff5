"""Harnesses that run verifiers' chat program in-process instead of as a process per episode.

verifiers' `null` harness launches its bundled chat program (verifiers' own ``core``, ``mcp``
and ``compaction`` modules concatenated into one script) as a Python process for every
episode; that start-up is nearly all of an episode's cost outside the model. `Harness.launch`
allows a harness to run its loop in-process instead, provided every model call goes through
the interception endpoint with its secret.

`run_chat_program` does exactly that with the program itself: the bundled source is compiled
once per process and executed into a private namespace (so the very functions the script
would run, with the same streaming, retries, usage accounting, timeouts and tool handling);
its ``main`` is then called with the episode's arguments in place of ``sys.argv``. One
thing differs, by design: the program builds its HTTP client with ``verify=<CA bundle path>``,
which parses the bundle into a new TLS context on every call (about 20 ms); in-process the
context for a given bundle is built once and reused. A
``SystemExit`` becomes the program's exit code, any other exception exit code 1 with its
traceback as stderr, as the process would have reported them.

A reply can break the exchange that relays it: a lone surrogate (a JSON ``"\\ud800"`` escape
decodes to one), which no UTF-8 serializer accepts, or tool-call arguments nested past the JSON
decoder's depth; verifiers' interception server then answers the program 502. The program fails,
and an episode ended by a harness error is neither finalized nor scored, which a trainer that
drops errored rollouts would reward. So when the program fails on such an exchange (its last
call's error is none of verifiers' rollout errors) the trace is stopped as `UNRELAYABLE_REPLY`
and scored like any other, `info.ended_by` naming the error (`stop_at_unrelayable_reply`); a
provider's failure stays an error. A trace holding a lone surrogate would also make verifiers'
trace store fail to save the whole run, so after the program ends every message recorded on the
trace has each lone surrogate replaced by U+FFFD (`scrub_surrogates`).

`SingleReplyHarness` is the default harness of the single-reply text environments: verifiers'
`null` chat program, in-process, with no tools, so one reply ends the episode. Its model turn
is requested by `piv_core.runtime.chat_request` (the program's request and retries, without the SDK's
per-call machinery); a stream only the SDK can judge is handed to the program, whose first
``chat`` returns it (`_ANSWERED`). A reply that calls a tool never reaches the program's loop:
the task's own stop ends the episode at it (`piv_core.runtime.confinement.SingleReply`), under this
harness and any other.
verifiers falls back to the `bash` harness (a coding agent with a shell) unless a taskset
exports its own; ``--env.agent.harness.id null`` (or ``bash``) still selects verifiers'
process-based ones.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import ssl
import tempfile
import traceback
import types
from contextvars import ContextVar
from functools import lru_cache
from typing import Any

from openai import DefaultAsyncHttpxClient
from verifiers.v1.clients import ModelContext
from verifiers.v1.configs.harness import HarnessConfig
from verifiers.v1.harnesses.null import NullHarness
from verifiers.v1.harnesses.utils.launch import CHAT_PROGRAM_SOURCE
from verifiers.v1.runtimes import ProgramResult, Runtime
from verifiers.v1.task import TaskData
from verifiers.v1.trace import Trace

_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub_surrogates(value: Any) -> Any:
    """`value` (JSON-like) with every lone surrogate in its strings (keys included) replaced by
    U+FFFD. Dicts and lists are copied (a tuple becomes a list, as in JSON), walked without
    recursion: a message may nest as deep as its sender likes."""
    root = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        parent, slot = stack.pop()
        node = parent[slot]
        if isinstance(node, str):
            parent[slot] = _SURROGATE.sub("\ufffd", node)
        elif isinstance(node, dict):
            copy = {_SURROGATE.sub("\ufffd", k) if isinstance(k, str) else k: v for k, v in node.items()}
            parent[slot] = copy
            stack.extend((copy, k) for k in copy)
        elif isinstance(node, list | tuple):
            items = list(node)
            parent[slot] = items
            stack.extend((items, i) for i in range(len(items)))
    return root[0]


def scrub_trace(trace: Trace) -> None:
    """Replace lone surrogates in the messages recorded on `trace`, in place."""
    for node in trace.nodes:
        message = getattr(node, "message", None)
        if message is None:
            continue
        try:
            message.model_dump_json()
        except ValueError:  # pydantic refuses to serialize a lone surrogate
            node.message = type(message).model_validate(scrub_surrogates(message.model_dump()))


@lru_cache(maxsize=8)
def _tls_context(verify: str) -> ssl.SSLContext:
    """The context httpx would build for CA bundle path `verify` (a file, or a directory of them)."""
    if os.path.isdir(verify):
        return ssl.create_default_context(capath=verify)
    return ssl.create_default_context(cafile=verify)


def _http_client(*args: Any, verify: Any = True, **kwargs: Any) -> Any:
    """openai's default async HTTP client, with the TLS context for a CA bundle path built once."""
    if isinstance(verify, str):
        verify = _tls_context(verify)
    return DefaultAsyncHttpxClient(*args, verify=verify, **kwargs)


_ANSWERED: ContextVar[list[Any] | None] = ContextVar("piv_answered_turn", default=None)
"""A model turn already requested for this episode, which the program's first ``chat`` returns."""


def _answering(chat: Any) -> Any:
    """The program's ``chat``, returning the episode's already-answered turn (`_ANSWERED`) once."""

    async def answering_chat(*args: Any, **kwargs: Any) -> Any:
        answered = _ANSWERED.get()
        if answered:
            return answered.pop()
        return await chat(*args, **kwargs)

    return answering_chat


@lru_cache(maxsize=8)
def program_namespace(source: str) -> dict[str, Any]:
    """The namespace of program `source` as the script defines it (its entry point not run),
    built once per source; every episode looks it up by the source itself."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:12]
    namespace: dict[str, Any] = {"__name__": f"piv_chat_program_{digest}", "__builtins__": __builtins__}
    exec(compile(source, f"<chat program {digest}>", "exec"), namespace)
    namespace["DefaultAsyncHttpxClient"] = _http_client
    if "chat" in namespace:
        namespace["chat"] = _answering(namespace["chat"])
    return namespace


async def run_chat_program(
    source: str,
    config: HarnessConfig,
    ctx: ModelContext,
    trace: Trace,
    endpoint: str,
    secret: str,
    mcp_urls: dict[str, str],
    system_prompt: str | None,
    prompt: Any,
    *,
    tool_interception_url: str | None = None,
    answered: Any = None,
) -> ProgramResult:
    """Run the chat program `source` in this process with the arguments `launch_chat_program`
    would pass on its command line; its exit as a `ProgramResult`. `answered`, when given, is
    the completion the program's first model call returns without a request (a turn already
    requested, see `SingleReplyHarness`)."""
    namespace = program_namespace(source)
    args = argparse.Namespace(
        base_url=endpoint,
        api_key=secret,
        model=ctx.model,
        system_prompt=system_prompt or "",
        prompt=prompt if isinstance(prompt, str) else "",
        initial_messages_file="",
        mcp_config="",
        tool_interception_url=tool_interception_url or "",
        bash=False,
        compaction=False,
        summarize_at_tokens=None,
        edit=False,
        search=False,
        serper_key="",
    )
    if mcp_urls:
        servers = {name: {"url": url, "timeout": config.tool_timeout} for name, url in mcp_urls.items()}
        args.mcp_config = json.dumps({"mcpServers": servers})
    if prompt is not None and not isinstance(prompt, str):
        from verifiers.v1.dialects.chat import message_to_wire

        fd, args.initial_messages_file = tempfile.mkstemp(prefix=f"vf-initial-messages-{trace.id}-")
        with os.fdopen(fd, "w") as f:
            json.dump([message_to_wire(m) for m in prompt], f)
    main = types.FunctionType(namespace["main"].__code__, {**namespace, "parse_args": lambda: args})
    token = _ANSWERED.set(None if answered is None else [answered])
    try:
        return await program_exit(main(), trace)
    finally:
        _ANSWERED.reset(token)


UNRELAYABLE_REPLY = "reply_unrelayable"
"""The stop condition of an episode whose last reply the pipeline could not handle (`program_exit`)."""


def stop_at_unrelayable_reply(trace: Trace) -> None:
    """Stop `trace` with `UNRELAYABLE_REPLY` when its last model call ended in an error that is not
    one of verifiers' rollout errors (a provider's, a tunnel's, ...): the model's own reply broke
    the exchange, e.g. tool-call arguments nested past the decoder's depth or a lone surrogate the
    interception server could not encode. A stopped episode is finalized and scored (the reply
    as recorded, an accepted ledger, nothing); one ended by a harness error would not be, and a
    trainer that drops errored rollouts would reward the reply that broke it. `trace.info`
    records what the error was."""
    from verifiers.v1 import errors

    failed = next((call.error for call in reversed(trace.calls) if call.error is not None), None)
    if failed is None or trace.stop_condition is not None:
        return
    if any(failed.type == cls.__name__ for cls in _subclasses(errors.RolloutError)):
        return
    trace.info["ended_by"] = f"{failed.type}: {failed.message[:300]}"
    trace.stop(UNRELAYABLE_REPLY)


def _subclasses(cls: type) -> list[type]:
    found = [cls]
    for sub in cls.__subclasses__():
        found.extend(_subclasses(sub))
    return found


async def program_exit(run: Any, trace: Trace) -> ProgramResult:
    """Await `run` (a chat program's work) and report it as the process would have: exit 0, a
    ``SystemExit``'s code, or 1 with the traceback as stderr; the trace's messages are then
    made serializable (`scrub_trace`). When the program failed because the pipeline could not
    handle the model's reply, the trace is stopped so that it is still scored
    (`stop_at_unrelayable_reply`)."""
    try:
        await run
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
        stop_at_unrelayable_reply(trace)
        return ProgramResult(exit_code=code, stdout="", stderr=traceback.format_exc())
    except Exception:
        stop_at_unrelayable_reply(trace)
        return ProgramResult(exit_code=1, stdout="", stderr=traceback.format_exc())
    finally:
        scrub_trace(trace)
    return ProgramResult(exit_code=0, stdout="", stderr="")


class InProcessNullHarness(NullHarness):
    """verifiers' `null` harness with its chat program run in-process (see `run_chat_program`).

    Subclasses set `PROGRAM_SOURCE` to run another bundled program the same way."""

    PROGRAM_SOURCE: str = CHAT_PROGRAM_SOURCE

    def program_source(self) -> str:
        return self.PROGRAM_SOURCE

    async def setup(self, runtime: Runtime) -> None:
        """Nothing to prepare: no script environment is built, no process started."""

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
        return await self.run_program(ctx, trace, endpoint, secret, mcp_urls, data, tool_interception_url)

    async def run_program(
        self,
        ctx: ModelContext,
        trace: Trace,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: TaskData,
        tool_interception_url: str | None,
        answered: Any = None,
    ) -> ProgramResult:
        """The episode's chat program, in-process (`run_chat_program`, `answered` passed on)."""
        system_prompt, prompt = self.resolve_prompt(data)
        return await run_chat_program(
            self.program_source(),
            self.config,
            ctx,
            trace,
            endpoint,
            secret,
            mcp_urls,
            system_prompt,
            prompt,
            tool_interception_url=tool_interception_url,
            answered=answered,
        )


def opening_messages(system_prompt: str | None, prompt: Any) -> list[dict]:
    """The conversation the program opens with: the system prompt, then the task's messages
    (as the program reads them back from its initial-messages file) or its prompt text."""
    from verifiers.v1.dialects.chat import message_to_wire

    messages = [{"role": "system", "content": system_prompt}] if system_prompt else []
    initial = [] if prompt is None or isinstance(prompt, str) else [message_to_wire(m) for m in prompt]
    if initial:
        messages.extend(json.loads(json.dumps(initial)))
    elif isinstance(prompt, str) and prompt:
        messages.append({"role": "user", "content": prompt})
    return messages


class SingleReplyHarness(InProcessNullHarness):
    """verifiers' `null` chat program in-process, under the environment's own id, its first
    model turn requested by `piv_core.runtime.chat_request` (the same request, read the same way, at a
    fraction of the SDK's cost). A plain text reply ends the episode there, as the program's
    loop ends at a reply without tool calls, and a reply that calls a tool is ended by the task
    (`piv_core.runtime.confinement.SingleReply`); a reply whose stream the SDK must accumulate itself
    is handed to the program, which reads it.
    With tool servers configured, or without the fast path (the SDK's private pieces failed
    their probe, `piv_core.runtime.openai_internals`), the program runs whole."""

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
        from piv_core.runtime.chat_request import fast_path, request_turn

        if mcp_urls or not fast_path():
            return await self.run_program(ctx, trace, endpoint, secret, mcp_urls, data, tool_interception_url)

        system_prompt, prompt = self.resolve_prompt(data)
        reader = program_namespace(self.program_source())["_read_chat_completion"]
        turn: list[Any] = []

        async def first_turn() -> None:
            messages = opening_messages(system_prompt, prompt)
            turn.append(await request_turn(endpoint, secret, ctx.model, messages, reader))

        result = await program_exit(first_turn(), trace)
        if not turn or turn[0].completion is None:
            return result
        return await self.run_program(
            ctx, trace, endpoint, secret, mcp_urls, data, tool_interception_url, answered=turn[0].completion
        )
