"""Selectors and levels as operator input: ASCII digits only, every range bounded before it is
expanded, and each refusal named (the knob, the value, the bound) in well under a millisecond."""

import subprocess
import sys
import time

import pytest
from beancount_ledger import keys, ladder
from beancount_ledger.keys import Refused
from beancount_ledger.taskset import LedgerConfig
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

OTHER_DIGITS = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isdigit() and not "0" <= chr(c) <= "9"]
SHAPES = [
    "train:{}",
    "eval:{}",
    "train:{}:hard",
    "dev:{}",
    "eval:0-{}",
    "dev:{}-9",
    "train:3:level{}",
    "dev:1:level{}",
]


def _refused(reason: str, selectors: list[str]) -> tuple[str, float]:
    start = time.perf_counter()
    with pytest.raises(ValidationError) as caught:
        LedgerConfig(selectors=selectors)
    took = time.perf_counter() - start
    message = str(caught.value)
    assert reason in message and "selectors" in message, message
    return message, took


@given(st.sampled_from(SHAPES), st.sampled_from(OTHER_DIGITS), st.integers(0, 2))
def test_a_digit_of_another_script_is_never_read_as_a_number(shape, digit, where):
    number = ["1", "2"]
    number.insert(where, digit)
    with pytest.raises(Refused, match="malformed selector"):
        keys.expand(shape.format("".join(number)))
    with pytest.raises(Refused, match="malformed selector"):
        keys.resolve(shape.format("".join(number)))
    assert ladder.level_of(f"dev:1:level{digit}") is None


def test_the_reported_non_ascii_selector_is_malformed_not_train_12(no_operator):
    message, _ = _refused("malformed selector", ["train:1\u0662"])
    assert "'train:1\u0662'" in message


@pytest.mark.parametrize(
    "selectors",
    [
        ["dev:0-1000000000"],
        ["eval:0-99999", "dev:0-1"],
        ["dev:0-60000", "dev:0-60000"],
        ["dev:0"] * (keys.MAX_WORLDS + 1),
        [f"dev:0-{keys.MAX_DEV_INDEX}"],
    ],
)
def test_a_range_past_the_bound_is_refused_before_it_is_expanded(no_operator, selectors):
    message, took = _refused("too many worlds", selectors)
    assert f"at most {keys.MAX_WORLDS:,} in one taskset" in message
    assert took < 0.5, took  # expanding 10**9 selectors took 28-33 s and then ran out of memory


def test_the_refusal_names_the_value_and_the_bound_in_microseconds(no_operator):
    start = time.perf_counter()
    with pytest.raises(Refused) as caught:
        keys.expand_all(["dev:0-1000000000"])
    took = time.perf_counter() - start
    assert caught.value.reason == "too many worlds", caught.value
    assert "1,000,000,001 worlds" in str(caught.value) and "'dev:0-1000000000'" in str(caught.value)
    assert took < 0.005, took


def test_exactly_the_bound_is_served_and_one_more_is_not():
    assert len(keys.expand_all([f"dev:0-{keys.MAX_WORLDS - 1}"])) == keys.MAX_WORLDS
    with pytest.raises(Refused, match="too many worlds"):
        keys.expand_all([f"dev:0-{keys.MAX_WORLDS - 1}", "bank_recon_001"])
    assert keys.expand_all(["eval:3-5", "bank_recon_001"]) == ["eval:3", "eval:4", "eval:5", "bank_recon_001"]


@pytest.mark.parametrize(
    ("selector", "reason"),
    [
        ("dev:" + "9" * 100_000, "index out of range"),
        ("eval:0-" + "9" * 100_000, "index out of range"),
        ("dev:3:level" + "9" * 100_000, "malformed selector"),
        ("train:" + "1" * 5000 + ":hard", "index out of range"),
        (f"dev:3:level{len(ladder.RUNGS) + 1}", "malformed selector"),
        (f"dev:{keys.MAX_DEV_INDEX + 1}", "index out of range"),
        ("dev:-1", "malformed selector"),
        ("dev: 1", "malformed selector"),
        ("dev:+1", "malformed selector"),
        ("dev:1_0", "malformed selector"),
        ("dev:01", "malformed selector"),
        ("eval:0-1-2", "malformed selector"),
        ("x" * 1_000_000, "malformed selector"),
    ],
)
def test_long_or_odd_numbers_are_refused_quickly_and_the_message_stays_short(no_operator, selector, reason):
    message, took = _refused(reason, [selector])
    assert took < 0.5 and len(message) < 2000, (took, len(message))


def test_resolve_reads_one_canonical_selector_only():
    assert keys.resolve("dev:3").world_id == "dev:3"
    for bad in ("dev:0-1", "dev:\u0663", "dev:3:level\u0661"):
        with pytest.raises(Refused, match="malformed selector"):
            keys.resolve(bad)


@pytest.mark.parametrize("bad", [True, False, 1.0, "1 ", " 2", "02", "+2", "true", "\u0662", "2.0"])
def test_a_level_is_an_integer_only(no_operator, bad):
    with pytest.raises(ValidationError, match="level must be an integer"):
        LedgerConfig(selectors=["dev:1"], level=bad)


def test_the_real_validate_command_refuses_a_huge_range_without_a_traceback(tmp_path):
    args = ["validate", "beancount-ledger", "-n", "1", "--taskset.selectors", '["dev:0-1000000000"]']
    start = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from piv_core.cli.commands import validate_main; validate_main(sys.argv[1:])",
            *args[1:],
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    took = time.perf_counter() - start
    out = done.stdout + done.stderr
    assert done.returncode != 0 and "Traceback" not in out and "MemoryError" not in out, out
    assert "too many worlds" in out and "1,000,000,001" in out, out
    assert took < 60, took
