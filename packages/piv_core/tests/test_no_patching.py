"""Importing piv-core or an environment changes nothing in any third-party library.

Trainers import the environments into their own processes, beside their own models and
clients; an import that rebinds a dependency's function changes their behaviour too. Two
checks, each in a fresh interpreter: the case that once broke (a pydantic model whose
``default_factory`` is an unhashable callable, built with ``model_construct``) behaves the same
after the import as before it; and every function, class and method that the import's own
third-party modules define at top level is the very same object after the import as before.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

MODULES = [
    "piv_core",
    "piv_core.compat",
    "piv_core.runtime.chat_request",
    "au_bas_reconciliation_v1",
    "us_sut_reconciliation_v1",
    "geo_reprojection_v1",
    "beancount_ledger",
]
OURS = ("piv_core", "au_bas_reconciliation_v1", "us_sut_reconciliation_v1", "geo_reprojection_v1")
OURS += ("beancount_ledger",)


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)


def _installed(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")


UNHASHABLE_FACTORY = """
import dataclasses
from pydantic import BaseModel, Field

@dataclasses.dataclass
class Factory:  # eq=True without frozen=True: instances are unhashable
    value: int
    def __call__(self):
        return [self.value]

def build(value):
    class M(BaseModel):
        items: list[int] = Field(default_factory=Factory(value))
    return M.model_construct().items

before = build(1)
import {module}
after = build(2)
print(before, after)
"""


@pytest.mark.parametrize("module", MODULES)
def test_an_unhashable_default_factory_works_after_the_import(module):
    _installed(module)
    run = _python(UNHASHABLE_FACTORY.replace("{module}", module))
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["[1]", "[2]"]


THIRD_PARTY_IDENTITIES = """
import importlib, inspect, json, sys

OURS = {ours!r}

def third_party():
    return sorted(
        name for name, m in list(sys.modules.items())
        if m is not None and name.split(".")[0] not in OURS and getattr(m, "__file__", None)
        and "site-packages" in (m.__file__ or "")
    )

def identities(names):
    seen = {{}}
    for name in names:
        module = sys.modules.get(name)
        if module is None:
            continue
        for attr, value in list(vars(module).items()):
            if not (inspect.isfunction(value) or inspect.isclass(value) or inspect.isbuiltin(value)):
                continue
            seen[f"{{name}}.{{attr}}"] = value
            if inspect.isclass(value) and getattr(value, "__module__", None) == name:
                for member, inner in list(vars(value).items()):
                    # behaviour only: methods and descriptors, not a class's __doc__ or __module__ text
                    if callable(inner) or isinstance(inner, (classmethod, staticmethod, property)):
                        seen[f"{{name}}.{{attr}}.{{member}}"] = inner
    return seen

if sys.argv[1:] == ["list"]:
    importlib.import_module({module!r})
    print(json.dumps(third_party()))
else:
    names = json.loads(sys.stdin.read())
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:
            pass
    before = identities(names)
    importlib.import_module({module!r})
    after = identities(names)
    # The objects themselves, held from before to after: an id() alone could be reused by a new object.
    print(json.dumps(sorted(k for k in before if after.get(k) is not before[k])))
"""


@pytest.mark.parametrize("module", MODULES[1:])
def test_the_import_rebinds_no_third_party_function(module):
    """Every third-party module the import loads is loaded first; then the import itself must
    leave each of their top-level functions, classes and class members as they were."""
    _installed(module)
    script = THIRD_PARTY_IDENTITIES.format(ours=OURS, module=module)
    listed = subprocess.run(
        [sys.executable, "-c", script, "list"], capture_output=True, text=True, timeout=180
    )
    assert listed.returncode == 0, listed.stderr[-2000:]
    names = json.loads(listed.stdout)
    assert "pydantic._internal._fields" in names
    checked = subprocess.run(
        [sys.executable, "-c", script], input=json.dumps(names), capture_output=True, text=True, timeout=180
    )
    assert checked.returncode == 0, checked.stderr[-2000:]
    assert json.loads(checked.stdout) == []
