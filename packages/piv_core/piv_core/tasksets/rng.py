"""Seeded per-task random streams, and the train / eval split of a procedural taskset.

Task i of a taskset depends only on (seed, i) and an optional salt, never on global
state or the order tasks are drawn, so tasks are identical across processes, machines
and ``PYTHONHASHSEED`` (string seeds are hashed with SHA-512 by `random`).

A procedural environment's ``split`` knob picks one of two disjoint streams. ``train`` is
the stream ``task_rng(seed, i)`` the environments have always drawn; ``eval`` draws task i
from ``task_rng(seed, i, "eval")``. The two key spaces never meet: a train key is
``"<seed>:<i>"`` (one colon, seeds and indices being integers), an eval key
``"<seed>:<i>:eval"`` (two), so no eval task shares its random stream with a train task of
any seed, and an eval source left at the default seed still scores tasks no trainer drew.
"""

from __future__ import annotations

import random
from typing import Literal

Split = Literal["train", "eval"]
SPLITS: tuple[Split, ...] = ("train", "eval")


def task_rng(seed: int | str, idx: int, *salt: object) -> random.Random:
    """A `random.Random` for task `idx` under `seed`; `salt` separates independent streams."""
    return random.Random(":".join(str(part) for part in (seed, idx, *salt)))


def split_rng(split: Split, seed: int, idx: int) -> random.Random:
    """The random stream of task `idx` of `split` under `seed` (see the module docstring)."""
    if split == "train":
        return task_rng(seed, idx)
    if split == "eval":
        return task_rng(seed, idx, "eval")
    raise ValueError(f"split must be one of {list(SPLITS)}, got {split!r}")


def task_id(prefix: str, split: Split, seed: int, idx: int) -> str:
    """A task id naming its stream: ``<prefix>-<seed>-<idx>`` for train (as always),
    ``<prefix>-eval-<seed>-<idx>`` for eval."""
    return f"{prefix}-{seed}-{idx}" if split == "train" else f"{prefix}-{split}-{seed}-{idx}"
