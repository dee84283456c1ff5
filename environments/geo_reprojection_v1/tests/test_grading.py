"""The reward battery, scored through the real `Task.score`, and the parser under fuzzing: it reads
what the pattern it replaces read, in linear time, once per trace."""

from __future__ import annotations

import math
import re

import pytest
from geo_reprojection_v1 import grading
from geo_reprojection_v1.problem import ARITY, BEARING, FAMILIES, INVERSE
from hypothesis import given, settings
from hypothesis import strategies as st
from piv_core import last_answer_block
from piv_core.testing import score_reply

GRADED = (False, True)


def _scores(task, reply):
    scored = score_reply(task, reply)
    return scored.rewards["within_tolerance"], scored.metrics


@pytest.mark.parametrize("graded", GRADED)
def test_projs_own_answer_scores_one(family, graded, tasks_of, proj_answer, answer):
    for task in tasks_of(family, graded=graded):
        reward, metrics = _scores(task, answer(proj_answer(task.data)))
        assert reward == (pytest.approx(1.0, abs=1e-6) if graded else 1.0)
        assert metrics["answered"] == 1.0
        assert 0.0 <= metrics["error"] < 1e-3 and metrics["error_ratio"] < 1e-2


def _broken_replies(task) -> dict[str, str | None]:
    """Replies that must score 0: no usable answer, or a usable but wrong one."""
    data = task.data
    key = [f"{value:.9f}" for value in data.key]
    n = len(key)

    def block(values: list[str]) -> str:
        return "<answer>" + ", ".join(values) + "</answer>"

    replies = {
        "echo": block([repr(value) for value in data.inputs]),
        "no block": "The answer is " + ", ".join(key),
        "nothing": None,
        "empty block": "<answer></answer>",
        "scattered prose": "<answer>I think " + " or maybe ".join(key) + "</answer>",
        "decimal comma": block([k.replace(".", ",") for k in key]),
        "wrong count": block([*key, key[0]]),
        "too few": block(key[:-1]),
        "units": block([f"{k} m" for k in key]),
        "overflowing literal": block(["1e400"] * n),
        "negative overflow": block(["-1e400"] * n),
        "nan": block(["nan"] * n),
        "inf": block(["inf"] * n),
        "unterminated": "<answer>" + ", ".join(key),
        "right then wrong": block(key) + " on reflection " + block([repr(v + 10000.0) for v in data.key]),
    }
    if all(abs(value) >= 1000 for value in data.key):
        replies["thousands separators"] = block([f"{value:,.3f}" for value in data.key])
    return replies


@pytest.mark.parametrize("graded", GRADED)
def test_broken_replies_score_zero(family, graded, tasks_of):
    for task in tasks_of(family, count=6, graded=graded):
        for label, reply in _broken_replies(task).items():
            reward, metrics = _scores(task, reply)
            assert all(math.isfinite(value) for value in metrics.values()), (label, metrics)
            unusable = metrics["answered"] == 0.0 or metrics["error"] == grading.sentinel(family)
            if not graded or unusable:
                assert reward == 0.0, (label, reply, metrics)
            else:  # a wrong number keeps only the far tail of the decay curve
                assert metrics["error_ratio"] >= 100 and reward < 1e-4, (label, reply, metrics)


@pytest.mark.parametrize("graded", GRADED)
def test_latitude_off_the_ellipsoid_reads_as_the_sentinel(graded, tasks_of):
    for task in tasks_of(INVERSE, count=6, graded=graded):
        lon, lat = task.data.key
        for off in ("90.0000001", "95", "-91.0", "1e300", "1e400", "-1e400"):
            reward, metrics = _scores(task, f"<answer>{lon!r}, {off}</answer>")
            assert reward == 0.0
            sentinel = grading.SENTINEL_M
            assert {name: metrics[name] for name in ("error", "error_ratio", "answered")} == {
                "error": sentinel,
                "error_ratio": sentinel,
                "answered": 1.0,
            }
            assert metrics["has_inverse"] == 1.0 and metrics["pass_inverse"] == 0.0
            assert metrics["error_inverse"] == sentinel / task.data.tolerance


