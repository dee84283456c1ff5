"""Reading a reply and grading it against the key.

The parser: the last ``<answer>`` block (fence tolerated) must hold a JSON object whose
``faults`` is an object mapping txn_id to a list of codes (a bare string counts as a list of
one); anything else makes the reply unparseable (every score 0, ``parsed`` 0). A figure that
is missing or not an exact cent amount is simply wrong. Grading never raises.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from piv_core import json_answer, pair_scores, parse_cents

LABELS = ("G1", "1A", "1B", "net")


class Answer(NamedTuple):
    labels: dict[str, int | None]
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


def parse_answer(reply: str | None) -> Answer | None:
    """The reply's answer, or None when it is unparseable."""
    obj: Any = json_answer(reply)
    if not isinstance(obj, dict):
        return None
    faults = obj.get("faults")
    if not isinstance(faults, dict):
        return None
    pairs = set()
    for txn, codes in faults.items():
        if isinstance(codes, str):
            codes = [codes]
        if not isinstance(codes, list) or not all(isinstance(code, str) for code in codes):
            return None
        pairs.update((txn.strip(), code.strip()) for code in codes)
    return Answer({label: parse_cents(obj.get(label)) for label in LABELS}, frozenset(pairs))


def grade(reply: str | None, bas: dict[str, int], faults: dict[str, list[str]]) -> Grade:
    """Score `reply` against the corrected BAS (cents by label) and the fault key."""
    answer = parse_answer(reply)
    if answer is None:
        return UNPARSED
    right = sum(answer.labels[label] == bas[label] for label in LABELS)
    audit = pair_scores(answer.pairs, ((txn, code) for txn, codes in faults.items() for code in codes))
    return Grade(
        bas_correct=float(right == len(LABELS)),
        fault_audit=audit.f1,
        bas_label_accuracy=right / len(LABELS),
        fault_precision=audit.precision,
        fault_recall=audit.recall,
        num_flagged=float(audit.claimed),
        parsed=1.0,
    )
