"""The size bound: every task up to `MAX_TRANSACTIONS` rows fits one command-line argument, and one
row more fails at load naming the knob."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest
from au_bas_reconciliation_v1 import generator, taskset
from au_bas_reconciliation_v1.ledger import to_csv
from au_bas_reconciliation_v1.taskset import (
    MAX_TRANSACTIONS,
    AuBasConfig,
    AuBasTaskset,
    make_task_data,
    widest_prompt_bytes,
)
from piv_core import task_rng
from piv_core.tasksets.prompt_size import ARG_STRLEN_MAX, PROMPT_BUDGET, prompt_bytes
from pydantic import ValidationError


def test_the_bound_is_the_most_rows_whose_widest_prompt_fits():
    assert widest_prompt_bytes(MAX_TRANSACTIONS) <= PROMPT_BUDGET < widest_prompt_bytes(MAX_TRANSACTIONS + 1)
    assert MAX_TRANSACTIONS >= 1000


@pytest.mark.parametrize("fault_rate", [0.0, 1.0])
@pytest.mark.parametrize("seed", [1, 2, 20260826])
def test_tasks_at_the_bound_fit_one_argument(seed, fault_rate):
    config = AuBasConfig(num_transactions=MAX_TRANSACTIONS, fault_rate=fault_rate, seed=seed)
    for idx in range(2):
        data = make_task_data(config, idx)
        assert data.prompt.count("\nT") == MAX_TRANSACTIONS
        assert prompt_bytes(data.system_prompt, data.prompt) <= widest_prompt_bytes(MAX_TRANSACTIONS)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="MAX_ARG_STRLEN is Linux's")
def test_the_prompt_at_the_bound_is_accepted_as_one_argument():
    data = make_task_data(AuBasConfig(num_transactions=MAX_TRANSACTIONS, fault_rate=1.0), 0)
    argument = f"--prompt={data.system_prompt}\n\n{data.prompt}"
    assert len(argument.encode()) < ARG_STRLEN_MAX
    subprocess.run([sys.executable, "-c", "pass", argument], check=True)


@pytest.mark.parametrize("fault_rate", [0.0, 0.5, 1.0])
def test_no_generated_column_is_wider_than_the_widest_row(fault_rate):
    """The bound rests on `widest_ledger`: no row of a real ledger has any column wider."""
    for num_rows in (4, 60, 1_000):
        widest = generator.widest_ledger(num_rows)
        limits = [len(field) for field in to_csv(widest.rows[:1]).splitlines()[1].split(",")]
        for idx in range(40 if num_rows < 1_000 else 3):
            ledger = generator.generate(task_rng(idx, num_rows), num_rows, fault_rate)
            assert len(ledger.business) <= len(widest.business)
            assert len(ledger.quarter.describe()) <= len(widest.quarter.describe())
            for line in to_csv(ledger.rows).splitlines()[1:]:
                widths = [len(field) for field in line.split(",")]
                assert all(w <= limit for w, limit in zip(widths, limits, strict=True)), (line, limits)


def test_one_row_more_fails_at_load_naming_the_knob():
    AuBasTaskset(AuBasConfig(num_transactions=MAX_TRANSACTIONS))
    message = f"num_transactions must be <= {MAX_TRANSACTIONS}, got {MAX_TRANSACTIONS + 1}: a longer ledger"
    with pytest.raises(ValidationError, match=message):
        AuBasTaskset(AuBasConfig(num_transactions=MAX_TRANSACTIONS + 1))
    with pytest.raises(ValidationError, match="num_transactions must be <= "):
        AuBasConfig(num_transactions=10**6)


def test_the_docs_state_the_bound():
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    assert f"rows per ledger, from 4 to {MAX_TRANSACTIONS}:" in readme
    assert f"`num_transactions must be <= {MAX_TRANSACTIONS}, got {MAX_TRANSACTIONS + 1}:" in readme
    assert f"`MAX_TRANSACTIONS` ({MAX_TRANSACTIONS})" in inspect.getsource(taskset)  # the knob's docstring
