"""Planting duplicate rows in a generated ledger: the same invoice booked twice.

`plant_duplicates` turns the chosen slots into copies of rows drawn from the others (the
originals), each dated 0-20 days after its source but never past the period's last day unless
the source already is, and returns the rows in ledger order: by date, an original before its
copies. It draws from `rng` in a fixed order, so a generator that uses it stays a pure function
of its seed.
"""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Any, TypeVar

RowT = TypeVar("RowT", bound=Any)
"""A NamedTuple row with a ``date`` field."""


def plant_duplicates(rng: random.Random, rows: list[RowT], slots: list[int], last_day: date) -> list[RowT]:
    """`rows` with each slot of `slots` replaced by a later copy of an original, in ledger order."""
    copies = set(slots)
    originals = [slot for slot in range(len(rows)) if slot not in copies]
    for slot in slots:
        if not originals:  # every slot drew a duplicate: this one stays an original
            originals.append(slot)
            copies.discard(slot)
            continue
        source = rows[originals[int(rng.random() * len(originals))]]
        later = min(source.date + timedelta(days=int(rng.random() * 21)), max(source.date, last_day))
        rows[slot] = source._replace(date=later)
    order = sorted(range(len(rows)), key=lambda i: (rows[i].date, i in copies, i))
    return [rows[i] for i in order]
