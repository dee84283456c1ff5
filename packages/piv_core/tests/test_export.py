"""`piv-export`: tasks written to JSONL and a datasets dataset, re-loaded and re-validated."""

from __future__ import annotations

import importlib.util
import json

import pytest
from piv_core import export

datasets = pytest.importorskip("datasets", reason="piv-core's export extra (datasets) is not installed")
load_from_disk = datasets.load_from_disk

ENVS = {
    "au-bas-reconciliation-v1": ["--env.taskset.num-transactions", "8"],
    "us-sut-reconciliation-v1": [],
    "geo-reprojection-v1": [],
}
if importlib.util.find_spec("beancount_ledger") is not None:
    ENVS["beancount-ledger"] = []


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = {}
    for env_id, knobs in ENVS.items():
        path = tmp_path_factory.mktemp(env_id)
        written = export.export(env_id, 6, path, knobs, progress=False)
        out[env_id] = (path, written)
    return out


@pytest.mark.parametrize("env_id", list(ENVS))
def test_export_reloads_and_revalidates(exported, env_id):
    path, written = exported[env_id]
    assert written == (1 if env_id == "beancount-ledger" else 6)  # the keyless taskset holds one world
    lines = [json.loads(line) for line in (path / "tasks.jsonl").read_text().splitlines()]
    dataset = load_from_disk(str(path / "dataset"))
    assert len(lines) == len(dataset) == written
    assert [dict(r) for r in dataset] == lines
    count, problems = export.check(path)
    assert (count, problems) == (written, [])
    row = lines[0]
    assert row["env_id"] == env_id and row["prompt"] and row["system_prompt"]
    assert json.loads(row["key"])  # the key is exported
    assert ("files" in json.loads(row["inputs"])) == (env_id == "beancount-ledger")


def test_knobs_reach_the_taskset(exported):
    path, _ = exported["au-bas-reconciliation-v1"]
    row = json.loads((path / "tasks.jsonl").read_text().splitlines()[0])
    assert json.loads(row["config"])["num_transactions"] == 8


def _rows(path):
    return [json.loads(line) for line in (path / "tasks.jsonl").read_text().splitlines()]


def test_tampered_key_fails_the_check(exported):
    path, _ = exported["au-bas-reconciliation-v1"]
    rows = _rows(path)
    data = json.loads(rows[1]["data"])
    data["bas"]["G1"] += 1
    rows[1]["data"] = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    rows[1]["key"] = export._json({k: v for k, v in data.items() if k in ("bas", "faults")})
    assert list(export.problems(rows)) == [f"{rows[1]['task_id']}: its key does not validate"]


def test_a_column_that_disagrees_with_its_data_fails_the_check(exported):
    path, _ = exported["geo-reprojection-v1"]
    rows = _rows(path)
    rows[2]["prompt"] += " (edited)"
    (problem,) = export.problems(rows)
    assert "['prompt']" in problem


def test_bad_knob_fails_naming_it(tmp_path):
    with pytest.raises(SystemExit):
        export.export("au-bas-reconciliation-v1", 2, tmp_path, ["--env.taskset.num-transactions", "2"])


def test_command_line(tmp_path, capsys):
    export.main(["geo-reprojection-v1", "-n", "3", "-o", str(tmp_path), "--no-progress"])
    export.main(["--check", str(tmp_path)])
    assert "3/3 tasks valid" in capsys.readouterr().out
    (tmp_path / "dataset").rename(tmp_path / "gone")
    with pytest.raises(FileNotFoundError):
        export.main(["--check", str(tmp_path)])
