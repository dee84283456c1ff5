"""Worlds, the scorer's gate, components and penalties (no model, no runtime)."""

import subprocess
import sys

import pytest
from beancount_ledger import render, world
from beancount_ledger.scorer import refusal, score
from beancount_ledger.taskset import golden_of, key_of, make_task_data

SELECTORS = ["bank_recon_001", *(f"dev:{n}" for n in range(20))]


@pytest.fixture(scope="module")
def data():
    return make_task_data("bank_recon_001")


@pytest.mark.parametrize("selector", SELECTORS)
def test_golden_scores_one_and_untouched_below(selector):
    d = make_task_data(selector)
    key = key_of(d)
    assert score(golden_of(d), key).reward == 1.0
    assert score(key.original, key).reward < 0.5
    assert {f["kind"] for f in d.fixes} == set(world.PLANT_KINDS)


def test_worlds_are_identical_across_processes():
    code = "from beancount_ledger.taskset import make_task_data as m; print(m('dev:7').model_dump_json())"
    runs = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONHASHSEED": str(seed)}
        ).stdout
        for seed in (1, 2)
    }
    assert len(runs) == 1 and make_task_data("dev:7").model_dump_json() in runs.pop()


def test_nothing_written_scores_zero(data):
    assert score(None, key_of(data)).reward == 0.0


@pytest.mark.parametrize(
    "line",
    [
        'plugin "beancount.plugins.auto_accounts"',
        'include "other.beancount"',
        'option "insert_pythonpath" "TRUE"',
        '  plugin "x"',
    ],
)
def test_plugin_include_and_options_refused_before_loading(data, line):
    text = golden_of(data) + f"\n{line}\n"
    assert refusal(text) is not None
    result = score(text, key_of(data))
    assert result.refused and not result.loaded and result.reward == 0.0


def test_unloadable_ledger_scores_zero(data):
    text = golden_of(data) + '\n2024-03-31 * "broken"\n  Assets:Bank:Operating  1.00 AUD\n'
    result = score(text, key_of(data))
    assert not result.loaded and result.reward == 0.0


def test_one_cent_is_not_a_hit(data):
    # A failing-by-one-cent correction would pass a 2-decimal balance assertion; the scorer compares exactly.
    text = golden_of(data).replace("-270.00 AUD", "-270.01 AUD").replace(" 270.00 AUD", " 270.01 AUD")
    result = score(text, key_of(data))
    assert result.loaded and result.balances_hit < result.balances_total and len(result.resolved) == 4


def test_damaging_an_original_record_is_penalised(data):
    golden = golden_of(data)
    damaged = golden.replace(
        '"Interest"\n  bank_ref: "BS2403-013"', '"Interest received"\n  bank_ref: "BS2403-013"'
    )
    result = score(damaged, key_of(data))
    assert result.damaged == 1 and result.reward == pytest.approx(0.9)


def test_fabricated_entry_and_pad_are_penalised(data):
    extra = (
        '\n2024-03-31 * "Tidy up"\n  Expenses:BankFees  1.00 AUD\n  Income:Interest  -1.00 AUD\n'
        "\n2024-03-30 pad Assets:Bank:Savings Equity:Opening-Balances\n"
        "2024-03-31 balance Assets:Bank:Savings 15010.00 AUD\n"
    )
    result = score(golden_of(data) + extra, key_of(data))
    assert result.loaded and result.fabricated == 2


def test_invented_account_is_penalised(data):
    extra = (
        '\n2024-03-01 open Expenses:Suspense AUD\n2024-03-31 * "Park it"\n  bank_ref: "BS2403-013"\n'
        "  Expenses:Suspense  0.00 AUD\n  Income:Interest  0.00 AUD\n"
    )
    result = score(golden_of(data) + extra, key_of(data))
    assert result.invented == 1 and "BS2403-013" not in result.resolved


def test_edit_instead_of_correction_does_not_resolve(data):
    w = world.bank_recon_001()
    edited = (
        render.ledger_text(w).replace("2690.00 AUD", "2960.00 AUD").replace("-2690.00 AUD", "-2960.00 AUD")
    )
    result = score(edited, key_of(data))
    assert result.damaged == 1 and result.resolved == []
