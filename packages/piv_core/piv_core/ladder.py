"""Difficulty ladders: a taskset's ``level`` knob as a named set of other knobs' values.

An environment declares its rungs as a table, rung 1 the easiest::

    RUNGS = {1: {"num_transactions": 4, "fault_codes": ["NO_TAX_INVOICE"]}, 2: {...}, ...}

declares the knob as a `Level` and applies the table in its config's after-validator::

    level: Level = None

    @model_validator(mode="after")
    def _level(self):
        return apply_level(self, RUNGS)

``level`` unset leaves every knob as given. A set level fills in its rung's knobs. A knob the
user set explicitly to another value than the rung's fails at load naming both, so no run is
silently a different rung than it says. A level outside the table fails naming ``level`` and
the range. A level is an integer only (`piv_core.knobs.integer`): ``True``, ``2.0``, ``" 2"`` and
``"02"`` fail naming ``level``; the command line's ``--taskset.level 2`` is read as 2.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel

from piv_core.knobs import integer

Rungs = Mapping[int, Mapping[str, Any]]
C = TypeVar("C", bound=BaseModel)
Level = Annotated[int | None, integer()]
"""The ``level`` knob: a rung number (an integer, never a bool or other text), or None for none."""


def check_rungs(rungs: Rungs) -> None:
    """Rungs are numbered 1..N without gaps (raised at import, where a table is declared)."""
    if sorted(rungs) != list(range(1, len(rungs) + 1)):
        raise ValueError(f"rungs must be numbered 1..{len(rungs)}, got {sorted(rungs)}")


def apply_level(config: C, rungs: Rungs, knob: str = "level") -> C:
    """`config` with its rung's knob values filled in (unchanged when ``level`` is None)."""
    level = getattr(config, knob)
    if level is None:
        return config
    if isinstance(level, bool) or not isinstance(level, int) or level not in rungs:
        raise ValueError(f"{knob} must be between 1 and {len(rungs)}, got {level}")
    for name, value in rungs[level].items():
        if name not in type(config).model_fields:
            raise ValueError(f"{knob} {level} sets unknown knob {name!r}")
        given = getattr(config, name)
        if name in config.model_fields_set and given != value:
            raise ValueError(
                f"{knob} {level} sets {name} to {value!r}, but {name} was given as {given!r}: "
                f"leave {name} unset, or leave {knob} unset"
            )
        object.__setattr__(config, name, value)
    return config


def rung_table(rungs: Rungs) -> str:
    """The ladder as a markdown table (one row per rung, one column per knob any rung sets)."""
    knobs = list(dict.fromkeys(k for rung in rungs.values() for k in rung))
    lines = ["| level | " + " | ".join(f"`{k}`" for k in knobs) + " |", "|---" * (len(knobs) + 1) + "|"]
    for level in sorted(rungs):
        cells = [_cell(rungs[level].get(k, "—")) for k in knobs]
        lines.append(f"| {level} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) or "none"
    return str(value)
