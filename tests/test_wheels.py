"""Wheels as users get them: built, installed alone into a fresh virtualenv, run through vf-eval.

`uv build` makes the piv-core wheel and each environment's; they are installed with nothing
else of this repository (no workspace, no source tree, no PYTHONPATH; run from an empty
directory), every dependency resolved from the package registry, as a Hub, PyPI or prime-rl
user installs them. Twice: with the newest verifiers the ranges admit (0.4) and all four
environments, and with verifiers 0.3.1 and the three text environments (beancount-ledger
needs verifiers 0.4). Then the installed copy's own baseline endpoint (`piv-baseline`, one
process for every installed environment) answers verifiers' own eval command for each
environment's solver, which must score 1.0, and the installed commands must be the prefixed
ones only.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]
UV = shutil.which("uv", path=os.path.dirname(sys.executable)) or shutil.which("uv") or "uv"
PACKAGES = ("piv-core", "au-bas-reconciliation-v1", "us-sut-reconciliation-v1", "geo-reprojection-v1")
SOLVERS = {
    "au-bas-reconciliation-v1": "oracle",
    "us-sut-reconciliation-v1": "oracle",
    "geo-reprojection-v1": "oracle",
    "beancount-ledger": "reference",
}
VARIANTS = {
    # name: (packages installed, extra requirement, verifiers' v1 eval command in that release)
    "verifiers-0.4": ((*PACKAGES, "beancount-ledger"), None, "vf-eval"),
    "verifiers-0.3.1": (PACKAGES, "verifiers==0.3.1", "eval"),
}
EPISODES = {env_id: 2 for env_id in SOLVERS} | {"beancount-ledger": 1}
"""Episodes per environment: beancount-ledger's keyless default is its one shipped world."""
PREFIXED = {"piv-eval", "piv-validate", "piv-summarize", "piv-baseline"}


