"""The run report's view of a ledger answer: the last write diffed against the golden ledger, and
every planted discrepancy as the environment's own scorer judged the ledger the reward scored."""

from __future__ import annotations

import json

import pytest
from beancount_ledger.report_view import golden_ledger, ledger_view, submitted_ledger
from beancount_ledger.taskset import make_task_data
from piv_core.testing import ReportMarks


def marked(html: str) -> list[dict]:
    return ReportMarks(html).marked


def ledger_trace(data: dict, *written: str) -> dict:
    calls = [
        {"type": "function", "name": "write_ledger", "arguments": json.dumps({"text": text})}
        for text in written
    ]
    return {
        "task": {"data": data},
        "nodes": [{"message": {"role": "assistant", "tool_calls": [c]}} for c in calls],
        "rewards": {"ledger": {"score": 0.5, "weight": 1.0}},
        "metrics": {"balances_hit": 0.5},
    }


@pytest.fixture(scope="module")
def ledger_data():
    return json.loads(make_task_data("bank_recon_001").model_dump_json())


def normalized(line: str) -> str:
    return ("  " if line[:1].isspace() else "") + " ".join(line.split())


def test_the_last_write_ledger_call_is_diffed_and_rescored_against_the_key(ledger_data):
    golden = golden_ledger(ledger_data)
    lines = golden.splitlines()
    last = max(i for i, line in enumerate(lines) if "Correction:" in line)  # drop the last correction
    changed = "\n".join(lines[: last - 1]) + "\n"
    trace = ledger_trace(ledger_data, "first draft", changed)
    assert submitted_ledger(trace) == changed
    found = marked(ledger_view(trace))
    assert [m["text"] for m in found if "line" in m["class"]] == [
        "-" + normalized(x) for x in lines[last - 1 :]
    ]
    assert [m["data-fix"] for m in found if "data-fix" in m] == [ledger_data["fixes"][-1]["ref"]]
    assert [m for m in found if "line" not in m["class"] and "data-fix" not in m] == []
    same = ledger_view(ledger_trace(ledger_data, "draft", golden))
    assert marked(same) == [] and "line for line" in same
    nothing = ledger_view(ledger_trace(ledger_data))
    assert "nothing was written" in nothing
    assert len([m for m in marked(nothing) if "data-fix" in m]) == len(ledger_data["fixes"])


def test_the_ledger_the_reward_scored_is_rescored_and_a_later_rejected_write_noted(ledger_data):
    golden = golden_ledger(ledger_data)
    trace = {**ledger_trace(ledger_data, golden, 'include "/etc/passwd"'), "info": {"ledger": golden}}
    view = ledger_view(trace)
    assert "was not the ledger scored" in view
    assert not [m for m in marked(view) if "data-fix" in m]


def test_a_write_over_the_envelope_is_not_diffed(ledger_data):
    from beancount_ledger.limits import LEDGER_ENVELOPE

    huge = "x\n" * LEDGER_ENVELOPE  # a refused write: the diff would be of a 96,000-line text
    view = ledger_view(ledger_trace(ledger_data, huge))
    assert "over the" in view and "not diffed" in view
    assert not [m for m in marked(view) if "line" in m.get("class", "")]
