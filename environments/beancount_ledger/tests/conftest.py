"""Shared fixtures. This file also marks the source tree: `release.source_checkout()` honours the
development override only where the package sits next to it."""

import pytest
from beancount_ledger import keys, release

TEST_SECRET = "beancount-ledger test secret, not for release"


@pytest.fixture
def dev_worlds(monkeypatch, tmp_path):
    """Keyed and dev worlds without a manifest: a test secret plus the development override."""
    monkeypatch.setenv(keys.SECRET_ENV, TEST_SECRET)
    monkeypatch.setenv(release.OVERRIDE_ENV, "1")
    monkeypatch.setenv("HOME", str(tmp_path))
    return TEST_SECRET


@pytest.fixture
def no_operator(monkeypatch, tmp_path):
    """No secret, no manifest, no override: a user's machine before the operator setup."""
    monkeypatch.delenv(keys.SECRET_ENV, raising=False)
    monkeypatch.delenv(release.OVERRIDE_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path
