"""The wheels as users get them, tested in the copy they were installed into.

CI's wheel stages (`make test-verifiers-0.3.1`, `make test-ranges`) build every package with
`uv build` and install the wheels alone into a fresh virtualenv, every dependency from the package
registry: with verifiers 0.3.1 and the three text environments, and with the dependencies at each
end of the published ranges and all four environments. They run this module with that copy's
interpreter: the installed packages are the wheels (no source tree, no workspace), ship the
prefixed commands only and carry the eval defaults where ``prime eval`` reads them, and the
copy's own baseline endpoint (``piv-baseline``) answers verifiers' own eval command (``vf-eval``;
``eval`` in 0.3.1), run from an empty directory with nothing of this repository on its path, with
the first environment's solver scoring 1.0 (the same stages run every environment's solver through
the installed ``piv-eval``). In a development checkout, where the packages are the source tree, it
skips: each combination of versions is tested once, in its own stage.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import socket
import subprocess
import sysconfig
import time
import tomllib
from pathlib import Path

import httpx
import pytest
from piv_core.testing import installed_from_wheel

ROOT = Path(__file__).resolve().parents[1]
SOLVERS = {
    "au-bas-reconciliation-v1": "oracle",
    "us-sut-reconciliation-v1": "oracle",
    "geo-reprojection-v1": "oracle",
    "beancount-ledger": "reference",
}
EPISODES = {env_id: 2 for env_id in SOLVERS} | {"beancount-ledger": 1}
"""Episodes per environment: beancount-ledger's keyless default is its one shipped world."""
PREFIXED = {"piv-eval", "piv-validate", "piv-summarize", "piv-baseline"}
BIN = Path(sysconfig.get_paths()["scripts"])


INSTALLED = [e for e in SOLVERS if importlib.util.find_spec(e.replace("-", "_")) is not None]

pytestmark = pytest.mark.skipif(
    not installed_from_wheel("piv_core"),
    reason="runs in a copy installed from the wheels (make test-verifiers-0.3.1, make test-ranges)",
)
VERIFIERS = importlib.metadata.version("verifiers")
EVAL_COMMAND = "vf-eval" if not VERIFIERS.startswith("0.3.") else "eval"
"""verifiers' v1 eval command in the installed release."""


def _clean_env() -> dict[str, str]:
    """The caller's environment minus anything that points back into this repository."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_PROJECT", "VIRTUAL_ENV", "PIV_DEV"))}
    env.pop("PYTHONPATH", None)
    env["PATH"] = os.pathsep.join([str(BIN), "/usr/bin", "/bin"])
    return env


def test_the_installed_copy_is_the_wheels_and_ships_prefixed_commands_only():
    assert {"au-bas-reconciliation-v1", "us-sut-reconciliation-v1", "geo-reprojection-v1"} <= set(INSTALLED)
    for module in ("piv_core", *(e.replace("-", "_") for e in INSTALLED)):
        assert installed_from_wheel(module), module
    scripts = {p.name for p in BIN.iterdir()}
    assert PREFIXED <= scripts
    for generic in ("eval", "validate", "summarize", "baseline-endpoint"):
        if generic in scripts:  # verifiers installs its own `eval` and `validate`: still its own
            assert "from verifiers." in (BIN / generic).read_text(), generic


def test_each_installed_environment_carries_its_eval_defaults_where_prime_eval_reads_them():
    """`prime eval` / `vf-eval` read ``[tool.verifiers.eval]`` from ``pyproject.toml`` in the
    installed module's own directory."""
    import importlib.resources

    for env_id in INSTALLED:
        module = env_id.replace("-", "_")
        shipped = tomllib.loads((importlib.resources.files(module) / "pyproject.toml").read_text())
        source = tomllib.loads((ROOT / "environments" / module / "pyproject.toml").read_text())
        assert shipped["tool"]["verifiers"]["eval"] == source["tool"]["verifiers"]["eval"], env_id


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_each_environment_scores_its_solver_through_verifiers_eval(tmp_path):
    tmp, env, envs, eval_command, bin_dir = tmp_path, _clean_env(), INSTALLED[:1], EVAL_COMMAND, BIN
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
        print(f"verifiers {VERIFIERS}: {rewards}")
        assert rewards == {env_id: [pytest.approx(1.0)] * EPISODES[env_id] for env_id in envs}
    finally:
        endpoint.terminate()
        endpoint.wait(timeout=30)
        log.close()
