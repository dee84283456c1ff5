"""What the low rungs pay for: locating a discrepancy and setting right what it put wrong, so that the
books left alone (or nothing written) score 0, a booking of the right line at a wrong amount earns
more, every honest partial correction more again, and no wholesale booking of statement lines pays.
Rungs 1 to 5 serve the same worlds under five prompts, so rung 1 stands for them; rung 6 stands for
rungs 6 to 11 and rung 12 for rungs 12 and 13 the same way; rungs 14 and 15 keep the seed's score, stated
in the same words as before."""

from __future__ import annotations

import dataclasses
import re
from decimal import Decimal

import pytest
from beancount_ledger import keys, ladder, render
from beancount_ledger.answer import correction_entry, golden_ledger, key_of
from beancount_ledger.entitlement import entitled
from beancount_ledger.scorer import score
from beancount_ledger.taskset import make_task_data

SEEDS = range(12)


def _with(ledger: str, *fixes) -> str:
    return ledger + "".join(f"\n\n{render.entry_text(correction_entry(fix))}\n" for fix in fixes)


def _statement_refs(data) -> list[tuple[str, str]]:
    """(ref, date) of every bank statement line."""
    rows = data.files["bank_statement.csv"].splitlines()[1:]
    header = data.files["bank_statement.csv"].splitlines()[0].split(",")
    at = {name: header.index(name) for name in ("ref", "date")}
    return [(row.split(",")[at["ref"]], row.split(",")[at["date"]]) for row in rows if row]


@pytest.mark.parametrize("level", [1, 6, 12])
def test_the_reward_orders_behaviour_at_the_low_rungs(level):
    for n in SEEDS:
        data = make_task_data(f"dev:{n}:level{level}")
        key = key_of(data)
        assert key.located_credit and render.LOCATED_SCORE in data.files["policy.md"]
        given = key.original
        untouched, nothing = score(given, key).reward, score(None, key).reward
        assert untouched == nothing == 0.0
        assert score(golden_ledger(data), key).reward == 1.0
        fix = data.fixes[0]
        doubled = dataclasses.replace(fix, fix={a: v * 2 for a, v in fix.fix.items()})
        wrong_amount = score(_with(given, doubled), key).reward
        assert wrong_amount > untouched, n
        partial = [score(_with(given, *data.fixes[:k]), key).reward for k in range(1, len(data.fixes))]
        assert all(wrong_amount < r < 1.0 for r in partial) and partial == sorted(partial), (n, partial)
        one_right = score(_with(given, fix), key).reward
        assert one_right > wrong_amount, n


@pytest.mark.parametrize("level", [1, 6, 12])
def test_booking_statement_lines_wholesale_pays_nothing(level):
    """A token booking carrying each statement line's ref, on every line or on every line but the
    planted ones, earns at most what locating one discrepancy is worth, and usually nothing."""
    for n in SEEDS:
        data = make_task_data(f"dev:{n}:level{level}")
        key = key_of(data)
        planted = {fix.ref for fix in data.fixes}
        accounts = list(key.balances)
        for which in ("every line", "the clean lines"):
            entries = []
            for ref, day in _statement_refs(data):
                if which == "the clean lines" and ref in planted:
                    continue
                legs = f"  {accounts[0]}  1.00 AUD\n  {accounts[1]}  -1.00 AUD"
                entries.append(f'{day} * "Check"\n  bank_ref: "{ref}"\n{legs}')
            text = key.original + "\n\n" + "\n\n".join(entries) + "\n"
            assert score(text, key).reward <= 0.2 / len(data.fixes) + 1e-9, (n, which)


@pytest.mark.parametrize("level", sorted(ladder.RUNGS))
def test_the_policy_says_whose_ledger_is_scored(level):
    """A rung served a booking tool scores the ledger that tool writes, and its policy says so; rungs 14
    and 15, served the six tools, keep the seed's sentence, which names write_ledger alone."""
    data = make_task_data(f"dev:0:level{level}")
    policy, booking = data.files["policy.md"], ladder.RUNGS[level]["tools"] != "full"
    names_both = (
        "with `write_ledger` or, where the task\noffers a tool that books one correction, with that tool"
        in policy
        and "(written whole by `write_ledger`, or with a correction\n  appended by such a tool)" in policy
    )
    assert names_both == key_of(data).located_credit, level
    assert names_both or not booking, level  # every rung with a booking tool names its ledger
    seed = "The latest ledger accepted by `write_ledger` is the one scored"
    assert (seed in policy) == (not key_of(data).located_credit), level


@pytest.mark.parametrize("level", [14, 15])
def test_the_seeds_months_keep_the_seeds_score(level):
    data = make_task_data(f"dev:0:level{level}")
    policy = data.files["policy.md"]
    assert not key_of(data).located_credit and render.LOCATED_SCORE not in policy
    assert re.search(r"- Score = 0\.5 x \(share of accounts in `accounts.csv`", policy)
    given = key_of(data).original
    assert Decimal(str(score(given, key_of(data)).reward)) > 0  # the seed's score pays the books left alone


@pytest.mark.parametrize("level", [1, 6, 12])
def test_the_entitlement_oracle_bounds_the_low_rungs_by_their_own_score(level):
    """Honest corrections of the first k discrepancies never score above what the oracle entitles
    them to, the whole correction exactly that; the oracle reads the world, never the ledger."""
    for n in SEEDS:
        selector = f"dev:{n}:level{level}"
        data, w = make_task_data(selector), keys.resolve(selector)
        key = key_of(data)
        refs = [fix.ref for fix in data.fixes]
        for k in range(len(refs) + 1):
            reward = score(_with(key.original, *data.fixes[:k]), key).reward
            bound = entitled(w, refs[:k])
            assert reward <= bound + 1e-9, (n, k, reward, bound)
        assert score(golden_ledger(data), key).reward == entitled(w, refs) == 1.0
