"""Procedural ledgers: one quarter of GST-inclusive sales and purchases with injected faults.

The generator decides what a ledger looks like and which faults to plant; it never computes
the answer key (that is `rules.reconcile`'s job, from the finished rows). Everything is
drawn from the `random.Random` it is handed, so a ledger is a pure function of its seed.
`widest_ledger` is the bound on all of them that sizes the prompt.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import NamedTuple

from piv_core.ledger_audit.plan import (
    InvoiceBook,
    check_rows,
    drawn_share,
    keyed_wrong,
    pick,
    plan_faulty,
    plant_duplicates,
    undone_by_rounding,
    widest_invoice,
)

from au_bas_reconciliation_v1.ledger import (
    CATEGORIES,
    GST_FREE,
    INPUT_TAXED,
    PURCHASE,
    SALE,
    TAXABLE,
    Quarter,
    Row,
)
from au_bas_reconciliation_v1.rules import (
    ABN_THRESHOLD,
    DUPLICATE_INVOICE,
    FAULT_CODES,
    GST_MISCALCULATED,
    GST_ON_GST_FREE,
    MISSING_ABN_OVER_THRESHOLD,
    OUTSIDE_PERIOD,
)

MIN_ROWS = 4
YEARS = (2024, 2025, 2026)
QUARTER_STARTS = ((1, 1), (4, 1), (7, 1), (10, 1))

BUSINESSES = (
    "Harbourside Supplies",
    "Wattle & Gum Trading",
    "Southern Cross Studio",
    "Kookaburra Logistics",
    "Banksia Health Co",
    "Redgum Joinery",
    "Coral Coast Imports",
    "Bluewren Consulting",
)
CUSTOMERS = (
    "Acme Retail",
    "Birch Cafe",
    "Cobalt Mining",
    "Dune Surf Co",
    "Ember Bakery",
    "Fig Tree Clinic",
    "Granite Builders",
    "Hopscotch Childcare",
    "Ironbark Farms",
    "Jetty Motors",
    "Koala Books",
    "Lagoon Resorts",
)
SUPPLIERS = (
    "Atlas Wholesale",
    "Bright Office",
    "Cargo Express",
    "Delta Finance",
    "Evergreen Produce",
    "Fortress IT",
    "Gull Property",
    "Harvest Foods",
    "Island Freight",
    "Juniper Medical",
    "Keystone Tools",
    "Lumen Electrical",
)

PRICE_CENTS = (500, 500_000)
"""Every price is drawn from [low, high) cents."""
MIXED, SALES, ROUND_SALES, SALES_AND_PURCHASES = "mixed", "sales", "round_sales", "sales_and_purchases"
ROW_MIXES = (MIXED, SALES, ROUND_SALES, SALES_AND_PURCHASES)
"""What a ledger's rows are: sales and purchases of every category, faults planted as the default
configuration plants them (``mixed``); sales only (``sales`` at any price, ``round_sales`` at 11
times a whole number of dollars, so that every correct GST is whole dollars, one of
`ROUND_GST_DOLLARS`, and so is every miscalculated one); or sales and purchases at any price
planted as the sales-only mixes plant them (``sales_and_purchases``). In all but ``mixed`` a row's
treatment is drawn first (`SALES_TREATMENTS`) and whether it is faulty does not depend on it: a
faulty GST-free or input-taxed row is charged GST, a faulty taxable row's GST is miscalculated in
one of `MISCALCULATIONS`. So no category, price or recorded figure tells a faulty row from a clean
one without the division and the comparison."""
ROUND_GST_DOLLARS = (*range(10, 20), *range(20, 100, 10))
"""The correct GSTs of a ``round_sales`` row, in whole dollars: $10 to $19 and the tens to $90
(prices $110 to $209, and $220, $330 and so on to $990). Below $10 a tenth of the price cut to
dollars (10% of it, the commonest miscalculation) would be the GST too; from $10 it is at least a
dollar over, so that rule, used as the method, is never right. Eighteen figures, none much more
common than another, so that guessing one for every row (by the price's size or not) pays little;
the tens are divisions a small model gets right more often than the two-digit quotients above 19."""
SALES_TREATMENTS = ((TAXABLE, 0.9), (GST_FREE, 0.05), (INPUT_TAXED, 0.05))
"""The treatments of the rows of every mix but ``mixed``, and their shares. A GST-free or input-taxed
row's verdict needs no division (its correct GST is 0.00 whatever its price), so at the rungs that
teach the division by 11 such rows are few, and what a rule reading only the category and the
recorded figure earns is a small share of the reward beside the divisions."""
MISCALCULATIONS = ("tenth", "keyed", "slip")
"""How every mix but ``mixed`` gets a taxable row's GST wrong, one drawn per faulty row: 10% of the price
(the default configuration's only form), the right GST keyed wrong (two adjacent digits swapped or
one digit mistyped), or the right GST a dollar too high or too low."""
SALE_SHARE = 0.55
"""The chance that a row is a sale."""

_CENT = Decimal("0.01")
_ELEVEN = Decimal(11)
_TENTH = Decimal("0.1")
_ZERO = Decimal("0.00")
_TAXABLE = frozenset(TAXABLE)
_THRESHOLD_CENTS = int(ABN_THRESHOLD * 100)


class Ledger(NamedTuple):
    business: str
    quarter: Quarter
    rows: list[Row]


def _quarter(rng: random.Random) -> Quarter:
    year, (month, day) = pick(rng, YEARS), pick(rng, QUARTER_STARTS)
    return _quarter_of(year, month, day)


def _quarter_of(year: int, month: int, day: int) -> Quarter:
    start = date(year, month, day)
    end = date(year + (month == 10), (month + 2) % 12 + 1, 1) - timedelta(days=1)
    return Quarter(start, end)


def _amount(rng: random.Random, low: int = PRICE_CENTS[0], high: int = PRICE_CENTS[1]) -> Decimal:
    """A price in [low, high] cents, log-uniform so small and large invoices both occur."""
    return Decimal(int(low * (high / low) ** rng.random())).scaleb(-2)


def _gst(category: str, amount: Decimal) -> Decimal:
    if category not in _TAXABLE:
        return _ZERO
    return (amount / _ELEVEN).quantize(_CENT, rounding=ROUND_HALF_UP)


def _abn(rng: random.Random) -> str:
    return _abn_text(str(int(10**10 + rng.random() * 9 * 10**10)))


def _abn_text(digits: str) -> str:
    """An 11-digit ABN as it is written: ``12 345 678 901``."""
    return f"{digits[:2]} {digits[2:5]} {digits[5:8]} {digits[8:]}"


def _clean_row(rng: random.Random, first_day: int, span: int, invoice: str, kind: str) -> Row:
    """A fault-free row: in the quarter (`span` days from ordinal `first_day`), correct GST,
    an ABN wherever the threshold needs one. (Hot path: draws are inlined.)"""
    draw = rng.random
    pool = TAXABLE if (u := draw()) < 0.75 else GST_FREE if u < 0.9 else INPUT_TAXED
    category = pool[int(draw() * len(pool))]
    low, high = (PRICE_CENTS[0], _THRESHOLD_CENTS) if kind == PURCHASE and draw() < 0.2 else PRICE_CENTS
    cents = int(low * (high / low) ** draw())
    amount = Decimal(cents).scaleb(-2)
    day = date.fromordinal(first_day + int(draw() * span))
    parties = CUSTOMERS if kind == SALE else SUPPLIERS
    counterparty = parties[int(draw() * len(parties))]
    abn = "" if kind == SALE or (cents <= _THRESHOLD_CENTS and draw() < 0.5) else _abn(rng)
    return Row("", day, kind, counterparty, invoice, category, amount, _gst(category, amount), abn)


def _treated_row(
    rng: random.Random, first_day: int, span: int, invoice: str, round_price: bool, kind: str = SALE
) -> Row:
    """A fault-free row of a mix other than ``mixed`` (a sale unless `kind` says otherwise): its
    treatment drawn by `SALES_TREATMENTS`; a purchase carries its supplier's ABN."""
    category = pick(rng, drawn_share(rng, SALES_TREATMENTS))
    if round_price:
        amount = (_ELEVEN * pick(rng, ROUND_GST_DOLLARS)).quantize(_CENT)
    else:
        amount = _amount(rng)
    day = date.fromordinal(first_day + int(rng.random() * span))
    party, abn = (pick(rng, SUPPLIERS), _abn(rng)) if kind == PURCHASE else (pick(rng, CUSTOMERS), "")
    return Row("", day, kind, party, invoice, category, amount, _gst(category, amount), abn)


def _miscalculated(rng: random.Random, amount: Decimal, whole: bool = False) -> Decimal:
    """A wrong GST for a taxable sale of `amount`, in one of `MISCALCULATIONS` drawn at random,
    drawn again while it is right or `undone_by_rounding` (a dollar slip is neither), or, where the
    right GST is `whole` dollars (``round_sales``), while it has cents: so that cents tell nothing."""
    right = _gst(TAXABLE[0], amount)
    for _ in range(16 if whole else 8):
        how = pick(rng, MISCALCULATIONS)
        if how == "tenth":
            wrong = (amount * _TENTH).quantize(_CENT, rounding=ROUND_HALF_UP)
        elif how == "keyed":
            wrong = keyed_wrong(rng, right)
        else:
            break
        if wrong != right and not undone_by_rounding(wrong, right) and not (whole and wrong % 1):
            return wrong
    return right + 1 if right <= 1 or rng.random() < 0.5 else right - 1


def _treatment_code(row: Row) -> str:
    """The fault every mix but ``mixed`` plants in a faulty row of `row`'s treatment."""
    return GST_MISCALCULATED if row.category in _TAXABLE else GST_ON_GST_FREE


def _planted_row(rng: random.Random, row: Row, whole: bool = False) -> Row:
    """`row` with `_treatment_code`'s fault: a taxable row's GST miscalculated (in `whole` dollars
    where its right GST is), GST charged on any other."""
    if row.category in _TAXABLE:
        return row._replace(gst=_miscalculated(rng, row.amount, whole))
    return row._replace(gst=(row.amount / _ELEVEN).quantize(_CENT, rounding=ROUND_HALF_UP))


def _inject(rng: random.Random, row: Row, code: str, quarter: Quarter, whole: bool = False) -> Row:
    """`row` changed so that `code`'s condition holds (a miscalculation in `whole` dollars, as
    `_miscalculated` draws it, where the row's right GST is whole dollars)."""
    if code == GST_MISCALCULATED:
        category = row.category if row.category in _TAXABLE else pick(rng, TAXABLE)
        amount = row.amount if row.amount >= 5 else _amount(rng)
        wrong = (
            _miscalculated(rng, amount, whole=True)
            if whole
            else (amount * _TENTH).quantize(_CENT, rounding=ROUND_HALF_UP)  # 10% of the inclusive price
        )
        return row._replace(category=category, amount=amount, gst=wrong)
    if code == GST_ON_GST_FREE:
        category = pick(rng, GST_FREE + INPUT_TAXED)
        charged = (row.amount / _ELEVEN).quantize(_CENT, rounding=ROUND_HALF_UP)
        return row._replace(category=category, gst=charged)
    if code == OUTSIDE_PERIOD:
        gap = timedelta(days=1 + int(rng.random() * 40))
        return row._replace(date=quarter.start - gap if rng.random() < 0.5 else quarter.end + gap)
    if code == MISSING_ABN_OVER_THRESHOLD:
        if row.amount > ABN_THRESHOLD:
            return row._replace(abn="")
        amount = _amount(rng, 10_000, 300_000)
        gst_was_right = row.gst == _gst(row.category, row.amount)
        return row._replace(
            amount=amount, gst=_gst(row.category, amount) if gst_was_right else row.gst, abn=""
        )
    raise ValueError(f"cannot inject {code!r} into a row")


def _codes_for(rng: random.Random, kind: str, allowed: frozenset[str]) -> list[str]:
    """One fault (sometimes two) of `allowed` that a row of `kind` can carry, or none when no
    allowed code fits the row; duplicates are planted separately."""
    pool = [GST_MISCALCULATED, GST_ON_GST_FREE, OUTSIDE_PERIOD, DUPLICATE_INVOICE]
    if kind == PURCHASE:
        pool.append(MISSING_ABN_OVER_THRESHOLD)
    pool = [code for code in pool if code in allowed]
    if not pool:
        return []
    first = pool[int(rng.random() * len(pool))]
    if first != DUPLICATE_INVOICE and rng.random() < 0.15:
        rest = [c for c in pool if c not in (first, DUPLICATE_INVOICE)]
        if rest:
            second = rest[int(rng.random() * len(rest))]
            if {first, second} != {GST_MISCALCULATED, GST_ON_GST_FREE}:
                return [first, second]
    return [first]


def generate(
    rng: random.Random,
    num_rows: int,
    fault_rate: float,
    fault_codes: Iterable[str] = FAULT_CODES,
    row_mix: str = MIXED,
) -> Ledger:
    """A ledger of exactly `num_rows` rows; `fault_rate` is the expected share of faulty rows,
    each planted with codes of `fault_codes` only, and the clean rows as `row_mix` says
    (`ROW_MIXES`; the default draws exactly as before the knob existed).

    A rate of 0 plants nothing (invoice numbers are unique, so the ledger is clean); any
    positive rate marks at least one row faulty, and a faulty row is planted unless no code of
    `fault_codes` fits it (missing_abn_over_threshold alone fits no sale). In every mix but ``mixed`` a
    faulty row gets the fault of its treatment (`_treatment_code`) when that code is allowed, else one
    of the others as in ``mixed``.
    """
    allowed = frozenset(fault_codes)
    check_rows(num_rows, MIN_ROWS, "num_transactions")
    if row_mix not in ROW_MIXES:
        raise ValueError(f"row_mix must be one of {list(ROW_MIXES)}, got {row_mix!r}")
    mixed = row_mix == MIXED
    purchases = mixed or row_mix == SALES_AND_PURCHASES
    quarter = _quarter(rng)
    business = pick(rng, BUSINESSES)
    first_day = quarter.start.toordinal()
    span = quarter.end.toordinal() - first_day + 1
    faulty = plan_faulty(rng, num_rows, fault_rate)
    book = InvoiceBook(rng)

    rows: list[Row] = []
    duplicates: list[int] = []  # slots that will copy an earlier row
    for slot in range(num_rows):
        kind, invoice = book.next(rng, SALE_SHARE if purchases else 1.0)
        if mixed:
            row = _clean_row(rng, first_day, span, invoice, kind)
        else:
            row = _treated_row(rng, first_day, span, invoice, row_mix == ROUND_SALES, kind)
            if faulty[slot] and _treatment_code(row) in allowed:
                rows.append(_planted_row(rng, row, row_mix == ROUND_SALES))
                continue
        if faulty[slot]:
            codes = _codes_for(rng, kind, allowed)
            if codes == [DUPLICATE_INVOICE]:
                duplicates.append(slot)
            else:
                for code in codes:
                    row = _inject(rng, row, code, quarter, row_mix == ROUND_SALES)
        rows.append(row)

    ordered = plant_duplicates(rng, rows, duplicates, quarter.end)
    return Ledger(
        business, quarter, [row._replace(txn_id=f"T{n:03d}") for n, row in enumerate(ordered, start=1)]
    )


def _widest(options: tuple[str, ...]) -> str:
    return max(options, key=len)


def widest_ledger(num_rows: int) -> Ledger:
    """A ledger at least as wide, field by field, as any `generate` makes with `num_rows` rows.

    Rendered, it bounds the prompt of every such task: the longest business name and quarter,
    and `num_rows` copies of a row that takes, in every column, the widest text that column
    can hold (the last txn_id and invoice numbers, the longest names, the largest price, an
    ABN). Such a row need not be one the generator writes; it only has to be as wide.
    """
    price = Decimal(PRICE_CENTS[1] - 1).scaleb(-2)  # GST, recorded or correct, is below the price
    row = Row(
        txn_id=f"T{num_rows:03d}",
        date=date(max(YEARS), 12, 31),  # every date is written YYYY-MM-DD
        kind=_widest((SALE, PURCHASE)),
        counterparty=_widest(CUSTOMERS + SUPPLIERS),
        invoice=widest_invoice(num_rows),
        category=_widest(CATEGORIES),
        amount=price,
        gst=price,
        abn=_abn_text("9" * 11),
    )
    quarters = [_quarter_of(year, month, day) for year in YEARS for month, day in QUARTER_STARTS]
    quarter = max(quarters, key=lambda q: len(q.describe()))
    return Ledger(_widest(BUSINESSES), quarter, [row] * num_rows)
