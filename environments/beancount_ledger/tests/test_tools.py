"""The observation contract, exercised on the toolset directly, each call bound to one rollout's state
(`tools.rollout`, the binding the shared server makes for every call)."""

import hashlib
import sys

import pytest
import verifiers.v1 as vf
from beancount_ledger import contract, isolated
from beancount_ledger import tools as tools_module
from beancount_ledger.render import FILE_NAMES, LEDGER
from beancount_ledger.statement import statement_dates
from beancount_ledger.taskset import golden_of, make_task_data
from beancount_ledger.tools import LedgerState, LedgerToolset, rollout
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


@pytest.fixture
def data():
    return make_task_data("bank_recon_001")


@pytest.fixture
def tools(data, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an empty working directory: nothing there is ever read or written
    toolset = LedgerToolset(vf.SharedToolsetConfig())
    toolset.data = data
    with rollout(LedgerState(files=dict(data.files))):
        yield toolset


def served(tools, name: str) -> str:
    text, error = tools._file(name)
    assert text is not None, error
    return text


def test_names_not_paths(tools, tmp_path):
    assert tools.read_file("../etc/passwd").startswith("error: unknown file")
    assert tools.read_file(str(tmp_path / "policy.md")).startswith("error: unknown file")
    assert "policy.md slice 1 of 1" in tools.read_file("policy.md")


def test_the_served_files_are_exactly_the_tasks(tools, data):
    assert sorted(data.files) == sorted(FILE_NAMES)
    for name in FILE_NAMES:
        assert served(tools, name) == data.files[name]
    listing = tools.list_files().splitlines()
    assert [row.split("\t")[0] for row in listing] == list(FILE_NAMES)
    for row in listing:
        name, size, lines = row.split("\t")
        assert size == f"{len(data.files[name].encode())} bytes"
        assert lines == f"{data.files[name].count(chr(10))} lines"
    # Whatever else a state carries is never served: only the eight names exist.
    tools.state.files = {**tools.state.files, "secret.txt": "secret line\n"}
    assert tools.read_file("secret.txt").startswith("error: unknown file")
    assert "secret" not in tools.grep("secret")


def test_a_rollout_without_files_is_served_nothing(data):
    tools = LedgerToolset(vf.SharedToolsetConfig())
    with rollout(LedgerState()):
        assert tools.read_file("policy.md") == "error: policy.md is missing from the workspace"
        assert tools.run_beancount() == "error: ledger.beancount is missing from the workspace"
        assert all(row.endswith("missing from the workspace") for row in tools.list_files().splitlines())


def test_oversize_refused(tools):
    tools.state.files = {**tools.state.files, "customers.csv": "x" * (contract.LEDGER_ENVELOPE * 2 + 1)}
    assert "over the envelope" in tools.read_file("customers.csv")
    assert "over the envelope" in tools.grep("x", name="customers.csv")


def test_one_full_ledger_read_per_revision(tools):
    first = tools.read_file("ledger.beancount")
    assert first.startswith("ledger.beancount revision 0") and "open Assets:Bank:Operating" in first
    assert tools.read_file("ledger.beancount").startswith("receipt: revision 0")
    assert tools.write_ledger(golden_of(tools.data)).startswith("written: revision 1")
    assert tools.read_file("ledger.beancount").startswith("ledger.beancount revision 1")
    assert tools.state.ledger == golden_of(tools.data)


def test_the_served_ledger_is_the_scored_one(tools, data):
    golden = golden_of(data)
    assert served(tools, LEDGER) == data.files[LEDGER] and tools.state.ledger is None
    assert tools.write_ledger(golden.replace("\n", "\r\n")).startswith("written: revision 1")
    assert tools.state.ledger == golden == served(tools, LEDGER)
    digest = hashlib.sha256(golden.encode()).hexdigest()[:16]
    assert tools.read_file(LEDGER) == f"{LEDGER} revision 1 (sha256 {digest})\n{golden}"
    assert tools.grep("-- corrections --", name=LEDGER).startswith(f"{LEDGER}:")
    assert tools.run_beancount().startswith("no errors. Balances:")
    # The given ledger stays in the rollout's files; only what is served changes.
    assert tools.state.files[LEDGER] == data.files[LEDGER]


def test_write_refusals_leave_the_draft(tools, data):
    assert tools.write_ledger('plugin "beancount.plugins.auto_accounts"\n').startswith("not written: refused")
    assert tools.write_ledger("x" * (contract.LEDGER_ENVELOPE + 1)).startswith("error")
    assert tools.state.ledger is None and tools.state.revision == 0
    assert served(tools, LEDGER) == data.files[LEDGER]


def test_the_prompt_states_the_gates_refusals(tools, data):
    """What the prompt says write_ledger refuses (the reserved metadata keys, a check over the bound)
    it refuses, naming what the prompt names, and writes nothing; a key starting with `_` is, as the
    prompt says, an error beancount reports."""
    for stated in ("`filename`", "`lineno`", "starting with `_`", f"{contract.MAX_CHECK_COST:,} units"):
        assert stated in contract.SYSTEM_PROMPT, stated
    given = data.files[LEDGER]
    entry = '\n2024-03-30 * "x"\n  {kv}\n  Assets:Bank:Operating  1.00 AUD\n  Income:Sales  -1.00 AUD\n'
    for key in ("filename", "lineno"):
        reply = tools.write_ledger(given + entry.format(kv=f"{key}: 1"))
        assert reply.startswith("not written: refused"), reply
        assert f"{key!r} is reserved by beancount" in reply, reply
    heavy = given + "2024-03-31 balance Assets:Bank 0.00 AUD\n" * 400  # each sums the bank's accounts
    reply = tools.write_ledger(heavy)
    assert reply.startswith("not written: refused"), reply
    assert f"units to check, over the bound of {contract.MAX_CHECK_COST:,}" in reply, reply
    assert tools.state.ledger is None and tools.state.revision == 0
    for key in ("_x", "__residual__"):
        reply = tools.write_ledger(given + entry.format(kv=f"{key}: TRUE"))
        assert reply.startswith("not written: beancount reports 1 error(s)"), reply
        assert f"Invalid token: '{key}:'" in reply, reply
    assert tools.state.ledger is None and tools.state.revision == 0


def test_a_write_that_does_not_load_never_replaces_one_that_did(tools, data):
    """The prompt's rule: a ledger with beancount errors (or breaking the load rule) is refused with
    its errors quoted, and the last accepted ledger stays served and scored."""
    assert "A write that does not load writes nothing" in contract.SYSTEM_PROMPT
    rule = "A write that does not load writes nothing"
    assert all(rule in system for system, _ in contract.PROMPTS.values())
    golden = golden_of(data)
    placeholder = tools.write_ledger("<your corrected ledger text here>")
    assert placeholder.startswith("not written: beancount reports"), placeholder
    assert "nothing has been written yet" in placeholder and tools.state.ledger is None
    assert tools.write_ledger(golden).startswith("written: revision 1")
    unbalanced = golden + '\n2024-03-31 * "x"\n  Assets:Bank:Operating  1.00 AUD\n  Income:Sales  -0.99 AUD\n'
    in_usd = golden + '\n2024-03-31 * "x"\n  Assets:Bank:Operating  1.00 USD\n  Income:Sales  -1.00 USD\n'
    unopened = golden + '\n2024-03-31 * "x"\n  Assets:Suspense  1.00 AUD\n  Income:Sales  -1.00 AUD\n'
    for text in (
        unbalanced,
        in_usd,
        unopened,
        golden + "not beancount at all\n",
        "\n".join(data.files[LEDGER].splitlines()[:-1]) + "\n",  # the last posting cut off
    ):
        reply = tools.write_ledger(text)
        assert reply.startswith("not written: beancount reports"), reply
        assert "revision 1, the last ledger written, stays in place and is the one scored" in reply, reply
        assert tools.state.revision == 1 and tools.state.ledger == golden == served(tools, LEDGER)
    assert tools.write_ledger(" \n").startswith("error: text must be the whole ledger (not empty)")
    assert tools.state.revision == 1
    many = golden + "".join(f"junk{n}\n" for n in range(9))
    reply = tools.write_ledger(many)
    assert reply.count("\n\n") == tools_module.SHOWN_ERRORS - 1 and "more not shown" in reply, reply


def test_book_correction_appends_one_entry_dated_from_the_statement_and_checked_whole(tools, data):
    given = data.files[LEDGER]
    assert tools.book_correction("BS2403-001", "Assets:Bank:Operating", "0", "Income:Sales").startswith(
        "error: amount must be a non-zero amount"
    )
    # A ref the statement does not have is refused by name: the tool dates from the statement only.
    for ref in ("BS-1", "BS2403-999", "", None, "bs2403-001"):
        reply = tools.book_correction(ref, "Assets:Bank:Operating", "1.00", "Income:Sales")
        assert reply.startswith("error: bank_ref must be the ref of a line of bank_statement.csv"), reply
        assert "BS2403-001" in reply and reply.endswith("not written")
    assert tools.state.ledger is None
    # An account the ledger never opened: beancount refuses the whole, and nothing is written.
    reply = tools.book_correction("BS2403-003", "Assets:Suspense", "1.00", "Income:Sales")
    assert reply.startswith("not written: beancount reports") and "nothing has been written yet" in reply
    assert 'appended:\n2024-03-08 * "Correction for BS2403-003"' in reply and tools.state.ledger is None
    reply = tools.book_correction(" BS2403-003 ", "Assets:Bank:Operating", "-12.50", "Income:Sales")
    assert reply.startswith("written: revision 1"), reply
    ledger = tools.state.ledger
    assert ledger.startswith(given.rstrip("\n")) and served(tools, LEDGER) == ledger
    assert ledger.endswith(
        '2024-03-08 * "Correction for BS2403-003"\n  bank_ref: "BS2403-003"\n'
        "  Assets:Bank:Operating  -12.50 AUD\n  Income:Sales           12.50 AUD\n"
    )
    # A second correction goes on the accepted revision; a refused one keeps it.
    reply = tools.book_correction("BS2403-001", "Assets:Nowhere", "1.00", "Income:Sales")
    assert reply.startswith("not written")
    assert tools.state.ledger == ledger and tools.state.revision == 1


def test_correct_bank_line_moves_the_bank_by_the_amount_given_against_one_account(tools, data):
    """`correct_bank_line` appends what `book_correction` would with the operating bank as its first
    account, dated from the statement, and refuses the bank itself as the other account."""
    given = data.files[LEDGER]
    reply = tools.correct_bank_line("BS2403-003", "-12.50", "Assets:Bank:Operating")
    assert reply.startswith("error: account must be the account opposite the bank"), reply
    assert tools.correct_bank_line("BS2403-003", "0.00", "Income:Sales").startswith(
        "error: bank_amount must be a non-zero amount"
    )
    reply = tools.correct_bank_line("BS2403-999", "1.00", "Income:Sales")
    assert reply.startswith("error: bank_ref must be the ref of a line of bank_statement.csv"), reply
    reply = tools.correct_bank_line("BS2403-003", "1.00", "Assets:Suspense")
    assert reply.startswith("not written: beancount reports") and tools.state.ledger is None
    reply = tools.correct_bank_line(" BS2403-003 ", "-12.50", "Income:Sales")
    assert reply.startswith("written: revision 1"), reply
    assert tools.state.ledger.startswith(given.rstrip("\n")) and tools.state.ledger.endswith(
        '2024-03-08 * "Correction for BS2403-003"\n  bank_ref: "BS2403-003"\n'
        "  Assets:Bank:Operating  -12.50 AUD\n  Income:Sales           12.50 AUD\n"
    )
    assert tools.state.tool_calls["correct_bank_line"] == 5


@pytest.mark.parametrize("tool", ["book_correction", "correct_bank_line"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.one_of(
        st.text(max_size=40),
        st.text(max_size=3).map(lambda tail: "BS2403-00" + tail),
        st.sampled_from(["x" * 200_000, " BS2403-001\n", "BS2403-001\x00", "bs2403-001", ""]),
        st.none(),
        st.integers(),
        st.lists(st.text(max_size=5), max_size=3),
    )
)
def test_the_appending_tools_write_only_on_a_ref_of_the_statement(tools, data, tool, bank_ref):
    """Whatever the model sends as `bank_ref`, either appending tool answers with a message and never
    raises; it writes only for a ref the statement as given holds, dated with that line's own date."""
    refs = statement_dates(data.files["bank_statement.csv"])
    before = tools.state.ledger
    if tool == "book_correction":
        reply = tools.book_correction(bank_ref, "Assets:Bank:Operating", "1.00", "Income:Sales")
    else:
        reply = tools.correct_bank_line(bank_ref, "1.00", "Income:Sales")
    assert isinstance(reply, str) and len(reply) < 4_000
    if isinstance(bank_ref, str) and bank_ref.strip() in refs:
        ref = bank_ref.strip()
        assert reply.startswith("written: revision"), reply
        added = tools.state.ledger[len((before or data.files[LEDGER]).rstrip("\n")) :]
        assert added.startswith(f'\n\n{refs[ref]} * "Correction for {ref}"\n  bank_ref: "{ref}"\n'), added
    else:
        assert reply.startswith("error: bank_ref must be the ref of a line of bank_statement.csv"), reply
        assert tools.state.ledger == before


def test_bad_arguments_are_messages(tools):
    assert tools.read_file("bank_statement.csv", slice=9).startswith("error: slice")
    assert tools.grep("(").startswith("error: invalid regular expression")
    assert "no errors" in tools.run_beancount()


def test_observation_budget(tools, monkeypatch):
    monkeypatch.setattr("beancount_ledger.tools.OBSERVATION_BUDGET", 3000)
    replies = [tools.read_file("bank_statement.csv") for _ in range(5)]
    assert replies[-1].startswith("error: the observation budget")
    assert tools.state.budget_hits >= 1 and tools.state.observation_bytes < 4000
    assert tools.submit().startswith("submitted")


def test_every_read_tool_takes_names_not_paths(tools, tmp_path):
    (tmp_path.parent / "outside.txt").write_text("secret line\n")
    assert tools.grep("secret", name="../outside.txt").startswith("error: unknown file")
    assert tools.grep("secret", name=str(tmp_path.parent / "outside.txt")).startswith("error: unknown file")
    assert tools.read_file("./policy.md").startswith("error: unknown file")
    assert "secret" not in tools.grep("secret")


def test_no_tool_opens_lists_or_writes_a_file(tools, data, tmp_path):
    """Every tool, on every path it has, with an audit hook watching: the files come from the state."""
    golden = golden_of(data)
    isolated.check(golden)  # the sandbox worker is started before watching (it is a process, not a file)
    events: list[tuple[str, tuple]] = []
    watching = True

    def hook(event: str, args: tuple) -> None:
        if watching and event in {"open", "os.listdir", "os.scandir", "glob.glob", "os.rename", "os.remove"}:
            events.append((event, args))

    sys.addaudithook(hook)
    try:
        replies = [
            tools.list_files(),
            *(tools.read_file(name) for name in FILE_NAMES),
            tools.read_file("bank_statement.csv", slice=2),
            tools.grep("bank_ref"),
            tools.grep("(", name=LEDGER),
            tools.grep("x", name="../outside.txt"),
            tools.run_beancount(),
            tools.write_ledger(golden),
            tools.write_ledger('include "/etc/passwd"\n'),
            tools.read_file(LEDGER),
            tools.run_beancount(),
            tools.submit(),
        ]
    finally:
        watching = False
    assert events == []
    assert all(isinstance(r, str) and r for r in replies)
    assert list(tmp_path.iterdir()) == []
    watching = True  # the hook does see a file being opened
    (tmp_path / "probe").write_text("")
    watching = False
    assert [event for event, _ in events] == ["open"]


def test_oversized_ledger_is_refused_whole(tools):
    padding = "; padding\n" * (contract.LEDGER_ENVELOPE // 10 + 1)
    tools.state.files = {**tools.state.files, LEDGER: golden_of(tools.data) + padding}
    assert "over the 48000-byte envelope" in tools.read_file("ledger.beancount")
    assert tools.state.full_reads == []


@pytest.mark.parametrize(
    "line",
    [
        'plugin "beancount.plugins.auto_accounts"',
        'include "/etc/passwd"',
        'option "insert_pythonpath" "TRUE"',
        'option "plugin_processing_mode" "raw"',
        '   include "ledger.beancount"',
    ],
)
def test_write_refuses_plugins_includes_and_options_and_keeps_the_last_revision(tools, line):
    golden = golden_of(tools.data)
    assert tools.write_ledger(golden).startswith("written: revision 1")
    assert tools.write_ledger(f"{golden}\n{line}\n").startswith("not written: refused")
    assert tools.state.revision == 1 and tools.state.ledger == golden
    assert served(tools, LEDGER) == golden


def test_allowed_options_are_written(tools):
    golden = golden_of(tools.data)
    assert 'option "title"' in golden
    assert tools.write_ledger(golden.replace('option "title"', 'option   "title"')).startswith("written")


def test_the_real_observation_budget_is_enforced(tools):
    replies = []
    while not (replies and replies[-1].startswith("error: the observation budget")):
        replies.append(tools.grep("."))
        assert len(replies) < 1000
    assert sum(len(r.encode()) for r in replies[:-1]) <= contract.OBSERVATION_BUDGET
    assert tools.state.budget_hits == 1 and tools.state.observation_bytes > contract.OBSERVATION_BUDGET * 0.9
    # Past the budget, reads refuse, but writing and submitting still work.
    assert tools.read_file("ledger.beancount").startswith("error: the observation budget")
    assert tools.write_ledger(golden_of(tools.data)).startswith("written: revision 1")
    assert tools.submit() == "submitted (revision 1)"
