"""Fixtures shared by the core's tests."""

from typing import Any

import pytest
from piv_core.parsing import bounded_decode


@pytest.fixture
def decoders_forbidden(monkeypatch):
    """json.loads and tomllib.loads fail the test if called: a refusal must come before them."""

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the decoder ran on text the pre-scan should have refused")

    monkeypatch.setattr(bounded_decode.json, "loads", forbidden)
    monkeypatch.setattr(bounded_decode.tomllib, "loads", forbidden)
