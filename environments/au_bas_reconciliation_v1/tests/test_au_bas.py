"""The named cases: what each kind of reply earns, through the real `Task.score`."""

from __future__ import annotations

import json

import pytest
from au_bas_reconciliation_v1.rules import FAULT_CODES
from au_bas_reconciliation_v1.taskset import AuBasConfig, AuBasTaskset
from piv_core.parsing.money import format_cents
from piv_core.testing import score_reply


def test_gold_answer_scores_full(task, answer):
    scored = score_reply(task, answer(task.data))
    assert scored.rewards == {"bas_correct": 1.0, "fault_audit": 1.0}
    assert scored.reward == pytest.approx(1.0)
    assert scored.metrics["parsed"] == 1.0 and scored.metrics["bas_label_accuracy"] == 1.0


def test_blanket_flagging_has_low_precision_and_loses_to_the_gold_audit(task, answer):
    everything = {txn: list(FAULT_CODES) for txn in (f"T{n:03d}" for n in range(1, 25))}
    scored = score_reply(task, answer(task.data, faults=everything))
    assert scored.metrics["fault_recall"] == 1.0
    assert scored.metrics["fault_precision"] < 0.1
    assert scored.rewards["fault_audit"] <= 0.2
    assert scored.metrics["num_flagged"] == 24 * len(FAULT_CODES)


def test_blanket_flagging_on_a_clean_ledger_scores_zero_while_silence_scores_one(answer, task_for):
    clean = task_for(0, fault_rate=0.0)
    everything = {txn: list(FAULT_CODES) for txn in (f"T{n:03d}" for n in range(1, 25))}
    assert score_reply(clean, answer(clean.data, faults=everything)).rewards["fault_audit"] == 0.0
    assert score_reply(clean, answer(clean.data, faults={})).rewards["fault_audit"] == 1.0


def test_blanket_beats_silence_on_a_ledger_with_faults(task, answer):
    """F1 arithmetic: silence earns 0 when there are faults; blanket earns 2P/(1+P) > 0.
    Both stay far below a real audit."""
    everything = {txn: list(FAULT_CODES) for txn in (f"T{n:03d}" for n in range(1, 25))}
    blanket = score_reply(task, answer(task.data, faults=everything)).rewards["fault_audit"]
    silence = score_reply(task, answer(task.data, faults={})).rewards["fault_audit"]
    assert silence == 0.0 < blanket <= 0.2


def test_right_row_wrong_reason_earns_nothing(task, answer):
    wrong = {}
    for txn, codes in task.data.faults.items():
        others = [code for code in FAULT_CODES if code not in codes]
        wrong[txn] = others[:1]
    scored = score_reply(task, answer(task.data, faults=wrong))
    assert scored.rewards["fault_audit"] == 0.0
    assert scored.metrics["fault_precision"] == 0.0


def test_an_invented_fault_code_is_a_false_positive(task, answer):
    faults = {txn: [*codes, "suspicious_vibes"] for txn, codes in task.data.faults.items()}
    scored = score_reply(task, answer(task.data, faults=faults))
    true_pairs = sum(len(codes) for codes in task.data.faults.values())
    assert scored.metrics["fault_recall"] == 1.0
    assert scored.metrics["fault_precision"] == pytest.approx(true_pairs / (true_pairs + len(faults)))
    assert scored.rewards["fault_audit"] < 1.0


def test_raw_column_sums_as_the_bas_earn_nothing(task, reply_of):
    scored = score_reply(task, reply_of("column-sums", task))
    assert scored.rewards["bas_correct"] == 0.0
    assert scored.metrics["parsed"] == 1.0


def test_three_of_four_labels_is_a_wrong_bas(task, answer):
    scored = score_reply(task, answer(task.data, net=format_cents(task.data.bas["net"] + 1)))
    assert scored.rewards["bas_correct"] == 0.0
    assert scored.metrics["bas_label_accuracy"] == 0.75
    assert scored.rewards["fault_audit"] == 1.0


def _with_commas(text: str) -> str:
    whole, part = text.lstrip("-").split(".")
    return f"{'-' if text.startswith('-') else ''}{int(whole):,}.{part}"


