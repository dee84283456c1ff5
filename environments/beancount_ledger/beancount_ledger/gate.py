"""The one door every model-written ledger passes: refuse by beancount's own parse, then load.

`load(text)` is what the tools and the scorer both call. It never raises and never lets the
text reach the file system or the import system, by construction rather than by pattern:

1. The text must be a string of valid UTF-8 within the ledger envelope.
2. beancount's parser (its C lexer and grammar, exactly as `parser.parse_string` runs them)
   reads it. The parser executes nothing and reads nothing: for an ``include``, a ``plugin``,
   an ``option`` or a ``document`` it calls the grammar builder, which only records it. Our
   builder (`_Recorder`) notes every such call with its line.
3. What the grammar recognised is refused: any ``include``, ``plugin`` or ``document``
   directive and any ``option`` other than ``title`` and ``operating_currency``, however it is
   spelt, whatever junk precedes it on the line, whatever the parser recovered from. As a
   second check from the same parse, the options map must hold no include, no plugin and no
   option changed from beancount's default but those two.
4. What remains is booked and validated by beancount's own stages, called directly: booking,
   then the two transformations beancount's loader always applies after plugins (`ops.pad`,
   `ops.balance`), then `ops.validation`. The loader's include, plugin and document stages are
   never entered, so there is no path from the text to a file or a module.

For text the gate admits, the entries and errors are exactly those of `loader.load_string`
(the tests check this on every ledger of the exploit corpus). On top of beancount's errors the
gate applies the policy's load rule: every amount in AUD with no price or cost, and every
transaction's units netting to exactly zero.
"""

from __future__ import annotations

import io
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from beancount.core import data
from beancount.ops import balance, pad, validation
from beancount.parser import _parser, booking, grammar, options, printer

from beancount_ledger.limits import LEDGER_ENVELOPE
from beancount_ledger.render import ALLOWED_OPTIONS, CURRENCY

MAX_ERRORS = 20
"""Errors kept per load; the rest are counted, not rendered."""
_BOOKKEEPING = frozenset({"filename", "dcontext", *ALLOWED_OPTIONS})
"""Options the parse sets by itself, plus the two a ledger may set."""


@dataclass(frozen=True)
class Loaded:
    """The outcome of one gated load."""

    entries: list[Any] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    """beancount's errors, rendered; else the policy's load-rule problems; empty when it loads."""
    error_count: int = 0
    refused: str | None = None
    """Why the text was never booked (an include, a plugin, a document, an option, bad text)."""

    @property
    def ok(self) -> bool:
        return self.refused is None and not self.errors


class _Recorder(grammar.Builder):
    """beancount's grammar builder, noting every directive that names a file, a module or an option."""

    def __init__(self) -> None:
        super().__init__()
        self.directives: list[tuple[str, int, str]] = []

    def include(self, filename, lineno, include_filename):
        self.directives.append(("include", lineno, str(include_filename)))
        return super().include(filename, lineno, include_filename)

    def plugin(self, filename, lineno, plugin_name, plugin_config):
        self.directives.append(("plugin", lineno, str(plugin_name)))
        return super().plugin(filename, lineno, plugin_name, plugin_config)

    def option(self, filename, lineno, key, value):
        if key not in ALLOWED_OPTIONS:
            self.directives.append(("option", lineno, str(key)))
        return super().option(filename, lineno, key, value)

    def document(self, filename, lineno, date, account, document_filename, tags_links, kvlist):
        self.directives.append(("document", lineno, str(document_filename)))
        return super().document(filename, lineno, date, account, document_filename, tags_links, kvlist)


def parse(text: str) -> tuple[list[Any], list[Any], dict[str, Any], list[tuple[str, int, str]]]:
    """`parser.parse_string(text)` with the directives the grammar recognised:
    (entries, errors, options map, [(kind, line, name)])."""
    builder = _Recorder()
    _parser.Parser(builder).parse(io.BytesIO(text.encode("utf-8")), filename="<string>", lineno=1)
    entries, errors, options_map = builder.finalize()
    return entries, errors, options_map, builder.directives


def refusal(entries: list[Any], options_map: dict[str, Any], directives=()) -> str | None:
    """Why a parse result must go no further, from what the parser recorded; else None."""
    for kind, line, name in directives:
        if kind == "option":
            allowed = ", ".join(f'"{o}"' for o in ALLOWED_OPTIONS)
            return f"only options {allowed} are allowed (line {line}: option {name[:80]!r})"
        return f"`{kind}` directives are not allowed (line {line}: {name[:80]!r})"
    if options_map.get("include"):
        return f"`include` directives are not allowed (found {options_map['include'][0]!r})"
    if options_map.get("plugin"):
        return f"`plugin` directives are not allowed (found {options_map['plugin'][0][0]!r})"
    for entry in entries:
        if isinstance(entry, data.Document):
            return f"`document` directives are not allowed (line {entry.meta.get('lineno')})"
    changed = sorted(
        name
        for name, default in options.OPTIONS_DEFAULTS.items()
        if name not in _BOOKKEEPING and options_map.get(name) != default
    )
    if changed:
        allowed = ", ".join(f'"{o}"' for o in ALLOWED_OPTIONS)
        return f"only options {allowed} are allowed (found option {changed[0]!r})"
    return None


def policy_problems(entries: list[Any]) -> list[str]:
    """The policy's load rule: amounts in AUD, no prices or costs, units netting to zero."""
    out = []
    for e in entries:
        if not isinstance(e, data.Transaction):
            continue
        units: dict[str, Decimal] = defaultdict(Decimal)
        for p in e.postings:
            if p.units.currency != CURRENCY:
                out.append(f"{e.date} {e.narration!r}: {p.account} is in {p.units.currency}, not {CURRENCY}")
            if p.price is not None or p.cost is not None:
                out.append(f"{e.date} {e.narration!r}: {p.account} carries a price or cost")
            units[p.units.currency] += p.units.number
        if residual := {c: v for c, v in units.items() if v != 0}:
            out.append(f"{e.date} {e.narration!r}: units do not balance, residual {residual}")
    return out


def _format(error: Any) -> str:
    return printer.format_error(error).strip()


def load(text: object) -> Loaded:
    """Gate and load `text`. Never raises on any input."""
    if not isinstance(text, str):
        return Loaded(refused="the ledger must be text")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as e:
        return Loaded(refused=f"the ledger is not valid Unicode text ({e.reason} at character {e.start})")
    if size > LEDGER_ENVELOPE:
        return Loaded(refused=f"the ledger is {size:,} bytes, over the {LEDGER_ENVELOPE:,}-byte envelope")
    try:
        return _gated_load(text)
    except Exception as e:  # beancount itself failed on this text: it does not load
        return Loaded(errors=[f"beancount could not process this ledger ({type(e).__name__})"], error_count=1)


def _gated_load(text: str) -> Loaded:
    entries, errors, options_map, directives = parse(text)
    if why := refusal(entries, options_map, directives):
        return Loaded(refused=why)
    # The loader's stages after parsing, less its include, plugin and document stages.
    entries.sort(key=data.entry_sortkey)
    entries, booking_errors = booking.book(entries, options_map)
    errors = [*errors, *booking_errors]
    for transform in (pad.pad, balance.check):
        entries, more = transform(entries, options_map)
        errors.extend(more)
        entries.sort(key=data.entry_sortkey)
    errors.extend(validation.validate(entries, options_map))
    if errors:
        return Loaded(entries, [_format(e) for e in errors[:MAX_ERRORS]], len(errors))
    problems = policy_problems(entries)
    return Loaded(entries, problems[:MAX_ERRORS], len(problems))
