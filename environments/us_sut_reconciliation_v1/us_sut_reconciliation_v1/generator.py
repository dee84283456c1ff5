"""Procedural ledgers: one quarter of sales and purchases for a Lone Pine business, with planted faults.

The generator decides what the books look like and which faults to plant; it never computes
the return or the fault key (`rules.reconcile` does, from the finished rows). It borrows the
rate table and the per-line rounding from `rules` only to write the tax column the books
record. Every draw comes from the `random.Random` it is handed, so a ledger is a pure function
of its seed. `widest_ledger` is the bound on all of them that sizes the prompt.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from datetime import date, timedelta
from decimal import ROUND_FLOOR, Decimal
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

from us_sut_reconciliation_v1.ledger import CATEGORIES, EXEMPT, PURCHASE, SALE, TAXABLE, Quarter, Row
from us_sut_reconciliation_v1.rules import (
    CERT_THRESHOLD,
    DUPLICATE_INVOICE,
    FAULT_CODES,
    LOCAL_RATES,
    MISSING_EXEMPTION_CERT,
    NEXUS_MISALLOCATION,
    OUTSIDE_PERIOD,
    STATE_RATE,
    TAX_MISCALCULATED,
    TAX_ON_EXEMPT_ITEM,
    combined_rate,
    tax_at,
)

MIN_ROWS = 5
YEARS = (2023, 2024, 2025, 2026)
BUSINESSES = (
    "Summit Outfitters",
    "Cedar & Stone Home",
    "Granite Peak Electronics",
    "Juniper Market",
    "Ridgeline Office Supply",
    "Bearpaw Medical Supply",
    "Copper Kettle Catering",
    "Silverline Software",
)
ZIPS = tuple(LOCAL_RATES)
BUSINESS_ZIPS = tuple(z for z, (_, local) in LOCAL_RATES.items() if local > 0)
"""A business sits where a local rate applies, so an origin-rate tax never equals a state-only one."""
WHOLE_RATE_ZIPS = tuple(z for z in BUSINESS_ZIPS if combined_rate(z) == combined_rate(z).to_integral_value())
"""The business ZIPs whose combined rate is a whole percent: where a ``round_home_sales`` business
sits, so that each sale's tax is its price's hundredth times a whole number."""
TENTH_RATE_ZIPS = tuple(z for z in ZIPS if combined_rate(z) == combined_rate(z).quantize(Decimal("0.1")))
"""The ZIPs whose combined rate is a whole number of tenths of a percent (8, 8.5, 7.5, 9): where a
``tenth_rate_sales`` sale is delivered."""

PURCHASE_CODES = (OUTSIDE_PERIOD, MISSING_EXEMPTION_CERT, DUPLICATE_INVOICE)
SALE_CODES = (TAX_ON_EXEMPT_ITEM, TAX_MISCALCULATED, NEXUS_MISALLOCATION, *PURCHASE_CODES)

PRICE_CENTS = (500, 600_000)
"""Every gross amount is drawn from [low, high) cents."""
MIXED, SALES, TENTH_RATE_SALES = "mixed", "sales", "tenth_rate_sales"
HOME_SALES, DOLLAR_HOME_SALES, ROUND_HOME_SALES = "home_sales", "dollar_home_sales", "round_home_sales"
ROW_MIXES = (MIXED, SALES, TENTH_RATE_SALES, HOME_SALES, DOLLAR_HOME_SALES, ROUND_HOME_SALES)
"""What a ledger's rows are: sales and purchases of every kind, faults planted as the default
configuration plants them (``mixed``); or sales with no exemption claim only, priced anywhere in
`PRICE_CENTS` and delivered to any ZIP (``sales``) or to a ZIP of `TENTH_RATE_ZIPS`
(``tenth_rate_sales``), or delivered to the business ZIP by a business
in a ZIP whose combined rate is a whole percent, at any price (``home_sales``), at a whole number
of dollars anywhere in `PRICE_CENTS` (``dollar_home_sales``) or at a whole number of fifty
dollars, $100 to $50 x `ROUND_FIFTIES` (``round_home_sales``). In the sales-only mixes a
row's category is drawn first (`SALES_TREATMENTS`) and whether it is faulty does not depend on it:
a faulty exempt sale is taxed, a faulty taxable sale's tax is miscalculated (`_planted_sale`), and
where ``outside_period`` may be planted some faulty sales are dated outside the quarter instead or
as well (`_dated_sale`). So no category, price or recorded figure tells a faulty row from a clean
one without the product and the comparison."""
HOME_MIXES = (HOME_SALES, DOLLAR_HOME_SALES, ROUND_HOME_SALES)
"""The mixes whose sales are all delivered to the business ZIP, taxed there at a whole percent."""
ROUND_FIFTIES = 20
SALES_TREATMENTS = ((TAXABLE, 0.9), (EXEMPT, 0.1))
"""The categories of a sales-only mix's rows and their shares. An exempt sale's verdict needs no
product (its correct tax is 0.00 whatever its price), so at the rungs that teach the product such
sales are few, and what a rule reading only the category and the recorded figure earns is a small
share of the reward beside the products."""
OUTSIDE_SHARE = 0.3
"""In a sales-only mix that may plant ``outside_period``, the share of faulty sales dated outside
the quarter."""
BOTH_SHARE = 0.8
"""The share of those that carry their category's fault as well (`_dated_sale`); the others' tax
is right. So the date alone decides no other verdict (a sale dated outside has its tax wrong four
times in five, one inside about twice in five), and the rows whose whole audit is the date are
three in a hundred: a rule over the date and the category earns about as little as the rule for
the exempt sales does below this rung (`bench/shortcuts.py`)."""
SALE_SHARE = 0.6
"""The chance that a row is a sale."""
CERT_NUMBERS = (100_000, 900_000)
"""Certificate IDs are ``RC-`` and a number drawn from [low, low + span)."""

_ZERO = Decimal("0.00")
_ONE = Decimal(1)
_HUNDRED = Decimal(100)
_THRESHOLD_CENTS = int(CERT_THRESHOLD * 100)


class Ledger(NamedTuple):
    business: str
    business_zip: str
    quarter: Quarter
    rows: list[Row]


def _gross(rng: random.Random, low: int = PRICE_CENTS[0], high: int = PRICE_CENTS[1]) -> Decimal:
    """A pre-tax price in [low, high] cents, log-uniform so small and large invoices both occur."""
    return Decimal(int(low * (high / low) ** rng.random())).scaleb(-2)


def _cert(rng: random.Random) -> str:
    return f"RC-{CERT_NUMBERS[0] + int(rng.random() * CERT_NUMBERS[1])}"


def _clean_row(rng: random.Random, day: date, invoice: str, kind: str, business_zip: str) -> Row:
    """A fault-free row: correct tax, a certificate wherever the threshold asks for one."""
    draw = rng.random
    exempt_category = draw() < (0.25 if kind == SALE else 0.15)
    category = pick(rng, EXEMPT if exempt_category else TAXABLE)
    gross = _gross(rng)
    zip_code = business_zip if kind == PURCHASE or draw() < 0.3 else pick(rng, ZIPS)
    claimed, cert = draw() < (0.08 if exempt_category else 0.15), ""
    if claimed and (gross > CERT_THRESHOLD or draw() < 0.5):
        cert = _cert(rng)
    if exempt_category or claimed:
        tax = _ZERO
    elif kind == SALE:
        tax = tax_at(gross, combined_rate(zip_code))
    else:  # an in-state vendor charges tax; a remote one charges none and use tax falls due
        tax = tax_at(gross, combined_rate(zip_code)) if draw() < 0.55 else _ZERO
    return Row("", invoice, day, kind, category, gross, tax, zip_code, claimed, cert)


def _sale(rng: random.Random, day: date, invoice: str, business_zip: str, row_mix: str) -> Row:
    """A fault-free sale of the sales-only `row_mix`, with no claim: its category drawn by
    `SALES_TREATMENTS`."""
    category = pick(rng, drawn_share(rng, SALES_TREATMENTS))
    if row_mix == ROUND_HOME_SALES:
        gross = Decimal(50 * (2 + int(rng.random() * (ROUND_FIFTIES - 1)))).quantize(_ZERO)
    elif row_mix == DOLLAR_HOME_SALES:
        gross = _gross(rng).to_integral_value(ROUND_FLOOR).quantize(_ZERO)
    else:
        gross = _gross(rng)
    if row_mix in HOME_MIXES:
        zip_code = business_zip
    else:
        zip_code = pick(rng, TENTH_RATE_ZIPS if row_mix == TENTH_RATE_SALES else ZIPS)
    tax = _ZERO if category in EXEMPT else tax_at(gross, combined_rate(zip_code))
    return Row("", invoice, day, SALE, category, gross, tax, zip_code, False, "")


def _planted_sale(rng: random.Random, row: Row) -> Row:
    """`row` (a sale of a sales-only mix) with the fault of its category: tax charged on an exempt
    one, a taxable one's tax miscalculated (`_planted_sale`)."""
    right = tax_at(row.gross, combined_rate(row.zip))
    if row.category in EXEMPT:
        return row._replace(tax=right)
    for _ in range(8):
        wrong = _miscalculated(rng, row.gross, row.zip)
        if not undone_by_rounding(wrong, right):
            return row._replace(tax=wrong)
    return row._replace(tax=right + 1)


