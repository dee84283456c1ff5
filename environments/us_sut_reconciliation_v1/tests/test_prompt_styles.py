"""The knobs that shape what a low rung shows and grades: `prompt_style`, `figure_credit` and
`row_mix`. Their defaults leave every task as it was; a focused prompt states only the codes and
figures of its task, and the key, the oracle and `validate` follow what the prompt states."""

from __future__ import annotations

import asyncio
import itertools
import re
from decimal import Decimal

import pytest
from piv_core.policy import Conversation
from piv_core.testing import score_reply
from pydantic import ValidationError
from us_sut_reconciliation_v1 import baselines, plugin, prompt, rules
from us_sut_reconciliation_v1.ledger import SALE, TAXABLE
from us_sut_reconciliation_v1.rules import (
    FAULT_CODES,
    FIGURES,
    NEXUS_MISALLOCATION,
    TAX_MISCALCULATED,
    combined_rate,
)
from us_sut_reconciliation_v1.taskset import (
    MAX_ROWS,
    MAX_ROWS_ANY_PROMPT,
    UsSutConfig,
    UsSutTask,
    make_task_data,
)

FOCUSED = {
    "num_tasks": 60,
    "num_rows": 6,
    "fault_rate": 0.3,
    "fault_codes": [TAX_MISCALCULATED],
    "figures": ["gross_sales", "sales_tax_due"],
    "prompt_style": "focused",
}


def _valid(task: UsSutTask) -> bool:
    return asyncio.run(task.validate(None))  # type: ignore[arg-type]


def _conversation(task: UsSutTask) -> Conversation:
    messages = [
        {"role": "system", "content": task.data.system_prompt},
        {"role": "user", "content": task.data.prompt_text},
    ]
    return Conversation(messages, [])


def test_the_defaults_are_the_full_prompt_and_all_or_nothing():
    config = UsSutConfig()
    assert (config.prompt_style, config.figure_credit, config.row_mix) == ("full", "all_or_nothing", "mixed")
    assert make_task_data(config, 0).system_prompt == prompt.SYSTEM_PROMPT
    assert prompt.system_prompt() == prompt.SYSTEM_PROMPT


@pytest.mark.parametrize("credit", prompt.FIGURE_CREDITS)
@pytest.mark.parametrize("style", prompt.PROMPT_STYLES)
def test_the_scope_is_read_back_from_every_prompt(style, credit):
    for size in (1, 2, 6):
        for codes in itertools.combinations(FAULT_CODES, size):
            text = prompt.system_prompt(style, codes, FIGURES, credit)
            scope = prompt.read_scope(text)
            assert (scope.style, scope.credit) == (style, credit)
            assert scope.codes == (codes if style == "focused" else FAULT_CODES)
            assert text.startswith(prompt.MARKER)


def test_a_focused_prompt_names_only_its_codes_and_figures_and_shows_no_figures():
    text = make_task_data(UsSutConfig(**FOCUSED), 0).system_prompt
    for code in FAULT_CODES:
        assert (code in text) == (code == TAX_MISCALCULATED), code
    for name in FIGURES:
        assert (f"{name} =" in text) == (name in FOCUSED["figures"]), name
    answer_part = text.partition("ANSWER FORMAT")[2]
    assert not re.search(r"\d+\.\d\d", answer_part) and not re.search(r"txn_\d", text)
    assert "one line per row" in text and "one line per row" not in prompt.SYSTEM_PROMPT


def test_without_nexus_a_wrong_origin_rate_tax_is_tax_miscalculated():
    config = UsSutConfig(num_rows=40, fault_rate=0.5, fault_codes=[NEXUS_MISALLOCATION], num_tasks=5)
    hits = 0
    for idx in range(5):
        quarter, business_zip, rows = prompt.read_ledger(make_task_data(config, idx).prompt_text)
        full = rules.reconcile(quarter, business_zip, rows)
        narrow = rules.reconcile(quarter, business_zip, rows, [TAX_MISCALCULATED])
        for txn, codes in full.faults.items():
            if NEXUS_MISALLOCATION in codes:
                hits += 1
                assert narrow.faults[txn] == (TAX_MISCALCULATED,)
        assert narrow.figures == full.figures
    assert hits


def test_partial_credit_grades_each_figure_and_the_prompt_says_so(reply):
    task = UsSutTask(make_task_data(UsSutConfig(**FOCUSED, figure_credit="partial"), 0))
    assert task.data.system_prompt.endswith(prompt.PARTIAL_CREDIT_NOTE)
    off = {**task.data.figures, "sales_tax_due": task.data.figures["sales_tax_due"] + 1}
    half = score_reply(task, reply(off, task.data.faults))
    assert half.rewards["return_correct"] == pytest.approx(0.5)
    whole = UsSutTask(make_task_data(UsSutConfig(**FOCUSED), 0))
    assert score_reply(whole, reply(off, whole.data.faults)).rewards["return_correct"] == 0.0
    plain = task.data.system_prompt.removesuffix("\n\n" + prompt.PARTIAL_CREDIT_NOTE)
    stated = UsSutTask(task.data.model_copy(update={"system_prompt": plain}))
    assert score_reply(stated, reply(off, task.data.faults)).rewards["return_correct"] == 0.0


