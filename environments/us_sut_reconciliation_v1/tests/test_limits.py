"""The size bounds: every task up to `MAX_ROWS` rows fits one command-line argument, a set up to
`max_tasks` fits memory, and one more of either fails at load naming the knob."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pydantic
import pytest
from piv_core import task_rng
from piv_core.tasksets.prompt_size import ARG_STRLEN_MAX, PROMPT_BUDGET, SET_BUDGET, prompt_bytes
from us_sut_reconciliation_v1 import generator, taskset
from us_sut_reconciliation_v1.ledger import to_csv
from us_sut_reconciliation_v1.taskset import (
    MAX_ROWS,
    UsSutConfig,
    UsSutTaskset,
    make_task_data,
    max_tasks,
    widest_prompt_bytes,
)


def test_the_bound_is_the_most_rows_whose_widest_prompt_fits() -> None:
    assert widest_prompt_bytes(MAX_ROWS) <= PROMPT_BUDGET < widest_prompt_bytes(MAX_ROWS + 1)
    assert MAX_ROWS >= 1000


@pytest.mark.parametrize("fault_rate", [0.0, 1.0])
@pytest.mark.parametrize("seed", [1, 2, 20260701])
def test_tasks_at_the_bound_fit_one_argument(seed: int, fault_rate: float) -> None:
    config = UsSutConfig(num_tasks=2, num_rows=MAX_ROWS, fault_rate=fault_rate, seed=seed)
    for task in UsSutTaskset(config):
        data = task.data
        assert data.prompt_text.count("\ntxn_") == MAX_ROWS
        assert prompt_bytes(data.system_prompt, data.prompt_text) <= widest_prompt_bytes(MAX_ROWS)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="MAX_ARG_STRLEN is Linux's")
def test_the_prompt_at_the_bound_is_accepted_as_one_argument() -> None:
    data = make_task_data(UsSutConfig(num_rows=MAX_ROWS, fault_rate=1.0), 0)
    argument = f"--prompt={data.system_prompt}\n\n{data.prompt_text}"
    assert len(argument.encode()) < ARG_STRLEN_MAX
    subprocess.run([sys.executable, "-c", "pass", argument], check=True)


@pytest.mark.parametrize("fault_rate", [0.0, 0.5, 1.0])
def test_no_generated_column_is_wider_than_the_widest_row(fault_rate: float) -> None:
    """The bound rests on `widest_ledger`: no row of a real ledger has any column wider."""
    for num_rows in (5, 60, 1_000):
        widest = generator.widest_ledger(num_rows)
        limits = [len(field) for field in to_csv(widest.rows[:1]).splitlines()[1].split(",")]
        place = len(generator.LOCAL_RATES[widest.business_zip][0])
        for idx in range(40 if num_rows < 1_000 else 3):
            ledger = generator.generate(task_rng(idx, num_rows), num_rows, fault_rate)
            assert len(ledger.business) <= len(widest.business)
            assert len(generator.LOCAL_RATES[ledger.business_zip][0]) <= place
            assert len(ledger.quarter.describe()) == len(widest.quarter.describe())
            for line in to_csv(ledger.rows).splitlines()[1:]:
                widths = [len(field) for field in line.split(",")]
                assert all(w <= limit for w, limit in zip(widths, limits, strict=True)), (line, limits)


def test_one_row_more_fails_at_load_naming_the_knob() -> None:
    UsSutConfig(num_tasks=1, num_rows=MAX_ROWS)
    message = f"num_rows must be <= {MAX_ROWS}, got {MAX_ROWS + 1}: a longer ledger"
    with pytest.raises(pydantic.ValidationError, match=message):
        UsSutConfig(num_tasks=1, num_rows=MAX_ROWS + 1)
    with pytest.raises(pydantic.ValidationError, match="num_rows must be <= "):
        UsSutConfig(num_rows=10**6)


@pytest.mark.parametrize("num_rows", [generator.MIN_ROWS, 30, MAX_ROWS])
def test_one_task_more_than_fits_memory_fails_at_load_naming_the_knob(num_rows: int) -> None:
    most = max_tasks(num_rows)
    assert most * widest_prompt_bytes(num_rows) <= SET_BUDGET < (most + 1) * widest_prompt_bytes(num_rows)
    UsSutConfig(num_tasks=most, num_rows=num_rows)
    message = f"num_tasks must be <= {most} with num_rows={num_rows}, got {most + 1}: the set's prompts"
    with pytest.raises(pydantic.ValidationError, match=message):
        UsSutConfig(num_tasks=most + 1, num_rows=num_rows)


def test_the_docs_state_the_bounds() -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    assert f"rows per ledger, from 5 to {MAX_ROWS}:" in readme
    assert f"`num_rows must be <= {MAX_ROWS}, got {MAX_ROWS + 1}:" in readme
    assert f"at most {max_tasks(30)} at 30 rows, {max_tasks(MAX_ROWS)} at {MAX_ROWS}" in readme
    source = inspect.getsource(taskset)  # the knobs' docstrings
    assert f"`MAX_ROWS` ({MAX_ROWS})" in source
    assert f"({max_tasks(30)} at the default 30 rows, {max_tasks(MAX_ROWS)} at" in source