def _dated_sale(rng: random.Random, row: Row, quarter: Quarter, business_zip: str, dated: bool) -> Row:
    """A faulty sale of a sales-only mix: the fault of its category (`_planted_sale`); where
    ``outside_period`` may be planted (`dated`), dated outside the quarter instead
    (`OUTSIDE_SHARE`), or as well (`BOTH_SHARE` of those). No draw is made for the date unless `dated`."""
    if not dated or rng.random() >= OUTSIDE_SHARE:
        return _planted_sale(rng, row)
    if rng.random() < BOTH_SHARE:
        row = _planted_sale(rng, row)
    return _inject(rng, row, OUTSIDE_PERIOD, quarter, business_zip)


def _miscalculated(rng: random.Random, gross: Decimal, zip_code: str) -> Decimal:
    """A wrong tax the way books get it wrong: local rate left out, tax extracted from a price
    treated as tax-inclusive, or a keying slip."""
    rate = combined_rate(zip_code)
    right = tax_at(gross, rate)
    how = int(rng.random() * 3)
    if how == 0:
        wrong = tax_at(gross, STATE_RATE)
    elif how == 1:  # g·r/(1+r): the rate applied as if the tax were already inside the price
        wrong = tax_at(gross, rate / (_ONE + rate / _HUNDRED))
    else:
        wrong = keyed_wrong(rng, right)
    return wrong if wrong != right else keyed_wrong(rng, right)


