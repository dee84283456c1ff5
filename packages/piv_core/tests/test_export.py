"""`piv-export`: tasks written to JSONL and a datasets dataset, re-loaded and re-validated."""

from __future__ import annotations

import importlib.util
import json
import re

import pytest
from piv_core.cli import export

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


@pytest.mark.parametrize(
    "env_id", ["au-bas-reconciliation-v1", "us-sut-reconciliation-v1", "geo-reprojection-v1"]
)
def test_a_mix_exports_each_task_at_its_rung(tmp_path, env_id):
    knobs = ["--env.taskset.levels", "[1, 2]", "--env.taskset.tasks-per-level", "2"]
    assert export.export(env_id, 4, tmp_path, knobs, progress=False) == 4
    rows = _rows(tmp_path)
    assert [row["level"] for row in rows] == [1, 2, 1, 2]
    assert all("level" not in json.loads(row["key"]) for row in rows)
    assert export.check(tmp_path) == (4, [])


def test_a_task_at_no_rung_exports_level_0(exported):
    assert {row["level"] for row in _rows(exported["us-sut-reconciliation-v1"][0])} == {0}


def _rows(path):
    return [json.loads(line) for line in (path / "tasks.jsonl").read_text().splitlines()]


def test_tampered_key_fails_the_check(exported):
    path, _ = exported["au-bas-reconciliation-v1"]
    rows = _rows(path)
    data = json.loads(rows[1]["data"])
    data["bas"]["G1"] += 1
    rows[1]["data"] = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    rows[1]["key"] = export._json({k: v for k, v in data.items() if k in json.loads(rows[1]["key"])})
    assert list(export.problems(rows)) == [f"row 1 ({rows[1]['task_id']}): its key does not validate"]


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
    with pytest.raises(SystemExit, match="dataset is not a directory"):
        export.main(["--check", str(tmp_path)])
    (tmp_path / "dataset").mkdir()
    (tmp_path / "dataset" / "state.json").write_text("{not json")
    with pytest.raises(SystemExit, match="is not a dataset export wrote"):
        export.main(["--check", str(tmp_path)])


# ----------------------------------------------------------------------------- hostile datasets

SENTINEL = "piv_export_sentinel"
"""A module on sys.path that records being imported: a row naming it must never import it."""
BAD_IDS = [
    "this",
    "os",
    "json",
    "../x",
    "x/y@1",
    "",
    " geo-reprojection-v1",
    "geo_reprojection_v1",
    "Geo-Reprojection-V1",
    "geo-reprojection-v1@0.1",
    "org/geo-reprojection-v1",
    SENTINEL,
    "x" * 5000,
]


