"""Bounded decoding of untrusted JSON and TOML: every input either decodes or raises the one
refusal type, text over a bound never reaches a decoder, a bracket inside a string or a comment
never counts, and every error is one line naming its source."""

from __future__ import annotations

import json
import sys
import time
import tomllib
import traceback
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from piv_core.parsing import bounded_decode
from piv_core.parsing.bounded_decode import (
    Undecodable,
    json_depth,
    load_json,
    load_toml,
    toml_depth,
)

LIMIT = 8
"""The depth bound the generated matrices test against (small, so shapes on both sides are cheap)."""
SOURCE = "source under test"
SETTINGS = settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow])


def _container_depth(value: Any) -> int:
    """How deep lists and dicts nest in `value` (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def _refused(call, *args, **kwargs) -> Undecodable:
    with pytest.raises(Undecodable) as refusal:
        call(*args, **kwargs)
    message = str(refusal.value)
    assert "\n" not in message and message.startswith(f"{kwargs.get('where', 'the text')}: "), message
    return refusal.value


# ----------------------------------------------------------------------------- shapes


def _json_shape(kind: str, depth: int) -> str:
    """JSON nested exactly `depth` deep (for `depth` >= 1), each a different way."""
    if kind == "arrays":
        return "[" * depth + "]" * depth
    if kind == "objects":
        return '{"k":' * (depth - 1) + "{}" + "}" * (depth - 1)
    if kind == "mixed":
        opens = ['[1,"]",' if i % 2 else '{"[":' for i in range(depth)]
        closes = ["]" if i % 2 else "}" for i in reversed(range(depth))]
        return "".join(opens) + "null" + "".join(closes)
    if kind == "escaped quotes":  # a \" and a \\ before each level: the strings end where JSON says
        return '["\\"[\\\\",' * depth + "0" + "]" * depth
    if kind == "unclosed":  # what an attacker sends: only openings
        return "[" * depth
    raise ValueError(kind)


JSON_KINDS = ["arrays", "objects", "mixed", "escaped quotes", "unclosed"]
DEPTHS_OVER = [LIMIT + 1, LIMIT + 2, 3 * LIMIT, 3_000, 100_000]


@pytest.mark.parametrize("kind", JSON_KINDS)
def test_json_within_the_bound_decodes_and_is_measured_exactly(kind):
    for depth in range(1, LIMIT + 1):
        text = _json_shape(kind, depth)
        assert json_depth(text) == depth
        if kind != "unclosed":
            assert _container_depth(load_json(text, max_depth=LIMIT, where=SOURCE)) == depth
        else:
            assert "not JSON" in _refused(load_json, text, max_depth=LIMIT, where=SOURCE).reason


@pytest.mark.parametrize("depth", DEPTHS_OVER)
@pytest.mark.parametrize("kind", JSON_KINDS)
@pytest.mark.parametrize("wrapped", ["bare", "after text", "inside a valid prefix"])
def test_json_over_the_bound_is_refused_before_decoding(kind, depth, wrapped, decoders_forbidden):
    text = _json_shape(kind, depth)
    text = {"bare": text, "after text": " \n\t" + text, "inside a valid prefix": '{"a": [1, "x", ' + text}[
        wrapped
    ]
    refusal = _refused(load_json, text, max_depth=LIMIT, where=SOURCE)
    assert refusal.where == SOURCE and refusal.reason == f"JSON nested deeper than {LIMIT} levels"


@pytest.mark.parametrize("depth", [LIMIT + 1, 3_000, 100_000])
@pytest.mark.parametrize(
    "inside",
    [
        '"{}"',  # a plain string
        '"\\"{}"',  # after an escaped quote
        '"\\\\\\"{}\\\\"',  # after escaped backslashes and an escaped quote
        '"\\u005b{}"',  # after a \u escape
    ],
)
def test_brackets_inside_strings_never_count(inside, depth):
    brackets = "[{" * depth
    text = '{"key' + brackets + '": [' + inside.format(brackets) + "]}"
    assert json_depth(text) == 2
    value = load_json(text, max_depth=2, where=SOURCE)
    assert brackets in list(value.values())[0][0]


def test_decimal_and_constant_hooks_pass_through():
    assert load_json('{"a": 1.10}', parse_float=Decimal)["a"] == Decimal("1.10")

    def no_constants(name: str) -> Any:
        raise ValueError(f"non-finite JSON constant {name}")

    refusal = _refused(load_json, "[NaN]", parse_constant=no_constants, where="answer")
    assert refusal.reason == "not JSON (non-finite JSON constant NaN)"


@pytest.mark.parametrize("unit", ["a", "é", "中", "😀"])
def test_the_size_bound_counts_utf8_bytes_exactly(unit, decoders_forbidden):
    width = len(unit.encode())
    limit = 2 + 40 * width
    under = '"' + unit * 40 + '"'
    assert len(under.encode()) == limit
    over = '"' + unit * 40 + ' "'
    refusal = _refused(load_json, over, max_bytes=limit, where=SOURCE)
    assert refusal.reason == f"JSON text over the {limit:,}-byte limit"
    _refused(load_toml, "a = " + over, max_bytes=limit + 3, where=SOURCE)


@pytest.mark.parametrize("unit", ["a", "é", "中", "😀"])
def test_text_at_the_size_bound_decodes(unit):
    under = '"' + unit * 40 + '"'
    assert load_json(under, max_bytes=len(under.encode())) == unit * 40
    toml = "a = " + under
    assert load_toml(toml, max_bytes=len(toml.encode())) == {"a": unit * 40}


def test_bytes_and_non_text_are_read_or_refused_by_name():
    assert load_json(b'{"a": [1]}') == {"a": [1]}
    assert "not UTF-8 text (byte 1)" in str(_refused(load_json, b"[\xff]", where=SOURCE))
    assert "expected JSON text, got dict" in str(_refused(load_json, {"a": 1}, where=SOURCE))
    assert "expected TOML text, got NoneType" in str(_refused(load_toml, None, where=SOURCE))


def test_an_integer_too_long_for_python_is_refused_by_name():
    refusal = _refused(load_json, "1" * 5000, where=SOURCE)
    assert refusal.reason.startswith("not JSON (") and "\n" not in refusal.reason


def test_little_stack_left_is_a_refusal_not_a_recursion_error():
    text = _json_shape("arrays", 60)

    def at_depth(n: int) -> Any:
        return at_depth(n - 1) if n else load_json(text, where=SOURCE)

    limit, here = sys.getrecursionlimit(), len(traceback.extract_stack())
    try:
        sys.setrecursionlimit(here + 150)
        outcomes = []
        for n in range(0, 150, 5):
            try:
                outcomes.append(_container_depth(at_depth(n)))
            except Undecodable as refusal:
                outcomes.append(refusal.reason)
            except RecursionError:
                outcomes.append("recursion in the caller")  # the caller's own frames ran out
    finally:
        sys.setrecursionlimit(limit)
    assert 60 in outcomes
    assert set(outcomes) <= {60, "JSON nested too deep to decode here", "recursion in the caller"}


# ----------------------------------------------------------------------------- generated JSON

_TRICKY = st.text(alphabet=st.sampled_from(list("[]{}\"\\'#:,abc é\n\t\u2028")), max_size=12)
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | _TRICKY,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TRICKY, inner, max_size=3),
    max_leaves=30,
)


@SETTINGS
@given(value=_json_values, indent=st.sampled_from([None, 1]), ascii_only=st.booleans())
def test_generated_json_is_measured_exactly_and_decoded_as_json_would(value, indent, ascii_only):
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    depth = _container_depth(value)
    assert json_depth(text) == depth
    if depth <= LIMIT:
        assert load_json(text, max_depth=LIMIT, where=SOURCE) == value
    else:
        _refused(load_json, text, max_depth=LIMIT, where=SOURCE)


@SETTINGS
@given(text=st.text(alphabet=st.sampled_from(list("[]{}\"\\'#:,=.1aé\n \ud800")), max_size=200))
def test_any_text_decodes_or_raises_the_one_refusal(text):
    for load in (load_json, load_toml):
        try:
            load(text, max_depth=LIMIT, max_bytes=150, where=SOURCE)
        except Undecodable as refusal:
            assert "\n" not in str(refusal) and refusal.where == SOURCE


@SETTINGS
@given(
    prefix=st.text(alphabet=st.sampled_from(list("[{\\a1,: ")), max_size=20),
    depth=st.integers(LIMIT + 1, 5_000),
    opener=st.sampled_from(["[", '{"a":', "[0,", '["]",', '{"\\"}":']),
)
def test_generated_deep_json_never_reaches_the_decoder(prefix, depth, opener):
    text = prefix + opener * depth
    assert json_depth(text) >= depth
    real, decoded = json.loads, []
    try:
        bounded_decode.json.loads = lambda text, **kw: decoded.append(text) or real(text, **kw)
        _refused(load_json, text, max_depth=LIMIT, where=SOURCE)
    finally:
        bounded_decode.json.loads = real
    assert decoded == []


@SETTINGS
@given(text=st.text(alphabet=st.sampled_from(list('[]{}"\\a1,: ')), max_size=300))
def test_text_measured_over_the_bound_never_reaches_the_decoder(text):
    real, decoded = json.loads, []
    try:
        bounded_decode.json.loads = lambda text, **kw: decoded.append(text) or real(text, **kw)
        try:
            load_json(text, max_depth=2, where=SOURCE)
        except Undecodable:
            pass
    finally:
        bounded_decode.json.loads = real
    assert decoded == ([] if json_depth(text) > 2 else [text])


# ----------------------------------------------------------------------------- TOML


def _toml_string(form: str, content: str) -> str:
    """`content` written in one of TOML's four string forms, escaped only as that form needs."""
    if form == "basic":
        escaped = content.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        return f'"{escaped}"'
    if form == "literal":
        return "'" + content.replace("'", "").replace("\n", "") + "'"
    if form == "multi-line basic":
        out, quotes = [], 0
        for char in content.replace("\\", "\\\\"):
            quotes = quotes + 1 if char == '"' else 0
            if quotes == 3:  # a third quote in a row would close the string
                out.append('\\"')
                quotes = 0
            else:
                out.append(char)
        return '"""' + "".join(out) + '"""'  # one or two quotes may end the content
    if form == "multi-line literal":
        while "'''" in content:
            content = content.replace("'''", "''")
        return "'''" + content + "'''"
    raise ValueError(form)


