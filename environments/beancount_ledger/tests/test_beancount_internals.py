"""Without the parser hook the gate relies on, beancount-ledger refuses to start, with an error naming
the installed beancount, what is missing and the versions supported."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version

import pytest

BEANCOUNT = version("beancount")


def _import_gate(prelude: str) -> subprocess.CompletedProcess:
    code = prelude + "\nimport beancount_ledger.gate\n"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


RENAMED = "import beancount.parser._parser as p\ndel p.Parser\n"
BLIND = """
import io, re
import beancount.parser._parser as p
Real = p.Parser

class Parser:  # a parser that no longer reports includes through the builder
    def __init__(self, builder):
        self.real = Real(builder)
    def parse(self, file, **kwargs):
        text = re.sub(rb"(?m)^include .*$", b"", file.read())
        return self.real.parse(io.BytesIO(text), **kwargs)

p.Parser = Parser
"""


@pytest.mark.parametrize(
    ("prelude", "what"),
    [
        (RENAMED, "beancount.parser._parser.Parser is missing (AttributeError)"),
        (BLIND, "the parser's builder callbacks were"),
    ],
    ids=["parser-missing", "callback-not-called"],
)
def test_refuses_to_start_with_a_named_error(prelude, what):
    run = _import_gate(prelude)
    assert run.returncode != 0
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("beancount_ledger.beancount_internals.UnsupportedBeancount: ")
    assert f"beancount {BEANCOUNT}: " in last and what in last
    assert "Supported: beancount" in last and "<4" in last and ">=3.2.3" in last


def test_the_installed_beancount_passes_the_probe():
    from beancount_ledger import beancount_internals, gate

    beancount_internals.probe()
    assert gate.Parser is beancount_internals.Parser
