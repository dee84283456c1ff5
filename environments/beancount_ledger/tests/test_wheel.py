"""The released artefact: the wheel's file list, and an installed copy refusing the development override.

Builds the beancount-ledger and piv-core wheels and audits the file list. In a copy installed from
the wheels (CI's `make test-ranges`), asks that copy for an unmanifested world with the override
set; in a development checkout that test skips.
"""

import os
import pwd
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from beancount_ledger import keys, release
from piv_core.testing import installed_from_wheel

ROOT = Path(__file__).resolve().parents[3]
UV = shutil.which("uv", path=os.path.dirname(sys.executable)) or shutil.which("uv") or "uv"
SHIPPED = re.compile(
    r"beancount_ledger/((world|attacks)/)?[a-z_]+\.py|beancount_ledger-[\d.]+\.dist-info/[A-Za-z_./]+|"
    r"beancount_ledger/world/data/bank_recon_001/[a-z_]+\.(csv|beancount)|"
    r"beancount_ledger/pyproject\.toml"  # the package's own metadata, where `prime eval` reads its defaults
)
WORLD_DATA = (
    "archive_prior_period.csv",
    "bank_statement.csv",
    "books.beancount",
    "parties.csv",
    "plants.csv",
    "world.csv",
)


def _build(package: str, out: Path) -> Path:
    subprocess.run(
        [UV, "build", "--wheel", "--package", package, "--out-dir", str(out), "--quiet"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    return next(out.glob(f"{package.replace('-', '_')}-*.whl"))


@pytest.fixture(scope="module")
def wheels(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    return _build("beancount-ledger", out), _build("piv-core", out)


@pytest.mark.e2e
def test_the_wheel_ships_code_and_the_shipped_world_only(wheels, dev_worlds):
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert "beancount_ledger/taskset.py" in names and "beancount_ledger/release.py" in names
    assert "beancount_ledger/world/shipped.py" in names
    stray = [n for n in names if not SHIPPED.fullmatch(n)]
    assert stray == [], f"not code, metadata or the shipped world: {stray}"
    data = sorted(n.rsplit("/", 1)[1] for n in names if n.endswith((".beancount", ".json", ".csv")))
    assert data == sorted(WORLD_DATA) and not [n for n in names if "test" in n]
    blob = b"".join(zipfile.ZipFile(wheels[0]).read(n) for n in names)
    secrets = [dev_worlds.encode()]
    home = Path(pwd.getpwuid(os.getuid()).pw_dir)  # the operator's, not the fixture's
    if (operator := home / keys.SECRET_FILE.removeprefix("~/")).is_file():
        secrets.append(operator.read_bytes().strip())
    assert not [s for s in secrets if s and s in blob], "a secret is in the wheel"


@pytest.mark.skipif(
    not installed_from_wheel("beancount_ledger"),
    reason="runs in a copy installed from the wheels (make test-ranges)",
)
def test_an_installed_copy_ignores_the_development_override(tmp_path):
    python, venv = Path(sys.executable), Path(sys.prefix)
    probe = (
        "import beancount_ledger, pydantic\n"
        "from beancount_ledger import release\n"
        "from beancount_ledger.taskset import LedgerConfig, make_task_data\n"
        "print('installed at', beancount_ledger.__file__)\n"
        "print('shipped world', make_task_data('bank_recon_001').public_id)\n"
        "print('source checkout:', release.source_checkout())\n"
        "try:\n"
        "    LedgerConfig(selectors=['eval:0'])\n"
        "    print('ADMITTED')\n"
        "except pydantic.ValidationError as error:\n"
        "    print(error.errors()[0]['msg'])\n"
    )
    env = {
        **os.environ,
        keys.SECRET_ENV: "a secret of at least sixteen bytes",
        release.OVERRIDE_ENV: "1",
        "HOME": str(tmp_path),
        "PYTHONPATH": "",
    }
    done = subprocess.run(
        [str(python), "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert str(venv) in output and "source checkout: False" in output
    assert "ADMITTED" not in output
    # The shipped world is read from the wheel's data files, byte for byte the source tree's.
    from beancount_ledger.taskset import make_task_data

    assert f"shipped world {make_task_data('bank_recon_001').public_id}" in output
    assert "not in the manifest" in output and f"{release.OVERRIDE_ENV} is ignored" in output
