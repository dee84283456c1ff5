"""Fault planning: which rows are faulty, invoice numbers, and duplicates (later copies, in ledger order)."""

import random
from datetime import date
from typing import NamedTuple

import pytest
from piv_core.ledger_audit.plan import (
    PURCHASE,
    SALE,
    InvoiceBook,
    check_rows,
    plan_faulty,
    plant_duplicates,
    widest_invoice,
)


class Row(NamedTuple):
    invoice: str
    date: date


def test_slots_become_later_copies_of_originals_in_date_order():
    for seed in range(200):
        rng = random.Random(seed)
        rows = [Row(f"INV-{i}", date(2025, 1, 1 + rng.randrange(28))) for i in range(12)]
        slots = sorted(rng.sample(range(12), 3))
        originals = {r.invoice: r.date for i, r in enumerate(rows) if i not in slots}
        out = plant_duplicates(rng, list(rows), slots, date(2025, 1, 31))
        assert len(out) == 12 and [r.date for r in out] == sorted(r.date for r in out)
        # Every row is an original or a copy of one: 9 invoices, none of a replaced slot.
        assert {r.invoice for r in out} <= set(originals) and len(set(originals)) == 9
        for r in out:
            assert originals[r.invoice] <= r.date <= date(2025, 1, 31)
        firsts = {}
        for r in out:
            firsts.setdefault(r.invoice, r)  # in ledger order an original comes before its copies
        assert all(firsts[r.invoice] == Row(r.invoice, originals[r.invoice]) for r in out)


def test_all_slots_duplicates_keeps_one_original():
    rows = [Row("INV-1", date(2025, 1, 5)), Row("INV-2", date(2025, 1, 6))]
    out = plant_duplicates(random.Random(1), list(rows), [0, 1], date(2025, 1, 31))
    assert {r.invoice for r in out} == {"INV-1"}


def test_a_positive_rate_plants_at_least_one_fault_and_zero_plants_none():
    for seed in range(300):
        assert any(plan_faulty(random.Random(seed), 4, 0.01))
        assert not any(plan_faulty(random.Random(seed), 40, 0.0))
    shares = [sum(plan_faulty(random.Random(seed), 100, 0.3)) / 100 for seed in range(200)]
    assert 0.27 < sum(shares) / len(shares) < 0.33


def test_invoice_numbers_are_unique_and_never_wider_than_the_widest():
    for seed in range(50):
        rng = random.Random(seed)
        book = InvoiceBook(rng)
        rows = [book.next(rng, 0.5) for _ in range(200)]
        invoices = [invoice for _, invoice in rows]
        assert len(set(invoices)) == 200
        assert {kind for kind, _ in rows} == {SALE, PURCHASE}
        assert all(invoice.startswith("INV-" if kind == SALE else "PO-") for kind, invoice in rows)
        assert max(map(len, invoices)) <= len(widest_invoice(200))


def test_too_few_rows_names_the_knob():
    check_rows(5, 5, "num_rows")
    with pytest.raises(ValueError, match="num_rows must be >= 5, got 4"):
        check_rows(4, 5, "num_rows")
