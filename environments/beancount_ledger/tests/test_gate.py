"""The gate against a generated attack matrix and grammar-built ledgers.

Every directive of beancount's grammar that can reach the file system or the import system
(``include``, ``plugin``, ``document``, and ``option`` with every option name beancount knows),
after every kind of prefix and before every kind of suffix, at the start, in the middle and at
the end of a ledger. The targets are probes this test owns (a ledger file, a directory, a glob,
an importable module), so beancount's own loader, run as the oracle, shows which spellings it
would obey. Properties, checked by mechanism rather than by message:

- while the gate loads (and the scorer scores) any of these texts, the audit hook sees no file
  opened, no directory listed, no glob, no process started, and no module is added to
  `sys.modules`;
- every text the real loader would obey (it opened the probe, imported the probe module, kept a
  document, or took an option) is refused by the gate;
- for text the gate admits, its entries and errors are beancount's loader's own.
"""

from __future__ import annotations

import sys
import uuid
from contextlib import contextmanager

import pytest
from beancount import loader
from beancount.core import data
from beancount.parser import options
from beancount_ledger import gate, render, world
from beancount_ledger.answer import golden_ledger, key_of, project
from beancount_ledger.scorer import score
from beancount_ledger.taskset import make_task_data
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

WATCHED = (
    "open",
    "import",
    "glob.glob",
    "os.listdir",
    "os.scandir",
    "os.chdir",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "subprocess.Popen",
    "ctypes.dlopen",
    "socket.connect",
)
_events: list[tuple[str, object]] | None = None


def _hook(event: str, args: tuple) -> None:
    if _events is not None and event in WATCHED:
        _events.append((event, args[0] if args else None))


sys.addaudithook(_hook)


@contextmanager
def watched():
    """The audit events and new modules seen inside the block."""
    global _events
    seen: list[tuple[str, object]] = []
    before = set(sys.modules)
    _events = seen
    try:
        yield seen
    finally:
        _events = None
        seen.extend(("new module", name) for name in set(sys.modules) - before)


BASE = """option "title" "Probe Ltd"
option "operating_currency" "AUD"

2024-03-01 open Assets:Bank:Operating AUD
2024-03-01 open Income:Sales AUD

2024-03-02 * "Customer" "Receipt"
  Assets:Bank:Operating   10.00 AUD
  Income:Sales           -10.00 AUD
"""

PREFIXES = [
    "",
    " ",
    "\t",
    "  ",
    "\r",
    "\f",
    "\v",
    "\ufeff",
    "\x00",
    "\u00a0",
    "\u2028",
    "X ",
    "junk junk ",
    "é ",
    "\\",
    "123 ",
    "2024-03-01 ",
    '"quoted" ',
    '"unterminated ',
    "* ",
    "! ",
    "@ ",
    "{ ",
    "} ",
    "| ",
    "#tag ",
    "^link ",
    "Assets:Bank:Operating ",
    'option "title" "T" ',
    "2024-03-01 open Assets:Other AUD ",
    "2024-03-01 * ",
    "pushtag #x ",
]
SUFFIXES = ["\n", "", " ; trailing comment\n", " junk\n", "\r\n"]
POSITIONS = ["end", "start", "middle"]


@pytest.fixture(scope="module")
def probes(tmp_path_factory):
    """A ledger file, a directory of ledgers and an importable module, all harmless."""
    root = tmp_path_factory.mktemp("probes")
    ledger = root / "probe.beancount"
    ledger.write_text('2024-03-05 note Assets:Bank:Operating "probe included"\n')
    module = f"piv_gate_probe_{uuid.uuid4().hex[:8]}"
    (root / f"{module}.py").write_text("__plugins__ = ()\n")
    sys.path.insert(0, str(root))
    yield {"ledger": str(ledger), "dir": str(root), "glob": f"{root}/*.beancount", "module": module}
    sys.path.remove(str(root))


