"""Benchmark us-sut-reconciliation-v1: generation + key per task, and scoring per reply.

Prints medians over several repeats, per item, on one core:
    uv run python bench/us_sut.py
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from piv_core.endpoint import Conversation
from us_sut_reconciliation_v1 import baselines, grading
from us_sut_reconciliation_v1.taskset import UsSutConfig, make_task_data


def per_item(fn: Callable[[int], object], items: int, repeats: int = 7) -> float:
    """Median over `repeats` of the mean seconds per call of fn(0..items-1)."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for i in range(items):
            fn(i)
        samples.append((time.perf_counter() - start) / items)
    return statistics.median(samples)


def main() -> None:
    print("| measure | per item |")
    print("|---|---|")
    for rows in (30, 200):
        config = UsSutConfig(num_rows=rows)
        seconds = per_item(lambda i, c=config: make_task_data(c, i), 400 if rows == 30 else 60)
        print(f"| generation + key + prompt, {rows} rows | {seconds * 1e3:.3f} ms |")
    config = UsSutConfig()
    tasks = [make_task_data(config, i) for i in range(200)]
    replies = {
        name: [policy(Conversation([{"role": "user", "content": t.prompt}], [])) for t in tasks]
        for name, policy in baselines.POLICIES.items()
    }
    keys = [(t.figures, t.faults) for t in tasks]
    for name, texts in replies.items():
        seconds = per_item(lambda i, t=texts: grading.grade(t[i], *keys[i]), len(tasks))
        print(f"| scoring one `{name}` reply (30 rows) | {seconds * 1e6:.1f} µs |")


if __name__ == "__main__":
    main()
