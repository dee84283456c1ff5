"""The callers of `piv_core.parsing.bounded_decode`: the answer reader, the operator's config file and
the run-file reader refuse deep or large text before any decoder runs, each in its own terms."""

import pytest
from piv_core.parsing import bounded_decode
from piv_core.parsing.answer import json_answer


def test_the_answer_reader_returns_none_for_deep_or_large_json(decoders_forbidden):
    assert json_answer("<answer>" + "[" * 100_000 + "</answer>") is None
    assert json_answer("<answer>" + '{"a": [' * 3_000 + "</answer>") is None
    assert json_answer('<answer>"' + "x" * (bounded_decode.ANSWER_MAX_BYTES + 1) + '"</answer>') is None


def test_an_operator_config_too_deep_is_one_line_naming_the_file(tmp_path):
    from piv_core.cli.commands import MAX_CONFIG_BYTES, _read_config

    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    assert 100_000 < deep.stat().st_size < MAX_CONFIG_BYTES
    with pytest.raises(SystemExit) as refusal:
        _read_config(deep)
    message = str(refusal.value)
    assert message == f"config file {deep}: TOML nested deeper than 64 levels"
    dotted = tmp_path / "dotted.toml"
    dotted.write_text(".".join(["a"] * 50_000) + " = 1\n")
    with pytest.raises(SystemExit, match=f"^config file {dotted}: TOML nested deeper than 64 levels$"):
        _read_config(dotted)
    bad = tmp_path / "bad.toml"
    bad.write_text("level = [\n")
    with pytest.raises(SystemExit, match=f"^config file {bad}: not TOML \\("):
        _read_config(bad)
    good = tmp_path / "good.toml"
    good.write_text('[env.taskset]\nlevel = 2\nnote = "[[["\n')
    assert _read_config(good) == {"env": {"taskset": {"level": 2, "note": "[[["}}}


def test_a_deep_run_file_line_is_refused_before_decoding(decoders_forbidden):
    from piv_core.runs.files import MAX_DEPTH, RunFileError, parse_json

    for text in ("[" * 100_000, '{"a":' * (MAX_DEPTH + 1) + "1" + "}" * (MAX_DEPTH + 1)):
        with pytest.raises(
            RunFileError, match=f"^traces.jsonl:3: JSON nested deeper than {MAX_DEPTH} levels$"
        ):
            parse_json(text, "traces.jsonl:3")
