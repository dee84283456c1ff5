"""Reading the answer out of a model reply.

The convention every text environment here follows: the answer is the **last**
``<answer>...</answer>`` block of the reply; text outside it is ignored; a Markdown code
fence inside the block (```` ```json ... ``` ````) is tolerated.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

_BLOCK = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"^```[A-Za-z0-9_-]*[ \t]*\n?(.*?)\n?[ \t]*```$", re.DOTALL)


def last_answer_block(reply: str | None) -> str | None:
    """The stripped body of the last complete ``<answer>`` block, fence removed, or None."""
    if not reply or "<answer>" not in reply.lower():
        return None
    bodies = _BLOCK.findall(reply)
    if not bodies:
        return None
    body = bodies[-1].strip()
    fenced = _FENCE.match(body)
    return fenced.group(1).strip() if fenced else body


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-finite JSON constant {name}")


def json_answer(reply: str | None) -> Any | None:
    """The JSON value in the last answer block, or None when there is no block or no valid JSON.

    Non-integer numbers are read as exact `Decimal`s (never floats), and ``NaN`` /
    ``Infinity`` are rejected, so money compared downstream is never rounded by parsing.
    """
    body = last_answer_block(reply)
    if body is None:
        return None
    try:
        return json.loads(body, parse_float=Decimal, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return None
