"""Reading the files of a run directory without trusting them.

Run directories are written by verifiers, then copied, shared and edited by hand, so
`summarize`, `compare` and the report read them as untrusted input:

- a file is opened only when it is a regular file: a symlink is followed, and its target must
  be one too (a device such as ``/dev/zero``, a fifo, a socket or a directory is refused before
  a byte is read), and it is read up to `MAX_FILE_BYTES`, each line up to `MAX_LINE_BYTES`;
- each line of ``traces.jsonl`` is UTF-8 JSON, an object, nested at most `MAX_DEPTH` deep,
  and matches `EpisodeRecord`: every field a reader uses has the type verifiers writes, and
  every reward and metric is a finite number within `MAX_MAGNITUDE`.

Anything else raises `RunFileError`, whose message names the file, the line and the field. A
file that does not exist raises FileNotFoundError, as opening it would.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from piv_core.parsing.bounded_decode import Undecodable, load_json

MAX_FILE_BYTES = 512 * 2**20
"""The largest run file read (512 MiB)."""
MAX_LINE_BYTES = 64 * 2**20
"""The longest line of ``traces.jsonl`` read (64 MiB: one episode record)."""
MAX_DEPTH = 64
"""The deepest nesting of objects and arrays a record may have (verifiers writes about 12)."""
MAX_MAGNITUDE = 1e12
"""The largest absolute value a reward's score or weight, or a metric, may have."""
MAX_COUNT = 2**53
"""The largest token count read (beyond it a count is no longer exact as a float)."""
SHOWN = 60
"""Characters of an offending value quoted in an error."""


class RunFileError(ValueError):
    """A run file that cannot be read as one; the message names the file (and line, and field)."""


Number = Annotated[float, Field(ge=-MAX_MAGNITUDE, le=MAX_MAGNITUDE)]
Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]


class _Record(BaseModel):
    """Only the fields the readers use are declared; each must have its declared type exactly
    (no string read as a number, no bool as a count) and a float must be finite."""

    model_config = ConfigDict(strict=True, extra="allow", allow_inf_nan=False, frozen=True)


class RewardRecord(_Record):
    score: Number
    weight: Number = 1.0


class UsageRecord(_Record):
    completion_tokens: Count | None = None


class CallRecord(_Record):
    model: str | None = None
    usage: UsageRecord | None = None


class FunctionRecord(_Record):
    name: str | None = None
    arguments: Any = None


class ToolCallRecord(_Record):
    function: FunctionRecord | None = None
    name: str | None = None
    arguments: Any = None


class MessageRecord(_Record):
    role: str | None = None
    content: Any = None
    tool_calls: list[ToolCallRecord] | None = None


class NodeRecord(_Record):
    message: MessageRecord | None = None


class TaskRecord(_Record):
    key: str | None = None
    data: dict[str, Any] | None = None


class StageTimeoutsRecord(_Record):
    rollout: Number | None = None
    agent: Number | None = None


class AgentConfigRecord(_Record):
    timeout: StageTimeoutsRecord | None = None


class AgentRecord(_Record):
    config: AgentConfigRecord | None = None


class TraceRecord(_Record):
    id: str | None = None
    task: TaskRecord | None = None
    agent: AgentRecord | None = None
    rewards: dict[str, RewardRecord | None] | None = None
    metrics: dict[str, Number | None] | None = None
    info: dict[str, Any] | None = None
    stop_condition: str | None = None
    ok: bool = True
    is_timeout: bool = False
    errors: list[Any] | None = None
    calls: list[CallRecord | None] | None = None
    nodes: list[NodeRecord] | None = None
    num_output_tokens: Count | None = None


class EpisodeRecord(_Record):
    """One line of ``traces.jsonl``: an episode and the traces of its rollouts."""

    id: str | None = None
    task: TaskRecord | None = None
    ok: bool = False
    is_timeout: bool = False
    errors: list[Any] | None = None
    traces: list[TraceRecord] | None = None
    num_output_tokens: Count | None = None


