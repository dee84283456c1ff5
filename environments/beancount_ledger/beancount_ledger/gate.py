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
4. Metadata keys that beancount sets itself or that its stages read are refused wherever they are
   written (on a directive, on a posting, in a ``pushmeta``): ``filename`` and ``lineno``, which the
   parser sets on every entry and posting and which sorting, error locations and the printer read,
   and any key starting with ``_`` (booking and interpolation write and read ``__automatic__``,
   ``__residual__`` and ``__tolerances__``). A ledger can therefore never pass one of its entries off
   as another line's, or as something a stage made.
5. Before anything is booked, the cost of booking and checking is bounded from the parse
   (`check_cost` at most `MAX_CHECK_COST`); amounts other than AUD, prices and costs (which make
   inventories, and so every check, grow with the ledger) fail the policy's load rule here, unbooked.
6. What remains is booked and validated by beancount's own stages, called directly: booking,
   then the two transformations beancount's loader always applies after plugins (`ops.pad`,
   `ops.balance`), then `ops.validation`. The loader's include, plugin and document stages are
   never entered, so there is no path from the text to a file or a module. The entries a stage
   adds (``pad``'s padding transactions) are told apart by identity, the entry objects present
   after the stage that were not before it, and carried as `Loaded.synthesized`; nothing a ledger
   writes can make its own entry pass for one of them.

For text the gate admits, the entries and errors are exactly those of `loader.load_string`
(the tests check this on every ledger of the exploit corpus). On top of beancount's errors the
gate applies the policy's load rule: every amount in AUD with no price or cost, and every
transaction's units netting to exactly zero.
"""

from __future__ import annotations

import io
import textwrap
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from beancount.core import data
from beancount.ops import balance, pad, validation
from beancount.parser import booking, grammar, options, printer

from beancount_ledger.beancount_internals import Parser
from beancount_ledger.limits import LEDGER_ENVELOPE, MAX_CHECK_COST
from beancount_ledger.render import ALLOWED_OPTIONS, CURRENCY

MAX_ERRORS = 20
"""Errors kept per load; the rest are counted, not rendered."""
_BOOKKEEPING = frozenset({"filename", "dcontext", *ALLOWED_OPTIONS})
"""Options the parse sets by itself, plus the two a ledger may set."""
RESERVED_META = frozenset({"filename", "lineno"})
"""Metadata keys the parser sets on every entry and posting (and sorting, error locations and the
printer read); with every key starting with `RESERVED_PREFIX`, no ledger may write them."""
RESERVED_PREFIX = "_"
"""beancount's own metadata (``__automatic__``, ``__residual__``, ``__tolerances__``) starts so."""
_SOURCE = "<string>"


@dataclass(frozen=True)
class Loaded:
    """The outcome of one gated load."""

    entries: list[Any] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    """beancount's errors, rendered; else the policy's load-rule problems; empty when it loads."""
    error_count: int = 0
    refused: str | None = None
    """Why the text was never booked (an include, a plugin, a document, an option, a reserved
    metadata key, a ledger over the complexity bound, bad text)."""
    synthesized: tuple[Any, ...] = ()
    """The entries of `entries` that beancount's stages added (padding), found by identity."""

    @property
    def ok(self) -> bool:
        return self.refused is None and not self.errors

    @property
    def written(self) -> list[Any]:
        """`entries` less those a stage synthesized: what the ledger itself wrote, as booked."""
        made = {id(e) for e in self.synthesized}
        return [e for e in self.entries if id(e) not in made]


class _Recorder(grammar.Builder):
    """beancount's grammar builder, noting every directive that names a file, a module or an option,
    and every reserved metadata key written (`reserved`), with its line."""

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

    def key_value(self, filename, lineno, key, value):
        if reserved(key):
            self.directives.append(("metadata", lineno, str(key)))
        return super().key_value(filename, lineno, key, value)


def reserved(key: object) -> bool:
    """Whether `key` is a metadata key no ledger may write (`RESERVED_META`, `RESERVED_PREFIX`)."""
    return not isinstance(key, str) or key in RESERVED_META or key.startswith(RESERVED_PREFIX)


def forged_meta(entries: list[Any]) -> str | None:
    """Why the parse's own metadata is not the parser's (a second check beside `_Recorder.key_value`):
    on every entry and posting, ``filename``/``lineno`` exactly as the parser sets them, no other
    reserved key."""
    for entry in entries:
        metas = [entry.meta, *(p.meta for p in getattr(entry, "postings", None) or ())]
        line = entry.meta.get("lineno") if isinstance(entry.meta, dict) else None
        for meta in metas:
            if meta is None:
                continue
            parsers = isinstance(meta, dict) and meta.get("filename") == _SOURCE
            if not parsers or type(meta.get("lineno")) is not int:
                return f"metadata key `lineno` or `filename` is reserved by beancount (near line {line})"
            if key := next((k for k in meta if k not in RESERVED_META and reserved(k)), None):
                return f"metadata key {str(key)[:80]!r} is reserved by beancount (line {meta['lineno']})"
    return None


COST_WEIGHTS = {"entries": 2, "postings": 7, "accounts": 2, "assertions": 4, "beneath": 1}
"""Units per entry, per posting, per account named, per ``balance`` assertion and per account summed by
an assertion or scanned by a ``pad``, as measured on beancount 3.2 (one unit: one account's balance
summed, ~3.5 us; an entry ~7 us, a posting ~25 us, an account ~8 us, an assertion ~14 us); matching
accounts against the asserted and padded ones costs one unit per `MATCHES_PER_UNIT` pairs."""
MATCHES_PER_UNIT = 8


class _Tree:
    """The account tree of some accounts: per node, the nodes of its subtree (itself included) and
    the postings to it and beneath it. Built in time linear in the names' length however deep they
    are, from flat lists (no object per node)."""

    def __init__(self, accounts: dict[str, int]) -> None:
        self._index: dict[tuple[int, str], int] = {}
        parents, postings = [0], [0]
        for account, n in accounts.items():
            node = 0
            for part in account.split(":"):
                if (child := self._index.get((node, part))) is None:
                    child = self._index[(node, part)] = len(parents)
                    parents.append(node)
                    postings.append(0)
                node = child
            postings[node] += n
        self.size, self.under = [1] * len(parents), postings
        for child in range(len(parents) - 1, 0, -1):  # every child is numbered after its parent
            self.size[parents[child]] += self.size[child]
            self.under[parents[child]] += self.under[child]

    def node(self, account: str) -> int:
        node = 0
        for part in account.split(":"):
            node = self._index[(node, part)]
        return node


def check_cost(entries: list[Any]) -> tuple[int, dict[str, int]]:
    """What booking and checking parsed `entries` costs, in units, with its terms: the work of booking
    grows with entries and postings, and beancount's two quadratic stages add their own (with one
    position per account, which the load rule's single currency without cost ensures):

    - ``balance.check`` matches every account against each asserted account, then, per assertion,
      sums every node of the account tree beneath its account (itself included);
    - ``pad.pad`` matches every account against each padded account, then scans every posting
      beneath it.
    """
    postings: dict[str, int] = defaultdict(int)
    for entry in entries:
        for p in getattr(entry, "postings", None) or ():
            postings[p.account] += 1
        for name in ("account", "source_account"):
            if isinstance(value := getattr(entry, name, None), str):
                postings[value] += 0
    tree = _Tree(postings)
    asserted = [e.account for e in entries if isinstance(e, data.Balance)]
    padded = {e.account for e in entries if isinstance(e, data.Pad)}
    terms = {
        "entries": len(entries),
        "postings": sum(postings.values()),
        "accounts": len(postings),
        "assertions": len(asserted),
        "beneath": sum(tree.size[tree.node(a)] for a in asserted)
        + sum(tree.under[tree.node(a)] for a in padded),
    }
    matches = len(postings) * (len(set(asserted)) + len(padded))
    return sum(COST_WEIGHTS[k] * v for k, v in terms.items()) + matches // MATCHES_PER_UNIT, terms


def bound(entries: list[Any]) -> str | None:
    """Why booking and checking `entries` would cost more than the gate allows; else None."""
    cost, terms = check_cost(entries)
    if cost <= MAX_CHECK_COST:
        return None
    return (
        f"the ledger would cost {cost:,} units to check, over the bound of {MAX_CHECK_COST:,} "
        f"({terms['entries']:,} entries, {terms['postings']:,} postings, {terms['accounts']:,} accounts, "
        f"{terms['assertions']:,} "
        f"balance assertions summing {terms['beneath']:,} accounts beneath them and the pads; "
        "an assertion on a parent account sums every account beneath it)"
    )


def parse(text: str) -> tuple[list[Any], list[Any], dict[str, Any], list[tuple[str, int, str]]]:
    """`parser.parse_string(text)` with the directives the grammar recognised:
    (entries, errors, options map, [(kind, line, name)])."""
    builder = _Recorder()
    Parser(builder).parse(io.BytesIO(text.encode("utf-8")), filename="<string>", lineno=1)
    try:
        entries, errors, options_map = builder.finalize()
    except Exception:
        # A forged ``lineno`` can break the builder's own sort: what it recorded still refuses.
        if builder.directives:
            return [], [], {}, builder.directives
        raise
    return entries, errors, options_map, builder.directives


def refusal(entries: list[Any], options_map: dict[str, Any], directives=()) -> str | None:
    """Why a parse result must go no further, from what the parser recorded; else None."""
    for kind, line, name in directives:
        if kind == "metadata":
            return f"metadata key {name[:80]!r} is reserved by beancount (line {line})"
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


def foreign(entries: list[Any]) -> list[str]:
    """The policy's load rule on the parse, before booking: every amount written in AUD, no price or
    cost (an amount left for booking to infer is inferred from these, so it is AUD too)."""
    out = []
    for e in entries:
        if not isinstance(e, data.Transaction):
            continue
        for p in e.postings:
            currency = getattr(p.units, "currency", None)
            if isinstance(currency, str) and currency != CURRENCY:
                out.append(f"{e.date} {e.narration!r}: {p.account} is in {currency}, not {CURRENCY}")
            if p.price is not None or p.cost is not None:
                out.append(f"{e.date} {e.narration!r}: {p.account} carries a price or cost")
    return out


def policy_problems(entries: list[Any]) -> list[str]:
    """The policy's load rule on the booked entries: amounts in AUD, no prices or costs, units netting
    to exactly zero."""
    out = foreign(entries)
    for e in entries:
        if not isinstance(e, data.Transaction):
            continue
        units: dict[str, Decimal] = defaultdict(Decimal)
        for p in e.postings:
            units[p.units.currency] += p.units.number
        if residual := {c: v for c, v in units.items() if v != 0}:
            out.append(f"{e.date} {e.narration!r}: units do not balance, residual {residual}")
    return out


def _formatter() -> Any:
    """`printer.format_error`, rendering each entry once however many errors name it (the errors a
    large transaction raises would otherwise each render all of its postings again)."""
    rendered: dict[int, str] = {}

    def entry(e: Any) -> str:
        if id(e) not in rendered:
            rendered[id(e)] = printer.format_entry(e)
        return rendered[id(e)]

    def format_error(error: Any) -> str:
        text = f"{printer.render_source(error.source)} {error.message}\n"
        if error.entry is not None:
            entries = error.entry if isinstance(error.entry, list) else [error.entry]
            text += "\n" + textwrap.indent("\n".join(entry(e) for e in entries), "   ") + "\n"
        return text.strip()

    return format_error


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
    if why := refusal(entries, options_map, directives) or forged_meta(entries) or bound(entries):
        return Loaded(refused=why)
    if problems := foreign(entries):
        return Loaded(errors=problems[:MAX_ERRORS], error_count=len(problems))
    # The loader's stages after parsing, less its include, plugin and document stages.
    entries.sort(key=data.entry_sortkey)
    entries, booking_errors = booking.book(entries, options_map)
    errors = [*errors, *booking_errors]
    booked = {id(e) for e in entries}
    for transform in (pad.pad, balance.check):
        entries, more = transform(entries, options_map)
        errors.extend(more)
        entries.sort(key=data.entry_sortkey)
    errors.extend(validation.validate(entries, options_map))
    # What the stages after booking added, by identity (`balance.check` replaces a failing
    # assertion by a copy, which is an error anyway; `pad.pad` adds its padding transactions).
    synthesized = tuple(e for e in entries if id(e) not in booked)
    if errors:
        errors, count = list(map(_formatter(), errors[:MAX_ERRORS])), len(errors)
    else:
        problems = policy_problems(entries)
        errors, count = problems[:MAX_ERRORS], len(problems)
    return Loaded(entries, errors, count, synthesized=synthesized)
