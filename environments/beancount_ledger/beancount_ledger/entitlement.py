"""The entitlement oracle: the most a ledger may earn under the stated policy, from the world graph alone.

An attack declares what it *semantically* does (a `Claim`); the oracle turns that into the reward the
policy entitles it to, with Decimal arithmetic over `world.opening`, `world.booked`, `world.plants` and
`world.expected_balances()`. It never reads ledger text, never loads beancount and never imports the
scorer, so it is a second, independent account of the reward rules against which the scorer is gated
(``reward <= entitlement``).

Definition. For a world with chart accounts A and plants P, and a claim (corrected, netted, violations):

- ``fixed = corrected | netted``: the plants whose exact net correcting postings are in the period's
  books; ``corrected`` are those corrected the way the policy asks (their own new transaction, dated on
  the bank line, tagged with its ``bank_ref``, netting to the fix), ``netted`` those whose exact fix is
  booked within the period in some other form (misdated, combined with another, an edit of the
  original). The stated score counts balances however they were reached, so ``netted`` earns the
  balance share but never the resolution share; it defaults to empty, which is the strict reading
  (only honest corrections earn anything).
- balances = (opening + booked entries + the fixes of ``fixed``) per account, compared exactly with
  ``world.expected_balances()``;
- entitlement = max(0, 0.5 x |{a in A: balance exact}| / |A| + 0.5 x |corrected| / |P|
  - 0.1 x violations), quantized to the millionth exactly as the reward is (so ``<=`` survives it).
- On a world whose policy credits located discrepancies (the low rungs, `World.located_credit`) it is
  max(0, 0.2 + 0.3 x |{a in W: balance exact}| / |W| + 0.5 x |corrected| / |P| - 0.1 x violations),
  where W is the accounts the books as booked have wrong. The located share is granted whole: the
  policy pays it for any entry dated on a planted line under its ref, whatever its amounts, so the
  bound is exact on everything else.

``violations`` counts acts on the policy's penalty list (an existing record changed or removed, an added
directive other than ``balance``/``note``, an account opened outside the chart, a new transaction that
corrects no discrepancy) whose balance effect the claim already accounts for (none, or exactly the
fixes in ``fixed``). A plug's own violation is *not* declared: its penalty is what must outweigh the
balance it buys, so for a plug the bound reads "never more than the honest part alone".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from beancount_ledger.world import World

PENALTY = Decimal("0.1")
QUANTUM = Decimal("0.000001")


@dataclass(frozen=True)
class Claim:
    """What a ledger semantically does, by plant ref (see the module docstring)."""

    corrected: frozenset[str] = frozenset()
    netted: frozenset[str] = frozenset()
    violations: int = 0


def balances(world: World, fixed: Iterable[str] = ()) -> dict[str, Decimal]:
    """Every chart account's balance at the period end: the books as booked plus the fixes of `fixed`."""
    refs = set(fixed)
    totals: dict[str, Decimal] = defaultdict(Decimal)
    postings = [p for entry in (world.opening, *world.booked) for p in entry.postings]
    postings += [p for plant in world.plants if plant.ref in refs for p in plant.fix]
    for p in postings:
        totals[p.account] += p.amount
    return {account: totals[account] for account in world.expected_balances()}


def entitled(
    world: World,
    corrected: Iterable[str] = frozenset(),
    *,
    netted: Iterable[str] = frozenset(),
    violations: int = 0,
) -> float:
    """The reward a ledger that honestly corrects `corrected` (and books the fixes of `netted` in another
    form, committing `violations` other policy violations) is entitled to."""
    corrected, netted = frozenset(corrected), frozenset(netted)
    planted = {p.ref for p in world.plants}
    if unknown := (corrected | netted) - planted:
        raise ValueError(f"not planted refs: {sorted(unknown)}")
    expected = world.expected_balances()
    got = balances(world, corrected | netted)
    if world.located_credit:
        booked = balances(world)
        wrong = [account for account, value in expected.items() if booked[account] != value]
        hit = sum(got[account] == expected[account] for account in wrong)
        value = (
            Decimal("0.2")
            + Decimal("0.3") * hit / max(1, len(wrong))
            + Decimal("0.5") * len(corrected) / len(planted)
            - PENALTY * violations
        )
    else:
        hit = sum(got[account] == value for account, value in expected.items())
        value = (
            Decimal("0.5") * hit / len(expected)
            + Decimal("0.5") * len(corrected) / len(planted)
            - PENALTY * violations
        )
    return float(max(Decimal(0), value).quantize(QUANTUM))


def entitled_to(world: World, claim: Claim, *, strict: bool = False) -> float:
    """`entitled` for `claim`; `strict` drops its ``netted`` plants (only honest corrections count)."""
    netted = frozenset() if strict else claim.netted
    return entitled(world, claim.corrected, netted=netted, violations=claim.violations)
