"""The shared ledger-audit layer: the walk that keys faults, grading under env names, per-code scores."""

from typing import NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from piv_core.ledger_audit.audit import code_scores, fault_pairs, read_fault_map
from piv_core.ledger_audit.grading import (
    DUPLICATE_INVOICE,
    OUTSIDE_PERIOD,
    UNPARSED,
    Key,
    Scheme,
    answer_text,
    audit_rows,
    fault_lists,
    metric_key,
)


class Row(NamedTuple):
    txn_id: str
    invoice: str
    late: bool


def _faults_of(row: Row, seen: set[str]) -> tuple[str, ...]:
    return tuple(
        code for code, hit in ((DUPLICATE_INVOICE, row.invoice in seen), (OUTSIDE_PERIOD, row.late)) if hit
    )


def test_duplicates_and_out_of_period_rows_are_keyed_but_left_out():
    rows = [Row("T1", "A", False), Row("T2", "A", False), Row("T3", "B", True), Row("T4", "C", False)]
    faults, kept = audit_rows(rows, _faults_of)
    assert faults == {"T2": (DUPLICATE_INVOICE,), "T3": (OUTSIDE_PERIOD,)}
    assert [row.txn_id for row, _ in kept] == ["T1", "T4"]
    assert fault_lists(faults) == {"T2": [DUPLICATE_INVOICE], "T3": [OUTSIDE_PERIOD]}


SCHEME = Scheme(
    labels=("a", "b", "c"),
    graded=("a", "b"),
    codes=("x", "y"),
    metric_names={"ok": "parsed", "share": "figure_accuracy"},
)
FIGURES = {"a": 100, "b": -5, "c": 7}
FAULTS = {"T1": ["x"], "T2": ["x", "y"]}


def test_the_key_itself_scores_full_and_an_ungraded_figure_does_not_count():
    grade = SCHEME.grade(answer_text(FIGURES, FAULTS), FIGURES, FAULTS)
    assert (grade.figures_correct, grade.fault_audit, grade.parsed, grade.num_flagged) == (1.0, 1.0, 1.0, 3.0)
    wrong_c = answer_text({**FIGURES, "c": 8}, FAULTS)
    assert SCHEME.grade(wrong_c, FIGURES, FAULTS).figures_correct == 1.0
    wrong_b = answer_text({**FIGURES, "b": 5}, FAULTS)
    metrics = SCHEME.metrics(wrong_b, FIGURES, FAULTS)
    assert {name: metrics[name] for name in ("ok", "share", "a_correct", "b_correct", "c_correct")} == {
        "ok": 1.0,
        "share": 0.5,
        "a_correct": 1.0,
        "b_correct": 0.0,
        "c_correct": 1.0,
    }
    assert (metrics["recall_x"], metrics["precision_y"], metrics["keyed_x"], metrics["keyed_y"]) == (
        1.0,
        1.0,
        2.0,
        1.0,
    )


def test_only_the_figures_asked_for_are_graded_and_every_metric_is_always_there():
    asked = {"a": 100}
    grade = SCHEME.grade(answer_text({"a": 100, "b": 0}, FAULTS), asked, FAULTS)
    assert (grade.figures_correct, grade.figure_accuracy) == (1.0, 1.0)
    metrics = SCHEME.metrics(answer_text({"a": 100, "b": 0}, FAULTS), asked, FAULTS)
    assert (metrics["a_correct"], metrics["b_correct"], metrics["c_correct"]) == (1.0, 0.0, 0.0)
    names = SCHEME.metric_names_all()
    unparsed = SCHEME.metrics(None, FIGURES, FAULTS)
    assert list(unparsed) == names == list(metrics)
    assert unparsed["keyed_x"] == 2.0 and unparsed["recall_x"] == unparsed["a_correct"] == 0.0
    with pytest.raises(ValueError, match="none of the graded figures"):
        SCHEME.grade(None, {"c": 7}, FAULTS)


def test_partial_credit_pays_the_share_of_graded_figures_right_and_is_off_by_default():
    one_wrong = answer_text({**FIGURES, "b": 5}, FAULTS)
    assert SCHEME.grade(one_wrong, FIGURES, FAULTS).figures_correct == 0.0
    partial = SCHEME.grade(one_wrong, FIGURES, FAULTS, partial=True)
    assert partial.figures_correct == partial.figure_accuracy == 0.5
    assert SCHEME.grade(answer_text(FIGURES, FAULTS), FIGURES, FAULTS, partial=True).figures_correct == 1.0
    assert SCHEME.grade(None, FIGURES, FAULTS, partial=True) == UNPARSED
    credited = SCHEME.metrics(one_wrong, FIGURES, FAULTS, partial=True)
    assert credited == SCHEME.metrics(one_wrong, FIGURES, FAULTS)


