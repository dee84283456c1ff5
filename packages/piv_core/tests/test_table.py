"""The strict CSV table reader, and the codec that writes a table and reads it back."""

from datetime import date
from decimal import Decimal
from typing import NamedTuple

import pytest
from piv_core.parsing.table import Table, amount, choice, day, flag, read_table, text

COLUMNS = ("id", "amount")


def test_rows_come_back_as_fields():
    assert read_table('id,amount\nA,1.00\nB,"2,5"\n', COLUMNS) == [["A", "1.00"], ["B", "2,5"]]


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "header must be id,amount"), ("amount,id\nA,1", "header must be"), ("id,amount\nA", "1 fields")],
)
def test_a_malformed_table_is_a_value_error(text, message):
    with pytest.raises(ValueError, match=message):
        read_table(text, COLUMNS, what="ledger")


class Line(NamedTuple):
    id: str
    day: date
    kind: str
    amount: Decimal
    flagged: bool


TABLE = Table(
    Line,
    [
        text("id"),
        day("day"),
        choice("kind", ("sale", "purchase")),
        amount("amount"),
        flag("flagged", "y", "n"),
    ],
)


def test_a_table_reads_back_what_it_writes():
    rows = [
        Line("T1", date(2025, 1, 31), "sale", Decimal("12.50"), True),
        Line("T2", date(2025, 2, 1), "purchase", Decimal("-0.05"), False),
    ]
    written = TABLE.write(rows)
    assert written == "id,day,kind,amount,flagged\nT1,2025-01-31,sale,12.50,y\nT2,2025-02-01,purchase,-0.05,n"
    assert TABLE.read(written) == rows
    assert TABLE.write([]) == "id,day,kind,amount,flagged" and TABLE.read(TABLE.write([])) == []


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("T1,2025-13-01,sale,1.00,y", "T1"),
        ("T1,2025-01-01,refund,1.00,y", "kind must be one of"),
        ("T1,2025-01-01,sale,1.0x,y", "malformed"),
        ("T1,2025-01-01,sale,1.00,yes", "flagged must be y or n"),
    ],
)
def test_a_field_its_column_cannot_read_is_a_value_error(line, message):
    with pytest.raises(ValueError, match=message):
        TABLE.read("id,day,kind,amount,flagged\n" + line)
