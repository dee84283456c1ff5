"""`summarize`, `summarize --html` and `compare` on broken run directories, run as a user runs them:
each corruption of ``traces.jsonl`` × each command ends with one line naming the file and exit 2,
never a traceback, and never reads more than the limits allow (a link to ``/dev/zero`` is refused
before a byte is read). The type-level matrix is `packages/piv_core/tests/test_run_files.py`."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from piv_core.runs.files import MAX_DEPTH, MAX_LINE_BYTES
from piv_core.testing import run_command

GOOD = {
    "ok": True,
    "task": {"data": {"id": "t-1"}},
    "traces": [
        {"task": {"data": {"id": "t-1"}}, "ok": True, "rewards": {"r": {"score": 1.0, "weight": 1.0}}}
    ],
}
LINE = json.dumps(GOOD)


def _text(path: Path, text: str) -> None:
    path.write_text(text)


CORRUPTIONS = {
    "truncated": lambda p: _text(p, LINE + "\n" + LINE[: len(LINE) // 2] + "\n"),
    "not an object": lambda p: _text(p, LINE + "\n[1, 2]\n"),
    "reward NaN": lambda p: _text(p, LINE.replace('"score": 1.0', '"score": NaN') + "\n"),
    "reward Infinity": lambda p: _text(p, LINE.replace('"score": 1.0', '"score": -Infinity') + "\n"),
    "reward a string": lambda p: _text(p, LINE.replace('"score": 1.0', '"score": "1.0"') + "\n"),
    "traces an object": lambda p: _text(
        p, LINE.replace('"traces": [', '"traces": {"x": ').replace("}]}", "}}}") + "\n"
    ),
    "huge line": lambda p: _text(p, '{"x": "' + "a" * (MAX_LINE_BYTES + 1) + '"}\n'),
    "deep nesting": lambda p: _text(p, '{"x": ' + "[" * 200_000 + "]" * 200_000 + "}\n"),
    "too deep": lambda p: _text(p, '{"x": ' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}\n"),
    "binary garbage": lambda p: p.write_bytes(os.urandom(4096).replace(b"\n", b"\xff")),
    "empty": lambda p: _text(p, ""),
    "link to /dev/zero": lambda p: p.symlink_to("/dev/zero"),
    "a directory": lambda p: p.mkdir(),
    "a fifo": lambda p: os.mkfifo(p),
    "missing": lambda p: None,
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runs")
    made = {}
    for name, corrupt in {"good": lambda p: _text(p, LINE + "\n"), **CORRUPTIONS}.items():
        directory = root / name.replace(" ", "-").replace("/", "")
        directory.mkdir()
        corrupt(directory / "traces.jsonl")
        made[name] = directory
    return made


COMMANDS = {
    "summarize": lambda run, good, out: ("summarize", str(run), "--no-png"),
    "summarize --html": lambda run, good, out: ("summarize", str(run), "--no-png", "--html", str(out)),
    "compare (as B)": lambda run, good, out: ("compare", str(good), str(run), "--resamples", "50"),
    "compare (as A)": lambda run, good, out: ("compare", str(run), str(good), "--resamples", "50"),
}


def test_a_good_run_is_read_by_every_command(runs, tmp_path):
    for name, argv in COMMANDS.items():
        code, output = run_command(*argv(runs["good"], runs["good"], tmp_path / "r.html"))
        assert code == 0, (name, output)


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_every_command_names_the_file_and_exits_2(runs, tmp_path, corruption):
    for name, argv in COMMANDS.items():
        started = time.monotonic()
        code, output = run_command(*argv(runs[corruption], runs["good"], tmp_path / "r.html"), timeout=60)
        elapsed = time.monotonic() - started
        assert "Traceback" not in output, (name, output)
        assert code == 2, (corruption, name, output)
        lines = output.strip().splitlines()
        assert len(lines) == 1 and f"{runs[corruption] / 'traces.jsonl'}" in lines[0], (
            corruption,
            name,
            output,
        )
        assert lines[0].startswith(argv(runs[corruption], runs["good"], tmp_path)[0] + ": ")
        assert elapsed < 30, (corruption, name, elapsed)
        assert not (tmp_path / "r.html").exists()
