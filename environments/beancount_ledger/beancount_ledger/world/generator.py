"""Generated worlds: a month of one trading company, a pure function of seed, profile and years.

`generate` runs named steps over one string-seeded RNG, in a fixed order (each step draws from it,
so the order is part of every world): the period and company, the counterparties, the prior
period and opening balances, the month's events, the numbering of the bank lines, and the choice
of which events carry which planted discrepancies. A `Profile` (`profiles`) sets the sizes of
the month, the kinds of discrepancy planted and whether the month has decoys (two customers paying
the same amount, a second unpresented cheque).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal

from beancount_ledger.world.model import (
    AP,
    AR,
    BANK,
    EQUITY,
    FEES,
    INTEREST,
    SALES,
    SAVINGS,
    BankLine,
    Entry,
    Event,
    Party,
    Posting,
    PriorItem,
    World,
    money,
)
from beancount_ledger.world.plants import apply_plants

# The profiles live in `profiles`; `world` imports them from here as well.
from beancount_ledger.world.profiles import HARD, PROFILES, STANDARD, Profile  # noqa: F401

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

DEFAULT_YEARS = (2023, 2025)


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


Open = tuple[Party, str, Decimal, date]
"""An open invoice or bill: party, ref, amount, the date from which it may be settled."""


@dataclass
class _Month:
    """The state the steps build up (in the order they run)."""

    rng: random.Random
    profile: Profile
    start: date
    end: date
    company: str = ""
    customers: tuple[Party, ...] = ()
    vendors: tuple[Party, ...] = ()
    prior: list[PriorItem] = field(default_factory=list)
    inv_no: int = 0
    bill_no: int = 0
    chq_no: int = 0
    open_invoices: list[Open] = field(default_factory=list)
    open_bills: list[Open] = field(default_factory=list)
    chq_vendor: Party | None = None
    prior_chq: tuple[str, Decimal] = ("", money(0))
    book_bank: Decimal = money(0)
    opening: Entry | None = None
    events: list[Event] = field(default_factory=list)
    twins: list[str] = field(default_factory=list)

    @property
    def prior_end(self) -> date:
        return self.start - timedelta(days=1)

    def day(self, lo: int = 1, hi: int | None = None) -> date:
        return self.start + timedelta(days=self.rng.randint(lo, hi or self.end.day) - 1)

    def cycle_day(self, seed_day: date) -> date:
        """When the bank charges its fee, pays interest or clears the prior cheque: `seed_day` in the
        seed's months; at the located-credit rungs any day of the month (the account's own cycle), so
        neither end of the statement is where a discrepancy usually sits."""
        return self.day() if self.profile.located_credit else seed_day

    def later(self, first: date) -> date:
        return first + timedelta(days=self.rng.randint(1, max(1, (self.end - first).days)))

    def bank_event(self, d: date, payee: str, narration: str, legs: list[Posting], desc: str) -> None:
        """A booked entry the bank shows (its ref is given when the lines are numbered)."""
        amount = sum((p.amount for p in legs if p.account == BANK), money(0))
        entry = Entry(d, payee, narration, tuple(legs), (("bank_ref", "pending"),))
        self.events.append(Event(entry, BankLine(d, "pending", desc, amount)))

    def invoice(self, c: Party, d: date, amt: Decimal) -> str:
        self.inv_no += 1
        ref = f"INV-{self.inv_no}"
        entry = Entry(
            d, c.name, f"Invoice {ref}", (Posting(AR, amt), Posting(SALES, -amt)), (("invoice", ref),)
        )
        self.events.append(Event(entry, None))
        return ref

    def receipt(self, c: Party, ref: str, amt: Decimal, issued: date) -> None:
        d = self.later(max(issued, self.start))
        legs = [Posting(BANK, amt), Posting(AR, -amt)]
        self.bank_event(d, c.name, f"Receipt {ref}", legs, f"DEPOSIT {c.name.upper()} {ref}")


def _period(rng: random.Random, years: tuple[int, int]) -> tuple[date, date]:
    year = rng.randint(*years)
    month = rng.randint(1, 12)
    start = date(year, month, 1)
    return start, (start + timedelta(days=32)).replace(day=1) - timedelta(days=1)


def _parties(m: _Month) -> None:
    rng = m.rng
    n_customers, n_vendors = m.profile.sizes[:2]
    m.company = rng.choice(COMPANIES)
    m.customers = tuple(
        Party(f"C{i + 1:02d}", name, rng.choice((14, 30)), SALES)
        for i, name in enumerate(rng.sample(CUSTOMER_NAMES, rng.randint(*n_customers)))
    )
    m.vendors = tuple(
        Party(f"V{i + 1:02d}", name, rng.choice((7, 14, 30)), account)
        for i, (name, account) in enumerate(rng.sample(VENDORS, rng.randint(*n_vendors)))
    )


def _prior_period(m: _Month) -> None:
    """The prior period's invoices and bills (open or paid) and two cheques: one still outstanding
    at the period end, one already cleared."""
    rng, prior_end = m.rng, m.prior_end
    m.inv_no, m.bill_no, m.chq_no = rng.randint(1000, 4000), rng.randint(100, 900), rng.randint(1000, 1900)
    for c in m.customers:
        for _ in range(rng.randint(0, 2)):
            m.inv_no += 1
            ref, amt = f"INV-{m.inv_no}", _amount(rng, 300, 4800)
            d = prior_end - timedelta(days=rng.randint(1, 25))
            status = rng.choice(("open", "open", "paid"))
            m.prior.append(PriorItem(d, ref, "invoice", c.name, f"Invoice {ref}", amt, status))
            if status == "open":
                m.open_invoices.append((c, ref, amt, prior_end))
    for v in m.vendors:
        m.bill_no += 1
        ref, amt = f"BILL-{m.bill_no}", _amount(rng, 150, 3500)
        d = prior_end - timedelta(days=rng.randint(1, 25))
        status = rng.choice(("open", "paid"))
        m.prior.append(PriorItem(d, ref, "bill", v.name, f"Bill {ref}", amt, status))
        if status == "open":
            m.open_bills.append((v, ref, amt, prior_end))
    m.chq_vendor = rng.choice(m.vendors)
    m.chq_no += 1
    m.prior_chq = (f"CHQ-{m.chq_no}", _amount(rng, 400, 2600))
    issued = prior_end - timedelta(days=rng.randint(0, 3))
    ref, amt = m.prior_chq
    m.prior.append(
        PriorItem(issued, ref, "cheque", m.chq_vendor.name, f"Cheque {ref}", amt, "issued, not presented")
    )
    m.chq_no += 1
    cleared = prior_end - timedelta(days=rng.randint(8, 20))
    vendor = rng.choice(m.vendors).name
    m.prior.append(
        PriorItem(
            cleared,
            f"CHQ-{m.chq_no}",
            "cheque",
            vendor,
            f"Cheque CHQ-{m.chq_no}",
            _amount(rng, 100, 900),
            "cleared",
        )
    )
    m.prior.sort(key=lambda p: (p.date, p.ref))


def _opening(m: _Month) -> None:
    m.book_bank = book_bank = _amount(m.rng, 8000, 40000)
    savings = _amount(m.rng, 5000, 30000)
    ar = sum((a for _, _, a, _ in m.open_invoices), money(0))
    ap = sum((a for _, _, a, _ in m.open_bills), money(0))
    legs = (
        Posting(BANK, book_bank),
        Posting(SAVINGS, savings),
        Posting(AR, ar),
        Posting(AP, -ap),
        Posting(EQUITY, -(book_bank + savings + ar - ap)),
    )
    m.opening = Entry(m.start, "", f"Opening balances carried from {m.prior_end:%B %Y}", legs)


def _invoices_and_bills(m: _Month) -> None:
    """This month's invoices and bills (no bank effect)."""
    rng, end = m.rng, m.end
    _, _, n_invoices, n_bills, _, _ = m.profile.sizes
    unpaid: list[Open] = []
    for _ in range(rng.randint(*n_invoices)):
        c, d = rng.choice(m.customers), m.day(1, end.day - 3)
        amt = _amount(rng, 250, 5200)
        ref = m.invoice(c, d, amt)
        if d.day + c.terms_days <= end.day or rng.random() < 0.5:
            m.open_invoices.append((c, ref, amt, d))
        else:
            unpaid.append((c, ref, amt, d))
    # Receipt plants need receipts: in a month where too few invoices are due, the earliest are paid early.
    unpaid.sort(key=lambda i: (i[3], i[1]))
    m.open_invoices += unpaid[: max(0, (2 if m.profile.decoys else 1) - len(m.open_invoices))]
    for _ in range(rng.randint(*n_bills)):
        v, d = rng.choice(m.vendors), m.day(1, end.day - 3)
        m.bill_no += 1
        ref, amt = f"BILL-{m.bill_no}", _amount(rng, 120, 4200)
        legs = (Posting(v.account, amt), Posting(AP, -amt))
        m.events.append(Event(Entry(d, v.name, f"Bill {ref}", legs, (("bill", ref),)), None))
        m.open_bills.append((v, ref, amt, d))


