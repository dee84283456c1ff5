"""What kind of month a generated world is: `Profile` (the sizes of the month, the kinds of
discrepancy planted, whether it has decoys) and the named profiles, `STANDARD`, `HARD` and the
short rungs `FLAGGED`, `SINGLE` and `THREE` of the difficulty ladder, by name in `PROFILES`.
"""

from __future__ import annotations

from dataclasses import dataclass

from beancount_ledger.world.model import HARD_KINDS, PLANT_KINDS

Range = tuple[int, int]
EVEN_KINDS = ("missing", "duplicate", "wrong_amount")
"""The kinds any booked bank line can carry, whatever account it settles: what `even_accounts` plants."""


@dataclass(frozen=True)
class Profile:
    """What kind of month a world is."""

    name: str
    sizes: tuple[Range, Range, Range, Range, Range, Range]
    """Ranges of customers, vendors, invoices, bills, receipts and payments this month."""
    kinds: tuple[str, ...]
    """The kinds of discrepancy planted, one of each."""
    choose: int = 0
    """When set, only this many of `kinds` are planted, drawn per world."""
    decoys: bool = False
    """Two customers pay invoices of the same amount, and two cheques are not yet presented."""
    located_credit: bool = False
    """The score also credits a discrepancy located (a new entry dated on its line with its ref) and
    each account it put wrong set right, and never charges an entry carrying a line's ref: a rung
    below the seed's month, where a partial correction must earn more than the books left alone."""
    prior_cheque_clears: bool = True
    """The cheque the prior period left outstanding clears this month: a statement line that no entry
    of this month books, and rightly so. Without it, every line the ledger books rightly is booked
    once, at its amount."""

    even_accounts: bool = False
    """The one line planted is drawn evenly over the accounts bank lines settle against the bank
    (receipts, payments, fees, interest, the transfer), then among that account's lines: no account
    is the likely answer. Only for one plant of a kind any booked line can carry (`EVEN_KINDS`)."""

    def __post_init__(self) -> None:
        if "prior_period" in self.kinds and not self.prior_cheque_clears:
            raise ValueError(f"profile {self.name!r}: a prior_period plant needs the prior cheque to clear")
        if self.even_accounts and (self.choose != 1 or not set(self.kinds) <= set(EVEN_KINDS)):
            raise ValueError(
                f"profile {self.name!r}: even_accounts plants one line of a kind in {EVEN_KINDS}"
            )

    @property
    def hard(self) -> bool:
        """Whether the policy states the rule for untagged bank entries (an untagged repeat is planted)."""
        return "untagged_duplicate" in self.kinds


STANDARD = Profile("standard", ((4, 6), (4, 6), (11, 16), (9, 13), (9, 13), (8, 12)), PLANT_KINDS)
HARD = Profile("hard", ((5, 7), (5, 7), (17, 21), (13, 16), (14, 17), (13, 16)), HARD_KINDS, decoys=True)
SHORT = ((3, 4), (3, 4), (5, 7), (4, 6), (4, 6), (4, 5))
FLAGGED = Profile(
    "flagged",
    SHORT,
    EVEN_KINDS,
    choose=1,
    located_credit=True,
    prior_cheque_clears=False,
    even_accounts=True,
)
"""A short month with one line not booked, booked twice or booked at a wrong amount (two adjacent
digits swapped), its kind drawn evenly and the line evenly over the accounts bank lines settle, and no
prior cheque clearing: the one line a reconciliation screen shows booked other than once at its amount
is the one to correct. With three kinds no fixed sign books the right amount on more than a third of
the worlds."""
SINGLE = Profile("single", SHORT, PLANT_KINDS, choose=1, located_credit=True)
"""A short month with one discrepancy, its kind drawn from the five standard ones."""
THREE = Profile("three", SHORT, PLANT_KINDS, choose=3, located_credit=True)
"""A short month with three of the five standard kinds."""
PROFILES = {p.name: p for p in (FLAGGED, SINGLE, THREE, STANDARD, HARD)}
