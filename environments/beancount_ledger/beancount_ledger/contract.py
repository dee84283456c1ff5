# ruff: noqa: E501  (model-facing prose)
"""The episode contract: limits, versions, the prompt, and the digest recorded on every rollout.

Every number a model is held to is defined in `limits`, stated in the prompt here and enters
the digest; changing any of them (or the tool schemas as the MCP server publishes them, or the
versions of the libraries that generate and carry those schemas, whose installed versions enter
the digest) changes `episode_digest()`. Three tool surfaces are served (`tools.SURFACES`): the six
tools with `SYSTEM_PROMPT`, correct_bank_line's with the prompts of rungs 1 to 4 (built from the options
of the view their user message shows, `VIEWS`), and book_correction's with rungs 5 to 12's (the view
alone, the ledger and the statement quoted above it, then the archive too, then the policy too, those
four files alone, then nothing quoted for one line booked wrongly and for three); one digest covers them
all (each surface's schemas and prompts). So does a harness choice that changes what the model is sent:
`episode_digest(replay_reasoning=False)` (prior turns' reasoning withheld from later requests)
digests differently from the default, which replays it and keeps the digest it always had.
"""

import hashlib
import json
import logging
from functools import lru_cache
from importlib.metadata import version

# The limits themselves live in `limits` (imported by the tools and the chat loop as well);
# they are re-exported here, where they are stated and digested.
from beancount_ledger.limits import (
    CALLS_PER_TURN,
    FILE_ENVELOPE,
    IDLE_TURNS,
    LEDGER_ENVELOPE,
    MAX_CHECK_COST,
    MAX_TURNS,
    OBSERVATION_BUDGET,
    REPLY_CAP,
    SLICE_LINES,
    TOKEN_CEILING,
)

GENERATOR_VERSION = 7
SCORER_CONTRACT = 6
EPISODE_CONTRACT = 17


def _episode_rules(writers: str) -> str:
    """The rules every prompt states, `writers` naming the tools that write the ledger."""
    return f"""Episode rules:
- At most {MAX_TURNS} turns. Tool calls made on turn {MAX_TURNS} are not executed, so submit by turn {MAX_TURNS - 1}.
- At most {TOKEN_CEILING:,} completion tokens in total, reasoning included; each request is capped at what is left.
- {IDLE_TURNS} consecutive replies without a tool call end the episode.
- At most {CALLS_PER_TURN} tool calls per turn are run; any more in the same turn get an error and are not run.
- The latest ledger accepted by {writers} is scored, whether or not you call submit. If you never write one, \
the score is 0.
- Every write is checked first and accepted only if the whole ledger loads in beancount with no errors (every \
amount in AUD, no price or cost, every transaction summing to exactly zero). A write that does not load writes \
nothing: the reply lists the errors, and the last ledger accepted stays in place and is the one scored.
- A write is also refused, and writes nothing, when the ledger uses the metadata key `filename` or `lineno` \
(beancount reserves them, and reports any key starting with `_` as an error), or would cost more than \
{MAX_CHECK_COST:,} units to check (at least twice what the month's corrected ledger costs); the refusal names \
the key or the cost.
- read_file returns ledger.beancount whole (once per revision); other files come in numbered \
{SLICE_LINES}-line slices. Tool replies count against an observation budget of {OBSERVATION_BUDGET:,} bytes."""


OPENING = "You are the bookkeeper of a small trading company."
"""The sentence every system prompt of this environment opens with (what marks its requests)."""

SYSTEM_PROMPT = f"""{OPENING} Your workspace holds eight files: \
the Beancount ledger, the bank statement, the chart of accounts, the customer and vendor registers, \
the prior-period archive, the accounting policy and a manifest. Use the tools to read them, find every \
discrepancy between the ledger and the bank statement, and write the corrected ledger with write_ledger, \
following policy.md exactly. Check it with run_beancount, then call submit.

{_episode_rules("write_ledger")}"""