def _bank_activity(m: _Month) -> None:
    """Receipts, payments, fees, interest and the transfer over the bank; the cheques written this
    month that the bank has not yet paid (reconciling items, not errors); the prior-period cheque
    clearing (a bank line with no entry of this month), unless the profile keeps it outstanding."""
    rng, start, end = m.rng, m.start, m.end
    *_, n_receipts, n_payments = m.profile.sizes
    for c, ref, amt, issued in rng.sample(
        m.open_invoices, min(len(m.open_invoices), rng.randint(*n_receipts))
    ):
        m.receipt(c, ref, amt, issued)
    if m.profile.decoys:  # Two customers pay invoices of the very same amount, both genuine.
        amt = _amount(rng, 400, 3000)
        for c in rng.sample(m.customers, 2):
            issued = m.day(1, end.day - 10)
            m.twins.append(m.invoice(c, issued, amt))
            m.receipt(c, m.twins[-1], amt, issued)
    payments = rng.sample(m.open_bills, min(len(m.open_bills), rng.randint(*n_payments)))
    cheques = 2 if m.profile.decoys else 1
    for v, ref, amt, issued in payments[:-cheques]:
        legs = [Posting(AP, amt), Posting(BANK, -amt)]
        m.bank_event(
            m.later(max(issued, start)), v.name, f"Payment {ref}", legs, f"EFT {v.name.upper()} {ref}"
        )
    fee = _amount(rng, 8, 45)
    legs = [Posting(FEES, fee), Posting(BANK, -fee)]
    m.bank_event(m.cycle_day(end), "", "Monthly account fee", legs, "ACCOUNT FEE")
    merchant = _amount(rng, 12, 90)
    legs = [Posting(FEES, merchant), Posting(BANK, -merchant)]
    m.bank_event(m.day(3, end.day - 1), "", "Merchant facility fee", legs, "MERCHANT FEE")
    interest = _amount(rng, 2, 60)
    legs = [Posting(BANK, interest), Posting(INTEREST, -interest)]
    m.bank_event(m.cycle_day(end), "", "Interest", legs, "INTEREST PAID")
    moved = money(rng.randint(10, 60) * 100)
    legs = [Posting(SAVINGS, moved), Posting(BANK, -moved)]
    m.bank_event(m.day(5, end.day - 2), "", "Transfer to savings", legs, "TRANSFER TO SAVINGS")
    for v, ref, amt, _ in payments[-cheques:]:
        m.chq_no += 1
        d = end - timedelta(days=rng.randint(0, 2))
        legs_ = (Posting(AP, amt), Posting(BANK, -amt))
        m.events.append(
            Event(Entry(d, v.name, f"Payment {ref}", legs_, (("cheque", f"CHQ-{m.chq_no}"),)), None)
        )
    if m.profile.prior_cheque_clears:
        cleared = m.cycle_day(m.day(2, 12))  # the seed's day is drawn either way: 0.15.0's worlds as measured
        m.events.append(
            Event(None, BankLine(cleared, "pending", f"CHEQUE {m.prior_chq[0]}", -m.prior_chq[1]))
        )


