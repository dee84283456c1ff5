"""Worlds, the scorer's gate, components and penalties (no model, no runtime)."""

import pytest
from beancount_ledger import gate, render, world
from beancount_ledger.answer import golden_ledger, key_of
from beancount_ledger.scorer import score
from beancount_ledger.taskset import make_task_data

SELECTORS = ["bank_recon_001", *(f"dev:{n}" for n in range(20))]


@pytest.fixture(scope="module")
def data():
    return make_task_data("bank_recon_001")


@pytest.mark.parametrize("selector", SELECTORS)
def test_golden_scores_one_and_untouched_below(selector):
    d = make_task_data(selector)
    key = key_of(d)
    assert score(golden_ledger(d), key).reward == 1.0
    assert score(key.original, key).reward < 0.5
    assert {f.kind for f in d.fixes} == set(world.PLANT_KINDS)


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
    text = golden_ledger(data) + f"\n{line}\n"
    assert gate.load(text).refused is not None
    result = score(text, key_of(data))
    assert result.refused and not result.loaded and result.reward == 0.0


def test_unloadable_ledger_scores_zero(data):
    text = golden_ledger(data) + '\n2024-03-31 * "broken"\n  Assets:Bank:Operating  1.00 AUD\n'
    result = score(text, key_of(data))
    assert not result.loaded and result.reward == 0.0


def test_one_cent_is_not_a_hit(data):
    # A failing-by-one-cent correction would pass a 2-decimal balance assertion; the scorer compares exactly.
    text = golden_ledger(data).replace("-270.00 AUD", "-270.01 AUD").replace(" 270.00 AUD", " 270.01 AUD")
    result = score(text, key_of(data))
    assert result.loaded and result.balances_hit < result.balances_total and len(result.resolved) == 4


def test_damaging_an_original_record_is_penalised(data):
    golden = golden_ledger(data)
    damaged = golden.replace(
        '"Interest"\n  bank_ref: "BS2403-013"', '"Interest received"\n  bank_ref: "BS2403-013"'
    )
    result = score(damaged, key_of(data))
    # 0.1 for the change, and the two accounts it touches (bank, interest) earn no balance credit.
    assert result.damaged == 1 and result.balances_hit == 12
    assert result.reward == pytest.approx(1 - 0.1 - 2 * 0.5 / 14, abs=1e-6)


def test_fabricated_entry_and_pad_are_penalised(data):
    extra = (
        '\n2024-03-31 * "Tidy up"\n  Expenses:BankFees  1.00 AUD\n  Income:Interest  -1.00 AUD\n'
        "\n2024-03-30 pad Assets:Bank:Savings Equity:Opening-Balances\n"
        "2024-03-31 balance Assets:Bank:Savings 15010.00 AUD\n"
    )
    result = score(golden_ledger(data) + extra, key_of(data))
    assert result.loaded and result.fabricated == 2


def test_invented_account_is_penalised(data):
    extra = (
        '\n2024-03-01 open Expenses:Suspense AUD\n2024-03-31 * "Park it"\n  bank_ref: "BS2403-013"\n'
        "  Expenses:Suspense  0.00 AUD\n  Income:Interest  0.00 AUD\n"
    )
    result = score(golden_ledger(data) + extra, key_of(data))
    assert result.invented == 1 and "BS2403-013" not in result.resolved


def test_edit_instead_of_correction_does_not_resolve(data):
    w = world.bank_recon_001()
    edited = (
        render.ledger_text(w).replace("2690.00 AUD", "2960.00 AUD").replace("-2690.00 AUD", "-2960.00 AUD")
    )
    result = score(edited, key_of(data))
    assert result.damaged == 1 and result.resolved == []


@pytest.mark.parametrize(
    ("old", "new", "penalties"),
    [
        ('"Invoice INV-2046"', '"Invoice INV-2046 (Dunmore)"', 1),  # no bank_ref, same date: once
        ('"Receipt INV-2041"', '"Receipt INV-2041 (Baxter)"', 1),  # bank_ref kept: once
        ('2024-03-12 * "Dunmore Bakery"', '2024-03-13 * "Dunmore Bakery"', 2),  # re-dated: twice
    ],
)
def test_a_changed_record_costs_what_the_policy_says(data, old, new, penalties):
    golden = golden_ledger(data)
    assert golden.count(old) == 1
    result = score(golden.replace(old, new), key_of(data))
    # Each penalty is 0.1; the two accounts the record posts to earn no balance credit.
    assert result.damaged == 1 and result.balances_hit == 12, result
    assert result.reward == pytest.approx(1 - 0.1 * penalties - 2 * 0.5 / 14, abs=1e-6)


def _scored(ledger, submitted):
    """Finalize and score a rollout whose tools left `ledger` as the latest accepted write."""
    import asyncio

    import verifiers.v1 as vf
    from beancount_ledger.taskset import LedgerTask, LedgerTaskConfig
    from beancount_ledger.tools import LedgerState

    task = LedgerTask(make_task_data("dev:4"), LedgerTaskConfig())
    state = LedgerState(ledger=ledger, submitted=submitted, revision=int(ledger is not None))
    trace = vf.Trace(
        task=vf.TraceTask(type="LedgerTask", data=task.data),
        agent=vf.AgentInfo(config=vf.AgentConfig()),
        state=state,
    )
    asyncio.run(task.finalize(trace, None))
    asyncio.run(task.score(trace))
    return trace


@pytest.mark.parametrize("submitted", [False, True])
def test_latest_written_ledger_is_scored_with_or_without_submit(submitted):
    golden = golden_ledger(make_task_data("dev:4"))
    trace = _scored(golden, submitted)
    assert trace.rewards["ledger"].score == 1.0
    assert trace.metrics["submitted"] == float(submitted) and trace.metrics["written"] == 1.0
    assert trace.info["episode_contract"]["digest"]
    untouched = _scored(make_task_data("dev:4").files["ledger.beancount"], submitted)
    assert untouched.rewards["ledger"].score < 0.5
    assert _scored(None, submitted).rewards["ledger"].score == 0.0


def test_each_penalty_costs_exactly_one_tenth_on_a_generated_world():
    d = make_task_data("dev:11")
    key, golden = key_of(d), golden_ledger(d)
    lines, planted = golden.splitlines(), {f.ref for f in d.fixes}
    first = next(
        line
        for line, after in zip(lines, lines[1:])
        if '"Receipt INV-' in line and after.split('"')[1] not in planted
    )
    damaged = golden.replace(first, first.replace('"Receipt INV-', '"Receipt for INV-'), 1)
    fabricated = (
        golden + '\n2099-01-01 * "Tidy up"\n  Expenses:BankFees  1.00 AUD\n  Income:Interest  -1.00 AUD\n'
    )
    invented = golden + "\n2000-01-01 open Expenses:Misc AUD\n"
    for text, field in ((damaged, "damaged"), (fabricated, "fabricated"), (invented, "invented")):
        result = score(text, key)
        counts = {f: getattr(result, f) for f in ("damaged", "fabricated", "invented")}
        assert counts == {f: int(f == field) for f in counts}, (field, counts)
    # The fabricated entry is dated after the period, so balances and resolutions are untouched.
    assert score(fabricated, key).reward == pytest.approx(0.9)
    assert score(invented, key).reward == pytest.approx(0.9)
