"""Reading the answer out of a model reply.

The convention every text environment here follows: the answer is the **last**
``<answer>...</answer>`` block of the reply; text outside it is ignored; a Markdown code
fence inside the block (```` ```json ... ``` ````) is tolerated.

A reply is whatever the model wrote, so the reader takes time linear in its length: the tags
are found by literal search from a position that only moves forward, and the fence is
removed with string operations. The result is the one the pattern
``<answer>(.*?)</answer>`` (``DOTALL | IGNORECASE``) gives: its last match, stripped, with a
fence ``^```[A-Za-z0-9_-]*[ \\t]*\\n?(.*?)\\n?[ \\t]*```$`` reduced to its stripped body.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Callable
from decimal import Decimal
from typing import Any, TypeVar

from piv_core.parsing.bounded_decode import ANSWER_MAX_BYTES, ANSWER_MAX_DEPTH, Undecodable, load_json

_OPEN = re.compile(re.escape("<answer>"), re.IGNORECASE)
_CLOSE = re.compile(re.escape("</answer>"), re.IGNORECASE)
_FENCE = "```"
_LANGUAGE_TAG = string.ascii_letters + string.digits + "_-"

REPLIES_REMEMBERED = 128
"""How many recent replies a `parsed_once` parser remembers (more than a worker scores at once)."""

F = TypeVar("F", bound=Callable[..., Any])


def last_answer_block(reply: str | None) -> str | None:
    """The stripped body of the last complete ``<answer>`` block, fence removed, or None."""
    if not reply or "<answer>" not in reply.lower():
        return None
    block = _last_block(reply)
    if block is None:
        return None
    return _unfenced(reply[block[0] : block[1]].strip())


def _last_block(reply: str) -> tuple[int, int] | None:
    """Where the body of the last complete block lies, in one forward pass.

    Blocks pair each opening tag with the first closing tag after it, and the next block is
    looked for after that closing tag. An opening tag with no closing tag after it ends the
    search: no later opening tag can have one either.
    """
    last, position = None, 0
    while (opening := _OPEN.search(reply, position)) is not None:
        closing = _CLOSE.search(reply, opening.end())
        if closing is None:
            break
        last, position = (opening.end(), closing.start()), closing.end()
    return last


def _unfenced(body: str) -> str:
    """`body` without a surrounding code fence and its language tag, stripped; `body` when unfenced.

    The two fences must not overlap, so a fenced body has at least six characters. What lies
    between the fences' own whitespace and the text is removed by the final strip.
    """
    if len(body) >= 2 * len(_FENCE) and body.startswith(_FENCE) and body.endswith(_FENCE):
        return body[len(_FENCE) : -len(_FENCE)].lstrip(_LANGUAGE_TAG).strip()
    return body


def parsed_once(parse: F) -> F:
    """`parse`, remembering its results for the `REPLIES_REMEMBERED` most recent arguments.

    Each reward and metric of a trace reads the same reply; with this, they share one parse.
    `parse` must be a pure function of its (hashable) arguments and return an immutable value.
    """
    return functools.lru_cache(maxsize=REPLIES_REMEMBERED)(parse)  # type: ignore[return-value]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-finite JSON constant {name}")


def json_answer(reply: str | None) -> Any | None:
    """The JSON value in the last answer block, or None when there is no block, no valid JSON, or
    JSON over `ANSWER_MAX_BYTES` or nested deeper than `ANSWER_MAX_DEPTH` (refused unread).

    Non-integer numbers are read as exact `Decimal`s (never floats), and ``NaN`` /
    ``Infinity`` are rejected, so money compared downstream is never rounded by parsing.
    """
    body = last_answer_block(reply)
    if body is None:
        return None
    try:
        return load_json(
            body,
            max_depth=ANSWER_MAX_DEPTH,
            max_bytes=ANSWER_MAX_BYTES,
            where="answer",
            parse_float=Decimal,
            parse_constant=_reject_constant,
        )
    except Undecodable:
        return None
