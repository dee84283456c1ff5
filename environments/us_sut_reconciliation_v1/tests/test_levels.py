"""The difficulty ladder and the knobs it sets: every rung is solvable from its prompt alone,
validates, and is the rung it says; unset, the taskset is the default one. Also the rules the
prompt states once: a missing-certificate purchase the vendor taxed owes no use tax."""

from __future__ import annotations

import asyncio
import random
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from piv_core.parsing.money import format_cents
from piv_core.policy import Conversation
from piv_core.tasksets.ladder import rung_table
from piv_core.testing import filled_from_key, score_reply
from pydantic import ValidationError
from us_sut_reconciliation_v1 import baselines, grading, prompt, rules, worksheet
from us_sut_reconciliation_v1.generator import WHOLE_RATE_ZIPS
from us_sut_reconciliation_v1.ledger import PURCHASE, SALE
from us_sut_reconciliation_v1.levels import RUNGS
from us_sut_reconciliation_v1.rules import FAULT_CODES, FIGURES, TAX_MISCALCULATED, TAX_ON_EXEMPT_ITEM
from us_sut_reconciliation_v1.taskset import UsSutConfig, UsSutTask, make_task_data


def _valid(task: UsSutTask) -> bool:
    return asyncio.run(task.validate(None))  # type: ignore[arg-type]


def _oracle(task: UsSutTask) -> str:
    messages = [
        {"role": "system", "content": task.data.system_prompt},
        {"role": "user", "content": task.data.prompt_text},
    ]
    return baselines.oracle(Conversation(messages, []))


@pytest.mark.parametrize("level", sorted(RUNGS))
def test_every_rung_is_solved_by_the_oracle_and_validates(level):
    config = UsSutConfig(level=level)
    rung = RUNGS[level]
    for idx in range(15):
        task = UsSutTask(make_task_data(config, idx))
        assert task.data.id == f"us-sut-level{level}-{config.seed}-{idx}"
        assert len(prompt.read_ledger(task.data.prompt_text)[2]) == rung["num_rows"]
        assert list(task.data.figures) == rung["figures"]
        assert _valid(task), (level, idx)
        assert score_reply(task, _oracle(task)).reward == pytest.approx(1.0), (level, idx)


def test_rung_one_asks_the_sales_tax_and_every_rows_tax_of_five_round_home_sales(reply):
    task = UsSutTask(make_task_data(UsSutConfig(level=1), 1))
    data = task.data
    assert "Figures to report: sales_tax_due (only these)" in data.prompt_text
    _, business_zip, rows = prompt.read_ledger(data.prompt_text)
    assert all(r.kind == SALE and r.zip == business_zip and r.gross % 50 == 0 for r in rows)
    assert business_zip in WHOLE_RATE_ZIPS and set(data.row_figures) == {r.txn_id for r in rows}
    codes = {
        code
        for idx in range(60)
        for codes in make_task_data(UsSutConfig(level=1), idx).faults.values()
        for code in codes
    }
    assert codes == {TAX_ON_EXEMPT_ITEM, TAX_MISCALCULATED}
    assert all(make_task_data(UsSutConfig(level=1), idx).faults for idx in range(30))  # never clean
    extra = reply({**data.figures, "use_tax_due": 123}, data.faults, data.row_figures)  # not asked: ignored
    assert score_reply(task, extra).reward == pytest.approx(1.0)
    # Partial credit for corrections: sales_tax_due and each faulty row are an equal share each.
    one = 1 / (1 + len(data.faults))
    wrong = reply({"sales_tax_due": data.figures["sales_tax_due"] + 1}, data.faults, data.row_figures)
    scored = score_reply(task, wrong)
    assert scored.rewards["return_correct"] == pytest.approx(1 - one) and scored.rewards["fault_audit"] == 1.0
    for txn in data.row_figures:
        faulty = txn in data.faults
        off = reply(data.figures, data.faults, {**data.row_figures, txn: data.row_figures[txn] + 1})
        scored = score_reply(task, off).rewards
        assert scored["return_correct"] == pytest.approx(1 - one if faulty else 1.0), txn
        assert (scored["fault_audit"] < 1.0) == faulty, txn  # a flag counts with its row's tax only
        # A faulty row left unflagged costs its share; a clean row flagged costs the precision only.
        if faulty:
            misjudged = {t: c for t, c in data.faults.items() if t != txn}
        else:
            misjudged = {**data.faults, txn: [TAX_MISCALCULATED]}
        scored = score_reply(task, reply(data.figures, misjudged, data.row_figures)).rewards
        assert scored["return_correct"] == pytest.approx(1 - one if faulty else 1.0), txn
        assert scored["fault_audit"] < 1.0, txn


