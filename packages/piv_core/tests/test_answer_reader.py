"""The answer-block reader: the same answer as the pattern it replaces, in one forward pass over the reply."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from piv_core import json_answer, last_answer_block
from piv_core.parsing import answer

_BLOCK = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"^```[A-Za-z0-9_-]*[ \t]*\n?(.*?)\n?[ \t]*```$", re.DOTALL)


def regex_last_answer_block(reply: str | None) -> str | None:
    """The reader as it was written with patterns: the reference the linear reader must agree with."""
    if not reply or "<answer>" not in reply.lower():
        return None
    bodies = _BLOCK.findall(reply)
    if not bodies:
        return None
    body = bodies[-1].strip()
    fenced = _FENCE.match(body)
    return fenced.group(1).strip() if fenced else body


TOKENS = [
    "<answer>",
    "</answer>",
    "<ANSWER>",
    "</Answer>",
    "<AnSwEr>",
    "</ANSWER>",
    "<answer",
    "</answer",
    "answer>",
    "<anſwer>",  # LATIN SMALL LETTER LONG S matches "s" when case is ignored
    "</anſwer>",
    "```",
    "``",
    "`",
    "json",
    "py-3_x",
    "Ü",
    " ",
    "\t",
    "\n",
    "\r",
    "\x0b",
    "\x1c",
    "\u3000",
    "\xa0",
    "{",
    "}",
    "1",
    "x",
    "<",
    ">",
    "/",
    "\x00",
    "\ud800",
]
replies = st.one_of(
    st.lists(st.sampled_from(TOKENS), max_size=24).map("".join),
    st.text(alphabet=st.sampled_from("<>/answerANSWER`json \t\n\x00x"), max_size=60),
    st.text(max_size=60),
)


@settings(max_examples=3000, deadline=None)
@given(reply=replies)
def test_the_reader_agrees_with_the_pattern_on_every_reply(reply):
    assert last_answer_block(reply) == regex_last_answer_block(reply)


@settings(max_examples=500, deadline=None)
@given(
    prefix=replies, body=replies, suffix=replies, fence=st.sampled_from(["", "```", "```json\n", "``` \t"])
)
def test_the_reader_agrees_with_the_pattern_on_blocks_and_fences(prefix, body, suffix, fence):
    closing = "```" if fence else ""
    reply = f"{prefix}<answer>{fence}{body}{closing}</answer>{suffix}"
    assert last_answer_block(reply) == regex_last_answer_block(reply)


@pytest.mark.parametrize(
    ("reply", "body"),
    [
        ("<answer>```abc```</answer>", ""),
        ("<answer>``````</answer>", ""),
        ("<answer>`````</answer>", "`````"),
        ("<answer>```js`x```</answer>", "`x"),
        ("<answer>```json  py\nx```</answer>", "py\nx"),
        ("<answer>a</answer><answer>b", "a"),
        ("<answer><answer>a</answer>", "<answer>a"),
        ("<anſwer>a</answer>", None),
        ("<answer>a</anſwer>", "a"),
        ("<answer>\ud800</answer>", "\ud800"),
        ("<answer>\x00</answer>", "\x00"),
    ],
)
def test_edge_cases_read_as_the_pattern_reads_them(reply, body):
    assert last_answer_block(reply) == body == regex_last_answer_block(reply)


class CountingPattern:
    """A compiled pattern that records the window each search scans: from its start to where it matched."""

    def __init__(self, pattern: re.Pattern, windows: list[tuple[int, int]]):
        self.pattern, self.windows = pattern, windows

    def search(self, text: str, pos: int = 0):
        found = self.pattern.search(text, pos)
        self.windows.append((pos, found.end() if found else len(text)))
        return found


@pytest.fixture
def windows(monkeypatch) -> list[tuple[int, int]]:
    """The windows the reader's tag searches scan, in order."""
    seen: list[tuple[int, int]] = []
    monkeypatch.setattr(answer, "_OPEN", CountingPattern(answer._OPEN, seen))
    monkeypatch.setattr(answer, "_CLOSE", CountingPattern(answer._CLOSE, seen))
    return seen


HOSTILE = {  # name: (reply of size n, its number of complete blocks)
    "unclosed tags": (lambda n: "<answer>" * n, lambda n: 0),
    "closing tags only": (lambda n: "<answer>" + "</answer>" * n, lambda n: 1),
    "many blocks": (lambda n: "<answer>1</answer>" * n, lambda n: n),
    "nested openings": (lambda n: "<answer>" * n + "x" + "</answer>" * n, lambda n: 1),
    "fence and spaces": (lambda n: "<answer>```" + " " * (8 * n) + "x</answer>", lambda n: 1),
    "fence, newline, spaces": (lambda n: "<answer>```\n" + " " * (8 * n) + "x\n```</answer>", lambda n: 1),
    "mixed case": (lambda n: "<AnSwEr></aNsWeR>" * n + "<ANSWER>" * n, lambda n: n),
}


@pytest.mark.parametrize(("make", "blocks"), HOSTILE.values(), ids=HOSTILE)
def test_hostile_replies_read_as_the_pattern_reads_them(make, blocks):
    reply = make(20)  # small: the pattern itself takes time cubic in the fence's spaces
    assert last_answer_block(reply) == regex_last_answer_block(reply)


@pytest.mark.parametrize(("make", "blocks"), HOSTILE.values(), ids=HOSTILE)
def test_each_character_is_scanned_by_one_search_at_most(make, blocks, windows):
    """The searches' windows tile the reply from its start, each beginning where the previous one
    ended, so together they scan it once; and there are at most two per complete block, plus two."""
    for n in (1_000, 2_000, 4_000):
        windows.clear()
        reply = make(n)
        last_answer_block(reply)
        assert windows[0][0] == 0
        assert all(end == start for (_, end), (start, _) in zip(windows, windows[1:]))
        assert sum(end - start for start, end in windows) <= len(reply)
        assert len(windows) <= 2 * blocks(n) + 2


def test_unclosed_tags_cost_two_searches_however_many_there_are(windows):
    for n in (1_000, 16_000, 64_000):
        windows.clear()
        assert last_answer_block("<answer>" * n) is None
        assert len(windows) == 2


def test_the_reader_uses_no_pattern_but_the_two_literal_tags():
    patterns = [value for value in vars(answer).values() if isinstance(value, re.Pattern)]
    assert sorted(p.pattern for p in patterns) == sorted([re.escape("<answer>"), re.escape("</answer>")])
    assert all(p.flags & re.IGNORECASE for p in patterns)


def test_json_answer_reads_surrogates_and_rejects_nul_in_strings():
    assert json_answer('<answer>{"x": "\\ud800"}</answer>') == {"x": "\ud800"}
    assert json_answer('<answer>{"x": "\ud800"}</answer>') == {"x": "\ud800"}
    assert json_answer('<answer>{"x": "\x00"}</answer>') is None
