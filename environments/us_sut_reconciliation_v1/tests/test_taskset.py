"""The taskset: knobs, determinism, the generator's coverage and the model-free key check."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections import Counter
from subprocess import PIPE

import pydantic
import pytest
import us_sut_reconciliation_v1
from us_sut_reconciliation_v1.ledger import COLUMNS
from us_sut_reconciliation_v1.rules import FAULT_CODES
from us_sut_reconciliation_v1.taskset import UsSutConfig, UsSutTask, UsSutTaskset, make_task_data
from verifiers.v1.utils.loaders import taskset_class, taskset_config_type


def _valid(task: UsSutTask) -> bool:
    return asyncio.run(task.validate(None))  # type: ignore[arg-type]


def test_the_id_resolves_to_this_taskset() -> None:
    assert taskset_class("us-sut-reconciliation-v1") is UsSutTaskset
    assert taskset_config_type("us-sut-reconciliation-v1") is UsSutConfig
    assert [n for n in us_sut_reconciliation_v1.__all__ if n.endswith("Taskset")] == ["UsSutTaskset"]


@pytest.mark.parametrize(
    ("knobs", "message"),
    [
        ({"num_rows": 3}, "num_rows must be >= 5, got 3"),
        ({"fault_rate": 1.5}, "fault_rate must be between 0.0 and 1.0, got 1.5"),
        ({"fault_rate": -0.1}, "fault_rate must be between 0.0 and 1.0, got -0.1"),
        ({"num_tasks": 0}, "num_tasks must be >= 1, got 0"),
        ({"num_rowz": 30}, "num_rowz"),
    ],
)
def test_misconfiguration_fails_at_load_naming_the_knob(knobs: dict, message: str) -> None:
    with pytest.raises(pydantic.ValidationError, match=message):
        UsSutConfig(**knobs)


def test_a_finite_set_of_num_tasks(default_tasks: list[UsSutTask]) -> None:
    assert len(default_tasks) == 50
    tasks = list(UsSutTaskset(UsSutConfig(num_tasks=3)))
    assert [t.data.idx for t in tasks] == [0, 1, 2]
    assert [t.data.prompt for t in tasks] == [t.data.prompt for t in default_tasks[:3]]


def test_every_default_task_validates(default_tasks: list[UsSutTask]) -> None:
    assert all(_valid(t) for t in default_tasks)


@pytest.mark.parametrize(("num_rows", "fault_rate"), [(5, 1.0), (200, 0.25), (30, 0.0), (30, 1.0)])
def test_extreme_knobs_still_give_valid_tasks(num_rows: int, fault_rate: float) -> None:
    config = UsSutConfig(num_rows=num_rows, fault_rate=fault_rate)
    for idx in range(10):
        task = UsSutTask(make_task_data(config, idx))
        assert task.data.prompt_text.count("\ntxn_") == num_rows
        assert _valid(task)
        assert (task.data.faults == {}) == (fault_rate == 0.0)


def _tampered(task: UsSutTask, **update) -> UsSutTask:
    """`task` with its data changed (verifiers 0.4's `Task.with_data`, which 0.3.1 lacks)."""
    return UsSutTask(task.data.model_copy(update=update), task.config)


def test_tampered_key_fails_validate(task: UsSutTask) -> None:
    figures = {**task.data.figures, "sales_tax_due": task.data.figures["sales_tax_due"] + 1}
    assert not _valid(_tampered(task, figures=figures))
    txn = next(iter(task.data.faults))
    assert not _valid(_tampered(task, faults={k: v for k, v in task.data.faults.items() if k != txn}))
    assert not _valid(_tampered(task, system_prompt=task.data.system_prompt.replace("6.25%", "6.00%")))
    assert not _valid(_tampered(task, prompt=task.data.prompt_text.replace("Business ZIP", "ZIP")))


def test_all_six_codes_are_generated(default_tasks: list[UsSutTask]) -> None:
    seen = Counter(code for t in default_tasks for codes in t.data.faults.values() for code in codes)
    assert set(seen) == set(FAULT_CODES)
    assert min(seen.values()) >= 10


def test_the_ledger_has_the_ten_columns_in_order(task: UsSutTask) -> None:
    header = next(line for line in task.data.prompt_text.splitlines() if line.startswith("transaction_id"))
    assert tuple(header.split(",")) == COLUMNS and len(COLUMNS) == 10


def test_quarters_and_business_zips_vary(default_tasks: list[UsSutTask]) -> None:
    quarters = {t.data.prompt_text.split("Filing quarter: ")[1][:7] for t in default_tasks}
    zips = {t.data.prompt_text.split("Business ZIP: ")[1][:5] for t in default_tasks}
    assert len(quarters) >= 8 and {q[-2:] for q in quarters} == {"Q1", "Q2", "Q3", "Q4"}
    assert len(zips) >= 5


def test_task_i_depends_only_on_config_and_i() -> None:
    a, b = UsSutConfig(), UsSutConfig(num_tasks=7)
    assert make_task_data(a, 5) == make_task_data(b, 5)
    assert make_task_data(a, 5) != make_task_data(a, 6)
    assert make_task_data(a, 5) != make_task_data(UsSutConfig(seed=a.seed + 1), 5)


_DUMP = (
    "import json; from us_sut_reconciliation_v1.taskset import UsSutConfig, make_task_data; "
    "print(json.dumps([make_task_data(UsSutConfig(), i).model_dump(mode='json') for i in range(8)]))"
)


def test_tasks_are_byte_identical_across_processes() -> None:
    runs = [
        subprocess.Popen([sys.executable, "-c", _DUMP], stdout=PIPE, env={**os.environ, "PYTHONHASHSEED": hs})
        for hs in ("0", "4242")
    ]
    try:
        outputs = [run.communicate(timeout=600)[0] for run in runs]
    finally:
        for run in runs:
            run.kill()
    assert [run.returncode for run in runs] == [0, 0]
    assert outputs[0] == outputs[1]
    here = [make_task_data(UsSutConfig(), i).model_dump(mode="json") for i in range(8)]
    assert json.loads(outputs[0]) == here