def _inject(rng: random.Random, row: Row, code: str, quarter: Quarter, business_zip: str) -> Row:
    """`row` changed so that `code`'s condition holds."""
    if code == OUTSIDE_PERIOD:
        gap = timedelta(days=1 + int(rng.random() * 45))
        return row._replace(date=quarter.start - gap if rng.random() < 0.5 else quarter.end + gap)
    if code == MISSING_EXEMPTION_CERT:
        category = row.category if row.category in TAXABLE else pick(rng, TAXABLE)
        gross = row.gross if row.gross > CERT_THRESHOLD else _gross(rng, _THRESHOLD_CENTS + 2_500)
        # A vendor that was charging tax keeps charging it on the uncertified claim (no draw).
        charged = row.kind == PURCHASE and row.tax != 0
        tax = tax_at(gross, combined_rate(row.zip)) if charged else _ZERO
        return row._replace(category=category, gross=gross, tax=tax, claimed=True, cert="")
    gross = row.gross if row.gross >= 20 else _gross(rng, 2_000)
    if code == TAX_ON_EXEMPT_ITEM:
        if rng.random() < 0.75:  # an exempt category taxed anyway
            row = row._replace(category=pick(rng, EXEMPT), claimed=False, cert="")
        else:  # a certified resale taxed anyway
            row = row._replace(category=pick(rng, TAXABLE), claimed=True, cert=_cert(rng))
        return row._replace(gross=gross, tax=tax_at(gross, combined_rate(row.zip)))
    row = row._replace(category=pick(rng, TAXABLE), gross=gross, claimed=False, cert="")
    if code == TAX_MISCALCULATED:
        return row._replace(tax=_miscalculated(rng, gross, row.zip))
    if code == NEXUS_MISALLOCATION:
        origin = combined_rate(business_zip)
        elsewhere = [z for z in ZIPS if combined_rate(z) != origin]
        return row._replace(zip=pick(rng, elsewhere), tax=tax_at(gross, origin))
    raise ValueError(f"cannot inject {code!r} into a row")