def _append_system(quoted: int, view: bool = True, lines: int = 1) -> str:
    """The system prompt of the rungs served book_correction: `lines` statement lines booked wrongly
    (one, or three), the user message showing the side-by-side view (`view`), the first `quoted` files
    it is read from as given (`QUOTED`: none, the ledger and the statement, those and the archive, or all
    four), both, or neither (the model reads the files)."""
    quotes = f"; the user message quotes the first {_COUNTS[quoted]} as given" if quoted else ""
    if view:
        shown = "the user message lists them beside each line"
    elif quoted:
        shown = "the user message quotes the ledger and the statement"
    else:
        shown = "read_file returns ledger.beancount and bank_statement.csv"
    if lines == 1:
        which = "exactly one line of the bank statement is booked wrongly in the ledger: missing from it"
        find, call = "Find that line and correct it", "Call book_correction once, for the line booked wrongly"
    else:
        which = (
            f"exactly {_COUNTS[lines]} lines of the bank statement are booked wrongly in the ledger, each of "
            "them missing from it"
        )
        find, call = (
            "Find those lines and correct each of them",
            "Call book_correction once for each line booked wrongly",
        )
    return f"""{OPENING} This month {which}, booked at the wrong amount, booked twice, booked to the wrong account, or booked again \
although the prior period already holds it. {find}, following policy.md exactly.

The workspace files (read_file returns each by its name{quotes}):
- ledger.beancount: the books (the file the score reads);
- bank_statement.csv: the bank's lines, each with a `ref`, a date and an amount;
- archive_prior_period.csv: the prior month's invoices, bills and cheques, and their status;
- policy.md: how a correction must be recorded, and how the score is computed;
- accounts.csv: the only accounts you may use; customers.csv and vendors.csv: who pays and who is paid;
- manifest.md: this list, with sizes.

How to work:
1. For each statement line, find the ledger entries carrying `bank_ref: "<that line's ref>"` ({shown}) \
and compare them with the line (date, amount, accounts).
2. {call}: the line's ref, an amount, and the two accounts it \
moves between (the tool dates the transaction with the line's date). The correction is exactly the difference between what was booked and what should \
have been booked: a line missing from the ledger is booked as the line itself; a line booked twice is \
corrected by the opposite of one of its bookings. book_correction writes the transaction policy.md asks for \
and appends it to the ledger; write_ledger would replace the whole ledger instead.
3. Call submit.

Tools: read_file, book_correction, write_ledger, run_beancount, submit.

{_episode_rules("write_ledger or book_correction")}"""


_COUNTS = {2: "two", 3: "three", 4: "four"}
"""How the prompts write a count: of lines booked wrongly in a month with more than one, of files quoted."""


_BY_DESCRIPTION = """the account such a line settles, by its description: DEPOSIT (a customer paying) \
Assets:AccountsReceivable; EFT (a payment to a vendor) Liabilities:AccountsPayable; MERCHANT FEE or ACCOUNT FEE \
Expenses:BankFees; INTEREST PAID Income:Interest; TRANSFER TO SAVINGS Assets:Bank:Savings"""
_AS_SHOWN = "the account the line settles, which the user message shows beside it as (settles <account>)"


