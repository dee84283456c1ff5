"""The knobs that shape what a low rung shows and grades: `prompt_style`, `figure_credit` and
`row_mix`. Their defaults leave every task as it was; a focused prompt states only the codes and
labels of its task, and the key, the oracle and `validate` follow what the prompt states."""

from __future__ import annotations

import asyncio
import itertools
import random
import re

import pytest
from au_bas_reconciliation_v1 import baselines, plugin, prompt
from au_bas_reconciliation_v1.generator import ROUND_GST_DOLLARS, ROUND_SALES
from au_bas_reconciliation_v1.ledger import SALE, TAXABLE
from au_bas_reconciliation_v1.rules import FAULT_CODES, GST_MISCALCULATED, LABELS, correct_gst
from au_bas_reconciliation_v1.taskset import (
    MAX_TRANSACTIONS,
    MAX_TRANSACTIONS_ANY_PROMPT,
    AuBasConfig,
    AuBasTask,
    make_task_data,
)
from piv_core.policy import Conversation
from piv_core.testing import score_reply
from pydantic import ValidationError

FOCUSED = {
    "num_transactions": 6,
    "fault_rate": 0.3,
    "fault_codes": [GST_MISCALCULATED],
    "labels": ["G1", "1A"],
    "prompt_style": "focused",
}


def _valid(task: AuBasTask) -> bool:
    return asyncio.run(task.validate(None))  # type: ignore[arg-type]


def _conversation(task: AuBasTask) -> Conversation:
    messages = [
        {"role": "system", "content": task.data.system_prompt},
        {"role": "user", "content": task.data.prompt},
    ]
    return Conversation(messages, [])


def test_the_defaults_are_the_full_prompt_and_all_or_nothing():
    config = AuBasConfig()
    assert (config.prompt_style, config.figure_credit, config.row_mix) == ("full", "all_or_nothing", "mixed")
    assert make_task_data(config, 0).system_prompt == prompt.SYSTEM_PROMPT
    assert prompt.system_prompt() == prompt.SYSTEM_PROMPT


@pytest.mark.parametrize("credit", prompt.FIGURE_CREDITS)
@pytest.mark.parametrize("style", prompt.PROMPT_STYLES)
def test_the_scope_is_read_back_from_every_prompt(style, credit):
    for size in (1, 2, 5):
        for codes in itertools.combinations(FAULT_CODES, size):
            text = prompt.system_prompt(style, codes, LABELS, credit)
            scope = prompt.read_scope(text)
            assert (scope.style, scope.credit) == (style, credit)
            assert scope.codes == (codes if style == "focused" else FAULT_CODES)
            assert text.startswith(prompt.MARKER)


def test_a_focused_prompt_names_only_its_codes_and_labels_and_shows_no_figures():
    task = AuBasTask(make_task_data(AuBasConfig(**FOCUSED), 0))
    text = task.data.system_prompt
    for code in FAULT_CODES:
        assert (code in text) == (code == GST_MISCALCULATED), code
    assert '"1B"' not in text and "1B (" not in text and "net =" not in text
    assert not re.search(r"\d+\.\d\d", text.partition("ANSWER FORMAT")[2])  # no example figure
    assert not re.search(r"\bT\d{3}\b", text)  # no example txn_id
    assert "row by row" not in prompt.SYSTEM_PROMPT and "one line per row" in text


def test_partial_credit_grades_each_label_and_the_prompt_says_so(answer):
    task = AuBasTask(make_task_data(AuBasConfig(**FOCUSED, figure_credit="partial"), 0))
    assert task.data.system_prompt.endswith(prompt.PARTIAL_CREDIT_NOTE)
    half = score_reply(task, answer(task.data, **{"1A": "0.01"}))
    assert half.rewards["bas_correct"] == pytest.approx(0.5)
    assert half.metrics["bas_label_accuracy"] == pytest.approx(0.5)
    whole = AuBasTask(make_task_data(AuBasConfig(**FOCUSED), 0))
    assert score_reply(whole, answer(whole.data, **{"1A": "0.01"})).rewards["bas_correct"] == 0.0
    assert score_reply(task, answer(task.data)).reward == pytest.approx(1.0)


@pytest.mark.parametrize("row_mix", ["sales", "round_sales"])
def test_a_sales_only_mix_writes_sales_of_every_treatment_and_the_rounded_one_whole_dollar_gst(row_mix):
    config = AuBasConfig(**{**FOCUSED, "fault_rate": 0.0}, row_mix=row_mix)
    treatments = set()
    for idx in range(40):
        _, rows = prompt.read_ledger(make_task_data(config, idx).prompt)
        assert all(row.kind == SALE for row in rows)
        treatments |= {row.category in TAXABLE for row in rows}
        assert all(row.gst == correct_gst(row) for row in rows)
        if row_mix == ROUND_SALES:
            assert all(row.amount % 11 == 0 and row.amount / 11 in ROUND_GST_DOLLARS for row in rows)
    assert treatments == {True, False}


