"""The difficulty ladder: what each ``level`` of the taskset sets (`piv_core.tasksets.ladder`).

Rungs 1 to 8 are eight or fewer rows under a focused prompt (only the rung's fault codes and labels,
an answer of placeholders) and ask for the rung's labels and every row's correct GST
(``row_figures``) with partial credit for corrections only: a faulty row counts when it is flagged
with its correct GST, a clean one does not count, and a flag counts as found only with its row's
correct GST. Nine rows in ten are taxable, and half the rows are faulty on average, whatever their
treatment (GST charged on a GST-free or input-taxed row, or a taxable row's GST miscalculated in one
of several forms). Each of them but rung 7 changes one thing from the one below: rung 1 is four
sales whose GST is whole dollars, $10 to $19 or a ten up to $90 (each price 11 times that), whose
books are wrong, where they are, by whole dollars too (``round_sales``), and asks for 1A and each
row's correct GST, on a worksheet, reading the faults from those figures (``faults_from_figures``: a
row given another GST than the books' is the row reported); rung 2 asks for the fault map too, each
worksheet line comparing the row's figure with the books'; rung 3 lets the price be any (``sales``);
rung 4 doubles the rows to eight; rung 5 makes some of them purchases (``sales_and_purchases``),
whose GST is worked out and audited alike but is no part of 1A; rung 6 asks for the labels that
follow from the rows' correct GST (1A, 1B the purchases' correct GST, and net = 1A - 1B; its
worksheet adds up 1B as it does 1A). Rung 7 drops the worksheet (``worksheet`` false) and, as rung
1, the fault map: the user prompt asks for one line per row first, each row's division and figure,
and the faults are read from the figures. Rung 8 asks for the fault map again, each line the row's
comparison and codes: it is rung 6 without the worksheet, with rung 6's answer and score. Rung 7 is
the one rung that changes two things, one of them back down: leaving the worksheet, a model first
works the figures it worked there, then the verdicts, as from rung 1 to rung 2. At both a flag
counts only beside its row's correct GST. Rung 9 is the first under the full prompt; rung 10 is the
default configuration, and rungs 11 and 12 are longer ledgers at higher fault rates. Every rung sets
every knob the ladder uses, so a level is always the same task.
"""

from __future__ import annotations

from piv_core.tasksets.ladder import check_rungs

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
NET_LABELS = ["1A", "1B", "net"]
"""The labels that follow from the rows' correct GST: G1 (the sales' amounts added up) needs no audit
at a rung that leaves no row out, so a rung asking it there would pay an answer that skips the work."""

FOCUSED_SALES = {
    "num_transactions": 4,
    "fault_rate": 0.5,
    "fault_codes": [GST_ON_GST_FREE, GST_MISCALCULATED],
    "labels": ["1A"],
    "row_mix": "sales",
    "prompt_style": "focused",
    "figure_credit": "partial",
    "row_figures": True,
}
"""Rung 3; rungs 1, 2, 4, 5 and 6 change its knobs one at a time."""
ROUND_SALES = {**FOCUSED_SALES, "row_mix": "round_sales"}
"""Rung 2, the first asking for the fault map; rung 1 reads the faults from its figures."""
WORKED_NET = {**FOCUSED_SALES, "num_transactions": 8, "row_mix": "sales_and_purchases", "labels": NET_LABELS}
"""Rung 6, the last with the worksheet; rungs 7 and 8 are the same without it."""

RUNGS = {
    1: {**ROUND_SALES, "faults_from_figures": True},
    2: dict(ROUND_SALES),
    3: dict(FOCUSED_SALES),
    4: {**FOCUSED_SALES, "num_transactions": 8},
    5: {**FOCUSED_SALES, "num_transactions": 8, "row_mix": "sales_and_purchases"},
    6: dict(WORKED_NET),
    7: {**WORKED_NET, "worksheet": False, "faults_from_figures": True},
    8: {**WORKED_NET, "worksheet": False},
    9: {
        "num_transactions": 12,
        "fault_rate": 0.25,
        "fault_codes": [GST_ON_GST_FREE, GST_MISCALCULATED, DUPLICATE_INVOICE, OUTSIDE_PERIOD],
        "labels": ALL_LABELS,
    },
    10: {"num_transactions": 24, "fault_rate": 0.25, "fault_codes": ALL_CODES, "labels": ALL_LABELS},
    11: {"num_transactions": 60, "fault_rate": 0.35, "fault_codes": ALL_CODES, "labels": ALL_LABELS},
    12: {"num_transactions": 150, "fault_rate": 0.5, "fault_codes": ALL_CODES, "labels": ALL_LABELS},
}
for _rung in RUNGS.values():  # the rungs above 8 are the full task: every knob the ladder sets is set
    _rung.setdefault("row_mix", "mixed")
    _rung.setdefault("prompt_style", "full")
    _rung.setdefault("figure_credit", "all_or_nothing")
    _rung.setdefault("row_figures", False)
    _rung.setdefault("worksheet", True)
    _rung.setdefault("faults_from_figures", False)
check_rungs(RUNGS)
