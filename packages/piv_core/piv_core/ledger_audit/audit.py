"""Fault audits: the fault map an answer lists its findings in, and how its (item, code) pairs score.

An audit answer reports ``{"<item id>": ["<code>", ...], ...}``: every item it found at fault
with each fault code it found there. A bare string stands for a list of one; ids and codes are
compared after trimming surrounding spaces. Anything else is not a fault map, and the caller
decides what that costs (the ledger environments treat it as an unparseable reply).

A finding is a pair (item, code): the right row for the wrong reason is not a finding. Both
sets empty is a perfect audit (F1 = 1.0); otherwise the usual definitions, with precision 0.0
when nothing was claimed and recall 0.0 when nothing was there. `code_scores` gives the same
precision and recall for one code at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import NamedTuple


class PairScores(NamedTuple):
    precision: float
    recall: float
    f1: float
    claimed: int
    true: int
    correct: int


def pair_scores(
    claimed: Iterable[Hashable], truth: Iterable[Hashable], backed: Callable[[Hashable], bool] | None = None
) -> PairScores:
    """Score a set of claimed pairs against the true pairs (duplicates count once). With `backed`,
    a claimed pair is correct only when it is true and `backed(pair)` holds (the work behind it was
    right); every claimed pair still counts in the precision."""
    claimed_set, true_set = set(claimed), set(truth)
    correct = claimed_set & true_set
    if backed is not None:
        correct = {pair for pair in correct if backed(pair)}
    return _scores(len(claimed_set), len(true_set), len(correct))


def code_scores(
    claimed: Iterable[tuple[str, str]], truth: Iterable[tuple[str, str]], codes: Iterable[str]
) -> dict[str, PairScores]:
    """`pair_scores` restricted to the pairs of each code of `codes`, by code."""
    claimed_set, true_set = set(claimed), set(truth)
    claimed_n, true_n, correct_n = dict.fromkeys(codes, 0), dict.fromkeys(codes, 0), dict.fromkeys(codes, 0)
    for pair in claimed_set:
        code = pair[1]
        if code in claimed_n:
            claimed_n[code] += 1
            if pair in true_set:
                correct_n[code] += 1
    for _, code in true_set:
        if code in true_n:
            true_n[code] += 1
    return {code: _scores(claimed_n[code], true_n[code], correct_n[code]) for code in claimed_n}


def _scores(claimed: int, true: int, correct: int) -> PairScores:
    if not claimed and not true:
        return PairScores(0.0, 0.0, 1.0, 0, 0, 0)
    precision = correct / claimed if claimed else 0.0
    recall = correct / true if true else 0.0
    f1 = 2 * precision * recall / (precision + recall) if correct else 0.0
    return PairScores(precision, recall, f1, claimed, true, correct)


def read_fault_map(value: object) -> frozenset[tuple[str, str]] | None:
    """The (item, code) pairs a reply's fault map claims, or None when `value` is not a fault map."""
    if not isinstance(value, dict):
        return None
    pairs: set[tuple[str, str]] = set()
    add = pairs.add
    for item, codes in value.items():
        if isinstance(codes, str):
            codes = (codes,)
        elif not isinstance(codes, list):
            return None
        item = item.strip()
        for code in codes:
            if not isinstance(code, str):
                return None
            add((item, code.strip()))
    return frozenset(pairs)


def fault_pairs(faults: Mapping[str, Iterable[str]]) -> frozenset[tuple[str, str]]:
    """The (item, code) pairs of a fault key {item: codes}."""
    return frozenset((item, code) for item, codes in faults.items() for code in codes)


__all__ = ["PairScores", "code_scores", "fault_pairs", "pair_scores", "read_fault_map"]
