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
- ``key``: JSON of every other field the environment's task data adds (the answer key);
- ``config``: JSON of the taskset configuration the tasks came from;
- ``data``: the task data's own JSON, from which the task is rebuilt exactly.

``--check DIR`` re-loads the dataset written there, rebuilds each task from its ``data``
column and runs the environment's own ``validate`` on it (the key re-derived from what the
model is shown), and checks that every column agrees with the data it came from. It exits
non-zero naming the first tasks that fail.
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
from typing import Any

INPUT_FIELDS = ("files",)
"""Task-data fields that are served to the model beyond the prompt text."""
TEXT_FIELDS = ("system_prompt", "prompt")


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
        "inputs": _json({k: v for k, v in own.items() if k in INPUT_FIELDS}),
        "key": _json({k: v for k, v in own.items() if k not in INPUT_FIELDS}),
        "config": config_json,
        "data": data.model_dump_json(),
    }


def _taskset(env_id: str, knobs: list[str], num_tasks: int) -> Any:
    """The taskset `eval` would build for `env_id` and `knobs`, bounded to `num_tasks`."""
    import verifiers.v1 as vf

    from piv_core.cli import _eval_config

    config = _eval_config([env_id, "-n", str(num_tasks), *knobs])
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


def _tasks_of(rows: Iterable[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], Any]]:
    """Each row with the task rebuilt from its ``data`` column by its environment's taskset."""
    import verifiers.v1 as vf

    from piv_core.cli import _eval_config

    cache: dict[tuple[str, str], Any] = {}
    for row in rows:
        where = (row["env_id"], row["config"])
        if where not in cache:
            config = _eval_config([row["env_id"], "-n", "1"]).env.taskset
            config = type(config).model_validate_json(row["config"])
            cache[where] = (config, type(vf.load_taskset(config)).task_type())
        config, task_type = cache[where]
        data = task_type.data_type().model_validate_json(row["data"])
        yield row, task_type(data, config.task)


def problems(rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    """Why each failing row fails: its columns disagree with its data, or its key does not validate."""

    async def valid(task: Any) -> bool:
        return bool(await task.validate(None))

    for row, task in _tasks_of(rows):
        again = row_of(row["env_id"], row["env_version"], row["config"], task.data)
        if again != row:
            differing = sorted(k for k in row if again.get(k) != row[k])
            yield f"{row['task_id']}: columns {differing} disagree with its data"
        elif not asyncio.run(valid(task)):
            yield f"{row['task_id']}: its key does not validate"


def check(out: Path) -> tuple[int, list[str]]:
    """Re-load the dataset under `out` and re-validate every task; (rows checked, problems)."""
    from datasets import load_from_disk

    dataset = load_from_disk(str(out / "dataset"))
    found = list(problems(dataset))
    return len(dataset), found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="piv-export",
        description="Write an environment's tasks to JSONL and a Hugging Face dataset, or check an export.",
        epilog="Taskset knobs are passed as for eval, e.g. --env.taskset.level 2.",
    )
    parser.add_argument("env_id", nargs="?", help="the environment id")
    parser.add_argument("-n", "--num-tasks", type=int, default=100, help="tasks to write (default 100)")
    parser.add_argument("-o", "--output", type=Path, help="the directory to write")
    parser.add_argument("--check", type=Path, metavar="DIR", help="re-load and re-validate an export")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args, knobs = parser.parse_known_args(argv)
    if args.check:
        count, found = check(args.check)
        for line in found[:20]:
            print(line)
        print(f"export check: {count - len(found)}/{count} tasks valid in {args.check}")
        if found or not count:
            raise SystemExit(1)
        return
    if not args.env_id or not args.output:
        parser.error("give an environment id and -o DIR (or --check DIR)")
    if args.num_tasks < 1:
        parser.error(f"-n must be at least 1, got {args.num_tasks}")
    written = export(args.env_id, args.num_tasks, args.output, knobs, progress=not args.no_progress)
    print(f"export: {written} tasks of {args.env_id} -> {args.output}/tasks.jsonl, {args.output}/dataset")
    if written < args.num_tasks:
        print(f"export: the taskset holds only {written} tasks", file=sys.stderr)


if __name__ == "__main__":
    main()
