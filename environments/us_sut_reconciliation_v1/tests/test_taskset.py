"""The taskset: knobs, determinism, the generator's coverage and the model-free key check."""

from __future__ import annotations

import asyncio
from collections import Counter

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


def test_a_prompt_that_disagrees_with_the_key_fails_validate(task: UsSutTask) -> None:
    """(A tampered key is the contract's, in tests/test_env_contract.py.)"""
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
