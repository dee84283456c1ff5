"""The six tools, one per-task colocated toolset: ``python -m beancount_ledger.tools``.

The toolset runs in the rollout's own workspace (its working directory), where `Task.setup`
wrote the eight public files; concurrent rollouts never share one. The observation contract:

- read tools accept only the eight file names, never paths; symlinks, non-regular files and
  files over the envelope are refused;
- ``ledger.beancount`` is returned whole (LF-normalized), once per revision; a repeat read of
  the same revision gets a short receipt; other files come in numbered 200-line slices;
- every reply is capped at `REPLY_CAP` bytes and counted against the episode's observation
  budget; once spent, read tools answer with a short refusal (never a reward penalty);
- a bad argument returns an error message, and so does any failure inside a tool; the episode
  goes on and the server stays up;
- nothing the model writes is loaded here: `write_ledger` and `run_beancount` ask a sandbox
  worker (`isolated.check`) through the same gate the scorer uses, and `write_ledger` changes
  the file on disk and the scored state together or not at all;
- `grep` matches with RE2, in time linear in the text, whatever the pattern.

The server drops the evaluator secret from its environment when it starts: it needs it for
nothing (worlds are minted by the taskset, never here).
"""

import asyncio
import functools
import hashlib
import os
import stat
from pathlib import Path

import re2
import verifiers.v1 as vf

from beancount_ledger import isolated
from beancount_ledger.contract import LEDGER_ENVELOPE, OBSERVATION_BUDGET, REPLY_CAP, SLICE_LINES
from beancount_ledger.keys import SECRET_ENV
from beancount_ledger.render import FILE_NAMES, LEDGER

_GREP_OPTIONS = re2.Options()
_GREP_OPTIONS.case_sensitive = False
_GREP_OPTIONS.max_mem = 8 << 20
_DRAFT = f".{LEDGER}.draft"


class LedgerState(vf.State):
    """Per-rollout state shared with the host (the state channel)."""

    ledger: str | None = None
    """The latest ledger accepted by write_ledger (None: never written)."""
    revision: int = 0
    full_reads: list[int] = []
    submitted: bool = False
    observation_bytes: int = 0
    budget_hits: int = 0
    tool_calls: dict[str, int] = {}


def _cap(text: str) -> str:
    data = text.encode()
    if len(data) <= REPLY_CAP:
        return text
    return data[: REPLY_CAP - 64].decode(errors="ignore") + f"\n[reply truncated at {REPLY_CAP} bytes]"


def _guarded(tool):
    """A tool whose unforeseen failure is an error message to the model, never a dead server."""

    @functools.wraps(tool)
    def call(self, *args, **kwargs):
        try:
            return tool(self, *args, **kwargs)
        except Exception as e:
            return self._reply(
                tool.__name__, f"error: {tool.__name__} failed ({type(e).__name__}); try again"
            )

    return call


def _describe(checked: isolated.Checked) -> str:
    """What beancount says about a ledger, in one line."""
    if checked.failure:
        return f"beancount could not process it ({checked.failure})"
    if checked.refused:
        return f"refused: {checked.refused}"
    if checked.errors:
        return f"beancount: {checked.error_count} error(s); run_beancount shows them"
    return "beancount: no errors"


