"""Benchmark au-bas-reconciliation-v1: generation + key per task, and scoring per reply.

Prints medians over several repeats, per item, on one core:
    uv run python bench/au_bas.py
"""

from __future__ import annotations

import json

from au_bas_reconciliation_v1 import baselines, grading
from au_bas_reconciliation_v1.taskset import AuBasConfig, make_task_data
from piv_core import last_answer_block
from piv_core.bench import per_item
from piv_core.policy import Conversation


def main() -> None:
    print("| measure | per item |")
    print("|---|---|")
    for rows in (24, 60):
        config = AuBasConfig(num_transactions=rows, fault_rate=0.25)
        seconds = per_item(lambda i, c=config: make_task_data(c, i), 400)
        print(f"| generation + key + prompt, {rows} rows | {seconds * 1e3:.3f} ms |")
    config = AuBasConfig()
    tasks = [make_task_data(config, i) for i in range(200)]
    replies = {
        name: [policy(Conversation([{"role": "user", "content": t.prompt}], [])) for t in tasks]
        for name, policy in baselines.POLICIES.items()
    }
    answers = [last_answer_block(text) for text in replies["oracle"]]
    seconds = per_item(lambda i: json.loads(answers[i]), len(tasks))
    print(f"| yardstick: bare `json.loads` of one oracle answer body | {seconds * 1e6:.1f} µs |")
    for name, texts in replies.items():
        seconds = per_item(
            lambda i, texts=texts: grading.grade(texts[i], tasks[i].bas, tasks[i].faults), len(tasks)
        )
        print(f"| scoring one `{name}` reply (24 rows) | {seconds * 1e6:.1f} µs |")


if __name__ == "__main__":
    main()