@pytest.fixture
def sentinel(tmp_path, monkeypatch):
    """The sentinel module on sys.path, and every taskset resolution the check makes, recorded."""
    import sys

    import piv_core.cli.commands

    marker = tmp_path / "imported"
    (tmp_path / f"{SENTINEL}.py").write_text(f"open({str(marker)!r}, 'w').write('imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("this", SENTINEL):
        monkeypatch.delitem(sys.modules, name, raising=False)
    resolved: list[str] = []
    real = piv_core.cli.commands._eval_config

    def recording(argv):
        resolved.append(argv[0])
        return real(argv)

    monkeypatch.setattr(piv_core.cli.commands, "_eval_config", recording)
    imported: list[str] = []
    sys.addaudithook(lambda event, args: imported.append(args[0]) if event == "import" else None)
    yield resolved, imported, marker
    assert not marker.exists(), "a module a dataset named was imported"


def _bad_rows(good: dict) -> list[tuple[dict | object, str]]:
    """(row, what its one problem line must name): every column missing, mistyped or hostile."""
    cases: list[tuple[dict | object, str]] = []
    for column in good:
        cases.append(({k: v for k, v in good.items() if k != column}, column))
        wrong = 7 if isinstance(good[column], str) else str(good[column])
        cases.append(({**good, column: wrong}, column))
        cases.append(({**good, column: None}, column))
    cases += [
        ({**good, "extra": "x"}, "extra"),
        ({**good, "idx": True}, "idx"),
        ({**good, "idx": -1}, "idx"),
        ({**good, "prompt": "x" * (export.MAX_CELL + 1)}, "prompt"),
        (["not", "a", "row"], "not a record"),
        (None, "not a record"),
    ]
    cases += [({**good, "env_id": bad}, "env_id") for bad in BAD_IDS]
    config = json.loads(good["config"])
    for bad in [
        "not json",
        "[]",
        '"x"',
        "[" * 100_000,
        "{}",
        json.dumps({**config, "id": "this"}),
        json.dumps({**config, "id": "au-bas-reconciliation-v1"}),
        good["config"][:-1] + ',"id":"this"}',
    ]:
        cases.append(({**good, "config": bad}, "config"))
    cases.append(({**good, "config": json.dumps({**config, "families": "reproject"})}, "config: families"))
    cases.append(({**good, "config": json.dumps({**config, "level": True})}, "config: level"))
    for bad in ["not json", "{}", "[" * 100_000, json.dumps({**json.loads(good["data"]), "idx": "x"})]:
        cases.append(({**good, "data": bad}, "data"))
    return cases


def test_every_bad_row_is_one_line_naming_it_and_nothing_it_names_is_imported(exported, sentinel):
    resolved, imported, _ = sentinel
    path, _ = exported["geo-reprojection-v1"]
    good = _rows(path)[0]
    cases = _bad_rows(good)
    rows = [good] + [row for row, _ in cases]
    found = list(export.problems(rows))
    assert len(found) == len(cases), "\n".join(found)
    for number, (line, (_, names)) in enumerate(zip(found, cases, strict=True), start=1):
        assert line.startswith(f"row {number}"), line
        assert names in line, (names, line)
        assert "Traceback" not in line and len(line) < 2000, line
    assert set(resolved) <= set(export.environment_ids()), resolved
    assert not {"this", SENTINEL} & set(imported), imported


def test_the_check_command_on_a_hostile_dataset_exits_non_zero_one_line_a_row(exported, tmp_path):
    import subprocess
    import sys

    path, _ = exported["geo-reprojection-v1"]
    good = _rows(path)[0]
    rows = [good] + [{**good, "env_id": bad} for bad in ("this", "os", "../x", SENTINEL)]
    rows += [{**good, "data": "{}"}, {**good, "config": "[]"}]
    datasets.Dataset.from_list(rows).save_to_disk(str(tmp_path / "dataset"))
    (tmp_path / f"{SENTINEL}.py").write_text("print('SENTINEL IMPORTED')\n")
    done = subprocess.run(
        [sys.executable, "-c", "from piv_core.cli.export import main; main()", "--check", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**__import__("os").environ, "PYTHONPATH": str(tmp_path)},
    )
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "Traceback" not in out and "Zen of Python" not in out and "SENTINEL IMPORTED" not in out, out
    lines = [line for line in done.stdout.splitlines() if line.startswith("row ")]
    assert [line.split(":")[0].split(" (")[0] for line in lines] == [f"row {n}" for n in range(1, 7)], out
    assert "export check: 1/7 tasks valid" in done.stdout, out


def test_export_refuses_an_environment_outside_the_suite_before_importing_it(tmp_path, sentinel, capsys):
    for bad in ("this", SENTINEL, "json"):
        with pytest.raises(SystemExit):
            export.main([bad, "-n", "1", "-o", str(tmp_path / "out")])
        assert "not a registered environment of this suite" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        export.main(["geo-reprojection-v1", "-n", "١", "-o", str(tmp_path / "out")])
    assert "ASCII digits" in capsys.readouterr().err


def test_a_prompt_whose_numbers_are_in_another_script_does_not_validate(exported):
    path, _ = exported["geo-reprojection-v1"]
    rows = _rows(path)
    eastern = str.maketrans("0123456789", "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669")
    edited = []
    for row in rows:
        data = json.loads(row["data"])
        points = re.compile(r"^Point.*$", re.MULTILINE)  # the inputs every family's prompt states
        data["prompt"] = points.sub(lambda line: line[0].translate(eastern), data["prompt"])
        dumped = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
        edited.append({**row, "prompt": data["prompt"], "data": dumped})
    assert edited and list(export.problems(rows)) == []  # float() would read those inputs as the same
    found = list(export.problems(edited))
    assert len(found) == len(edited) and all("key" in line for line in found), found
