"""The world's model: the chart of accounts, exact money, and the records one month is made of.

A `World` holds the chart of accounts, the counterparties, the items carried from the prior
period, the month's true events (each a correctly posted `Entry`, with the `BankLine` the bank
shows for it when it touches the operating account) and the planted discrepancies (`Plant`s).
Everything the bookkeeper and the scorer see is a projection of it. `net` is the one helper that
sums postings by account.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

CENT = Decimal("0.01")
BANK = "Assets:Bank:Operating"
SAVINGS = "Assets:Bank:Savings"
AR = "Assets:AccountsReceivable"
AP = "Liabilities:AccountsPayable"
EQUITY = "Equity:Opening-Balances"
SALES = "Income:Sales"
INTEREST = "Income:Interest"
FEES = "Expenses:BankFees"

CHART: tuple[tuple[str, str, str], ...] = (
    (BANK, "asset", "Operating bank account (the statement account)"),
    (SAVINGS, "asset", "Savings account at the same bank"),
    (AR, "asset", "Amounts owed by customers"),
    (AP, "liability", "Amounts owed to vendors"),
    (EQUITY, "equity", "Balances carried from the prior period"),
    (SALES, "income", "Sales of goods"),
    (INTEREST, "income", "Interest paid by the bank"),
    (FEES, "expense", "Bank charges"),
    ("Expenses:Purchases", "expense", "Goods bought for resale"),
    ("Expenses:Freight", "expense", "Freight and courier"),
    ("Expenses:Rent", "expense", "Warehouse rent"),
    ("Expenses:Utilities", "expense", "Power, water and telephone"),
    ("Expenses:OfficeSupplies", "expense", "Stationery and small equipment"),
    ("Expenses:Insurance", "expense", "Business insurance"),
)
ACCOUNTS: tuple[str, ...] = tuple(name for name, _, _ in CHART)
SUSPENSE = "Equity:Reconciliation-Suspense"
"""Not in the chart: the account the suspense tricks (a baseline, attack families) open."""
_CHART_ORDER = {account: i for i, account in enumerate(ACCOUNTS)}

PLANT_KINDS = ("missing", "wrong_amount", "duplicate", "wrong_account", "prior_period")
HARD_KINDS = (*PLANT_KINDS, "transposed_cents", "untagged_duplicate", "receipt_to_sales")


def money(value: str | int | Decimal) -> Decimal:
    """`value` as an exact cent amount."""
    return Decimal(value).quantize(CENT)


@dataclass(frozen=True)
class Posting:
    account: str
    amount: Decimal


def net(postings: Iterable[Posting]) -> tuple[Posting, ...]:
    """Postings summed by account, zeros dropped, in chart order (accounts outside it last)."""
    totals: dict[str, Decimal] = defaultdict(lambda: money(0))
    for p in postings:
        totals[p.account] += p.amount
    ordered = sorted(totals.items(), key=lambda kv: _CHART_ORDER.get(kv[0], 99))
    return tuple(Posting(a, v) for a, v in ordered if v)


def minus(postings: Iterable[Posting]) -> list[Posting]:
    """`postings` with every amount's sign reversed."""
    return [Posting(p.account, -p.amount) for p in postings]


@dataclass(frozen=True)
class Entry:
    """A transaction as it appears (or should appear) in the ledger."""

    date: date
    payee: str
    narration: str
    postings: tuple[Posting, ...]
    meta: tuple[tuple[str, str], ...] = ()

    @property
    def bank_ref(self) -> str | None:
        return dict(self.meta).get("bank_ref")


@dataclass(frozen=True)
class BankLine:
    date: date
    ref: str
    description: str
    amount: Decimal
    """Signed: money into the operating account is positive."""


@dataclass(frozen=True)
class Party:
    pid: str
    name: str
    terms_days: int
    account: str
    """Customers: the revenue account; vendors: the default expense account."""


@dataclass(frozen=True)
class PriorItem:
    """One line of the prior-period archive."""

    date: date
    ref: str
    kind: str
    party: str
    description: str
    amount: Decimal
    status: str


@dataclass(frozen=True)
class Event:
    """A true event of the month: its correct booking and the bank's view of it (if any)."""

    entry: Entry | None
    bank: BankLine | None


@dataclass(frozen=True)
class Plant:
    """A planted discrepancy and the correcting postings that resolve it."""

    kind: str
    ref: str
    date: date
    description: str
    fix: tuple[Posting, ...]


@dataclass(frozen=True)
class World:
    world_id: str
    company: str
    start: date
    end: date
    customers: tuple[Party, ...]
    vendors: tuple[Party, ...]
    prior_items: tuple[PriorItem, ...]
    opening: Entry
    events: tuple[Event, ...]
    booked: tuple[Entry, ...]
    """The month's entries as the bookkeeper booked them (discrepancies included), in order."""
    plants: tuple[Plant, ...]
    bank_opening: Decimal
    hard: bool = False
    """Its policy states the rule for untagged bank entries (the hard profile's subtler kinds)."""
    located_credit: bool = False
    """Its policy states the score that credits located discrepancies (`Profile.located_credit`)."""

    @property
    def bank_lines(self) -> list[BankLine]:
        return sorted((e.bank for e in self.events if e.bank), key=lambda b: (b.date, b.ref))

    def expected_balances(self) -> dict[str, Decimal]:
        """Every chart account's true balance at month end."""
        totals: dict[str, Decimal] = defaultdict(lambda: money(0))
        for entry in [self.opening, *(e.entry for e in self.events if e.entry)]:
            for p in entry.postings:
                totals[p.account] += p.amount
        return {account: totals[account] for account in ACCOUNTS}