def test_at_rung_one_no_answer_that_skips_the_audit_earns_more_than_three_tenths(reply):
    config = UsSutConfig(level=1)
    scores: dict[str, list[float]] = {}
    for idx in range(200):
        task = UsSutTask(make_task_data(config, idx))
        data = task.data
        _, _, rows = prompt.read_ledger(data.prompt_text)
        books = {r.txn_id: int(r.tax * 100) for r in rows}
        zeros = dict.fromkeys(books, 0)
        every = {code: {t: [code] for t in books} for code in (TAX_ON_EXEMPT_ITEM, TAX_MISCALCULATED)}
        both = {t: [TAX_ON_EXEMPT_ITEM, TAX_MISCALCULATED] for t in books}
        total = {"sales_tax_due": sum(books.values())}
        for name, rows_map, faults, figures in (
            ("books", books, {}, total),
            ("books, all flagged", books, both, total),
            ("zeros, all exempt-flagged", zeros, every[TAX_ON_EXEMPT_ITEM], {"sales_tax_due": 0}),
            ("zeros, both codes", zeros, both, {"sales_tax_due": 0}),
            ("worked, no audit", data.row_figures, {}, data.figures),
        ):
            scores.setdefault(name, []).append(score_reply(task, reply(figures, faults, rows_map)).reward)
    means = {name: sum(values) / len(values) for name, values in scores.items()}
    worked = means.pop("worked, no audit")
    assert max(means.values()) < 0.3 and worked > max(means.values()) + 0.05, (means, worked)


def test_rung_one_ends_on_a_worksheet_that_validate_rebuilds_and_its_answer_line_reads_as_the_key():
    for idx in range(40):
        task = UsSutTask(make_task_data(UsSutConfig(level=1), idx))
        data = task.data
        _, business_zip, rows = prompt.read_ledger(data.prompt_text)
        sheet = data.prompt_text.split("```\n\n", 1)[1]
        assert sheet == worksheet.worksheet(rows, ["sales_tax_due"], business_zip) and _valid(task)
        for row in rows:
            code = TAX_MISCALCULATED if data.row_figures[row.txn_id] else TAX_ON_EXEMPT_ITEM
            line = next(line for line in sheet.splitlines() if line.startswith(f"{row.txn_id}: "))
            assert f"recorded tax {row.tax} - " in line
            asked = f'Is the difference 0.00? <yes or no>. Faults: <[] if yes, ["{code}"] if no>.'
            assert asked in line, line
        parts = [f"<tax of {row.txn_id}>" if data.row_figures[row.txn_id] else "0.00" for row in rows]
        closing = sheet.splitlines()[-4:]
        assert closing[0] == f"sales_tax_due = {' + '.join(parts)} = <sales_tax_due>"
        assert closing[3].startswith(
            f"Start your reply with {rows[0].txn_id}'s line and end it with the answer line"
        )
        swapped = ('["tax_miscalculated"] if no>', '["tax_on_exempt_item"] if no>')
        hundredth = ("x 9 / 100 = ", "x 9 / 100 = 1")
        for old, new in (swapped, ("x 9 /", "x 8 /"), hundredth, (" + 0.00 ", " + 1.00 ")):
            if old in sheet:
                tampered = data.model_copy(update={"prompt": data.prompt_text.replace(old, new, 1)})
                assert not _valid(UsSutTask(tampered)), (idx, old)
        figures = {"sales_tax_due": format_cents(data.figures["sales_tax_due"])}
        line, missed = filled_from_key(data.prompt_text, figures, data.row_figures, data.faults, "tax")
        assert score_reply(task, line).reward == pytest.approx(1.0), line
        assert score_reply(task, missed).rewards["return_correct"] == pytest.approx(
            1 - 1 / (1 + len(data.faults))
        ), missed


def test_a_prompt_asking_other_figures_than_the_key_fails_validate():
    task = UsSutTask(make_task_data(UsSutConfig(level=1), 0))
    text = task.data.prompt_text.replace("report: sales_tax_due (only", "report: use_tax_due (only")
    assert not _valid(UsSutTask(task.data.model_copy(update={"prompt": text})))


def test_rungs_one_to_seven_have_a_focused_prompt_and_the_others_the_full_one():
    for level in RUNGS:
        system = make_task_data(UsSutConfig(level=level), 0).system_prompt
        assert (system == prompt.SYSTEM_PROMPT) == (level > 7), level


