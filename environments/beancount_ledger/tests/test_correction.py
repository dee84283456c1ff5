"""The low rungs' correcting entries from their parts (`book_correction`'s and `correct_bank_line`'s):
each part is checked before anything is rendered, and what is rendered is one two-posting
transaction, read back as such by beancount's own parser."""

from decimal import Decimal

import pytest
from beancount.core import data as bdata
from beancount.parser import parser
from beancount_ledger.correction import bank_entry, correcting_entry
from hypothesis import given, settings
from hypothesis import strategies as st
from piv_core.parsing.arithmetic import evaluate
from piv_core.parsing.money import parse_cents

GOOD = ("2024-03-31", "BS2403-007", "Assets:Bank:Operating", "18.00", "Liabilities:AccountsPayable")
PARTS = ("date", "bank_ref", "account", "amount", "other_account")
HOSTILE = (
    "",
    " ",
    "\n",
    '"',
    "\\",
    "x\n2024-01-01 open Assets:Evil AUD",
    'BS-1"\n  Assets:Evil 1.00 AUD',
    "Assets:Bank:Operating 1.00 AUD\n  Income:Sales",
    'plugin "beancount.plugins.auto_accounts"',
    'option "title" "x"',
    "A" * 500,
    "Assets:" + "B" * 500,
    None,
    18.0,
    ["18.00"],
    {"a": 1},
)
"""Refused in every part: injected lines and quotes, sizes over the bound, values that are not text."""
WRONG_SHAPE = {
    0: ("2024-02-30", "24-03-31", "2024-3-31", "today"),
    1: ("-BS1", "BS 1", "BS/1"),
    2: ("assets:bank", "Ａssets:Bank", "Assets", "Assets:bank", "Assets::Bank", "Bank:Operating"),
    3: ("1e3", "18.005", "NaN", "0", "0.00", "eighteen"),
    4: ("Income", "income:sales", "Expenses:"),
}
"""Refused in one part only: text of the wrong shape for it."""
CASES = [(position, value) for position in range(5) for value in (*HOSTILE, *WRONG_SHAPE[position])]
BANK_GOOD = ("2024-03-31", "BS2403-007", "-18.00", "Liabilities:AccountsPayable")
BANK_PARTS = ("date", "bank_ref", "bank_amount", "account")
BANK_CASES = [
    (position, value)
    for position, shapes in enumerate((WRONG_SHAPE[0], WRONG_SHAPE[1], WRONG_SHAPE[3], WRONG_SHAPE[4]))
    for value in (*HOSTILE, *shapes)
]


def _transaction(text: str) -> bdata.Transaction:
    entries, errors, _ = parser.parse_string(text)
    assert not errors and len(entries) == 1, (text, errors)
    (entry,) = entries
    assert isinstance(entry, bdata.Transaction)
    return entry


def test_the_parts_make_one_two_posting_transaction_tagged_with_the_ref():
    entry = _transaction(correcting_entry(*GOOD))
    assert f"{entry.date}" == "2024-03-31" and entry.meta["bank_ref"] == "BS2403-007"
    assert [(p.account, f"{p.units.number}", p.units.currency) for p in entry.postings] == [
        ("Assets:Bank:Operating", "18.00", "AUD"),
        ("Liabilities:AccountsPayable", "-18.00", "AUD"),
    ]


@pytest.mark.parametrize(
    ("build", "good", "names", "position", "value"),
    [(correcting_entry, GOOD, PARTS, *case) for case in CASES]
    + [(bank_entry, BANK_GOOD, BANK_PARTS, *case) for case in BANK_CASES],
)
def test_a_bad_part_is_refused_naming_it(build, good, names, position, value):
    parts = list(good)
    parts[position] = value
    with pytest.raises(ValueError, match=names[position]):
        build(*parts)


def test_the_two_accounts_must_differ():
    with pytest.raises(ValueError, match="must differ"):
        correcting_entry(GOOD[0], GOOD[1], GOOD[2], GOOD[3], GOOD[2])
    with pytest.raises(ValueError, match="account must be the account opposite the bank"):
        bank_entry(*BANK_GOOD[:3], "Assets:Bank:Operating")