def test_round_sales_miscalculate_in_whole_dollars_above_and_below_so_cents_tell_nothing():
    config = AuBasConfig(**{**FOCUSED, "fault_codes": [GST_MISCALCULATED]}, row_mix=ROUND_SALES)
    sides = set()
    for idx in range(60):
        data = make_task_data(config, idx)
        for row in prompt.read_ledger(data.prompt)[1]:
            assert row.gst % 1 == 0, (idx, row)  # clean or faulty, the books' GST is whole dollars
            right = correct_gst(row)
            if row.txn_id in data.faults and right:
                sides.add(row.gst > right)
    assert sides == {True, False}


@pytest.mark.parametrize("row_mix", ["mixed", "sales", "round_sales"])
@pytest.mark.parametrize("credit", prompt.FIGURE_CREDITS)
def test_the_oracle_scores_full_and_validate_passes_under_every_style(row_mix, credit):
    for codes in ([GST_MISCALCULATED], ["gst_on_gst_free", "duplicate_invoice"], list(FAULT_CODES)):
        config = AuBasConfig(
            num_transactions=10,
            fault_rate=0.4,
            fault_codes=codes,
            labels=["G1", "1B"],
            prompt_style="focused",
            figure_credit=credit,
            row_mix=row_mix,
        )
        for idx in range(8):
            task = AuBasTask(make_task_data(config, idx))
            assert _valid(task), (codes, idx)
            assert {c for cs in task.data.faults.values() for c in cs} <= set(codes)
            assert score_reply(task, baselines.oracle(_conversation(task))).reward == pytest.approx(1.0)


def test_a_prompt_that_states_other_codes_or_labels_than_its_key_fails_validate():
    task = AuBasTask(make_task_data(AuBasConfig(**FOCUSED, figure_credit="partial"), 0))
    assert _valid(task) and task.data.faults
    for system in (
        prompt.system_prompt("focused", ["gst_on_gst_free"], ["G1", "1A"], "partial"),
        prompt.system_prompt("focused", [GST_MISCALCULATED], ["G1", "1B"], "partial"),
        task.data.system_prompt.replace("one line per row", "one line per two rows"),
    ):
        assert not _valid(AuBasTask(task.data.model_copy(update={"system_prompt": system})))


def test_the_grading_follows_the_credit_the_prompt_states(answer):
    task = AuBasTask(make_task_data(AuBasConfig(**FOCUSED, figure_credit="partial"), 0))
    plain = task.data.system_prompt.removesuffix("\n\n" + prompt.PARTIAL_CREDIT_NOTE)
    stated = AuBasTask(task.data.model_copy(update={"system_prompt": plain}))
    reply = answer(task.data, **{"1A": "0.01"})
    assert score_reply(task, reply).rewards["bas_correct"] == pytest.approx(0.5)
    assert score_reply(stated, reply).rewards["bas_correct"] == 0.0


def test_the_degenerate_answers_stay_below_an_honest_audit_on_a_focused_ledger():
    config = AuBasConfig(**FOCUSED, row_mix="round_sales")
    rewards: dict[str, list[float]] = {}
    rng = random.Random(3)
    for idx in range(60):
        task = AuBasTask(make_task_data(config, idx))
        conversation = _conversation(task)
        replies = {
            "empty": '<answer>{"faults": {}}</answer>',
            "example": baselines.example(conversation),
            **{name: baselines.POLICIES[name](conversation) for name in ("column-sums", "blanket")},
            "noisy-0.5": baselines.noisy(conversation, 0.5, rng),
        }
        for name, reply in replies.items():
            rewards.setdefault(name, []).append(score_reply(task, reply).reward)
    means = {name: sum(values) / len(values) for name, values in rewards.items()}
    assert means["empty"] == means["example"] == 0.0 and means["column-sums"] < 0.05, means
    # Every row flagged earns the precision of a guess, under an audit that errs on every other row.
    assert means["blanket"] < 0.25 and means["blanket"] < means["noisy-0.5"] - 0.1, means


@pytest.mark.parametrize(
    ("knobs", "named"),
    [
        ({"prompt_style": "short"}, "prompt_style"),
        ({"figure_credit": "half"}, "figure_credit"),
        ({"row_mix": "taxable_sales"}, "row_mix"),
        ({"prompt_style": True}, "prompt_style"),
        (
            {"num_transactions": MAX_TRANSACTIONS, "prompt_style": "focused"},
            f"num_transactions must be <= {MAX_TRANSACTIONS_ANY_PROMPT}",
        ),
    ],
)
def test_a_bad_prompt_knob_fails_naming_it(knobs, named):
    with pytest.raises(ValidationError, match=named):
        AuBasConfig(**knobs)


def test_the_baseline_endpoint_recognises_every_style_by_the_marker():
    task = AuBasTask(make_task_data(AuBasConfig(**FOCUSED), 0))
    assert plugin.PLUGIN.mark == prompt.MARKER
    assert prompt.MARKER in task.data.system_prompt and prompt.MARKER in prompt.SYSTEM_PROMPT
