"""``piv-export``: an environment's tasks written out as a dataset, and checked back in.

    piv-export <env-id> -n N -o DIR [--env.taskset.<knob> VALUE ...]
    piv-export --check DIR

The taskset is built from the same knobs ``eval`` takes (parsed by verifiers' own config
parser, so a bad knob fails the same way, naming it). N tasks are written to
``DIR/tasks.jsonl`` and, as a Hugging Face `datasets` dataset, to ``DIR/dataset`` (one row per
task, every column a string or an integer so rows of any environment share one schema):

- ``env_id``, ``env_version`` (the installed distribution's version), ``task_id``, ``idx``,
  ``name``;
- ``system_prompt`` and ``prompt``: the text the model is shown;
- ``inputs``: JSON of what the model is served beyond the prompt text (the task data's
  ``files``, where it has them: beancount-ledger's tools serve them);
- ``level``: the rung the task was drawn at, 0 for a task drawn at no rung (a curriculum's
  difficulty);
- ``key``: JSON of every other field the environment's task data adds (the answer key);
- ``config``: JSON of the taskset configuration the tasks came from;
- ``data``: the task data's own JSON, from which the task is rebuilt exactly.

``--check DIR`` re-loads the dataset written there, rebuilds each task from its ``data``
column and runs the environment's own ``validate`` on it (the key re-derived from what the
model is shown), and checks that every column agrees with the data it came from. It exits
non-zero with one line per failing row (the first `SHOWN`), naming the row and what fails.

A dataset is read as untrusted input: each row is first checked against `Row` (its columns
and their types, each text at most `MAX_CELL` characters), and its ``env_id`` and the ``id``
of its ``config`` must both name a registered environment of this suite
(`piv_core.plugins.environment_ids`, read from metadata without importing anything) before any
module is resolved, so no row can make the check import a module it names. A bad row is a
line of the report, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import itertools
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from piv_core.parsing.bounded_decode import (
    OPERATOR_FILE_MAX_BYTES,
    OPERATOR_FILE_MAX_DEPTH,
    Undecodable,
    load_json,
)
from piv_core.plugins import environment_ids
from piv_core.tasksets.knobs import argument, shown

INPUT_FIELDS = ("files",)
"""Task-data fields that are served to the model beyond the prompt text."""
LEVEL_FIELD = "level"
"""The task-data field of the rung a task was drawn at (`piv_core.tasksets.ladder`), its own column."""
TEXT_FIELDS = ("system_prompt", "prompt")
MAX_CELL = 16 << 20
"""The longest text a dataset cell may hold (16 Mi characters: the widest task of any
environment, its prompt and data together, is well under 1 MiB)."""
SHOWN = 20
"""Failing rows listed by ``--check``; the rest are counted."""

Text = Annotated[str, Field(max_length=MAX_CELL)]


class Row(BaseModel):
    """One dataset row, as `row_of` writes it: every column present, of its type, and no other."""

    model_config = ConfigDict(strict=True, extra="forbid")

    env_id: Annotated[str, Field(max_length=200)]
    env_version: Annotated[str, Field(max_length=200)]
    task_id: Text
    idx: Annotated[int, Field(ge=0)]
    name: Text
    system_prompt: Text
    prompt: Text
    level: Annotated[int, Field(ge=0)]
    inputs: Text
    key: Text
    config: Text
    data: Text


class NotAnExport(ValueError):
    """The directory holds no dataset `export` wrote."""


def admitted(env_id: Any) -> str:
    """`env_id` when it is a registered environment of this suite; else ValueError naming the
    id and the suite. Nothing is imported: the ids come from the entry points' metadata."""
    suite = environment_ids()
    if not isinstance(env_id, str) or env_id not in suite:
        raise ValueError(
            f"{shown(env_id)} is not a registered environment of this suite ({', '.join(suite)})"
        )
    return env_id


def _first_error(error: ValidationError) -> str:
    first = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"])
    more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
    return f"{where + ': ' if where else ''}{first['msg']}{more}"


