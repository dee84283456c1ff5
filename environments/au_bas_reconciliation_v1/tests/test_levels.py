"""The difficulty ladder and the knobs it sets: every rung is solvable from its prompt alone,
validates, and is the rung it says; unset, the taskset is the default one."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from au_bas_reconciliation_v1 import grading, prompt
from au_bas_reconciliation_v1.ledger import PURCHASE, SALE
from au_bas_reconciliation_v1.levels import RUNGS
from au_bas_reconciliation_v1.prompt import read_ledger
from au_bas_reconciliation_v1.rules import FAULT_CODES, GST_MISCALCULATED, GST_ON_GST_FREE, LABELS
from au_bas_reconciliation_v1.taskset import AuBasConfig, AuBasTask, make_task_data
from piv_core.parsing.money import cents_of, format_cents
from piv_core.tasksets.ladder import rung_table
from piv_core.testing import filled_from_key, score_reply
from pydantic import ValidationError


def _valid(task: AuBasTask) -> bool:
    return asyncio.run(task.validate(None))  # type: ignore[arg-type]


@pytest.mark.parametrize("level", sorted(RUNGS))
def test_every_rung_is_solved_by_the_oracle_and_validates(level, reply_of):
    config = AuBasConfig(level=level)
    rung = RUNGS[level]
    for idx in range(15):
        task = AuBasTask(make_task_data(config, idx))
        assert task.data.id == f"au-bas-level{level}-{config.seed}-{idx}"
        assert len(read_ledger(task.data.prompt)[1]) == rung["num_transactions"]
        assert list(task.data.bas) == rung["labels"]
        assert {code for codes in task.data.faults.values() for code in codes} <= set(rung["fault_codes"])
        assert _valid(task), (level, idx)
        scored = score_reply(task, reply_of("oracle", task))
        assert scored.reward == pytest.approx(1.0), (level, idx)


def test_rung_one_reads_the_faults_from_the_rows_gst_on_rung_twos_ledgers(answer):
    """Rung 1 serves rung 2's ledgers and key; it asks no fault map, and its worksheet lines end on
    each row's figure. A row given another GST than the books' is reported with its treatment's
    code, so a flag still counts only beside the row's correct GST."""
    for idx in range(20):
        task = AuBasTask(make_task_data(AuBasConfig(level=1), idx))
        data, two = task.data, make_task_data(AuBasConfig(level=2), idx)
        _, rows = read_ledger(data.prompt)
        assert read_ledger(two.prompt) == read_ledger(data.prompt)
        assert (data.bas, data.faults, data.row_figures) == (two.bas, two.faults, two.row_figures)
        sheet = data.prompt.split("```\n\n", 1)[1]
        assert sheet == prompt.worksheet(rows, ["1A"], from_figures=True) and _valid(task)
        assert "faults" not in sheet and "Difference" not in sheet and '"faults"' not in data.system_prompt
        codes = {
            row.txn_id: GST_MISCALCULATED if data.row_figures[row.txn_id] else GST_ON_GST_FREE for row in rows
        }
        assert data.claims == {row.txn_id: (cents_of(row.gst), codes[row.txn_id]) for row in rows}
        right = {t: format_cents(c) for t, c in data.row_figures.items()}
        no_map = answer(data).replace(f', "faults": {json.dumps(data.faults)}', "")
        assert '"faults"' not in no_map and score_reply(task, no_map).reward == pytest.approx(1.0)
        assert score_reply(task, answer(data, faults={})).reward == pytest.approx(1.0)  # a map is not read
        books = {row.txn_id: format_cents(cents_of(row.gst)) for row in rows}
        if data.faults:
            copied = score_reply(task, answer(data, gst=books)).rewards
            assert copied["fault_audit"] == 0.0 and copied["bas_correct"] < 1.0
        one = 1 / (1 + len(data.faults))
        for row in rows:
            faulty = bool(data.faults.get(row.txn_id))
            off = score_reply(task, answer(data, gst={**right, row.txn_id: "9.99"})).rewards
            assert off["bas_correct"] == pytest.approx(1 - one if faulty else 1.0), (idx, row.txn_id)
            assert off["fault_audit"] < 1.0, (idx, row.txn_id)  # a faulty row missed, or a clean one reported
            if not faulty:
                kept = score_reply(task, answer(data, gst={**right, row.txn_id: books[row.txn_id]}))
                assert kept.reward == pytest.approx(1.0)
        for rows_map in ("not a map", [], None):
            scored = score_reply(task, answer(data, gst=rows_map))
            assert scored.metrics["parsed"] == 0.0 and scored.reward == 0.0
        for old, new in (("is taxable.", "is GST-free."), ("/ 11 =", "/ 10 =")):
            if old in data.prompt:
                tampered = data.model_copy(update={"prompt": data.prompt.replace(old, new, 1)})
                assert not _valid(AuBasTask(tampered)), (idx, old)
        moved = data.model_copy(update={"claims": two.claims})
        assert not _valid(AuBasTask(moved))