def _codes_for(rng: random.Random, kind: str, allowed: frozenset[str]) -> list[str]:
    """One fault of `allowed` a row of `kind` can carry, sometimes dated outside the quarter as
    well; none when no allowed code fits the row."""
    pool = [code for code in (SALE_CODES if kind == SALE else PURCHASE_CODES) if code in allowed]
    if not pool:
        return []
    first = pick(rng, pool)
    if first not in (OUTSIDE_PERIOD, DUPLICATE_INVOICE) and OUTSIDE_PERIOD in allowed and rng.random() < 0.15:
        return [first, OUTSIDE_PERIOD]
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

    A rate of 0 plants nothing (invoice numbers are unique, so the quarter is clean); any
    positive rate marks at least one row faulty, and a faulty row is planted unless no code of
    `fault_codes` fits it (a purchase carries none of the sale-only codes). In a sales-only mix
    a faulty row gets the fault of its category when that code is allowed (`_dated_sale`), else
    one of the others as in ``mixed``.
    """
    allowed = frozenset(fault_codes)
    check_rows(num_rows, MIN_ROWS, "num_rows")
    if row_mix not in ROW_MIXES:
        raise ValueError(f"row_mix must be one of {list(ROW_MIXES)}, got {row_mix!r}")
    mixed = row_mix == MIXED
    quarter = Quarter(pick(rng, YEARS), 1 + int(rng.random() * 4))
    zips = WHOLE_RATE_ZIPS if row_mix in HOME_MIXES else BUSINESS_ZIPS
    business, business_zip = pick(rng, BUSINESSES), pick(rng, zips)
    first_day = quarter.start.toordinal()
    span = quarter.end.toordinal() - first_day + 1
    faulty = plan_faulty(rng, num_rows, fault_rate)
    book = InvoiceBook(rng)

    rows: list[Row] = []
    copies: list[int] = []  # slots that will repeat an earlier row's invoice
    for slot in range(num_rows):
        kind, invoice = book.next(rng, SALE_SHARE if mixed else 1.0)
        day = date.fromordinal(first_day + int(rng.random() * span))
        if mixed:
            row = _clean_row(rng, day, invoice, kind, business_zip)
        else:
            row = _sale(rng, day, invoice, business_zip, row_mix)
            code = TAX_ON_EXEMPT_ITEM if row.category in EXEMPT else TAX_MISCALCULATED
            if faulty[slot] and code in allowed:
                rows.append(_dated_sale(rng, row, quarter, business_zip, OUTSIDE_PERIOD in allowed))
                continue
        if faulty[slot]:
            codes = _codes_for(rng, kind, allowed)
            if codes == [DUPLICATE_INVOICE]:
                copies.append(slot)
            for code in codes:
                if code != DUPLICATE_INVOICE:
                    row = _inject(rng, row, code, quarter, business_zip)
        rows.append(row)

    ordered = plant_duplicates(rng, rows, copies, quarter.end)
    numbered = [row._replace(txn_id=f"txn_{n:03d}") for n, row in enumerate(ordered, start=1)]
    return Ledger(business, business_zip, quarter, numbered)


def _widest(options: Sequence[str]) -> str:
    return max(options, key=len)


def widest_ledger(num_rows: int) -> Ledger:
    """A ledger at least as wide, field by field, as any `generate` makes with `num_rows` rows.

    Rendered, it bounds the prompt of every such task: the business and business ZIP with the
    longest names, a quarter (every quarter is written alike), and `num_rows` copies of a row
    that takes, in every column, the widest text that column can hold (the last transaction id
    and invoice numbers, the longest category, the largest amount, a certificate). Such a row
    need not be one the generator writes; it only has to be as wide.
    """
    gross = Decimal(PRICE_CENTS[1] - 1).scaleb(-2)  # any tax recorded is written in fewer digits
    business_zip = max(BUSINESS_ZIPS, key=lambda z: len(LOCAL_RATES[z][0]))
    row = Row(
        txn_id=f"txn_{num_rows:03d}",
        invoice=widest_invoice(num_rows),
        date=date(max(YEARS), 12, 31),  # every date is written YYYY-MM-DD
        kind=_widest((SALE, PURCHASE)),
        category=_widest(CATEGORIES),
        gross=gross,
        tax=gross,
        zip=_widest(ZIPS),
        claimed=False,  # written "false", the longer flag
        cert=f"RC-{sum(CERT_NUMBERS) - 1}",
    )
    return Ledger(_widest(BUSINESSES), business_zip, Quarter(max(YEARS), 4), [row] * num_rows)
