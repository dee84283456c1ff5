"""The difficulty ladder: what each ``level`` of the taskset sets (`piv_core.ladder`).

Rungs 1 and 2 are four sales under a focused prompt (only the rung's fault codes and label, an
answer of placeholders) that ends on a worksheet of the rows to complete, and ask for 1A and every
row's correct GST (``row_figures``) with partial credit for corrections only: a faulty row counts
when it is flagged with its correct GST, a clean one does not count, and a flag counts as found only
with its row's correct GST. Half the rows are faulty on average, whatever their treatment (GST
charged on a GST-free or input-taxed sale, or a taxable sale's GST miscalculated in one of several
forms). Rung 1 prices every sale at 11 times a whole or half number of dollars (``round_sales``);
rung 2 changes only that, to any price (``sales``). Rung 3 is the first under the full prompt;
rung 4 is the default configuration, and rungs 5 and 6 are longer ledgers at higher fault rates.
Every rung sets every knob the ladder uses, so a level is always the same task.
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
        "row_mix": "round_sales",
        "prompt_style": "focused",
        "figure_credit": "partial",
        "row_figures": True,
    },
    2: {
        "num_transactions": 4,
        "fault_rate": 0.5,
        "fault_codes": [GST_ON_GST_FREE, GST_MISCALCULATED],
        "labels": ["1A"],
        "row_mix": "sales",
        "prompt_style": "focused",
        "figure_credit": "partial",
        "row_figures": True,
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
