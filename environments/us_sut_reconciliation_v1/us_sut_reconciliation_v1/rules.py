"""The authority: the State of Lone Pine rulebook, re-deriving the return and the fault key.

The jurisdiction is illustrative: a 6.25% state rate plus a local rate for each ZIP in
`LOCAL_RATES`; the rates are stylized, not anyone's current law. `reconcile()` reads only
what the model is shown (the quarter, the business ZIP and the rows) and never what the
generator meant to plant. The prompt states every rule here in words.
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from decimal import ROUND_HALF_UP, Decimal

from piv_core.ledger_audit.grading import DUPLICATE_INVOICE, OUTSIDE_PERIOD, Key, audit_rows
from piv_core.parsing.money import cents_of

from us_sut_reconciliation_v1.ledger import EXEMPT, SALE, TAXABLE, Quarter, Row

TAX_ON_EXEMPT_ITEM = "tax_on_exempt_item"
TAX_MISCALCULATED = "tax_miscalculated"
MISSING_EXEMPTION_CERT = "missing_exemption_cert"
NEXUS_MISALLOCATION = "nexus_misallocation"
FAULT_CODES = (
    TAX_ON_EXEMPT_ITEM,
    TAX_MISCALCULATED,
    DUPLICATE_INVOICE,
    OUTSIDE_PERIOD,
    MISSING_EXEMPTION_CERT,
    NEXUS_MISALLOCATION,
)

STATE_RATE = Decimal("6.25")
"""Percent, charged everywhere in the state."""
LOCAL_RATES: dict[str, tuple[str, Decimal]] = {
    "88001": ("Lone Pine Central", Decimal("2.000")),
    "88005": ("Lone Pine Eastgate", Decimal("1.750")),
    "88011": ("Cedar Flats", Decimal("1.500")),
    "88017": ("Granite Springs", Decimal("2.250")),
    "88023": ("Willow Bend", Decimal("1.000")),
    "88029": ("Copper Ridge", Decimal("2.500")),
    "88034": ("Aspen Hollow", Decimal("0.500")),
    "88040": ("Bear Creek", Decimal("1.250")),
    "88046": ("Silver Lake", Decimal("2.125")),
    "88052": ("Redrock Junction", Decimal("0.875")),
    "88058": ("Pine Hollow", Decimal("1.375")),
    "88063": ("Elk Meadow (unincorporated)", Decimal("0.000")),
    "88070": ("Fox Run", Decimal("2.750")),
    "88077": ("Juniper Mesa", Decimal("1.625")),
}
"""ZIP -> (place, local rate in percent)."""

CERT_THRESHOLD = Decimal("200.00")
"""An exemption claimed on a taxable category above this gross amount needs a certificate ID."""

FIGURES = ("gross_sales", "exempt_sales", "taxable_sales", "sales_tax_due", "use_tax_due", "net_remittance")
GRADED_FIGURES = ("gross_sales", "taxable_sales", "sales_tax_due", "use_tax_due", "net_remittance")

_CENT = Decimal("0.01")
_HUNDRED = Decimal(100)
_ZERO = Decimal("0.00")
_TAXABLE = frozenset(TAXABLE)
_EXEMPT = frozenset(EXEMPT)


def combined_rate(zip_code: str) -> Decimal:
    """State plus local rate of `zip_code`, in percent."""
    try:
        return STATE_RATE + LOCAL_RATES[zip_code][1]
    except KeyError:
        raise ValueError(f"ZIP {zip_code!r} is not in the Lone Pine rate table") from None


def tax_at(gross: Decimal, rate_percent: Decimal) -> Decimal:
    """`gross` x rate, rounded to the cent on its own line, half a cent up."""
    return (gross * rate_percent / _HUNDRED).quantize(_CENT, rounding=ROUND_HALF_UP)


def claim_honoured(row: Row) -> bool:
    """A taxable-category row claimed exempt with a certificate ID, or at or under the threshold."""
    certified = row.cert.strip() != "" or row.gross <= CERT_THRESHOLD
    return row.claimed and row.category in _TAXABLE and certified


def missing_cert(row: Row) -> bool:
    """A taxable-category row claimed exempt above the threshold with no certificate ID."""
    return row.claimed and row.category in _TAXABLE and row.gross > CERT_THRESHOLD and not row.cert.strip()


def is_exempt(row: Row) -> bool:
    """Exempt category, or a certified (honoured) exemption claim such as a resale."""
    return row.category in _EXEMPT or claim_honoured(row)


def sales_tax(row: Row) -> Decimal:
    """The tax a sale should carry: 0 when exempt, else at its delivery ZIP's combined rate."""
    return _ZERO if is_exempt(row) else tax_at(row.gross, combined_rate(row.zip))