def _flagged_system(settles: bool = False, names: bool = False, amounts: bool = False) -> str:
    """The system prompt of a rung whose user message is the side-by-side view of a month with one line
    booked wrongly (`VIEWS`): with `amounts` the view marks a line booked at another amount, with
    `settles` it shows the account each line settles, with `names` it names the line to correct."""
    view = "the account it settles, " if settles else ""
    marked = " (and whether one entry books it at another amount)" if amounts else ""
    if names:
        find = "Take the line the user message names at its end: the one line not booked once at its amount."
    elif amounts:
        find = "Find the line not booked, booked twice, or booked once at another amount."
    else:
        find = (
            "Find the line not booked, booked twice, or booked once at another amount: for a line booked "
            "once, compare the amount its entry posts to Assets:Bank:Operating with the line's amount (the "
            "view does not mark the difference)."
        )
    return f"""{OPENING} This month exactly one line of the bank statement is booked wrongly in \
the ledger: no entry books it, two entries do, or one entry books it at another amount than the line's (a keying \
error). Every other line is booked once, at its amount, to the right accounts (no cheque from \
the prior period clears this month), so the line to correct is the one line not booked once at its amount.

The user message lists each statement line (ref, date, description, amount), {view}how many ledger entries carry \
its ref{marked}, and what they post. The workspace files behind it \
(read_file returns each by its name): ledger.beancount (the books, the file the score reads), \
bank_statement.csv, archive_prior_period.csv, policy.md (how a correction is recorded and scored, in full), \
accounts.csv (the only accounts you may use), customers.csv, vendors.csv and manifest.md.

How to work:
1. {find}
2. Call correct_bank_line once, for that line, in exactly this form (the tool dates the transaction with the \
line's date, posts `bank_amount` to Assets:Bank:Operating and the opposite to `account`):
   correct_bank_line(bank_ref="<the line's ref>", bank_amount="<A>", account="<B>")
   A is what the correction adds to the books' bank balance: the difference between what should have been \
booked and what was, that is the line's amount minus what the entries carrying its ref post to \
Assets:Bank:Operating. You may write A as that subtraction and the tool works it out to the cent, like \
bank_amount="1250.00 - 1205.00".
   - A line not booked is booked as the line itself: A is the line's amount exactly as the statement shows it \
(a deposit or interest positive; a payment, fee or transfer negative); B is \
{_AS_SHOWN if settles else _BY_DESCRIPTION}.
   - A line booked twice is corrected by reversing one of its two bookings: A is the line's amount with its \
sign reversed (a deposit booked twice gives a negative A, a payment booked twice a positive one); B is the \
account its bookings post opposite the bank.
   - A line booked once at another amount is corrected by the difference: A is the line's amount minus the \
amount its entry posts to Assets:Bank:Operating (a deposit of 1250.00 booked as 1205.00 gives \
bank_amount="1250.00 - 1205.00", that is 45.00; a payment of -830.00 booked as -380.00 gives \
bank_amount="-830.00 - (-380.00)", that is -450.00); B is the account its entry posts opposite the bank.
3. Call submit.

Score (policy.md states it in full): 0.2 when a new transaction carries the ref and the date of the line booked \
wrongly; plus 0.3 times the share of the accounts that line put wrong whose balance at the month's end is then \
exactly right; plus 0.5 when that transaction is exactly the correction; minus 0.1 for each transaction added \
for a line that was booked rightly and for each existing record changed or removed; never below 0. The books \
left as they are score 0.

Tools: read_file, correct_bank_line, write_ledger, run_beancount, submit.

{_episode_rules("write_ledger or correct_bank_line")}"""


def _flagged_user(settles: bool = False) -> str:
    """The user message template of such a rung: the side-by-side view (`statement_view`) as `matched`."""
    view = "the account it settles, " if settles else ""
    return (
        "Reconcile the books of {company} for {month}: one bank statement line is not booked, booked twice, "
        "or booked at another amount. "
        f"Each statement line, {view}how many ledger entries carry its ref, and what they post:\n\n"
        "{matched}\n\nBook its correction with correct_bank_line, then submit."
    )


VIEWS = {
    "named": {"settles": True, "names": True, "amounts": True},
    "settled": {"settles": True, "amounts": True},
    "flagged": {"amounts": True},
    "unmarked": {},
    "append": {},
    "pair": {},
    "archive": {},
    "quoted": {},
}
"""The side-by-side view's options (`statement_view.side_by_side`) by prompt name: the prompts of rungs 1
to 9 show the view; ``files``, ``read``, ``three`` and ``full`` do not."""

