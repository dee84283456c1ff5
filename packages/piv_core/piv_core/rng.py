"""Seeded per-task random streams.

Task i of a taskset depends only on (seed, i) and an optional salt, never on global
state or the order tasks are drawn, so tasks are identical across processes, machines
and ``PYTHONHASHSEED`` (string seeds are hashed with SHA-512 by `random`).
"""

from __future__ import annotations

import random


def task_rng(seed: int | str, idx: int, *salt: object) -> random.Random:
    """A `random.Random` for task `idx` under `seed`; `salt` separates independent streams."""
    return random.Random(":".join(str(part) for part in (seed, idx, *salt)))
