"""Provenance by identity, reserved metadata refused as a class, and the complexity bound decided
before booking.

- The entries beancount's stages add are told apart by object identity (`gate.Loaded.synthesized`),
  never by what their metadata says: an entry the ledger wrote that looks exactly like padding is
  still the ledger's.
- Every metadata key beancount sets itself or its stages read (``filename``, ``lineno``, any ``_``
  key) is refused wherever a ledger writes it, with the key and the line named.
- The cost of booking and checking is bounded from the parse: the quadratic ledgers are refused
  before anything is booked, and every shipped and generated ledger stays well inside the bound.
"""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from beancount import loader
from beancount.parser import printer
from beancount_ledger import answer, attacks, gate, ladder, render, scorer, world
from beancount_ledger.bookkeeper import reference_ledger
from beancount_ledger.entitlement import entitled
from beancount_ledger.limits import LEDGER_ENVELOPE, MAX_CHECK_COST
from beancount_ledger.world import BANK, EQUITY

WORLDS = {
    "bank_recon_001": world.bank_recon_001,
    "dev:0": lambda: world.generate(0),
    "dev:7": lambda: world.generate(7),
    "dev:3:level6": lambda: world.generate(3, profile=ladder.profile(6)),
    "dev:0:level14": lambda: world.generate(0, profile=ladder.profile(14)),
    "hard:3": lambda: world.generate(3, hard=True),
}
FORGED = ("forged_lineno_plug", "forged_filename_plug", "pushmeta_lineno_plug", "posting_reserved_meta")


@pytest.mark.parametrize("name", WORLDS)
def test_the_forged_lineno_plug_earns_nothing(name):
    """The plug that claims a pad's line scored 0.400 on every world when provenance was read from
    (filename, lineno), above the untouched ledger; it is now refused, naming the key and its line."""
    w = WORLDS[name]()
    key = attacks.key(w)
    untouched = scorer.score(key.original, key).reward
    for family in FORGED:
        attempt = attacks.ATTACKS[family](w)
        result = scorer.score(attempt.text, key)
        assert result.reward == 0.0 <= untouched, family
        assert result.refused and "is reserved by beancount (line " in result.refused, result.refused
    # The same plug without the forged key is the ledger's own entry: a plug, penalised as one.
    plain = attacks.ATTACKS["forged_lineno_plug"](w).text.replace("\n  lineno: ", "\n  note: ", 1)
    result = scorer.score(plain, key)
    assert result.loaded and result.fabricated >= 2 and (result.reward < untouched or result.reward == 0.0)
    assert result.reward <= entitled(w) + attacks.EPSILON


def _padded(w: world.World) -> tuple[str, str]:
    """The ledger as given with a pad and an assertion (beancount synthesises one padding entry), and
    the same with an author-written entry identical to that padding, line for line."""
    base = render.ledger_text(w).rstrip()
    day = w.end + timedelta(days=1)
    pad = f"{day} pad {BANK} {EQUITY}"
    check = f"{day + timedelta(days=1)} balance {BANK} 0.00 AUD"
    text = "\n\n".join([base, pad, check]) + "\n"
    padding = next(e for e in gate.load(text).synthesized)
    return text, "\n\n".join([base, pad, printer.format_entry(padding), check]) + "\n"


def test_padding_is_found_by_identity_not_by_what_it_says():
    w = world.bank_recon_001()
    text, with_copy = _padded(w)
    loaded = gate.load(text)
    assert loaded.ok, loaded.errors
    entries, _, _ = loader.load_string(text)
    assert loaded.entries == entries
    (padding,) = loaded.synthesized
    assert padding.flag == "P" and any(e is padding for e in loaded.entries)
    assert all(e is not padding for e in loaded.written)
    assert len(loaded.written) == len(loaded.entries) - 1
    # An entry the ledger writes that is the padding's exact twin (flag, date, narration, postings)
    # is the ledger's own: the pad is now unused, so beancount refuses it; without the pad, the twin
    # is a new transaction like any other.
    twin = gate.load(with_copy)
    assert not twin.ok and any("Unused Pad entry" in e for e in twin.errors)
    alone = with_copy.replace(f"{w.end + timedelta(days=1)} pad {BANK} {EQUITY}\n", "", 1)
    loaded = gate.load(alone)
    assert loaded.ok and not loaded.synthesized
    key = attacks.key(w)
    assert scorer.score(alone, key).fabricated == 1