USER_PROMPT = "Reconcile the books of {company} for {month} and deliver the corrected ledger."
_APPEND_TASK = (
    "Reconcile the books of {company} for {month}: find the one bank statement line booked wrongly and "
    "book its correction with book_correction."
)
APPEND_USER_PROMPT = (
    _APPEND_TASK + " Each bank statement line beside the ledger entries carrying its ref:\n\n{matched}\n"
)
"""Rung 5's and rung 6's user message: the side-by-side view alone."""
QUOTED = ("ledger.beancount", "bank_statement.csv", "archive_prior_period.csv", "policy.md")
"""The files rung 9's and rung 10's user messages quote, as given; rung 7's quotes the first two, rung 8's
the first three."""
QUOTES = {"pair": QUOTED[:2], "archive": QUOTED[:3], "quoted": QUOTED, "files": QUOTED}
"""The files each prompt's user message quotes, by prompt name (the others quote none)."""
QUOTED_USER_PROMPT = (
    _APPEND_TASK + " The files as given:\n\n{files}\n"
    "===== each bank statement line beside the ledger entries carrying its ref =====\n{matched}\n"
)
"""Rung 7's to rung 9's user message: the files the prompt quotes (`QUOTES`) as given, then the
side-by-side view."""


FILES_USER_PROMPT = _APPEND_TASK + " The files as given:\n\n{files}"
"""Rung 10's user message: the files of `QUOTED` as given, without the view."""
_READ = " Read the ledger and the statement with read_file."
READ_USER_PROMPT = _APPEND_TASK + _READ
"""Rung 11's user message: the task alone; the files are read with read_file."""
THREE_USER_PROMPT = (
    "Reconcile the books of {company} for {month}: find the three bank statement lines booked wrongly and "
    "book the correction of each with book_correction." + _READ
)
"""Rung 12's user message: rung 11's for a month with three lines booked wrongly."""


def quoted_files(files: dict[str, str], prompt: str) -> str:
    """The files the prompts named `prompt` quote (`QUOTES`), each under a line naming it, as their
    user message quotes them ("" when they quote none)."""
    return "\n".join(
        f"===== {name} =====\n{files[name].rstrip(chr(10))}\n" for name in QUOTES.get(prompt, ())
    )


PROMPTS = {
    "full": (SYSTEM_PROMPT, USER_PROMPT),
    "append": (_append_system(quoted=0), APPEND_USER_PROMPT),
    "pair": (_append_system(quoted=len(QUOTES["pair"])), QUOTED_USER_PROMPT),
    "archive": (_append_system(quoted=len(QUOTES["archive"])), QUOTED_USER_PROMPT),
    "quoted": (_append_system(quoted=len(QUOTES["quoted"])), QUOTED_USER_PROMPT),
    "files": (_append_system(quoted=len(QUOTES["files"]), view=False), FILES_USER_PROMPT),
    "read": (_append_system(quoted=0, view=False), READ_USER_PROMPT),
    "three": (_append_system(quoted=0, view=False, lines=3), THREE_USER_PROMPT),
    **{
        name: (_flagged_system(**VIEWS[name]), _flagged_user(VIEWS[name].get("settles", False)))
        for name in ("named", "settled", "flagged", "unmarked")
    },
}
"""(system prompt, user prompt template) by name: a rung's ``prompt`` (`ladder.RUNGS`), ``full`` for every
world off the ladder's low rungs."""

LIMITS = {
    "max_turns": MAX_TURNS,
    "token_ceiling": TOKEN_CEILING,
    "idle_turns": IDLE_TURNS,
    "calls_per_turn": CALLS_PER_TURN,
    "ledger_envelope": LEDGER_ENVELOPE,
    "slice_lines": SLICE_LINES,
    "reply_cap": REPLY_CAP,
    "observation_budget": OBSERVATION_BUDGET,
    "file_envelope": FILE_ENVELOPE,
    "max_check_cost": MAX_CHECK_COST,
}
SCHEMA_LIBRARIES = ("verifiers", "mcp", "pydantic", "pydantic-core", "openai", "beancount", "google-re2")
"""Libraries that generate, carry or shape what the model sees; their installed versions enter the digest."""
VERSIONS = {
    "generator": GENERATOR_VERSION,
    "scorer_contract": SCORER_CONTRACT,
    "episode_contract": EPISODE_CONTRACT,
}


