"""Fuzzing the reply parser: whatever a model writes, grading returns scores in [0, 1], never raises,
stays cheap on replies built to be expensive, and parses a trace's reply once."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from piv_core import json_answer
from piv_core.ledger_audit import grading as ledger_audit
from piv_core.testing import score_reply
from us_sut_reconciliation_v1 import grading
from us_sut_reconciliation_v1.rules import FIGURES
from us_sut_reconciliation_v1.taskset import UsSutConfig, UsSutTask, make_task_data

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
    shares = grade._replace(num_flagged=0.0)  # a count of claimed pairs, not a share
    return grade.num_flagged >= 0 and all(0.0 <= value <= 1.0 for value in shares)


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
    assert grade.parsed == float(a_fault_map)


HOSTILE_TEXT = st.text(alphabet=st.sampled_from('{}[]":,0123456789.-$ eE<>/answer\n`\x00\ud800\udfff'))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec=None, categories=["Cs", "Cc", "L", "N", "P"])), HOSTILE_TEXT)
def test_surrogates_and_nul_score_cleanly(prefix: str, body: str) -> None:
    for text in (
        prefix,
        f"{prefix}<answer>{body}</answer>",
        f'<answer>{{"faults": {{"{body}": "{prefix}"}}}}</answer>',
    ):
        assert _in_range(grading.grade(text, DATA.figures, DATA.faults))


HOSTILE_REPLIES = {
    "16,000 unclosed tags": "<answer>" * 16_000,
    "a fence and 40,000 spaces": "<answer>```" + " " * 40_000 + "x</answer>",
    "a figure 0e10000000": '<answer>{"gross_sales": 0e10000000, "faults": {}}</answer>',
    "a figure 1e1000000": '<answer>{"gross_sales": 1e1000000, "faults": {}}</answer>',
    "a figure of a million digits": '<answer>{"gross_sales": "%s", "faults": {}}</answer>'
    % ("9" * 1_000_000),
    "a lone surrogate": '<answer>{"gross_sales": "\ud800", "faults": {"\udfff": "\ud800"}}</answer>',
    "a NUL": '<answer>{"gross_sales": "\x00", "faults": {}}</answer>',
}


@pytest.mark.parametrize("reply", HOSTILE_REPLIES.values(), ids=HOSTILE_REPLIES)
def test_a_hostile_reply_scores_cleanly(reply: str) -> None:
    grade = grading.grade(reply, DATA.figures, DATA.faults)
    assert _in_range(grade) and grade.figures_correct == 0.0


def test_scoring_a_trace_parses_its_reply_once(
    task: UsSutTask, gold, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two rewards and a metric read one trace: the reply is parsed for the first and remembered."""
    parses = []
    monkeypatch.setattr(ledger_audit, "json_answer", lambda reply: parses.append(reply) or json_answer(reply))
    grading.parse_answer.cache_clear()
    scored = score_reply(task, gold(task.data))
    assert set(scored.rewards) == {"return_correct", "fault_audit"} and "answer_parsed" in scored.metrics
    assert scored.reward == pytest.approx(1.0) and len(parses) == 1
    score_reply(task, "Checked again.\n" + gold(task.data))
    assert len(parses) == 2


def test_a_remembered_answer_cannot_be_changed(task: UsSutTask, gold) -> None:
    parsed = grading.parse_answer(gold(task.data))
    with pytest.raises(TypeError):
        parsed.figures["gross_sales"] = 0  # type: ignore[index]
    assert isinstance(parsed.pairs, frozenset)