def test_unset_level_is_the_default_set_and_levels_have_their_own_ids():
    default, level9 = UsSutConfig(), UsSutConfig(level=9)
    assert default.fault_codes == list(FAULT_CODES) and default.figures == list(FIGURES)
    plain, nine = make_task_data(default, 3), make_task_data(level9, 3)
    assert plain.id == f"us-sut-{default.seed}-3" and nine.id == f"us-sut-level9-{default.seed}-3"
    assert plain.model_copy(update={"id": nine.id, "level": 9}) == nine  # rung 9 is the default configuration
    assert len({make_task_data(UsSutConfig(level=level), 0).id for level in RUNGS}) == len(RUNGS)


@pytest.mark.parametrize("level", sorted(RUNGS))
def test_each_rung_is_a_valid_set_of_knobs(level):
    by_hand, by_level = UsSutConfig(**RUNGS[level]), UsSutConfig(level=level)
    assert by_hand.model_dump(exclude={"level"}) == by_level.model_dump(exclude={"level"})


def test_the_ladder_climbs():
    sizes = [RUNGS[level]["num_rows"] for level in sorted(RUNGS)]
    assert sizes == sorted(sizes) and sizes[-1] > UsSutConfig().num_rows
    assert RUNGS[max(RUNGS)]["fault_rate"] > UsSutConfig().fault_rate


def test_each_focused_rung_changes_one_knob_from_the_one_below():
    changed = [{k for k, v in RUNGS[level].items() if RUNGS[level - 1][k] != v} for level in range(2, 8)]
    assert changed == [{"row_mix"}] * 4 + [{"fault_codes"}, {"worksheet"}]
    mixes = [RUNGS[level]["row_mix"] for level in (1, 2, 3, 4, 5)]
    assert mixes == ["round_home_sales", "dollar_home_sales", "home_sales", "tenth_rate_sales", "sales"]


@pytest.mark.parametrize(
    ("knobs", "named"),
    [
        ({"level": 0}, "level must be between 1 and 11"),
        ({"worksheet": False}, "worksheet=False needs row_figures"),
        ({"level": 1, "num_rows": 30}, "num_rows was given"),
        ({"fault_codes": ["nexus"]}, "fault_codes must be a non-empty list"),
        ({"figures": []}, "figures must be a non-empty list"),
        ({"figures": ["exempt_sales"]}, "figures must include a graded figure"),
        ({"row_figures": True}, "row_figures needs prompt_style 'focused'"),
        ({"level": 1, "row_figures": False}, "row_figures was given"),
        ({"prompt_style": "focused", "row_figures": True}, "row_figures needs fault_codes among"),
    ],
)
def test_a_bad_ladder_knob_fails_naming_it(knobs, named):
    with pytest.raises(ValidationError, match=named):
        UsSutConfig(**knobs)


def test_a_missing_certificate_purchase_the_vendor_taxed_occurs_and_owes_no_use_tax():
    config = UsSutConfig(num_tasks=200)
    hits = 0
    for idx in range(200):
        task = UsSutTask(make_task_data(config, idx))
        _, business_zip, rows = prompt.read_ledger(task.data.prompt_text)
        charged = [r for r in rows if r.kind == PURCHASE and rules.missing_cert(r) and r.tax != 0]
        for row in charged:
            assert rules.use_tax(row, business_zip) == 0
            assert "missing_exemption_cert" in task.data.faults[row.txn_id]
        if charged:
            hits += 1
            assert score_reply(task, _oracle(task)).reward == pytest.approx(1.0)
    assert hits >= 20


def test_the_prompt_states_what_is_graded_and_the_purchase_rule_once():
    text = prompt.SYSTEM_PROMPT
    assert "exempt_sales is asked for but never graded" in text
    assert (
        text.count("owes use tax when the vendor charged no tax, and none when the vendor charged some") == 1
    )
    assert "subject to use tax" not in text


def test_every_trace_has_every_per_skill_metric(task):
    names = grading.SCHEME.metric_names_all()
    for reply_text in (_oracle(task), "no answer", None):
        assert list(score_reply(task, reply_text).metrics) == names
    assert {f"recall_{code}" for code in FAULT_CODES} <= set(names)
    assert {f"{name}_correct" for name in FIGURES} <= set(names)


def test_the_readme_documents_the_ladder_and_the_metrics():
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    assert rung_table(RUNGS) in readme
    for name in grading.SCHEME.metric_names_all():
        if not name.startswith(("recall_", "precision_", "keyed_")):
            assert f"`{name}`" in readme, name
    assert "`recall_<code>`" in readme and "`precision_<code>`" in readme and "`keyed_<code>`" in readme


