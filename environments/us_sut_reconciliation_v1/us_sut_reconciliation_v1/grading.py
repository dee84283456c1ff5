"""Reading a reply and grading it against the key.

A reply is parsed when its last ``<answer>`` block holds a JSON object whose ``faults`` is a
fault map (`piv_core.fault_map`); otherwise every score is 0 and ``answer_parsed`` is 0. A
figure that is missing or not an exact cent amount is simply wrong. Grading never raises. A
reply is parsed once, however many rewards and metrics grade it.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

from piv_core import json_answer, pair_scores, parse_cents
from piv_core.answer import parsed_once
from piv_core.fault_map import fault_pairs, read_fault_map

from us_sut_reconciliation_v1.rules import FIGURES, GRADED_FIGURES


class Answer(NamedTuple):
    figures: Mapping[str, int | None]
    pairs: frozenset[tuple[str, str]]


class Grade(NamedTuple):
    return_correct: float
    fault_audit: float
    answer_parsed: float
    fields_correct: float
    fault_precision: float
    fault_recall: float

    @property
    def metrics(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in self._fields[2:]}


UNPARSED = Grade(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@parsed_once
def parse_answer(reply: str | None) -> Answer | None:
    """The reply's answer, or None when it is unparseable (read once per reply, and immutable)."""
    obj = json_answer(reply)
    if not isinstance(obj, dict):
        return None
    pairs = read_fault_map(obj.get("faults"))
    if pairs is None:
        return None
    return Answer(MappingProxyType({name: parse_cents(obj.get(name)) for name in FIGURES}), pairs)


def grade(reply: str | None, figures: dict[str, int], faults: dict[str, list[str]]) -> Grade:
    """Score `reply` against the corrected return (cents by figure name) and the fault key."""
    answer = parse_answer(reply)
    if answer is None:
        return UNPARSED
    right = sum(answer.figures[name] == figures[name] for name in GRADED_FIGURES)
    audit = pair_scores(answer.pairs, fault_pairs(faults))
    return Grade(
        return_correct=float(right == len(GRADED_FIGURES)),
        fault_audit=audit.f1,
        answer_parsed=1.0,
        fields_correct=right / len(GRADED_FIGURES),
        fault_precision=audit.precision,
        fault_recall=audit.recall,
    )
