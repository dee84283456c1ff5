"""Every character a tax task's user prompt shows outside its ledger block and its business's name is
one `validate` renders again from what the prompt states: changing any one of them (the quarter's
dates in the header, the place, the count of rows, the figures asked, a worksheet line, the closing
sentence) fails `validate`. So no text a model reads can disagree with the key unnoticed. The
business's name is free text that enters neither the key nor the rules; a change inside the ledger
block is a different ledger, which `validate` holds to its key (each environment's own tests)."""

from __future__ import annotations

import asyncio
import random

import pytest
from au_bas_reconciliation_v1 import taskset as au_taskset
from au_bas_reconciliation_v1.levels import RUNGS as AU_RUNGS
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


@pytest.mark.parametrize(("name", "level"), CASES)
def test_a_changed_character_outside_the_ledger_fails_validate(name, level):
    config, make, task_type, _, name_end = ENVIRONMENTS[name]
    rng = random.Random(level)
    for idx in range(3):
        data = make(config(level=level, split="eval"), idx)
        assert asyncio.run(task_type(data).validate(None))
        text = data.prompt_text
        positions = _shown(text, name_end)
        for i in rng.sample(positions, 60):
            changed = text[:i] + _other(text[i]) + text[i + 1 :]
            tampered = data.model_copy(update={"prompt": changed})
            assert not asyncio.run(task_type(tampered).validate(None)), (
                name,
                level,
                idx,
                text[i - 20 : i + 20],
            )
