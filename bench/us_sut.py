"""Benchmark us-sut-reconciliation-v1: generation + key per task, and scoring per reply.

Prints medians over several repeats, per item, on one core:
    uv run python bench/us_sut.py
"""

from __future__ import annotations

from piv_core.bench import per_item
from piv_core.policy import Conversation
from us_sut_reconciliation_v1 import baselines, grading
from us_sut_reconciliation_v1.taskset import UsSutConfig, make_task_data


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
