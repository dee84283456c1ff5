"""Prompt-size bounds: the argument limit they rest on, the search for the largest knob, and `at_most`."""

from __future__ import annotations

import errno
import subprocess
import sys
from typing import Annotated

import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st
from piv_core.tasksets.knobs import at_least, at_most
from piv_core.tasksets.prompt_size import ARG_STRLEN_MAX, PROMPT_BUDGET, largest_fitting, prompt_bytes


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="MAX_ARG_STRLEN is Linux's")
def test_one_argument_holds_the_limit_less_its_nul_and_no_more():
    subprocess.run([sys.executable, "-c", "pass", "x" * (ARG_STRLEN_MAX - 1)], check=True)
    with pytest.raises(OSError) as refused:
        subprocess.run([sys.executable, "-c", "pass", "x" * ARG_STRLEN_MAX], check=True)
    assert refused.value.errno == errno.E2BIG


def test_the_budget_leaves_a_margin_under_the_limit():
    assert PROMPT_BUDGET + len("--system-prompt=") + 1 <= ARG_STRLEN_MAX - 8 * 1024


def test_prompt_bytes_counts_utf8_of_the_folded_prompt():
    assert prompt_bytes("sys", "prompt") == len("sys\n\nprompt")
    assert prompt_bytes(None, "é") == prompt_bytes("", "é") == 2


@given(
    fixed=st.integers(0, 500),
    per_item=st.integers(1, 50),
    steps=st.lists(st.integers(0, 40), max_size=5),
    budget=st.integers(0, 5_000),
    low=st.integers(0, 20),
)
def test_largest_fitting_is_the_largest_that_fits(fixed, per_item, steps, budget, low):
    def size(n: int) -> int:  # non-decreasing: a per-item cost plus jumps, like widening id columns
        return fixed + per_item * n + sum(step for i, step in enumerate(steps) if n >= 10 ** (i + 1))

    if size(low) > budget:
        with pytest.raises(ValueError):
            largest_fitting(size, low, budget)
        return
    best = largest_fitting(size, low, budget)
    assert best >= low and size(best) <= budget < size(best + 1)


class Knobs(pydantic.BaseModel):
    num_rows: Annotated[int, at_least(5), at_most(900, "a longer prompt would not fit")] = 30
    num_items: Annotated[int, at_most(3)] = 1


def test_at_most_names_the_knob_the_bound_and_why():
    assert Knobs(num_rows=900, num_items=3).num_rows == 900
    with pytest.raises(pydantic.ValidationError, match="num_rows must be <= 900, got 901: a longer prompt"):
        Knobs(num_rows=901)
    with pytest.raises(pydantic.ValidationError, match=r"num_items must be <= 3, got 4 \["):
        Knobs(num_items=4)
    with pytest.raises(pydantic.ValidationError, match="num_rows must be >= 5, got 4"):
        Knobs(num_rows=4)
