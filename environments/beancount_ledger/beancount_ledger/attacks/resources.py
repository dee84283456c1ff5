"""Families that go after the scoring process rather than its rules: a ledger padded to just under
the envelope, and one whose amount crashes beancount's parser (`SANDBOXED`: scored in a sandbox
worker, never in the auditing process).
"""

from __future__ import annotations

from beancount_ledger.attacks.blocks import Attempt, _all, _golden_plus
from beancount_ledger.contract import LEDGER_ENVELOPE
from beancount_ledger.world import (
    BANK,
    EQUITY,
    World,
)


def padded_file(w: World) -> Attempt:
    """Padded file: golden plus comments and notes up to just under the ledger envelope."""
    golden = _golden_plus(w, [f'{w.end} note {BANK} "Reconciliation complete."'])
    filler = "; " + "reconciliation working papers, " * 3
    room = LEDGER_ENVELOPE - 200 - len(golden.encode())
    return Attempt(golden + "\n".join([filler] * (room // (len(filler) + 1))) + "\n", _all(w))


def division_by_zero_amount(w: World) -> Attempt:
    """Parser crash: every correction honest, plus an entry whose amount is the expression ``1/0``
    (beancount 3.2.3's parser dies of a segmentation fault); scored in the sandbox (`SANDBOXED`)."""
    crash = f'{w.end} * "Rounding"\n  {BANK}  1/0 AUD\n  {EQUITY}'
    return Attempt(_golden_plus(w, [crash]), _all(w, violations=1))


SANDBOXED = frozenset({"division_by_zero_amount"})
"""Families whose ledger kills the process that parses it: `audit` scores them with
`isolated.score` (the reward's own path, a sandbox worker), never in its own process."""