def use_tax(row: Row, business_zip: str) -> Decimal:
    """Use tax on a purchase: taxable and not honoured-exempt, no tax paid -> business-ZIP rate."""
    if row.category not in _TAXABLE or claim_honoured(row) or row.tax != 0:
        return _ZERO
    return tax_at(row.gross, combined_rate(business_zip))


def row_tax(row: Row, business_zip: str) -> Decimal:
    """A row's correct tax: the sales tax of a sale, the use tax due on a purchase."""
    return sales_tax(row) if row.kind == SALE else use_tax(row, business_zip)


def row_taxes(rows: Iterable[Row], business_zip: str) -> dict[str, int]:
    """Every row's correct tax in cents, by transaction_id (the per-row figures a task may ask for)."""
    return {row.txn_id: cents_of(row_tax(row, business_zip)) for row in rows}


def row_faults(
    row: Row,
    quarter: Quarter,
    business_zip: str,
    seen_invoices: set[str],
    codes: Container[str] = FAULT_CODES,
) -> tuple[str, ...]:
    """Every fault code of `codes` whose condition holds for `row` (`seen_invoices`: invoices on
    rows above it).

    `codes` are the codes whose rules apply: all six unless the task's prompt states fewer (a
    focused prompt). A code left out is never reported; two of the rules then read as that
    prompt states them: without ``nexus_misallocation``, any wrong tax on a taxable sale is
    ``tax_miscalculated`` (origin-rate tax included), and without ``missing_exemption_cert``
    an uncertified claim's recorded tax is checked like any other sale's."""
    found: set[str] = set()
    uncertified = missing_cert(row)
    if row.kind == SALE:
        if is_exempt(row):
            if row.tax != 0:
                found.add(TAX_ON_EXEMPT_ITEM)
        elif not (uncertified and MISSING_EXEMPTION_CERT in codes) and row.tax != sales_tax(row):
            origin = tax_at(row.gross, combined_rate(business_zip))
            nexus = row.tax == origin and NEXUS_MISALLOCATION in codes
            found.add(NEXUS_MISALLOCATION if nexus else TAX_MISCALCULATED)
    if row.invoice in seen_invoices:
        found.add(DUPLICATE_INVOICE)
    if not quarter.contains(row.date):
        found.add(OUTSIDE_PERIOD)
    if uncertified:
        found.add(MISSING_EXEMPTION_CERT)
    return tuple(code for code in FAULT_CODES if code in found and code in codes)


def reconcile(
    quarter: Quarter, business_zip: str, rows: list[Row], codes: Iterable[str] = FAULT_CODES
) -> Key:
    """Re-derive the corrected return (cents by figure name) and the fault key from the ledger
    as listed, under the rules of fault codes `codes` (see `row_faults`)."""
    combined_rate(business_zip)  # an unknown business ZIP is an error even with no untaxed purchase
    applied = frozenset(codes)
    faults, kept = audit_rows(rows, lambda row, seen: row_faults(row, quarter, business_zip, seen, applied))
    return Key(totals((row for row, _ in kept), business_zip), faults)


def totals(kept: Iterable[Row], business_zip: str, trusted: Container[str] = ()) -> dict[str, int]:
    """The return's figures in cents over the rows that stay in it.

    A row whose txn_id is in `trusted` is taken as the books record it (a policy's mistake, never
    the rules'): a sale is exempt when it recorded no tax and owes the tax it recorded, and a
    purchase's exemption claim is honoured."""
    gross = exempt = sales_due = use_due = Decimal(0)
    for row in kept:
        as_booked = row.txn_id in trusted
        if row.kind == SALE:
            gross += row.gross
            if (row.tax == 0) if as_booked else is_exempt(row):
                exempt += row.gross
            else:
                sales_due += row.tax if as_booked else sales_tax(row)
        elif not (as_booked and row.claimed):
            use_due += use_tax(row, business_zip)
    amounts = (gross, exempt, gross - exempt, sales_due, use_due, sales_due + use_due)
    return {name: cents_of(amount) for name, amount in zip(FIGURES, amounts, strict=True)}
