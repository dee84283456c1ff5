"""Reading a reply and grading it against the key.

The parser: the last ``<answer>`` block (fence tolerated) must hold a JSON object whose
``faults`` is an object mapping txn_id to a list of codes (a bare string counts as a list of
one); anything else makes the reply unparseable (every score 0, ``parsed`` 0). A figure that
is missing or not an exact cent amount is simply wrong. Grading never raises. A reply is
parsed once, however many rewards and metrics grade it.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from piv_core import json_answer, pair_scores, parse_cents
from piv_core.answer import parsed_once
from piv_core.fault_map import fault_pairs, read_fault_map

LABELS = ("G1", "1A", "1B", "net")


class Answer(NamedTuple):
    labels: Mapping[str, int | None]
    pairs: frozenset[tuple[str, str]]


class Grade(NamedTuple):
    bas_correct: float
    fault_audit: float
    bas_label_accuracy: float
    fault_precision: float
    fault_recall: float
    num_flagged: float
    parsed: float

    @property
    def metrics(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in self._fields[2:]}


UNPARSED = Grade(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@parsed_once
def parse_answer(reply: str | None) -> Answer | None:
    """The reply's answer, or None when it is unparseable (read once per reply, and immutable)."""
    obj: Any = json_answer(reply)
    if not isinstance(obj, dict):
        return None
    pairs = read_fault_map(obj.get("faults"))
    if pairs is None:
        return None
    return Answer(MappingProxyType({label: parse_cents(obj.get(label)) for label in LABELS}), pairs)


def grade(reply: str | None, bas: dict[str, int], faults: dict[str, list[str]]) -> Grade:
    """Score `reply` against the corrected BAS (cents by label) and the fault key."""
    answer = parse_answer(reply)
    if answer is None:
        return UNPARSED
    right = sum(answer.labels[label] == bas[label] for label in LABELS)
    audit = pair_scores(answer.pairs, fault_pairs(faults))
    return Grade(
        bas_correct=float(right == len(LABELS)),
        fault_audit=audit.f1,
        bas_label_accuracy=right / len(LABELS),
        fault_precision=audit.precision,
        fault_recall=audit.recall,
        num_flagged=float(audit.claimed),
        parsed=1.0,
    )