def test_the_scorer_never_reads_metadata_for_provenance():
    """The scorer's one source of provenance is the gate's identity set (no metadata lookup)."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(scorer._recorded))
    names = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    assert "written" in names and "meta" not in names
    strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)}
    assert not strings & {"filename", "lineno"}


BASE = """option "operating_currency" "AUD"
2024-03-01 open Assets:Bank:Operating AUD
2024-03-01 open Income:Sales AUD
2024-03-02 * "Customer" "Receipt"
  Assets:Bank:Operating   10.00 AUD
  Income:Sales           -10.00 AUD
"""
PLACES = {
    "transaction": '2024-03-03 * "x"\n  {kv}\n  Assets:Bank:Operating  1.00 AUD\n  Income:Sales  -1.00 AUD\n',
    "posting": '2024-03-03 * "x"\n  Assets:Bank:Operating  1.00 AUD\n    {kv}\n  Income:Sales  -1.00 AUD\n',
    "open": "2024-03-01 open Expenses:Fees AUD\n  {kv}\n",
    "balance": "2024-03-04 balance Assets:Bank:Operating 10.00 AUD\n  {kv}\n",
    "note": '2024-03-04 note Assets:Bank:Operating "n"\n  {kv}\n',
    "pad": "2024-03-03 pad Assets:Bank:Operating Income:Sales\n  {kv}\n"
    "2024-03-04 balance Assets:Bank:Operating 20.00 AUD\n",
    "pushmeta": '\npushmeta {kv}\n2024-03-03 * "x"\n'
    "  Assets:Bank:Operating  1.00 AUD\n  Income:Sales  -1.00 AUD\n",
}
VALUES = ("130", '"<string>"', "2024-03-01", "TRUE", "Assets:Bank:Operating", "10.00 AUD", "")


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("key", sorted(gate.RESERVED_META))
def test_reserved_metadata_is_refused_wherever_it_is_written(place, key):
    for value in VALUES:
        block = PLACES[place].format(kv=f"{key}: {value}".rstrip())
        text = BASE + block
        line = 1 + text.splitlines().index(next(s for s in text.splitlines() if f"{key}:" in s))
        result = gate.load(text)
        assert result.refused == f"metadata key {key!r} is reserved by beancount (line {line})", (
            place,
            value,
        )
        assert not result.entries


def test_underscore_keys_never_reach_booking():
    """beancount's lexer refuses a key starting with ``_``; the gate refuses it as well, by class."""
    for place in PLACES:
        for key in ("__automatic__", "__residual__", "__tolerances__", "_x"):
            result = gate.load(BASE + PLACES[place].format(kv=f"{key}: TRUE"))
            assert not result.ok, (place, key)
    assert gate.reserved("__residual__") and gate.reserved("_") and gate.reserved("lineno")
    assert not gate.reserved("bank_ref") and not gate.reserved("invoice")


def test_no_world_writes_a_reserved_key_or_nears_the_bound():
    """Every shipped and generated ledger, as given, golden and reconciled by the reference
    bookkeeper, at every rung: it loads (no reserved key) and costs at most half the bound."""
    made = [world.bank_recon_001()]
    made += [world.generate(n, profile=ladder.profile(k)) for k in ladder.RUNGS for n in range(8)]
    made += [world.generate(n, hard=True) for n in range(8)]
    worst = 0
    for w in made:
        files = render.public_files(w)
        texts = (
            render.ledger_text(w),
            answer.golden_ledger(answer.project(w)),
            reference_ledger(
                files[render.LEDGER], files["bank_statement.csv"], files["archive_prior_period.csv"]
            ),
        )
        for text in texts:
            loaded = gate.load(text)
            assert loaded.ok, (w.world_id, loaded.refused, loaded.errors[:1])
            worst = max(worst, gate.check_cost(gate.parse(text)[0])[0])
    assert worst <= MAX_CHECK_COST // 2, worst


