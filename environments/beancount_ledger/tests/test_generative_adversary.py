"""The generative adversary: hypothesis searches edit sets to a world's ledger (`mutations`), each
scored by the real scorer; no edit set may score above what the entitlement oracle entitles it to.

The worlds span the shipped one, generated dev worlds, every rung of the ladder and the hard profile.
``PIV_ADVERSARY_EXAMPLES`` sets the examples per world (default 40; derandomized, so a run is
reproducible and CI sees the same edit sets every time).
"""

from __future__ import annotations

import os
import random

import pytest
from beancount_ledger import attacks, ladder, mutations, scorer, world
from beancount_ledger.entitlement import entitled
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("PIV_ADVERSARY_EXAMPLES", "40"))
WORLDS = ["bank_recon_001", "dev:0", "dev:11", *(f"dev:{k}:level{k}" for k in ladder.RUNGS), "hard:2"]
_cache: dict[str, tuple[world.World, object]] = {}


def _make(name: str) -> world.World:
    if name == "bank_recon_001":
        return world.bank_recon_001()
    if name.startswith("hard:"):
        return world.generate(int(name.removeprefix("hard:")), hard=True)
    _, seed, *level = name.split(":")
    profile = ladder.profile(int(level[0].removeprefix("level"))) if level else None
    return world.generate(int(seed), profile=profile)


def _world(name: str):
    if name not in _cache:
        w = _make(name)
        _cache[name] = (w, attacks.key(w))
    return _cache[name]


@pytest.mark.parametrize("name", WORLDS)
@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_no_edit_set_scores_above_its_entitlement(name, data):
    w, key = _world(name)
    edits = mutations.draw(w, lambda options: data.draw(st.sampled_from(list(options))))
    result = mutations.judge(w, edits, key)
    assert not result.exploit, (edits, result)
    assert 0.0 <= result.strict <= result.entitlement <= 1.0


@pytest.mark.parametrize("name", ["bank_recon_001", "dev:1:level1", "dev:4:level14"])
def test_no_plug_passes_for_padding(name):
    """The pad-and-plug subspace swept whole (72 edit sets a world): a plug beside a used pad, with
    every flag, date and metadata, forged ``lineno``/``filename`` included. Against the scorer that
    told padding apart by (filename, lineno), 12 of 288 such edit sets on four worlds beat their
    entitlement (by 0.007 to 0.179: rewards 0.329 and 0.400); none may."""
    w, key = _world(name)
    results = [mutations.judge(w, edits, key) for edits in mutations.provenance_sweep(w)]
    assert len(results) == 72
    assert not [r for r in results if r.exploit]


def test_the_search_is_not_vacuous():
    """Honest edits earn exactly their entitlement; the search reaches the forged-provenance plug, the
    pads, the removals and the reserved keys, and each is refused or penalised."""
    w, key = _world("dev:0")
    n = len(w.plants)
    honest = mutations.Edits(("honest",) * n)
    assert mutations.judge(w, honest, key).reward == entitled(w, {p.ref for p in w.plants}) == 1.0
    one = mutations.Edits(("honest",) + ("none",) * (n - 1))
    assert mutations.judge(w, one, key).reward == entitled(w, {w.plants[0].ref})
    forged = mutations.Edits(
        ("none",) * n, (("pad", "after", "bank"), ("plug", "all", "P", "end", "none", "pad_line"))
    )
    text, claim = mutations.apply(w, forged)
    assert "lineno: " in text and " pad " in text and claim.violations == 1
    assert scorer.score(text, key).refused.startswith("metadata key 'lineno' is reserved")
    # Every edit of the vocabulary is drawable.
    seen: set[str] = set()
    rng = random.Random(0)
    for _ in range(400):
        edits = mutations.draw(w, lambda options: rng.choice(list(options)))
        seen |= set(edits.plants) | {e[0] for e in edits.extras}
    assert seen >= set(mutations.PLANT_OPS) | set(mutations.EXTRAS)


@pytest.mark.parametrize("how", ["meta", "tag", "flag", "narration", 'posting:memo: "checked"'])
def test_an_original_changed_anywhere_is_a_changed_record(how):
    """A record's flag, narration, metadata, tags, and its postings' metadata are all part of it: a
    change to any of them is charged as one changed record (found by the search: posting metadata and
    tags were once left out of the fingerprint)."""
    w, key = _world("bank_recon_001")
    planted = {p.ref for p in w.plants}
    index = next(i for i, e in enumerate(w.booked) if e.bank_ref and e.bank_ref not in planted)
    original = key.original
    text = original.replace(
        attacks.render.entry_text(w.booked[index]),
        mutations._altered(attacks.render.entry_text(w.booked[index]), how),
    )
    assert text != original
    result = scorer.score(text, key)
    assert result.loaded and result.damaged == 1 and result.fabricated == 0, result
    assert result.reward < scorer.score(original, key).reward


def test_the_preflight_runs_the_search_on_every_world(dev_worlds):
    from beancount_ledger import preflight

    minted = preflight.mint("train:3:level13", search=6)
    assert not minted.failures, minted.failures
    assert minted.searched == 6
    worst = [r for r in minted.attacks if r.name == "generative_search"]
    assert len(worst) == 1 and not worst[0].exploit
    assert preflight.mint("train:3:level13", search=6).attacks[-1] == worst[0]  # seeded by the world
