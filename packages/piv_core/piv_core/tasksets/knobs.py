"""Validators for taskset knobs: a bad value fails at load with a message naming the knob.

seed: Annotated[int, integer()] = 7               # "seed must be an integer, got True (bool)"
num_rows: Annotated[int, integer(), at_least(5)] = 30  # "num_rows must be >= 5, got 3"
num_rows: Annotated[int, at_most(900, "why")] = 30  # "num_rows must be <= 900, got 901: why"
fault_rate: Annotated[float, share()] = 0.25      # "fault_rate must be between 0.0 and 1.0, got 1.5"
codes: Annotated[list[str], some_of(CODES)] = [...]  # "codes must be a non-empty list of distinct ...

An upper bound says why it is the most, e.g. that a longer prompt no longer fits one command-line
argument (`piv_core.tasksets.prompt_size`).

Numbers are read from operator text by one rule everywhere (knobs, selectors, command-line
arguments): ASCII digits only, matched whole by a pattern. ``str.isdigit`` and ``int`` also take
'١٢' (Arabic-Indic digits) or '²', and pydantic's lax mode reads ``True`` as 1, ``2.0`` as 2 and
' 2', '+2', '02' or '1_0' as numbers; none of those is a number here. `whole` and `whole_range`
read counts and indices (a range is bounded before anything is expanded); `integer` and `number`
guard int and float knobs; `argument` is an argparse ``type`` for a count.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import AfterValidator, BeforeValidator, ValidationInfo

WHOLE = re.compile(r"0|[1-9][0-9]*")
"""A count or an index as text: ASCII digits, no sign, space, underscore or leading zero."""
INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")
"""An integer knob's text, as a command line sends it: `WHOLE`, or `WHOLE` after a minus."""
DECIMAL = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
"""A float knob's text: ASCII digits with an optional point and exponent (no 'inf', 'nan', '_')."""
INT_BOUND = 2**63
"""Integer knobs are 64-bit: -2**63 <= n < 2**63 (text is refused by its length before any conversion)."""
MAX_NUMBER_TEXT = 64
"""The longest text a float knob is read from."""


def shown(value: Any, width: int = 40) -> str:
    """`value` for an error message, its repr cut to `width` characters (a megabyte value never
    floods the message)."""
    text = repr(value)
    return text if len(text) <= width else f"{text[: width - 5]}...{text[-2:]} ({len(text):,} chars)"


def whole(text: str, knob: str, most: int) -> int:
    """The number 0 .. `most` that operator text `text` spells (`WHOLE`, matched whole).

    Raises ValueError naming `knob`, the value and the bound; the text's length is compared with
    the bound's before anything is converted, so no text is too long to refuse quickly."""
    if not isinstance(text, str) or not WHOLE.fullmatch(text):
        raise ValueError(
            f"{knob}: {shown(text)} is not a whole number in ASCII digits "
            "(0-9, no sign, space or leading zero)"
        )
    if len(text) > len(str(most)) or int(text) > most:
        raise ValueError(f"{knob}: {shown(text)} is above the most, {most:,}")
    return int(text)


def whole_range(text: str, knob: str, most: int, most_count: int) -> range:
    """The numbers ``n`` or ``lo-hi`` (inclusive) names, each 0 .. `most`, at most `most_count`
    of them: the bounds are checked on the two ends, before anything is expanded."""
    lo, dash, hi = text.partition("-") if isinstance(text, str) else (text, "", "")
    first = whole(lo, knob, most)
    last = whole(hi, knob, most) if dash else first
    if last < first:
        raise ValueError(f"{knob}: {shown(text)}: the range ends before it starts")
    if last - first + 1 > most_count:
        raise ValueError(f"{knob}: {shown(text)} names {last - first + 1:,} values; at most {most_count:,}")
    return range(first, last + 1)


def argument(least: int = 0, most: int = INT_BOUND - 1) -> Callable[[str], int]:
    """An argparse ``type`` for a count from `least` to `most`, read by `whole`."""

    def parse(text: str) -> int:
        try:
            value = whole(text, "value", most)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error).removeprefix("value: ")) from None
        if value < least:
            raise argparse.ArgumentTypeError(f"{value} is below the least, {least:,}")
        return value

    parse.__name__ = "count"  # argparse names the type in its message: "invalid count value"
    return parse


