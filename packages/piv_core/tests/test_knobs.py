"""Knob validators: a bad value fails at load with a message naming the knob."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Annotated

import pytest
from hypothesis import given
from hypothesis import strategies as st
from piv_core.tasksets.knobs import argument, integer, number, some_of, whole, whole_range
from piv_core.tasksets.ladder import Level
from pydantic import BaseModel, ValidationError

OTHER_DIGITS = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isdigit() and not "0" <= chr(c) <= "9"]
"""Every character ``str.isdigit`` takes besides 0-9 (Arabic-Indic, Devanagari, superscripts, ...)."""


def test_a_list_knob_names_itself_and_keeps_the_options_order():
    class Config(BaseModel):
        codes: Annotated[list[str], some_of(("x", "y", "z"))] = ["x"]

    assert Config(codes=["z", "x"]).codes == ["x", "z"]
    for bad in ([], ["x", "x"], ["w"]):
        with pytest.raises(ValidationError, match="codes must be a non-empty list of distinct values"):
            Config(codes=bad)


def test_a_list_knob_can_keep_the_order_it_was_given():
    class Config(BaseModel):
        grids: Annotated[list[str], some_of(("a", "b", "c"), in_their_order=False)] = ["a"]

    assert Config(grids=["c", "a"]).grids == ["c", "a"]
    with pytest.raises(ValidationError, match="grids must be a non-empty list of distinct values among"):
        Config(grids=["c", "c"])


# ----------------------------------------------------------------------------- numbers from text


def _canonical(text: str) -> bool:
    return text != "" and all("0" <= c <= "9" for c in text) and (text == "0" or text[0] != "0")


@given(
    st.text(
        alphabet=st.sampled_from(["0", "1", "9", " ", "+", "-", "_", ".", *OTHER_DIGITS[:40]]), max_size=8
    )
)
def test_whole_reads_exactly_the_canonical_ascii_digits(text):
    if _canonical(text):
        assert whole(text, "n", 10**9) == int(text)
    else:
        with pytest.raises(ValueError, match="n: .* is not a whole number in ASCII digits"):
            whole(text, "n", 10**9)


def test_no_other_script_s_digit_is_a_digit():
    assert len(OTHER_DIGITS) > 100  # str.isdigit and int() take them all
    for digit in OTHER_DIGITS:
        for text in (digit, f"1{digit}", f"{digit}1"):
            with pytest.raises(ValueError, match="ASCII digits"):
                whole(text, "selectors", 10**6)


def test_a_bound_is_checked_on_the_text_before_anything_is_converted_or_expanded():
    with pytest.raises(ValueError, match="above the most, 99"):
        whole("100", "index", 99)
    start = time.perf_counter()
    with pytest.raises(ValueError, match="above the most"):
        whole("9" * 1_000_000, "index", 99)  # int() would refuse past 4,300 digits, after reading them
    with pytest.raises(ValueError, match="names 1,000,000,001 values; at most 100,000"):
        whole_range("0-1000000000", "selectors", 10**18, 100_000)
    assert time.perf_counter() - start < 0.05
    assert whole_range("3-5", "k", 9, 3) == range(3, 6) and whole_range("4", "k", 9, 1) == range(4, 5)
    for bad, why in [
        ("5-3", "ends before it starts"),
        ("3-", "not a whole number"),
        ("-3", "not a whole"),
        ("3-4-5", "not a whole"),
        ("1-٢", "ASCII digits"),
        ("0-10", "above the most, 9"),
    ]:
        with pytest.raises(ValueError, match=why):
            whole_range(bad, "k", 9, 100)


def test_a_count_argument_refuses_what_int_would_take():
    count = argument(least=1, most=1000)
    assert count("12") == 12
    for bad in ("0", "1001", " 12", "+12", "1_2", "١٢", "12.0", "-1", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            count(bad)
    parser = argparse.ArgumentParser(prog="p", exit_on_error=False)
    parser.add_argument("-n", type=count)
    with pytest.raises(argparse.ArgumentError, match="ASCII digits"):
        parser.parse_args(["-n", "１２"])  # fullwidth digits


class Knobs(BaseModel):
    seed: Annotated[int, integer()] = 7
    level: Level = None
    rate: Annotated[float, number()] = 0.5


@pytest.mark.parametrize(
    ("knob", "bad"),
    [("seed", v) for v in (True, False, 2.0, 2.5, " 2", "02", "+2", "2.0", "1_0", "١", "", "9" * 30, 2**63)]
    + [("level", v) for v in (True, 1.0, "1 ", " 2", "01", "true", "²", [1], {"1": 1})]
    + [("rate", v) for v in (True, "nan", "inf", float("nan"), -float("inf"), "1_0", " .5", "٠.٥", 10**400)],
)
def test_a_number_knob_refuses_what_lax_mode_would_coerce(knob, bad):
    with pytest.raises(ValidationError, match=knob):
        Knobs(**{knob: bad})


def test_a_number_knob_reads_the_command_line_s_text():
    assert Knobs(seed="-3", level="2", rate="0.25") == Knobs(seed=-3, level=2, rate=0.25)
    assert Knobs(level=None).level is None and Knobs(rate=1).rate == 1.0
    assert Knobs.model_validate_json(Knobs(seed=5, level=3).model_dump_json()) == Knobs(seed=5, level=3)