def test_overflowing_literal_is_answered_but_at_the_sentinel(family, tasks_of):
    task = tasks_of(family, count=1)[0]
    reward, metrics = _scores(task, "<answer>" + ", ".join(["1e400"] * ARITY[family]) + "</answer>")
    assert reward == 0.0 and metrics["answered"] == 1.0
    assert metrics["error"] == grading.sentinel(family)


def test_unparseable_reads_minus_one(family, tasks_of):
    task = tasks_of(family, count=1)[0]
    reward, metrics = _scores(task, "no answer here")
    assert reward == 0.0
    expected = {"error": -1.0, "error_ratio": -1.0, "answered": 0.0}
    for other in FAMILIES:
        present = other == family
        expected |= {f"has_{other}": float(present), f"pass_{other}": 0.0}
        expected[f"error_{other}"] = -1.0 if present else 0.0
    assert metrics == expected


def test_accepted_spellings(tasks_of):
    task = tasks_of("reproject", count=1)[0]
    easting, northing = task.data.key
    for reply in (
        f"<answer>{easting:.3f} {northing:.3f}</answer>",
        f"<answer>\n{easting:.9e},\n{northing:.9E}\n</answer>",
        f"<answer>```\n{easting!r}, {northing!r}\n```</answer>",
        f"<answer>0, 0</answer> then <ANSWER>+{easting:.2f}, {northing:.2f}</ANSWER>",
    ):
        assert _scores(task, reply)[0] == 1.0, reply


def test_bearings_compare_around_the_circle(tasks_of):
    task = tasks_of(BEARING, count=1)[0]
    (azimuth,) = task.data.key
    for equivalent in (azimuth - 360.0, azimuth + 360.0, azimuth + 720.0, azimuth - 1080.0):
        assert _scores(task, f"<answer>{equivalent!r}</answer>")[0] == 1.0
    assert grading.error(BEARING, (359.99,), (-0.01,)) == pytest.approx(0.0, abs=1e-9)
    assert grading.error(BEARING, (359.99,), (0.02,)) == pytest.approx(0.03)
    assert grading.error(BEARING, (10.0,), (190.0,)) == 180.0


def test_thousands_separators_are_unparseable(tasks_of):
    task = tasks_of("reproject", count=1)[0]
    reward, metrics = _scores(task, "<answer>" + ", ".join(f"{v:,.3f}" for v in task.data.key) + "</answer>")
    assert reward == 0.0 and metrics["answered"] == 0.0


def test_tolerance_boundary_and_graded_curve(tasks_of):
    task = tasks_of("distance", count=1)[0]
    (distance,) = task.data.key
    assert _scores(task, f"<answer>{distance + 9.99}</answer>")[0] == 1.0
    assert _scores(task, f"<answer>{distance + 10.01}</answer>")[0] == 0.0
    graded = tasks_of("distance", count=1, graded=True, graded_halflife=2.0)[0]
    assert _scores(graded, f"<answer>{distance + 20.0}</answer>")[0] == pytest.approx(0.5, abs=1e-6)
    assert _scores(graded, f"<answer>{distance + 40.0}</answer>")[0] == pytest.approx(0.2, abs=1e-6)


_TOKENS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers().map(str),
    st.sampled_from(["1e400", "-1e400", "1,000.5", "nan", "inf", "1_000", "٣", "−1", "+.5", "5.", "e5"]),
    st.text(max_size=8),
)


@settings(max_examples=300, deadline=None)
@given(
    family=st.sampled_from(FAMILIES),
    tokens=st.lists(_TOKENS, max_size=4),
    separator=st.sampled_from([", ", " ", ",", "\n", " ,\u2009", "\u00a0"]),
    wrapper=st.sampled_from(["<answer>{}</answer>", "<answer>```{}```</answer>", "{}"]),
    key=st.lists(st.floats(-1e7, 1e7), min_size=2, max_size=2),
    graded=st.booleans(),
)
def test_parser_never_raises_and_stays_in_range(family, tokens, separator, wrapper, key, graded):
    reply = wrapper.format(separator.join(tokens))
    result = grading.grade(reply, family, key[: ARITY[family]], 1.0, graded=graded)
    assert 0.0 <= result.within_tolerance <= 1.0
    assert math.isfinite(result.error) and math.isfinite(result.error_ratio)
    assert result.answered in (0.0, 1.0)
    assert (result.error == -1.0) == (result.answered == 0.0)
    assert result.error <= grading.sentinel(family)


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=200), family=st.sampled_from(FAMILIES))
def test_arbitrary_text_never_raises(text, family):
    result = grading.grade(text, family, [1.0, 2.0][: ARITY[family]], 0.5, graded=True)
    assert 0.0 <= result.within_tolerance <= 1.0 and math.isfinite(result.error)


