"""Planting discrepancies: one function per kind, in a table, and the booking they produce.

A plant is (kind, event index, argument). Each kind's planter takes the true event and the
argument and returns what the bookkeeper booked instead, the net correcting postings and a
description: ``missing`` drops the event's entry; ``wrong_amount`` and ``transposed_cents`` book
it at the amount given; ``duplicate`` books it twice; ``untagged_duplicate`` books it again the
number of days given later without its ``bank_ref``; ``wrong_account`` and ``receipt_to_sales``
post its settlement leg (payables or receivables) to the account given; ``prior_period`` (the
event is a bank line with no entry: a prior-period cheque clearing) books it again as a payment
to the vendor named by the argument.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta
from decimal import Decimal

from beancount_ledger.world.model import AP, AR, BANK, BankLine, Entry, Event, Plant, Posting, minus, net


class PlantError(ValueError):
    """A plant that cannot be applied to its event (wrong kind of event or argument)."""


Planted = tuple[list[Entry], tuple[Posting, ...], str]
"""What was booked instead of the true entry, the correcting postings, and a description."""


def _true(kind: str, event: Event) -> Entry:
    if event.entry is None:
        raise PlantError(f"plant {kind} needs an event with an entry")
    return event.entry


def _arg(kind: str, arg: object, expected: type) -> object:
    if not isinstance(arg, expected):
        raise PlantError(f"plant {kind} needs a {expected.__name__} argument, not {arg!r}")
    return arg


def missing(event: Event, bank: BankLine, arg: object) -> Planted:
    true = _true("missing", event)
    return [], net(true.postings), f"bank line {bank.ref} ({bank.description}) is not in the ledger"


def _rescaled(kind: str) -> Callable[[Event, BankLine, object], Planted]:
    def plant(event: Event, bank: BankLine, arg: object) -> Planted:
        true, to = _true(kind, event), _arg(kind, arg, Decimal)
        postings = tuple(Posting(p.account, to if p.amount > 0 else -to) for p in true.postings)
        bad = Entry(true.date, true.payee, true.narration, postings, true.meta)
        fix = net([*true.postings, *minus(bad.postings)])
        return [bad], fix, f"bank line {bank.ref} was booked as {to} instead of {abs(bank.amount)}"

    plant.__name__ = kind
    return plant


def duplicate(event: Event, bank: BankLine, arg: object) -> Planted:
    true = _true("duplicate", event)
    return [true, true], net(minus(true.postings)), f"bank line {bank.ref} was booked twice"


def untagged_duplicate(event: Event, bank: BankLine, arg: object) -> Planted:
    true, days = _true("untagged_duplicate", event), _arg("untagged_duplicate", arg, int)
    meta = tuple((k, v) for k, v in true.meta if k != "bank_ref")
    copy = Entry(true.date + timedelta(days=days), true.payee, true.narration, true.postings, meta)
    text = f"bank line {bank.ref} was booked again on {copy.date} without its bank_ref"
    return [true, copy], net(minus(copy.postings)), text


def _misposted(kind: str) -> Callable[[Event, BankLine, object], Planted]:
    def plant(event: Event, bank: BankLine, arg: object) -> Planted:
        true, to = _true(kind, event), _arg(kind, arg, str)
        leg = next(p.account for p in true.postings if p.account in (AR, AP))
        postings = tuple(Posting(to if p.account == leg else p.account, p.amount) for p in true.postings)
        bad = Entry(true.date, true.payee, true.narration, postings, true.meta)
        fix = net([*true.postings, *minus(bad.postings)])
        return [bad], fix, f"bank line {bank.ref} was posted to {to} instead of {leg}"

    plant.__name__ = kind
    return plant


def prior_period(event: Event, bank: BankLine, arg: object) -> Planted:
    if event.entry is not None:
        raise PlantError("plant prior_period needs a bank line with no entry")
    vendor, amount = _arg("prior_period", arg, str), -bank.amount
    legs = (Posting(AP, amount), Posting(BANK, -amount))
    bad = Entry(bank.date, vendor, f"Payment {bank.description}", legs, (("bank_ref", bank.ref),))
    text = f"bank line {bank.ref} clears a prior-period cheque that was booked again"
    return [bad], net(minus(bad.postings)), text


PLANTERS: dict[str, Callable[[Event, BankLine, object], Planted]] = {
    "missing": missing,
    "wrong_amount": _rescaled("wrong_amount"),
    "duplicate": duplicate,
    "wrong_account": _misposted("wrong_account"),
    "prior_period": prior_period,
    "transposed_cents": _rescaled("transposed_cents"),
    "untagged_duplicate": untagged_duplicate,
    "receipt_to_sales": _misposted("receipt_to_sales"),
}
"""Every kind of discrepancy, by name (`world.HARD_KINDS` order)."""


def apply_plants(
    events: list[Event], plants: list[tuple[str, int, object]]
) -> tuple[tuple[Entry, ...], tuple[Plant, ...]]:
    """Book `events` with the planted discrepancies; return the booked entries (by date, then event
    order) and the plants (by date, then ref)."""
    booked: list[tuple[date, int, Entry]] = []
    out: list[Plant] = []
    by_index = {index: (kind, arg) for kind, index, arg in plants}
    for index, event in enumerate(events):
        if index not in by_index:
            if event.entry is not None:
                booked.append((event.entry.date, index, event.entry))
            continue
        kind, arg = by_index[index]
        if kind not in PLANTERS:
            raise PlantError(f"unknown plant kind {kind!r}; expected one of {tuple(PLANTERS)}")
        if event.bank is None:
            raise PlantError(f"plant {kind} needs a bank line")
        wrong, fix, text = PLANTERS[kind](event, event.bank, arg)
        booked.extend((e.date, index, e) for e in wrong)
        out.append(Plant(kind, event.bank.ref, event.bank.date, text, fix))
    booked.sort(key=lambda t: (t[0], t[1]))
    out.sort(key=lambda p: (p.date, p.ref))
    return tuple(e for _, _, e in booked), tuple(out)
