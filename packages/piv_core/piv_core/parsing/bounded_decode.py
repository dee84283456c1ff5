"""Decoding untrusted JSON and TOML text within bounds on its size and nesting.

Model replies, tool-call arguments, run files and operator files are read with `load_json` and
`load_toml`. Python's decoders recurse once per level of nesting, so a few kilobytes of ``[[[``
end in a RecursionError, or, caught too late, in a value that every later recursive walk fails
on. Here the text is measured before any decoder sees it:

- its size in UTF-8 bytes, against ``max_bytes``;
- its nesting depth, by a linear pre-scan that never recurses: strings (escapes included) and,
  in TOML, comments are removed by regular expressions that never backtrack (within each
  repetition the alternatives start with distinct characters, and every form may end unclosed
  at the end of the text, so a match once begun never fails; no possessive repetition, which
  early 3.11 releases mismatch), and the brackets that remain are summed in C. A bracket
  inside a string or a comment never counts. For valid text the depth is exact; where the
  text stops being valid the decoder stops too, so the depth the decoder would reach is never
  more than the one measured.

Text over either bound is refused without decoding. TOML also nests tables by dotted keys and
table headers, which tomllib builds without recursion but in time quadratic in a key's parts
(50,000 parts, 100 KB, take over a minute): a key of more than ``max_depth`` dots is refused
unread too, and the decoded document is measured again, without recursion, so no caller is
handed a value nested deeper than ``max_depth``.

Every refusal and every decoding error raises `Undecodable`, a ValueError whose one-line message
names the source (``where``) and what is wrong with it: ``tool arguments: JSON nested deeper
than 32 levels``. The named limits below are the defaults for each kind of text read.
"""

from __future__ import annotations

import json
import re
import tomllib
from array import array
from collections.abc import Callable
from itertools import accumulate
from typing import Any

ANSWER_MAX_DEPTH = 32
"""Deepest nesting of the JSON in a reply's answer block (the answers asked for nest 4 deep)."""
ANSWER_MAX_BYTES = 1 << 20
"""Largest answer JSON read (1 MiB; a whole reply of the longest completion is smaller)."""
TOOL_ARGUMENTS_MAX_DEPTH = 32
"""Deepest nesting of a tool call's JSON arguments (the tools take flat objects)."""
TOOL_ARGUMENTS_MAX_BYTES = 1 << 20
"""Largest tool-call arguments read (1 MiB: the largest ledger a tool accepts, every character
escaped, fits several times over)."""
OPERATOR_FILE_MAX_DEPTH = 64
"""Deepest nesting of an operator's configuration, manifest or dataset cell."""
OPERATOR_FILE_MAX_BYTES = 64 << 20
"""Largest operator file read as one document (64 MiB)."""
SHOWN = 200
"""Characters of a decoder's own message kept in an error."""

_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_TOML_SKIPPED = re.compile(
    r'"""[^"\\]*(?:(?:\\.?|"(?!""))[^"\\]*)*(?:"{3,5}|\Z)'  # multi-line basic string
    r"|'''[^']*(?:'(?!'')[^']*)*(?:'{3,5}|\Z)"  # multi-line literal string
    r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"?'  # basic string
    r"|'[^'\n]*'?"  # literal string
    r"|#[^\n]*",  # comment
    re.DOTALL,
)
_BRACKETS = b"[]{}"
_SIGNED_STEP = bytes.maketrans(_BRACKETS, b"\x01\xff\x01\xff")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in _BRACKETS)
_OPENING_RUN = re.compile(b"\x01+")
_TOML_RUN = re.compile(r"[^=,\[\]{}\n]+")
"""A run of a TOML skeleton between separators: a key, a header's name or a scalar."""


class Undecodable(ValueError):
    """Text refused before decoding, or not decodable; the message names `where` and the reason."""

    def __init__(self, where: str, reason: str) -> None:
        self.where, self.reason = where, reason
        super().__init__(f"{where}: {reason}")


def _steps(skeleton: str) -> bytes:
    """One byte per bracket of `skeleton`: 0x01 opening, 0xff (-1 signed) closing."""
    return skeleton.encode("utf-8", "surrogatepass").translate(_SIGNED_STEP, _NOT_BRACKETS)


def _deepest(steps: bytes, limit: int | None = None) -> int:
    """How deep `steps` (one signed byte a bracket) nest: their highest running sum, or their
    longest run of openings where that is more (text that closes more than it opened is invalid
    there, and no decoder reads on; a run counts as it would after a valid prefix). With `limit`,
    a cheaper figure that is over `limit` exactly when that depth is."""
    if limit is not None:
        opening = steps.count(1)
        if opening <= limit:
            return opening
        if b"\x01" * (limit + 1) in steps:
            return limit + 1
        return max(accumulate(array("b", steps)), default=0)
    longest_run = max(map(len, _OPENING_RUN.findall(steps)), default=0)
    return max(longest_run, max(accumulate(array("b", steps)), default=0))


def json_skeleton(text: str) -> str:
    """`text` without its strings: the structure a JSON decoder nests by."""
    return _JSON_STRING.sub("", text)


def toml_skeleton(text: str) -> str:
    """`text` without its strings (all four forms) and comments."""
    return _TOML_SKIPPED.sub("", text)


def json_depth(text: str) -> int:
    """How deep arrays and objects nest in JSON `text` (0 for a scalar), without decoding it; for
    text that is not JSON, at least as deep as a decoder reading it gets."""
    return _deepest(_steps(json_skeleton(text)))


