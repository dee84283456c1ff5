"""Planting faults in a generated ledger: which rows are faulty, invoice numbers, duplicate bookings.

The ledger generators share the shape of their books: each row is a sale (``INV-`` numbers,
consecutive) or a purchase (``PO-`` numbers, rising by uneven steps), an expected share of the
rows carries a planted fault, and a duplicate is a later copy of another row's invoice; a
figure keyed wrong (`keyed_wrong`) is slipped the way hands slip, and one that a rounding of the
books' figure would undo (`undone_by_rounding`) is one a shortcut could fix without the work. What
a fault does to a row stays with each environment. Every helper draws from the `random.Random`
it is handed in a fixed order, so a generator that uses them stays a pure function of its seed.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import date, timedelta
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal
from typing import Any, TypeVar

SALE, PURCHASE = "sale", "purchase"
SALE_NUMBERS = (1000, 8000)
"""The first sale invoice number is drawn from [low, low + span); each sale adds one."""
PURCHASE_NUMBERS = (10_000, 80_000)
"""Likewise for purchase orders, each adding 1 to `PURCHASE_STEP`."""
PURCHASE_STEP = 40
COPY_DAYS = 21
"""A duplicate is booked 0 to COPY_DAYS - 1 days after the row it copies."""

T = TypeVar("T")
RowT = TypeVar("RowT", bound=Any)
"""A NamedTuple row with a ``date`` field."""


def pick(rng: random.Random, options: Sequence[T]) -> T:
    """One of `options`, uniformly (one draw)."""
    return options[int(rng.random() * len(options))]


def drawn_share(rng: random.Random, shares: Sequence[tuple[T, float]]) -> T:
    """One of `shares`' options, each drawn with its share (the shares sum to 1; one draw)."""
    u = rng.random()
    for option, share in shares:
        if u < share:
            return option
        u -= share
    return shares[-1][0]


def check_rows(num_rows: int, minimum: int, knob: str) -> None:
    """A ledger needs at least `minimum` rows; the error names the knob that sets them."""
    if num_rows < minimum:
        raise ValueError(f"{knob} must be >= {minimum}, got {num_rows}")


def plan_faulty(rng: random.Random, num_rows: int, fault_rate: float) -> list[bool]:
    """Which rows carry a planted fault: each with probability `fault_rate`, and at least one
    when the rate is positive (a rate of 0 plants none)."""
    draw = rng.random
    faulty = [draw() < fault_rate for _ in range(num_rows)]
    if fault_rate > 0 and not any(faulty):
        faulty[int(draw() * num_rows)] = True
    return faulty


class InvoiceBook:
    """The ledger's invoice numbers: drawn starting points, then one number per row in order."""

    def __init__(self, rng: random.Random) -> None:
        self._sale = SALE_NUMBERS[0] + int(rng.random() * SALE_NUMBERS[1])
        self._purchase = PURCHASE_NUMBERS[0] + int(rng.random() * PURCHASE_NUMBERS[1])

    def next(self, rng: random.Random, sale_share: float) -> tuple[str, str]:
        """(kind, invoice) of the next row: a sale with probability `sale_share`, else a purchase."""
        if rng.random() < sale_share:
            self._sale += 1
            return SALE, f"INV-{self._sale}"
        self._purchase += 1 + int(rng.random() * PURCHASE_STEP)
        return PURCHASE, f"PO-{self._purchase}"


def widest_invoice(num_rows: int) -> str:
    """The longest invoice number a ledger of `num_rows` rows can hold."""
    last_sale = sum(SALE_NUMBERS) + num_rows
    last_purchase = sum(PURCHASE_NUMBERS) + PURCHASE_STEP * num_rows
    return max((f"INV-{last_sale}", f"PO-{last_purchase}"), key=len)


def plant_duplicates(rng: random.Random, rows: list[RowT], slots: list[int], last_day: date) -> list[RowT]:
    """`rows` with each slot of `slots` replaced by a later copy of an original, in ledger order.

    The originals are the other rows. A copy is dated 0-20 days after its source, never past
    `last_day` unless the source already is; when every slot drew a duplicate, the first one
    left stays an original. The result is sorted by date, an original before its copies.
    """
    copies = set(slots)
    originals = [slot for slot in range(len(rows)) if slot not in copies]
    for slot in slots:
        if not originals:
            originals.append(slot)
            copies.discard(slot)
            continue
        source = rows[originals[int(rng.random() * len(originals))]]
        later = min(source.date + timedelta(days=int(rng.random() * COPY_DAYS)), max(source.date, last_day))
        rows[slot] = source._replace(date=later)
    order = sorted(range(len(rows)), key=lambda i: (rows[i].date, i in copies, i))
    return [rows[i] for i in order]


def keyed_wrong(rng: random.Random, amount: Decimal) -> Decimal:
    """`amount` keyed wrong: two adjacent different digits swapped, or one digit mistyped (never
    `amount` itself)."""
    text = f"{amount:.2f}"
    swaps = [i for i in range(len(text) - 1) if (text[i] + text[i + 1]).isdigit() and text[i] != text[i + 1]]
    if swaps and rng.random() < 0.5:
        i = pick(rng, swaps)
        return Decimal(text[:i] + text[i + 1] + text[i] + text[i + 2 :])
    i = pick(rng, [i for i, ch in enumerate(text) if ch.isdigit()])
    digit = (int(text[i]) + 1 + int(rng.random() * 9)) % 10
    return Decimal(text[:i] + str(digit) + text[i + 1 :])


def undone_by_rounding(wrong: Decimal, right: Decimal) -> bool:
    """Whether cutting or rounding `wrong` to whole dollars gives `right`: a wrong figure that a
    glance at the books would put right, without the working."""
    return any(wrong.quantize(Decimal(1), rounding=how) == right for how in (ROUND_DOWN, ROUND_HALF_UP))
