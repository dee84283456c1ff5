"""How a reply is graded: the return's figures and the audit, under this environment's metric names.

Reading and scoring are `piv_core.ledger_audit.grading`'s: the last ``<answer>`` block must hold a JSON
object whose ``faults`` is a fault map, or every score is 0 and ``answer_parsed`` is 0; a figure
that is missing or not an exact cent amount is simply wrong. Of the figures the task asks for
(all six unless the `figures` knob names fewer), all but ``exempt_sales`` are graded
(`rules.GRADED_FIGURES`). Each trace also carries ``<figure>_correct`` per figure
(``exempt_sales_correct`` included, for the reader) and ``precision_<code>``, ``recall_<code>``,
``keyed_<code>`` per fault code.
"""

from __future__ import annotations

from piv_core.ledger_audit.grading import Grade, Scheme

from us_sut_reconciliation_v1.prompt import ROW_KEY
from us_sut_reconciliation_v1.rules import FAULT_CODES, FIGURES, GRADED_FIGURES

SCHEME = Scheme(
    labels=FIGURES,
    graded=GRADED_FIGURES,
    codes=FAULT_CODES,
    row_key=ROW_KEY,
    metric_names={
        "answer_parsed": "parsed",
        "fields_correct": "figure_accuracy",
        "fault_precision": "fault_precision",
        "fault_recall": "fault_recall",
    },
)

parse_answer = SCHEME.parse
"""The reply's answer, or None when it is unparseable (read once per reply, and immutable)."""


def grade(
    reply: str | None,
    figures: dict[str, int],
    faults: dict[str, list[str]],
    partial: bool = False,
    rows: dict[str, int] | None = None,
) -> Grade:
    """Score `reply` against the corrected return (cents by figure name), the per-row tax asked
    for (`rows`, by transaction_id) and the fault key; `partial`: partial credit per graded
    figure (the `figure_credit` knob's ``partial``)."""
    return SCHEME.grade(reply, figures, faults, partial, rows)