def test_a_products_step_is_exact_and_multiplies_no_figure_of_more_than_two_decimals():
    rng = random.Random(5)
    for cents in [1, 10, 100, 5000, 123450, *(rng.randrange(1, 10**9) for _ in range(500))]:
        gross = Decimal(cents).scaleb(-2)
        text = worksheet.product(gross, "8.25")
        if cents % 100:
            assert text == f"<product of {gross} x 8.25> / 100", (gross, text)
            continue
        part, _, rate = text.partition(" x ")
        assert rate == "8.25" and Decimal(part) * 100 == gross and len(part.partition(".")[2]) == 2, text


def test_rung_six_dates_some_faulty_sales_outside_the_quarter_and_asks_each_rows_date(reply):
    """Rung 6 is rung 5 with ``outside_period``: three faulty sales in ten are dated outside the
    quarter, four in five of them with their category's fault too; each worksheet line asks the
    row's date; such a row is left out of sales_tax_due but still needs its correct tax to count;
    and below rung 6 no sale is dated outside the quarter."""
    config = UsSutConfig(level=6)
    kinds: dict[tuple[str, ...], int] = {}
    for idx in range(200):
        data = make_task_data(config, idx)
        quarter, business_zip, rows = prompt.read_ledger(data.prompt_text)
        for row in rows:
            codes = tuple(data.faults.get(row.txn_id, ()))
            assert ("outside_period" in codes) == (not quarter.contains(row.date)), (idx, row)
            kinds[codes] = kinds.get(codes, 0) + 1
        sheet = data.prompt_text.split("```\n\n", 1)[1]
        assert sheet == worksheet.worksheet(rows, ["sales_tax_due"], business_zip, False, quarter)
        span = f"inside the quarter, {quarter.start.isoformat()} to {quarter.end.isoformat()}? <yes or no>."
        for row in rows:
            line = next(line for line in sheet.splitlines() if line.startswith(f"{row.txn_id}: "))
            code = TAX_MISCALCULATED if data.row_figures[row.txn_id] else TAX_ON_EXEMPT_ITEM
            assert line.startswith(f"{row.txn_id}: Dated {row.date.isoformat()}: {span} "), line
            assert f'"outside_period" for the date, "{code}" for the difference;' in line, line
        assert "sales_tax_due = " not in sheet  # an addition line would name the rows dated inside
        if idx < 20:
            task = UsSutTask(data)
            figures = {"sales_tax_due": format_cents(data.figures["sales_tax_due"])}
            if data.faults:
                line, missed = filled_from_key(
                    data.prompt_text, figures, data.row_figures, data.faults, "tax"
                )
                assert score_reply(task, line).reward == pytest.approx(1.0), line
                assert score_reply(task, missed).reward < 1.0, missed
            moved = f"to {quarter.end.isoformat()}? ", f"to {(quarter.end - timedelta(days=1)).isoformat()}? "
            for old, new in (moved, (": Dated ", ": ")):
                tampered = data.model_copy(update={"prompt": data.prompt_text.replace(old, new, 1)})
                assert not _valid(UsSutTask(tampered)), (idx, old)
        assert data.figures["sales_tax_due"] == sum(
            data.row_figures[row.txn_id] for row in rows if quarter.contains(row.date)
        )
    dated = sum(n for codes, n in kinds.items() if "outside_period" in codes)
    faulty = sum(n for codes, n in kinds.items() if codes)
    both = sum(n for codes, n in kinds.items() if len(codes) == 2)
    assert 0.2 < dated / faulty < 0.4 and 0.65 < both / dated < 0.95, kinds
    # A row dated outside counts only with its correct tax, like every faulty row.
    task = next(
        UsSutTask(data)
        for data in (make_task_data(config, idx) for idx in range(50))
        if any(codes == ["outside_period"] for codes in data.faults.values())
    )
    data = task.data
    txn = next(t for t, codes in data.faults.items() if codes == ["outside_period"])
    one = 1 / (1 + len(data.faults))
    off = reply(data.figures, data.faults, {**data.row_figures, txn: data.row_figures[txn] + 1})
    scored = score_reply(task, off).rewards
    assert scored["return_correct"] == pytest.approx(1 - one) and scored["fault_audit"] < 1.0
    # Below rung 6 no sale is dated outside the quarter: the generator draws nothing for dates there.
    for idx in range(30):
        five = make_task_data(UsSutConfig(level=5), idx)
        quarter, _, rows = prompt.read_ledger(five.prompt_text)
        assert all(quarter.contains(row.date) for row in rows)
