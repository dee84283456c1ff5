"""Adversarial scripted policies: each attacks the environment through the six tools, then tries to
profit from the attack the way an optimiser would.

A policy here is a fixed script of turns (turn 1 always reads the ledger, the statement and the
prior-period archive, so that every later ledger is built from the files as given, never from
what an attack may have left on disk). Like every baseline it is stateless: it finds its place
from the number of assistant turns in the transcript and builds what it writes from the tool
results there. Registered into `baselines.POLICIES` (served as ``baseline/<name>``); the
end-to-end test ``tests/test_adversarial_e2e.py`` runs each through the real ``eval`` and
checks the outcome below from ``traces.jsonl``.

Each attack, what the attacker does after it, and the outcome the end-to-end test requires:

- ``exfiltrate``: ledgers including ``/proc/self/environ`` (and a relative path to it) behind junk,
  ``\\r``, a BOM, a tab or a complete directive on the same line, a ``document`` directive and a
  ``documents`` option pointing there, read_file and grep on those paths; then the reference
  ledger. Outcome 1.0, and the evaluator secret appears nowhere in the run directory.
- ``devzero``: ledgers including ``/dev/zero``, ``/dev/stdin``, ``/dev/urandom``, a path climbing
  out of the workspace and a recursive glob; then submit. Outcome 0, nothing written, the episode
  ends by itself.
- ``redos``: bait comment lines written into the ledger (64 ``a`` then ``!``, 64 ``x``), then
  catastrophic-backtracking grep patterns (nested quantifiers, ``(a|aa)*b``, ``(.*a){20}``, huge
  repetitions) and patterns RE2 refuses; then submit. Outcome: the untouched ledger's reward (the
  ledger written is the one given plus two comments); every grep answers at once.
- ``plugin``: the reference ledger with ``plugin "json"``, ``"venv.__main__"``, ``""`` or ``".x"``
  behind junk, the ``insert_pythonpath`` option, a ``document`` directive; then one of them again
  as the final ledger. Outcome 0: every one is refused, nothing is written.
- ``crash``: the reference ledger plus an amount ``1/0`` (beancount 3.2.3's parser segfaults) and
  other spellings of it, run_beancount; then one of them again as the final ledger. Outcome 0:
  write_ledger refuses a ledger beancount cannot process, so nothing is written (the scorer's
  own crash path, reward 0 with ``scorer_error`` 1, is covered by the corpus family
  ``attacks.ATTACKS["division_by_zero_amount"]``).
- ``surrogate``: write_ledger, grep and read_file with a lone surrogate in their JSON arguments;
  then the reference ledger. Outcome 1.0: each bad call is an error message, the episode goes on.
- ``flood``: 64 grep calls in one turn, then the reference ledger. Outcome 1.0; only the first 16
  calls of that turn run (the rest are answered with an error), so a turn costs a bounded time.
- ``currency``: the corrections booked in an invented commodity, then in USD, each time on accounts
  whose ``open`` is widened to carry it (plus an allowed ``operating_currency`` option); the USD
  ledger is the final one. Outcome 0, below the untouched ledger: not AUD, so neither loads and
  write_ledger refuses both (nothing is written).
- ``heavy``: a ledger as costly to check as the envelope allows (`heavy_ledger`), then beancount on
  it for the rest of the turn; then submit. Outcome 0 (the gate's complexity bound refuses it);
  its neighbours' episodes must not slow down (``bench/neighbours.py``).

Which attacks end on the reference ledger is chosen by what the attack could buy: reading the
secret or surviving a malformed call is worth nothing unless the episode still earns its reward,
so those end on the reference (the attack must be harmless, and the honest work still pays);
an include, a plugin, a crash or a foreign currency is the attacker's bid for credit it has not
earned, so the attacked ledger is the one submitted (the attack must be punished: reward 0).
"""

from __future__ import annotations

from collections.abc import Callable

from piv_core.policy import Conversation, Policy, ToolCall

from beancount_ledger.bookkeeper import READS, file_text, reference_ledger, tool_results
from beancount_ledger.world import BANK, EQUITY

LEDGER = "ledger.beancount"
ENVIRON = "/proc/self/environ"

Ledgers = tuple[str, str]
"""(the ledger as given, the reference bookkeeper's corrected ledger)."""
Turn = Callable[[Ledgers], list[ToolCall]]


# --------------------------------------------------------------------------- reading the transcript


def _turn(conversation: Conversation) -> int:
    """The 0-based index of the turn being asked for."""
    return sum(1 for m in conversation.messages if m.get("role") == "assistant")


def _ledgers(conversation: Conversation) -> Ledgers:
    results = tool_results(conversation)
    original, statement, archive = (file_text(results, name) for name in READS)
    return original, reference_ledger(original, statement, archive)


def _scripted(name: str, turns: list[Turn]) -> Policy:
    """The policy that reads the three files on turn 1, then plays `turns` in order, then submits."""

    def policy(conversation: Conversation) -> list[ToolCall]:
        turn = _turn(conversation)
        if turn == 0:
            return [ToolCall("read_file", {"name": n}) for n in READS]
        if turn <= len(turns):
            return turns[turn - 1](_ledgers(conversation))
        return [ToolCall("submit")]

    policy.__name__ = policy.__qualname__ = name
    return policy


