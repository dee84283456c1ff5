"""Keyed worlds, the signed manifest and the serving door: every refusal, named."""

import json

import pytest
from beancount_ledger import contract, keys, release, render, world
from beancount_ledger.keys import Refused
from beancount_ledger.release import task_digest
from beancount_ledger.taskset import LedgerConfig, LedgerTaskset, make_task_data
from pydantic import ValidationError

SECRET = "an evaluator secret of some length"
KEY = SECRET.encode()


def _refusal(reason: str, **config) -> str:
    with pytest.raises(ValidationError) as caught:
        LedgerConfig(**config)
    message = str(caught.value)
    assert reason in message, message
    assert "selectors" in message
    return message


def _release(tmp_path, selectors, secret=KEY, **extra):
    records = {s: {"digest": task_digest(make_task_data(s, secret))} for s in selectors}
    return release.write_manifest(tmp_path / "manifest.json", records, secret, **extra)


@pytest.fixture
def operator(no_operator, monkeypatch):
    monkeypatch.setenv(keys.SECRET_ENV, SECRET)
    return no_operator


# ----------------------------------------------------------------------------- grammar


def test_selectors_expand_ranges_in_order():
    assert keys.expand("eval:3-5") == ["eval:3", "eval:4", "eval:5"]
    assert keys.expand("train:0-1:hard") == ["train:0:hard", "train:1:hard"]
    assert keys.expand("train:7") == ["train:7"]
    assert keys.expand("bank_recon_001") == ["bank_recon_001"]
    assert len(keys.expand("eval:0-199")) == 200


@pytest.mark.parametrize(
    "selector", ["eval:3:hard", "eval:01", "train:5-2", "bogus", "train:-1", "eval:1.5", "train:", "hard:3"]
)
def test_malformed_selectors_are_refused_by_name(no_operator, selector):
    _refusal("malformed selector", selectors=[selector])


@pytest.mark.parametrize("selector", ["eval:100000", "train:99990-100000", "train:123456:hard"])
def test_indices_past_the_population_are_refused(no_operator, selector):
    _refusal("index out of range", selectors=[selector])


# ----------------------------------------------------------------------------- the secret


def test_the_shipped_world_needs_no_secret(no_operator):
    assert LedgerConfig().selectors == ["bank_recon_001"]
    assert [t.data.id for t in LedgerTaskset(LedgerConfig())] == ["bank_recon_001"]


def test_keyed_selectors_without_a_secret_are_refused(no_operator):
    message = _refusal("no secret", selectors=["eval:0"])
    assert keys.SECRET_ENV in message and keys.SECRET_FILE in message


def test_a_short_secret_is_refused(no_operator, monkeypatch):
    monkeypatch.setenv(keys.SECRET_ENV, "x" * 15)
    _refusal("secret too short", selectors=["eval:0"])


def test_the_secret_file_is_read_when_the_variable_is_unset(no_operator):
    path = no_operator / ".piv" / "eval_secret"
    path.parent.mkdir()
    path.write_text("short\n")
    with pytest.raises(Refused, match="secret too short"):
        keys.read_secret()
    path.write_text(SECRET + "\n")
    assert keys.read_secret() == SECRET.encode()


# ----------------------------------------------------------------------------- keyed worlds


def test_a_world_depends_on_the_secret_and_nothing_public_names_its_seed():
    a, b = (
        keys.keyed_world("eval:0", SECRET.encode()),
        keys.keyed_world("eval:0", b"another secret, same length"),
    )
    assert render.public_files(a) != render.public_files(b)
    seed = keys.world_seed(SECRET.encode(), "eval:0")
    files = render.public_files(a)
    assert all(str(seed) not in text and "eval:0" not in text for text in files.values())
    # The plain generator at any small integer does not reproduce it either.
    assert all(render.public_files(world.generate(n)) != files for n in range(50))


def test_public_id_is_a_function_of_the_public_files_alone():
    a = make_task_data("eval:4", SECRET.encode())
    again = make_task_data("eval:4", SECRET.encode())
    other = make_task_data("eval:5", SECRET.encode())
    assert a.public_id == again.public_id != other.public_id
    from beancount_ledger.release import public_id

    assert public_id(a.files) == a.public_id


def test_populations_never_share_a_company_month():
    secret = SECRET.encode()
    months: dict[str, set[tuple[str, str]]] = {}
    for name, count in (("train", 1000), ("eval", 200), ("hard", 200)):
        suffix = ":hard" if name == "hard" else ""
        split = "train" if name == "hard" else name
        worlds = (keys.keyed_world(f"{split}:{n}{suffix}", secret) for n in range(count))
        months[name] = {(w.company, f"{w.start:%Y-%m}") for w in worlds}
    assert not months["train"] & months["eval"]
    assert not months["train"] & months["hard"]
    assert not months["eval"] & months["hard"]
    shipped = world.bank_recon_001()
    assert all((shipped.company, f"{shipped.start:%Y-%m}") not in m for m in months.values())


