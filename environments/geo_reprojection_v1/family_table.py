"""Per-family (or per-grid) figures of geo-reprojection-v1 eval runs: pass rate and median error.

`error` is in metres for reproject, inverse and distance and in degrees for bearing, so a
run-level mean mixes units; this table splits the traces by the family (or grid) each one
records in ``info``, falling back to its task data. Unparseable replies (error -1) are
counted apart.
    uv run python environments/geo_reprojection_v1/family_table.py outputs/geo-baselines/*
    uv run python environments/geo_reprojection_v1/family_table.py outputs/geo-baselines/* \
        --by grid --families reproject inverse
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from geo_reprojection_v1.grids import GRIDS
from geo_reprojection_v1.problem import FAMILIES, UNITS
from piv_core.runs import read_eval_run


def _group(trace: dict, by: str) -> str:
    return (trace.get("info") or {}).get(by) or trace["task"]["data"][by]


def _cell(traces: list[dict]) -> str:
    if not traces:
        return "–"
    passed = sum(t["rewards"]["within_tolerance"]["score"] >= 1.0 for t in traces)
    answered = [t for t in traces if t["metrics"]["answered"] == 1.0]
    if not answered:
        return f"{passed}/{len(traces)} pass, all unparsed"
    units = {UNITS[_group(t, "family")] for t in answered}
    unit = units.pop() if len(units) == 1 else "mixed units"
    median = statistics.median(t["metrics"]["error"] for t in answered)
    unparsed = len(traces) - len(answered)
    note = f", {unparsed} unparsed" if unparsed else ""
    return f"{passed}/{len(traces)} pass, median {median:.4g} {unit}{note}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run directories (each holding traces.jsonl)")
    parser.add_argument("--by", choices=("family", "grid"), default="family")
    parser.add_argument("--families", nargs="+", choices=FAMILIES, default=FAMILIES, help="keep only these")
    args = parser.parse_args(argv)
    groups = list(FAMILIES) if args.by == "family" else list(GRIDS)
    print("| run | " + " | ".join(groups) + " |")
    print("|---|" + "---|" * len(groups))
    for path in args.runs:
        traces = [
            t for t in read_eval_run(path).traces if t.get("rewards") and _group(t, "family") in args.families
        ]
        cells = [_cell([t for t in traces if _group(t, args.by) == group]) for group in groups]
        print(f"| {path.name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