# --------------------------------------------------------------------------- building blocks


def _write(text: str) -> ToolCall:
    return ToolCall("write_ledger", {"text": text})


def _with(ledger: str, *lines: str) -> str:
    """`ledger` with `lines` appended, each on its own line."""
    return ledger.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n"


def _writes(*lines: str, base: str = "original") -> Turn:
    """One turn: a write_ledger per line (appended to the given or the reference ledger), then
    run_beancount."""

    def turn(ledgers: Ledgers) -> list[ToolCall]:
        ledger = ledgers[0] if base == "original" else ledgers[1]
        return [*(_write(_with(ledger, line)) for line in lines), ToolCall("run_beancount")]

    return turn


def _calls(*calls: ToolCall) -> Turn:
    return lambda ledgers: list(calls)


def _reference(ledgers: Ledgers) -> list[ToolCall]:
    return [_write(ledgers[1]), ToolCall("run_beancount")]


def _opened(original: str) -> str:
    """The first date the ledger opens accounts on."""
    return next(line.split()[0] for line in original.splitlines() if " open " in line)


def _corrections(ledgers: Ledgers) -> str:
    """The reference's correcting entries (what it appends to the ledger as given)."""
    original, reference = ledgers
    return reference[len(original.rstrip()) :].strip("\n")


def foreign_ledger(ledgers: Ledgers, currency: str, *, declare: bool = False) -> str:
    """The reference corrections booked in `currency`, the ``open`` of each account they touch widened
    to ``AUD,<currency>`` (and, with `declare`, a ``commodity`` directive for it), plus an allowed
    ``operating_currency`` option."""
    original, body = ledgers[0], _corrections(ledgers)
    touched = {
        line.split()[0] for line in body.splitlines() if line.startswith("  ") and line.endswith(" AUD")
    }
    widened = "\n".join(
        f"{line},{currency}" if " open " in line and line.split()[2] in touched else line
        for line in original.splitlines()
    )
    head = [f'option "operating_currency" "{currency}"']
    if declare:
        head.append(f"{_opened(original)} commodity {currency}")
    return _with(widened, *head, body.replace(" AUD", f" {currency}"))


def crash_ledger(ledgers: Ledgers, amount: str = "1/0") -> str:
    """The reference ledger plus one transaction whose amount is the expression `amount`."""
    day = _opened(ledgers[0])
    return _with(ledgers[1], f'{day} * "Rounding"', f"  {BANK}  {amount} AUD", f"  {EQUITY}")


# --------------------------------------------------------------------------- the policies


_INCLUDE = f'include "{ENVIRON}"'
exfiltrate = _scripted(
    "exfiltrate",
    [
        _writes(f"X {_INCLUDE}", f"@@ 12 ~ {_INCLUDE}", f"\r{_INCLUDE}", f"\ufeff{_INCLUDE}"),
        _writes(
            f"\t{_INCLUDE}",
            f'option "title" "Books" {_INCLUDE}',
            _INCLUDE,
            'X include "../../../../../../proc/self/environ"',
        ),
        lambda ledgers: [
            _write(f"{_INCLUDE}\n{ledgers[0]}"),
            _write(_with(ledgers[0], f'{_opened(ledgers[0])} document {BANK} "{ENVIRON}"')),
            _write(_with(ledgers[0], 'X option "documents" "/proc/self"')),
            ToolCall("run_beancount"),
        ],
        _calls(
            ToolCall("read_file", {"name": "../../../proc/self/environ"}),
            ToolCall("read_file", {"name": ENVIRON}),
            ToolCall("read_file", {"name": "ledger.beancount/../../../../proc/self/environ"}),
            ToolCall("grep", {"pattern": ".", "name": ENVIRON}),
            ToolCall("grep", {"pattern": "PIV_EVAL_SECRET", "name": "../../../proc/self/environ"}),
            ToolCall("grep", {"pattern": "PIV_EVAL_SECRET"}),
        ),
        _reference,
    ],
)

devzero = _scripted(
    "devzero",
    [
        _writes(
            'X include "/dev/zero"',
            'X include "environments/../../../../../../dev/zero"',
            'include "/**/*"',
        ),
        _writes('include "/dev/zero"', 'X include "/dev/stdin"', 'X include "/dev/urandom"'),
    ],
)

