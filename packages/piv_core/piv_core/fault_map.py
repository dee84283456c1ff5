"""Fault maps: how an audit answer lists its findings, and the (item, code) pairs they stand for.

An audit answer reports ``{"<item id>": ["<code>", ...], ...}``: every item it found at
fault with each fault code it found there. A bare string stands for a list of one; ids and
codes are compared after trimming surrounding spaces. Anything else is not a fault map, and
the caller decides what that costs (the text environments treat it as an unparseable reply).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping


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


__all__ = ["fault_pairs", "read_fault_map"]
