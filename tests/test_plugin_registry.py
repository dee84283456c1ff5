"""The registry holds only what it loaded and checked: a registration that raises (anything at all),
hangs, breaks the protocol, has no mark where it must share an endpoint, or contests another
distribution's id or mark is refused with one line naming the distribution(s), and every other
environment is still served, each request reaching its own environment's policy.

Every failure kind is generated into a fake distribution (a ``*.dist-info`` folder beside a module)
and tried alone (a registry of test environments only) and beside the real environments."""

from __future__ import annotations

import importlib.metadata
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import verifiers.v1 as vf
from piv_core import plugins
from piv_core.baseline.endpoint import BaselineEndpoint, Unrecognised, running_endpoint
from piv_core.policy import Conversation
from piv_core.testing import register_environment, run_command

ROOT = Path(__file__).resolve().parents[1]
REAL = sorted(
    path.name.replace("_", "-")
    for path in (ROOT / "environments").iterdir()
    if (path / "pyproject.toml").exists()
)
BOUND = 0.5
"""The load bound of these tests (seconds): a hang is refused this soon."""

GOOD = {
    "good-env": "You keep the good test ledgers.",
    "other-good-env": "You check the other test ledgers.",
}
BAD_DIST = "hostile-dist"
BAD_POLICIES = '{"bad-only": lambda c: "BAD", "oracle": lambda c: "BAD"}'


@dataclass(frozen=True)
class Kind:
    """One way a registration can go wrong: the module body it ships (after ``ENV_ID``, the id it
    registers, and ``TARGET_MARK``, the mark of the environment it aims at), or a well-formed
    registration whose mark is made from the target's; and what its refusal line says."""

    body: str = ""
    says: str = ""
    mark: Callable[[str], str] | None = None
    contests: bool = False
    claims_target_id: bool = False

    def source(self, target_mark: str) -> str:
        return _registration(repr(self.mark(target_mark))) if self.mark else self.body


def _registration(mark: str) -> str:
    return f"PLUGIN = Registration(ENV_ID, {BAD_POLICIES}, mark={mark})"


ODD = """class Odd:
    id = ENV_ID
    policies = {{}}
    noisy = naive = answer_view = None
    levels = skill_prefixes = ()

    @property
    def mark(self):
        {action}


PLUGIN = Odd()"""

NO_TEXT = "mark is neither None nor a non-blank text"
OVERLAP = "marks overlap"
KINDS = {
    "raises-exception": Kind('raise RuntimeError("boom while importing")', "RuntimeError: boom"),
    "raises-system-exit": Kind("raise SystemExit(3)", "SystemExit: 3"),
    "raises-keyboard-interrupt": Kind("raise KeyboardInterrupt", "KeyboardInterrupt"),
    "raises-generator-exit": Kind("raise GeneratorExit", "GeneratorExit"),
    "raises-base-exception": Kind(
        'class Escape(BaseException):\n    pass\n\n\nraise Escape("out of here")', "Escape: out of here"
    ),
    "hangs-importing": Kind("import time\n\ntime.sleep(3600)", f"within {BOUND:g} s"),
    "reading-raises-system-exit": Kind(ODD.format(action="raise SystemExit(4)"), "SystemExit: 4"),
    "reading-hangs": Kind(
        ODD.format(action="import time\n\n        time.sleep(3600)"), f"within {BOUND:g} s"
    ),
    "mark-none": Kind(_registration("None"), "has no mark"),
    "mark-empty": Kind(_registration('""'), NO_TEXT),
    "mark-blank": Kind(_registration('" \\n "'), NO_TEXT),
    "mark-not-text": Kind(_registration("42"), NO_TEXT),
    "not-a-plugin": Kind("PLUGIN = object()", "it lacks id, policies"),
    "id-of-another": Kind(says="claimed by", mark=lambda m: "You are an impostor.", claims_target_id=True),
    "mark-of-another": Kind(says=OVERLAP, mark=lambda m: m, contests=True),
    "mark-extends-another": Kind(says=OVERLAP, mark=lambda m: m + " You are given more.", contests=True),
    "mark-opens-another": Kind(says=OVERLAP, mark=lambda m: m.rsplit(" ", 1)[0], contests=True),
    "mark-opens-every-other": Kind(says=OVERLAP, mark=lambda m: m[:3], contests=True),
    "mark-inside-a-prompt-line": Kind(mark=lambda m: m[4:]),
    "mark-around-another": Kind(mark=lambda m: "Note. " + m),
}
CONTEXTS = ["alone", "beside-the-real-environments"]


@pytest.fixture(scope="module")
def real_prompts() -> dict[str, str]:
    """A system prompt of each real environment's own tasks (their plugins imported once here, with
    the default bound, before the matrix bounds loading tightly)."""
    plugins.load_all()
    return {
        env_id: next(iter(vf.load_taskset(vf.taskset_config_type(env_id)(id=env_id)))).data.system_prompt
        for env_id in REAL
    }


