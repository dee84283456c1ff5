"""The part of beancount that the gate uses although beancount does not export it, in one place,
checked when the package is imported.

The gate (`gate.py`) runs beancount's C parser, ``beancount.parser._parser.Parser``, with its own
grammar builder, so that every ``include``, ``plugin``, ``option`` and ``document`` directive is
seen through the builder's callbacks, from beancount's own parse, never from text patterns.
``parser.parse_string`` (the public entry) builds its own builder and gives no such hook.

There is no safe fallback: without those callbacks the gate could not refuse what it must. So
at import `Parser` is looked up, and a scripted ledger with one directive of each kind is parsed
through a recording builder: every callback must be called with the directive's line and name,
and the one transaction must come out as an entry. If anything differs, importing this module
(and so the gate, the tools and the scorer) raises `UnsupportedBeancount`, naming the installed
version, what failed and the beancount versions the package supports (its declared range, as
installed; both ends are tested).
"""

from __future__ import annotations

import io
import re
from importlib.metadata import PackageNotFoundError, requires, version
from typing import Any

from beancount.core import data
from beancount.parser import grammar

TESTED = "3.2.3 (the lowest) and the newest 3.x"
"""The beancount versions the package's tests run against: the ends of its declared range."""


class UnsupportedBeancount(ImportError):
    """The installed beancount lacks the parser hook the gate relies on."""


def _version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def supported() -> str:
    """The beancount range beancount-ledger declares (from its installed metadata)."""
    try:
        declared = requires("beancount-ledger") or []
    except PackageNotFoundError:
        declared = []
    for requirement in declared:
        match = re.match(r"\s*beancount\s*([<>=!~][^;]*)", requirement)
        if match:
            return f"beancount{match.group(1).strip()}"
    return "beancount>=3.2.3,<4"


def _unsupported(what: str) -> UnsupportedBeancount:
    return UnsupportedBeancount(
        f"beancount {_version('beancount')}: {what}; the beancount-ledger gate needs beancount's C parser "
        f"with grammar-builder callbacks and has no safe fallback. Supported: {supported()} "
        f"(tested: {TESTED})."
    )


try:
    from beancount.parser import _parser

    Parser: Any = _parser.Parser
    """beancount's C parser: ``Parser(builder).parse(file, filename=..., lineno=...)``."""
except (ImportError, AttributeError) as e:
    raise _unsupported(f"beancount.parser._parser.Parser is missing ({type(e).__name__})") from None


PROBE_LEDGER = """option "title" "Probe"
option "plugin_processing_mode" "raw"
include "other.beancount"
plugin "some.plugin" "config"
2020-01-01 open Assets:Cash USD
2020-01-01 open Equity:Opening USD
2020-01-02 document Assets:Cash "/tmp/statement.pdf"
2020-01-03 * "Opening"
  Assets:Cash      10.00 USD
  Equity:Opening  -10.00 USD
"""
PROBE_CALLS = [
    ("option", 1, "title"),
    ("option", 2, "plugin_processing_mode"),
    ("include", 3, "other.beancount"),
    ("plugin", 4, "some.plugin"),
    ("document", 7, "/tmp/statement.pdf"),
]


class _ProbeBuilder(grammar.Builder):
    """beancount's grammar builder, recording the callbacks the gate overrides, as it overrides them."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, int, str]] = []

    def include(self, filename, lineno, include_filename):
        self.calls.append(("include", lineno, str(include_filename)))
        return super().include(filename, lineno, include_filename)

    def plugin(self, filename, lineno, plugin_name, plugin_config):
        self.calls.append(("plugin", lineno, str(plugin_name)))
        return super().plugin(filename, lineno, plugin_name, plugin_config)

    def option(self, filename, lineno, key, value):
        self.calls.append(("option", lineno, str(key)))
        return super().option(filename, lineno, key, value)

    def document(self, filename, lineno, date, account, document_filename, tags_links, kvlist):
        self.calls.append(("document", lineno, str(document_filename)))
        return super().document(filename, lineno, date, account, document_filename, tags_links, kvlist)


def probe() -> None:
    """Parse `PROBE_LEDGER` as the gate parses a ledger; `UnsupportedBeancount` if it differs."""
    builder = _ProbeBuilder()
    try:
        Parser(builder).parse(io.BytesIO(PROBE_LEDGER.encode("utf-8")), filename="<string>", lineno=1)
        entries, _errors, _options = builder.finalize()
    except Exception as e:
        raise _unsupported(f"parsing through _parser.Parser failed ({type(e).__name__}: {e})") from None
    if builder.calls != PROBE_CALLS:
        raise _unsupported(f"the parser's builder callbacks were {builder.calls!r}, expected {PROBE_CALLS!r}")
    kinds = sorted(type(entry).__name__ for entry in entries)
    if kinds != ["Document", "Open", "Open", "Transaction"] or not any(
        isinstance(entry, data.Transaction) and len(entry.postings) == 2 for entry in entries
    ):
        raise _unsupported(f"the parser gave entries {kinds!r}")


probe()
