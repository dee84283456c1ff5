"""What rungs 1 to 3 pay a booking rule that skips part of the work.

The three rungs serve one world under three views (`contract.VIEWS`), and each shows which line is
booked other than once (rung 1 names it), so finding the line is reading the view; the work left is
the booking: its sign (the line itself, or one booking reversed) and the account it settles (shown
beside each line at rungs 1 and 2, by the prompt's rule at rung 3). The search generates every
rule over those choices, each alone or together (the line: the flagged one, or one picked by
layout; the sign: as the statement shows it, reversed, or by the view's label; the account: each
account of the chart, or by the line's description as the prompt says), appends its one correction
as the rung's tool writes it (``correct_bank_line``'s `correction.bank_entry`, dated from the
statement), and scores it.
Only the prompt's rule earns the full score; every other earns at most what the scripted audit
erring on 3 corrections in 10 does, and a rule that does no account work at most half the score.
"""

from __future__ import annotations

import csv
import io
import itertools
import random
import statistics
from decimal import Decimal

import pytest
from beancount_ledger import baselines
from beancount_ledger.answer import key_of
from beancount_ledger.bookkeeper import booked_by_ref
from beancount_ledger.correction import bank_entry
from beancount_ledger.scorer import score
from beancount_ledger.statement import bank_lines
from beancount_ledger.taskset import make_task_data

WORLDS = [make_task_data(f"dev:{n}:level1") for n in range(16)]
SETTLES = {
    "DEPOSIT": "Assets:AccountsReceivable",
    "EFT": "Liabilities:AccountsPayable",
    "MERCHANT": "Expenses:BankFees",
    "ACCOUNT": "Expenses:BankFees",
    "INTEREST": "Income:Interest",
    "TRANSFER": "Assets:Bank:Savings",
}
"""The account each kind of statement line settles, by the first word of its description, as the
rung-3 prompt states it (and the view of rungs 1 and 2 shows it)."""
BANK = "Assets:Bank:Operating"
LINES = ("flagged", "first", "largest")
SIGNS = ("as shown", "reversed", "by label")


def _chart(data) -> list[str]:
    return [row["account"] for row in csv.DictReader(io.StringIO(data.files["accounts.csv"]))]


def _book(data, rule: tuple[str, str, str]) -> float:
    """The score of the one correction `rule` books through the real tool (0 when refused)."""
    which, sign, account = rule
    lines = bank_lines(data.files["bank_statement.csv"])
    booked = booked_by_ref(data.files["ledger.beancount"])
    pick = {
        "flagged": next(line for line in lines if len(booked.get(line["ref"], [])) != 1),
        "first": lines[0],
        "largest": max(lines, key=lambda line: abs(Decimal(line["amount"]))),
    }[which]
    amount = Decimal(pick["amount"])
    twice = len(booked.get(pick["ref"], [])) == 2
    if sign == "reversed" or (sign == "by label" and twice):
        amount = -amount
    other = SETTLES[pick["description"].split()[0]] if account == "by description" else account
    if other == BANK:
        return 0.0  # the tool refuses two equal accounts, and nothing written scores 0
    entry = bank_entry(pick["date"], pick["ref"], f"{amount}", other)
    return score(f"{data.files['ledger.beancount'].rstrip()}\n\n{entry}\n", key_of(data)).reward


@pytest.fixture(scope="module")
def means() -> dict[tuple[str, str, str], float]:
    accounts = sorted({a for data in WORLDS for a in _chart(data)} - {BANK}) + ["by description"]
    return {
        rule: statistics.mean(_book(data, rule) for data in WORLDS)
        for rule in itertools.product(LINES, SIGNS, accounts)
    }


def _noisy(p: float) -> float:
    rewards = []
    for n, data in enumerate(WORLDS):
        files = [data.files[name] for name in baselines.READS]
        rewards.append(score(baselines.noisy_ledger(*files, p, random.Random(n)), key_of(data)).reward)
    return statistics.mean(rewards)


def test_only_the_prompts_rule_earns_the_full_score(means):
    assert means[("flagged", "by label", "by description")] == 1.0
    ceiling = _noisy(0.3)
    others = {rule: mean for rule, mean in means.items() if rule != ("flagged", "by label", "by description")}
    assert max(others.values()) <= ceiling, (max(others, key=others.get), ceiling)


def test_a_rule_that_does_no_account_work_earns_at_most_half(means):
    fixed = {rule: mean for rule, mean in means.items() if rule[2] != "by description"}
    assert max(fixed.values()) <= 0.5, max(fixed, key=fixed.get)


def test_a_line_picked_by_layout_earns_at_most_the_located_share(means):
    layout = {rule: mean for rule, mean in means.items() if rule[0] != "flagged"}
    assert max(layout.values()) <= 0.2, max(layout, key=layout.get)
