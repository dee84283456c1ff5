"""Every character a task's prompts show is one `validate` renders again, so no text a model reads can
disagree with the key unnoticed: changing any one of them fails `validate`.

- Tax tasks: the system prompt whole, and the user prompt outside its ledger block and its business's
  name (the quarter's dates in the header, the place, the count of rows, the figures asked, a worksheet
  line, the closing sentence), rendered from what the prompt states. The business's name is free text
  that enters neither the key nor the rules; a change inside the ledger block is a different ledger,
  which `validate` holds to its key (each environment's own tests).
- geo tasks: both prompts whole, rendered from the task's parts, scoring and knobs (the numbers the
  prompt states then give every part's key again).
- beancount-ledger worlds: both prompts whole, the rung's prompts rendered from the world's files, its
  company and its month (the quoted files and the statement view included).
"""

from __future__ import annotations

import asyncio
import random

import pytest
from au_bas_reconciliation_v1 import taskset as au_taskset
from au_bas_reconciliation_v1.levels import RUNGS as AU_RUNGS
from beancount_ledger import ladder as ledger_ladder
from beancount_ledger import taskset as ledger_taskset
from geo_reprojection_v1 import taskset as geo_taskset
from geo_reprojection_v1.levels import RUNGS as GEO_RUNGS
from us_sut_reconciliation_v1 import taskset as us_taskset
from us_sut_reconciliation_v1.levels import RUNGS as US_RUNGS

ENVIRONMENTS = {
    "au-bas": (au_taskset.AuBasConfig, au_taskset.make_task_data, au_taskset.AuBasTask, AU_RUNGS, " Pty Ltd"),
    "us-sut": (us_taskset.UsSutConfig, us_taskset.make_task_data, us_taskset.UsSutTask, US_RUNGS, ", "),
}
CASES = [
    (name, level)
    for name, (_, _, _, rungs, _) in ENVIRONMENTS.items()
    for level in sorted(rungs)
    if rungs[level]["num_rows" if name == "us-sut" else "num_transactions"] <= 30
]


def _other(char: str) -> str:
    """A character of the same kind as `char`, never `char` itself."""
    if char.isdigit():
        return str((int(char) + 1) % 10)
    if char.isalpha():
        return "b" if char.lower() == "a" else "a"
    return "#" if char != "#" else "%"


def _shown(text: str, name_end: str) -> list[int]:
    """The positions of `text` outside its csv ledger block and the business's name (the first line
    from ``Business: `` up to `name_end`)."""
    name_from = len("Business: ")
    name_to = text.index(name_end, name_from)
    block_from = text.index("```csv\n")
    block_to = text.index("\n```", block_from + 1) + len("\n```")
    return [i for i in range(len(text)) if not (name_from <= i < name_to or block_from <= i < block_to)]


def _assert_each_change_fails(task_type, data, field: str, positions: list[int], *label) -> None:
    """Every copy of `data` with one character of its `field` (``prompt`` or ``system_prompt``)
    changed, at each of `positions`, fails `validate`."""
    text = _texts(data)[field]
    for i in positions:
        tampered = data.model_copy(update={field: text[:i] + _other(text[i]) + text[i + 1 :]})
        assert not asyncio.run(task_type(tampered).validate(None)), (*label, field, text[i - 20 : i + 20])


def _texts(data) -> dict[str, str]:
    return {"prompt": data.prompt_text, "system_prompt": data.system_prompt}


@pytest.mark.parametrize(("name", "level"), CASES)
def test_a_changed_character_outside_the_ledger_fails_validate(name, level):
    config, make, task_type, _, name_end = ENVIRONMENTS[name]
    rng = random.Random(level)
    for idx in range(3):
        data = make(config(level=level, split="eval"), idx)
        assert asyncio.run(task_type(data).validate(None))
        shown = rng.sample(_shown(data.prompt_text, name_end), 60)
        _assert_each_change_fails(task_type, data, "prompt", shown, name, level, idx)
        system = rng.sample(range(len(data.system_prompt)), 20)
        _assert_each_change_fails(task_type, data, "system_prompt", system, name, level, idx)


@pytest.mark.parametrize("level", [None, *sorted(GEO_RUNGS)])
def test_a_changed_character_of_a_geo_prompt_fails_validate(level):
    rng = random.Random(level or 0)
    config = geo_taskset.GeoConfig(level=level, split="eval")
    for idx in range(3):
        data = geo_taskset.make_task_data(config, idx)
        assert asyncio.run(geo_taskset.GeoTask(data).validate(None))
        for field, text in _texts(data).items():
            positions = rng.sample(range(len(text)), 40)
            _assert_each_change_fails(geo_taskset.GeoTask, data, field, positions, level, idx)


@pytest.mark.parametrize("level", [None, *sorted(ledger_ladder.RUNGS)])
def test_a_changed_character_of_a_ledger_prompt_fails_validate(level):
    rng = random.Random(level or 0)
    for world in range(2):
        selector = f"dev:{world}" if level is None else f"dev:{world}:level{level}"
        data = ledger_taskset.make_task_data(selector)
        assert asyncio.run(ledger_taskset.LedgerTask(data).validate(None))
        for field, text in _texts(data).items():
            positions = rng.sample(range(len(text)), 40)
            _assert_each_change_fails(ledger_taskset.LedgerTask, data, field, positions, selector)
        other_month = data.name[:-2] + ("02" if data.name.endswith("01") else "01")
        for update in ({"name": "Another Company " + data.name[-7:]}, {"name": other_month}):
            assert not asyncio.run(ledger_taskset.LedgerTask(data.model_copy(update=update)).validate(None))