def number_bank_lines(events: list[Event], start: date) -> list[Event]:
    """Give bank lines statement refs in date order (and the matching entry its ``bank_ref``), keeping
    the events' order (it is the booking order)."""
    order = sorted((i for i, e in enumerate(events) if e.bank), key=lambda i: (events[i].bank.date, i))  # type: ignore[union-attr]
    out = list(events)
    for n, i in enumerate(order, 1):
        entry, bank = events[i].entry, events[i].bank
        if bank is None:
            raise ValueError(f"event {i} has no bank line to number")
        ref = f"BS{start:%y%m}-{n:03d}"
        if entry is not None:
            meta = tuple((k, ref if k == "bank_ref" else v) for k, v in entry.meta)
            entry = Entry(entry.date, entry.payee, entry.narration, entry.postings, meta)
        out[i] = Event(entry, BankLine(bank.date, ref, bank.description, bank.amount))
    return out


def _choose_plants(m: _Month) -> list[tuple[str, int, object]]:
    """Which events carry which discrepancy (each event at most one), drawn in a fixed order of kinds."""
    rng, events, end = m.rng, m.events, m.end
    kinds = set(m.profile.kinds)
    if m.profile.choose:
        kinds = set(rng.sample(sorted(m.profile.kinds), m.profile.choose))
    narration = lambda i: events[i].entry.narration  # type: ignore[union-attr]  # noqa: E731
    amount = lambda i: abs(events[i].bank.amount)  # type: ignore[union-attr]  # noqa: E731
    bank_idx = [i for i, e in enumerate(events) if e.bank and e.entry]
    receipt_idx = [
        i for i in bank_idx if narration(i).startswith("Receipt") and narration(i).split()[-1] not in m.twins
    ]
    payment_idx = [i for i in bank_idx if narration(i).startswith("Payment")]
    other_idx = [i for i in bank_idx if not narration(i).startswith(("Receipt", "Payment"))]
    used: set[int] = set()
    plants: list[tuple[str, int, object]] = []
    if m.profile.even_accounts:
        (kind,) = kinds
        by_account: dict[str, list[int]] = {}
        for i in bank_idx:
            other = next(p.account for p in events[i].entry.postings if p.account != BANK)  # type: ignore[union-attr]
            by_account.setdefault(other, []).append(i)
        line = rng.choice(by_account[rng.choice(sorted(by_account))])
        return [(kind, line, _transposed(amount(line)) if kind == "wrong_amount" else None)]

    def take(kind: str, index: int, arg: object = None) -> None:
        used.add(index)
        plants.append((kind, index, arg))

    if "duplicate" in kinds:
        take("duplicate", rng.choice(receipt_idx))
    if "missing" in kinds:
        take("missing", rng.choice([i for i in receipt_idx + other_idx if i not in used]))
    misposted = [k for k in ("wrong_amount", "wrong_account") if k in kinds]
    for kind, i in zip(misposted, rng.sample(payment_idx, len(misposted)), strict=True):
        if kind == "wrong_amount":
            take(kind, i, _transposed(amount(i)))
        else:
            payee = events[i].entry.payee  # type: ignore[union-attr]
            take(kind, i, next(v.account for v in m.vendors if v.name == payee))
    if "prior_period" in kinds:
        cleared = next(i for i, e in enumerate(events) if e.entry is None)
        take("prior_period", cleared, m.chq_vendor.name)  # type: ignore[union-attr]
    if "receipt_to_sales" in kinds:
        to_sales = rng.choice([i for i in receipt_idx if i not in used])
        used.add(to_sales)
    if "untagged_duplicate" in kinds:
        again = rng.choice([i for i in payment_idx if i not in used and events[i].bank.date < end])  # type: ignore[union-attr]
        used.add(again)
    if "transposed_cents" in kinds:
        keyed = rng.choice(
            [i for i in receipt_idx + payment_idx if i not in used and _cents_swapped(amount(i)) != amount(i)]
        )
        take("transposed_cents", keyed, _cents_swapped(amount(keyed)))
    if "untagged_duplicate" in kinds:
        gap = rng.randint(1, min(3, (end - events[again].bank.date).days))  # type: ignore[union-attr]
        take("untagged_duplicate", again, gap)
    if "receipt_to_sales" in kinds:
        take("receipt_to_sales", to_sales, SALES)
    return plants


