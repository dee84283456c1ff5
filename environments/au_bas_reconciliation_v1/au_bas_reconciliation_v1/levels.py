"""The difficulty ladder: what each ``level`` of the taskset sets (`piv_core.ladder`).

Rungs 1 and 2 are sales-only ledgers under a focused prompt (only the rung's fault codes and
labels, working row by row before the answer, an answer example of placeholders). Rung 1 is four
sales priced at 11 times a whole number of dollars from 1 to 9, half of them faulted on average
(GST charged on a GST-free or input-taxed sale, or a taxable sale's GST recorded wrong); it asks
for 1A and every row's correct GST (``row_figures``) with partial credit, a row counting only
when it is also flagged exactly when faulty, and ends its user prompt on a worksheet of the rows
to complete; rung 2 is six taxable sales at any price
whose GST can also be miscalculated, and asks for G1 and 1A. Rung 3 is the first under the full
prompt; rung 4 is the default configuration, and rungs 5 and 6 are longer ledgers at higher
fault rates. Every rung sets every knob the ladder uses, so a level is always the same task.
"""

from __future__ import annotations

from piv_core.ladder import check_rungs

from au_bas_reconciliation_v1.rules import (
    DUPLICATE_INVOICE,
    FAULT_CODES,
    GST_MISCALCULATED,
    GST_ON_GST_FREE,
    LABELS,
    OUTSIDE_PERIOD,
)

ALL_CODES = list(FAULT_CODES)
ALL_LABELS = list(LABELS)

RUNGS = {
    1: {
        "num_transactions": 4,
        "fault_rate": 0.5,
        "fault_codes": [GST_ON_GST_FREE, GST_MISCALCULATED],
        "labels": ["1A"],
        "row_mix": "round_taxable_sales",
        "prompt_style": "focused",
        "figure_credit": "partial",
        "row_figures": True,
    },
    2: {
        "num_transactions": 6,
        "fault_rate": 0.25,
        "fault_codes": [GST_ON_GST_FREE, GST_MISCALCULATED],
        "labels": ["G1", "1A"],
        "row_mix": "taxable_sales",
        "prompt_style": "focused",
        "figure_credit": "all_or_nothing",
    },
    3: {
        "num_transactions": 12,
        "fault_rate": 0.25,
        "fault_codes": [GST_ON_GST_FREE, GST_MISCALCULATED, DUPLICATE_INVOICE, OUTSIDE_PERIOD],
        "labels": ALL_LABELS,
    },
    4: {"num_transactions": 24, "fault_rate": 0.25, "fault_codes": ALL_CODES, "labels": ALL_LABELS},
    5: {"num_transactions": 60, "fault_rate": 0.35, "fault_codes": ALL_CODES, "labels": ALL_LABELS},
    6: {"num_transactions": 150, "fault_rate": 0.5, "fault_codes": ALL_CODES, "labels": ALL_LABELS},
}
for _rung in RUNGS.values():  # the rungs above 2 are the full task: every knob the ladder sets is set
    _rung.setdefault("row_mix", "mixed")
    _rung.setdefault("prompt_style", "full")
    _rung.setdefault("figure_credit", "all_or_nothing")
    _rung.setdefault("row_figures", False)
check_rungs(RUNGS)