class LedgerToolset(vf.Toolset[vf.ToolsetConfig, LedgerState]):
    TOOL_PREFIX = None

    def _with_state(self, fn):
        """Every call runs in a worker thread (with the call's state), never on the server's event loop."""

        @functools.wraps(fn)
        async def offloaded(*args, **kwargs):
            return await asyncio.to_thread(fn, *args, **kwargs)

        return super()._with_state(offloaded)

    def _reply(self, tool: str, text: str, *, read: bool = False) -> str:
        state = self.state
        state.tool_calls = {**state.tool_calls, tool: state.tool_calls.get(tool, 0) + 1}
        text = _cap(text)
        size = len(text.encode())
        if read and state.observation_bytes + size > OBSERVATION_BUDGET:
            state.budget_hits += 1
            text = (
                f"error: the observation budget ({OBSERVATION_BUDGET} bytes) is spent; "
                "write_ledger and submit still work."
            )
            size = len(text.encode())
        state.observation_bytes += size
        return text

    @staticmethod
    def _file(name: str) -> tuple[str | None, str]:
        """(text, '') for a declared, regular, in-envelope file; else (None, error)."""
        if name not in FILE_NAMES:
            return (
                None,
                f"error: unknown file {name!r}; use one of: {', '.join(FILE_NAMES)} (names, not paths)",
            )
        try:
            info = os.lstat(name)
        except OSError:
            return None, f"error: {name} is missing from the workspace"
        if not stat.S_ISREG(info.st_mode):
            return None, f"error: {name} is not a regular file; refused"
        if info.st_size > LEDGER_ENVELOPE * 2:
            return None, f"error: {name} is {info.st_size} bytes, over the envelope; refused"
        return Path(name).read_bytes().decode(errors="replace").replace("\r\n", "\n"), ""

    @vf.tool
    @_guarded
    def list_files(self) -> str:
        """List the eight workspace files with their sizes in bytes and lines."""
        rows = []
        for name in FILE_NAMES:
            text, error = self._file(name)
            rows.append(error or f"{name}\t{len(text.encode())} bytes\t{text.count(chr(10))} lines")
        return self._reply("list_files", "\n".join(rows), read=True)

    @vf.tool
    @_guarded
    def read_file(self, name: str, slice: int = 1) -> str:
        """Read a workspace file by name. ledger.beancount comes whole (once per revision); other
        files come in numbered 200-line slices: slice=1 is lines 1-200, slice=2 lines 201-400, ..."""
        text, error = self._file(str(name))
        if text is None:
            return self._reply("read_file", error)
        if name == LEDGER:
            state = self.state
            if len(text.encode()) > LEDGER_ENVELOPE:
                return self._reply("read_file", f"error: ledger is over the {LEDGER_ENVELOPE}-byte envelope")
            digest = hashlib.sha256(text.encode()).hexdigest()[:16]
            if state.revision in state.full_reads:
                return self._reply(
                    "read_file",
                    (
                        f"receipt: revision {state.revision} of {LEDGER} ({len(text.encode())} bytes, sha256 "
                        f"{digest}) was already returned in full; it is unchanged. "
                        "Use grep to look something up."
                    ),
                )
            state.full_reads = [*state.full_reads, state.revision]
            return self._reply(
                "read_file", f"{LEDGER} revision {state.revision} (sha256 {digest})\n{text}", read=True
            )
        lines = text.splitlines()
        total = max(1, -(-len(lines) // SLICE_LINES))
        if not isinstance(slice, int) or not 1 <= slice <= total:
            return self._reply("read_file", f"error: slice must be an integer from 1 to {total} for {name}")
        first = (slice - 1) * SLICE_LINES
        body = "\n".join(
            f"{first + i + 1:>5}  {line}" for i, line in enumerate(lines[first : first + SLICE_LINES])
        )
        return self._reply("read_file", f"{name} slice {slice} of {total}\n{body}", read=True)

    @vf.tool
    @_guarded
    def grep(self, pattern: str, name: str = "") -> str:
        """Search the workspace files (or the one named) for a case-insensitive regular expression
        in RE2 syntax (no backreferences or lookaround); returns up to 100 matching lines as
        name:line: text."""
        if not isinstance(pattern, str) or not 0 < len(pattern) <= 200:
            return self._reply("grep", "error: pattern must be 1 to 200 characters")
        try:
            regex = re2.compile(pattern, _GREP_OPTIONS)
        except Exception as e:
            return self._reply("grep", f"error: invalid regular expression (RE2 syntax): {e}")
        names = [name] if name else list(FILE_NAMES)
        hits: list[str] = []
        for file in names:
            text, error = self._file(file)
            if text is None:
                return self._reply("grep", error)
            hits += [
                f"{file}:{n}: {line}" for n, line in enumerate(text.splitlines(), 1) if regex.search(line)
            ]
        shown = hits[:100]
        more = f"\n[{len(hits) - 100} more matches not shown]" if len(hits) > 100 else ""
        return self._reply("grep", ("\n".join(shown) or "no matches") + more, read=True)

    @vf.tool
    @_guarded
    def run_beancount(self) -> str:
        """Check the current ledger.beancount with beancount: its errors, or the balance of every account."""
        text, error = self._file(LEDGER)
        if text is None:
            return self._reply("run_beancount", error)
        checked = isolated.check(text)
        if checked.failure or checked.refused:
            return self._reply("run_beancount", _describe(checked))
        if checked.errors:
            body = "\n\n".join(checked.errors)
            return self._reply("run_beancount", f"{checked.error_count} error(s):\n{body}", read=True)
        rows = [f"{account}  {amount} AUD" for account, amount in checked.balances]
        return self._reply("run_beancount", "no errors. Balances:\n" + "\n".join(rows), read=True)

    @vf.tool
    @_guarded
    def write_ledger(self, text: str) -> str:
        """Replace ledger.beancount with `text` (the whole ledger). The latest accepted ledger is scored."""
        if not isinstance(text, str):
            return self._reply("write_ledger", "error: text must be a string (the whole ledger)")
        text = text.replace("\r\n", "\n")
        if len(text.encode()) > LEDGER_ENVELOPE:
            return self._reply(
                "write_ledger", f"error: ledger over the {LEDGER_ENVELOPE}-byte envelope; not written"
            )
        checked = isolated.check(text)
        if checked.failure or checked.refused:
            return self._reply("write_ledger", f"not written: {_describe(checked)}")
        # The file and the scored state change together: a complete draft first, then one rename
        # (which replaces a link at the ledger's place, never what it points to).
        Path(_DRAFT).unlink(missing_ok=True)
        try:
            fd = os.open(_DRAFT, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(_DRAFT, LEDGER)
        except OSError as e:
            Path(_DRAFT).unlink(missing_ok=True)
            return self._reply("write_ledger", f"error: not written ({e.strerror})")
        state = self.state
        state.ledger = text
        state.revision += 1
        return self._reply(
            "write_ledger",
            f"written: revision {state.revision}, {len(text.encode())} bytes; {_describe(checked)}",
        )

    @vf.tool
    @_guarded
    def submit(self) -> str:
        """Submit: ends the episode. The latest ledger accepted by write_ledger is scored."""
        state = self.state
        state.submitted = True
        note = (
            f"revision {state.revision}"
            if state.ledger is not None
            else "nothing was written; the score is 0"
        )
        return self._reply("submit", f"submitted ({note})")


if __name__ == "__main__":
    os.environ.pop(SECRET_ENV, None)
    LedgerToolset.run()
