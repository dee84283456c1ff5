"""How long each rung's prompt is, in bytes and (given a tokenizer endpoint) in a model's tokens.

    uv run python bench/prompt_tokens.py [--tasks N] [--env ID ...] [--tokenize URL]

For each environment and rung of its ladder: N tasks of the train split, their system prompt
and prompt folded together as a harness without a system role sends them, measured in UTF-8
bytes (median and largest). For beancount-ledger the episode's context also holds what the tools
return, so the ledger file's bytes (the one file returned whole) are shown beside the prompt:
a model reads it at least once.

``--tokenize URL`` counts tokens with a served model's own tokenizer: llama-cpp-python's
``/extras/tokenize`` (``{"input": text}``) or llama.cpp's ``/tokenize`` (``{"content": text}``);
without it only bytes are shown. Worlds of beancount-ledger are derived under a fixed dummy
secret, as in ``bench/task_hashes.py``, so no release is needed.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import urllib.request

import verifiers.v1 as vf
from piv_core.tasksets.prompt_size import prompt_bytes

TEXT = ("au-bas-reconciliation-v1", "us-sut-reconciliation-v1", "geo-reprojection-v1")
DUMMY_SECRET = b"prompt-tokens-dummy-secret-0123456789abcdef"


def counter(url: str | None):
    """A function counting the tokens of a text at `url`, or None (bytes only)."""
    if url is None:
        return None
    field = "content" if url.rstrip("/").endswith("/tokenize") and "/extras/" not in url else "input"

    def count(text: str) -> int:
        body = json.dumps({field: text}).encode()
        request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as response:
            return len(json.load(response)["tokens"])

    return count


def _levels(env_id: str) -> list[int]:
    from piv_core.cli.signal_health import levels_of

    return levels_of(env_id)


def text_prompts(env_id: str, level: int, n: int) -> list[tuple[str, str]]:
    taskset = importlib.import_module(f"{env_id.replace('-', '_')}.taskset")
    config = vf.taskset_config_type(env_id)(level=level)
    return [(d.system_prompt, d.prompt) for d in (taskset.make_task_data(config, i) for i in range(n))]


def beancount_prompts(level: int, n: int) -> tuple[list[tuple[str, str]], list[int]]:
    from beancount_ledger import ladder, taskset

    data = [taskset.make_task_data(ladder.levelled(f"train:{i}", level), DUMMY_SECRET) for i in range(n)]
    ledgers = [len(d.files["ledger.beancount"].encode()) for d in data]
    return [(d.system_prompt, d.prompt) for d in data], ledgers


def _spread(values: list[int]) -> str:
    return f"{statistics.median(values):,.0f} / {max(values):,}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=20, help="tasks per rung")
    parser.add_argument("--env", action="append", help="environment id (default: all four)")
    parser.add_argument("--tokenize", help="a tokenizer endpoint of the served model")
    args = parser.parse_args()
    count = counter(args.tokenize)
    head = ["environment", "rung", "prompt bytes (median / max)"]
    head += ["prompt tokens (median / max)"] if count else []
    head += ["ledger file bytes (median / max)"]
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for env_id in args.env or [*TEXT, "beancount-ledger"]:
        for level in _levels(env_id):
            files: list[int] = []
            if env_id == "beancount-ledger":
                prompts, files = beancount_prompts(level, args.tasks)
            else:
                prompts = text_prompts(env_id, level, args.tasks)
            cells = [env_id, str(level), _spread([prompt_bytes(s, p) for s, p in prompts])]
            if count:
                cells.append(_spread([count(f"{s}\n\n{p}") for s, p in prompts]))
            cells.append(_spread(files) if files else "–")
            print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