def directives(probes: dict[str, str]) -> list[tuple[str, str]]:
    """(kind, directive text) for every way the grammar can name a file, a module or an option."""
    out = [
        ("include", f'include "{probes["ledger"]}"'),
        ("include", f'include "{probes["glob"]}"'),
        ("include", f'include "{probes["dir"]}"'),
        ("plugin", f'plugin "{probes["module"]}"'),
        ("plugin", f'plugin "{probes["module"]}" "some config"'),
        ("document", f'2024-03-10 document Assets:Bank:Operating "{probes["ledger"]}"'),
        ("option", f'option "include" "{probes["ledger"]}"'),
        ("option", f'option "plugin" "{probes["module"]}"'),
    ]
    for name, desc in options.OPTIONS.items():
        if name in render.ALLOWED_OPTIONS or name in ("include", "plugin"):
            continue
        value = desc.example_value if isinstance(desc.example_value, str) else "TRUE"
        value = probes["dir"] if name == "documents" else value
        out.append(("option", f'option "{name}" "{value}"'))
    return out


def place(directive: str, prefix: str, suffix: str, position: str, base: str = BASE) -> str:
    line = prefix + directive + suffix
    if position == "start":
        return line + ("\n" if not line.endswith("\n") else "") + base
    if position == "middle":
        head, tail = base.split("\n\n", 1)
        return f"{head}\n{line}\n\n{tail}"
    return base + line


def obeyed(text: str, kind: str, probes: dict[str, str]) -> bool:
    """Whether beancount's real loader acts on the directive in `text` (targets are probes)."""
    sys.modules.pop(probes["module"], None)
    try:
        entries, _, options_map = loader.load_string(text)
    except Exception:  # it tried to read the directory probe as a ledger
        return True
    if probes["module"] in sys.modules:
        sys.modules.pop(probes["module"])
        return True
    if kind == "document":
        return any(isinstance(e, data.Document) for e in entries)
    if kind == "include":
        return any(isinstance(e, data.Note) and e.comment == "probe included" for e in entries) or bool(
            options_map["include"]
        )
    defaults = options.OPTIONS_DEFAULTS
    changed = [
        k
        for k in defaults
        if k not in ("filename", "dcontext", "include", "input_hash", *render.ALLOWED_OPTIONS)
    ]
    return bool(options_map["include"] or options_map["plugin"]) or any(
        options_map.get(k) != defaults[k] for k in changed
    )


def test_the_attack_matrix_is_refused_and_touches_nothing(probes):
    gate.load(BASE)  # warm: every module the gate needs is imported before watching
    cases = obeyed_count = 0
    bypasses, touched = [], []
    for kind, directive in directives(probes):
        for prefix in PREFIXES:
            for suffix in SUFFIXES:
                for position in POSITIONS:
                    text = place(directive, prefix, suffix, position)
                    cases += 1
                    with watched() as seen:
                        result = gate.load(text)
                    if seen:
                        touched.append((text, seen[:3]))
                    if kind == "option" and position != "end":
                        continue  # options are checked against the oracle at the end only (cost)
                    if obeyed(text, kind, probes):
                        obeyed_count += 1
                        if result.refused is None:
                            bypasses.append(text)
    print(f"attack matrix: {cases} texts, beancount's loader obeys {obeyed_count}, bypasses {len(bypasses)}")
    assert not touched, touched[:3]
    assert not bypasses, bypasses[:5]
    assert cases > 10_000 and obeyed_count > 2_000


def test_every_directive_kind_is_refused_by_name(probes):
    for kind, directive in directives(probes):
        result = gate.load(BASE + directive + "\n")
        assert result.refused and not result.ok, directive
        assert (kind if kind != "option" else "option") in result.refused


def test_scoring_the_matrix_on_a_real_ledger_touches_nothing(probes):
    data_ = make_task_data("bank_recon_001")
    key, golden = key_of(data_), golden_ledger(data_)
    assert score(golden, key).reward == 1.0  # warm
    for kind, directive in directives(probes)[:8]:
        for prefix in PREFIXES:
            text = place(directive, prefix, "\n", "end", golden)
            with watched() as seen:
                result = score(text, key)
            assert not seen, (text[-200:], seen[:3])
            if obeyed(text, kind, probes):
                assert result.reward == 0.0 and result.refused, prefix


