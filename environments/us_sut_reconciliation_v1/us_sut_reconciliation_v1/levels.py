"""The difficulty ladder: what each ``level`` of the taskset sets (`piv_core.ladder`).

Rungs 1 and 2 are sales-only ledgers under a focused prompt (only the rung's fault codes and
figures, working row by row before the answer, an answer example of placeholders). Rung 1 is
five sales delivered to the business ZIP at whole hundreds of dollars, by a business whose ZIP's
combined rate is a whole percent, half of them faulted on average (tax charged on an exempt sale,
or a taxable sale's tax recorded wrong); it asks for sales_tax_due and every row's correct tax
(``row_figures``) with partial credit, a row counting only when it is also flagged exactly when
faulty, and ends its user prompt on a worksheet of the rows to complete; rung 2 is eight taxable sales
at any price to any ZIP whose tax can also be miscalculated, and asks for gross_sales and
sales_tax_due. Rung 3 is the first under the full prompt; rung 4 is the default configuration,
and rungs 5 and 6 are longer ledgers at higher fault rates. Every rung sets every knob the ladder
uses, so a level is always the same task.
"""

from __future__ import annotations

from piv_core.ladder import check_rungs

from us_sut_reconciliation_v1.rules import (
    DUPLICATE_INVOICE,
    FAULT_CODES,
    FIGURES,
    NEXUS_MISALLOCATION,
    OUTSIDE_PERIOD,
    TAX_MISCALCULATED,
    TAX_ON_EXEMPT_ITEM,
)

ALL_CODES = list(FAULT_CODES)
ALL_FIGURES = list(FIGURES)

RUNGS = {
    1: {
        "num_rows": 5,
        "fault_rate": 0.5,
        "fault_codes": [TAX_ON_EXEMPT_ITEM, TAX_MISCALCULATED],
        "figures": ["sales_tax_due"],
        "row_mix": "round_home_sales",
        "prompt_style": "focused",
        "figure_credit": "partial",
        "row_figures": True,
    },
    2: {
        "num_rows": 8,
        "fault_rate": 0.25,
        "fault_codes": [TAX_ON_EXEMPT_ITEM, TAX_MISCALCULATED],
        "figures": ["gross_sales", "sales_tax_due"],
        "row_mix": "taxable_sales",
        "prompt_style": "focused",
        "figure_credit": "all_or_nothing",
    },
    3: {
        "num_rows": 20,
        "fault_rate": 0.25,
        "fault_codes": [
            TAX_ON_EXEMPT_ITEM,
            TAX_MISCALCULATED,
            DUPLICATE_INVOICE,
            OUTSIDE_PERIOD,
            NEXUS_MISALLOCATION,
        ],
        "figures": ALL_FIGURES,
    },
    4: {"num_rows": 30, "fault_rate": 0.25, "fault_codes": ALL_CODES, "figures": ALL_FIGURES},
    5: {"num_rows": 80, "fault_rate": 0.35, "fault_codes": ALL_CODES, "figures": ALL_FIGURES},
    6: {"num_rows": 200, "fault_rate": 0.5, "fault_codes": ALL_CODES, "figures": ALL_FIGURES},
}
for _rung in RUNGS.values():  # the rungs above 2 are the full task: every knob the ladder sets is set
    _rung.setdefault("row_mix", "mixed")
    _rung.setdefault("prompt_style", "full")
    _rung.setdefault("figure_credit", "all_or_nothing")
    _rung.setdefault("row_figures", False)
check_rungs(RUNGS)
