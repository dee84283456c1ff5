# ruff: noqa: E501  (model-facing prose)
"""What the bookkeeper sees of a `World`: the eight public files, in beancount syntax and CSV.

`entry_text` writes one transaction (the golden ledger's corrections too, `answer.py`). Every
amount is printed with two decimals; ledger text is LF-only.
"""

from __future__ import annotations

import csv
import io

from beancount_ledger.world import ACCOUNTS, BANK, CHART, Entry, World

FILE_NAMES = (
    "ledger.beancount",
    "bank_statement.csv",
    "accounts.csv",
    "customers.csv",
    "vendors.csv",
    "archive_prior_period.csv",
    "policy.md",
    "manifest.md",
)
LEDGER = "ledger.beancount"
ALLOWED_OPTIONS = ("title", "operating_currency")
CURRENCY = "AUD"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def entry_text(entry: Entry) -> str:
    """One transaction in beancount syntax."""
    head = f"{entry.date} *"
    head += (
        f" {_quote(entry.payee)} {_quote(entry.narration)}" if entry.payee else f" {_quote(entry.narration)}"
    )
    lines = [head]
    lines += [f"  {key}: {_quote(value)}" for key, value in entry.meta]
    width = max(len(p.account) for p in entry.postings) + 2
    lines += [f"  {p.account:<{width}} {p.amount:>10.2f} {CURRENCY}" for p in entry.postings]
    return "\n".join(lines)


def ledger_text(world: World) -> str:
    """The ledger as booked: discrepancies included."""
    opened = world.start.replace(day=1)
    parts = [
        f'option "title" {_quote(world.company)}',
        f'option "operating_currency" "{CURRENCY}"',
        "",
        "\n".join(f"{opened} open {account} {CURRENCY}" for account in ACCOUNTS),
        "",
        entry_text(world.opening),
        *(entry_text(e) for e in world.booked),
    ]
    return "\n\n".join(p for p in parts if p != "").replace("\n\n\n", "\n\n") + "\n"


