"""A world's answer, in one pass: the public files, the expected balances, the planted fixes, and the
scorer's key and golden ledger built from them.

`project` walks a `World` once into a `Projection`; the task data carries the same fields, so
`key_of` (the one key builder) and `golden_ledger` (the one golden-ledger builder) take either.
`Fix` is one planted discrepancy as the scorer needs it: its kind, the bank line it concerns, that
line's date and the net correcting postings, in chart order.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

from beancount_ledger import render
from beancount_ledger.world import Entry, Plant, Posting, World

CORRECTIONS_HEADER = "; ---- corrections ----"


@dataclass(frozen=True)
class Fix:
    """A planted discrepancy: kind, the ref and date of its bank line, and its net correcting postings."""

    kind: str
    ref: str
    date: dt.date
    fix: dict[str, Decimal]
    """Account -> amount, in chart order, zeros dropped."""

    @classmethod
    def of(cls, plant: Plant) -> Fix:
        return cls(plant.kind, plant.ref, plant.date, {p.account: p.amount for p in plant.fix})


@dataclass(frozen=True)
class Key:
    """What the scorer compares against, all derivable from the world."""

    original: str
    balances: dict[str, str]
    fixes: tuple[Fix, ...]
    end: dt.date
    located_credit: bool = False
    """Score as a policy stating `render.LOCATED_SCORE` says (the low rungs): see `scorer`."""

    @property
    def accounts(self) -> list[str]:
        return list(self.balances)


class Answered(Protocol):
    """Task data, or a `Projection`: what the key and the golden ledger are built from."""

    files: Mapping[str, str]
    balances: Mapping[str, str]
    fixes: Sequence[Fix]
    period_end: str


@dataclass(frozen=True)
class Projection:
    """A world's public files, expected balances and fixes (the fields of its task data)."""

    files: dict[str, str]
    balances: dict[str, str]
    fixes: list[Fix]
    period_end: str


def project(w: World) -> Projection:
    """One pass from `w` to everything its task data holds."""
    return Projection(
        files=render.public_files(w),
        balances={account: f"{value:.2f}" for account, value in w.expected_balances().items()},
        fixes=[Fix.of(p) for p in w.plants],
        period_end=w.end.isoformat(),
    )


def key_of(answered: Answered) -> Key:
    """The scorer's key; the score it keys is the one the world's policy states."""
    return Key(
        answered.files[render.LEDGER],
        dict(answered.balances),
        tuple(answered.fixes),
        dt.date.fromisoformat(answered.period_end),
        f"\n{render.LOCATED_SCORE}" in answered.files.get("policy.md", ""),
    )


def correction_entry(fix: Fix) -> Entry:
    """The entry that resolves `fix` under the policy: dated on its bank line, tagged with its ref."""
    postings = tuple(Posting(a, v) for a, v in fix.fix.items())
    return Entry(fix.date, "", f"Correction: {fix.kind}", postings, (("bank_ref", fix.ref),))


def golden_ledger(answered: Answered) -> str:
    """The correctly reconciled ledger: the public one plus one correcting entry per planted fix."""
    body = "\n\n".join(render.entry_text(correction_entry(f)) for f in answered.fixes)
    return f"{answered.files[render.LEDGER]}\n{CORRECTIONS_HEADER}\n\n{body}\n"
