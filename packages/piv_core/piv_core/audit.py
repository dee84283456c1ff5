"""Pair-level precision, recall and F1 for fault audits.

An audit finding is a pair (item, code): the right row for the wrong reason is not a
finding. Both sets empty is a perfect audit (F1 = 1.0); otherwise the usual definitions,
with precision 0.0 when nothing was claimed and recall 0.0 when nothing was there.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import NamedTuple


class PairScores(NamedTuple):
    precision: float
    recall: float
    f1: float
    claimed: int
    true: int
    correct: int


def pair_scores(claimed: Iterable[Hashable], truth: Iterable[Hashable]) -> PairScores:
    """Score a set of claimed pairs against the true pairs (duplicates count once)."""
    claimed_set, true_set = set(claimed), set(truth)
    correct = len(claimed_set & true_set)
    if not claimed_set and not true_set:
        return PairScores(0.0, 0.0, 1.0, 0, 0, 0)
    precision = correct / len(claimed_set) if claimed_set else 0.0
    recall = correct / len(true_set) if true_set else 0.0
    f1 = 2 * precision * recall / (precision + recall) if correct else 0.0
    return PairScores(precision, recall, f1, len(claimed_set), len(true_set), correct)
