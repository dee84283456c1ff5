"""The world graph: one trading company's month, the single source of truth.

A `World` holds the chart of accounts, the counterparties, the items carried from the prior
period, the month's true events (each a correctly posted `Entry`, with the `BankLine` the bank
shows for it when it touches the operating account) and the planted discrepancies (`Plant`s).
What the bookkeeper actually booked, the public files, the golden ledger and the expected
balances are all projections of it (`render.py`); nothing else is consulted.

A generated world is a pure function of its integer seed, profile (standard or hard) and range of
years (`generate`); the shipped task `bank_recon_001` is the hand-authored world returned by
`bank_recon_001()`. Standard worlds plant one of each of `PLANT_KINDS`; hard worlds are longer and
plant one of each of `HARD_KINDS`, beside decoys that are correct as booked.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, timedelta
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

PLANT_KINDS = ("missing", "wrong_amount", "duplicate", "wrong_account", "prior_period")
HARD_KINDS = (*PLANT_KINDS, "transposed_cents", "untagged_duplicate", "receipt_to_sales")


def money(value: str | int | Decimal) -> Decimal:
    """`value` as an exact cent amount."""
    return Decimal(value).quantize(CENT)


@dataclass(frozen=True)
class Posting:
    account: str
    amount: Decimal


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
    """Generated with the hard profile (its policy states the rule for untagged bank entries)."""

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


def _net(postings: list[Posting]) -> tuple[Posting, ...]:
    """Postings summed by account, zeros dropped, in chart order."""
    totals: dict[str, Decimal] = defaultdict(lambda: money(0))
    for p in postings:
        totals[p.account] += p.amount
    order = {a: i for i, a in enumerate(ACCOUNTS)}
    return tuple(Posting(a, v) for a, v in sorted(totals.items(), key=lambda kv: order.get(kv[0], 99)) if v)


def _minus(postings: tuple[Posting, ...]) -> list[Posting]:
    return [Posting(p.account, -p.amount) for p in postings]


def apply_plants(
    events: list[Event], plants: list[tuple[str, int, object]]
) -> tuple[tuple[Entry, ...], tuple[Plant, ...]]:
    """Book `events` with the planted discrepancies; return the booked entries and the plants.

    Each plant is (kind, event index, argument): ``missing`` drops the event's entry,
    ``wrong_amount`` and ``transposed_cents`` book it at the amount given, ``duplicate`` books it
    twice, ``untagged_duplicate`` books it again the number of days given later without its
    ``bank_ref``, ``wrong_account`` and ``receipt_to_sales`` post its settlement leg (payables or
    receivables) to the account given, and ``prior_period`` (the event is a bank line with no entry:
    a prior-period cheque clearing) books it again as a payment to the vendor named by the argument."""
    booked: list[tuple[date, int, Entry]] = []
    out: list[Plant] = []
    by_index = {index: (kind, arg) for kind, index, arg in plants}
    for index, event in enumerate(events):
        kind, arg = by_index.get(index, (None, None))
        true = event.entry
        if kind is None:
            if true is not None:
                booked.append((true.date, index, true))
            continue
        assert event.bank is not None, f"plant {kind} needs a bank line"
        bank = event.bank
        if kind == "missing":
            assert true is not None
            wrong: list[Entry] = []
            fix = _net(list(true.postings))
            text = f"bank line {bank.ref} ({bank.description}) is not in the ledger"
        elif kind in ("wrong_amount", "transposed_cents"):
            assert true is not None and isinstance(arg, Decimal)
            amount = abs(bank.amount)
            scale = lambda v, to=arg: to if v > 0 else -to  # noqa: E731
            bad = Entry(
                true.date,
                true.payee,
                true.narration,
                tuple(Posting(p.account, scale(p.amount)) for p in true.postings),
                true.meta,
            )
            wrong = [bad]
            fix = _net([*true.postings, *_minus(bad.postings)])
            text = f"bank line {bank.ref} was booked as {arg} instead of {amount}"
        elif kind == "duplicate":
            assert true is not None
            wrong = [true, true]
            fix = _net(_minus(true.postings))
            text = f"bank line {bank.ref} was booked twice"
        elif kind == "untagged_duplicate":
            assert true is not None and isinstance(arg, int)
            copy = Entry(
                true.date + timedelta(days=arg),
                true.payee,
                true.narration,
                true.postings,
                tuple((k, v) for k, v in true.meta if k != "bank_ref"),
            )
            wrong = [true, copy]
            fix = _net(_minus(copy.postings))
            text = f"bank line {bank.ref} was booked again on {copy.date} without its bank_ref"
        elif kind in ("wrong_account", "receipt_to_sales"):
            assert true is not None and isinstance(arg, str)
            leg = next(p.account for p in true.postings if p.account in (AR, AP))
            bad = Entry(
                true.date,
                true.payee,
                true.narration,
                tuple(Posting(arg if p.account == leg else p.account, p.amount) for p in true.postings),
                true.meta,
            )
            wrong = [bad]
            fix = _net([*true.postings, *_minus(bad.postings)])
            text = f"bank line {bank.ref} was posted to {arg} instead of {leg}"
        elif kind == "prior_period":
            assert true is None and isinstance(arg, str)
            amount = -bank.amount
            bad = Entry(
                bank.date,
                arg,
                f"Payment {bank.description}",
                (Posting(AP, amount), Posting(BANK, -amount)),
                (("bank_ref", bank.ref),),
            )
            wrong = [bad]
            fix = _net(_minus(bad.postings))
            text = f"bank line {bank.ref} clears a prior-period cheque that was booked again"
        else:
            raise ValueError(f"unknown plant kind {kind!r}; expected one of {HARD_KINDS}")
        booked.extend((e.date, index, e) for e in wrong)
        out.append(Plant(kind, bank.ref, bank.date, text, fix))
    booked.sort(key=lambda t: (t[0], t[1]))
    out.sort(key=lambda p: (p.date, p.ref))
    return tuple(e for _, _, e in booked), tuple(out)


# --------------------------------------------------------------------------- generation

COMPANIES = (
    "Harbour Trading Pty Ltd",
    "Copperleaf Wholesale",
    "Northgate Imports",
    "Bluegum Supply Co",
    "Tidewater Merchants",
    "Redfern Goods Pty Ltd",
    "Saltbush Traders",
    "Ironbark Distribution",
)
CUSTOMER_NAMES = (
    "Acacia Cafe",
    "Baxter Hardware",
    "Coral Bay Resort",
    "Dunmore Bakery",
    "Eastside Florist",
    "Fernhill Grocers",
    "Gallery Kitchen",
    "Highfield School",
    "Inlet Marine",
    "Juniper Deli",
)
VENDORS = (
    ("Pacific Freight Lines", "Expenses:Freight"),
    ("Kestrel Properties", "Expenses:Rent"),
    ("Metro Energy", "Expenses:Utilities"),
    ("Paperworks Office", "Expenses:OfficeSupplies"),
    ("Summit Insurance", "Expenses:Insurance"),
    ("Orchard Produce Wholesale", "Expenses:Purchases"),
    ("Lakeside Packaging", "Expenses:Purchases"),
)


def _amount(rng: random.Random, lo: int, hi: int) -> Decimal:
    return money(Decimal(rng.randint(lo * 100, hi * 100)) / 100)


def _transposed(amount: Decimal) -> Decimal:
    """A plausible keying error: two adjacent digits swapped, else 9.00 too much."""
    digits = f"{amount:.2f}".replace(".", "")
    for i in range(len(digits) - 3, -1, -1):
        if digits[i] != digits[i + 1]:
            swapped = digits[:i] + digits[i + 1] + digits[i] + digits[i + 2 :]
            value = money(Decimal(swapped) / 100)
            if value != amount and value > 0:
                return value
    return amount + money(9)


def _cents_swapped(amount: Decimal) -> Decimal:
    """`amount` with its two cents digits swapped (the same amount when they are equal)."""
    text = f"{amount:.2f}"
    return money(text[:-2] + text[-1] + text[-2])


# Per profile: ranges of customers, vendors, invoices, bills, receipts and payments this month.
SIZES = {
    False: ((4, 6), (4, 6), (11, 16), (9, 13), (9, 13), (8, 12)),
    True: ((5, 7), (5, 7), (17, 21), (13, 16), (14, 17), (13, 16)),
}


def generate(
    seed: int, *, hard: bool = False, years: tuple[int, int] = (2023, 2025), world_id: str | None = None
) -> World:
    """The world of integer `seed`, its period in a year of `years` (inclusive): identical in every
    process (string-seeded RNG). `world_id` (default ``dev:<seed>``) only labels it; it is never
    rendered. ``hard`` gives a longer month with the eight `HARD_KINDS` of discrepancy and decoys."""
    first_year, last_year = years
    if first_year > last_year:
        raise ValueError(f"years must be (first, last) with first <= last, not {years!r}")
    # The standard profile over the default years keeps the stream of generator version 2.
    standard = not hard and (first_year, last_year) == (2023, 2025)
    profile = "" if standard else f"/{'hard' if hard else 'standard'}/{first_year}-{last_year}"
    rng = random.Random(f"beancount-ledger/world/{seed}{profile}")
    n_customers, n_vendors, n_invoices, n_bills, n_receipts, n_payments = SIZES[hard]
    year = rng.randint(first_year, last_year)
    month = rng.randint(1, 12)
    start = date(year, month, 1)
    end = (start + timedelta(days=32)).replace(day=1) - timedelta(days=1)
    prior_end = start - timedelta(days=1)
    company = rng.choice(COMPANIES)
    customers = tuple(
        Party(f"C{i + 1:02d}", name, rng.choice((14, 30)), SALES)
        for i, name in enumerate(rng.sample(CUSTOMER_NAMES, rng.randint(*n_customers)))
    )
    vendors = tuple(
        Party(f"V{i + 1:02d}", name, rng.choice((7, 14, 30)), account)
        for i, (name, account) in enumerate(rng.sample(VENDORS, rng.randint(*n_vendors)))
    )
    day = lambda lo=1, hi=None: start + timedelta(days=rng.randint(lo, hi or end.day) - 1)  # noqa: E731

    prior: list[PriorItem] = []
    inv_no, bill_no, chq_no = rng.randint(1000, 4000), rng.randint(100, 900), rng.randint(1000, 1900)
    open_invoices: list[tuple[Party, str, Decimal, date]] = []
    open_bills: list[tuple[Party, str, Decimal, date]] = []
    for c in customers:
        for _ in range(rng.randint(0, 2)):
            inv_no += 1
            ref, amt = f"INV-{inv_no}", _amount(rng, 300, 4800)
            d = prior_end - timedelta(days=rng.randint(1, 25))
            status = rng.choice(("open", "open", "paid"))
            prior.append(PriorItem(d, ref, "invoice", c.name, f"Invoice {ref}", amt, status))
            if status == "open":
                open_invoices.append((c, ref, amt, prior_end))
    for v in vendors:
        bill_no += 1
        ref, amt = f"BILL-{bill_no}", _amount(rng, 150, 3500)
        d = prior_end - timedelta(days=rng.randint(1, 25))
        status = rng.choice(("open", "paid"))
        prior.append(PriorItem(d, ref, "bill", v.name, f"Bill {ref}", amt, status))
        if status == "open":
            open_bills.append((v, ref, amt, prior_end))
    # The prior-period cheque still outstanding at the period end, and one already cleared.
    chq_vendor = rng.choice(vendors)
    chq_no += 1
    prior_chq = (f"CHQ-{chq_no}", _amount(rng, 400, 2600))
    prior.append(
        PriorItem(
            prior_end - timedelta(days=rng.randint(0, 3)),
            prior_chq[0],
            "cheque",
            chq_vendor.name,
            f"Cheque {prior_chq[0]}",
            prior_chq[1],
            "issued, not presented",
        )
    )
    chq_no += 1
    prior.append(
        PriorItem(
            prior_end - timedelta(days=rng.randint(8, 20)),
            f"CHQ-{chq_no}",
            "cheque",
            rng.choice(vendors).name,
            f"Cheque CHQ-{chq_no}",
            _amount(rng, 100, 900),
            "cleared",
        )
    )
    prior.sort(key=lambda p: (p.date, p.ref))

    book_bank = _amount(rng, 8000, 40000)
    savings = _amount(rng, 5000, 30000)
    ar = sum((a for _, _, a, _ in open_invoices), money(0))
    ap = sum((a for _, _, a, _ in open_bills), money(0))
    opening = Entry(
        start,
        "",
        f"Opening balances carried from {prior_end:%B %Y}",
        (
            Posting(BANK, book_bank),
            Posting(SAVINGS, savings),
            Posting(AR, ar),
            Posting(AP, -ap),
            Posting(EQUITY, -(book_bank + savings + ar - ap)),
        ),
    )

    events: list[Event] = []

    def bank_event(
        d: date,
        payee: str,
        narration: str,
        legs: list[Posting],
        desc: str,
        extra: tuple[tuple[str, str], ...] = (),
    ) -> None:
        amount = sum((p.amount for p in legs if p.account == BANK), money(0))
        ref = "pending"
        entry = Entry(d, payee, narration, tuple(legs), (("bank_ref", ref), *extra))
        events.append(Event(entry, BankLine(d, ref, desc, amount)))

    def invoice(c: Party, d: date, amt: Decimal) -> str:
        nonlocal inv_no
        inv_no += 1
        ref = f"INV-{inv_no}"
        entry = Entry(
            d, c.name, f"Invoice {ref}", (Posting(AR, amt), Posting(SALES, -amt)), (("invoice", ref),)
        )
        events.append(Event(entry, None))
        return ref

    later = lambda first: first + timedelta(days=rng.randint(1, max(1, (end - first).days)))  # noqa: E731

    def receipt(c: Party, ref: str, amt: Decimal, issued: date) -> None:
        d = later(max(issued, start))
        legs = [Posting(BANK, amt), Posting(AR, -amt)]
        bank_event(d, c.name, f"Receipt {ref}", legs, f"DEPOSIT {c.name.upper()} {ref}")

    # This month's invoices and bills (no bank effect).
    unpaid: list[tuple[Party, str, Decimal, date]] = []
    for _ in range(rng.randint(*n_invoices)):
        c, d = rng.choice(customers), day(1, end.day - 3)
        amt = _amount(rng, 250, 5200)
        ref = invoice(c, d, amt)
        if d.day + c.terms_days <= end.day or rng.random() < 0.5:
            open_invoices.append((c, ref, amt, d))
        else:
            unpaid.append((c, ref, amt, d))
    # Receipt plants need receipts: in a month where too few invoices are due, the earliest are paid early.
    unpaid.sort(key=lambda i: (i[3], i[1]))
    open_invoices += unpaid[: max(0, (2 if hard else 1) - len(open_invoices))]
    for _ in range(rng.randint(*n_bills)):
        v, d = rng.choice(vendors), day(1, end.day - 3)
        bill_no += 1
        ref, amt = f"BILL-{bill_no}", _amount(rng, 120, 4200)
        events.append(
            Event(
                Entry(
                    d, v.name, f"Bill {ref}", (Posting(v.account, amt), Posting(AP, -amt)), (("bill", ref),)
                ),
                None,
            )
        )
        open_bills.append((v, ref, amt, d))

    # Receipts and payments over the bank.
    receipts = rng.sample(open_invoices, min(len(open_invoices), rng.randint(*n_receipts)))
    for c, ref, amt, issued in receipts:
        receipt(c, ref, amt, issued)
    twins: list[str] = []
    if hard:  # A decoy: two customers pay invoices of the very same amount, both genuine.
        amt = _amount(rng, 400, 3000)
        for c in rng.sample(customers, 2):
            issued = day(1, end.day - 10)
            twins.append(invoice(c, issued, amt))
            receipt(c, twins[-1], amt, issued)
    payments = rng.sample(open_bills, min(len(open_bills), rng.randint(*n_payments)))
    cheques = 2 if hard else 1
    for v, ref, amt, issued in payments[:-cheques]:
        d = later(max(issued, start))
        bank_event(
            d,
            v.name,
            f"Payment {ref}",
            [Posting(AP, amt), Posting(BANK, -amt)],
            f"EFT {v.name.upper()} {ref}",
        )
    fee = _amount(rng, 8, 45)
    bank_event(end, "", "Monthly account fee", [Posting(FEES, fee), Posting(BANK, -fee)], "ACCOUNT FEE")
    merchant = _amount(rng, 12, 90)
    bank_event(
        day(3, end.day - 1),
        "",
        "Merchant facility fee",
        [Posting(FEES, merchant), Posting(BANK, -merchant)],
        "MERCHANT FEE",
    )
    interest = _amount(rng, 2, 60)
    bank_event(end, "", "Interest", [Posting(BANK, interest), Posting(INTEREST, -interest)], "INTEREST PAID")
    moved = money(rng.randint(10, 60) * 100)
    bank_event(
        day(5, end.day - 2),
        "",
        "Transfer to savings",
        [Posting(SAVINGS, moved), Posting(BANK, -moved)],
        "TRANSFER TO SAVINGS",
    )
    # Cheques written this month that the bank has not yet paid (reconciling items, not errors).
    for v, ref, amt, _ in payments[-cheques:]:
        chq_no += 1
        events.append(
            Event(
                Entry(
                    end - timedelta(days=rng.randint(0, 2)),
                    v.name,
                    f"Payment {ref}",
                    (Posting(AP, amt), Posting(BANK, -amt)),
                    (("cheque", f"CHQ-{chq_no}"),),
                ),
                None,
            )
        )
    # The prior-period cheque clears this month: a bank line with no entry of this month.
    events.append(Event(None, BankLine(day(2, 12), "pending", f"CHEQUE {prior_chq[0]}", -prior_chq[1])))

    events = _number_bank_lines(events, start)
    narration = lambda i: events[i].entry.narration  # type: ignore[union-attr]  # noqa: E731
    bank_idx = [i for i, e in enumerate(events) if e.bank and e.entry]
    receipt_idx = [
        i for i in bank_idx if narration(i).startswith("Receipt") and narration(i).split()[-1] not in twins
    ]
    payment_idx = [i for i in bank_idx if narration(i).startswith("Payment")]
    other_idx = [i for i in bank_idx if not narration(i).startswith(("Receipt", "Payment"))]
    dup = rng.choice(receipt_idx)
    missing = rng.choice([i for i in receipt_idx + other_idx if i != dup])
    wrong_amt, wrong_acct = rng.sample(payment_idx, 2)
    cleared = next(i for i, e in enumerate(events) if e.entry is None)
    wrong_to = next(v.account for v in vendors if v.name == events[wrong_acct].entry.payee)  # type: ignore[union-attr]
    amount = lambda i: abs(events[i].bank.amount)  # type: ignore[union-attr]  # noqa: E731
    plants: list[tuple[str, int, object]] = [
        ("missing", missing, None),
        ("duplicate", dup, None),
        ("wrong_amount", wrong_amt, _transposed(amount(wrong_amt))),
        ("wrong_account", wrong_acct, wrong_to),
        ("prior_period", cleared, chq_vendor.name),
    ]
    if hard:
        used = {dup, missing, wrong_amt, wrong_acct}
        to_sales = rng.choice([i for i in receipt_idx if i not in used])
        used.add(to_sales)
        again = rng.choice([i for i in payment_idx if i not in used and events[i].bank.date < end])  # type: ignore[union-attr]
        used.add(again)
        keyed = rng.choice(
            [i for i in receipt_idx + payment_idx if i not in used and _cents_swapped(amount(i)) != amount(i)]
        )
        gap = rng.randint(1, min(3, (end - events[again].bank.date).days))  # type: ignore[union-attr]
        plants += [
            ("transposed_cents", keyed, _cents_swapped(amount(keyed))),
            ("untagged_duplicate", again, gap),
            ("receipt_to_sales", to_sales, SALES),
        ]
    booked, planted = apply_plants(events, plants)
    return World(
        world_id=f"dev:{seed}" if world_id is None else world_id,
        company=company,
        start=start,
        end=end,
        customers=customers,
        vendors=vendors,
        prior_items=tuple(prior),
        opening=opening,
        events=tuple(events),
        booked=booked,
        plants=planted,
        bank_opening=book_bank + prior_chq[1],
        hard=hard,
    )


def _number_bank_lines(events: list[Event], start: date) -> list[Event]:
    """Give bank lines statement refs in date order (and the matching entry its ``bank_ref``)."""
    order = sorted((i for i, e in enumerate(events) if e.bank), key=lambda i: (events[i].bank.date, i))  # type: ignore[union-attr]
    out = list(events)
    for n, i in enumerate(order, 1):
        e = events[i]
        assert e.bank is not None
        ref = f"BS{start:%y%m}-{n:03d}"
        bank = BankLine(e.bank.date, ref, e.bank.description, e.bank.amount)
        entry = e.entry
        if entry is not None:
            meta = tuple((k, ref if k == "bank_ref" else v) for k, v in entry.meta)
            entry = Entry(entry.date, entry.payee, entry.narration, entry.postings, meta)
        out[i] = Event(entry, bank)
    # Keep the original event order (it is the booking order); only refs changed.
    return out


# --------------------------------------------------------------------------- the shipped world


def bank_recon_001() -> World:
    """The hand-authored task: Harbour Trading Pty Ltd, March 2024, five planted discrepancies."""
    start, end = date(2024, 3, 1), date(2024, 3, 31)
    d = lambda day: date(2024, 3, day)  # noqa: E731
    customers = (
        Party("C01", "Acacia Cafe", 14, SALES),
        Party("C02", "Baxter Hardware", 30, SALES),
        Party("C03", "Coral Bay Resort", 30, SALES),
        Party("C04", "Dunmore Bakery", 14, SALES),
    )
    vendors = (
        Party("V01", "Pacific Freight Lines", 14, "Expenses:Freight"),
        Party("V02", "Kestrel Properties", 7, "Expenses:Rent"),
        Party("V03", "Metro Energy", 30, "Expenses:Utilities"),
        Party("V04", "Orchard Produce Wholesale", 30, "Expenses:Purchases"),
        Party("V05", "Paperworks Office", 14, "Expenses:OfficeSupplies"),
    )
    m = money
    prior = (
        PriorItem(
            date(2024, 2, 8),
            "CHQ-1187",
            "cheque",
            "Paperworks Office",
            "Cheque CHQ-1187",
            m("212.40"),
            "cleared",
        ),
        PriorItem(
            date(2024, 2, 12),
            "INV-2041",
            "invoice",
            "Baxter Hardware",
            "Invoice INV-2041",
            m("1840.00"),
            "open",
        ),
        PriorItem(
            date(2024, 2, 15), "BILL-311", "bill", "Metro Energy", "Bill BILL-311", m("486.25"), "open"
        ),
        PriorItem(
            date(2024, 2, 19),
            "INV-2043",
            "invoice",
            "Coral Bay Resort",
            "Invoice INV-2043",
            m("3275.50"),
            "open",
        ),
        PriorItem(
            date(2024, 2, 21),
            "BILL-314",
            "bill",
            "Orchard Produce Wholesale",
            "Bill BILL-314",
            m("2960.00"),
            "open",
        ),
        PriorItem(
            date(2024, 2, 22), "INV-2044", "invoice", "Acacia Cafe", "Invoice INV-2044", m("615.80"), "paid"
        ),
        PriorItem(
            date(2024, 2, 26),
            "BILL-316",
            "bill",
            "Pacific Freight Lines",
            "Bill BILL-316",
            m("742.00"),
            "open",
        ),
        PriorItem(
            date(2024, 2, 28),
            "CHQ-1192",
            "cheque",
            "Kestrel Properties",
            "Cheque CHQ-1192",
            m("2400.00"),
            "issued, not presented",
        ),
    )
    opening = Entry(
        start,
        "",
        "Opening balances carried from February 2024",
        (
            Posting(BANK, m("18426.35")),
            Posting(SAVINGS, m("12000.00")),
            Posting(AR, m("5115.50")),
            Posting(AP, m("-4188.25")),
            Posting(EQUITY, m("-31353.60")),
        ),
    )

    def txn(
        day: int,
        payee: str,
        narration: str,
        legs: tuple[tuple[str, str], ...],
        meta: tuple[tuple[str, str], ...],
    ) -> Entry:
        return Entry(d(day), payee, narration, tuple(Posting(a, m(v)) for a, v in legs), meta)

    def bank(day: int, ref: str, desc: str, amount: str) -> BankLine:
        return BankLine(d(day), ref, desc, m(amount))

    events = [
        Event(
            txn(
                4,
                "Baxter Hardware",
                "Receipt INV-2041",
                ((BANK, "1840.00"), (AR, "-1840.00")),
                (("bank_ref", "BS2403-001"),),
            ),
            bank(4, "BS2403-001", "DEPOSIT BAXTER HARDWARE INV-2041", "1840.00"),
        ),
        Event(
            txn(
                5,
                "Acacia Cafe",
                "Invoice INV-2045",
                ((AR, "1260.00"), (SALES, "-1260.00")),
                (("invoice", "INV-2045"),),
            ),
            None,
        ),
        Event(None, bank(6, "BS2403-002", "CHEQUE CHQ-1192", "-2400.00")),
        Event(
            txn(
                7,
                "Kestrel Properties",
                "Bill BILL-320",
                (("Expenses:Rent", "2400.00"), (AP, "-2400.00")),
                (("bill", "BILL-320"),),
            ),
            None,
        ),
        Event(
            txn(
                8,
                "Metro Energy",
                "Payment BILL-311",
                ((AP, "486.25"), (BANK, "-486.25")),
                (("bank_ref", "BS2403-003"),),
            ),
            bank(8, "BS2403-003", "EFT METRO ENERGY BILL-311", "-486.25"),
        ),
        Event(
            txn(
                11,
                "Coral Bay Resort",
                "Receipt INV-2043",
                ((BANK, "3275.50"), (AR, "-3275.50")),
                (("bank_ref", "BS2403-004"),),
            ),
            bank(11, "BS2403-004", "DEPOSIT CORAL BAY RESORT INV-2043", "3275.50"),
        ),
        Event(
            txn(
                12,
                "Dunmore Bakery",
                "Invoice INV-2046",
                ((AR, "845.60"), (SALES, "-845.60")),
                (("invoice", "INV-2046"),),
            ),
            None,
        ),
        Event(
            txn(
                13,
                "Orchard Produce Wholesale",
                "Payment BILL-314",
                ((AP, "2960.00"), (BANK, "-2960.00")),
                (("bank_ref", "BS2403-005"),),
            ),
            bank(13, "BS2403-005", "EFT ORCHARD PRODUCE BILL-314", "-2960.00"),
        ),
        Event(
            txn(
                14,
                "Pacific Freight Lines",
                "Bill BILL-321",
                (("Expenses:Freight", "318.40"), (AP, "-318.40")),
                (("bill", "BILL-321"),),
            ),
            None,
        ),
        Event(
            txn(
                15,
                "",
                "Transfer to savings",
                ((SAVINGS, "3000.00"), (BANK, "-3000.00")),
                (("bank_ref", "BS2403-006"),),
            ),
            bank(15, "BS2403-006", "TRANSFER TO SAVINGS", "-3000.00"),
        ),
        Event(
            txn(
                18,
                "Acacia Cafe",
                "Receipt INV-2045",
                ((BANK, "1260.00"), (AR, "-1260.00")),
                (("bank_ref", "BS2403-007"),),
            ),
            bank(18, "BS2403-007", "DEPOSIT ACACIA CAFE INV-2045", "1260.00"),
        ),
        Event(
            txn(
                19,
                "Paperworks Office",
                "Bill BILL-322",
                (("Expenses:OfficeSupplies", "164.90"), (AP, "-164.90")),
                (("bill", "BILL-322"),),
            ),
            None,
        ),
        Event(
            txn(
                20,
                "Baxter Hardware",
                "Invoice INV-2047",
                ((AR, "2315.00"), (SALES, "-2315.00")),
                (("invoice", "INV-2047"),),
            ),
            None,
        ),
        Event(
            txn(
                21,
                "",
                "Merchant facility fee",
                ((FEES, "38.70"), (BANK, "-38.70")),
                (("bank_ref", "BS2403-008"),),
            ),
            bank(21, "BS2403-008", "MERCHANT FEE", "-38.70"),
        ),
        Event(
            txn(
                22,
                "Pacific Freight Lines",
                "Payment BILL-316",
                ((AP, "742.00"), (BANK, "-742.00")),
                (("bank_ref", "BS2403-009"),),
            ),
            bank(22, "BS2403-009", "EFT PACIFIC FREIGHT BILL-316", "-742.00"),
        ),
        Event(
            txn(
                26,
                "Dunmore Bakery",
                "Receipt INV-2046",
                ((BANK, "845.60"), (AR, "-845.60")),
                (("bank_ref", "BS2403-010"),),
            ),
            bank(26, "BS2403-010", "DEPOSIT DUNMORE BAKERY INV-2046", "845.60"),
        ),
        Event(
            txn(
                28,
                "Kestrel Properties",
                "Payment BILL-320",
                ((AP, "2400.00"), (BANK, "-2400.00")),
                (("cheque", "CHQ-1201"),),
            ),
            None,
        ),
        Event(
            txn(
                29,
                "Paperworks Office",
                "Payment BILL-322",
                ((AP, "164.90"), (BANK, "-164.90")),
                (("bank_ref", "BS2403-011"),),
            ),
            bank(29, "BS2403-011", "EFT PAPERWORKS OFFICE BILL-322", "-164.90"),
        ),
        Event(
            txn(
                31,
                "",
                "Monthly account fee",
                ((FEES, "15.00"), (BANK, "-15.00")),
                (("bank_ref", "BS2403-012"),),
            ),
            bank(31, "BS2403-012", "ACCOUNT FEE", "-15.00"),
        ),
        Event(
            txn(31, "", "Interest", ((BANK, "6.42"), (INTEREST, "-6.42")), (("bank_ref", "BS2403-013"),)),
            bank(31, "BS2403-013", "INTEREST PAID", "6.42"),
        ),
    ]
    plants: list[tuple[str, int, object]] = [
        ("prior_period", 2, "Kestrel Properties"),
        ("wrong_amount", 7, m("2690.00")),
        ("duplicate", 10, None),
        ("missing", 13, None),
        ("wrong_account", 17, "Expenses:OfficeSupplies"),
    ]
    booked, planted = apply_plants(events, plants)
    return World(
        "bank_recon_001",
        "Harbour Trading Pty Ltd",
        start,
        end,
        customers,
        vendors,
        prior,
        opening,
        tuple(events),
        booked,
        planted,
        bank_opening=m("18426.35") + m("2400.00"),
    )
