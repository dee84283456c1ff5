"""One model turn as verifiers' chat program requests it, made without the SDK's per-call machinery.

The bundled chat program asks for each reply with the openai SDK,
``chat.completions.create(model=..., messages=..., stream=True,
stream_options={"include_usage": True})``, on a client it builds for the episode, inside a
tenacity loop that retries reading the stream. In the env server's process that path costs
milliseconds per episode: a client and a connection per episode, the parameter transform, the
request options copied per attempt, and a typed object (and a growing snapshot) per streamed
chunk. `request_turn` sends the same request and reads the same stream with less:

- the body is serialized by the SDK's own serializer (`openapi_dumps`), unchanged by the
  parameter transform, which leaves plain JSON messages as they are;
- the headers are the SDK's: ``default_headers`` and ``auth_headers`` of a client configured as
  the program configures its own (the secret as bearer), with ``x-stainless-retry-count`` set
  as the SDK sets it on each attempt;
- a failed attempt is retried, or raised, as the SDK decides (`AsyncOpenAI._should_retry`,
  ``_calculate_retry_timeout`` and ``_make_status_error_from_response``, called on that
  client), and a transport failure raises the SDK's ``APITimeoutError`` or
  ``APIConnectionError``;
- the stream is decoded by the SDK's ``SSEDecoder``; an event carrying ``error`` raises the
  SDK's ``APIError``; a stream that ends before every choice has a finish reason raises
  ``APIConnectionError``, as the program's ``_read_chat_completion`` does;
- reading the stream is retried as the program retries it: tenacity with the program's stop,
  wait and retry rule, the later attempts' retry count pinned to the attempt number; a
  transport failure that outlasts them raises ``SystemExit`` with verifiers' model-transport
  exit code, as the program exits with it.

One HTTP client per event loop carries every episode's requests (keep-alive to the
interception server), with the timeouts, limits and redirect rule of the client the program
builds. A `Turn` keeps the stream's chunks as decoded JSON; `Turn.completion` is the
SDK's ``ChatCompletion`` from them (the program's own ``_read_chat_completion`` over the SDK's
chunk objects) for any stream that is not a plain one-choice text reply (`_plain`): a reply
that calls a tool, which the program then goes on with, or anything the SDK must judge itself.

Every private piece of the SDK named above is reached through `piv_core.runtime.openai_internals`, and
only once its probe has passed (`fast_path`). Without it the SDK's public path is taken: the
single-reply harness runs the chat program whole, and `sdk_completion` is ``client.post`` itself.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
import weakref
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import certifi
import httpx
from openai import APIConnectionError, APIError, APITimeoutError, AsyncOpenAI, AsyncStream
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from tenacity import (
    AsyncRetrying,
    before_sleep_log,
    retry_if_exception_type,
    stop_after_attempt,
    wait_random_exponential,
)

from piv_core.runtime import openai_internals as sdk_internals

logger = logging.getLogger(__name__)

TIMEOUT = httpx.Timeout(None, connect=5.0)
"""The program's model-client timeout without ``--bash``: no read limit, five seconds to connect."""
LIMITS = httpx.Limits(max_connections=1000, max_keepalive_connections=100)
"""The connection limits of the SDK's default HTTP client, which the program uses."""
PATH = "chat/completions"
MODEL_TRANSPORT_ERROR_EXIT_CODE = 97
"""verifiers' exit code for a chat program whose model connection failed."""


@dataclass
class Turn:
    """One streamed reply: its chunks as decoded JSON and, where the program needs it, the SDK's
    ``ChatCompletion`` built from them (`completion`; None for a plain reply, see `_plain`)."""

    chunks: list[Any]
    completion: Any = None


class _Replayed:
    """The SDK's ``AsyncStream[ChatCompletionChunk]`` over a finished read: the chunk objects the
    SDK would have yielded, in order, then the error the SDK would have raised there, if any."""

    def __init__(self, sdk: AsyncOpenAI, chunks: list[Any], error: BaseException | None, response) -> None:
        self._sdk, self._chunks, self._error, self.response = sdk, chunks, error, response

    async def __aiter__(self) -> AsyncIterator[Any]:
        for chunk in self._chunks:
            yield sdk_internals.chunk_object(self._sdk, chunk, self.response)
        if self._error is not None:
            raise self._error

    async def close(self) -> None:
        await self.response.aclose()


_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
    weakref.WeakKeyDictionary()
)


@lru_cache(maxsize=1)
def _verify() -> Any:
    """The TLS context for the CA bundle the program passes (``certifi.where()``), built once."""
    import ssl

    return ssl.create_default_context(cafile=certifi.where())