def test_metric_keys_are_lower_case_words():
    assert [metric_key(name) for name in ("1A", "G1", "net", "gst_on_gst_free", "a-b c")] == [
        "1a",
        "g1",
        "net",
        "gst_on_gst_free",
        "a_b_c",
    ]


@pytest.mark.parametrize(
    "reply", [None, "", "no block", "<answer>[1]</answer>", '<answer>{"a": "1.00"}</answer>']
)
def test_an_unparseable_reply_scores_zero(reply):
    assert SCHEME.grade(reply, FIGURES, FAULTS) == UNPARSED


def test_a_scheme_must_grade_figures_it_reads_and_name_real_fields():
    with pytest.raises(ValueError, match="graded figures"):
        Scheme(labels=("a",), graded=("b",), codes=(), metric_names={})
    with pytest.raises(ValueError, match="unknown grade fields"):
        Scheme(labels=("a",), graded=("a",), codes=(), metric_names={"m": "nope"})


def test_a_reply_is_parsed_once_per_scheme():
    reply = answer_text(FIGURES, FAULTS)
    assert SCHEME.parse(reply) is SCHEME.parse(reply)
    assert SCHEME.parse(reply).figures == FIGURES


def test_code_scores_split_the_audit_by_code():
    truth = fault_pairs(FAULTS)
    claimed = read_fault_map({"T1": "x", "T2": ["y", "z"], "T3": ["x"]})
    scores = code_scores(claimed, truth, ("x", "y", "w"))
    assert (scores["x"].precision, scores["x"].recall) == (0.5, 0.5)
    assert (scores["y"].precision, scores["y"].recall) == (1.0, 1.0)
    assert (scores["w"].precision, scores["w"].recall, scores["w"].f1) == (0.0, 0.0, 1.0)
    assert set(scores) == {"x", "y", "w"}


def test_a_key_is_figures_and_faults():
    key = Key({"a": 1}, {"T1": ("x",)})
    assert key.figures == {"a": 1} and fault_lists(key.faults) == {"T1": ["x"]}


ROWS_SCHEME = Scheme(
    labels=("A", "B"), graded=("A",), codes=("x", "y"), metric_names={"acc": "figure_accuracy"}, row_key="tax"
)
ROW_KEY = {"T1": 500, "T2": 0, "T3": 1200}
ROW_FAULTS = {"T2": ["x"]}


def _row_reply(rows, faults=ROW_FAULTS, a="1.00"):
    import json

    return f"<answer>{json.dumps({'A': a, 'tax': rows, 'faults': faults})}</answer>"


def test_only_corrections_count_a_faulty_rows_figure_with_its_flag_and_a_flag_with_its_figure():
    right = {"T1": "5.00", "T2": "0.00", "T3": "12.00"}
    grade = lambda reply: ROWS_SCHEME.grade(reply, {"A": 100}, ROW_FAULTS, True, ROW_KEY)  # noqa: E731
    assert grade(_row_reply(right)) == (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)
    assert grade(_row_reply({**right, "T9": "1.00"})).figures_correct == 1.0  # rows not asked: ignored
    # Graded: A and the faulty row T2; a clean row's figure is not.
    assert grade(_row_reply({**right, "T3": "12.01"})).figures_correct == 1.0
    off = grade(_row_reply({**right, "T2": "0.01"}))
    assert off.figures_correct == pytest.approx(0.5) and off.fault_audit == 0.0  # the flag is not backed
    # The faulted row unflagged costs its share; its codes are the audit's; a clean row flagged costs
    # only the audit's precision.
    assert grade(_row_reply(right, {})).figures_correct == pytest.approx(0.5)
    other = grade(_row_reply(right, {"T2": ["y"]}))
    assert other.figures_correct == 1.0 and other.fault_audit == 0.0
    extra = grade(_row_reply(right, {"T2": ["x"], "T1": ["y"]}))
    assert extra.figures_correct == 1.0 and extra.fault_precision == pytest.approx(0.5)
    assert grade(_row_reply(right, {"T2": ["x"], "T1": []})).fault_audit == 1.0  # an empty list flags nothing
    # Every row flagged with every code: the rows' share is whole, the audit's precision is not.
    everything = grade(_row_reply(right, {txn: ["x", "y"] for txn in ROW_KEY}))
    assert everything.figures_correct == 1.0 and everything.fault_precision == pytest.approx(1 / 6)
    for bad in ("5.00", ["5.00"], None, 7):
        scored = grade(_row_reply(bad))
        assert (
            scored.parsed == 1.0
            and scored.figures_correct == pytest.approx(0.5)
            and scored.fault_audit == 0.0
        )
    # The books copied (the faulty row's recorded figure, unflagged) earns only what A earns.
    assert grade(_row_reply({**right, "T2": "3.00"}, {})).figures_correct == pytest.approx(0.5)
    # All or nothing unless partial; without rows the scheme grades as before.
    assert (
        ROWS_SCHEME.grade(
            _row_reply({**right, "T2": "0.01"}), {"A": 100}, ROW_FAULTS, False, ROW_KEY
        ).figures_correct
        == 0.0
    )
    assert ROWS_SCHEME.grade(_row_reply({}), {"A": 100}, ROW_FAULTS).figures_correct == 1.0
    assert answer_text({"A": 100}, ROW_FAULTS, ("tax", {"T1": 500})).count('"tax": {"T1": "5.00"}') == 1


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=40) | st.decimals(allow_nan=False, places=3),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(
    rows=st.one_of(
        _json_values, st.dictionaries(st.sampled_from(["T1", "T2", "T3", "T9", "t1", ""]), _json_values)
    ),
    faults=st.dictionaries(
        st.sampled_from(["T1", "T2", "T3", "T9"]), st.lists(st.sampled_from(["x", "y", "z"]))
    ),
)
def test_any_row_map_grades_without_raising_and_credits_a_row_only_for_its_exact_cents(rows, faults):
    import json

    reply = f"<answer>{json.dumps({'A': '1.00', 'tax': rows, 'faults': faults}, default=str)}</answer>"
    grade = ROWS_SCHEME.grade(reply, {"A": 100}, ROW_FAULTS, True, ROW_KEY)
    assert grade.parsed == 1.0 and 0.0 <= grade.figures_correct <= 1.0
    stated = rows if isinstance(rows, dict) else {}
    from piv_core.parsing.money import parse_cents

    exact = {txn for txn, cents in ROW_KEY.items() if txn in stated and parse_cents(stated[txn]) == cents}
    faulty = set(ROW_FAULTS)
    assert grade.figures_correct <= (1 + len(exact & faulty)) / (1 + len(faulty))
    if not exact & faulty:
        assert grade.fault_audit == 0.0  # a flag counts only with its row's exact figure


