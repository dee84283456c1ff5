"""Properties over many seeds: the oracle always earns 1.0, every exploit stays at the floor,
the parser never raises (nor takes long, nor runs twice on one trace), the key survives only
untampered, and tasks are identical across processes."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from au_bas_reconciliation_v1 import grading
from au_bas_reconciliation_v1.grading import grade
from au_bas_reconciliation_v1.levels import RUNGS
from au_bas_reconciliation_v1.rules import FAULT_CODES
from au_bas_reconciliation_v1.taskset import AuBasConfig, AuBasTask, make_task_data
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from piv_core import json_answer
from piv_core.ledger_audit import grading as ledger_audit
from piv_core.parsing.money import format_cents
from piv_core.testing import score_reply


@pytest.mark.parametrize(
    "knobs",
    [
        {},
        {"num_transactions": 60, "fault_rate": 0.35},
        {"fault_rate": 0.0},
        {"num_transactions": 4, "fault_rate": 1.0},
    ],
)
def test_oracle_scores_one_on_many_seeds(knobs, reply_of):
    config = AuBasConfig(**knobs)
    for idx in range(500 if not knobs else 100):
        task = AuBasTask(make_task_data(config, idx))
        scores = grade(reply_of("oracle", task), task.data.bas, task.data.faults)
        assert (scores.figures_correct, scores.fault_audit) == (1.0, 1.0), (knobs, idx)


def test_exploit_policies_stay_at_the_floor(reply_of):
    """Per task: no exploit earns bas_correct or a real audit. On average (the seed's 60 rows at rate 0.35),
    blanket precision stays under 0.1 and its F1 under 0.2: precision is true pairs / (5 x rows)."""
    config = AuBasConfig(num_transactions=60, fault_rate=0.35)
    blanket_precision, blanket_f1 = [], []
    for idx in range(100):
        task = AuBasTask(make_task_data(config, idx))
        key = task.data.bas, task.data.faults
        column, silent, blanket, garbage = (
            grade(reply_of(p, task), *key) for p in ("column-sums", "silent", "blanket", "garbage")
        )
        assert column.figures_correct == silent.figures_correct == 0.0, idx
        assert column.fault_audit == silent.fault_audit == 0.0
        assert (
            blanket.figures_correct == 0.0 and blanket.fault_precision < 0.2 and blanket.fault_audit < 1 / 3
        )
        assert garbage.parsed == 0.0 and garbage.fault_audit == garbage.figures_correct == 0.0
        blanket_precision.append(blanket.fault_precision)
        blanket_f1.append(blanket.fault_audit)
    assert sum(blanket_precision) / 100 < 0.1 and sum(blanket_f1) / 100 <= 0.2


def _validate(task: AuBasTask) -> bool:
    return asyncio.run(task.validate(runtime=None))


def test_validate_rejects_a_prompt_that_disagrees_with_the_key(task):
    """(A tampered key is the contract's, in tests/test_env_contract.py.)"""
    assert _validate(task)
    data = task.data
    tampered = [
        data.model_copy(update={"bas": {**data.bas, "net": -data.bas["net"]}}),
        data.model_copy(update={"prompt": data.prompt.replace(",sale,", ",purchase,", 1)}),
        data.model_copy(update={"system_prompt": data.system_prompt.replace("82.50", "75.00")}),
        data.model_copy(update={"prompt": re.sub(r",(\d+\.\d\d),", r",\1x,", data.prompt, count=1)}),
        data.model_copy(update={"prompt": data.prompt.replace("```csv", "```text")}),
    ]
    for bad in tampered:
        assert not _validate(AuBasTask(bad))


def test_validate_holds_across_configurations():
    for knobs in (
        {},
        {"fault_rate": 0.0},
        {"num_transactions": 4},
        {"num_transactions": 200, "fault_rate": 0.5},
    ):
        config = AuBasConfig(**knobs)
        assert all(_validate(AuBasTask(make_task_data(config, idx))) for idx in range(20))


_codes = st.sampled_from([*FAULT_CODES, "other", ""])
_figure = st.one_of(
    st.integers(-(10**25), 10**25),
    st.decimals(allow_nan=False, allow_infinity=False).map(str),
    st.text(max_size=12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.none(),
    st.booleans(),
)
_faults = st.one_of(
    st.dictionaries(
        st.text(max_size=6), st.one_of(_codes, st.lists(_codes, max_size=4), st.integers()), max_size=6
    ),
    st.lists(st.text(max_size=4), max_size=3),
    st.text(max_size=8),
    st.none(),
)
_objects = st.fixed_dictionaries(
    {}, optional={"G1": _figure, "1A": _figure, "1B": _figure, "net": _figure, "faults": _faults}
)


def _as_reply(obj, wrapper: int) -> str:
    try:
        payload = json.dumps(obj, allow_nan=True)
    except (TypeError, ValueError):
        payload = str(obj)
    return [
        f"<answer>{payload}</answer>",
        f"```\n<answer>```json\n{payload}\n```</answer>",
        payload,
        f"<answer>{payload}",
    ][wrapper]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(obj=_objects, wrapper=st.integers(0, 3))
def test_parser_fuzz_structured(task, obj, wrapper):
    reply = _as_reply(obj, wrapper)
    scores = grade(reply, task.data.bas, task.data.faults)
    assert all(0.0 <= value <= 1.0 for name, value in scores._asdict().items() if name != "num_flagged")
    assert scores.num_flagged >= 0 and scores.parsed in (0.0, 1.0)
    metrics = grading.SCHEME.metrics(reply, task.data.bas, task.data.faults)
    counts = {name for name in metrics if name == "num_flagged" or name.startswith("keyed_")}
    assert all(0.0 <= value <= 1.0 for name, value in metrics.items() if name not in counts)


_FROM_FIGURES = [
    AuBasTask(make_task_data(AuBasConfig(level=level), 0))
    for level in RUNGS
    if RUNGS[level]["faults_from_figures"]
]
"""A task of each rung that reads its faults from the `gst` map (``faults_from_figures``)."""
_row_maps = st.one_of(
    st.dictionaries(
        st.sampled_from(["T001", "T002", "T003", "T004", "T008", "T009", "t001", ""]), _figure, max_size=9
    ),
    _figure,
    st.lists(_figure, max_size=3),
)


@pytest.mark.parametrize("task", _FROM_FIGURES, ids=lambda task: f"level{task.data.level}")
@settings(max_examples=400, deadline=None)
@given(obj=_objects, rows=_row_maps, wrapper=st.integers(0, 3))
def test_parser_fuzz_where_the_faults_are_read_from_the_figures(task, obj, rows, wrapper):
    """Any answer scores within bounds; it is parsed exactly when its gst map is a JSON object,
    and it reports no row that is not in the ledger nor one whose figure is not an amount."""
    data = task.data
    reply = _as_reply({**obj, "gst": rows}, wrapper)
    scores = grade(reply, data.bas, data.faults, True, data.row_figures, data.claims)
    assert all(0.0 <= value <= 1.0 for name, value in scores._asdict().items() if name != "num_flagged")
    parsed = isinstance(rows, dict) and isinstance(json_answer(reply), dict)
    assert scores.parsed == float(parsed)
    assert scores.num_flagged <= len(data.claims)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.text(alphabet=st.sampled_from('<>answer/{}[]":,.$-0123456789eE `jsonT\n\x00\ud800'), max_size=200)
)
def test_parser_fuzz_raw_text(task, text):
    scores = grade(text, task.data.bas, task.data.faults)
    assert 0.0 <= scores.figures_correct <= 1.0 and 0.0 <= scores.fault_audit <= 1.0


def _with_g1(data, figure: str) -> str:
    """The key's reply with G1 written as the raw JSON text `figure`."""
    others = ", ".join(
        f'"{label}": "{format_cents(cents)}"' for label, cents in data.bas.items() if label != "G1"
    )
    return f'<answer>{{"G1": {figure}, {others}, "faults": {json.dumps(data.faults)}}}</answer>'


HOSTILE_FIGURES = {
    "zero, exponent 10**7": "0e10000000",
    "zero, exponent 10**18 - 1": "0e999999999999999999",
    "exponent 10**6": "1e1000000",
    "exponent -10**18 + 1": "-1e-999999999999999999",
    "100,000 digits and a point": "9" * 100_000 + ".5",
    "a million digits in a string": '"' + "9" * 1_000_000 + '"',
    "a lone surrogate": '"\\ud800"',
    "a raw lone surrogate": '"\ud800"',
    "an escaped NUL": '"\\u0000"',
}


@pytest.mark.parametrize("figure", HOSTILE_FIGURES.values(), ids=HOSTILE_FIGURES)
def test_a_hostile_figure_is_a_wrong_label_not_an_error(task, figure):
    scored = score_reply(task, _with_g1(task.data, figure))
    assert scored.metrics["parsed"] == 1.0 and scored.metrics["bas_label_accuracy"] == 0.75
    assert scored.rewards == {"bas_correct": 0.0, "fault_audit": 1.0}


HOSTILE_REPLIES = {
    "16,000 unclosed tags": "<answer>" * 16_000,
    "a fence and 40,000 spaces": "<answer>```" + " " * 40_000 + "x</answer>",
    "a fence, a newline and 40,000 spaces": "<answer>```\n" + " " * 40_000 + "x</answer>",
    "a lone surrogate": "<answer>\ud800</answer>",
    "a lone surrogate in a key": '<answer>{"\ud800": 1, "faults": {"\ud800": ["\udfff"]}}</answer>',
    "a NUL": "<answer>\x00</answer>",
    "a NUL in a string": '<answer>{"G1": "1\x00", "faults": {}}</answer>',
}


@pytest.mark.parametrize("reply", HOSTILE_REPLIES.values(), ids=HOSTILE_REPLIES)
def test_a_hostile_reply_scores_cleanly(task, reply):
    scored = score_reply(task, reply)
    assert 0.0 <= scored.reward <= 1.0 and scored.metrics["parsed"] in (0.0, 1.0)


def test_scoring_a_trace_parses_its_reply_once(task, answer, monkeypatch):
    """Two rewards and a metric read one trace: the reply is parsed for the first and remembered."""
    parses = []
    monkeypatch.setattr(ledger_audit, "json_answer", lambda reply: parses.append(reply) or json_answer(reply))
    grading.parse_answer.cache_clear()
    scored = score_reply(task, answer(task.data))
    assert set(scored.rewards) == {"bas_correct", "fault_audit"} and "parsed" in scored.metrics
    assert scored.reward == pytest.approx(1.0) and len(parses) == 1
    score_reply(task, answer(task.data, faults={}))
    assert len(parses) == 2


def test_a_remembered_answer_cannot_be_changed(task, answer):
    parsed = grading.parse_answer(answer(task.data))
    with pytest.raises(TypeError):
        parsed.figures["G1"] = 0  # type: ignore[index]
    assert isinstance(parsed.pairs, frozenset)
