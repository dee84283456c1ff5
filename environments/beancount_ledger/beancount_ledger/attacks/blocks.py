"""What every attack family is built from: the `Attempt` an attack returns, the `AttackResult` the
audit records, `NotApplicable`, and the building blocks (a transaction in beancount syntax, the
policy's correcting entry, the public ledger with blocks appended, the statement's balances).

Nothing here is an attack; the families live in the sibling modules and `corpus` lists them.
"""

from __future__ import annotations

import csv
import dataclasses
import io
from collections.abc import Callable, Iterable
from datetime import date
from decimal import Decimal
from typing import NamedTuple

from beancount_ledger import render
from beancount_ledger.entitlement import Claim, balances
from beancount_ledger.world import (
    BANK,
    Plant,
    Posting,
    World,
    net,
)

Legs = list[tuple[str, Decimal]]


class NotApplicable(Exception):
    """The world lacks what an attack family needs (two suitable plants); `audit` skips it there."""


class Attempt(NamedTuple):
    text: str
    claim: Claim


EPSILON = 1e-9
"""Slack of the `reward <= entitlement` gate (both are quantized to the millionth)."""


@dataclasses.dataclass(frozen=True)
class AttackResult:
    name: str
    world_id: str
    reward: float
    entitlement: float
    strict: float
    """The entitlement with the claim's ``netted`` plants dropped (only honest corrections count)."""

    @property
    def exploit(self) -> bool:
        return self.reward > self.entitlement + EPSILON


Attack = Callable[[World], Attempt]


# --------------------------------------------------------------------------- building blocks


def _txn(
    day: date, narration: str, legs: Legs, *, ref: str | None = None, flag: str = "*", tail: str = ""
) -> str:
    """A transaction in beancount syntax; amounts printed exactly as given (no rounding)."""
    lines = [f'{day} {flag} "{narration}"', *([f'  bank_ref: "{ref}"'] if ref else [])]
    return "\n".join([*lines, *(f"  {account}  {amount:f} AUD{tail}" for account, amount in legs)])


def _fix(plant: Plant) -> Legs:
    return [(p.account, p.amount) for p in plant.fix]


def _correction(
    plant: Plant, *, day: date | None = None, ref: str | None = None, legs: Legs | None = None
) -> str:
    """The policy's correcting transaction for `plant`, with any of its date, ref or postings replaced."""
    legs = _fix(plant) if legs is None else legs
    return _txn(day or plant.date, f"Correction for {plant.ref}", legs, ref=ref or plant.ref)


def _ledger(w: World, *blocks: str, base: str | None = None) -> str:
    """The public ledger (or `base`) with `blocks` appended."""
    text = (render.ledger_text(w) if base is None else base).rstrip()
    return "\n\n".join([text, *blocks]) + "\n"


def _net(legs: Legs) -> dict[str, Decimal]:
    """Legs summed by account, zeros dropped (`world.net`)."""
    return {p.account: p.amount for p in net(Posting(a, v) for a, v in legs)}


def _refs(plants: Iterable[Plant]) -> frozenset[str]:
    return frozenset(p.ref for p in plants)


def _bank_leg(plant: Plant) -> Decimal:
    return sum((p.amount for p in plant.fix if p.account == BANK), Decimal(0))


def _closing(w: World) -> Decimal:
    """The statement's closing balance, read from the public bank_statement.csv."""
    return Decimal(list(csv.DictReader(io.StringIO(render.bank_statement(w))))[-1]["balance"])


def _true_bank(w: World) -> Decimal:
    """What the books should show for the bank: the closing balance less the cheques not yet presented."""
    unpresented = (
        p.amount for e in w.booked if "cheque" in dict(e.meta) for p in e.postings if p.account == BANK
    )
    return _closing(w) + sum(unpresented, Decimal(0))


def _several(w: World) -> None:
    """Tricks that merge every fix into one entry are the honest correction itself in a world of one plant."""
    if len(w.plants) < 2:
        raise NotApplicable("a world of one plant: one entry booking every fix is its correction")


def _golden_plus(w: World, blocks: list[str]) -> str:
    """The golden corrections with `blocks` after them."""
    return _ledger(w, *(_correction(p) for p in w.plants), *blocks)


def _all(w: World, violations: int = 0) -> Claim:
    """Every plant corrected as the policy asks (plus `violations`)."""
    return Claim(corrected=_refs(w.plants), violations=violations)


def _to_expected(w: World, off: Decimal = Decimal(0)) -> Legs:
    """Legs moving every account from its booked balance to its expected one; with `off`, the first
    two of them miss by +off and -off."""
    now, legs = balances(w), []
    for account, value in w.expected_balances().items():
        if value != now[account]:
            legs.append((account, value - now[account]))
    legs[0], legs[1] = (legs[0][0], legs[0][1] + off), (legs[1][0], legs[1][1] - off)
    return legs