def envelope_problems(files: dict[str, str]) -> list[str]:
    """Why a world's public files break the observation contract (none: they fit)."""
    problems = []
    for name, text in files.items():
        size = len(text.encode())
        if name == "ledger.beancount":
            if size > LEDGER_ENVELOPE:
                problems.append(f"{name} is {size:,} bytes, over the {LEDGER_ENVELOPE:,}-byte envelope")
        elif size > FILE_ENVELOPE or text.count("\n") > SLICE_LINES:
            problems.append(f"{name} is {size:,} bytes / {text.count(chr(10))} lines, over one slice")
    return problems


@lru_cache(maxsize=4)
def tool_schemas(surface: str = "full") -> tuple[dict[str, object], ...]:
    """The tools of `surface` (`tools.SURFACES`) exactly as the MCP server publishes them: name,
    description, input schema (``full``: the six tools)."""
    from mcp.server.mcpserver import MCPServer

    from beancount_ledger.tools import LedgerToolsConfig, LedgerToolset
    from beancount_ledger.verifiers_internals import published_tools

    # Constructing an MCPServer configures logging (`logging.basicConfig` with a rich handler at
    # INFO on the root logger): in an env server that would format every HTTP request of every
    # episode. The listing needs none of it, so the root logger is left as it was.
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        server = MCPServer("beancount-ledger")
    finally:
        root.setLevel(level)
        root.handlers[:] = handlers
    LedgerToolset(LedgerToolsConfig(surface=surface)).register(server)
    # The synchronous listing behind `MCPServer.list_tools` (mcp's version is in the digest).
    return tuple(
        {"name": t.name, "description": t.description, "input_schema": t.parameters}
        for t in sorted(published_tools(server), key=lambda t: t.name)
    )


def _served_with(prompt: str) -> str:
    """The tool surface served beside the prompts named `prompt` (`ladder.RUNGS`; ``full`` off it)."""
    from beancount_ledger.ladder import RUNGS

    return next((rung["tools"] for rung in RUNGS.values() if rung["prompt"] == prompt), "full")


REPLAY_REASONING = True
"""The harness default: prior turns' reasoning fields go back to the model in later requests."""


def episode_digest(replay_reasoning: bool = REPLAY_REASONING) -> dict[str, object]:
    """The contract as recorded on a rollout: its SHA-256, the versions, the limits and the
    harness choices. A choice at its default leaves the digest as it was before the choice existed."""
    if not isinstance(replay_reasoning, bool):
        raise TypeError(f"replay_reasoning must be a bool, got {type(replay_reasoning).__name__}")
    libraries = {name: version(name) for name in SCHEMA_LIBRARIES}
    harness = {"replay_reasoning": replay_reasoning}
    body: dict[str, object] = {
        "versions": VERSIONS,
        "limits": LIMITS,
        "libraries": libraries,
        "tools": tool_schemas(),
        "system_prompt": SYSTEM_PROMPT,
        "user_prompt": USER_PROMPT,
        # The low rungs' prompts, each with the tools served beside it (since episode contract 6;
        # book_correction since 7, dated from the statement and rung 1's prompts since 8, the prompts
        # of the views with settled accounts and a named line since 9, the view alone for the
        # single-discrepancy month since 10, rungs 1 to 3 served correct_bank_line in its place
        # since 11, and their third kind, a line booked at another amount, since 12; the single-discrepancy
        # month's files quoted without the view, then read, and a month of three lines, since 14; the
        # ledger and the statement quoted above the view, since 15; those and the archive, since 16; the
        # view without its mark of a line booked at another amount, since 17).
        "surfaces": {
            name: {"tools": tool_schemas(surface), "system_prompt": system, "user_prompt": user}
            for name, (system, user) in PROMPTS.items()
            if (surface := _served_with(name)) != "full"
        },
    }
    if replay_reasoning != REPLAY_REASONING:
        body["harness"] = harness
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
    return {
        "digest": digest,
        "versions": VERSIONS,
        "limits": LIMITS,
        "libraries": libraries,
        "harness": harness,
    }


@lru_cache(maxsize=2)
def recorded_digest(replay_reasoning: bool = REPLAY_REASONING) -> str:
    """`episode_digest` as JSON, once per process and harness choice (it reads seven installed
    versions, about 3 ms); each trace records its own copy."""
    return json.dumps(episode_digest(replay_reasoning=replay_reasoning))
