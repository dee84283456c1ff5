"""How the run report shows a beancount-ledger answer.

Each planted discrepancy and whether the environment's own scorer (rerun in its sandbox on the
ledger the reward scored) found it resolved, its penalties and refusals, then the text of the last
``write_ledger`` call against the golden ledger as a unified diff; an unresolved fix, a penalty
and a changed line carry `DIFF`.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from html import escape
from typing import Any

from piv_core.parsing.bounded_decode import (
    TOOL_ARGUMENTS_MAX_BYTES,
    TOOL_ARGUMENTS_MAX_DEPTH,
    Undecodable,
    load_json,
)
from piv_core.runs.reading import task_data, tool_calls
from piv_core.runs.report_views import DIFF, css_class

from beancount_ledger import answer, isolated
from beancount_ledger.limits import LEDGER_ENVELOPE
from beancount_ledger.taskset import LedgerData

LEDGER_TOOL = "write_ledger"


def submitted_ledger(trace: dict[str, Any]) -> str | None:
    """The text of the last ``write_ledger`` call in the trace, or None when there was none. A
    call whose arguments are not a JSON object within the tool-argument bounds (which the chat
    loop answered with an error) is passed over."""
    for name, arguments in reversed(tool_calls(trace)):
        if name != LEDGER_TOOL:
            continue
        try:
            decoded = load_json(
                arguments,
                max_depth=TOOL_ARGUMENTS_MAX_DEPTH,
                max_bytes=TOOL_ARGUMENTS_MAX_BYTES,
                where=f"{LEDGER_TOOL} arguments",
            )
        except Undecodable:  # the tool refused it too
            continue
        text = decoded.get("text") if isinstance(decoded, dict) else None
        if isinstance(text, str):
            return text
    return None


def golden_ledger(data: Mapping[str, Any]) -> str:
    """The golden ledger of a task, from its task data alone."""
    return answer.golden_ledger(LedgerData.model_validate(dict(data)))


def rescored(data: Mapping[str, Any], text: str | None) -> Any:
    """`isolated.score` of `text` against the task's key: the environment's own scorer, run in its
    sandbox worker as the reward runs it (model text never loads here)."""
    return isolated.score(text, answer.key_of(LedgerData.model_validate(dict(data))))


def _normalized(text: str) -> list[str]:
    """The lines of a ledger with runs of whitespace collapsed and any indentation made two spaces,
    so alignment is no difference."""
    return [("  " if line[:1].isspace() else "") + " ".join(line.split()) for line in text.splitlines()]


def ledger_view(trace: dict[str, Any]) -> str | None:
    data = task_data(trace)
    if not all(isinstance(data.get(f), dict | list) for f in ("files", "fixes", "balances")):
        return None
    submitted = submitted_ledger(trace)
    try:
        golden = golden_ledger(data)
    except Exception as error:  # noqa: BLE001 - a report shows why a key could not be rebuilt
        reason = f"{type(error).__name__}: {error}"
        return f'<p class="note">golden ledger not rebuilt: {escape(reason)}</p>'
    scored = (trace.get("info") or {}).get("ledger")
    scored = scored if isinstance(scored, str) else submitted
    parts = [_resolution(data["fixes"], rescored(data, scored))]
    if submitted is None:
        parts.append(f'<p class="note">no <code>{LEDGER_TOOL}</code> call: nothing was written</p>')
        return "".join(parts)
    if scored != submitted:
        parts.append(
            f'<p class="note">the last <code>{LEDGER_TOOL}</code> call was not the ledger scored '
            "(the scorer reads the latest one the tool accepted)</p>"
        )
    size = len(submitted.encode("utf-8", "surrogatepass"))
    if size > LEDGER_ENVELOPE:  # refused by the tool; a diff of it would only cost time
        parts.append(
            f'<p class="note">the last <code>{LEDGER_TOOL}</code> text is {size:,} bytes, over the '
            f"{LEDGER_ENVELOPE:,}-byte envelope: not diffed</p>"
        )
        return "".join(parts)
    parts.append(_diff(golden, submitted))
    return "".join(parts)


def _diff(golden: str, submitted: str) -> str:
    lines = list(
        difflib.unified_diff(
            _normalized(golden),
            _normalized(submitted),
            "golden",
            f"submitted ({LEDGER_TOOL})",
            n=2,
            lineterm="",
        )
    )
    if not lines:
        return '<p class="same">the submitted ledger is the golden ledger, line for line</p>'
    rendered = []
    for line in lines:
        kind = ""
        if line.startswith(("+++", "---")):
            kind = "head"
        elif line.startswith("+"):
            kind = f"{DIFF} add"
        elif line.startswith("-"):
            kind = f"{DIFF} del"
        elif line.startswith("@@"):
            kind = "hunk"
        rendered.append(f"<span{css_class('line', kind)}>{escape(line)}</span>")
    caption = "<p>written against golden (whitespace runs collapsed):</p>"
    return caption + '<pre class="ledger-diff">' + "".join(rendered) + "</pre>"


def _resolution(fixes: list[Any], score: Any) -> str:
    """Each planted discrepancy and whether the scored ledger resolved it; what else the scorer saw."""
    resolved = set(getattr(score, "resolved", ()) or ())
    rows = []
    for fix in fixes:
        if not isinstance(fix, dict):
            continue
        ref = str(fix.get("ref"))
        postings = ", ".join(f"{account} {amount}" for account, amount in (fix.get("fix") or {}).items())
        done = ref in resolved
        rows.append(
            f"<tr><td>{escape(ref)}</td><td>{escape(str(fix.get('kind')))}</td>"
            f"<td>{escape(str(fix.get('date')))}</td><td>{escape(postings)}</td>"
            f'<td{css_class("fix", "" if done else DIFF)} data-fix="{escape(ref)}">'
            f"{'resolved' if done else 'not resolved'}</td></tr>"
        )
    findings = [f"balances hit {score.balances_hit}/{score.balances_total}"]
    for name in ("damaged", "fabricated", "invented"):
        count = getattr(score, name, 0)
        findings.append(f"<span{css_class('penalty', DIFF if count else '')}>{name} {count}</span>")
    for reason, label in ((score.refused, "refused"), (score.error, "scorer error")):
        if reason:
            findings.append(f'<span class="{DIFF}">{label}: {escape(str(reason))}</span>')
    findings += [f'<span class="{DIFF}">{escape(str(e))}</span>' for e in (score.errors or [])[:5]]
    return (
        '<table class="fixes"><caption>planted discrepancies, as the scorer judged the ledger</caption>'
        "<tr><th>bank ref</th><th>kind</th><th>date</th><th>fix</th><th>scored</th></tr>"
        + "".join(rows)
        + f'</table><p class="findings">{"; ".join(findings)}</p>'
    )
