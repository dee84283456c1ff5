"""The CSV tables the ledger environments show a model, written and read back by one codec.

A `Table` is a header of named `Column`s, each with how its value is written and read. Its
`write` renders a header line, then one line per row (a NamedTuple whose fields follow the
columns in order), joined by ``,`` and never quoted, so a value must not hold a comma.
`read` is the strict inverse `validate()` relies on: a wrong header, a line with the wrong
number of fields, or a field its column cannot read is a `ValueError`, never a guess.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Sequence
from datetime import date
from decimal import Decimal
from typing import Any, NamedTuple


class Column(NamedTuple):
    name: str
    read: Callable[[str], Any] = str
    """Text to value; raising ValueError or ArithmeticError marks the field malformed."""
    write: Callable[[Any], str] = str


def text(name: str) -> Column:
    """A column holding text as written."""
    return Column(name)


def choice(name: str, options: Iterable[str]) -> Column:
    """A text column that accepts only the texts in `options`."""
    allowed = frozenset(options)

    def read(value: str) -> str:
        if value not in allowed:
            raise ValueError(f"{name} must be one of {sorted(allowed)}, got {value!r}")
        return value

    return Column(name, read)


def flag(name: str, yes: str, no: str) -> Column:
    """A boolean column written `yes` / `no`."""

    def read(value: str) -> bool:
        if value not in (yes, no):
            raise ValueError(f"{name} must be {yes} or {no}, got {value!r}")
        return value == yes

    return Column(name, read, lambda value: yes if value else no)


def day(name: str) -> Column:
    """A date column written YYYY-MM-DD."""
    return Column(name, date.fromisoformat, date.isoformat)


def amount(name: str) -> Column:
    """A money column written as the Decimal it holds (``1234.50``)."""
    return Column(name, Decimal, str)


class Table:
    """A CSV codec for rows of type `row_type`, whose fields are `columns` in order."""

    def __init__(self, row_type: Callable[..., Any], columns: Sequence[Column], what: str = "ledger") -> None:
        self.row_type = row_type
        self.columns = tuple(columns)
        self.names = tuple(column.name for column in self.columns)
        self.what = what
        self._writers = tuple(column.write for column in self.columns)
        self._readers = tuple(column.read for column in self.columns)

    def write(self, rows: Iterable[Sequence[Any]]) -> str:
        """The table as the model sees it: a header line, then one line per row."""
        writers = self._writers
        lines = [",".join(self.names)]
        lines.extend(",".join([w(v) for w, v in zip(writers, row)]) for row in rows)
        return "\n".join(lines)

    def read(self, text: str) -> list[Any]:
        """The rows `write` wrote (raises ValueError on a malformed table)."""
        rows = []
        for fields in read_table(text, self.names, self.what):
            try:
                values = [read(field) for read, field in zip(self._readers, fields)]
            except (ValueError, ArithmeticError) as error:
                raise ValueError(f"{self.what} line {fields[0]!r} is malformed: {error}") from None
            rows.append(self.row_type(*values))
        return rows


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
