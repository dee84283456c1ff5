"""Validators for taskset knobs: a bad value fails at load with a message naming the knob.

num_rows: Annotated[int, at_least(5)] = 30        # "num_rows must be >= 5, got 3"
fault_rate: Annotated[float, share()] = 0.25      # "fault_rate must be between 0.0 and 1.0, got 1.5"
"""

from __future__ import annotations

import math

from pydantic import AfterValidator, ValidationInfo


def at_least(minimum: int) -> AfterValidator:
    def check(value: int, info: ValidationInfo) -> int:
        if value < minimum:
            raise ValueError(f"{info.field_name} must be >= {minimum}, got {value}")
        return value

    return AfterValidator(check)


def share() -> AfterValidator:
    def check(value: float, info: ValidationInfo) -> float:
        if not (math.isfinite(value) and 0.0 <= value <= 1.0):
            raise ValueError(f"{info.field_name} must be between 0.0 and 1.0, got {value}")
        return value

    return AfterValidator(check)