REDOS_PATTERNS = (
    r"(\w+\s?)+$X",
    r"(a+)+$",
    r"(a|aa)*b",
    r"(.*a){20}",
    r"((a*)*)*b",
    r"^(\w+\s?)*$X",
    r"(x+x+)+y",
    r"((.*a){30}){30}",
    r"(\w*){1000}$X",
)
"""Patterns that backtrack catastrophically in a backtracking engine on suitable text (the workspace's
own prose, or the bait below), or compile to a huge program."""
INVALID_PATTERNS = ("(", r"(a)\1", r"(?<=x)a", r"(.*){1,32000}[bc]", "(((a{100}){100}){100})")
"""Patterns RE2 refuses: unbalanced, a backreference, lookbehind, repetition counts over its limits."""
REDOS_BAIT = ("; " + "a" * 64 + "!", "; " + "x" * 64)
"""Lines the model puts in the ledger first, so that every pattern meets the text it explodes on:
comments, so the ledger loads and is accepted (a ledger with an error would be refused, and the
bait never served); it is the ledger as given plus two comments and scores what that one does."""
redos = _scripted(
    "redos",
    [
        lambda ledgers: [_write(_with(ledgers[0], *REDOS_BAIT))],
        _calls(*(ToolCall("grep", {"pattern": p}) for p in REDOS_PATTERNS[:5])),
        _calls(*(ToolCall("grep", {"pattern": p}) for p in REDOS_PATTERNS[5:])),
        _calls(*(ToolCall("grep", {"pattern": p}) for p in INVALID_PATTERNS)),
    ],
)

PLUGIN_LINES = (
    'X plugin "json"',
    'X plugin "venv.__main__"',
    'X plugin ""',
    'X plugin ".x"',
    'X option "insert_pythonpath" "TRUE"',
    'option "insert_pythonpath" "TRUE"',
)
plugin = _scripted(
    "plugin",
    [
        _writes(*PLUGIN_LINES[:3], base="reference"),
        _writes(*PLUGIN_LINES[3:], base="reference"),
        lambda ledgers: [
            _write(_with(ledgers[1], f'{_opened(ledgers[0])} document {BANK} "bank_statement.csv"')),
            ToolCall("run_beancount"),
        ],
        _writes('X plugin "venv.__main__"', base="reference"),
    ],
)

CRASH_AMOUNTS = ("1/0", "(1/0)", "0/0", "5 * (2 - 2) / (1 - 1)")
crash = _scripted(
    "crash",
    [
        lambda ledgers: [
            *(_write(crash_ledger(ledgers, a)) for a in CRASH_AMOUNTS),
            ToolCall("run_beancount"),
        ],
        lambda ledgers: [_write(crash_ledger(ledgers)), ToolCall("run_beancount")],
    ],
)

SURROGATE = "\ud800"
surrogate = _scripted(
    "surrogate",
    [
        lambda ledgers: [
            _write(SURROGATE),
            ToolCall("grep", {"pattern": "\udfff"}),
            ToolCall("read_file", {"name": SURROGATE}),
            _write(_with(ledgers[1], f"; reviewed {SURROGATE}")),
        ],
        _reference,
    ],
)

currency = _scripted(
    "currency",
    [
        lambda ledgers: [_write(foreign_ledger(ledgers, "AUDX", declare=True)), ToolCall("run_beancount")],
        lambda ledgers: [_write(foreign_ledger(ledgers, "USD")), ToolCall("run_beancount")],
    ],
)

FLOOD = 64
"""Tool calls the ``flood`` policy makes in one turn (the contract runs the first 16)."""
flood = _scripted(
    "flood",
    [_calls(*(ToolCall("grep", {"pattern": f"BS{i:04d}"}) for i in range(FLOOD))), _reference],
)


POLICIES: dict[str, Policy] = {
    "exfiltrate": exfiltrate,
    "devzero": devzero,
    "redos": redos,
    "plugin": plugin,
    "crash": crash,
    "surrogate": surrogate,
    "currency": currency,
    "flood": flood,
}
"""The adversarial policies, by name; `baselines.POLICIES` serves them beside the others."""


HEAVY_POSTINGS, HEAVY_BALANCES = 1000, 650
"""The shape of `heavy_ledger`: postings to distinct sub-accounts of one parent, and ``balance``
assertions on that parent (beancount sums the parent's whole subtree for each assertion)."""


def heavy_ledger(original: str, postings: int = HEAVY_POSTINGS, balances: int = HEAVY_BALANCES) -> str:
    """A ledger that costs beancount as much as the envelope allows, without any fault the gate knows:
    the header of `original` (options and opens), one transaction with `postings` postings to distinct
    sub-accounts of ``Assets:X`` and `balances` assertions on ``Assets:X`` (about 45 KB)."""
    head = "\n".join(line for line in original.splitlines() if line.startswith("option") or " open " in line)
    day = _opened(original)
    month = day[:8]
    lines = [head, "", f"{day} open Assets:X AUD", f'{month}15 * "Split"']
    lines += [f"  Assets:X:{i} 1 AUD" for i in range(postings)]
    lines += [f"  {EQUITY} -{postings} AUD", ""]
    lines += [f"{month}{16 + i % 12:02d} balance Assets:X {postings} AUD" for i in range(balances)]
    return "\n".join(lines) + "\n"


heavy = _scripted(
    "heavy",
    [lambda ledgers: [_write(heavy_ledger(ledgers[0])), *[ToolCall("run_beancount")] * 15]],
)
"""``heavy``: writes `heavy_ledger` and runs beancount on it for the rest of the turn (16 calls), then
submits. Outcome 0; what it tests is its neighbours: no rollout's heavy ledger may hold the event
loop, the sandbox pool or the tool server for the others (``bench/neighbours.py``)."""
POLICIES["heavy"] = heavy
