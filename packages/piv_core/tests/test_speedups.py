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


def test_idempotent():
    assert hasattr(_fields.takes_validated_data_argument, "cache_info")
    assert cache_factory_signatures() is True


@pytest.mark.parametrize(
    "module",
    [
        "piv_core",
        "au_bas_reconciliation_v1",
        "us_sut_reconciliation_v1",
        "geo_reprojection_v1",
        "beancount_ledger",
    ],
)
def test_in_place_once_an_environment_is_imported(module):
    """An env server imports only the environment's module; the cache must be on from there."""
    import importlib.util
    import subprocess
    import sys

    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")
    check = (
        f"import {module}\n"
        "from pydantic._internal import _fields\n"
        "raise SystemExit(0 if hasattr(_fields.takes_validated_data_argument, 'cache_info') else 3)\n"
    )
    assert subprocess.run([sys.executable, "-c", check], timeout=120).returncode == 0
