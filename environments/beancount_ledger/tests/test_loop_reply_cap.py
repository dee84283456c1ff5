"""A tool reply reaches the model whole up to the contract's `REPLY_CAP`, through the real `eval`:
a ledger of about 30,000 bytes (within `LEDGER_ENVELOPE`) written and read back arrives entire,
not cut in the middle at verifiers' own 20,000-byte bound."""

import json
import threading

import pytest
from beancount_ledger import limits
from beancount_ledger.bookkeeper import READS, file_text, reference_ledger, tool_results
from beancount_ledger.chat_loop import within_reply_cap
from piv_core.policy import Conversation, ToolCall
from piv_core.testing import run_policy_eval

MARK = "; end of the long ledger"


def _long(ledger: str) -> str:
    padding = "".join(f"; note {i:05d}: {'x' * 60}\n" for i in range(420))
    return ledger + "\n" + padding + MARK + "\n"


class LongLedger:
    """Reads the files, writes the reference ledger with 28 KB of comments, reads it back, submits."""

    def __init__(self) -> None:
        self.requests: list[list[dict]] = []
        self.lock = threading.Lock()

    def __call__(self, conversation: Conversation):
        with self.lock:
            self.requests.append(conversation.messages)
        turn = sum(1 for m in conversation.messages if m.get("role") == "assistant")
        if turn == 0:
            return [ToolCall("read_file", {"name": name}) for name in READS]
        if turn == 1:
            results = tool_results(conversation)
            original, statement, archive = (file_text(results, name) for name in READS)
            return [ToolCall("write_ledger", {"text": _long(reference_ledger(original, statement, archive))})]
        if turn == 2:
            return [ToolCall("read_file", {"name": "ledger.beancount"})]
        return [ToolCall("submit")]


def test_the_loops_bound_is_the_contracts():
    small = {"role": "tool", "content": "x" * limits.REPLY_CAP}
    assert within_reply_cap(small) == small
    big = within_reply_cap({"role": "tool", "content": "é" * limits.REPLY_CAP})
    assert len(big["content"].encode()) <= limits.REPLY_CAP
    assert big["content"].endswith(f"[reply truncated at {limits.REPLY_CAP} bytes]")


@pytest.mark.e2e
def test_a_long_ledger_read_back_arrives_whole(tmp_path):
    policy = LongLedger()
    code, output = run_policy_eval("beancount-ledger", policy, str(tmp_path), "long")
    assert code == 0, output[-2000:]
    last = policy.requests[-1]
    reads = [m for m in last if m.get("role") == "tool" and m.get("name") == "read_file"]
    read_back = reads[-1]["content"]
    assert 20_000 < len(read_back.encode()) <= limits.LEDGER_ENVELOPE
    assert MARK in read_back and "truncated" not in read_back
    line = (tmp_path / "long" / "traces.jsonl").read_text().splitlines()[0]
    trace = json.loads(line)["traces"][0]
    assert trace["stop_condition"] == "submitted"
    assert trace["rewards"]["ledger"]["score"] == 1.0  # comments change no entry