def _base_fields() -> set[str]:
    from piv_core.compat import TaskData

    return set(TaskData.model_fields)


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def env_version(env_id: str) -> str:
    try:
        return importlib.metadata.version(env_id)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def row_of(env_id: str, version: str, config_json: str, data: Any) -> dict[str, Any]:
    """One dataset row for task data `data`."""
    dumped = data.model_dump(mode="json")
    own = {k: v for k, v in dumped.items() if k not in _base_fields()}
    return {
        "env_id": env_id,
        "env_version": version,
        "task_id": str(dumped["id"]),
        "idx": int(dumped["idx"]),
        "name": str(dumped.get("name") or ""),
        "system_prompt": str(dumped.get("system_prompt") or ""),
        "prompt": str(dumped.get("prompt") or ""),
        "level": int(own.pop(LEVEL_FIELD, None) or 0),
        "inputs": _json({k: v for k, v in own.items() if k in INPUT_FIELDS}),
        "key": _json({k: v for k, v in own.items() if k not in INPUT_FIELDS}),
        "config": config_json,
        "data": data.model_dump_json(),
    }


def _taskset(env_id: str, knobs: list[str], num_tasks: int) -> Any:
    """The taskset `eval` would build for `env_id` and `knobs`, bounded to `num_tasks`."""
    import verifiers.v1 as vf

    from piv_core.cli.commands import _eval_config

    config = _eval_config([admitted(env_id), "-n", str(num_tasks), *knobs])
    return config.env.taskset, itertools.islice(vf.load_taskset(config.env.taskset), num_tasks)


def export(env_id: str, num_tasks: int, out: Path, knobs: list[str], progress: bool = True) -> int:
    """Write `num_tasks` tasks of `env_id` under `knobs` to `out`; returns the number written."""
    import datasets
    from datasets import Dataset
    from tqdm import tqdm

    if not progress:
        datasets.disable_progress_bars()

    config, taskset = _taskset(env_id, knobs, num_tasks)
    version = env_version(env_id)
    config_json = config.model_dump_json()
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    with (out / "tasks.jsonl").open("w", encoding="utf-8") as jsonl:
        for task in tqdm(
            taskset, total=num_tasks, desc=f"export {env_id}", unit="task", disable=not progress
        ):
            row = row_of(env_id, version, config_json, task.data)
            jsonl.write(json.dumps(row, ensure_ascii=False) + "\n")
            rows.append(row)
    Dataset.from_list(rows).save_to_disk(str(out / "dataset"))
    return len(rows)


class _Rebuilder:
    """Tasks rebuilt from rows: the taskset configuration of each (environment, config) once."""

    def __init__(self) -> None:
        self.cache: dict[tuple[str, str], Any] = {}

    def task(self, row: Row) -> Any:
        """The task `row` describes; ValueError naming the column that does not hold."""
        import verifiers.v1 as vf

        from piv_core.cli.commands import _eval_config

        where = (row.env_id, row.config)
        if where not in self.cache:
            try:
                decoded = load_json(
                    row.config,
                    max_depth=OPERATOR_FILE_MAX_DEPTH,
                    max_bytes=OPERATOR_FILE_MAX_BYTES,
                    where="config",
                )
            except Undecodable as error:
                raise ValueError(str(error)) from None
            if not isinstance(decoded, dict):
                raise ValueError("config: not a JSON object")
            config_id = decoded.get("id")
            if config_id != row.env_id:
                raise ValueError(f"config: its id {shown(config_id)} is not the row's env_id {row.env_id!r}")
            base = _eval_config([row.env_id, "-n", "1"]).env.taskset
            try:
                config = type(base).model_validate_json(row.config)
            except ValidationError as error:
                raise ValueError(f"config: {_first_error(error)}") from None
            if config.id != row.env_id:  # what resolves the taskset below, as pydantic read it
                raise ValueError(f"config: its id {shown(config.id)} is not the row's env_id {row.env_id!r}")
            self.cache[where] = (config, type(vf.load_taskset(config)).task_type())
        config, task_type = self.cache[where]
        try:
            data = task_type.data_type().model_validate_json(row.data)
        except ValidationError as error:
            raise ValueError(f"data: {_first_error(error)}") from None
        return task_type(data, config.task)


