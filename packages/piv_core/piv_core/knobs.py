"""Validators for taskset knobs: a bad value fails at load with a message naming the knob.

num_rows: Annotated[int, at_least(5)] = 30        # "num_rows must be >= 5, got 3"
num_rows: Annotated[int, at_most(900, "why")] = 30  # "num_rows must be <= 900, got 901: why"
fault_rate: Annotated[float, share()] = 0.25      # "fault_rate must be between 0.0 and 1.0, got 1.5"
codes: Annotated[list[str], some_of(CODES)] = [...]  # "codes must be a non-empty list of distinct ...

An upper bound says why it is the most, e.g. that a longer prompt no longer fits one command-line
argument (`piv_core.prompt_size`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import AfterValidator, ValidationInfo


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
