"""The difficulty ladder: what each ``level`` of the taskset sets (`piv_core.tasksets.ladder`).

Rungs 1 to 6 are five sales with no exemption claim under a focused prompt (only the rung's fault
codes and figure, an answer of placeholders) that ends on a worksheet of the rows to complete, and
ask for sales_tax_due and every row's correct tax (``row_figures``) with partial credit for
corrections only: a faulty row counts when it is flagged with its correct tax, a clean one does not
count, and a flag counts as found only with its row's correct tax. Nine sales in ten are taxable,
and half the rows are faulty on average, whatever their category (tax charged on an exempt sale, or
a taxable sale's tax miscalculated in one of several forms). Each of them changes one thing from the
one below, up to rung 5 the row mix: rung 1 delivers every sale to the business ZIP, whose combined
rate is a whole percent, at a whole number of fifty dollars (``round_home_sales``); rung 2 at any
whole number of dollars (``dollar_home_sales``); rung 3 at any price (``home_sales``); rung 4
delivers to the ZIPs whose rate has at most one decimal (``tenth_rate_sales``); rung 5 to any ZIP
(``sales``); rung 6 adds a third code, ``outside_period``: three faulty sales in ten are dated
outside the quarter, four in five of them with their category's fault as well, and each worksheet line opens
on whether the row's date is inside the quarter. Rung 7 is rung 6 without the worksheet
(``worksheet`` false): the user prompt asks for one line per row first, as a focused prompt without
per-row figures does, and the answer and its score are rung 6's, so a flag still counts only beside
its row's correct tax. Rung 8 is the first under the full prompt; rung 9 is the default
configuration, and rungs 10 and 11 are longer ledgers at higher fault rates. Every rung sets every
knob the ladder uses, so a level is always the same task.
"""

from __future__ import annotations

from piv_core.tasksets.ladder import check_rungs

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

FOCUSED_SALES = {
    "num_rows": 5,
    "fault_rate": 0.5,
    "fault_codes": [TAX_ON_EXEMPT_ITEM, TAX_MISCALCULATED],
    "figures": ["sales_tax_due"],
    "row_mix": "sales",
    "prompt_style": "focused",
    "figure_credit": "partial",
    "row_figures": True,
}
"""Rung 5; rungs 1 to 4 change its row mix, rung 6 its fault codes."""
DATED_SALES = {**FOCUSED_SALES, "fault_codes": [TAX_ON_EXEMPT_ITEM, TAX_MISCALCULATED, OUTSIDE_PERIOD]}
"""Rung 6, the last with the worksheet; rung 7 is the same without it."""

RUNGS = {
    1: {**FOCUSED_SALES, "row_mix": "round_home_sales"},
    2: {**FOCUSED_SALES, "row_mix": "dollar_home_sales"},
    3: {**FOCUSED_SALES, "row_mix": "home_sales"},
    4: {**FOCUSED_SALES, "row_mix": "tenth_rate_sales"},
    5: dict(FOCUSED_SALES),
    6: dict(DATED_SALES),
    7: {**DATED_SALES, "worksheet": False},
    8: {
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
    9: {"num_rows": 30, "fault_rate": 0.25, "fault_codes": ALL_CODES, "figures": ALL_FIGURES},
    10: {"num_rows": 80, "fault_rate": 0.35, "fault_codes": ALL_CODES, "figures": ALL_FIGURES},
    11: {"num_rows": 200, "fault_rate": 0.5, "fault_codes": ALL_CODES, "figures": ALL_FIGURES},
}
for _rung in RUNGS.values():  # the rungs above 7 are the full task: every knob the ladder sets is set
    _rung.setdefault("row_mix", "mixed")
    _rung.setdefault("prompt_style", "full")
    _rung.setdefault("figure_credit", "all_or_nothing")
    _rung.setdefault("row_figures", False)
    _rung.setdefault("worksheet", True)
check_rungs(RUNGS)
