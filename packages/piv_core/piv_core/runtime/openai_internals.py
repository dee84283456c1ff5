"""The parts of the openai SDK that `piv_core.runtime.chat_request` uses although the SDK does not export
them, in one place, behind a probe.

The fast path of a model turn serializes the body, decodes the event stream, decides retries and
builds the SDK's errors and chunk objects exactly as the SDK does, by calling the SDK's own
private pieces: ``openai._utils._json.openapi_dumps``, ``openai._streaming.SSEDecoder``,
``openai._models.FinalRequestOptions`` and the client's ``_should_retry``,
``_calculate_retry_timeout``, ``_make_status_error_from_response`` and
``_process_response_data``. Nothing outside this module names them.

A release of the SDK may move or change any of them. So at first use `probe` looks every one up
and runs a scripted exchange through them, in process, with known answers: a body with non-ASCII
text is serialized to known bytes; an event stream split at awkward places (CRLF line ends, a
comment, a named event, data over two lines) is decoded to known events; retry decisions and
delays on fabricated responses (429, 409, 500, 400, ``x-should-retry``, ``retry-after-ms``,
``retry-after``, plain exponential backoff); the error class and message for a 400, a 429 and a
non-JSON 502; a chunk built into the SDK's ``ChatCompletionChunk``. The probe leaves the global
``random`` state as it found it (the SDK's backoff jitter draws from it).

When any check fails, `available` is False for the life of the process, a single warning says
which check and the installed version, and `piv_core.runtime.chat_request`'s callers take the SDK's
public path instead: the single-reply harness runs the chat program whole, and `sdk_completion`
posts with ``client.post``. Setting ``PIV_OPENAI_FAST_PATH=0`` takes that path on purpose (for
comparisons, or to rule the fast path out).
"""

from __future__ import annotations

import json
import logging
import os
import random
from collections.abc import AsyncIterator, Callable
from functools import lru_cache
from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import httpx
import openai
from openai.types.chat import ChatCompletionChunk

logger = logging.getLogger(__name__)

FORCE_PUBLIC = "PIV_OPENAI_FAST_PATH"
"""Environment variable: ``0`` turns the fast path off (every turn takes the SDK's public path)."""
CLIENT_METHODS = (
    "_should_retry",
    "_calculate_retry_timeout",
    "_make_status_error_from_response",
    "_process_response_data",
)
MODULE_NAMES = (
    ("openai._utils._json", "openapi_dumps"),
    ("openai._streaming", "SSEDecoder"),
    ("openai._models", "FinalRequestOptions"),
)


class ProbeFailed(Exception):
    """A private piece of the installed SDK is missing or does not behave as the fast path needs."""


def _installed() -> str:
    try:
        return version("openai")
    except PackageNotFoundError:
        return "unknown"


def _lookup(module: str, name: str) -> Any:
    try:
        return getattr(import_module(module), name)
    except (ImportError, AttributeError) as e:
        raise ProbeFailed(f"{module}.{name} is missing ({type(e).__name__})") from None


_found: dict[str, Any] = {}
"""The private module-level names, by name, once `probe` has passed."""


def dumps(body: Any) -> bytes:
    """The request body as the SDK serializes it (``openapi_dumps``)."""
    return _found["openapi_dumps"](body)


def sse_events(received: AsyncIterator[bytes]) -> AsyncIterator[Any]:
    """The server-sent events of a byte stream, decoded by the SDK's ``SSEDecoder``."""
    return _found["SSEDecoder"]().aiter_bytes(received)


def should_retry(sdk: openai.AsyncOpenAI, response: httpx.Response) -> bool:
    """Whether the SDK retries a request that got `response` (when retries remain)."""
    return sdk._should_retry(response)


@lru_cache(maxsize=1)
def _request_options() -> Any:
    return _found["FinalRequestOptions"].construct(method="post", url="/chat/completions")


def retry_timeout(sdk: openai.AsyncOpenAI, remaining: int, headers: httpx.Headers | None) -> float:
    """The SDK's wait before the next attempt, `remaining` retries left, after `headers` (or none)."""
    return sdk._calculate_retry_timeout(remaining, _request_options(), headers)


def status_error(sdk: openai.AsyncOpenAI, response: httpx.Response) -> openai.APIStatusError:
    """The SDK's error for a failed (and read) `response`."""
    return sdk._make_status_error_from_response(response)


def chunk_object(sdk: openai.AsyncOpenAI, data: Any, response: httpx.Response) -> Any:
    """The SDK's ``ChatCompletionChunk`` for a decoded chunk, as its stream yields it."""
    return sdk._process_response_data(data=data, cast_to=ChatCompletionChunk, response=response)