STRING_FORMS = ["basic", "literal", "multi-line basic", "multi-line literal"]
_CONTENT = st.text(alphabet=st.sampled_from(list("[]{}\"'#\\=,a é\n")), max_size=10)
_COMMENT = st.text(alphabet=st.sampled_from(list("[]{}\"'#\\ =a")), max_size=8).map(lambda c: " #" + c)


@st.composite
def _toml_values(draw: st.DrawFn, depth: int) -> tuple[str, int]:
    """A TOML value and how deep its brackets nest."""
    if depth == 0 or draw(st.booleans()):
        if draw(st.booleans()):
            return _toml_string(draw(st.sampled_from(STRING_FORMS)), draw(_CONTENT)), 0
        scalar = st.integers(-99, 99) | st.floats(allow_nan=False, allow_infinity=False)
        dated = st.datetimes().map(lambda d: d.isoformat(timespec="milliseconds"))
        return str(draw(scalar | dated)), 0  # a float's or a time's dot is no dotted key
    items = [draw(_toml_values(depth - 1)) for _ in range(draw(st.integers(0, 3)))]
    inner = max((d for _, d in items), default=0) + 1
    if draw(st.booleans()):
        parts = [v + "," + (draw(_COMMENT) if draw(st.booleans()) else "") + "\n" for v, _ in items]
        return "[\n" + "".join(parts) + "]", inner
    return "{" + ", ".join(f"k{i} = {v}" for i, (v, _) in enumerate(items)) + "}", inner