def _parent(subs: int, asserts: int) -> str:
    postings = "\n".join(f"  Assets:P:S{i}  1 AUD" for i in range(subs))
    checks = "\n".join(["2024-01-03 balance Assets:P 1 AUD"] * asserts)
    return f'2024-01-02 * "x"\n{postings}\n  Equity:E\n{checks}\n'


def test_the_quadratic_check_is_refused_before_booking():
    """1,000 postings to sub-accounts and 650 assertions on their parent (44 KB, within the envelope):
    over 2 s in beancount's balance check unbounded; refused from the parse, naming bound and figure."""
    text = _parent(1000, 650)
    assert len(text.encode()) < LEDGER_ENVELOPE
    start = time.process_time()
    result = gate.load(text)
    took = time.process_time() - start
    cost, terms = gate.check_cost(gate.parse(text)[0])
    assert result.refused == gate.bound(gate.parse(text)[0])
    assert f"would cost {cost:,} units to check, over the bound of {MAX_CHECK_COST:,}" in result.refused
    assert terms == {
        "entries": 651,
        "postings": 1001,
        "accounts": 1002,
        "assertions": 650,
        "beneath": 650 * 1001,
    }
    assert took < 0.5, took


def test_the_cost_counts_what_beancounts_stages_visit():
    # Per assertion, every node of the account tree beneath its account, itself included.
    assert gate.check_cost(gate.parse(_parent(10, 3))[0])[1]["beneath"] == 3 * 11
    # Intermediate accounts count as nodes (the realization creates them).
    deep = '2024-01-02 * "x"\n  Assets:A:B:C:D  1 AUD\n  Equity:E\n2024-01-03 balance Assets:A 1 AUD\n'
    assert gate.check_cost(gate.parse(deep)[0])[1]["beneath"] == 4
    # A pad scans the postings beneath its account.
    pads = '2024-01-02 * "x"\n  Assets:A:B  1 AUD\n  Assets:A  1 AUD\n  Equity:E\n'
    pads += "2024-01-03 pad Assets:A Equity:E\n"
    assert gate.check_cost(gate.parse(pads)[0])[1]["beneath"] == 2
    # A name 20,000 components deep is counted in linear time.
    chain = "Assets:" + ":".join(["A"] * 20_000)
    start = time.process_time()
    cost, terms = gate.check_cost(gate.parse(f'2024-01-02 * "x"\n  {chain}  1 AUD\n  Equity:E\n')[0])
    assert time.process_time() - start < 0.5 and terms["postings"] == 2


def test_errors_render_as_beancounts_own_and_each_entry_once():
    text = '2024-01-02 * "x"\n' + "\n".join(f"  Assets:S{i}  1 AUD" for i in range(300)) + "\n  Equity:E\n"
    loaded = gate.load(text)
    _, errors, _ = loader.load_string(text)
    assert loaded.errors == [printer.format_error(e).strip() for e in errors[: gate.MAX_ERRORS]]
    assert loaded.error_count == len(errors)


def test_foreign_amounts_prices_and_costs_fail_before_booking():
    for posting in ("5.00 USD", "5.00 AUD @ 1 AUD", "1 X {5.00 AUD}"):
        text = BASE + f'2024-03-03 * "x"\n  Assets:Bank:Operating  {posting}\n  Income:Sales\n'
        result = gate.load(text)
        assert not result.ok and not result.entries and result.refused is None
        assert "not AUD" in result.errors[0] or "price or cost" in result.errors[0], result.errors
