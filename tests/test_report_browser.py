"""The HTML run report as a browser shows it: real runs through `eval`, rendered by headless Chromium.

The page is opened from disk by Chromium (``--dump-dom`` for the DOM after rendering,
``--screenshot`` for a picture). The marked cells are checked against the environments' own
grades: a rollout whose figures all scored has no marked figure, one whose fault audit scored
1.0 has no marked pair, and every marked cell is a figure or a pair that really differs. The
failure summary ("why runs fell short") lies within the first screen of a 1400 x 900 window.
Screenshots are saved under ``$PIV_REPORT_SCREENSHOTS`` (default: the test's temporary
directory), and the test prints where.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from beancount_ledger.report_view import golden_ledger, submitted_ledger
from piv_core.ledger_audit.audit import fault_pairs, read_fault_map
from piv_core.parsing.answer import json_answer
from piv_core.parsing.money import parse_cents
from piv_core.runs.reading import EvalRun, last_reply, run_labels, task_data, task_key
from piv_core.runs.report import write_html
from piv_core.testing import ReportMarks, run_baseline_eval

pytestmark = pytest.mark.e2e

CHROMIUM = next(
    (found for name in ("chromium", "chromium-browser", "google-chrome") if (found := shutil.which(name))),
    None,
)
if CHROMIUM is None and Path("/usr/bin/chromium").exists():
    CHROMIUM = "/usr/bin/chromium"
if CHROMIUM is None:
    pytest.skip(
        "no chromium binary on PATH (chromium, chromium-browser, google-chrome)", allow_module_level=True
    )


def chromium(*args: str, profile: Path) -> subprocess.CompletedProcess:
    command = [CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", f"--user-data-dir={profile}", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)


def rendered(html: Path, shot: Path, tmp_path: Path) -> ReportMarks:
    """The DOM Chromium built from `html`, after taking a screenshot of it to `shot`."""
    profile = tmp_path / "profile"
    done = chromium("--dump-dom", html.as_uri(), profile=profile)
    assert done.returncode == 0 and "</html>" in done.stdout, done.stderr[-2000:]
    picture = chromium(f"--screenshot={shot}", "--window-size=1400,2200", html.as_uri(), profile=profile)
    assert picture.returncode == 0 and shot.exists(), picture.stderr[-2000:]
    print(f"\nscreenshot: {shot}")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)
    colours = {tuple(p) for p in pixels[::7, ::7].reshape(-1, pixels.shape[-1]).tolist()}
    assert len(colours) > 20, "the screenshot is blank"
    dom = ReportMarks(done.stdout)
    assert {"table", "svg", "details"} <= set(dom.tags) and "script" not in dom.tags
    return dom


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    where = Path(os.environ.get("PIV_REPORT_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    where.mkdir(parents=True, exist_ok=True)
    return where


def runs_of(env_id: str, out: Path, num_tasks: int, *policies: str) -> list[EvalRun]:
    runs = []
    for policy in policies:
        code, output, run = run_baseline_eval(env_id, policy, str(out), num_tasks=num_tasks, command="eval")
        assert code == 0 and run is not None, output[-3000:]
        runs.append(run)
    return runs


def expected_marks(trace: dict) -> tuple[set[str], set[tuple[str, str]]]:
    """The figures and (side, item/code) pairs where the reply and the key differ."""
    data = task_data(trace)
    answer = json_answer(last_reply(trace))
    answer = answer if isinstance(answer, dict) else {}
    figures = {name for name, cents in data["bas"].items() if parse_cents(answer.get(name)) != cents}
    claimed, key = read_fault_map(answer.get("faults")) or frozenset(), fault_pairs(data["faults"])
    pairs = {("answer", f"{i}/{c}") for i, c in claimed - key} | {
        ("key", f"{i}/{c}") for i, c in key - claimed
    }
    return figures, pairs


def test_au_bas_report_marks_exactly_the_differences(tmp_path, shots):
    runs = runs_of("au-bas-reconciliation-v1", tmp_path / "runs", 4, "oracle", "blanket")
    page = tmp_path / "au-bas.html"
    write_html(runs, page)
    dom = rendered(page, shots / "report_aubas.png", tmp_path)
    labels = run_labels(runs)
    assert labels == ["oracle", "blanket"]  # the runs' names less what they share
    assert len(dom.rollouts) == 8 and {r["data-run"] for r in dom.rollouts} == set(labels)
    for run, label in zip(runs, labels):
        for trace in run.traces:
            here = [m for m in dom.marked if (m["data-run"], m["data-task"]) == (label, task_key(trace))]
            figures = {m["data-figure"] for m in here if "data-figure" in m}
            pairs = {(m["data-side"], m["data-pair"]) for m in here if "data-pair" in m}
            assert (figures, pairs) == expected_marks(trace)
            assert (not figures) == (trace["rewards"]["bas_correct"]["score"] == 1.0)
            assert (not pairs) == (trace["rewards"]["fault_audit"]["score"] == 1.0)
    assert not [m for m in dom.marked if m["data-run"] == labels[0]]  # the oracle is right everywhere
    assert {m["data-run"] for m in dom.marked} == {labels[1]}


def normalized(text: str) -> set[str]:
    return {("  " if line[:1].isspace() else "") + " ".join(line.split()) for line in text.splitlines()}


def test_beancount_report_shows_what_the_scorer_judged_and_the_ledger_diff(tmp_path, shots):
    runs = runs_of("beancount-ledger", tmp_path / "runs", 1, "reference", "plug")
    page = tmp_path / "beancount.html"
    write_html(runs, page)
    dom = rendered(page, shots / "report_beancount.png", tmp_path)
    labels = run_labels(runs)
    for run, label in zip(runs, labels):
        trace = run.traces[0]
        metrics, fixes = trace["metrics"], task_data(trace)["fixes"]
        here = [m for m in dom.marked if m["data-run"] == label]
        unresolved = [m["data-fix"] for m in here if "data-fix" in m]
        assert len(unresolved) == round(len(fixes) * (1 - metrics["discrepancies_resolved"]))
        penalties = {m["text"].split()[0] for m in here if "penalty" in m["class"]}
        assert penalties == {n for n in ("damaged", "fabricated", "invented") if metrics[f"penalty_{n}"]}
        lines = [m["text"] for m in here if "line" in m["class"]]
        golden, written = normalized(golden_ledger(task_data(trace))), normalized(submitted_ledger(trace))
        assert {x[1:] for x in lines if x.startswith("-")} <= golden
        assert {x[1:] for x in lines if x.startswith("+")} <= written
    reference, plug = (r.traces[0] for r in runs)
    assert reference["rewards"]["ledger"]["score"] == 1.0 and plug["rewards"]["ledger"]["score"] < 1.0
    assert any("data-fix" in m for m in dom.marked if m["data-run"] == labels[1])


FIRST_SCREEN = (1400, 900)
"""The browser window the first screen is measured in (width, height in CSS pixels)."""
MEASURE = """<script>
const why = document.getElementById("why"), row = why && why.querySelector("tr[data-failure]");
const link = row && row.querySelector("a[href^='#']");
const target = link && document.querySelector(link.getAttribute("href"));
document.body.setAttribute("data-why-top", why ? why.getBoundingClientRect().top : -1);
document.body.setAttribute("data-row-bottom", row ? row.getBoundingClientRect().bottom : -1);
document.body.setAttribute("data-link-target", target ? 1 : 0);
</script>"""
"""Added to a copy of the page only (the report itself has no script): where the failure summary
and its first row lie in the window, and whether the row's first link leads to an element."""