def test_the_bank_line_entry_moves_the_bank_by_its_amount():
    """`correct_bank_line`'s entry is `book_correction`'s with the operating bank as its first account."""
    text = bank_entry(*BANK_GOOD)
    assert text == correcting_entry(*BANK_GOOD[:2], "Assets:Bank:Operating", *BANK_GOOD[2:])
    entry = _transaction(text)
    assert [(p.account, f"{p.units.number}") for p in entry.postings] == [
        ("Assets:Bank:Operating", "-18.00"),
        ("Liabilities:AccountsPayable", "18.00"),
    ]


@pytest.mark.parametrize(("build", "good"), [(correcting_entry, GOOD), (bank_entry, BANK_GOOD)])
@settings(max_examples=400, deadline=None)
@given(drawn=st.data())
def test_any_parts_either_refused_or_exactly_one_transaction(build, good, drawn):
    """Whatever text fills each part, either builder refuses it or renders one two-posting
    transaction tagged with the ref (`bank_entry`'s always moving the operating bank)."""
    parts = drawn.draw(st.tuples(*(st.one_of(st.text(max_size=60), st.sampled_from(good)) for _ in good)))
    try:
        text = build(*parts)
    except ValueError:
        return
    entry = _transaction(text)
    assert len(entry.postings) == 2 and entry.meta["bank_ref"] == parts[1].strip()
    assert entry.postings[0].units.number == -entry.postings[1].units.number != 0
    on_the_bank = entry.postings[0].account == "Assets:Bank:Operating" != entry.postings[1].account
    assert build is correcting_entry or on_the_bank


@pytest.mark.parametrize(
    ("written", "posted"),
    [
        ("1250.00 - 1205.00", "45.00"),
        ("-830.00 - (-380.00)", "-450.00"),
        ("-830.00 - -380.00", "-450.00"),
        ("1250.00 - 1250.00 - 1250.00", "-1250.00"),
        (" 18.00 ", "18.00"),
        ("-(18.00)", "-18.00"),
    ],
)
def test_the_bank_amount_may_be_the_arithmetic_that_gives_it(written, posted):
    """`correct_bank_line`'s amount is worked out exactly when it is written as the calculator's
    arithmetic, so the low rungs ask which figures make the correction, not the sum itself."""
    entry = _transaction(bank_entry(*BANK_GOOD[:2], written, BANK_GOOD[3]))
    assert f"{entry.postings[0].units.number}" == posted


@pytest.mark.parametrize(
    "written",
    [
        "10 / 3",
        "1250.00 - 1250.00",
        "1.001 + 1",
        "2 ** 3",
        "1250.00 - x",
        "1,250.00 - 5",
        "(" * 40 + "1",
        "9" * 24 + " * " + "9" * 24,
        "1 - " * 40 + "1",
    ],
)
def test_arithmetic_that_is_not_a_non_zero_cent_amount_is_refused(written):
    with pytest.raises(ValueError, match="bank_amount must be a non-zero amount"):
        bank_entry(*BANK_GOOD[:2], written, BANK_GOOD[3])


def test_only_the_bank_amount_takes_arithmetic():
    with pytest.raises(ValueError, match="amount must be a non-zero amount"):
        correcting_entry(*GOOD[:3], "20.00 - 2.00", GOOD[4])


@settings(max_examples=600, deadline=None)
@given(written=st.text(alphabet="0123456789.+-*/() ", max_size=160))
def test_any_arithmetic_is_refused_or_booked_as_exactly_its_value(written):
    """The whole class of amounts a model can write in the calculator's characters, up to past the
    part's bound: each is refused naming the part, or booked as one transaction moving the bank by
    exactly its value (a plain amount's, else the arithmetic's), a non-zero whole number of cents."""
    try:
        text = bank_entry(*BANK_GOOD[:2], written, BANK_GOOD[3])
    except ValueError as why:
        assert "bank_amount" in str(why)
        return
    posted = _transaction(text).postings[0].units.number
    plain = parse_cents(written)  # a plain amount is read as before (digit groups spaced: "1 250.00")
    value = Decimal(plain) / 100 if plain is not None else evaluate(written)
    assert plain is not None or len(written) <= 120  # arithmetic is read only within the part's bound
    assert posted == value != 0 and value == value.quantize(Decimal("0.01"))
