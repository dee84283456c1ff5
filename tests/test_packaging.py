"""Packaged like libraries: compatible ranges in the metadata, exact versions only in uv.lock,
and command names no trainer's or verifiers' own command can clash with.

What a built wheel does once installed alone is `test_wheels.py`; this reads the metadata.
"""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
INSTALLABLE = sorted(
    p.parent for p in (*ROOT.glob("packages/*/pyproject.toml"), *ROOT.glob("environments/*/pyproject.toml"))
)
TEXT = ("piv_core", "au_bas_reconciliation_v1", "us_sut_reconciliation_v1", "geo_reprojection_v1")
PRIME_RL_VERIFIERS = "0.3.1.dev62"
"""The verifiers prime-rl main pins (its deps/verifiers submodule, v0.3.0-62-ga60a606ec)."""
SHORT_NAMES = ("eval", "validate", "summarize")


def _project(path: Path) -> dict:
    return tomllib.loads((path / "pyproject.toml").read_text())["project"]


def _requirements(path: Path) -> dict[str, Requirement]:
    return {(r := Requirement(text)).name: r for text in _project(path)["dependencies"]}


@pytest.mark.parametrize("path", INSTALLABLE, ids=lambda p: p.name)
def test_dependencies_are_ranges_with_a_floor_never_pins(path):
    for requirement in _requirements(path).values():
        operators = {spec.operator for spec in requirement.specifier}
        assert not operators & {"==", "==="}, f"{path.name}: {requirement} pins exactly"
        assert ">=" in operators, f"{path.name}: {requirement} has no lowest version"


@pytest.mark.parametrize("path", [p for p in INSTALLABLE if p.name in TEXT], ids=lambda p: p.name)
def test_the_text_environments_admit_the_verifiers_prime_rl_users_have(path):
    verifiers = _requirements(path)["verifiers"].specifier
    for version in (PRIME_RL_VERIFIERS, "0.3.1", "0.4.0"):
        assert verifiers.contains(Version(version), prereleases=True), (path.name, version)


def test_beancount_ledger_supports_verifiers_0_4_only():
    verifiers = _requirements(ROOT / "environments" / "beancount_ledger")["verifiers"].specifier
    assert verifiers.contains("0.4.0") and not verifiers.contains("0.3.1")


@pytest.mark.parametrize("path", INSTALLABLE, ids=lambda p: p.name)
def test_installable_packages_ship_prefixed_commands_only(path):
    project = _project(path)
    prefix = "piv-" if project["name"] == "piv-core" else f"{project['name']}-"
    for command in project.get("scripts", {}):
        assert command.startswith(prefix), f"{project['name']} installs {command!r}"


def test_the_short_names_live_only_in_the_unpublished_root_project():
    root = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "Private :: Do Not Upload" in root["classifiers"]
    core = _project(ROOT / "packages" / "piv_core")["scripts"]
    assert {name: root["scripts"][name] for name in SHORT_NAMES} == {
        name: core[f"piv-{name}"] for name in SHORT_NAMES
    }
    owners = {
        dist.metadata["Name"]
        for dist in importlib.metadata.distributions()
        for ep in dist.entry_points
        if ep.group == "console_scripts" and ep.name in SHORT_NAMES
    }
    assert owners == {"piv-suite"}, owners
