"""The observation contract, exercised on the toolset directly in a scratch workspace."""

import os

import pytest
import verifiers.v1 as vf
from beancount_ledger import contract
from beancount_ledger.taskset import golden_of, make_task_data
from beancount_ledger.tools import LedgerToolset


@pytest.fixture
def tools(tmp_path, monkeypatch):
    data = make_task_data("bank_recon_001")
    for name, text in data.files.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    toolset = LedgerToolset(vf.ToolsetConfig(colocated=True))
    toolset.data = data
    return toolset


def test_names_not_paths(tools, tmp_path):
    assert tools.read_file("../etc/passwd").startswith("error: unknown file")
    assert tools.read_file(str(tmp_path / "policy.md")).startswith("error: unknown file")
    assert "policy.md slice 1 of 1" in tools.read_file("policy.md")


def test_symlink_and_oversize_refused(tools, tmp_path):
    os.remove("vendors.csv")
    os.symlink(tmp_path / "policy.md", "vendors.csv")
    assert "not a regular file" in tools.read_file("vendors.csv")
    (tmp_path / "customers.csv").write_text("x" * (contract.LEDGER_ENVELOPE * 2 + 1))
    assert "over the envelope" in tools.read_file("customers.csv")


def test_one_full_ledger_read_per_revision(tools):
    first = tools.read_file("ledger.beancount")
    assert first.startswith("ledger.beancount revision 0") and "open Assets:Bank:Operating" in first
    assert tools.read_file("ledger.beancount").startswith("receipt: revision 0")
    assert tools.write_ledger(golden_of(tools.data)).startswith("written: revision 1")
    assert tools.read_file("ledger.beancount").startswith("ledger.beancount revision 1")
    assert tools.state.ledger == golden_of(tools.data)


def test_write_refusals_leave_the_draft(tools):
    assert tools.write_ledger('plugin "beancount.plugins.auto_accounts"\n').startswith("not written: refused")
    assert tools.write_ledger("x" * (contract.LEDGER_ENVELOPE + 1)).startswith("error")
    assert tools.state.ledger is None and tools.state.revision == 0


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


def test_symlinks_are_refused_by_every_tool(tools, tmp_path):
    outside = tmp_path.parent / "outside.beancount"
    outside.write_text("2024-01-01 open Assets:Elsewhere AUD\n")
    os.remove("ledger.beancount")
    os.symlink(outside, "ledger.beancount")
    assert "not a regular file" in tools.read_file("ledger.beancount")
    assert "not a regular file" in tools.grep("Elsewhere", name="ledger.beancount")
    assert "not a regular file" in tools.run_beancount()
    assert "ledger.beancount: error" not in tools.list_files() and "not a regular file" in tools.list_files()
    # write_ledger replaces the link itself and never writes through it.
    assert tools.write_ledger(golden_of(tools.data)).startswith("written: revision 1")
    assert outside.read_text() == "2024-01-01 open Assets:Elsewhere AUD\n"
    assert not os.path.islink("ledger.beancount")
    assert "no errors" in tools.run_beancount()


def test_oversized_ledger_is_refused_whole(tools, tmp_path):
    padding = "; padding\n" * (contract.LEDGER_ENVELOPE // 10 + 1)
    (tmp_path / "ledger.beancount").write_text(golden_of(tools.data) + padding)
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
    assert open("ledger.beancount").read() == golden


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
