"""Knob validators: a bad value fails at load with a message naming the knob."""

from __future__ import annotations

from typing import Annotated

import pytest
from piv_core.knobs import some_of
from pydantic import BaseModel, ValidationError


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