@st.composite
def _toml_documents(draw: st.DrawFn) -> tuple[str, int]:
    lines, deepest = [], 0
    for i in range(draw(st.integers(1, 4))):
        value, depth = draw(_toml_values(LIMIT + 2))
        key = _toml_string("basic", f"key{i}[") if draw(st.booleans()) else f"key{i}"
        lines.append(f"{key} = {value}" + (draw(_COMMENT) if draw(st.booleans()) else ""))
        deepest = max(deepest, depth)
    if draw(st.booleans()):
        lines += ["", "[[table]] # [[[", "x = 1", "[[table]]", "x = '[[['"]
        deepest = max(deepest, 2)
    return "\n".join(lines) + "\n", deepest


@SETTINGS
@given(document=_toml_documents())
def test_generated_toml_is_measured_exactly_and_decoded_as_tomllib_would(document):
    text, depth = document
    assert toml_depth(text) == depth
    if depth <= LIMIT:
        assert load_toml(text, max_depth=LIMIT, where=SOURCE) == tomllib.loads(text)
    else:
        _refused(load_toml, text, max_depth=LIMIT, where=SOURCE)


@pytest.mark.parametrize("form", STRING_FORMS)
@pytest.mark.parametrize("depth", [LIMIT + 1, 3_000, 100_000])
def test_toml_brackets_in_strings_and_comments_never_count(form, depth):
    brackets = "[{" * depth
    text = f"a = [{_toml_string(form, brackets)}, 1] # {brackets}\n# {brackets}\nb = {{c = [[]]}}\n"
    assert toml_depth(text) == 3
    assert load_toml(text, max_depth=3, where=SOURCE)["a"][0].replace("\n", "") == brackets