def test_hard_worlds_are_longer_and_plant_more():
    secret = SECRET.encode()
    normal = [make_task_data(f"eval:{n}", secret) for n in range(10)]
    hard = [make_task_data(f"train:{n}:hard", secret) for n in range(10)]
    assert min(len(d.fixes) for d in hard) > max(len(d.fixes) for d in normal)
    size = lambda d: len(d.files[render.LEDGER])  # noqa: E731
    assert sum(map(size, hard)) > 1.2 * sum(map(size, normal))


# ----------------------------------------------------------------------------- the manifest


def test_a_manifested_selector_is_served_with_its_certified_digest(operator):
    path = _release(operator, ["eval:0", "eval:1", "train:2:hard"])
    config = LedgerConfig(selectors=["eval:0-1", "train:2:hard"], manifest=str(path))
    served = {t.data.id: task_digest(t.data) for t in LedgerTaskset(config)}
    records = json.loads(path.read_text())["body"]["records"]
    assert served == {s: r["digest"] for s, r in records.items()}


def test_a_selector_outside_the_manifest_is_refused(operator):
    path = _release(operator, ["eval:0"])
    message = _refusal("not in the manifest", selectors=["eval:0-1"], manifest=str(path))
    assert "'eval:1'" in message


def test_no_manifest_at_all_is_refused_with_the_way_to_make_one(operator):
    message = _refusal("not in the manifest", selectors=["eval:0"])
    assert "beancount-ledger-preflight" in message and "manifest" in message


def test_a_manifest_signed_under_another_secret_is_refused(operator):
    path = _release(operator, ["eval:0"], secret=b"some other evaluator secret")
    _refusal("manifest signature invalid", selectors=["eval:0"], manifest=str(path))


def test_an_altered_manifest_is_refused(operator):
    path = _release(operator, ["eval:0"])
    document = json.loads(path.read_text())
    document["body"]["records"]["eval:1"] = document["body"]["records"]["eval:0"]
    path.write_text(json.dumps(document))
    _refusal("manifest signature invalid", selectors=["eval:1"], manifest=str(path))
    path.write_text("not json")
    _refusal("manifest signature invalid", selectors=["eval:0"], manifest=str(path))


def test_a_manifest_from_another_version_is_refused(operator, monkeypatch):
    path = _release(operator, ["eval:0"])
    monkeypatch.setattr(
        release, "versions", lambda: {**contract.VERSIONS, "manifest_schema": 1, "generator": 99}
    )
    message = _refusal("version mismatch", selectors=["eval:0"], manifest=str(path))
    assert "generator" in message


def test_a_world_that_no_longer_matches_its_record_is_refused_at_load(operator):
    path = _release(operator, ["eval:0"])
    document = json.loads(path.read_text())
    body = document["body"]
    body["records"]["eval:0"]["digest"] = "0" * 64
    path.write_text(json.dumps({"body": body, "signature": release.sign(body, SECRET.encode())}))
    config = LedgerConfig(selectors=["eval:0"], manifest=str(path))
    with pytest.raises(Refused, match="version mismatch"):
        list(LedgerTaskset(config))


# ----------------------------------------------------------------------------- the development override


def test_the_override_admits_unmanifested_worlds_in_the_source_tree(dev_worlds):
    assert release.source_checkout()
    config = LedgerConfig(selectors=["eval:0", "dev:3"])
    assert [t.data.id for t in LedgerTaskset(config)] == ["eval:0", "dev:3"]


def test_dev_worlds_are_refused_without_the_override(operator):
    _refusal("not in the manifest", selectors=["dev:3"])


def test_an_installed_copy_ignores_the_override(dev_worlds, monkeypatch, tmp_path):
    monkeypatch.setattr(release, "_SOURCE_ROOT", tmp_path / "site-packages")
    assert not release.override_active()
    message = _refusal("not in the manifest", selectors=["eval:0"])
    assert f"{release.OVERRIDE_ENV} is ignored" in message


# ----------------------------------------------------------------------------- the contract digest


def test_schema_library_versions_move_the_episode_digest(monkeypatch):
    before = contract.episode_digest()["digest"]
    real = contract.version
    monkeypatch.setattr(contract, "version", lambda name: "9.9.9" if name == "pydantic" else real(name))
    assert contract.episode_digest()["digest"] != before


def test_the_digest_covers_the_published_tool_schemas():
    tools = {t["name"]: t for t in contract.tool_schemas()}
    assert set(tools) == {"list_files", "read_file", "grep", "run_beancount", "write_ledger", "submit"}
    assert tools["read_file"]["input_schema"]["required"] == ["name"]


def test_schema_libraries_are_ranges_that_hold_the_installed_version():
    """A trainer can install the package beside its own pins; the digest, not a pin, makes a
    library change loud (`test_schema_library_versions_move_the_episode_digest`)."""
    from importlib.metadata import requires, version

    from packaging.requirements import Requirement

    declared = {Requirement(r).name: Requirement(r) for r in requires("beancount-ledger")}
    for name in contract.SCHEMA_LIBRARIES:
        if name == "pydantic-core":  # pydantic pins it
            continue
        spec = declared[name].specifier
        assert str(spec) and "==" not in str(spec), f"{name}: {spec}"
        assert version(name) in spec, f"{name} {version(name)} outside {spec}"