def generate(
    seed: int,
    *,
    hard: bool = False,
    years: tuple[int, int] = DEFAULT_YEARS,
    world_id: str | None = None,
    profile: Profile | None = None,
) -> World:
    """The world of integer `seed`, its period in a year of `years` (inclusive): identical in every
    process (string-seeded RNG). `world_id` (default ``dev:<seed>``) only labels it; it is never
    rendered. `profile` (default `STANDARD`, or `HARD` with ``hard``) sets the month's size and
    discrepancies; ``hard`` gives a longer month with the eight `HARD_KINDS` and decoys."""
    first_year, last_year = years
    if first_year > last_year:
        raise ValueError(f"years must be (first, last) with first <= last, not {years!r}")
    if profile is None:
        profile = HARD if hard else STANDARD
    elif hard and profile is not HARD:
        raise ValueError(f"hard=True names the hard profile; profile {profile.name!r} was given as well")
    # The standard profile over the default years keeps the stream of generator version 2.
    standard = profile is STANDARD and tuple(years) == DEFAULT_YEARS
    suffix = "" if standard else f"/{profile.name}/{first_year}-{last_year}"
    rng = random.Random(f"beancount-ledger/world/{seed}{suffix}")
    m = _Month(rng, profile, *_period(rng, (first_year, last_year)))
    _parties(m)
    _prior_period(m)
    _opening(m)
    _invoices_and_bills(m)
    _bank_activity(m)
    m.events = number_bank_lines(m.events, m.start)
    booked, planted = apply_plants(m.events, _choose_plants(m))
    return World(
        world_id=f"dev:{seed}" if world_id is None else world_id,
        company=m.company,
        start=m.start,
        end=m.end,
        customers=m.customers,
        vendors=m.vendors,
        prior_items=tuple(m.prior),
        opening=m.opening,  # type: ignore[arg-type]
        events=tuple(m.events),
        booked=booked,
        plants=planted,
        bank_opening=m.book_bank + m.prior_chq[1],
        hard=profile.hard,
        located_credit=profile.located_credit,
    )
