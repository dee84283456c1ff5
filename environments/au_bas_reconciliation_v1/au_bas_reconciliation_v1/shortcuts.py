"""What a shortcut policy sees of an au-bas task (`piv_core.baseline.shortcuts.Surface`).

A row at a glance: its treatment as the category table names it, its type, whether its recorded
gst is zero, has cents or repeats the amount's digits (``44.00`` and ``4.40``), whether its amount
has cents, whether the amount is at or above the ledger's median, which half of the ledger it is
in, and whether an ABN is written. None of these is the division by 11 or the comparison the rules
ask for. The labels of a shortcut's answer are worked out from its own row figures: G1 the sales'
amounts, 1A and 1B its figures over the sales and the purchases, net their difference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from functools import lru_cache

from piv_core.baseline.shortcuts import Glance, median_split, point_moved
from piv_core.ledger_audit.grading import answer_text

from au_bas_reconciliation_v1 import grading, prompt, rules
from au_bas_reconciliation_v1.rules import GST_MISCALCULATED, GST_ON_GST_FREE
from au_bas_reconciliation_v1.taskset import AuBasData

WEIGHTS = {"bas_correct": 0.6, "fault_audit": 0.4}
"""The task's reward weights (a test holds them equal to `AuBasTask`'s)."""


@lru_cache(maxsize=1024)
def _read(prompt_text: str, system: str) -> tuple:
    """The task's rows, asked labels, stated codes and credit (read once per task)."""
    scope = prompt.read_scope(system)
    return prompt.read_ledger(prompt_text)[1], prompt.read_labels(prompt_text), scope.codes, scope.credit


class AuBasSurface:
    def glances(self, task: AuBasData) -> list[Glance]:
        rows, _, codes, _ = _read(task.prompt_text, task.system_prompt)
        big = median_split([row.amount for row in rows])
        out = []
        for i, row in enumerate(rows):
            treatment = prompt.treatment_of(row.category)
            own = GST_MISCALCULATED if treatment == "taxable" else GST_ON_GST_FREE
            features = {
                "treatment": treatment,
                "kind": row.kind,
                "recorded_zero": row.gst == 0,
                "recorded_cents": row.gst % 1 != 0,
                "amount_cents": row.amount % 1 != 0,
                "repeats_amount": point_moved(row.amount, row.gst),
                "big": big(row.amount),
                "early": 2 * i < len(rows),
                "abn_blank": row.abn == "",
            }
            out.append(Glance(row.txn_id, features, row.gst, (own,) if own in codes else ()))
        return out

    def reply(
        self, task: AuBasData, figures: Mapping[str, Decimal], flags: Mapping[str, Sequence[str]]
    ) -> str:
        rows, asked_labels, _, _ = _read(task.prompt_text, task.system_prompt)
        labels = rules.totals([(row, ()) for row in rows], lambda row: figures[row.txn_id])
        asked = {label: labels[label] for label in asked_labels}
        per_row = (prompt.ROW_KEY, dict(figures)) if task.row_figures else None
        return answer_text(asked, flags if task.claims is None else None, per_row)

    def reward(self, task: AuBasData, reply: str) -> float:
        partial = _read(task.prompt_text, task.system_prompt)[3] == prompt.PARTIAL
        grade = grading.grade(reply, task.bas, task.faults, partial, task.row_figures, task.claims)
        return WEIGHTS["bas_correct"] * grade.figures_correct + WEIGHTS["fault_audit"] * grade.fault_audit
