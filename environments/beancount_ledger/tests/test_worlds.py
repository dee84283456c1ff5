"""Generated worlds, standard and hard: solvable exactly, harder when hard, partitioned by years, pure."""

import collections
import json
import os
import statistics
import subprocess
import sys
from decimal import Decimal

import pytest
import verifiers.v1 as vf
from beancount_ledger import answer, attacks, baselines, render, scorer, world
from beancount_ledger.answer import golden_ledger, project
from beancount_ledger.tools import LedgerState, LedgerToolset, rollout
from piv_core.policy import Conversation

SEEDS = range(100)
CHUNKS = [(hard, lo) for hard in (False, True) for lo in range(0, len(SEEDS), 10)]


def _written(policy, w: world.World, tmp_path, monkeypatch) -> str:
    """The ledger `policy` writes after reading `w`'s files through the real read_file tool."""
    tools = LedgerToolset(vf.SharedToolsetConfig())
    messages: list[dict] = [{"role": "user", "content": "Reconcile the books."}]
    with rollout(LedgerState(files=render.public_files(w))):
        for n, name in enumerate(baselines.READS):
            call = {"id": f"c{n}", "function": {"name": "read_file", "arguments": json.dumps({"name": name})}}
            messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
            messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": tools.read_file(name)})
    (call,) = policy(Conversation(messages, []))
    assert call.name == "write_ledger"
    return call.arguments["text"]


@pytest.mark.parametrize(("hard", "lo"), CHUNKS)
def test_golden_and_reference_score_one(hard, lo, tmp_path, monkeypatch):
    for seed in SEEDS[lo : lo + 10]:
        w = world.generate(seed, hard=hard)
        key = attacks.key(w)
        assert scorer.score(golden_ledger(project(w)), key).reward == 1.0, seed
        assert scorer.score(_written(baselines.reference, w, tmp_path, monkeypatch), key).reward == 1.0, seed


def test_hard_worlds_plant_every_hard_kind_and_are_longer():
    for seed in SEEDS:
        standard, hard = world.generate(seed), world.generate(seed, hard=True)
        assert sorted(p.kind for p in standard.plants) == sorted(world.PLANT_KINDS)
        assert sorted(p.kind for p in hard.plants) == sorted(world.HARD_KINDS)
        assert len(hard.plants) > len(standard.plants) and hard.hard and not standard.hard
    sizes = {
        hard: [len(render.ledger_text(world.generate(s, hard=hard)).encode()) for s in SEEDS]
        for hard in (False, True)
    }
    assert statistics.median(sizes[True]) > 1.25 * statistics.median(sizes[False])
    assert min(sizes[True]) > statistics.median(sizes[False])


def test_ledger_sizes_within_bounds():
    for seed in range(300):
        assert 6_500 < len(render.ledger_text(world.generate(seed)).encode()) < 11_500, seed
        assert 10_000 < len(render.ledger_text(world.generate(seed, hard=True)).encode()) < 20_000, seed


def test_the_subtler_kinds_are_subtle():
    for seed in range(30):
        w = world.generate(seed, hard=True)
        plants = {p.kind: p for p in w.plants}
        fix = {q.account: q.amount for q in plants["transposed_cents"].fix}
        assert Decimal(0) < abs(fix[world.BANK]) < Decimal(1)
        assert {q.account for q in plants["receipt_to_sales"].fix} == {world.AR, world.SALES}
        # The second copy of a payment: no bank_ref, 1 to 3 days after the original, same postings.
        ref = plants["untagged_duplicate"].ref
        (original,) = [e for e in w.booked if e.bank_ref == ref]
        (copy,) = [e for e in w.booked if e.postings == original.postings and e.bank_ref is None]
        assert original.narration.startswith("Payment") and not copy.meta
        assert 1 <= (copy.date - original.date).days <= 3 and copy.date <= w.end
        assert "8. Every transaction of the month" in render.policy_md(w)


@pytest.mark.parametrize("name", ["flagged", "single", "three"])
def test_no_statement_position_is_where_a_discrepancy_usually_sits(name):
    """At the located-credit rungs a line booked for where it sits on the statement (first, last, the
    n-th from either end) is rarely the planted one: no position holds a plant in more than 1.4 times
    the share of a draw even over the lines. (The prior cheque clearing in the first days and the fee and
    interest on the last made the first line the plant in 12% of single-discrepancy months and the last
    in 20% of flagged ones; the seed's months keep that calendar.)"""
    profile, held, plants, lines = world.PROFILES[name], collections.Counter(), 0, []
    for seed in range(1000):
        w = world.generate(seed, profile=profile)
        refs = [b.ref for b in w.bank_lines]
        lines.append(len(refs))
        for p in w.plants:
            i = refs.index(p.ref)
            held.update((i, i - len(refs)))
            plants += 1
    (position, count), even = held.most_common(1)[0], 1 / statistics.mean(lines)
    assert count / plants <= 1.4 * even, (position, count / plants, even)


