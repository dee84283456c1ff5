"""The strict CSV table reader."""

import pytest
from piv_core.table import read_table

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