_PATTERN_NUMBER = r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
_PATTERN = {n: re.compile(r"[,\s]*" + r"[,\s]+".join([_PATTERN_NUMBER] * n) + r"[,\s]*") for n in (1, 2)}


def pattern_parse_numbers(reply, count):
    """The parser as it was written with one pattern per count: the reference the split must agree with."""
    body = last_answer_block(reply)
    found = None if body is None else _PATTERN[count].fullmatch(body)
    return None if found is None else tuple(map(float, found.groups()))


_PIECES = st.sampled_from(
    ["1", "-2.5", "+.5", "5.", "1e5", "1E-3", "e5", ".", "-", "+", "1e", "1.2.3", "٣", "x", "nan", "inf"]
    + [",", " ", "\t", "\n", "\r", "\u2009", "\xa0", "\x1c", "\u3000", "```", "\x00", "\ud800"]
)


@settings(max_examples=2000, deadline=None)
@given(pieces=st.lists(_PIECES, max_size=12), count=st.sampled_from([1, 2]))
def test_the_parser_agrees_with_the_pattern(pieces, count):
    reply = "<answer>" + "".join(pieces) + "</answer>"
    assert grading.parse_numbers.__wrapped__(reply, count) == pattern_parse_numbers(reply, count)


class CountingPattern:
    def __init__(self, pattern, calls):
        self.pattern, self.calls = pattern, calls

    def fullmatch(self, text):
        self.calls.append(len(text))
        return self.pattern.fullmatch(text)


@pytest.mark.parametrize(
    "body",
    [
        "1 " * 50_000,
        " " * 100_000 + "x",
        "1" * 100_000 + "x",
        "," * 100_000 + "1",
        "1e" * 50_000,
        "\u2003" * 100_000,
    ],
    ids=["many numbers", "spaces", "digits", "commas", "exponents", "em spaces"],
)
def test_a_long_body_is_split_once_and_at_most_count_pieces_matched(body, monkeypatch):
    """Splitting is one string operation; the number pattern then sees at most `count` pieces, each once."""
    calls = []
    monkeypatch.setattr(grading, "_NUMBER", CountingPattern(grading._NUMBER, calls))
    for count in (1, 2):
        calls.clear()
        reply = f"<answer>{body}</answer>"
        assert grading.parse_numbers.__wrapped__(reply, count) == pattern_parse_numbers(reply, count)
        assert len(calls) <= count and sum(calls) <= len(body)


_SURROGATES_AND_NUL = st.text(alphabet=st.sampled_from("1.5, -e\n\x00\ud800\udfff<>/answer"), max_size=60)


@settings(max_examples=300, deadline=None)
@given(text=_SURROGATES_AND_NUL, family=st.sampled_from(FAMILIES))
def test_surrogates_and_nul_score_cleanly(text, family):
    for reply in (text, f"<answer>{text}</answer>"):
        result = grading.grade(reply, family, [1.0, 2.0][: ARITY[family]], 0.5, graded=True)
        assert 0.0 <= result.within_tolerance <= 1.0 and math.isfinite(result.error)


def test_scoring_a_trace_parses_its_reply_once(tasks_of, monkeypatch):
    """The reward and the metric read one trace: the reply is parsed for the first and remembered."""
    task = tasks_of("reproject", count=1)[0]
    parses = []
    monkeypatch.setattr(
        grading, "last_answer_block", lambda reply: parses.append(reply) or last_answer_block(reply)
    )
    grading.parse_numbers.cache_clear()
    easting, northing = task.data.key
    scored = score_reply(task, f"<answer>{easting!r}, {northing!r}</answer>")
    assert set(scored.rewards) == {"within_tolerance"} and "answered" in scored.metrics
    assert scored.reward == 1.0 and len(parses) == 1
    score_reply(task, f"<answer>{easting!r} {northing!r}</answer>")
    assert len(parses) == 2
