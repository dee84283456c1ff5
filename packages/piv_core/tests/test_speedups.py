"""The pydantic factory-signature cache changes no answer, and is in place wherever a harness is."""

from __future__ import annotations

import time

import pytest
from piv_core.speedups import cache_factory_signatures
from pydantic import BaseModel, Field
from pydantic._internal import _fields


def _takes_data(data):
    return [data.get("a")]


@pytest.mark.parametrize("factory", [list, dict, time.time, lambda: 1, _takes_data, set])
def test_the_cached_check_answers_as_pydantic_does(factory):
    cache_factory_signatures()
    original = _fields.takes_validated_data_argument.__wrapped__
    assert _fields.takes_validated_data_argument(factory) == original(factory)


def test_models_built_with_defaults_are_unchanged():
    class Model(BaseModel):
        a: int = 1
        items: list[int] = Field(default_factory=list)
        echo: list[int] = Field(default_factory=_takes_data)
        stamp: float = Field(default_factory=time.time)

    cache_factory_signatures()
    built = Model.model_construct(a=5)
    assert built.items == [] and built.echo == [5] and built.stamp > 0
    assert Model().echo == [1]


def test_applied_by_the_compat_module_and_idempotent():
    import piv_core.compat  # noqa: F401

    assert hasattr(_fields.takes_validated_data_argument, "cache_info")
    assert cache_factory_signatures() is True