def _problem(number: int, raw: Any, rebuild: _Rebuilder) -> str | None:
    """Why row `number` fails, or None when it holds."""

    async def valid(task: Any) -> bool:
        return bool(await task.validate(None))

    if not isinstance(raw, dict):
        return f"row {number}: not a record of columns ({type(raw).__name__})"
    try:
        row = Row.model_validate(raw)
    except ValidationError as error:
        return f"row {number}: {_first_error(error)}"
    try:
        admitted(row.env_id)
    except ValueError as error:
        return f"row {number} ({shown(row.task_id)}): env_id: {error}"
    try:
        task = rebuild.task(row)
    except ValueError as error:
        return f"row {number} ({shown(row.task_id)}): {error}"
    again = row_of(row.env_id, row.env_version, row.config, task.data)
    if again != row.model_dump():
        differing = sorted(k for k in again if again[k] != getattr(row, k))
        return f"row {number} ({row.task_id}): columns {differing} disagree with its data"
    try:
        holds = asyncio.run(valid(task))
    except Exception as error:  # the environment's own check failed on this row: reported, not raised
        return f"row {number} ({row.task_id}): its key could not be checked ({type(error).__name__}: {error})"
    return None if holds else f"row {number} ({row.task_id}): its key does not validate"


def problems(rows: Iterable[Any]) -> Iterator[str]:
    """One line per failing row: what in it is malformed, names no environment of this suite,
    disagrees with its data, or does not validate."""
    rebuild = _Rebuilder()
    for number, row in enumerate(rows):
        if (problem := _problem(number, row, rebuild)) is not None:
            yield problem


def check(out: Path) -> tuple[int, list[str]]:
    """Re-load the dataset under `out` and re-validate every task; (rows checked, problems).
    Raises `NotAnExport` when `out` holds no dataset."""
    from datasets import load_from_disk

    where = out / "dataset"
    if not where.is_dir():
        raise NotAnExport(f"{where} is not a directory; give the -o DIR of an export")
    try:
        dataset = load_from_disk(str(where))
        count = len(dataset)
    except Exception as error:  # whatever the loader raises on a directory it cannot read
        raise NotAnExport(
            f"{where} is not a dataset export wrote ({type(error).__name__}: {error})"
        ) from None
    found = list(problems(dataset))
    return count, found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="piv-export",
        description="Write an environment's tasks to JSONL and a Hugging Face dataset, or check an export.",
        epilog="Taskset knobs are passed as for eval, e.g. --env.taskset.level 2.",
    )
    parser.add_argument("env_id", nargs="?", help="the environment id")
    parser.add_argument(
        "-n", "--num-tasks", type=argument(least=1), default=100, help="tasks to write (default 100)"
    )
    parser.add_argument("-o", "--output", type=Path, help="the directory to write")
    parser.add_argument("--check", type=Path, metavar="DIR", help="re-load and re-validate an export")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args, knobs = parser.parse_known_args(argv)
    if args.check:
        try:
            count, found = check(args.check)
        except NotAnExport as error:
            raise SystemExit(f"export check: {error}") from None
        for line in found[:SHOWN]:
            print(line)
        if len(found) > SHOWN:
            print(f"... and {len(found) - SHOWN} more failing rows")
        print(f"export check: {count - len(found)}/{count} tasks valid in {args.check}")
        if found or not count:
            raise SystemExit(1)
        return
    if not args.env_id or not args.output:
        parser.error("give an environment id and -o DIR (or --check DIR)")
    try:
        admitted(args.env_id)
    except ValueError as error:
        parser.error(f"environment {error}")
    written = export(args.env_id, args.num_tasks, args.output, knobs, progress=not args.no_progress)
    print(f"export: {written} tasks of {args.env_id} -> {args.output}/tasks.jsonl, {args.output}/dataset")
    if written < args.num_tasks:
        print(f"export: the taskset holds only {written} tasks", file=sys.stderr)


if __name__ == "__main__":
    main()