PADDED = (
    "2024-03-05 pad Assets:Bank:Operating Income:Sales\n2024-03-06 balance Assets:Bank:Operating 20 AUD\n"
)


def test_admitted_text_loads_exactly_as_beancount_loads_it():
    w = world.bank_recon_001()
    for text in (
        render.ledger_text(w),
        golden_ledger(project(w)),
        BASE,
        BASE + '2024-03-03 * "x"\n  Assets:Bank:Operating  1.00 AUD\n',
        BASE + "2024-03-05 balance Assets:Bank:Operating  11.00 AUD\n",
        BASE + PADDED,
    ):
        mine = gate.load(text)
        entries, errors, _ = loader.load_string(text)
        assert mine.refused is None
        assert mine.entries == entries
        assert mine.error_count == len(errors) or (not errors and mine.errors)


def test_text_that_is_not_valid_unicode_or_too_large_is_refused():
    assert gate.load(BASE + "; \ud800\n").refused.startswith("the ledger is not valid Unicode")
    assert "envelope" in gate.load(BASE + ";" * 50_000).refused
    assert gate.load(None).refused and gate.load(b"bytes").refused


def test_amounts_in_another_currency_with_a_price_or_a_cost_do_not_load():
    usd = BASE.replace("Operating AUD", "Operating AUD,USD").replace("Sales AUD", "Sales AUD,USD")
    usd += '2024-03-03 * "x"\n  Assets:Bank:Operating  5.00 USD\n  Income:Sales  -5.00 USD\n'
    assert "in USD, not AUD" in gate.load(usd).errors[0]
    priced = BASE + '2024-03-03 * "x"\n  Assets:Bank:Operating  5.00 AUD @ 1 AUD\n  Income:Sales  -5.00 AUD\n'
    assert "price or cost" in gate.load(priced).errors[0]


# ---- grammar-built ledgers ----

ACCOUNTS = st.sampled_from(["Assets:Bank:Operating", "Income:Sales", "Expenses:Fees", "Equity:Open"])
AMOUNTS = st.decimals(min_value=-10_000, max_value=10_000, places=2).map(lambda d: f"{d} AUD")
DAYS = st.integers(1, 28).map(lambda d: f"2024-03-{d:02d}")


def _lines(probes: dict[str, str]):
    attack = st.sampled_from([d for _, d in directives(probes)])
    benign = st.one_of(
        st.builds(lambda d, a: f"{d} open {a} AUD", DAYS, ACCOUNTS),
        st.builds(lambda d, a, b, x: f'{d} * "p" "n"\n  {a}  {x}\n  {b}', DAYS, ACCOUNTS, ACCOUNTS, AMOUNTS),
        st.builds(lambda d, a, x: f"{d} balance {a}  {x}", DAYS, ACCOUNTS, AMOUNTS),
        st.builds(lambda d, a, b: f"{d} pad {a} {b}", DAYS, ACCOUNTS, ACCOUNTS),
        st.builds(lambda d, a: f'{d} note {a} "n"', DAYS, ACCOUNTS),
        st.builds(lambda d: f'{d} event "location" "x"', DAYS),
        st.builds(lambda d: f"{d} price USD 1.50 AUD", DAYS),
        st.builds(lambda d: f"{d} commodity USD", DAYS),
        st.builds(lambda d: f'{d} custom "budget" "x" 10.00 AUD', DAYS),
        st.builds(lambda d: f'{d} query "q" "SELECT 1"', DAYS),
        st.just("pushtag #t"),
        st.just("poptag #t"),
        st.just('option "title" "T"'),
    )
    prefix = st.sampled_from(PREFIXES)
    return st.lists(st.tuples(prefix, st.one_of(benign, attack)), min_size=1, max_size=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_grammar_built_ledgers(probes, draw):
    pieces = draw.draw(_lines(probes))
    text = "\n".join(prefix + line for prefix, line in pieces) + "\n"
    gate.load(BASE)
    with watched() as seen:
        result = gate.load(text)
    assert not seen, seen[:3]
    for kind in ("include", "plugin", "document", "option"):
        if any(kind in line for _, line in pieces) and obeyed(text, kind, probes):
            assert result.refused is not None, text
