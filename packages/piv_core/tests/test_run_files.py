"""Run readers on hand-edited runs: every corruption of a real trace record, at every level, is
either read (and then every report renders it) or refused with the file, the line and the field.

The base record is a real verifiers trace (`piv_core.testing.score_reply` on a task of
au-bas-reconciliation-v1, dumped as verifiers writes it), with a model call and a tool call added.
Each case replaces one value anywhere in it with a value of another type (or a non-finite or
huge number), and runs `summarize` (table, ``--by`` groups with a median, ``--html``) and
`compare` in-process: no exception may escape them but their own exit.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from piv_core.cli.commands import summarize_main
from piv_core.runs import report
from piv_core.runs.compare import main as compare_main
from piv_core.runs.files import (
    MAX_DEPTH,
    RunFileError,
    iter_records,
    open_regular,
)
from piv_core.runs.reading import natural_key, read_eval_run, read_validate_run
from piv_core.testing import score_reply

WRONG: tuple[Any, ...] = (None, True, -3, 2.5, "x", [], {}, [1], {"k": [None]}, 10**30)
NON_FINITE = (math.nan, math.inf, -math.inf, 1e300)


def _episode() -> dict[str, Any]:
    from au_bas_reconciliation_v1.taskset import AuBasConfig, AuBasTaskset

    task = next(iter(AuBasTaskset(AuBasConfig(num_transactions=4))))
    trace = score_reply(task, "<answer>{}</answer>").trace.model_dump(mode="json")
    trace["calls"] = [{"model": "m", "usage": {"completion_tokens": 5, "prompt_tokens": 9}}]
    trace["nodes"].append(
        {
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}],
            }
        }
    )
    trace["info"] = {"family": "a"}
    return {
        "id": "e1",
        "ok": True,
        "is_timeout": False,
        "errors": [],
        "traces": [trace],
        "num_output_tokens": 5,
    }


BASE = _episode()


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path in `value` (list elements: the first only), parents before children."""
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, (*prefix, key))
    elif isinstance(value, list) and value:
        found += _paths(value[0], (*prefix, 0))
    return found


def _replaced(record: Any, path: tuple, new: Any) -> Any:
    out = copy.deepcopy(record)
    if not path:
        return new
    node = out
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = new
    return out


def _cases() -> list[tuple[str, Any]]:
    cases = []
    for path in _paths(BASE):
        node = BASE
        for part in path:
            node = node[part]
        values = [v for v in WRONG if type(v) is not type(node)]
        if isinstance(node, int | float) and not isinstance(node, bool):
            values += NON_FINITE
        cases += [
            (f"{'.'.join(map(str, path)) or 'record'} = {v!r}", _replaced(BASE, path, v)) for v in values
        ]
    return cases


CASES = _cases()


def _write(directory: Path, *records: Any) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    lines = [r if isinstance(r, str) else json.dumps(r, allow_nan=True) for r in records]
    (directory / "traces.jsonl").write_text("\n".join(lines) + "\n")
    return directory


def _commands(run: Path, good: Path, out: Path) -> list[tuple[str, Any, list[str]]]:
    return [
        ("summarize", summarize_main, [str(run), "--no-png", "--by", "family", "--median", "parsed"]),
        ("summarize", summarize_main, [str(run), "--no-png", "--html", str(out / "r.html")]),
        ("compare", compare_main, [str(good), str(run), "--resamples", "20"]),
    ]


def _run(main: Any, argv: list[str]) -> int:
    try:
        main(argv)
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else 1
    return 0


def test_the_matrix_is_large_and_reaches_every_level():
    assert len(CASES) > 800
    assert max(len(p) for p in _paths(BASE)) >= 6  # traces.0.nodes.N.message.tool_calls.0.function...


def test_every_corruption_is_read_or_refused_naming_the_file_and_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(report, "chart_svg", lambda runs: None)  # the chart reads only validated floats
    good = _write(tmp_path / "good", BASE)
    refused = read = 0
    for number, (label, record) in enumerate(CASES):
        run = _write(tmp_path / f"c{number}", BASE, record)
        for name, main, argv in _commands(run, good, tmp_path):
            code = _run(main, argv)
            err = capsys.readouterr().err
            if code:
                assert code == 2, (label, name, err)
                lines = err.strip().splitlines()
                assert lines[-1].startswith(f"{name}: {run / 'traces.jsonl'}:2: "), (label, name, err)
                refused += 1
            else:
                read += 1
    assert refused > 500 and read > 100, (refused, read)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_non_finite_reward_is_refused_by_name(tmp_path, bad):
    record = _replaced(BASE, ("traces", 0, "rewards", "bas_correct", "score"), bad)
    run = _write(tmp_path / "r", BASE, record)
    with pytest.raises(RunFileError) as refused:
        read_eval_run(run)
    assert str(refused.value).startswith(f"{run / 'traces.jsonl'}:2: traces[0].rewards.bas_correct.score: ")
    assert "finite" in str(refused.value)


def test_bad_lines_are_named(tmp_path):
    cases = {
        "[1, 2]": "a record must be a JSON object, not list",
        '{"ok": tru': "not JSON",
        "[" * 100_000: "nested deeper than",
        "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1): "nested deeper than",
        '{"ok": true, "traces": "x"}': "traces: Input should be a valid list",
        '{"ok": 1}': "ok: Input should be a valid boolean",
        "1" * 5000: "not JSON",
    }
    for text, expected in cases.items():
        path = _write(tmp_path / str(len(text)), BASE, text) / "traces.jsonl"
        with pytest.raises(RunFileError, match=expected) as refused:
            list(iter_records(path))
        assert str(refused.value).startswith(f"{path}:2: ")
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "traces.jsonl").write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(RunFileError, match=r"traces.jsonl:1: not UTF-8"):
        read_eval_run(garbage)


def test_only_regular_files_are_opened(tmp_path):
    import os

    link = tmp_path / "zero.jsonl"
    link.symlink_to("/dev/zero")
    with pytest.raises(
        RunFileError, match=r"a link to /dev/zero\): is a character device, not a regular file"
    ):
        open_regular(link)
    with pytest.raises(RunFileError, match="is a directory"):
        open_regular(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(RunFileError, match="is a fifo"):
        open_regular(fifo)  # refused at once: nothing writes to it
    sparse = tmp_path / "huge"
    with sparse.open("wb") as handle:
        handle.truncate(600 * 2**20)
    with pytest.raises(RunFileError, match="over the 536,870,912-byte limit"):
        open_regular(sparse)
    with pytest.raises(FileNotFoundError):
        open_regular(tmp_path / "missing")


def test_an_empty_run_is_refused_and_a_validate_summary_is_checked(tmp_path):
    empty = _write(tmp_path / "empty", " ")
    with pytest.raises(RunFileError, match="holds no episode record"):
        read_eval_run(empty)
    (tmp_path / "summary.json").write_text('{"total": "5"}')
    with pytest.raises(RunFileError, match=r"summary.json: total: Input should be a valid integer"):
        read_validate_run(tmp_path)


def test_natural_key_never_converts_a_long_or_non_ascii_number():
    assert sorted(["t-10", "t-2", "t-" + "9" * 5000, "t-1"], key=natural_key)[:3] == ["t-1", "t-2", "t-10"]
    assert natural_key("x²") == [(1, "x²")]