def _http_client() -> httpx.AsyncClient:
    """This event loop's HTTP client for model requests (built on first use)."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        client = httpx.AsyncClient(timeout=TIMEOUT, limits=LIMITS, follow_redirects=True, verify=_verify())
        _clients[loop] = client
    return client


@lru_cache(maxsize=64)
def _sdk(base_url: str) -> AsyncOpenAI:
    """A client configured as the program configures its own, for the SDK's headers and rules;
    it never sends a request."""
    return AsyncOpenAI(
        base_url=base_url, api_key="-", timeout=TIMEOUT, http_client=httpx.AsyncClient(verify=_verify())
    )


def request_headers(sdk: AsyncOpenAI, retry_count: str | None, retries_taken: int) -> dict[str, str]:
    """The headers the SDK sends on attempt `retries_taken` of a request (`retry_count` pins
    ``x-stainless-retry-count``, as the program's later stream attempts do)."""
    headers = {k: v for k, v in {**sdk.auth_headers, **sdk.default_headers}.items() if isinstance(v, str)}
    headers["x-stainless-retry-count"] = retry_count if retry_count is not None else str(retries_taken)
    read = sdk.timeout.read if isinstance(sdk.timeout, httpx.Timeout) else sdk.timeout
    if read is not None:
        headers["x-stainless-read-timeout"] = str(read)
    return headers


def chat_body(
    model: str, messages: list[dict], tools: list[dict] | None = None, max_tokens: int | None = None
) -> dict[str, Any]:
    """What ``chat.completions.create(model=..., messages=..., stream=True, stream_options=
    {"include_usage": True})`` sends, with `tools` and `max_tokens` where given, in its key order."""
    body: dict[str, Any] = {"messages": messages, "model": model}
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    body |= {"stream": True, "stream_options": {"include_usage": True}}
    if tools is not None:
        body["tools"] = tools
    return body


async def _send(sdk: AsyncOpenAI, content: bytes, retry_count: str | None) -> httpx.Response:
    """The SDK's request loop for one ``create`` call: the streamed response, once it is a success."""
    http = _http_client()
    url = sdk.base_url.copy_with(raw_path=sdk.base_url.raw_path + PATH.encode())
    extensions = {"sni_hostname": url.host.replace("_", "-")} if "_" in url.host else None
    max_retries = sdk.max_retries
    for retries_taken in range(max_retries + 1):
        remaining = max_retries - retries_taken
        request = http.build_request(
            "POST",
            url,
            content=content,
            headers=request_headers(sdk, retry_count, retries_taken),
            extensions=extensions,
        )
        try:
            response = await http.send(request, stream=True)
        except httpx.TimeoutException as error:
            if remaining > 0:
                await _backoff(sdk, remaining, None)
                continue
            raise APITimeoutError(request=request) from error
        except Exception as error:
            if remaining > 0:
                await _backoff(sdk, remaining, None)
                continue
            raise APIConnectionError(request=request) from error
        if response.is_success:
            return response
        if remaining > 0 and sdk_internals.should_retry(sdk, response):
            await response.aclose()
            await _backoff(sdk, remaining, response.headers)
            continue
        await response.aread()
        raise sdk_internals.status_error(sdk, response) from None
    raise RuntimeError("the request loop ended without a response")


async def _backoff(sdk: AsyncOpenAI, remaining: int, headers: httpx.Headers | None) -> None:
    await asyncio.sleep(sdk_internals.retry_timeout(sdk, remaining, headers))


DRAIN_BYTES = 1 << 16
"""What is read past ``[DONE]`` (and ignored, as the SDK ignores it) so the connection can be reused."""


async def _read(response: httpx.Response) -> tuple[list[Any], BaseException | None]:
    """The stream's chunks as the SDK's ``AsyncStream`` yields them for ``cast_to=object``, and
    the error it would raise after them (an error event, undecodable data, a failed read), if any."""
    chunks: list[Any] = []
    error: BaseException | None = None
    received = response.aiter_bytes()
    try:
        async for sse in sdk_internals.sse_events(received):
            if sse.data.startswith("[DONE]"):
                break
            data = sse.json()
            if sse.event and sse.event.startswith("thread."):
                chunks.append({"data": data, "event": sse.event})
                continue
            if isinstance(data, Mapping) and data.get("error"):
                body = data.get("error")
                message = body.get("message") if isinstance(body, Mapping) else None
                if not message or not isinstance(message, str):
                    message = "An error occurred during streaming"
                raise APIError(message=message, request=response.request, body=data["error"])
            chunks.append(data)
        else:
            return chunks, None
        await _drain(received)
    except Exception as failure:
        error = failure
    finally:
        await response.aclose()
    return chunks, error


async def _drain(received: AsyncIterator[bytes]) -> None:
    """Read what is left of a response past ``[DONE]`` (at most `DRAIN_BYTES`), ignoring any
    failure: the turn is complete, only the connection's reuse is at stake."""
    read = 0
    try:
        async for data in received:
            read += len(data)
            if read > DRAIN_BYTES:
                return
    except Exception:
        return


def _plain(chunks: list[Any]) -> bool:
    """Whether every chunk is the plain shape of a one-choice reply without tool calls: marked
    ``"object": "chat.completion.chunk"`` (the SDK's reader skips any other chunk), with a
    ``choices`` list of at most one choice, at index 0, whose delta holds only text (or None)
    and whose finish reason is text or None. For such a stream the SDK's accumulation cannot
    fail and its outcome is `_finished`; any other stream is accumulated by the SDK itself."""
    for chunk in chunks:
        if not isinstance(chunk, dict) or chunk.get("object") != "chat.completion.chunk":
            return False
        choices = chunk.get("choices")
        if not isinstance(choices, list) or len(choices) > 1:
            return False
        for choice in choices:
            if not isinstance(choice, dict) or type(choice.get("index")) is not int or choice["index"] != 0:
                return False
            delta = choice.get("delta")
            if not isinstance(delta, dict) or not all(
                v is None or isinstance(v, str) for v in delta.values()
            ):
                return False
            if not (choice.get("finish_reason") is None or isinstance(choice["finish_reason"], str)):
                return False
    return True


def _finished(chunks: list[Any]) -> bool:
    """For a `_plain` stream: whether the program's reader accepts it, i.e. the SDK's snapshot
    has its choice and that choice a finish reason. A choice's first chunk sets the reason as
    sent (an empty string included); a later chunk sets it only when it is not empty."""
    if not chunks:
        return False
    seen, reason = False, None
    for chunk in chunks:
        for choice in chunk["choices"]:
            if not seen:
                seen, reason = True, choice.get("finish_reason")
            elif choice.get("finish_reason"):
                reason = choice["finish_reason"]
    return seen and reason is not None


async def _turn(response: httpx.Response, sdk: AsyncOpenAI, read_chat_completion: Callable) -> Turn:
    """The turn `response` streams, checked as the program's ``_read_chat_completion`` checks it."""
    chunks, error = await _read(response)
    if _plain(chunks):
        if error is not None:
            raise error
        if not _finished(chunks):
            raise APIConnectionError(
                message="Model stream ended before a completion finished", request=response.request
            )
        return Turn(chunks)
    return Turn(chunks, await read_chat_completion(_Replayed(sdk, chunks, error, response)))


def fast_path() -> bool:
    """Whether turns are made here (the SDK's private pieces passed their probe, see
    `piv_core.runtime.openai_internals`); when not, callers take the SDK's public path."""
    return sdk_internals.available()


async def sdk_completion(sdk: AsyncOpenAI, body: dict[str, Any], read_chat_completion: Callable) -> Any:
    """The ``ChatCompletion`` that ``sdk.post("/chat/completions", body=body, stream=True,
    stream_cls=AsyncStream[ChatCompletionChunk])`` read by `read_chat_completion` (a program's
    ``_read_chat_completion``) gives, made as `request_turn` makes its request; the stream is
    read once, not retried. Without the fast path (`fast_path`) it is that very call."""
    if not fast_path():
        stream = await sdk.post(
            f"/{PATH}",
            body=body,
            cast_to=ChatCompletion,
            stream=True,
            stream_cls=AsyncStream[ChatCompletionChunk],
        )
        return await read_chat_completion(stream)
    response = await _send(sdk, sdk_internals.dumps(body), None)
    chunks, error = await _read(response)
    return await read_chat_completion(_Replayed(sdk, chunks, error, response))


async def request_turn(
    base_url: str, secret: str, model: str, messages: list[dict], read_chat_completion: Callable
) -> Turn:
    """One model turn for `messages`, requested and read as the chat program's ``chat`` does;
    `read_chat_completion` is the program's own reader, for streams that are not plain. Only
    with the fast path (`fast_path`); without it the caller runs the program's own request."""
    if not fast_path():
        raise RuntimeError("the fast model-turn path is off (see piv_core.runtime.openai_internals)")
    sdk = _sdk(base_url).with_options(api_key=secret)
    content = sdk_internals.dumps(chat_body(model, messages))
    try:
        async for attempt in AsyncRetrying(
            retry=retry_if_exception_type((APIConnectionError, httpx.TransportError)),
            stop=stop_after_attempt(sdk.max_retries + 1),
            wait=wait_random_exponential(multiplier=0.5, max=8.0),
            before_sleep=before_sleep_log(logger, logging.WARNING),
            reraise=True,
        ):
            number = attempt.retry_state.attempt_number - 1
            response = await _send(sdk, content, str(number) if number else None)
            with attempt:
                return await _turn(response, sdk, read_chat_completion)
    except (APIConnectionError, httpx.TransportError) as error:
        traceback.print_exc()
        raise SystemExit(MODEL_TRANSPORT_ERROR_EXIT_CODE) from error
    raise RuntimeError("tenacity ended without a result")
