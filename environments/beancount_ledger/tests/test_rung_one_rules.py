"""What rungs 1 to 12 pay a booking rule that skips part of the work.

Rungs 1 to 3 serve one world under three views (`contract.VIEWS`), and each marks the line booked
other than once at its amount (rung 1 names it), so finding the line is reading the view; the work
left is the booking: its amount (the line itself, one booking reversed, or the difference between the
line and its booking) and the account it settles (shown beside each line at rungs 1 and 2, by the
prompt's rule at rung 3; rungs 4 and 5 serve the same worlds, rung 4 without the mark, rung 5 with
book_correction, which books each of these corrections too). The search generates every rule over
those choices, each alone or together (the line: the marked one, or one picked by layout; the amount:
as the statement shows it, reversed,
or by the view's label, which is the line's amount less what its bookings post to the bank; the
account: each account of the chart, or by the line's description as the prompt says), appends its one
correction as the rung's tool writes it (``correct_bank_line``'s `correction.bank_entry`, dated from
the statement), and scores it.
Only the prompt's rule earns the full score; every other earns at most what the scripted audit
erring on 3 corrections in 10 does, and a rule that skips the amount, the account or the line earns at
most half the score.
The same rules at rung 6 (one discrepancy of the five standard kinds, the plain view; rungs 7 to 11 serve
its worlds with files quoted, then without the view) and rung 12 (three of them; rung 13 serves its
worlds with the six tools) book one line where the view marks none: a
line is marked when its bookings post other than its amount to the bank, which also marks the prior
period's cheque where it rightly clears unbooked, and a wrong account or that cheque booked again
leaves no line marked (the rule then books nothing). No rule earns more than `noisy-0.3` or half the
score there.
"""

from __future__ import annotations

import csv
import io
import itertools
import random
import statistics
from decimal import Decimal

import pytest
from beancount_ledger import baselines, keys, ladder
from beancount_ledger.answer import key_of
from beancount_ledger.bookkeeper import booked_by_ref
from beancount_ledger.correction import bank_entry
from beancount_ledger.scorer import score
from beancount_ledger.statement import bank_lines
from beancount_ledger.taskset import make_task_data

SETTLES = {
    "DEPOSIT": "Assets:AccountsReceivable",
    "EFT": "Liabilities:AccountsPayable",
    "MERCHANT": "Expenses:BankFees",
    "ACCOUNT": "Expenses:BankFees",
    "INTEREST": "Income:Interest",
    "TRANSFER": "Assets:Bank:Savings",
    "CHEQUE": "Liabilities:AccountsPayable",
}
"""The account each kind of statement line settles, by the first word of its description, as the
rung-3 prompt states it (and the view of rungs 1 and 2 shows it); a cheque, which only the months of
rungs 6 to 13 have (the prior period's, paying a bill), settles payables."""
BANK = "Assets:Bank:Operating"
LINES = ("marked", "first", "last", "largest")
SIGNS = ("as shown", "reversed", "by label")


def _as_drawn(per_cell: int) -> list:
    """The first `per_cell` dev worlds of rung 1 of each kind planted and account it settles: the rung
    draws both evenly (`world.FLAGGED`), so a sample holding each pair equally measures a rule, not
    the luck of the draw."""
    cells: dict[tuple[str, str], list[str]] = {}
    pairs = len(ladder.profile(1).kinds) * len(set(SETTLES.values()))
    for n in itertools.count():
        w = keys.resolve(selector := f"dev:{n}:level1")
        (plant,) = w.plants
        (line,) = [line for line in w.bank_lines if line.ref == plant.ref]
        chosen = cells.setdefault((plant.kind, SETTLES[line.description.split()[0]]), [])
        if len(chosen) < per_cell:
            chosen.append(selector)
        if len(cells) == pairs and all(len(chosen) == per_cell for chosen in cells.values()):
            return [make_task_data(selector) for chosen in cells.values() for selector in chosen]


WORLDS = _as_drawn(3)


def _chart(data) -> list[str]:
    return [row["account"] for row in csv.DictReader(io.StringIO(data.files["accounts.csv"]))]