def test_rung_seven_reads_the_faults_from_the_figures_on_rung_eights_ledgers_without_a_worksheet(answer):
    """Rung 7 serves rung 8's ledgers and key (rung 6's without the worksheet); it asks no fault map,
    and its user prompt closes on the request to write each row's division and figure first. Its
    faults are read from the figures, as at rung 1."""
    for idx in range(20):
        task = AuBasTask(make_task_data(AuBasConfig(level=7), idx))
        data, eight = task.data, make_task_data(AuBasConfig(level=8), idx)
        _, rows = read_ledger(data.prompt)
        head = eight.prompt.split("```\n\n", 1)[0]
        assert data.prompt == f"{head}```\n\n{prompt.WORK_FIRST_FIGURES}" and _valid(task)
        assert eight.prompt == f"{head}```\n\n{prompt.WORK_FIRST}"
        assert (data.bas, data.faults, data.row_figures) == (eight.bas, eight.faults, eight.row_figures)
        codes = {t: GST_MISCALCULATED if c else GST_ON_GST_FREE for t, c in data.row_figures.items()}
        claims = {row.txn_id: (cents_of(row.gst), codes[row.txn_id]) for row in rows}
        assert '"faults"' not in data.system_prompt and data.claims == claims
        no_map = answer(data).replace(f', "faults": {json.dumps(data.faults)}', "")
        assert '"faults"' not in no_map and score_reply(task, no_map).reward == pytest.approx(1.0)
        books = {row.txn_id: format_cents(cents_of(row.gst)) for row in rows}
        copied = score_reply(task, answer(data, gst=books)).rewards
        assert copied["fault_audit"] == (1.0 if not data.faults else 0.0)
        for close in (prompt.WORK_FIRST, prompt.worksheet(rows, list(data.bas), from_figures=True)):
            served = data.model_copy(update={"prompt": f"{head}```\n\n{close}"})
            assert _valid(AuBasTask(served)) == (close != prompt.WORK_FIRST), idx  # the close a scope gives
        moved = data.model_copy(update={"claims": None})
        assert not _valid(AuBasTask(moved))


def test_rung_two_asks_1a_every_rows_gst_and_the_faults_of_four_round_sales(answer):
    config = AuBasConfig(level=2)
    planted = set()
    for idx in range(40):
        data = make_task_data(config, idx)
        planted |= {code for codes in data.faults.values() for code in codes}
        _, rows = read_ledger(data.prompt)
        assert len(rows) == 4 and all(row.kind == SALE and row.amount % 11 == 0 for row in rows)
    assert planted == {GST_ON_GST_FREE, GST_MISCALCULATED}
    task = AuBasTask(make_task_data(config, 0))
    assert "BAS labels to report: 1A (only these)" in task.data.prompt
    assert set(task.data.bas) == {"1A"} and task.data.faults
    _, rows = read_ledger(task.data.prompt)
    extra = answer(task.data, **{"G1": "1.23", "net": "oops"})  # labels not asked are ignored
    assert score_reply(task, extra).reward == pytest.approx(1.0)
    # Partial credit for corrections: 1A and each faulty row's correct GST are an equal share each.
    share = 1 - 1 / (1 + len(task.data.faults))
    wrong = answer(task.data, **{"1A": "0.01"})
    scored = score_reply(task, wrong)
    assert scored.rewards["bas_correct"] == pytest.approx(share)
    assert scored.metrics["bas_label_accuracy"] == pytest.approx(share)
    assert (scored.metrics["g1_correct"], scored.metrics["1a_correct"]) == (0, 0)
    assert scored.rewards["fault_audit"] == 1.0
    right = {t: f"{c / 100:.2f}" for t, c in task.data.row_figures.items()}
    one = 1 / (1 + len(task.data.faults))
    for txn in right:
        faulty = bool(task.data.faults.get(txn))
        # A faulty row's GST off costs its share and its flag; a clean row's GST is not graded.
        off = score_reply(task, answer(task.data, gst={**right, txn: "9.99"})).rewards
        assert off["bas_correct"] == pytest.approx(1 - one if faulty else 1.0), txn
        assert (off["fault_audit"] < 1.0) == faulty, txn
        # A faulty row left unflagged costs its share; a clean row flagged costs the precision only.
        other = {**task.data.faults, txn: ["gst_miscalculated", "gst_on_gst_free"]}
        misjudged = {t: c for t, c in task.data.faults.items() if t != txn} if faulty else other
        scored = score_reply(task, answer(task.data, faults=misjudged)).rewards
        assert scored["bas_correct"] == pytest.approx(1 - one if faulty else 1.0), txn
        assert scored["fault_audit"] < 1.0, txn
    for rows_map in ("not a map", [], {}):
        scored = score_reply(task, answer(task.data, gst=rows_map))
        assert scored.metrics["parsed"] == 1.0 and scored.rewards["bas_correct"] == pytest.approx(one)
        assert scored.rewards["fault_audit"] == 0.0  # no flag is backed by its row's GST