def integer() -> BeforeValidator:
    """An int knob, read strictly: an int (never a bool, a float or a Decimal), or the text a command
    line sends for one (`INTEGER`), within 64 bits. None passes on, for an optional knob.

    A command line's ``--taskset.level 2`` reaches the model as the text '2' (pydantic_config
    hands every scalar over as text), so that form is the one text admitted."""

    def check(value: Any, info: ValidationInfo) -> Any:
        if value is None:
            return value
        if isinstance(value, str):
            if len(value) > len(str(INT_BOUND)) or not INTEGER.fullmatch(value):
                raise ValueError(
                    f"{info.field_name} must be an integer in ASCII digits (no space, '+', '_' or "
                    f"leading zero), got {shown(value)}"
                )
            value = int(value)
        elif isinstance(value, bool) or not isinstance(value, int):
            kind = type(value).__name__
            raise ValueError(f"{info.field_name} must be an integer, got {shown(value)} ({kind})")
        if not -INT_BOUND <= value < INT_BOUND:
            raise ValueError(f"{info.field_name} must be a 64-bit integer, got {shown(value)}")
        return value

    return BeforeValidator(check)


def number() -> BeforeValidator:
    """A float knob, read strictly: a finite int or float (never a bool), or the text a command line
    sends for one (`DECIMAL`). None passes on, for an optional knob. The knob's range is its own
    check (e.g. `share`)."""

    def check(value: Any, info: ValidationInfo) -> Any:
        if value is None:
            return value
        if isinstance(value, str):
            if len(value) > MAX_NUMBER_TEXT or not DECIMAL.fullmatch(value):
                raise ValueError(f"{info.field_name} must be a number in ASCII digits, got {shown(value)}")
        elif isinstance(value, bool) or not isinstance(value, int | float):
            kind = type(value).__name__
            raise ValueError(f"{info.field_name} must be a number, got {shown(value)} ({kind})")
        try:
            out = float(value)
        except OverflowError:
            out = math.inf
        if not math.isfinite(out):
            raise ValueError(f"{info.field_name} must be a finite number, got {shown(value)}")
        return out

    return BeforeValidator(check)


def at_least(minimum: int) -> AfterValidator:
    def check(value: int, info: ValidationInfo) -> int:
        if value < minimum:
            raise ValueError(f"{info.field_name} must be >= {minimum}, got {value}")
        return value

    return AfterValidator(check)


def at_most(maximum: int, reason: str = "") -> AfterValidator:
    """Values above `maximum` fail; `reason` (why that is the most) follows the message."""

    def check(value: int, info: ValidationInfo) -> int:
        if value > maximum:
            why = f": {reason}" if reason else ""
            raise ValueError(f"{info.field_name} must be <= {maximum}, got {value}{why}")
        return value

    return AfterValidator(check)


def share() -> AfterValidator:
    def check(value: float, info: ValidationInfo) -> float:
        if not (math.isfinite(value) and 0.0 <= value <= 1.0):
            raise ValueError(f"{info.field_name} must be between 0.0 and 1.0, got {value}")
        return value

    return AfterValidator(check)


def some_of(options: Sequence[str], in_their_order: bool = True) -> AfterValidator:
    """A list knob: a non-empty choice of distinct `options`; kept in the order of `options`, or
    as given when `in_their_order` is False (where the order is part of what a seed draws).

    A bad value fails naming the knob: ``fault_codes must be a non-empty list of distinct
    values among [...], got [...]``.
    """
    allowed = tuple(options)

    def check(value: list[str], info: ValidationInfo) -> list[str]:
        if not value or len(set(value)) != len(value) or not set(value) <= set(allowed):
            among = list(allowed)
            raise ValueError(
                f"{info.field_name} must be a non-empty list of distinct values among {among}, got {value}"
            )
        return [option for option in allowed if option in value] if in_their_order else value

    return AfterValidator(check)
