"""The CSV tables the text environments show a model: one header line, then rows of exactly its fields.

`read_table` is the strict reader their `validate()` uses to re-read a table from a prompt: a wrong
header or a line with the wrong number of fields is a `ValueError`, never a guess.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence


def read_table(text: str, columns: Sequence[str], what: str = "ledger") -> list[list[str]]:
    """The data rows of CSV `text` whose header must be exactly `columns`."""
    reader = csv.reader(io.StringIO(text.strip()))
    header = next(reader, None)
    if header is None or tuple(header) != tuple(columns):
        raise ValueError(f"{what} header must be {','.join(columns)}, got {header}")
    rows = []
    for fields in reader:
        if len(fields) != len(columns):
            raise ValueError(f"{what} line has {len(fields)} fields, expected {len(columns)}: {fields}")
        rows.append(fields)
    return rows