@pytest.mark.parametrize(
    "row_mix", ["sales", "tenth_rate_sales", "home_sales", "dollar_home_sales", "round_home_sales"]
)
def test_a_sales_only_mix_writes_unclaimed_sales_of_every_category(row_mix):
    config = UsSutConfig(**{**FOCUSED, "fault_rate": 0.0}, row_mix=row_mix)
    categories, prices, rates, cents = set(), set(), set(), set()
    for idx in range(40):
        _, business_zip, rows = prompt.read_ledger(make_task_data(config, idx).prompt_text)
        assert all(r.kind == SALE and not r.claimed for r in rows)
        categories |= {r.category in TAXABLE for r in rows}
        rates |= {combined_rate(r.zip) for r in rows}
        if row_mix.endswith("home_sales"):
            rate = combined_rate(business_zip)
            assert rate == rate.to_integral_value() and all(r.zip == business_zip for r in rows)
        if row_mix == "round_home_sales":
            assert all(r.gross % 50 == 0 for r in rows)
        if row_mix == "dollar_home_sales":
            assert all(r.gross % 1 == 0 and r.gross >= 5 for r in rows)
        prices |= {r.gross % 50 == 0 for r in rows}
        cents |= {r.gross % 1 == 0 for r in rows}
    assert categories == {True, False} and (row_mix == "round_home_sales" or False in prices)
    assert (cents == {True}) == row_mix.endswith(("round_home_sales", "dollar_home_sales"))
    if row_mix == "tenth_rate_sales":  # rates of one decimal, whole ones among them
        assert {r == r.quantize(Decimal("0.1")) for r in rates} == {True} and len(rates) == 4
        assert {r == r.to_integral_value() for r in rates} == {True, False}
    if row_mix == "sales":
        assert any(r != r.quantize(Decimal("0.1")) for r in rates)


@pytest.mark.parametrize(
    "row_mix", ["mixed", "sales", "tenth_rate_sales", "home_sales", "dollar_home_sales", "round_home_sales"]
)
@pytest.mark.parametrize("credit", prompt.FIGURE_CREDITS)
def test_the_oracle_scores_full_and_validate_passes_under_every_style(row_mix, credit):
    code_sets = ([TAX_MISCALCULATED], ["missing_exemption_cert", "duplicate_invoice"], list(FAULT_CODES))
    for codes in code_sets:
        config = UsSutConfig(
            num_tasks=8,
            num_rows=12,
            fault_rate=0.4,
            fault_codes=codes,
            figures=["taxable_sales", "use_tax_due"],
            prompt_style="focused",
            figure_credit=credit,
            row_mix=row_mix,
        )
        for idx in range(8):
            task = UsSutTask(make_task_data(config, idx))
            assert _valid(task), (codes, idx)
            assert {c for cs in task.data.faults.values() for c in cs} <= set(codes)
            assert score_reply(task, baselines.oracle(_conversation(task))).reward == pytest.approx(1.0)


def test_a_prompt_that_states_other_codes_or_figures_than_its_key_fails_validate():
    task = UsSutTask(make_task_data(UsSutConfig(**FOCUSED, row_mix="round_home_sales"), 0))
    assert _valid(task) and task.data.faults
    for system in (
        prompt.system_prompt("focused", ["tax_on_exempt_item"], FOCUSED["figures"]),
        prompt.system_prompt("focused", [TAX_MISCALCULATED], ["gross_sales", "use_tax_due"]),
        task.data.system_prompt.replace("one line per row", "one line per two rows"),
    ):
        assert not _valid(UsSutTask(task.data.model_copy(update={"system_prompt": system})))


def test_the_degenerate_answers_stay_below_an_honest_audit_on_a_focused_ledger():
    config = UsSutConfig(**FOCUSED, row_mix="round_home_sales")
    rewards: dict[str, list[float]] = {}
    for idx in range(60):
        task = UsSutTask(make_task_data(config, idx))
        conversation = _conversation(task)
        replies = {
            "empty": '<answer>{"faults": {}}</answer>',
            "example": baselines.example(conversation),
            "blanket": baselines.blanket(conversation),
        }
        for name, text in replies.items():
            rewards.setdefault(name, []).append(score_reply(task, text).reward)
    means = {name: sum(values) / len(values) for name, values in rewards.items()}
    assert means["empty"] == means["example"] == 0.0, means
    assert means["blanket"] < 0.2, means


@pytest.mark.parametrize(
    ("knobs", "named"),
    [
        ({"prompt_style": "short"}, "prompt_style"),
        ({"figure_credit": "half"}, "figure_credit"),
        ({"row_mix": "taxable_sales"}, "row_mix"),
        (
            {"num_rows": MAX_ROWS, "num_tasks": 1, "figure_credit": "partial"},
            f"num_rows must be <= {MAX_ROWS_ANY_PROMPT}",
        ),
    ],
)
def test_a_bad_prompt_knob_fails_naming_it(knobs, named):
    with pytest.raises(ValidationError, match=named):
        UsSutConfig(**knobs)


def test_the_baseline_endpoint_recognises_every_style_by_the_marker():
    text = make_task_data(UsSutConfig(**FOCUSED), 0).system_prompt
    assert plugin.PLUGIN.mark == prompt.MARKER
    assert prompt.MARKER in text and prompt.MARKER in prompt.SYSTEM_PROMPT