def test_rung_five_mixes_purchases_in_and_its_1a_line_adds_up_the_sales_only():
    kinds = set()
    for idx in range(30):
        task = AuBasTask(make_task_data(AuBasConfig(level=5), idx))
        data = task.data
        _, rows = read_ledger(data.prompt)
        kinds |= {row.kind for row in rows}
        sheet = data.prompt.split("```\n\n", 1)[1]
        assert sheet == prompt.worksheet(rows, ["1A"]) and _valid(task)
        sales = [row for row in rows if row.kind == SALE]
        parts = [f"<gst of {row.txn_id}>" if data.row_figures[row.txn_id] else "0.00" for row in sales]
        assert sheet.splitlines()[-4] == f"1A = {' + '.join(parts)} = <1A>", idx
    assert kinds == {SALE, PURCHASE}


def test_rung_six_asks_1a_1b_and_net_and_its_worksheet_adds_up_1a_over_the_sales_and_1b_over_the_purchases(
    answer,
):
    for idx in range(30):
        task = AuBasTask(make_task_data(AuBasConfig(level=6), idx))
        data = task.data
        _, rows = read_ledger(data.prompt)
        assert list(data.bas) == ["1A", "1B", "net"] and "BAS labels to report: 1A, 1B, net" in data.prompt
        # No row is left out at this rung, so no label sums over "the remaining" rows.
        assert "remaining" not in data.system_prompt and "Leave out" not in data.system_prompt
        assert "- 1B (GST on purchases) = sum of the correct GST over the purchases." in data.system_prompt
        sheet = data.prompt.split("```\n\n", 1)[1]
        assert sheet == prompt.worksheet(rows, list(data.bas)) and _valid(task)
        for label, kind in (("1A", SALE), ("1B", PURCHASE)):
            parts = [
                f"<gst of {row.txn_id}>" if data.row_figures[row.txn_id] else "0.00"
                for row in rows
                if row.kind == kind
            ]
            lines = [line for line in sheet.splitlines() if line.startswith(f"{label} = ")]
            assert lines == ([f"{label} = {' + '.join(parts)} = <{label}>"] if parts else []), idx
        answer_line = sheet.splitlines()[-3]
        assert '"G1"' not in answer_line and "G1" not in data.system_prompt
        assert '"net": "<net: 1A - 1B>"' in answer_line
        figures = {label: format_cents(cents) for label, cents in data.bas.items()}
        if data.faults:
            line, missed = filled_from_key(data.prompt_text, figures, data.row_figures, data.faults, "gst")
            assert score_reply(task, line).reward == pytest.approx(1.0), line
            assert score_reply(task, missed).reward < 1.0
    # Each label is one share of the figures part, as each faulty row is.
    task = AuBasTask(make_task_data(AuBasConfig(level=6), 0))
    assert task.data.faults
    one = 1 / (len(task.data.bas) + len(task.data.faults))
    for label in task.data.bas:
        scored = score_reply(task, answer(task.data, **{label: "0.01"}))
        assert scored.rewards["bas_correct"] == pytest.approx(1 - one), label
        assert scored.rewards["fault_audit"] == 1.0


