"""How a reply is graded: the BAS labels and the audit, under this environment's metric names.

Reading and scoring are `piv_core.ledger_audit.grading`'s: the last ``<answer>`` block must hold a JSON
object whose ``faults`` is a fault map, or every score is 0 and ``parsed`` is 0; a label that
is missing or not an exact cent amount is simply wrong. Every label the task asks for is graded
(all four unless the `labels` knob names fewer), and so is every row's correct GST when the
task asks for it (``row_figures``: the answer's ``gst`` map, one figure per row); a task that
reads the faults from those figures (``faults_from_figures``) asks no fault map, and its ``gst``
map must be a JSON object for the reply to be parsed. Each trace
also carries ``<label>_correct`` per label and ``precision_<code>``, ``recall_<code>``,
``keyed_<code>`` per fault code.
"""

from __future__ import annotations

from piv_core.ledger_audit.grading import Claims, Grade, Scheme

from au_bas_reconciliation_v1.prompt import ROW_KEY
from au_bas_reconciliation_v1.rules import FAULT_CODES, LABELS

SCHEME = Scheme(
    labels=LABELS,
    graded=LABELS,
    codes=FAULT_CODES,
    row_key=ROW_KEY,
    metric_names={
        "bas_label_accuracy": "figure_accuracy",
        "fault_precision": "fault_precision",
        "fault_recall": "fault_recall",
        "num_flagged": "num_flagged",
        "parsed": "parsed",
    },
)

parse_answer = SCHEME.parse
"""The reply's answer, or None when it is unparseable (read once per reply, and immutable)."""


def grade(
    reply: str | None,
    bas: dict[str, int],
    faults: dict[str, list[str]],
    partial: bool = False,
    rows: dict[str, int] | None = None,
    claims: Claims | None = None,
) -> Grade:
    """Score `reply` against the corrected BAS (cents by label), the per-row GST asked for
    (`rows`, by txn_id) and the fault key; `partial`: partial credit per figure (the
    `figure_credit` knob's ``partial``); `claims`: the faults are read from the per-row figures
    (`rules.row_claims`), not a fault map."""
    return SCHEME.grade(reply, bas, faults, partial, rows, claims)