def _clean_env(tmp: Path) -> dict[str, str]:
    """The caller's environment minus anything that points back into this repository."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_PROJECT", "VIRTUAL_ENV", "PIV_DEV"))}
    env.pop("PYTHONPATH", None)
    env["PATH"] = os.pathsep.join([str(tmp / "venv" / "bin"), os.path.dirname(UV), "/usr/bin", "/bin"])
    env["UV_PYTHON_DOWNLOADS"] = "never"
    return env


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    built = {}
    for package in (*PACKAGES, "beancount-ledger"):
        subprocess.run(
            [UV, "build", "--wheel", "--package", package, "--out-dir", str(out), "--quiet"],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        built[package] = next(out.glob(f"{package.replace('-', '_')}-*.whl"))
    return built


@pytest.fixture(scope="module", params=sorted(VARIANTS))
def installed(request, wheels, tmp_path_factory):
    packages, extra, eval_command = VARIANTS[request.param]
    tmp = tmp_path_factory.mktemp(request.param)
    env = _clean_env(tmp)
    venv = tmp / "venv"
    subprocess.run(
        [UV, "venv", str(venv), "--quiet", "--python", sys.executable], check=True, cwd=tmp, env=env
    )
    requirements = [str(wheels[p]) for p in packages] + ([extra] if extra else [])
    done = subprocess.run(
        [UV, "pip", "install", "--no-config", "--python", str(venv / "bin" / "python"), *requirements],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return request.param, tmp, env, [p for p in packages if p != "piv-core"], eval_command


def _version(python: Path, dist: str, cwd: Path, env: dict[str, str]) -> str:
    code = f"import importlib.metadata as m; print(m.version({dist!r}))"
    return subprocess.run(
        [str(python), "-c", code], cwd=cwd, env=env, capture_output=True, text=True
    ).stdout.strip()


def test_the_installed_copy_is_the_wheels_and_ships_prefixed_commands_only(installed):
    variant, tmp, env, envs, _ = installed
    python = tmp / "venv" / "bin" / "python"
    expected = "0.4" if variant == "verifiers-0.4" else "0.3.1"
    assert _version(python, "verifiers", tmp, env).startswith(expected)
    for env_id in envs:
        module = env_id.replace("-", "_")
        where = subprocess.run(
            [str(python), "-c", f"import {module}; print({module}.__file__)"],
            cwd=tmp, env=env, capture_output=True, text=True,
        )  # fmt: skip
        assert str(tmp / "venv") in where.stdout and str(ROOT) not in where.stdout, (
            where.stdout + where.stderr
        )
    scripts = {p.name for p in (tmp / "venv" / "bin").iterdir()}
    assert PREFIXED <= scripts
    for generic in ("eval", "validate", "summarize", "baseline-endpoint"):
        if generic in scripts:  # verifiers 0.3.1 installs its own `eval` and `validate`: still its own
            assert "from verifiers." in (tmp / "venv" / "bin" / generic).read_text(), generic


def test_each_installed_environment_carries_its_eval_defaults_where_prime_eval_reads_them(installed):
    """`prime eval` / `vf-eval` read ``[tool.verifiers.eval]`` from ``pyproject.toml`` in the
    installed module's own directory."""
    _, tmp, env, envs, _ = installed
    python = tmp / "venv" / "bin" / "python"
    for env_id in envs:
        module = env_id.replace("-", "_")
        code = (
            "import importlib.resources, json, tomllib\n"
            f"data = tomllib.loads((importlib.resources.files({module!r}) / 'pyproject.toml').read_text())\n"
            "print(json.dumps(data['tool']['verifiers']['eval']))"
        )
        done = subprocess.run([str(python), "-c", code], cwd=tmp, env=env, capture_output=True, text=True)
        source = tomllib.loads((ROOT / "environments" / module / "pyproject.toml").read_text())
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == source["tool"]["verifiers"]["eval"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_each_environment_scores_its_solver_through_verifiers_eval(installed):
    variant, tmp, env, envs, eval_command = installed
    bin_dir = tmp / "venv" / "bin"
    port = _free_port()
    log = (tmp / "endpoint.log").open("w")
    endpoint = subprocess.Popen(
        [str(bin_dir / "piv-baseline"), "--port", str(port)],
        cwd=tmp,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                models = httpx.get(f"{base_url}/models", timeout=2).json()["data"]
                break
            except httpx.HTTPError:
                assert endpoint.poll() is None, (tmp / "endpoint.log").read_text()
                assert time.monotonic() < deadline, "piv-baseline never answered"
                time.sleep(0.5)
        served = {m["id"] for m in models}
        assert {f"baseline/{SOLVERS[e]}" for e in envs} <= served
        rewards = {}
        for env_id in envs:
            done = subprocess.run(
                [
                    str(bin_dir / eval_command), env_id, "-n", str(EPISODES[env_id]),
                    "--model", f"baseline/{SOLVERS[env_id]}",
                    "--client.base-url", base_url, "--client.api-key-var", "PIV_BASELINE_API_KEY",
                    "--env.agent.runtime.type", "subprocess", "--no-push", "--no-rich",
                    "-o", str(tmp / "outputs"), "--run.name", env_id,
                ],
                cwd=tmp, env=env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
            )  # fmt: skip
            traces_file = tmp / "outputs" / env_id / "traces.jsonl"
            assert traces_file.exists(), (done.stdout + done.stderr)[-4000:]
            episodes = [json.loads(line) for line in traces_file.read_text().splitlines() if line.strip()]
            output = (done.stdout + done.stderr)[-4000:]
            assert len(episodes) == EPISODES[env_id] and all(e.get("ok") for e in episodes), output
            totals = [
                sum(r["score"] * r.get("weight", 1.0) for r in trace["rewards"].values())
                for e in episodes
                for trace in e["traces"]
            ]
            rewards[env_id] = totals
        print(f"{variant}: {rewards}")
        assert rewards == {env_id: [pytest.approx(1.0)] * EPISODES[env_id] for env_id in envs}
    finally:
        endpoint.terminate()
        endpoint.wait(timeout=30)
        log.close()
