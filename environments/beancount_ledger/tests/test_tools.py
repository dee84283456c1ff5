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
    assert tools.write_ledger('plugin "beancount.plugins.auto_accounts"\n').startswith("refused")
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