def test_rung_two_ends_on_a_worksheet_that_validate_rebuilds():
    for idx in range(10):
        task = AuBasTask(make_task_data(AuBasConfig(level=2), idx))
        data = task.data
        _, rows = read_ledger(data.prompt)
        sheet = data.prompt.split("```\n\n", 1)[1]
        assert sheet == prompt.worksheet(rows, ["1A"]) and _valid(task)
        for row in rows:
            code = GST_MISCALCULATED if data.row_figures[row.txn_id] else GST_ON_GST_FREE
            line = next(line for line in sheet.splitlines() if line.startswith(f"{row.txn_id}: "))
            assert line.startswith(f"{row.txn_id}: {row.category} is ")
            assert f"recorded gst {row.gst} - " in line
            asked = f'Is the difference 0.00? <yes or no>. Faults: <[] if yes, ["{code}"] if no>.'
            assert asked in line, line
            assert f'"{row.txn_id}": <faults of {row.txn_id}>' in sheet.splitlines()[-3]
        parts = [f"<gst of {row.txn_id}>" if data.row_figures[row.txn_id] else "0.00" for row in rows]
        closing = sheet.splitlines()[-4:]
        assert closing[0] == f"1A = {' + '.join(parts)} = <1A>" and closing[1].startswith("<answer>")
        assert closing[3].startswith("Start your reply with T001's line and end it with the answer line")
        assert "<result>" in sheet and not any(
            f"/ 11 = {c / 100:.2f}" in sheet for c in data.row_figures.values() if c
        )
        swapped = ('["gst_miscalculated"] if no>', '["gst_on_gst_free"] if no>')
        tampers = (
            ("is taxable.", "is GST-free."),
            ("/ 11 =", "/ 10 ="),
            ('"T001"', '"T009"'),
            (" = <1A>", " = <G1>"),
            swapped,
        )
        for old, new in tampers:
            if old in data.prompt:
                tampered = data.model_copy(update={"prompt": data.prompt.replace(old, new, 1)})
                assert not _valid(AuBasTask(tampered)), (idx, old)


def test_the_worksheets_answer_line_filled_from_the_key_scores_one_and_every_verdict_slot_counts():
    """The answer line as the worksheet writes it (every row listed, [] for a row with no fault)
    is read as the key: filled in right it scores 1.0; one row's faults left [] costs that row."""
    for idx in range(40):
        task = AuBasTask(make_task_data(AuBasConfig(level=2), idx))
        data = task.data
        figures = {"1A": format_cents(data.bas["1A"])}
        line, missed = filled_from_key(data.prompt_text, figures, data.row_figures, data.faults, "gst")
        assert score_reply(task, line).reward == pytest.approx(1.0), line
        share = 1 - 1 / (1 + len(data.faults))
        assert score_reply(task, missed).rewards["bas_correct"] == pytest.approx(share), missed


def test_rungs_one_to_eight_have_a_focused_prompt_and_the_others_the_full_one():
    for level in RUNGS:
        system = make_task_data(AuBasConfig(level=level), 0).system_prompt
        assert (system == prompt.SYSTEM_PROMPT) == (level > 8), level


def test_a_prompt_asking_other_labels_than_the_key_fails_validate():
    task = AuBasTask(make_task_data(AuBasConfig(level=1), 0))
    bad = task.data.model_copy(update={"prompt": task.data.prompt.replace(": 1A (only", ": 1B (only")})
    assert not _valid(AuBasTask(bad))


def test_unset_level_is_the_default_stream_and_levels_have_their_own_ids():
    default, level10 = AuBasConfig(), AuBasConfig(level=10)
    assert default.fault_codes == list(FAULT_CODES) and default.labels == list(LABELS)
    plain, ten = make_task_data(default, 3), make_task_data(level10, 3)
    assert plain.id == f"au-bas-{default.seed}-3" and ten.id == f"au-bas-level10-{default.seed}-3"
    assert plain.model_copy(update={"id": ten.id, "level": 10}) == ten  # rung 10: the default configuration
    ids = {make_task_data(AuBasConfig(level=level), 0).id for level in RUNGS}
    assert len(ids) == len(RUNGS)


def test_the_ladder_climbs():
    sizes = [RUNGS[level]["num_transactions"] for level in sorted(RUNGS)]
    assert sizes == sorted(sizes) and sizes[0] == 4 and sizes[-1] > AuBasConfig().num_transactions
    assert RUNGS[1]["fault_codes"] == RUNGS[6]["fault_codes"] == [GST_ON_GST_FREE, GST_MISCALCULATED]
    assert all(RUNGS[level]["row_figures"] for level in RUNGS if level <= 8)
    assert not any(RUNGS[level]["row_figures"] for level in RUNGS if level > 8)
    assert [level for level in RUNGS if not RUNGS[level]["worksheet"]] == [7, 8]
    assert [level for level in RUNGS if RUNGS[level]["faults_from_figures"]] == [1, 7]
    assert RUNGS[5]["labels"] == ["1A"] and RUNGS[6]["labels"] == RUNGS[8]["labels"] == ["1A", "1B", "net"]
    assert RUNGS[9]["labels"] == list(LABELS)
    assert RUNGS[max(RUNGS)]["fault_rate"] > AuBasConfig().fault_rate


