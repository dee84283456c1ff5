"""The bank statement as given (``bank_statement.csv``): its lines, read once, for every module that reads it.

A leaf module (the standard library only), so that the reference bookkeeper, the side-by-side view and
the low rungs' appending tools (``book_correction``, ``correct_bank_line``) share one reading of the
file without an import circle.
"""

from __future__ import annotations

import csv
import io


def bank_lines(text: str) -> list[dict[str, str]]:
    """The statement's rows that carry a ref (every row but the opening balance)."""
    return [row for row in csv.DictReader(io.StringIO(text)) if row["ref"]]


def statement_dates(text: str) -> dict[str, str]:
    """Each statement line's date, by its ref."""
    return {row["ref"]: row["date"] for row in bank_lines(text)}