def _csv(header: list[str], rows: list[list[object]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def bank_statement(world: World) -> str:
    balance = world.bank_opening
    rows: list[list[object]] = [[world.start, "", "OPENING BALANCE", "", f"{balance:.2f}"]]
    for line in world.bank_lines:
        balance += line.amount
        rows.append([line.date, line.ref, line.description, f"{line.amount:.2f}", f"{balance:.2f}"])
    return _csv(["date", "ref", "description", "amount", "balance"], rows)


def accounts_csv() -> str:
    return _csv(["account", "type", "description"], [list(row) for row in CHART])


def parties_csv(world: World, kind: str) -> str:
    parties = world.customers if kind == "customer" else world.vendors
    column = "revenue_account" if kind == "customer" else "default_expense_account"
    return _csv(
        ["id", "name", "terms_days", column], [[p.pid, p.name, p.terms_days, p.account] for p in parties]
    )


def archive_csv(world: World) -> str:
    return _csv(
        ["date", "ref", "type", "party", "description", "amount", "status"],
        [
            [i.date, i.ref, i.kind, i.party, i.description, f"{i.amount:.2f}", i.status]
            for i in world.prior_items
        ],
    )


LOCATED_SCORE = "- Score = 0.2 x (share of discrepancies located"
"""How a policy that credits located discrepancies states its score (`World.located_credit`); the
scorer's key reads the policy for it."""


def score_rule(world: World) -> str:
    """The policy's statement of the score: the seed's rule, or at the low rungs the one that also
    credits a discrepancy located and each account it put wrong set right."""
    charges = (
        "minus 0.1 for each existing record changed or removed (a changed record that keeps its `bank_ref`,\n"
        "  or its date when it has no `bank_ref`, is charged once; otherwise its new version also counts as a\n"
        "  new transaction), each new transaction that does not correct a discrepancy (one without the `bank_ref`\n"
        "  of a statement line that needed correcting"
    )
    rest = (
        "each `pad` or other non-transaction directive added (except\n"
        "  `balance` and `note`), and each account opened that is not in `accounts.csv`; never below 0."
    )
    untouched = "a balance reached by a plug, an edit, a deletion or a `pad`\n  earns nothing"
    if not world.located_credit:
        return f"""- Score = 0.5 x (share of accounts in `accounts.csv` whose balance at {world.end} is exactly right and
  that no penalised change below touches: {untouched}) + 0.5 x (share of discrepancies corrected as described above),
  {charges}, or one of the entries carrying such a `bank_ref` that
  together do not net to its correction), {rest}"""
    return (
        f"{LOCATED_SCORE}: a new transaction dated with the `date` of the statement line it\n"
        "  concerns and carrying its `bank_ref`, whatever its amounts) + 0.3 x (share of the accounts whose balance\n"
        f"  at {world.end} the discrepancies put wrong that are exactly right and that no penalised change below\n"
        f"  touches: {untouched}) + 0.5 x (share of discrepancies corrected as described above),\n"
        f"  {charges}), {rest}\n"
        "  Entries carrying the `bank_ref` of a statement line that needed correcting are never charged, whatever\n"
        "  their amounts. Leaving the books as they are scores 0."
    )


def policy_md(world: World) -> str:
    month = f"{world.start:%B %Y}"
    # Hard worlds book a second copy of a payment without its bank_ref: the rule that dates and tags it.
    untagged = (
        "8. Every transaction of the month (other than the opening balances) that moves money through\n"
        f"   `{BANK}` carries the `bank_ref` of the statement line that shows it or, for a cheque not\n"
        "   yet presented, its `cheque` number. A second booking of a statement line that lacks its\n"
        "   `bank_ref` concerns the statement line of the transaction it repeats: its correction is dated\n"
        "   with that line's `date` and carries that line's `bank_ref`.\n"
        if world.hard
        else ""
    )
    # Most low rungs also offer a tool that appends one correction: their policy names both ways.
    delivered, accepted = (
        (
            "with `write_ledger` or, where the task\noffers a tool that books one correction, with that tool",
            "(written whole by `write_ledger`, or with a correction\n  appended by such a tool)",
        )
        if world.located_credit
        else ("with `write_ledger`", "by `write_ledger`")
    )
    return f"""# Accounting policy: {world.company}

## The job
Reconcile `{BANK}` for {month} ({world.start} to {world.end}) against `bank_statement.csv`,
correct the books, and deliver the corrected `ledger.beancount` {delivered}.

## How a correction is recorded
1. Never edit or delete an existing entry, directive or metadata line. Existing records stay byte-for-byte
   meaningful: same date, payee, narration, metadata and postings.
2. Each discrepancy is corrected by **its own new transaction**, appended to the ledger:
   - dated with the `date` of the bank statement line it concerns;
   - carrying the metadata line `bank_ref: "<ref>"` with that line's `ref` from the statement;
   - whose postings are exactly the difference between what was booked and what should have been booked
     (for example, reversing a duplicate posts the duplicate's amounts with the opposite sign).
   One correcting transaction per discrepancy; do not combine two discrepancies into one entry.
3. Use only the accounts in `accounts.csv`. Do not open new accounts.
4. Do not add `pad` entries, plug or balancing entries, `plugin`, `include` or `option` directives
   (only the existing `option "title"` and `option "operating_currency"` lines are allowed).
   `balance` assertions and comments may be added.
5. Customer receipts settle `Assets:AccountsReceivable`; vendor payments settle
   `Liabilities:AccountsPayable` (a bill was already booked to the vendor's expense account).
6. A cheque written in the prior period is already in the opening balances (see
   `archive_prior_period.csv`); when it clears this month it needs no new expense or payment entry.
   A cheque written this month that the bank has not yet paid is a timing difference, not an error.
7. Amounts are in {CURRENCY}, exact to the cent, and every transaction's postings sum to exactly zero
   (no prices, costs or residuals, however small).
{untagged}
## What is checked
- The ledger must load in beancount with no errors at all, every amount must be in {CURRENCY} with no
  price or cost, and every transaction must sum to exactly zero; otherwise the result scores 0. A ledger
  with a `plugin`, `include`, `document` or disallowed `option` directive is never loaded and scores 0.
{score_rule(world)}
- The latest ledger accepted {accepted} is the one scored, whether or not you call `submit`.
  If no ledger was ever written, the score is 0.
"""


def manifest_md(world: World, files: dict[str, str]) -> str:
    rows = "\n".join(
        f"| `{name}` | {len(text.encode())} | {text.count(chr(10))} |" for name, text in files.items()
    )
    return f"""# Workspace manifest: {world.company}, {world.start:%B %Y}

| file | bytes | lines |
|---|---|---|
{rows}
| `manifest.md` | (this file) | |

- `ledger.beancount`: the books as they stand (the file `write_ledger` replaces).
- `bank_statement.csv`: the bank's view of `{BANK}` for the month, with a running balance.
- `accounts.csv`: the chart of accounts; the only accounts that may be used.
- `customers.csv`, `vendors.csv`: counterparties, their payment terms and default accounts.
- `archive_prior_period.csv`: invoices, bills and cheques from the prior period and their status.
- `policy.md`: how corrections must be recorded and how the result is checked.
"""


def public_files(world: World) -> dict[str, str]:
    """The eight files of the workspace, by name, in `FILE_NAMES` order."""
    files = {
        LEDGER: ledger_text(world),
        "bank_statement.csv": bank_statement(world),
        "accounts.csv": accounts_csv(),
        "customers.csv": parties_csv(world, "customer"),
        "vendors.csv": parties_csv(world, "vendor"),
        "archive_prior_period.csv": archive_csv(world),
        "policy.md": policy_md(world),
    }
    files["manifest.md"] = manifest_md(world, files)
    return {name: files[name] for name in FILE_NAMES}