def test_the_focused_rungs_change_one_knob_a_rung_but_rung_seven_two():
    changed = [{k for k, v in RUNGS[level].items() if RUNGS[level - 1][k] != v} for level in range(2, 9)]
    assert changed == [
        {"faults_from_figures"},
        {"row_mix"},
        {"num_transactions"},
        {"row_mix"},
        {"labels"},
        {"worksheet", "faults_from_figures"},  # the worksheet goes, and the fault map with it
        {"faults_from_figures"},  # the fault map asked again: rung 6 without the worksheet
    ]
    assert {k for k, v in RUNGS[8].items() if RUNGS[6][k] != v} == {"worksheet"}
    assert [RUNGS[level]["row_mix"] for level in (2, 3, 5)] == ["round_sales", "sales", "sales_and_purchases"]
    assert RUNGS[4]["num_transactions"] == 2 * RUNGS[3]["num_transactions"] == 8


@pytest.mark.parametrize(
    ("knobs", "named"),
    [
        ({"level": 0}, "level must be between 1 and 12"),
        ({"level": 13}, "level must be between 1 and 12"),
        ({"worksheet": False}, "worksheet=False needs row_figures"),
        ({"faults_from_figures": True}, "faults_from_figures needs row_figures"),
        ({"level": 8, "faults_from_figures": True}, "faults_from_figures was given"),
        (
            {**RUNGS[8], "figure_credit": "all_or_nothing", "faults_from_figures": True},
            "faults_from_figures needs row_figures true, figure_credit 'partial'",
        ),
        (
            {**RUNGS[2], "fault_codes": [GST_MISCALCULATED], "faults_from_figures": True},
            "faults_from_figures needs",
        ),
        ({"level": 1, "num_transactions": 30}, "num_transactions was given"),
        ({"fault_codes": []}, "fault_codes must be a non-empty list"),
        ({"fault_codes": ["gst_miscalculated", "made_up"]}, "fault_codes must be a non-empty list"),
        ({"labels": ["G1", "G1"]}, "labels must be a non-empty list"),
        ({"labels": ["G2"]}, "labels must be a non-empty list"),
        ({"row_figures": True}, "row_figures needs prompt_style 'focused'"),
        ({"level": 1, "row_figures": False}, "row_figures was given"),
        ({"prompt_style": "focused", "row_figures": True}, "row_figures needs fault_codes among"),
    ],
)
def test_a_bad_ladder_knob_fails_naming_it(knobs, named):
    with pytest.raises(ValidationError, match=named):
        AuBasConfig(**knobs)


def test_fault_codes_restrict_what_is_planted():
    config = AuBasConfig(fault_codes=["duplicate_invoice", "outside_period"], num_transactions=30)
    seen = {
        code for idx in range(40) for codes in make_task_data(config, idx).faults.values() for code in codes
    }
    assert seen == {"duplicate_invoice", "outside_period"}


def test_every_trace_has_every_per_skill_metric(task, reply_of):
    names = grading.SCHEME.metric_names_all()
    for reply in (reply_of("oracle", task), reply_of("garbage", task), None):
        assert list(score_reply(task, reply).metrics) == names
    assert {f"recall_{code}" for code in FAULT_CODES} <= set(names)
    assert {"g1_correct", "1a_correct", "1b_correct", "net_correct"} <= set(names)


def test_the_readme_documents_the_ladder_and_the_metrics():
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    assert rung_table(RUNGS) in readme
    for name in grading.SCHEME.metric_names_all():
        if not name.startswith(("recall_", "precision_", "keyed_")):
            assert f"`{name}`" in readme, name
    assert "`recall_<code>`" in readme and "`precision_<code>`" in readme and "`keyed_<code>`" in readme


@pytest.mark.parametrize("level", sorted(RUNGS))
def test_each_rung_is_a_valid_set_of_knobs(level):
    by_hand, by_level = AuBasConfig(**RUNGS[level]), AuBasConfig(level=level)
    assert by_hand.model_dump(exclude={"level"}) == by_level.model_dump(exclude={"level"})
