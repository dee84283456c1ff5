"""The six tools, one toolset shared by every rollout of an env worker: ``python -m beancount_ledger.tools``.

`LedgerTaskset.toolsets` declares it taskset-scoped, so verifiers starts one server per env
worker (`Env.serving`) and every rollout of that worker calls it. Each call carries its
rollout's signed state coordinates; verifiers pulls that rollout's `LedgerState` for the call
and binds it to a context variable (`_with_state`), so concurrent calls from different
rollouts each see their own state and nothing else. The server pulls a rollout's state from
the host on its first call and then works from the state it last pushed for it (the host writes
it only in `Task.setup`, before any call; a failed push forgets it), so a call costs one state
exchange with the host instead of two. The eight public files travel in that
state (`LedgerTask.setup` seeds `LedgerState.files` from the task data) and the tools serve
them from it: a tool never opens, lists or writes a file.

The observation contract:

- read tools accept only the eight file names, never paths, and serve exactly the task's eight
  files, with the latest ledger accepted (by `write_ledger` or an appending tool) in place of the
  given one; with no file system behind a name, a path, a symlink or a device can never be reached
  by any tool; a text over the envelope is refused;
- ``ledger.beancount`` is returned whole (LF-normalized), once per revision; a repeat read of
  the same revision gets a short receipt; other files come in numbered 200-line slices;
- every reply is capped at `REPLY_CAP` bytes and counted against the episode's observation
  budget; once spent, read tools answer with a short refusal (never a reward penalty);
- a bad argument returns an error message, and so does any failure inside a tool; the episode
  goes on and the server stays up;
- nothing the model writes is loaded here: `write_ledger` and `run_beancount` ask a sandbox
  worker through the same gate the scorer uses, on the rollout's own `isolated.Lane` (one check
  in flight per rollout, a CPU budget per episode, answers remembered by the ledger's digest,
  a bounded wait for a worker); a check the lane declines (busy, budget spent) is an error
  message and changes nothing; the served ledger *is* the scored one (`LedgerState.ledger`), so
  what the tools show and what is scored can never differ, and a refused write changes neither;
- a write is accepted only when the ledger loads exactly as the scorer loads it (the gate, no
  beancount error, the policy's load rule): a ledger with errors is refused with the errors
  quoted, so the ledger kept (and scored) is always one that loaded, or none;
- `grep` matches with RE2, in time linear in the text, whatever the pattern;
- every call runs in a thread of the server's own (`TOOL_THREADS`, so that calls waiting on the
  sandbox never hold up another rollout's reads) with its rollout's state, never on the
  server's event loop.

`Task.setup` also writes the eight files into the rollout's workspace, as the ledger was given,
for harnesses that read files themselves; the tools neither read nor update that copy.

The server drops the evaluator secret from its environment when it starts: it needs it for
nothing (worlds are minted by the taskset, never here).
"""

import contextlib
import functools
import hashlib
import os
from collections.abc import Callable, Iterator
from typing import Literal

import re2
import verifiers.v1 as vf

from beancount_ledger import isolated
from beancount_ledger.correction import bank_entry, correcting_entry
from beancount_ledger.keys import SECRET_ENV
from beancount_ledger.limits import LEDGER_ENVELOPE, OBSERVATION_BUDGET, REPLY_CAP, SLICE_LINES
from beancount_ledger.render import FILE_NAMES, LEDGER

# The shared server lives in `shared_server`; the names it had here stay importable from here.
from beancount_ledger.shared_server import (  # noqa: F401
    KNOWN_ROUTES,
    TOOL_THREADS,
    SharedToolset,
)
from beancount_ledger.statement import statement_dates
from beancount_ledger.verifiers_internals import call_state, discover_decorated

SHOWN_ERRORS = 5
"""beancount errors quoted in a refused write's reply (run_beancount shows a ledger's all)."""
_GREP_OPTIONS = re2.Options()
_GREP_OPTIONS.case_sensitive = False
_GREP_OPTIONS.max_mem = 8 << 20


class LedgerState(vf.State):
    """Per-rollout state shared with the host (the state channel)."""

    files: dict[str, str] = {}
    """The rollout's eight public files, by name, as the task gave them (seeded by `LedgerTask.setup`)."""
    ledger: str | None = None
    """The latest ledger accepted by write_ledger (None: never written); served in place of the
    given ledger.beancount once set."""
    revision: int = 0
    full_reads: list[int] = []
    submitted: bool = False
    observation_bytes: int = 0
    budget_hits: int = 0
    tool_calls: dict[str, int] = {}