def _bank(booked, line) -> Decimal:
    """What the entries carrying `line`'s ref post to the operating bank account."""
    entries = booked.get(line["ref"], [])
    return sum((p.units.number for e in entries for p in e.postings if p.account == BANK), Decimal(0))


def _book(data, rule: tuple[str, str, str]) -> float:
    """The score of the one correction `rule` books through the real tool (0 when refused)."""
    which, sign, account = rule
    lines = bank_lines(data.files["bank_statement.csv"])
    booked = booked_by_ref(data.files["ledger.beancount"])
    marked = [line for line in lines if _bank(booked, line) != Decimal(line["amount"])]
    if which == "marked" and not marked:
        return 0.0  # nothing to book, and nothing written scores 0
    pick = {
        "marked": marked[0] if marked else None,
        "first": lines[0],
        "last": lines[-1],
        "largest": max(lines, key=lambda line: abs(Decimal(line["amount"]))),
    }[which]
    amount = {
        "as shown": Decimal(pick["amount"]),
        "reversed": -Decimal(pick["amount"]),
        "by label": Decimal(pick["amount"]) - _bank(booked, pick),
    }[sign]
    if not amount:
        return 0.0  # the tool refuses a zero amount, and nothing written scores 0
    other = SETTLES[pick["description"].split()[0]] if account == "by description" else account
    if other == BANK:
        return 0.0  # the tool refuses two equal accounts, and nothing written scores 0
    entry = bank_entry(pick["date"], pick["ref"], f"{amount}", other)
    return score(f"{data.files['ledger.beancount'].rstrip()}\n\n{entry}\n", key_of(data)).reward


def _means(worlds) -> dict[tuple[str, str, str], float]:
    accounts = sorted({a for data in worlds for a in _chart(data)} - {BANK}) + ["by description"]
    return {
        rule: statistics.mean(_book(data, rule) for data in worlds)
        for rule in itertools.product(LINES, SIGNS, accounts)
    }


@pytest.fixture(scope="module")
def means() -> dict[tuple[str, str, str], float]:
    return _means(WORLDS)


def _noisy(p: float, worlds=WORLDS) -> float:
    rewards = []
    for n, data in enumerate(worlds):
        files = [data.files[name] for name in baselines.READS]
        rewards.append(score(baselines.noisy_ledger(*files, p, random.Random(n)), key_of(data)).reward)
    return statistics.mean(rewards)


def test_only_the_prompts_rule_earns_the_full_score(means):
    assert means[("marked", "by label", "by description")] == 1.0
    ceiling = _noisy(0.3)
    others = {rule: mean for rule, mean in means.items() if rule != ("marked", "by label", "by description")}
    assert max(others.values()) <= ceiling, (max(others, key=others.get), ceiling)


def test_a_rule_that_does_no_account_work_earns_at_most_half(means):
    fixed = {rule: mean for rule, mean in means.items() if rule[2] != "by description"}
    assert max(fixed.values()) <= 0.5, max(fixed, key=fixed.get)


def test_a_rule_with_a_fixed_sign_earns_at_most_half(means):
    """The line's amount as shown, or reversed, whatever the view says: right for one kind of the
    three, and located (0.2) on the others."""
    fixed = {rule: mean for rule, mean in means.items() if rule[1] != "by label"}
    assert max(fixed.values()) <= 0.5, max(fixed, key=fixed.get)


def test_a_line_picked_by_layout_earns_at_most_the_located_share(means):
    layout = {rule: mean for rule, mean in means.items() if rule[0] != "marked"}
    assert max(layout.values()) <= 0.2, max(layout, key=layout.get)


@pytest.mark.parametrize("level", [6, 12])
def test_above_rung_three_no_rule_earns_more_than_noisy_or_half(level):
    worlds = [make_task_data(f"dev:{n}:level{level}") for n in range(24)]
    means = _means(worlds)
    best = max(means, key=means.get)
    assert means[best] <= min(_noisy(0.3, worlds), 0.5), (best, means[best])