class ValidateSummaryRecord(_Record):
    """vf-validate's ``summary.json``: how many tasks, and how many had each outcome."""

    total: Count = 0
    outcomes: dict[str, Count] = {}


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a fifo"),
    (stat.S_ISSOCK, "a socket"),
)


def describe(error: BaseException) -> str:
    """One line for an error met reading or writing a run's files: the file, then what is wrong."""
    if isinstance(error, OSError) and error.filename is not None:
        return f"{error.filename}: {error.strerror or error}"
    return str(error)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _named(path: Path) -> str:
    """`path`, and where it leads when it is a symlink."""
    return f"{path} (a link to {os.path.realpath(path)})" if path.is_symlink() else str(path)


def open_regular(path: Path, limit: int = MAX_FILE_BYTES):  # noqa: ANN201 - a binary file object
    """`path` opened for reading in binary, when it is a regular file of at most `limit` bytes.

    The checks are made on the opened descriptor, so a file swapped after them is still the file
    checked; opening is non-blocking, so a fifo is refused instead of waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise
    except OSError as error:
        raise RunFileError(f"{_named(path)}: cannot be opened ({error.strerror or error})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RunFileError(f"{_named(path)}: is {_kind(info.st_mode)}, not a regular file")
        if info.st_size > limit:
            raise RunFileError(f"{_named(path)}: is {info.st_size:,} bytes, over the {limit:,}-byte limit")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_text(path: Path, limit: int = MAX_FILE_BYTES) -> str:
    """The whole of regular file `path` as UTF-8 text (`RunFileError` otherwise)."""
    with open_regular(path, limit) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise RunFileError(f"{path}: grew past the {limit:,}-byte limit while it was read")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise RunFileError(f"{path}: is not UTF-8 text (byte {error.start})") from None


def parse_json(text: str, where: str) -> Any:
    """`text` as JSON nested at most `MAX_DEPTH` deep, refused unread when deeper; `where` names
    it in the error."""
    try:
        return load_json(text, max_depth=MAX_DEPTH, max_bytes=MAX_FILE_BYTES, where=where)
    except Undecodable as error:
        raise RunFileError(str(error)) from None


def _location(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "the record"


def validated(value: Any, schema: type[BaseModel], where: str) -> Any:
    """`value` (as parsed) when it matches `schema`; `RunFileError` naming the first bad field."""
    if not isinstance(value, dict):
        raise RunFileError(f"{where}: a record must be a JSON object, not {type(value).__name__}")
    try:
        schema.model_validate(value)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        shown = repr(first.get("input"))
        shown = shown if len(shown) <= SHOWN else shown[:SHOWN] + "…"
        message = first["msg"].split(" or instance of ")[0]  # "a valid dictionary", not the class
        raise RunFileError(f"{where}: {_location(first['loc'])}: {message} (got {shown})") from None
    return value


def iter_records(path: Path, schema: type[BaseModel] = EpisodeRecord) -> Iterator[dict[str, Any]]:
    """Each non-blank line of JSONL file `path`, parsed and checked against `schema`."""
    read = 0
    with open_regular(path) as handle:
        for number, line in enumerate(iter(lambda: handle.readline(MAX_LINE_BYTES + 1), b""), 1):
            where = f"{path}:{number}"
            read += len(line)
            if read > MAX_FILE_BYTES:
                raise RunFileError(f"{path}: grew past the {MAX_FILE_BYTES:,}-byte limit while it was read")
            body = line.rstrip(b"\r\n")
            if len(body) > MAX_LINE_BYTES:
                raise RunFileError(f"{where}: the line is over the {MAX_LINE_BYTES:,}-byte limit")
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError as error:
                raise RunFileError(f"{where}: not UTF-8 text (byte {error.start} of the line)") from None
            if text.strip():
                yield validated(parse_json(text, where), schema, where)


__all__ = [
    "EpisodeRecord",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_LINE_BYTES",
    "MAX_MAGNITUDE",
    "RunFileError",
    "TraceRecord",
    "describe",
    "ValidateSummaryRecord",
    "iter_records",
    "open_regular",
    "parse_json",
    "read_text",
    "validated",
]