@contextlib.contextmanager
def rollout(state: LedgerState) -> Iterator[LedgerState]:
    """Direct tool calls inside the block act as one rollout's, on `state`: the binding the server
    makes for every call with the state it pulled (for tests and benchmarks that call the tools
    in-process)."""
    token = call_state.set(state)
    try:
        yield state
    finally:
        call_state.reset(token)


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
    if checked.declined:
        return f"error: {checked.declined}"
    if checked.failure:
        return f"beancount could not process it ({checked.failure})"
    if checked.refused:
        return f"refused: {checked.refused}"
    if checked.errors:
        return f"beancount: {checked.error_count} error(s); run_beancount shows them"
    return "beancount: no errors"


SURFACES: dict[str, tuple[str, ...]] = {
    "full": ("list_files", "read_file", "grep", "run_beancount", "write_ledger", "submit"),
    "append": ("read_file", "run_beancount", "write_ledger", "book_correction", "submit"),
    "bank": ("read_file", "run_beancount", "write_ledger", "correct_bank_line", "submit"),
}
"""The tools a server publishes, by surface: ``full`` (the six tools, every rung above the twelfth,
the shipped and hard worlds), ``append`` (rungs 5 to 12: the files are named in the prompt, so no
listing or search; ``book_correction`` appends one correcting transaction from its parts, so the
model neither copies the ledger nor writes Beancount syntax) and ``bank`` (rungs 1 to 4: the same
with ``correct_bank_line`` in place of ``book_correction``, one correction that moves the bank by
an amount against one other account, the shape of every correction those rungs ask for). Every
surface reaches everything the score counts."""


class LedgerToolsConfig(vf.SharedToolsetConfig):
    """The shared server's placement (verifiers') and the surface it publishes, which the taskset
    derives from its selectors' rung (`ladder.surface`), never a knob of its own."""

    surface: Literal["full", "append", "bank"] = "full"


def surface_of(config: object) -> str:
    """The surface a toolset config publishes (``full`` for verifiers' own configs)."""
    return getattr(config, "surface", "full")