def test_why_it_failed_is_on_the_first_screen(tmp_path, shots):
    runs = runs_of("au-bas-reconciliation-v1", tmp_path / "runs", 4, "oracle", "noisy-0.3")
    page = tmp_path / "first-screen.html"
    write_html(runs, page)
    measured = tmp_path / "measured.html"
    measured.write_text(page.read_text().replace("</body>", MEASURE + "</body>"))
    size = f"--window-size={FIRST_SCREEN[0]},{FIRST_SCREEN[1]}"
    done = chromium("--dump-dom", size, measured.as_uri(), profile=tmp_path / "profile")
    assert done.returncode == 0, done.stderr[-2000:]
    body = dict(re.findall(r'(data-why-top|data-row-bottom|data-link-target)="([^"]*)"', done.stdout))
    assert 0 <= float(body["data-why-top"]) < float(body["data-row-bottom"]) < FIRST_SCREEN[1], body
    assert body["data-link-target"] == "1"
    first = ReportMarks(page.read_text())
    assert "script" not in first.tags
    shot = shots / "report_first_screen.png"
    picture = chromium(f"--screenshot={shot}", size, page.as_uri(), profile=tmp_path / "profile")
    assert picture.returncode == 0 and shot.exists(), picture.stderr[-2000:]
    print(f"\nscreenshot: {shot}")
