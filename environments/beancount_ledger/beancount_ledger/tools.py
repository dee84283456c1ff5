"""The six tools, one per-task colocated toolset: ``python -m beancount_ledger.tools``.

The toolset runs in the rollout's own workspace (its working directory), where `Task.setup`
wrote the eight public files; concurrent rollouts never share one. The observation contract:

- read tools accept only the eight file names, never paths; symlinks, non-regular files and
  files over the envelope are refused;
- ``ledger.beancount`` is returned whole (LF-normalized), once per revision; a repeat read of
  the same revision gets a short receipt; other files come in numbered 200-line slices;
- every reply is capped at `REPLY_CAP` bytes and counted against the episode's observation
  budget; once spent, read tools answer with a short refusal (never a reward penalty);
- a bad argument returns an error message; the episode goes on.
"""

import hashlib
import os
import re
import stat
from pathlib import Path

import verifiers.v1 as vf

from beancount_ledger.contract import LEDGER_ENVELOPE, OBSERVATION_BUDGET, REPLY_CAP, SLICE_LINES
from beancount_ledger.render import FILE_NAMES, LEDGER
from beancount_ledger.scorer import refusal, unbalanced


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


def _load(text: str) -> tuple[list, list[str], dict]:
    from beancount import loader
    from beancount.parser import printer

    entries, errors, options = loader.load_string(text)
    problems = [printer.format_error(e).strip() for e in errors] or unbalanced(entries)
    return entries, problems, options


class LedgerToolset(vf.Toolset[vf.ToolsetConfig, LedgerState]):
    TOOL_PREFIX = None

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
    def list_files(self) -> str:
        """List the eight workspace files with their sizes in bytes and lines."""
        rows = []
        for name in FILE_NAMES:
            text, error = self._file(name)
            rows.append(error or f"{name}\t{len(text.encode())} bytes\t{text.count(chr(10))} lines")
        return self._reply("list_files", "\n".join(rows), read=True)

    @vf.tool
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
    def grep(self, pattern: str, name: str = "") -> str:
        """Search the workspace files (or the one named) for a case-insensitive regular expression;
        returns up to 100 matching lines as name:line: text."""
        if not isinstance(pattern, str) or not 0 < len(pattern) <= 200:
            return self._reply("grep", "error: pattern must be 1 to 200 characters")
        try:
            regex = re.compile(pattern, re.IGNORECASE)
        except re.error as e:
            return self._reply("grep", f"error: invalid regular expression: {e}")
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
    def run_beancount(self) -> str:
        """Check the current ledger.beancount with beancount: its errors, or the balance of every account."""
        text, error = self._file(LEDGER)
        if text is None:
            return self._reply("run_beancount", error)
        if (why := refusal(text)) is not None:
            return self._reply("run_beancount", f"refused: {why}")
        entries, errors, _ = _load(text)
        if errors:
            body = "\n\n".join(errors[:20])
            return self._reply("run_beancount", f"{len(errors)} error(s):\n{body}", read=True)
        from beancount.core import realization

        real = realization.realize(entries)
        rows = [
            f"{acc.account}  {acc.balance.get_currency_units('AUD').number:.2f} AUD"
            for acc in realization.iter_children(real)
            if acc.txn_postings
        ]
        return self._reply("run_beancount", "no errors. Balances:\n" + "\n".join(rows), read=True)

    @vf.tool
    def write_ledger(self, text: str) -> str:
        """Replace ledger.beancount with `text` (the whole ledger). The latest accepted ledger is scored."""
        if not isinstance(text, str):
            return self._reply("write_ledger", "error: text must be a string (the whole ledger)")
        text = text.replace("\r\n", "\n")
        if len(text.encode()) > LEDGER_ENVELOPE:
            return self._reply(
                "write_ledger", f"error: ledger over the {LEDGER_ENVELOPE}-byte envelope; not written"
            )
        if (why := refusal(text)) is not None:
            return self._reply("write_ledger", f"refused, not written: {why}")
        # Replace the file itself, never what a link at its place points to.
        Path(LEDGER).unlink(missing_ok=True)
        fd = os.open(LEDGER, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        state = self.state
        state.ledger = text
        state.revision += 1
        _, errors, _ = _load(text)
        status = (
            "beancount: no errors"
            if not errors
            else f"beancount: {len(errors)} error(s); run_beancount shows them"
        )
        return self._reply(
            "write_ledger", f"written: revision {state.revision}, {len(text.encode())} bytes; {status}"
        )

    @vf.tool
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
    LedgerToolset.run()