CLAIMS = {"T1": (500, "x"), "T2": (300, "y"), "T3": (1200, "x")}
"""The books' figure of each row in cents and the code a change to it reports (T2, recorded 3.00,
is the faulty row: its correct figure is 0.00)."""


def _claimed(rows, a="1.00", **extra):
    import json

    return f"<answer>{json.dumps({'A': a, 'tax': rows, **extra})}</answer>"


def test_claims_read_the_faults_from_the_row_figures_and_a_fault_map_is_neither_needed_nor_read():
    right = {"T1": "5.00", "T2": "0.00", "T3": "12.00"}
    grade = lambda reply: ROWS_SCHEME.grade(reply, {"A": 100}, {"T2": ["y"]}, True, ROW_KEY, CLAIMS)  # noqa: E731
    assert grade(_claimed(right)) == (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)
    assert grade(_claimed(right, faults={"T1": ["x"]})) == grade(_claimed(right))  # a fault map is not read
    # The books copied report nothing; a clean row changed is a row reported, with its claim's code.
    copied = grade(_claimed({"T1": "5.00", "T2": "3.00", "T3": "12.00"}))
    assert copied.fault_audit == 0.0 and copied.figures_correct == pytest.approx(0.5)
    changed = grade(_claimed({**right, "T3": "11.00"}))
    assert changed.figures_correct == 1.0 and changed.fault_precision == pytest.approx(0.5)
    # A faulty row changed to a wrong figure is reported but not found.
    wrong = grade(_claimed({**right, "T2": "0.01"}))
    assert (wrong.num_flagged, wrong.fault_audit, wrong.figures_correct) == (1.0, 0.0, pytest.approx(0.5))
    # Rows not in the claims and figures that are not amounts report nothing.
    assert grade(_claimed({**right, "T9": "1.00"})) == grade(_claimed(right))
    assert grade(_claimed({**right, "T1": "five"})).num_flagged == 1.0
    # Without a row map there is nothing to read the faults from: not parsed. Without claims, a
    # reply with no fault map is not parsed either.
    for bad in ("5.00", ["5.00"], None, 7):
        assert grade(_claimed(bad)) == UNPARSED
    assert ROWS_SCHEME.grade(_claimed(right), {"A": 100}, {"T2": ["y"]}, True, ROW_KEY) == UNPARSED
    changed_reply = _claimed({**right, "T3": "11.00"})
    metrics = ROWS_SCHEME.metrics(changed_reply, {"A": 100}, {"T2": ["y"]}, True, ROW_KEY, CLAIMS)
    assert metrics["precision_x"] == 0.0 and metrics["recall_y"] == 1.0
    assert answer_text({"A": 100}, None, ("tax", {"T1": 500})).count('"faults"') == 0