def test_decoys_are_correct_as_booked():
    for seed in range(30):
        w = world.generate(seed, hard=True)
        planted = {p.ref for p in w.plants}
        # Two cheques written this month, neither presented: timing differences, not errors.
        cheques = [e for e in w.booked if dict(e.meta).get("cheque")]
        assert len(cheques) == 2 and set(cheques) <= {e.entry for e in w.events}
        # Two genuine receipts of the very same amount from different customers.
        lines = [b for b in w.bank_lines if b.description.startswith("DEPOSIT") and b.ref not in planted]
        twins = [b for b in lines if sum(c.amount == b.amount for c in lines) == 2]
        assert len(twins) == 2 and len({b.description.split(" INV-")[0] for b in twins}) == 2


def test_standard_worlds_keep_five_kinds_and_the_policy():
    for seed in range(10):
        w = world.generate(seed, years=(2019, 2023))
        assert sorted(p.kind for p in w.plants) == sorted(world.PLANT_KINDS)
        assert "8. Every transaction" not in render.policy_md(w)
    assert "8. Every transaction" not in render.policy_md(world.bank_recon_001())


def test_untouched_scores_lower_on_hard():
    def untouched(hard):
        return statistics.mean(
            scorer.score(render.ledger_text(w), attacks.key(w)).reward
            for w in (world.generate(s, hard=hard) for s in range(40))
        )

    assert untouched(True) < untouched(False) < 0.5


@pytest.mark.parametrize("years", [(2019, 2023), (2025, 2025), (2026, 2026)])
@pytest.mark.parametrize("hard", [False, True])
def test_years_are_respected(years, hard):
    starts = {world.generate(seed, hard=hard, years=years).start for seed in range(150)}
    assert {s.year for s in starts} == set(range(years[0], years[1] + 1))
    assert len({s.month for s in starts}) == 12


def test_years_partition_the_worlds_and_world_id_is_never_rendered():
    a = world.generate(3, years=(2019, 2023), world_id="train:3")
    b = world.generate(3, years=(2019, 2023), world_id="hidden-label-7f3a")
    assert a.world_id == "train:3" and world.generate(3).world_id == "dev:3"
    assert render.public_files(a) == render.public_files(b)
    assert not any("hidden-label-7f3a" in text for text in render.public_files(b).values())
    assert "hidden-label-7f3a" not in golden_ledger(project(b))
    # Different year ranges draw different worlds, not the same month relabelled.
    c = world.generate(3, years=(2025, 2025))
    assert render.ledger_text(c).split("\n", 1)[1] != render.ledger_text(a).split("\n", 1)[1]
    with pytest.raises(ValueError):
        world.generate(3, years=(2025, 2024))


RENDERED = (
    "repr([(answer.project(w), answer.golden_ledger(answer.project(w))) "
    "for w in [world.generate(s, hard=h, years=y, world_id='k') for s, h, y in "
    "((7, True, (2026, 2026)), (8, False, (2019, 2023)), (9, True, (2023, 2025)))]])"
)


def test_worlds_of_every_profile_are_identical_across_processes():
    # The package's modules are loaded without its __init__ (which imports verifiers: seconds).
    path = [os.path.dirname(answer.__file__)]
    code = (
        f"import sys, types; p = types.ModuleType('beancount_ledger'); p.__path__ = {path!r}; "
        "sys.modules['beancount_ledger'] = p; from beancount_ledger import answer, world; "
        f"sys.stdout.buffer.write({RENDERED}.encode())"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, env={"PYTHONHASHSEED": seed})
        for seed in ("3", "4")
    ]
    outputs = {p.communicate(timeout=60)[0] for p in procs}
    here = eval(RENDERED, {"answer": answer, "world": world})
    assert outputs == {here.encode()} and len(here) > 60_000


def test_the_shipped_world_is_read_from_its_data_files_exactly():
    from beancount_ledger.world import shipped

    folder = shipped.DATA / "bank_recon_001"
    w = world.bank_recon_001()
    books = (folder / "books.beancount").read_text()
    written = "\n\n".join(render.entry_text(e) for e in [w.opening, *(e.entry for e in w.events if e.entry)])
    assert books.rstrip().endswith(written) and shipped.parse_entries(books)[0] == w.opening
    assert sorted(p.kind for p in w.plants) == sorted(world.PLANT_KINDS)
    assert [e.entry is None for e in w.events].count(True) == 1  # the prior-period cheque clearing
    with pytest.raises(shipped.ShippedWorldError, match="no shipped world"):
        shipped.load("bank_recon_002")
    with pytest.raises(shipped.ShippedWorldError, match="not a transaction header"):
        shipped.parse_entries("2024-03-01 open Assets:Bank:Operating AUD\n")


def test_one_golden_builder_at_package_level():
    import beancount_ledger
    from beancount_ledger import taskset

    data = taskset.make_task_data("dev:3")
    assert beancount_ledger.golden_ledger is answer.golden_ledger is taskset.golden_of
    assert golden_ledger(data) == golden_ledger(project(world.generate(3)))
