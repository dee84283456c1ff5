"""Benchmark timing shared by the scripts in ``bench/``: per-item medians, so figures compare across runs."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def per_item(fn: Callable[[int], object], items: int, repeats: int = 7) -> float:
    """Median over `repeats` of the mean seconds per call of ``fn(0) .. fn(items - 1)``."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for i in range(items):
            fn(i)
        samples.append((time.perf_counter() - start) / items)
    return statistics.median(samples)
