"""The scoring battery, through the real `Task.score`: what each kind of reply earns."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from piv_core.parsing.money import format_cents
from piv_core.testing import score_reply
from us_sut_reconciliation_v1 import grading
from us_sut_reconciliation_v1.rules import FAULT_CODES, FIGURES, GRADED_FIGURES
from us_sut_reconciliation_v1.taskset import UsSutConfig, UsSutData, UsSutTask, make_task_data

Reply = Callable[[dict[str, int], dict[str, list[str]]], str]
Gold = Callable[[UsSutData], str]
METRICS = {"answer_parsed", "fields_correct", "fault_precision", "fault_recall"}


def test_gold_scores_one(task: UsSutTask, gold: Gold) -> None:
    scored = score_reply(task, gold(task.data))
    assert scored.rewards == {"return_correct": 1.0, "fault_audit": 1.0}
    assert {name: scored.metrics[name] for name in METRICS} == dict.fromkeys(METRICS, 1.0)
    assert list(scored.metrics) == grading.SCHEME.metric_names_all()
    assert all(scored.metrics[f"{name}_correct"] == 1.0 for name in FIGURES)
    keyed = {code for codes in task.data.faults.values() for code in codes}
    for code in FAULT_CODES:
        hit = float(code in keyed)
        assert scored.metrics[f"recall_{code}"] == scored.metrics[f"precision_{code}"] == hit, code
        assert (scored.metrics[f"keyed_{code}"] > 0) == (code in keyed)
    assert scored.reward == pytest.approx(1.0)


def test_blanket_flagging_has_full_recall_and_poor_precision(task: UsSutTask, reply: Reply) -> None:
    rows = [f"txn_{n:03d}" for n in range(1, 31)]
    scored = score_reply(task, reply(task.data.figures, {txn: list(FAULT_CODES) for txn in rows}))
    assert scored.rewards["return_correct"] == 1.0
    assert scored.metrics["fault_recall"] == 1.0
    assert scored.metrics["fault_precision"] < 0.1
    assert scored.rewards["fault_audit"] < 0.2


def test_right_row_wrong_reason_is_not_a_finding(task: UsSutTask, reply: Reply) -> None:
    txn, codes = next(iter(task.data.faults.items()))
    wrong = next(code for code in FAULT_CODES if code not in codes)
    faults = {**task.data.faults, txn: [wrong, *codes[1:]]}
    scored = score_reply(task, reply(task.data.figures, faults))
    pairs = sum(len(c) for c in task.data.faults.values())
    assert scored.metrics["fault_recall"] == pytest.approx((pairs - 1) / pairs)
    assert scored.metrics["fault_precision"] == pytest.approx((pairs - 1) / pairs)


def test_invented_code_costs_precision(task: UsSutTask, reply: Reply) -> None:
    txn = next(iter(task.data.faults))
    faults = {**task.data.faults, txn: [*task.data.faults[txn], "sales_tax_holiday"]}
    scored = score_reply(task, reply(task.data.figures, faults))
    assert scored.metrics["fault_recall"] == 1.0
    assert scored.metrics["fault_precision"] < 1.0
    assert scored.rewards["fault_audit"] < 1.0


def test_gross_only_figures_fail_the_return(task: UsSutTask, reply: Reply) -> None:
    figures = dict(task.data.figures)
    figures["taxable_sales"], figures["exempt_sales"] = figures["gross_sales"], 0
    scored = score_reply(task, reply(figures, task.data.faults))
    assert scored.rewards["return_correct"] == 0.0
    assert scored.rewards["fault_audit"] == 1.0


@pytest.mark.parametrize("name", GRADED_FIGURES)
def test_four_of_five_figures_is_not_a_correct_return(task: UsSutTask, name: str, reply: Reply) -> None:
    figures = {**task.data.figures, name: task.data.figures[name] + 1}
    scored = score_reply(task, reply(figures, task.data.faults))
    assert scored.rewards["return_correct"] == 0.0
    assert scored.metrics["fields_correct"] == pytest.approx(0.8)


def test_exempt_sales_is_reported_but_not_graded(task: UsSutTask, reply: Reply) -> None:
    figures = {**task.data.figures, "exempt_sales": 1}
    assert score_reply(task, reply(figures, task.data.faults)).reward == pytest.approx(1.0)


def test_formatting_tolerance(task: UsSutTask) -> None:
    figures, faults = task.data.figures, task.data.faults
    body = {name: f"${cents // 100:,}.{cents % 100:02d}" for name, cents in figures.items()}
    spaced = {f" {txn} ": codes[0] if len(codes) == 1 else codes for txn, codes in faults.items()}
    final = json.dumps({**body, "faults": spaced})
    text = f"draft: <answer>{{}}</answer>\nfinal:\n<ANSWER>\n```json\n{final}\n```\n</ANSWER>"
    assert score_reply(task, text).reward == pytest.approx(1.0)
    numbers = ", ".join(f'"{name}": {cents // 100}.{cents % 100:02d}' for name, cents in figures.items())
    as_numbers = f'<answer>{{{numbers}, "faults": {json.dumps(faults)}}}</answer>'
    assert score_reply(task, as_numbers).reward == pytest.approx(1.0)


def test_a_figure_with_sub_cent_digits_is_wrong(task: UsSutTask, reply: Reply) -> None:
    exact = format_cents(task.data.figures["gross_sales"])
    text = reply(task.data.figures, task.data.faults).replace(f'"{exact}"', f'"{exact}1"', 1)
    assert score_reply(task, text).metrics["fields_correct"] == pytest.approx(0.8)


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "The return is fine.",
        "<answer>{'gross_sales': 1}</answer>",
        '<answer>{"gross_sales": "1.00", "faults": {"txn_001": ["outside_period"]}</answer>',
        '<answer>{"gross_sales": "1.00"}</answer>',
        '<answer>{"gross_sales": "1.00", "faults": ["txn_001"]}</answer>',
        '<answer>{"gross_sales": "1.00", "faults": {"txn_001": [3]}}</answer>',
        "<answer>[1, 2, 3]</answer>",
        '<answer>{"gross_sales": NaN, "faults": {}}</answer>',
        '<answer>{"faults": {}}',
    ],
)
def test_malformed_replies_score_zero_and_unparsed(task: UsSutTask, text: str | None) -> None:
    scored = score_reply(task, text)
    assert scored.rewards == {"return_correct": 0.0, "fault_audit": 0.0}
    assert {name: scored.metrics[name] for name in METRICS} == dict.fromkeys(METRICS, 0.0)
    assert all(v == 0.0 for name, v in scored.metrics.items() if not name.startswith("keyed_"))
    assert list(scored.metrics) == grading.SCHEME.metric_names_all()


def test_only_the_last_answer_block_counts(task: UsSutTask, gold: Gold) -> None:
    empty = '<answer>{"faults": {}}</answer>'
    assert score_reply(task, gold(task.data) + "\n" + empty).reward < 0.5
    assert score_reply(task, empty + "\n" + gold(task.data)).reward == pytest.approx(1.0)


def test_clean_quarter(reply: Reply) -> None:
    clean = UsSutTask(make_task_data(UsSutConfig(fault_rate=0.0), 0))
    assert clean.data.faults == {}
    assert score_reply(clean, reply(clean.data.figures, {})).reward == pytest.approx(1.0)
    flagged = score_reply(clean, reply(clean.data.figures, {"txn_001": ["outside_period"]}))
    assert flagged.rewards == {"return_correct": 1.0, "fault_audit": 0.0}


def test_scores_survive_the_wire(task: UsSutTask, gold: Gold) -> None:
    """A served task is rebuilt from its data's JSON alone and scores the same."""
    rebuilt = UsSutTask(type(task.data).model_validate(json.loads(task.data.model_dump_json())))
    assert score_reply(rebuilt, gold(task.data)).reward == pytest.approx(1.0)