def _complete(coroutine: Any) -> Any:
    """Run a coroutine that never suspends (it only reads in-memory data) to its result."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise ProbeFailed("SSEDecoder.aiter_bytes waited on something other than its input")


def _expect(what: str, got: Any, wanted: Any) -> None:
    if got != wanted:
        raise ProbeFailed(f"{what}: got {got!r}, expected {wanted!r}")


PROBE_TEXT = "r\u00e9sum\u00e9 \u2713"
PROBE_BODY = {"messages": [{"role": "user", "content": PROBE_TEXT}], "model": "m", "stream": True}
PROBE_BYTES = (
    b'{"messages":[{"role":"user","content":"r\xc3\xa9sum\xc3\xa9 \xe2\x9c\x93"}],"model":"m","stream":true}'
)
"""`PROBE_BODY` as UTF-8 JSON without spaces, non-ASCII text unescaped (what httpx sends too)."""
PROBE_STREAM = (
    b'data: {"a":',
    b" 1}\n",
    b'\n: a comment\r\nevent: thread.x\r\ndata: {"b"\r',
    b"\ndata: :2}\r\n\r\ndata: [DONE]\n\n",
)
PROBE_EVENTS = [(None, '{"a": 1}', {"a": 1}), ("thread.x", '{"b"\n:2}', {"b": 2}), (None, "[DONE]", None)]


def _check_dumps() -> None:
    _expect("openapi_dumps", dumps(PROBE_BODY), PROBE_BYTES)


def _check_sse() -> None:
    async def received() -> AsyncIterator[bytes]:
        for part in PROBE_STREAM:
            yield part

    async def decode() -> list[tuple]:
        events = []
        async for sse in sse_events(received()):
            events.append((sse.event, sse.data, None if sse.data == "[DONE]" else sse.json()))
        return events

    _expect("SSEDecoder", _complete(decode()), PROBE_EVENTS)


def _response(status: int, headers: dict[str, str] | None = None, body: Any = None) -> httpx.Response:
    content = body.encode() if isinstance(body, str) else json.dumps(body or {}).encode()
    request = httpx.Request("POST", "http://probe.invalid/v1/chat/completions")
    return httpx.Response(status, headers=headers, content=content, request=request)


RETRY_DECISIONS = [
    (429, {}, True),
    (409, {}, True),
    (500, {}, True),
    (400, {}, False),
    (502, {"x-should-retry": "false"}, False),
    (400, {"x-should-retry": "true"}, True),
]
STATUS_ERRORS = [
    (400, {"error": {"message": "rollout stopped"}}, openai.BadRequestError, "rollout stopped"),
    (429, {"error": {"message": "slow down"}}, openai.RateLimitError, "slow down"),
    (502, "plain text", openai.InternalServerError, "plain text"),
]


def _check_retries(sdk: openai.AsyncOpenAI) -> None:
    for status, headers, wanted in RETRY_DECISIONS:
        _expect(f"_should_retry on {status} {headers}", should_retry(sdk, _response(status, headers)), wanted)
    for header, value, wanted_delay in (("retry-after-ms", "3", 0.003), ("retry-after", "2", 2.0)):
        delay = retry_timeout(sdk, 2, httpx.Headers({header: value}))
        _expect(f"_calculate_retry_timeout after {header}", delay, wanted_delay)
    state = random.getstate()
    try:
        first, later = retry_timeout(sdk, 2, None), retry_timeout(sdk, 1, None)
    finally:
        random.setstate(state)
    if not (0.375 <= first <= 0.5 and 0.75 <= later <= 1.0):
        raise ProbeFailed(f"_calculate_retry_timeout's backoff: got {first!r}, {later!r}")


def _check_errors(sdk: openai.AsyncOpenAI) -> None:
    for status, body, kind, text in STATUS_ERRORS:
        error = status_error(sdk, _response(status, None, body))
        if type(error) is not kind or error.status_code != status or text not in str(error):
            raise ProbeFailed(f"_make_status_error_from_response on {status}: got {error!r}")


def _check_chunks(sdk: openai.AsyncOpenAI) -> None:
    data = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": None}],
    }
    chunk = chunk_object(sdk, data, _response(200))
    if not isinstance(chunk, ChatCompletionChunk) or chunk.choices[0].delta.content != "x":
        raise ProbeFailed(f"_process_response_data: got {chunk!r}")


CHECKS: tuple[Callable[[openai.AsyncOpenAI], None], ...] = (
    lambda sdk: _check_dumps(),
    lambda sdk: _check_sse(),
    _check_retries,
    _check_errors,
    _check_chunks,
)


def probe() -> None:
    """Look up every private piece and run the scripted exchange; `ProbeFailed` says what failed."""
    _found.clear()
    found = {name: _lookup(module, name) for module, name in MODULE_NAMES}
    for method in CLIENT_METHODS:
        if not callable(getattr(openai.AsyncOpenAI, method, None)):
            raise ProbeFailed(f"AsyncOpenAI.{method} is missing")
    _found.update(found)
    sdk = openai.AsyncOpenAI(
        base_url="http://probe.invalid/v1", api_key="-", max_retries=2, http_client=httpx.AsyncClient()
    )
    try:
        for check in CHECKS:
            check(sdk)
    except ProbeFailed:
        _found.clear()
        raise
    except Exception as e:
        _found.clear()
        raise ProbeFailed(f"{type(e).__name__}: {e}") from None


@lru_cache(maxsize=1)
def available() -> bool:
    """Whether the fast path may run in this process: the probe passed (decided once, at first
    use; a failure is logged once, with its reason) and ``PIV_OPENAI_FAST_PATH`` is not ``0``."""
    if os.environ.get(FORCE_PUBLIC, "").strip() == "0":
        logger.warning("%s=0: every model turn takes the openai SDK's public path", FORCE_PUBLIC)
        return False
    try:
        probe()
    except ProbeFailed as failed:
        logger.warning(
            "openai %s: the fast model-turn path is off, every model turn takes the SDK's public path (%s)",
            _installed(),
            failed,
        )
        return False
    return True
