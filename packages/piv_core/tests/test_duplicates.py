"""Duplicate planting: copies of originals, dated no earlier and within the period, in ledger order."""

import random
from datetime import date
from typing import NamedTuple

from piv_core.duplicates import plant_duplicates


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