def toml_depth(text: str) -> int:
    """How deep arrays, inline tables and table-header brackets nest in TOML `text`, without
    decoding it (a ``[[header]]`` counts 2); for text that is not TOML, at least as deep as a
    decoder reading it gets."""
    return _deepest(_steps(toml_skeleton(text)))


def _as_text(text: Any, kind: str, where: str) -> str:
    if isinstance(text, bytes | bytearray):
        try:
            return bytes(text).decode("utf-8")
        except UnicodeDecodeError as error:
            raise Undecodable(where, f"not UTF-8 text (byte {error.start})") from None
    if not isinstance(text, str):
        raise Undecodable(where, f"expected {kind} text, got {type(text).__name__}")
    return text


def _check_size(text: str, kind: str, max_bytes: int, where: str) -> None:
    """`Undecodable` when `text` is more than `max_bytes` of UTF-8 (encoded only when in doubt)."""
    over = len(text) > max_bytes or (
        4 * len(text) > max_bytes and len(text.encode("utf-8", "surrogatepass")) > max_bytes
    )
    if over:
        raise Undecodable(where, f"{kind} text over the {max_bytes:,}-byte limit")


def _one_line(message: str) -> str:
    return " ".join(message.split())[:SHOWN]


def _too_deep(kind: str, max_depth: int) -> str:
    return f"{kind} nested deeper than {max_depth} levels"


def load_json(
    text: str | bytes,
    *,
    max_depth: int = OPERATOR_FILE_MAX_DEPTH,
    max_bytes: int = OPERATOR_FILE_MAX_BYTES,
    where: str = "the text",
    parse_float: Callable[[str], Any] | None = None,
    parse_constant: Callable[[str], Any] | None = None,
) -> Any:
    """`text` decoded by `json.loads` (with `parse_float` and `parse_constant`, as it takes them)
    once it is at most `max_bytes` of UTF-8 nested at most `max_depth` deep; `Undecodable`
    otherwise, and for any error of the decoder or of the two hooks."""
    text = _as_text(text, "JSON", where)
    _check_size(text, "JSON", max_bytes, where)
    if _deepest(_steps(json_skeleton(text)), max_depth) > max_depth:
        raise Undecodable(where, _too_deep("JSON", max_depth))
    try:
        return json.loads(text, parse_float=parse_float, parse_constant=parse_constant)
    except json.JSONDecodeError as error:
        at = f"line {error.lineno}, column {error.colno}" if error.lineno > 1 else f"column {error.colno}"
        raise Undecodable(where, f"not JSON ({error.msg} at {at})") from None
    except ValueError as error:  # a hook's refusal, an integer longer than Python reads
        raise Undecodable(where, f"not JSON ({_one_line(str(error))})") from None
    except RecursionError:  # only when called with little stack left
        raise Undecodable(where, "JSON nested too deep to decode here") from None


def _most_dots(skeleton: str) -> int:
    """The most dots in one key of a TOML skeleton (a float's one dot included). A key of n dots
    nests n tables, and tomllib takes time quadratic in n to build them."""
    return max(map(_count_dots, _TOML_RUN.findall(skeleton)), default=0)


def _count_dots(run: str) -> int:
    return run.count(".")


def _value_depth(document: dict[str, Any]) -> int:
    """How deep tables and arrays nest below the document's root table, without recursion."""
    deepest, stack = 0, [(document, 0)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return deepest


def load_toml(
    text: str | bytes,
    *,
    max_depth: int = OPERATOR_FILE_MAX_DEPTH,
    max_bytes: int = OPERATOR_FILE_MAX_BYTES,
    where: str = "the text",
    parse_float: Callable[[str], Any] = float,
) -> dict[str, Any]:
    """`text` decoded by `tomllib.loads` once it is at most `max_bytes` of UTF-8 whose brackets
    nest at most `max_depth` deep and whose keys have at most `max_depth` dots, and returned
    when its tables and arrays (dotted keys and headers included) nest at most `max_depth` deep
    too; `Undecodable` otherwise, and for any error of the decoder."""
    text = _as_text(text, "TOML", where)
    _check_size(text, "TOML", max_bytes, where)
    skeleton = toml_skeleton(text)
    if _deepest(_steps(skeleton), max_depth) > max_depth or _most_dots(skeleton) > max_depth:
        raise Undecodable(where, _too_deep("TOML", max_depth))
    try:
        document = tomllib.loads(text, parse_float=parse_float)
    except ValueError as error:  # TOMLDecodeError, or parse_float's refusal
        raise Undecodable(where, f"not TOML ({_one_line(str(error))})") from None
    except RecursionError:  # only when called with little stack left
        raise Undecodable(where, "TOML nested too deep to decode here") from None
    if _value_depth(document) > max_depth:
        raise Undecodable(where, _too_deep("TOML", max_depth))
    return document


__all__ = [
    "ANSWER_MAX_BYTES",
    "ANSWER_MAX_DEPTH",
    "OPERATOR_FILE_MAX_BYTES",
    "OPERATOR_FILE_MAX_DEPTH",
    "TOOL_ARGUMENTS_MAX_BYTES",
    "TOOL_ARGUMENTS_MAX_DEPTH",
    "Undecodable",
    "json_depth",
    "json_skeleton",
    "load_json",
    "load_toml",
    "toml_depth",
    "toml_skeleton",
]
