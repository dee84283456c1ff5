"""What the HTML run report shows inside one rollout: the answer beside the key.

Each environment registers its own view (`piv_core.plugins.EnvironmentPlugin.answer_view`);
`view_of` finds it by the environment id the run records. This module holds the pieces
views share (`DIFF`, `css_class`, `shown`) and the view of the suite's own answer shape,
`figures_view`: a mapping of cent figures and a fault map (`piv_core.ledger_audit.grading`), each figure
as written beside the key's, and every (item, code) pair either side claims; a figure that
differs and a pair only one side has carry the class `DIFF` (and ``data-figure`` / ``data-pair``
attributes naming them).

A rollout of an environment that registers no view gets none; the report still shows its
scores, tool calls and reply. Everything the model wrote is escaped before it reaches the page.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from piv_core import plugins
from piv_core.ledger_audit.audit import read_fault_map
from piv_core.parsing.answer import json_answer
from piv_core.parsing.money import format_cents, parse_cents
from piv_core.runs.reading import last_reply, task_data

DIFF = "diff"
"""The class on exactly the cells where the answer and the key disagree."""


RUNTIME_FIELDS = frozenset({"resources", "timeout"})
"""verifiers' own `TaskData` fields that are mappings (what a task asks of its runtime), never a key."""


def _figures_field(data: Mapping[str, Any]) -> str | None:
    """The task-data field holding the key's cent figures: a non-empty mapping of names to ints."""
    for name, value in data.items():
        if (
            name != "faults"
            and name not in RUNTIME_FIELDS
            and isinstance(value, dict)
            and value
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value.values())
        ):
            return name
    return None


SHOWN = 80
"""Characters of any one figure, code or number the model wrote that a cell shows."""


def shown(text: str) -> str:
    """`text` escaped, cut to `SHOWN` characters."""
    return escape(text[:SHOWN]) + ("…" if len(text) > SHOWN else "")


def css_class(*names: str) -> str:
    """A ``class`` attribute of the non-empty `names` (nothing when there is none)."""
    kept = " ".join(n for n in names if n)
    return f' class="{kept}"' if kept else ""


def figures_view(trace: dict[str, Any]) -> str | None:
    data = task_data(trace)
    field = _figures_field(data)
    key = read_fault_map(data.get("faults"))
    if field is None or key is None:
        return None
    answer = json_answer(last_reply(trace))
    answer = answer if isinstance(answer, dict) else None
    rows = []
    for name, cents in data[field].items():
        written = None if answer is None else answer.get(name)
        wrong = parse_cents(written) != cents
        as_written = "(missing)" if written is None else str(written)
        rows.append(
            f"<tr><th>{escape(name)}</th><td{css_class('figure', DIFF if wrong else '')} "
            f'data-figure="{escape(name)}">{shown(as_written)}</td><td>{format_cents(cents)}</td></tr>'
        )
    parts = []
    if answer is None:
        parts.append(
            '<p class="note">no JSON object in the last answer block: every figure counts as missing</p>'
        )
    parts.append(
        f'<table class="figures"><tr><th>{escape(field)}</th><th>answer</th><th>key</th></tr>'
        + "".join(rows)
        + "</table>"
    )
    claimed = read_fault_map(answer.get("faults")) if answer is not None else None
    if answer is not None and claimed is None:
        parts.append('<p class="note">the answer\'s <code>faults</code> is not a fault map</p>')
    parts.append(_pairs_table(claimed or frozenset(), key))
    return "".join(parts)


def _pairs_table(claimed: frozenset[tuple[str, str]], key: frozenset[tuple[str, str]]) -> str:
    """One row per item either side names; each pair a chip, `DIFF` where only one side has it."""
    items = sorted({item for item, _ in claimed | key})

    def chips(
        side: str, mine: frozenset[tuple[str, str]], other: frozenset[tuple[str, str]], item: str
    ) -> str:
        return " ".join(
            f'<span{css_class("pair", DIFF if (item, code) not in other else "")} data-side="{side}" '
            f'data-pair="{escape(item)}/{escape(code)}">{shown(code)}</span>'
            for code in sorted(code for i, code in mine if i == item)
        )

    rows = "".join(
        f"<tr><th>{shown(item)}</th><td>{chips('answer', claimed, key, item)}</td>"
        f"<td>{chips('key', key, claimed, item)}</td></tr>"
        for item in items
    )
    matched = len(claimed & key)
    caption = f"fault pairs: {matched} matched, {len(claimed - key)} extra, {len(key - claimed)} missed"
    return (
        f'<table class="pairs"><caption>{caption}</caption>'
        f"<tr><th>item</th><th>answer</th><th>key</th></tr>{rows}</table>"
    )


def view_of(env_id: str) -> plugins.AnswerView | None:
    """The answer view environment `env_id` registers (None: it registers none, or is not
    registered here)."""
    plugin = plugins.find(env_id) if env_id else None
    return None if plugin is None else plugin.answer_view


def answer_view(trace: dict[str, Any], view: plugins.AnswerView | None) -> str | None:
    """The trace's answer beside its key as `view` (its environment's, `view_of`) renders it."""
    return None if view is None else view(trace)
