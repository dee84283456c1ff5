"""Answer extraction, money parsing, pair F1 and seeded RNG."""

from __future__ import annotations

import random
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from piv_core import format_cents, json_answer, last_answer_block, pair_scores, parse_cents, task_rng


@pytest.mark.parametrize(
    ("reply", "body"),
    [
        ("<answer>42</answer>", "42"),
        ("<answer>1</answer> then <answer> 2 </answer>", "2"),
        ("<ANSWER>x</ANSWER>", "x"),
        ('<answer>\n```json\n{"a": 1}\n```\n</answer>', '{"a": 1}'),
        ("<answer>```\n[1]\n```</answer>", "[1]"),
        ("no block", None),
        ("<answer>unterminated", None),
        ("", None),
        (None, None),
    ],
)
def test_last_answer_block(reply, body):
    assert last_answer_block(reply) == body


def test_json_answer_reads_decimals_exactly_and_rejects_non_finite():
    assert json_answer('<answer>{"x": 0.1}</answer>') == {"x": Decimal("0.1")}
    assert json_answer("<answer>NaN</answer>") is None
    assert json_answer("<answer>{bad json}</answer>") is None
    assert json_answer("<answer>" + "[" * 100_000 + "</answer>") is None


@pytest.mark.parametrize(
    ("value", "cents"),
    [
        ("1,234.50", 123450),
        (1234, 123400),
        (Decimal("1234.5"), 123450),
        ("$1234.50", 123450),
        ("-$12.00", -1200),
        ("$-12", -1200),
        (" 7 ", 700),
        (".5", 50),
        ("5.", 500),
        ("0", 0),
        ("12.345", None),
        ("-$-1", None),
        ("abc", None),
        ("", None),
        ("1e3", None),
        ("NaN", None),
        (Decimal("1e400"), None),
        ("1.0000000000000000000000000001", None),
        (Decimal("1.500"), 150),
        (Decimal("5E+3"), 500000),
        (Decimal("1e-999999999"), None),
        (True, None),
        (1.5, None),
        (None, None),
    ],
)
def test_parse_cents(value, cents):
    assert parse_cents(value) == cents


@given(st.integers(-(10**15), 10**15))
def test_money_round_trip(cents):
    assert parse_cents(format_cents(cents)) == cents
    assert parse_cents(f"${format_cents(cents)}".replace("$-", "-$")) == cents


@given(st.one_of(st.text(max_size=40), st.decimals(), st.integers(), st.floats(), st.none(), st.booleans()))
def test_parse_cents_never_raises(value):
    result = parse_cents(value)
    assert result is None or isinstance(result, int)


def test_pair_scores():
    assert pair_scores([], []).f1 == 1.0
    assert pair_scores([("a", "x")], []).f1 == 0.0
    assert pair_scores([], [("a", "x")]) == (0.0, 0.0, 0.0, 0, 1, 0)
    scores = pair_scores([("a", "x"), ("a", "y"), ("a", "x")], [("a", "x"), ("b", "x")])
    assert (scores.precision, scores.recall, scores.f1) == (0.5, 0.5, 0.5)
    assert pair_scores([("a", "y")], [("a", "x")]).f1 == 0.0  # right item, wrong code


def test_task_rng_is_a_pure_function_of_its_arguments():
    assert task_rng(7, 3).random() == task_rng(7, 3).random() == random.Random("7:3").random()
    assert task_rng(7, 3).random() != task_rng(7, 4).random()
    assert task_rng(7, 3, "faults").random() != task_rng(7, 3).random()