class LedgerToolset(SharedToolset[LedgerToolsConfig, LedgerState]):
    TOOL_PREFIX = None

    def register(self, mcp) -> None:
        """verifiers' registration, each tool declared unstructured: its reply is the text block
        alone. A tool returning ``str`` would otherwise publish an output schema, send every reply
        twice (as text and as ``structuredContent``) and have the client compile and run a JSON
        Schema validator on it; the model is shown the text block either way, and the published
        names, descriptions and input schemas (the episode digest's) are the same. Only the tools
        of the config's surface (`SURFACES`) are published."""
        published = SURFACES[surface_of(self.config)]
        for fn in discover_decorated(self, "tool"):
            if (getattr(fn, "tool_name", None) or fn.__name__) not in published:
                continue
            mcp.add_tool(
                self._with_state(fn),
                name=getattr(fn, "tool_name", None) or fn.__name__,
                description=(fn.__doc__ or "").strip() or None,
                structured_output=False,
            )

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

    def _file(self, name: str) -> tuple[str | None, str]:
        """(text, '') for one of the eight files, as this rollout serves it; else (None, error)."""
        if name not in FILE_NAMES:
            return (
                None,
                f"error: unknown file {name!r}; use one of: {', '.join(FILE_NAMES)} (names, not paths)",
            )
        state = self.state
        text = state.ledger if name == LEDGER and state.ledger is not None else state.files.get(name)
        if text is None:
            return None, f"error: {name} is missing from the workspace"
        size = len(text.encode())
        if size > LEDGER_ENVELOPE * 2:
            return None, f"error: {name} is {size} bytes, over the envelope; refused"
        return text.replace("\r\n", "\n"), ""

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
        checked = self._lane().check(text)
        if checked.declined or checked.failure or checked.refused:
            return self._reply("run_beancount", _describe(checked))
        if checked.errors:
            body = "\n\n".join(checked.errors)
            return self._reply("run_beancount", f"{checked.error_count} error(s):\n{body}", read=True)
        rows = [f"{account}  {amount} AUD" for account, amount in checked.balances]
        return self._reply("run_beancount", "no errors. Balances:\n" + "\n".join(rows), read=True)

    @vf.tool
    @_guarded
    def write_ledger(self, text: str) -> str:
        """Replace ledger.beancount with `text` (the whole ledger), only if it loads in beancount with no
        errors; otherwise nothing is written and the errors are returned. The latest accepted ledger is
        scored."""
        if not isinstance(text, str) or not text.strip():
            return self._reply(
                "write_ledger", "error: text must be the whole ledger (not empty); not written"
            )
        text = text.replace("\r\n", "\n")
        if len(text.encode()) > LEDGER_ENVELOPE:
            return self._reply(
                "write_ledger", f"error: ledger over the {LEDGER_ENVELOPE}-byte envelope; not written"
            )
        return self._accept("write_ledger", text)

    def _accept(self, tool: str, text: str, note: str = "") -> str:
        """Make `text` the rollout's ledger if it loads as the scorer would load it; else say why
        not (with `note` after the errors) and keep the ledger as it was (a refused write never
        replaces one that loaded)."""
        checked = self._lane().check(text)
        if checked.declined:
            return self._reply(tool, f"{_describe(checked)} (not written)")
        if checked.failure or checked.refused:
            return self._reply(tool, f"not written: {_describe(checked)}; {self._kept()}")
        if checked.errors:
            shown = "\n\n".join(checked.errors[:SHOWN_ERRORS])
            more = (
                f"\n[{checked.error_count - SHOWN_ERRORS} more not shown]"
                if checked.error_count > SHOWN_ERRORS
                else ""
            )
            return self._reply(
                tool,
                f"not written: beancount reports {checked.error_count} error(s), and a ledger that does "
                f"not load would score 0; {self._kept()}. Fix these and write again:\n{shown}{more}{note}",
            )
        # One assignment replaces the served and the scored ledger alike (they are one field).
        state = self.state
        state.ledger = text
        state.revision += 1
        return self._reply(
            tool, f"written: revision {state.revision}, {len(text.encode())} bytes; {_describe(checked)}"
        )

    def _kept(self) -> str:
        """What stays in place after a refused write."""
        state = self.state
        if state.ledger is None:
            return (
                "nothing has been written yet (ledger.beancount is still the ledger as given, "
                "and an episode that writes nothing scores 0)"
            )
        return f"revision {state.revision}, the last ledger written, stays in place and is the one scored"

    @vf.tool
    @_guarded
    def book_correction(self, bank_ref: str, account: str, amount: str, other_account: str) -> str:
        """Append one correcting transaction to ledger.beancount for the bank statement line whose ref
        is `bank_ref` (like "BS2403-007"): dated with that line's date, tagged bank_ref: "`bank_ref`",
        posting `amount` (AUD, like "18.00" or "-18.00") to `account` and the same amount with the
        opposite sign to `other_account`. It is written only if the whole ledger then loads in
        beancount with no errors; otherwise nothing is written and the errors are returned. The
        latest accepted ledger is scored."""
        return self._append(
            "book_correction",
            bank_ref,
            lambda day: correcting_entry(day, bank_ref, account, amount, other_account),
        )

    @vf.tool
    @_guarded
    def correct_bank_line(self, bank_ref: str, bank_amount: str, account: str) -> str:
        """Append one correcting transaction to ledger.beancount for the bank statement line whose ref
        is `bank_ref` (like "BS2403-007"): dated with that line's date, tagged bank_ref: "`bank_ref`",
        posting `bank_amount` (AUD, like "18.00" or "-18.00": what the correction adds to the books'
        bank balance; or the subtraction that gives it, like "1250.00 - 1205.00", worked out to the
        cent) to Assets:Bank:Operating and the same amount with the opposite sign to `account`. It is
        written only if the whole ledger then loads in beancount with no errors; otherwise nothing is
        written and the errors are returned. The latest accepted ledger is scored."""
        return self._append(
            "correct_bank_line", bank_ref, lambda day: bank_entry(day, bank_ref, bank_amount, account)
        )

    def _append(self, tool: str, bank_ref: object, entry: Callable[[str], str]) -> str:
        """Append `entry(the date of the statement line bank_ref)` to the rollout's ledger, accepted
        as any write is; a ref the statement lacks, or a bad part (`correction`), writes nothing."""
        statement, error = self._file("bank_statement.csv")
        if statement is None:
            return self._reply(tool, error)
        dates = statement_dates(statement)
        if not isinstance(bank_ref, str) or bank_ref.strip() not in dates:
            return self._reply(
                tool,
                "error: bank_ref must be the ref of a line of bank_statement.csv, like "
                f"{next(iter(dates), 'BS2403-007')}; not written",
            )
        try:
            text = entry(dates[bank_ref.strip()])
        except ValueError as e:
            return self._reply(tool, f"error: {e}; not written")
        current, error = self._file(LEDGER)
        if current is None:
            return self._reply(tool, error)
        whole = f"{current.rstrip(chr(10))}\n\n{text}\n"
        if len(whole.encode()) > LEDGER_ENVELOPE:
            return self._reply(
                tool, f"error: the ledger would be over the {LEDGER_ENVELOPE}-byte envelope; not written"
            )
        return self._accept(tool, whole, f"\nappended:\n{text}")

    @vf.tool
    @_guarded
    def submit(self) -> str:
        """Submit: ends the episode. The latest ledger accepted (by any tool that writes it) is scored."""
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