def _write_module(site: Path, source: str) -> str:
    """`source` as a module of a fresh name under `site` (a module left hanging keeps its name)."""
    name = f"registry_test_{uuid.uuid4().hex[:10]}"
    (site / f"{name}.py").write_text(f'"""A test registration."""\n\n{source}\n')
    return name


def _good_site(site: Path) -> None:
    for env_id, mark in GOOD.items():
        module = _write_module(
            site,
            "from piv_core.plugins import Registration\n\n"
            f"ORACLE = {env_id + ' oracle'!r}\n"
            f'PLUGIN = Registration({env_id!r}, {{"oracle": lambda c: ORACLE}}, mark={mark!r})',
        )
        register_environment(site, env_id, f"{module}:PLUGIN", distribution=f"{env_id}-dist")


def _only(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry of this process reads the distributions under `site` and no other."""
    every = importlib.metadata.distributions
    monkeypatch.setattr(importlib.metadata, "distributions", lambda **_: every(path=[str(site)]))


def _hostile(env_id: str, target_mark: str, body: str) -> str:
    """A registration module: `body` after the names it may use (its id, the mark it targets)."""
    return (
        "from piv_core.plugins import Registration\n\n"
        f"ENV_ID = {env_id!r}\nTARGET_MARK = {target_mark!r}\n\n{body}"
    )


def _messages(system: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": "q"}]


def _ask(url: str, model: str, system: str) -> httpx.Response:
    body = {"model": model, "messages": _messages(system)}
    return httpx.post(f"{url}/chat/completions", json=body, timeout=10)


def _refusals(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("piv: refused")]


def _each_request_reaches_its_own(
    loaded: dict[str, plugins.Registration], prompts: dict[str, str], refused: set[str], bad_id: str
) -> None:
    """On the endpoint of every registered environment, each served environment's request reaches
    its own policies; a refused one's is answered with an error, never by the hostile environment."""
    endpoint = BaselineEndpoint(list(loaded.values()), shared=True)
    with running_endpoint() as url:  # every registered environment, as ``piv-baseline`` serves them
        for env_id, system in prompts.items():
            request = Conversation(_messages(system), [])
            if env_id in refused:
                with pytest.raises(Unrecognised):
                    endpoint.recognise(request)
                assert _ask(url, "baseline/bad-only", system).status_code == 400
                continue
            served = endpoint.recognise(request)
            assert served.id == env_id
            alone = plugins.load(env_id)
            assert all(served.policies[name] is policy for name, policy in alone.policies.items())
            # The hostile environment's own policy name is unknown to every other environment.
            assert _ask(url, "baseline/bad-only", system).status_code == 404
            if env_id in GOOD:
                answer = _ask(url, "baseline/oracle", system).json()["choices"][0]["message"]["content"]
                assert answer == f"{env_id} oracle"
        if bad_id not in refused:  # served beside the others, for its own requests only
            answer = _ask(url, "baseline/bad-only", loaded[bad_id].mark or "")
            assert answer.json()["choices"][0]["message"]["content"] == "BAD"


@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize("kind", list(KINDS))
def test_a_bad_registration_is_refused_and_the_others_are_served(
    kind, context, tmp_path, monkeypatch, capsys, real_prompts
):
    spec = KINDS[kind]
    site = tmp_path / "site"
    site.mkdir()
    _good_site(site)
    if context == "alone":
        _only(site, monkeypatch)
        prompts = {env_id: f"{mark} Rules follow." for env_id, mark in GOOD.items()}
        target = "good-env"
    else:
        prompts = {**real_prompts, **{env_id: f"{mark} Rules follow." for env_id, mark in GOOD.items()}}
        target = "geo-reprojection-v1" if spec.claims_target_id else "au-bas-reconciliation-v1"
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(plugins, "LOAD_TIMEOUT_S", BOUND)
    target_mark = plugins.load(target).mark or ""
    bad_id = target if spec.claims_target_id else "hostile-env"
    marks = {env_id: GOOD.get(env_id) or plugins.load(env_id).mark or "" for env_id in prompts}
    dists = {env_id: f"{env_id}-dist" if env_id in GOOD else env_id for env_id in prompts}
    module = _write_module(site, _hostile(bad_id, target_mark, spec.source(target_mark)))
    register_environment(site, bad_id, f"{module}:PLUGIN", BAD_DIST)
    if spec.claims_target_id:
        contested = {target}
    elif spec.mark:
        contested = {e for e in prompts if plugins.marks_overlap(marks[e], spec.mark(target_mark))}
    else:
        contested = set()
    assert bool(contested) == (spec.contests or spec.claims_target_id)
    refused = contested | ({bad_id} if contested or not spec.mark else set())
    capsys.readouterr()

    loaded = plugins.load_all()
    refusals = _refusals(capsys.readouterr().err)

    assert set(loaded) == (set(prompts) | {bad_id}) - refused
    # One line for each refusal, naming the hostile distribution (and, for a contest, the other).
    assert len(refusals) == (len(contested) or len(refused)), refusals
    assert all(repr(BAD_DIST) in line and spec.says in line for line in refusals), refusals
    for env_id in contested:
        assert sum(repr(dists[env_id]) in line for line in refusals) == 1, (env_id, refusals)

    if loaded:
        _each_request_reaches_its_own(loaded, prompts, refused, bad_id)
    else:  # a mark every other one starts with: nothing is left to serve, and the endpoint says so
        with pytest.raises(ValueError, match="no environment to serve"):
            running_endpoint().__enter__()

    # An environment loaded on its own (what `eval <id>` serves) is untouched by the hostile one,
    # unless its very id is contested: then both claimants are refused, naming both distributions.
    if spec.claims_target_id:
        with pytest.raises(plugins.Refused) as refusal:
            plugins.load_served([target])
        assert repr(BAD_DIST) in str(refusal.value) and repr(dists[target]) in str(refusal.value)
        return
    assert list(plugins.load_served([target])) == [target]
    if spec.mark or spec.says == "has no mark":  # well-formed: alone, it is served (unmarked or not)
        assert list(plugins.load_served([bad_id])) == [bad_id]
    else:
        with pytest.raises(plugins.Refused, match=repr(BAD_DIST)):
            plugins.load_served([bad_id])


def test_one_distribution_seen_twice_registers_once_and_two_of_one_name_contest(tmp_path, monkeypatch):
    first, second = tmp_path / "first", tmp_path / "second"
    for site in (first, second):
        site.mkdir()
    module = _write_module(first, _hostile("twice-env", "", _registration('"You twice."')))
    for site in (first, second):
        register_environment(site, "twice-env", f"{module}:PLUGIN")
        monkeypatch.syspath_prepend(str(site))
    assert len(plugins.claims()["twice-env"]) == 1
    assert plugins.load("twice-env").mark == "You twice."

    register_environment(second, "twice-env", f"{module}:OTHER")  # the same name, another object
    with pytest.raises(plugins.Refused, match="claimed by distribution 'twice-env'.* and by distribution"):
        plugins.load("twice-env")


def test_an_environment_without_a_mark_is_served_alone(tmp_path, monkeypatch):
    module = _write_module(
        tmp_path,
        'from piv_core.plugins import Registration\n\nPLUGIN = Registration("unmarked-env", '
        '{"oracle": lambda c: "unmarked oracle"})',
    )
    register_environment(tmp_path, "unmarked-env", f"{module}:PLUGIN")
    monkeypatch.syspath_prepend(str(tmp_path))
    with running_endpoint("unmarked-env") as url:
        answer = _ask(url, "baseline/oracle", "any system prompt at all")
    assert answer.json()["choices"][0]["message"]["content"] == "unmarked oracle"
    assert "unmarked-env" not in plugins.load_all()  # with the others, it could not be told apart


def test_every_real_mark_opens_its_prompts_and_no_two_overlap(real_prompts):
    marks = {env_id: plugins.load(env_id).mark for env_id in REAL}
    for env_id, system in real_prompts.items():
        assert marks[env_id] and system.startswith(marks[env_id]), env_id
    for a in REAL:
        for b in REAL:
            assert a == b or not plugins.marks_overlap(marks[a] or "", marks[b] or ""), (a, b)


# --------------------------------------------------------------------------- through the real command

HOSTILE = {
    "exits-env": "raise SystemExit(3)",
    "interrupts-env": "raise KeyboardInterrupt",
    "hangs-env": "import time\n\ntime.sleep(3600)",
    "unmarked-env": _registration("None"),
    "longer-mark-env": _registration('TARGET_MARK + " You are given the quarter\'s GST ledger."'),
    "geo-reprojection-v1": _registration('"You are an impostor."'),
}


@pytest.mark.e2e
def test_eval_serves_its_environment_whatever_else_is_installed(tmp_path, monkeypatch):
    """``eval au-bas-reconciliation-v1 --model baseline/oracle`` with every hostile kind installed
    beside it: it loads only the environment it evaluates, and earns full marks."""
    site = tmp_path / "site"
    site.mkdir()
    mark = plugins.load("au-bas-reconciliation-v1").mark
    for env_id, body in HOSTILE.items():
        module = _write_module(site, _hostile(env_id, mark or "", body))
        register_environment(site, env_id, f"{module}:PLUGIN", f"hostile-{env_id}")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])))
    out = str(tmp_path / "runs")
    args = ["--model", "baseline/oracle", "-n", "1", "--no-rich", "-o", out]
    code, output = run_command("eval", "au-bas-reconciliation-v1", *args, timeout=300)
    assert code == 0, output[-3000:]
    assert "1 episode, 1 completed, 0 errors, 0 timeouts, mean reward 1.000" in output, output[-3000:]

    # Its id contested, the run stops before it starts, naming both distributions on one line.
    code, output = run_command("eval", "geo-reprojection-v1", *args, timeout=300)
    assert code != 0
    (line,) = [line for line in output.splitlines() if "claimed by" in line]
    assert "'geo-reprojection-v1'" in line and "'hostile-geo-reprojection-v1'" in line, output[-3000:]