FIGURE_STYLES = {
    "bare-number": lambda text: text,
    "string": lambda text: f'"{text}"',
    "dollar": lambda text: f'"{text.replace("-", "-$") if text.startswith("-") else "$" + text}"',
    "commas": lambda text: f'"{_with_commas(text)}"',
    "dollar-commas": lambda text: f'"${_with_commas(text)}"',
    "short-decimal": lambda text: text[:-1] if text.endswith("0") else text,
}


@pytest.mark.parametrize("style", sorted(FIGURE_STYLES))
@pytest.mark.parametrize("wrapper", ["plain", "fenced", "after-a-draft"])
def test_formatting_tolerance(task, style, wrapper):
    figures = ", ".join(
        f'"{label}": {FIGURE_STYLES[style](format_cents(c))}' for label, c in task.data.bas.items()
    )
    payload = "{" + figures + f', "faults": {json.dumps(task.data.faults)}' + "}"
    reply = {
        "plain": f"<answer>{payload}</answer>",
        "fenced": f"Working...\n<answer>\n```json\n{payload}\n```\n</answer>",
        "after-a-draft": f"<answer>draft</answer> Let me redo that.\n<ANSWER>{payload}</ANSWER>\nDone.",
    }[wrapper]
    assert score_reply(task, reply).reward == pytest.approx(1.0)


@pytest.mark.parametrize(
    "reply",
    [
        None,
        "",
        "The BAS is G1 12345.67 and there are no faults.",
        "<answer>{'G1': 1}</answer>",
        '<answer>{"G1": "1", "faults": [}</answer>',
        "<answer>[1, 2, 3]</answer>",
        '<answer>{"G1": "1", "1A": "1", "1B": "1", "net": "0"}</answer>',
        '<answer>{"G1": "1", "1A": "1", "1B": "1", "net": "0", "faults": ["T001"]}</answer>',
        '<answer>{"G1": "1", "1A": "1", "1B": "1", "net": "0", "faults": {"T001": [7]}}</answer>',
        '<answer>{"G1": NaN, "faults": {}}</answer>',
        "<answer>",
    ],
)
def test_malformed_replies_score_zero_and_are_marked_unparsed(task, reply):
    scored = score_reply(task, reply)
    assert scored.reward == 0.0
    assert scored.metrics["parsed"] == 0.0


def test_unparseable_figures_are_wrong_not_unparsed(task, answer):
    scored = score_reply(task, answer(task.data, G1="about twelve grand", **{"1A": 12.345}))
    assert scored.metrics["parsed"] == 1.0
    assert scored.metrics["bas_label_accuracy"] == 0.5
    assert scored.rewards["bas_correct"] == 0.0


def test_clean_quarter_has_no_faults_and_rewards_an_empty_audit(answer, task_for):
    for idx in range(50):
        clean = task_for(idx, fault_rate=0.0)
        assert clean.data.faults == {}
        scored = score_reply(clean, answer(clean.data))
        assert scored.rewards == {"bas_correct": 1.0, "fault_audit": 1.0}
        assert (
            score_reply(clean, answer(clean.data, faults={"T001": ["outside_period"]})).rewards["fault_audit"]
            == 0.0
        )


def test_every_fault_code_is_generated(task_for):
    seen = set()
    for idx in range(60):
        for codes in task_for(idx, fault_rate=0.35, num_transactions=60).data.faults.values():
            seen.update(codes)
    assert seen == set(FAULT_CODES)


def test_positive_fault_rate_always_plants_a_fault(task_for):
    for idx in range(300):
        assert task_for(idx, fault_rate=0.01, num_transactions=4).data.faults


def test_reproducible_by_index():
    config = AuBasConfig(num_transactions=30, fault_rate=0.3, seed=7)
    stream = AuBasTaskset(config)
    first = [t.data for _, t in zip(range(5), stream)]
    again = [t.data for _, t in zip(range(5), AuBasTaskset(config))]
    assert first == again
    assert [data.idx for data in first] == [0, 1, 2, 3, 4]
    assert len({data.prompt for data in first}) == 5
    other_seed = [t.data for _, t in zip(range(5), AuBasTaskset(config.model_copy(update={"seed": 8})))]
    assert all(a.prompt != b.prompt for a, b in zip(first, other_seed))