@pytest.mark.parametrize("depth", DEPTHS_OVER)
@pytest.mark.parametrize("opener", ["[", "{a=", "[1,", "{a.b = ", "['''[''', "])
def test_deep_toml_is_refused_before_decoding(opener, depth, decoders_forbidden):
    text = 'title = "a config"\n# [ comments ]\nvalue = ' + opener * depth
    refusal = _refused(load_toml, text, max_depth=LIMIT, where="config file deep.toml")
    assert str(refusal) == f"config file deep.toml: TOML nested deeper than {LIMIT} levels"


@pytest.mark.parametrize("parts", [LIMIT + 2, 50_000])
@pytest.mark.parametrize(
    "template", ["{keys} = 1\n", "[{keys}]\nx = 1\n", "a = {{{keys} = 1}}\n", "[[{keys}]]\n"]
)
def test_a_key_of_too_many_dotted_parts_is_refused_before_decoding(template, parts, decoders_forbidden):
    """tomllib builds dotted keys without recursion but in quadratic time: 50,000 parts (100 KB)
    took over a minute."""
    keys = '"a.b".' + ".".join(["k"] * (parts - 1))
    refusal = _refused(load_toml, template.format(keys=keys), max_depth=LIMIT, where=SOURCE)
    assert refusal.reason == f"TOML nested deeper than {LIMIT} levels"


@pytest.mark.parametrize(
    "text",
    [
        "a = {b = {" + ".".join(["k"] * LIMIT) + " = 1}}\n",  # brackets and dots each within the bound
        "[" + ".".join(["t"] * (LIMIT // 2)) + "]\n" + ".".join(["k"] * (LIMIT // 2 + 2)) + " = 1\n",
        "[[t]]\n[[t.u]]\n" + "x." * (LIMIT - 4) + "y = [1]\n",
    ],
)
def test_tables_nested_by_dotted_keys_and_headers_are_measured_after_decoding(text):
    refusal = _refused(load_toml, text, max_depth=LIMIT, where=SOURCE)
    assert refusal.reason == f"TOML nested deeper than {LIMIT} levels"
    assert load_toml(text, max_depth=LIMIT + 1, where=SOURCE) == tomllib.loads(text)


def test_a_real_config_is_never_refused():
    text = '''\
# an eval run [of the ledger]
model = "baseline/oracle"
num-examples = 4

[env.taskset]
id = "beancount-ledger"
selectors = ["eval:0-3", 'train:1:hard']  # two populations [sic]
notes = """
A note with "quotes", ""two"", brackets [[{ and a # that is not a comment.
"""
raw = \'\'\'C:\\path\\[x]''\'\'\'
matrix = [[1, 2], [3, 4], [{a = [5]}]]

[[env.extra]]
inline = {x = {y = {z = []}}}
'''
    assert toml_depth(text) == 4
    value = load_toml(text, where="config file run.toml")
    assert value["env"]["taskset"]["raw"] == "C:\\path\\[x]''"
    assert value == tomllib.loads(text)


MIB = 1 << 20
WORST_CASES = {
    "letters": "a" * MIB,
    "escaped quotes": '"' + '\\"' * (MIB // 2),
    "quote, backslash": '"\\' * (MIB // 2),
    "multi-line basic": '"""' + '""x' * (MIB // 3),
    "multi-line literal": "'''" + "''x" * (MIB // 3),
    "unclosed multi-line": '"""' + "\\" * MIB,
    "comment marks": "#" * MIB,
    "openings": "[" * MIB,
    "pairs": "[]" * (MIB // 2),
    "commas": "a," * (MIB // 2),
    "quotes": '"' * MIB,
    "apostrophes": "'" * MIB,
    "quotes and newlines": '"\n' * (MIB // 2),
    "dots": "a." * (MIB // 2),
    "equals": "a=" * (MIB // 2),
}


@pytest.mark.parametrize("load", [load_json, load_toml])
@pytest.mark.parametrize("text", WORST_CASES.values(), ids=WORST_CASES.keys())
def test_the_pre_scan_takes_linear_time_on_its_worst_cases(text, load):
    """A regular expression that restarts at each position of a run takes minutes on 1 MiB; the
    pre-scan and the decoders finish each of these in well under a second (bound generous)."""
    started = time.perf_counter()
    try:
        load(text, max_bytes=2 * MIB, where=SOURCE)
    except Undecodable:
        pass
    assert time.perf_counter() - started < 10
