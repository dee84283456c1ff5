"""What a shortcut policy sees of a us-sut task (`piv_core.baseline.shortcuts.Surface`).

A row at a glance: whether its category is exempt, its type, whether an exemption is claimed and a
certificate written, whether it is delivered to the business ZIP, whether its recorded tax is zero,
has cents or repeats the gross amount's digits, whether the gross amount has cents, whether it is at
or above the ledger's median, which half of the ledger it is in, and whether it is dated outside the
quarter (its "own" flags then include ``outside_period`` where the task states that code). None of
these is the product by the rate or the comparison the rules ask for. The figures of a shortcut's
answer are worked out from its own row figures, over the rows it does not flag with a code that
leaves a row out of the return: gross_sales over the sales, exempt_sales over the
sales of an exempt category or with a claim, taxable_sales their difference, sales_tax_due and
use_tax_due its figures over the sales and the purchases, net_remittance their sum.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from functools import lru_cache

from piv_core.baseline.shortcuts import Glance, median_split, point_moved
from piv_core.ledger_audit.grading import LEFT_OUT, answer_text

from us_sut_reconciliation_v1 import grading, prompt
from us_sut_reconciliation_v1.ledger import EXEMPT, SALE
from us_sut_reconciliation_v1.rules import OUTSIDE_PERIOD, TAX_MISCALCULATED, TAX_ON_EXEMPT_ITEM
from us_sut_reconciliation_v1.taskset import UsSutData

WEIGHTS = {"return_correct": 0.6, "fault_audit": 0.4}
"""The task's reward weights (a test holds them equal to `UsSutTask`'s)."""
_ZERO = Decimal("0.00")


@lru_cache(maxsize=1024)
def _read(prompt_text: str, system: str) -> tuple:
    """The task's business ZIP, rows, asked figures, stated codes, credit and quarter (read once per task)."""
    scope = prompt.read_scope(system)
    quarter, business_zip, rows = prompt.read_ledger(prompt_text)
    return business_zip, rows, prompt.read_figures(prompt_text), scope.codes, scope.credit, quarter


class UsSutSurface:
    def glances(self, task: UsSutData) -> list[Glance]:
        business_zip, rows, _, codes, _, quarter = _read(task.prompt_text, task.system_prompt)
        big = median_split([row.gross for row in rows])
        out = []
        for i, row in enumerate(rows):
            exempt = row.category in EXEMPT
            own = TAX_ON_EXEMPT_ITEM if exempt or row.claimed else TAX_MISCALCULATED
            outside = not quarter.contains(row.date)
            features = {
                "exempt_category": exempt,
                "kind": row.kind,
                "claimed": row.claimed,
                "cert_blank": row.cert == "",
                "home_zip": row.zip == business_zip,
                "recorded_zero": row.tax == 0,
                "recorded_cents": row.tax % 1 != 0,
                "gross_cents": row.gross % 1 != 0,
                "repeats_gross": point_moved(row.gross, row.tax),
                "big": big(row.gross),
                "early": 2 * i < len(rows),
                "dated_outside": outside,
            }
            flags = (own, OUTSIDE_PERIOD) if outside else (own,)
            out.append(Glance(row.txn_id, features, row.tax, tuple(code for code in flags if code in codes)))
        return out

    def reply(
        self, task: UsSutData, figures: Mapping[str, Decimal], flags: Mapping[str, Sequence[str]]
    ) -> str:
        _, listed, asked, _, _, _ = _read(task.prompt_text, task.system_prompt)
        rows = [row for row in listed if not any(code in LEFT_OUT for code in flags.get(row.txn_id, ()))]
        sales = [row for row in rows if row.kind == SALE]
        gross = sum((row.gross for row in sales), _ZERO)
        exempt = sum((row.gross for row in sales if row.category in EXEMPT or row.claimed), _ZERO)
        sales_tax = sum((figures[row.txn_id] for row in sales), _ZERO)
        use_tax = sum((figures[row.txn_id] for row in rows if row.kind != SALE), _ZERO)
        worked = {
            "gross_sales": gross,
            "exempt_sales": exempt,
            "taxable_sales": gross - exempt,
            "sales_tax_due": sales_tax,
            "use_tax_due": use_tax,
            "net_remittance": sales_tax + use_tax,
        }
        per_row = (prompt.ROW_KEY, dict(figures)) if task.row_figures else None
        return answer_text({name: worked[name] for name in asked}, flags, per_row)

    def reward(self, task: UsSutData, reply: str) -> float:
        partial = _read(task.prompt_text, task.system_prompt)[4] == prompt.PARTIAL
        grade = grading.grade(reply, task.figures, task.faults, partial, task.row_figures)
        return WEIGHTS["return_correct"] * grade.figures_correct + WEIGHTS["fault_audit"] * grade.fault_audit
