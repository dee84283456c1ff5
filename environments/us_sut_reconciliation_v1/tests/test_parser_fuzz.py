"""Fuzzing the reply parser: whatever a model writes, grading returns scores in [0, 1] and never raises."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from us_sut_reconciliation_v1 import grading
from us_sut_reconciliation_v1.rules import FIGURES
from us_sut_reconciliation_v1.taskset import UsSutConfig, make_task_data

DATA = make_task_data(UsSutConfig(), 0)
CODES = st.sampled_from(["tax_miscalculated", "outside_period", " duplicate_invoice ", "", "x"])
TXNS = st.sampled_from(sorted(DATA.faults) + ["txn_001", "TXN_1", ""])
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.decimals(allow_nan=False, allow_infinity=False).map(str)
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
FAULT_MAPS = st.dictionaries(TXNS, CODES | st.lists(CODES, max_size=3) | JSON, max_size=5) | JSON
ANSWERS = st.fixed_dictionaries({}, optional={name: SCALARS for name in FIGURES} | {"faults": FAULT_MAPS})


def _in_range(grade: grading.Grade) -> bool:
    return all(0.0 <= value <= 1.0 for value in grade)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text(text: str) -> None:
    assert _in_range(grading.grade(text, DATA.figures, DATA.faults))


@settings(max_examples=300, deadline=None)
@given(st.text(), st.text(alphabet=st.sampled_from('{}[]":,0123456789.-$ eE<>/answer\n`')))
def test_text_in_answer_tags(prefix: str, body: str) -> None:
    assert _in_range(grading.grade(f"{prefix}<answer>{body}</answer>", DATA.figures, DATA.faults))


@settings(max_examples=300, deadline=None)
@given(ANSWERS, st.booleans())
def test_json_shaped_answers(answer: dict, fenced: bool) -> None:
    body = json.dumps(answer, default=str)
    text = f"<answer>\n```json\n{body}\n```\n</answer>" if fenced else f"<answer>{body}</answer>"
    grade = grading.grade(text, DATA.figures, DATA.faults)
    assert _in_range(grade)
    faults = answer.get("faults")
    a_fault_map = isinstance(faults, dict) and all(
        isinstance(codes, str) or (isinstance(codes, list) and all(isinstance(c, str) for c in codes))
        for codes in faults.values()
    )
    assert grade.answer_parsed == float(a_fault_map)
