"""Hub-ready environment packages: the eval defaults and the README sections Prime Intellect's
Environments Hub expects of a verifiers environment.

- ``[tool.verifiers.eval]`` in each environment's pyproject.toml: the defaults ``prime eval run``
  takes when ``-n`` / ``-r`` are not given. The Hub's reader (PrimeIntellect-ai/verifiers,
  ``verifiers/scripts/eval.py``, ``get_env_eval_defaults``) takes exactly ``num_examples`` and
  ``rollouts_per_example``; the templates (``verifiers/scripts/init.py``) and the docs
  (``docs/environments.md``, ``docs/evaluation.md``) show both as positive integers. The verifiers
  this repository runs (0.4, ``verifiers.v1``) reads no such table; its ``eval`` takes the same two
  settings as ``-n`` (``select.limit``) and ``rollouts_per_example`` (an alias of ``num_rollouts``),
  so the values are validated against those fields too, and each equals the measured run of the
  environment's ``configs/*.toml``.
- The README sections of the Hub's environment template (``init.py``'s README template: Overview,
  Datasets, Task, Quickstart, Environment Arguments, Metrics) and "Required Environment Variables",
  the section ``docs/environments.md`` asks every environment to document its variables under. Each
  environment's section names every environment variable its package code reads, found in the code
  (`_env_reads`), not listed here.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path
from typing import Annotated

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENVIRONMENTS = sorted(p.parent for p in ROOT.glob("environments/*/pyproject.toml"))
EVAL_KEYS = ("num_examples", "rollouts_per_example")
"""The keys the Hub's `get_env_eval_defaults` reads from ``[tool.verifiers.eval]``."""
SECTIONS = (
    "Overview",
    "Datasets",
    "Task",
    "Quickstart",
    "Environment Arguments",
    "Metrics",
    "Required Environment Variables",
)
ROLLOUT_KEYS = ("num_rollouts", "rollouts_per_example", "group_size", "r")
"""How an eval config may spell the rollouts per task (verifiers.v1 `EvalConfig.num_rollouts`)."""


def _pyproject(env: Path) -> dict:
    return tomllib.loads((env / "pyproject.toml").read_text())


def _eval_table(env: Path) -> dict:
    return _pyproject(env).get("tool", {}).get("verifiers", {}).get("eval")


def _package(env: Path) -> Path:
    (package,) = _pyproject(env)["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
    return env / package


def test_every_environment_is_checked():
    assert {p.name for p in ENVIRONMENTS} >= {
        "au_bas_reconciliation_v1",
        "us_sut_reconciliation_v1",
        "geo_reprojection_v1",
        "beancount_ledger",
    }


# ---- [tool.verifiers.eval] ----


@pytest.mark.parametrize("env", ENVIRONMENTS, ids=lambda p: p.name)
def test_eval_defaults_are_the_hubs_two_keys_as_positive_integers(env):
    table = _eval_table(env)
    assert table is not None, f"{env.name}: no [tool.verifiers.eval] table"
    assert sorted(table) == sorted(EVAL_KEYS), f"{env.name}: keys {sorted(table)}, expected {EVAL_KEYS}"
    for key in EVAL_KEYS:
        value = table[key]
        assert type(value) is int and value >= 1, f"{env.name}: {key} = {value!r}"


@pytest.mark.parametrize("env", ENVIRONMENTS, ids=lambda p: p.name)
def test_eval_defaults_are_valid_settings_of_the_installed_verifiers_eval(env):
    select = pytest.importorskip("verifiers.v1.configs.select")
    cli = pytest.importorskip("verifiers.v1.configs.cli.eval")
    from pydantic import TypeAdapter

    table = _eval_table(env)
    assert select.SelectCLIConfig.model_validate({"n": table["num_examples"]}).limit == table["num_examples"]
    rollouts = cli.EvalConfig.model_fields["num_rollouts"]
    assert "rollouts_per_example" in rollouts.validation_alias.choices
    adapter = TypeAdapter(Annotated[(int, *rollouts.metadata)])
    assert adapter.validate_python(table["rollouts_per_example"]) == table["rollouts_per_example"]


def _config_of(name: str) -> dict:
    """The environment's eval config in configs/ (the one whose taskset id is `name`)."""
    found = [
        config
        for path in sorted((ROOT / "configs").glob("*.toml"))
        if (config := tomllib.loads(path.read_text())).get("env", {}).get("taskset", {}).get("id") == name
    ]
    assert len(found) == 1, f"{len(found)} configs in configs/ name {name}"
    return found[0]


@pytest.mark.parametrize("env", ENVIRONMENTS, ids=lambda p: p.name)
def test_eval_defaults_are_the_environments_measured_run(env):
    cli = pytest.importorskip("verifiers.v1.configs.cli.eval")
    table, config = _eval_table(env), _config_of(_pyproject(env)["project"]["name"])
    tasks = config.get("select", {}).get("limit")
    if tasks is None:  # beancount-ledger's config names its worlds by selector instead of `-n`
        from beancount_ledger.keys import expand_all

        tasks = len(expand_all(config["env"]["taskset"]["selectors"]))
    default = cli.EvalConfig.model_fields["num_rollouts"].default
    rollouts = next((config[key] for key in ROLLOUT_KEYS if key in config), default)
    assert (table["num_examples"], table["rollouts_per_example"]) == (tasks, rollouts)


def test_a_finite_tasksets_default_run_fits_in_it():
    from us_sut_reconciliation_v1.taskset import UsSutConfig

    env = ROOT / "environments" / "us_sut_reconciliation_v1"
    assert _eval_table(env)["num_examples"] <= UsSutConfig.model_fields["num_tasks"].default


# ---- README sections ----


def _sections(text: str) -> dict[str, str]:
    """Each level-2 or level-3 heading's title (lower-cased) -> the text up to the next one; lines
    inside fenced code blocks are never headings."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        heading = None if fenced else re.fullmatch(r"#{2,3} +(.+?) *", line)
        if heading:
            title = heading.group(1).lower()
            assert title not in found, f"heading {heading.group(1)!r} appears twice"
            current = found[title] = []
        elif current is not None:
            current.append(line)
    return {title: "\n".join(lines).strip() for title, lines in found.items()}


def _readme(env: Path) -> dict[str, str]:
    return _sections((env / "README.md").read_text())


def test_sections_by_hand():
    text = "# t\n\n## Overview\n\nfirst\n\n```bash\n## not a heading\n```\n\n### Task\nsecond\n## Empty\n"
    assert _sections(text) == {
        "overview": "first\n\n```bash\n## not a heading\n```",
        "task": "second",
        "empty": "",
    }


@pytest.mark.parametrize("env", ENVIRONMENTS, ids=lambda p: p.name)
def test_the_readme_has_every_section_the_hub_template_has(env):
    sections = _readme(env)
    missing = [title for title in SECTIONS if title.lower() not in sections]
    assert not missing, f"{env.name}/README.md lacks {missing}"
    empty = [title for title in SECTIONS if not sections[title.lower()]]
    assert not empty, f"{env.name}/README.md: empty sections {empty}"
    assert "--env.taskset." in sections["environment arguments"]


# ---- environment variables, found in the package code ----


def _module_name(path: Path, package: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _constants(tree: ast.Module) -> dict[str, str]:
    """The module-level string constants of `tree` (``NAME = "..."``)."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            found.update({t.id: node.value.value for t in targets if isinstance(t, ast.Name)})
    return found


def _env_reads(sources: dict[str, str]) -> dict[str, set[str]]:
    """Every environment variable the modules (dotted name -> source) read by name: ``os.environ``'s
    ``get``/``pop``/``setdefault``/``[...]``/``in``, and ``os.getenv``, with the name written as a
    literal, a module constant or another module's constant. Returns name -> where it is read; a
    read whose name cannot be resolved is reported under ``<unresolved>``."""
    trees = {name: ast.parse(source) for name, source in sources.items()}
    constants = {name: _constants(tree) for name, tree in trees.items()}
    reads: dict[str, set[str]] = {}
    for module, tree in trees.items():
        for name, line in _module_env_reads(module, tree, constants):
            reads.setdefault(name, set()).add(f"{module}:{line}")
    return reads


def _module_env_reads(module: str, tree: ast.Module, constants: dict[str, dict[str, str]]):
    """(variable name or ``<unresolved>``, line) for each read in one module (`_env_reads`)."""
    local = dict(constants[module])
    modules = {"os": "os"}
    environ, getenv = {"os.environ"}, {"os.getenv"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                as_name = alias.asname or alias.name
                if node.module == "os" and alias.name in ("environ", "getenv"):
                    (environ if alias.name == "environ" else getenv).add(as_name)
                elif f"{node.module}.{alias.name}" in constants:
                    modules[as_name] = f"{node.module}.{alias.name}"
                elif alias.name in constants.get(node.module, {}):
                    local[as_name] = constants[node.module][alias.name]
        elif isinstance(node, ast.Import):
            modules.update({a.asname or a.name: a.name for a in node.names})

    def dotted(expr: ast.expr) -> str:
        if isinstance(expr, ast.Name):
            return modules.get(expr.id, expr.id)
        if isinstance(expr, ast.Attribute):
            return f"{dotted(expr.value)}.{expr.attr}"
        return ""

    def resolve(expr: ast.expr) -> str | None:
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return expr.value
        if isinstance(expr, ast.Name):
            return local.get(expr.id)
        if isinstance(expr, ast.Attribute):
            return constants.get(dotted(expr.value), {}).get(expr.attr)
        return None

    for node in ast.walk(tree):
        named: ast.expr | None = None
        if isinstance(node, ast.Call) and node.args:
            func = dotted(node.func)
            owner, _, method = func.rpartition(".")
            if func in getenv or (owner in environ and method in ("get", "pop", "setdefault")):
                named = node.args[0]
        elif isinstance(node, ast.Subscript) and dotted(node.value) in environ:
            named = node.slice
        elif isinstance(node, ast.Compare) and any(dotted(c) in environ for c in node.comparators):
            named = node.left
        if named is not None:
            yield resolve(named) or "<unresolved>", node.lineno


def _package_env_reads(env: Path) -> dict[str, set[str]]:
    package = _package(env)
    return _env_reads(
        {
            _module_name(path, package): path.read_text()
            for path in sorted(package.rglob("*.py"))
            if "__pycache__" not in path.parts
        }
    )


def test_env_reads_by_hand():
    sources = {
        "pkg.names": 'SECRET = "PKG_SECRET"\nOTHER: str = "PKG_OTHER"\n',
        "pkg.a": (
            "import os\nfrom os import environ as env, getenv\nfrom pkg import names\n"
            "from pkg.names import OTHER as O\nLOCAL = 'PKG_LOCAL'\n"
            "def f(k):\n"
            "    os.environ.get(names.SECRET)\n    env.pop(O, None)\n    getenv(LOCAL)\n"
            "    os.environ['PKG_LITERAL']\n    'PKG_IN' in os.environ\n    os.environ.get(k)\n"
            "    os.environ.items()\n    {}.get('NOT_ENV')\n"
        ),
    }
    assert _env_reads(sources) == {
        "PKG_SECRET": {"pkg.a:7"},
        "PKG_OTHER": {"pkg.a:8"},
        "PKG_LOCAL": {"pkg.a:9"},
        "PKG_LITERAL": {"pkg.a:10"},
        "PKG_IN": {"pkg.a:11"},
        "<unresolved>": {"pkg.a:12"},
    }


@pytest.mark.parametrize("env", ENVIRONMENTS, ids=lambda p: p.name)
def test_the_readme_names_every_environment_variable_the_package_reads(env):
    reads = _package_env_reads(env)
    assert "<unresolved>" not in reads, (
        f"{env.name}: a variable read by a computed name at {reads['<unresolved>']}"
    )
    section = _readme(env)["required environment variables"]
    if not reads:
        assert section.startswith("None."), f"{env.name} reads no environment variable; say so"
    for name, where in sorted(reads.items()):
        assert f"`{name}" in section, f"{env.name}/README.md: {name} (read at {sorted(where)}) not documented"


# ---- beancount-ledger: the secret and the manifest ----

BEANCOUNT = ROOT / "environments" / "beancount_ledger"


def _refusals_raised_by(path: Path, function: str) -> set[str]:
    """The reasons of the `Refused(...)` errors `function` in `path` raises."""
    (node,) = [
        n
        for n in ast.walk(ast.parse(path.read_text()))
        if isinstance(n, ast.FunctionDef) and n.name == function
    ]
    return {
        call.args[0].value
        for call in ast.walk(node)
        if isinstance(call, ast.Call)
        and getattr(call.func, "id", None) == "Refused"
        and isinstance(call.args[0], ast.Constant)
    }


def test_beancount_ledgers_section_names_the_secret_and_the_manifest_and_what_their_absence_does():
    from beancount_ledger import keys, release

    section = _readme(BEANCOUNT)["required environment variables"]
    assert keys.SECRET_ENV in _package_env_reads(BEANCOUNT)  # the scan sees the secret's variable
    assert release.OVERRIDE_ENV in _package_env_reads(BEANCOUNT)
    for text in (keys.SECRET_ENV, keys.SECRET_FILE, release.DEFAULT_MANIFEST):
        assert f"`{text}`" in section, text
    assert f"at least {keys.MIN_SECRET_BYTES} bytes" in section
    (preflight,) = [
        name
        for name, target in _pyproject(BEANCOUNT)["project"]["scripts"].items()
        if target.endswith("preflight:main")
    ]
    assert f"`{preflight}`" in section
    assert "`--env.taskset.manifest" in section and "manifest" in _config_fields()
    package = _package(BEANCOUNT)
    reasons = _refusals_raised_by(package / "keys.py", "read_secret") | _refusals_raised_by(
        package / "release.py", "read_manifest"
    )
    assert {"no secret", "not in the manifest"} <= reasons <= set(keys.REASONS)
    for reason in sorted(reasons):
        assert f"`{reason}`" in section, f"the refusal {reason!r} is not in the section"


def _config_fields() -> set[str]:
    """The taskset knobs beancount-ledger adds to verifiers' `TasksetConfig`."""
    import verifiers.v1 as vf
    from beancount_ledger.taskset import LedgerConfig

    return set(LedgerConfig.model_fields) - set(vf.TasksetConfig.model_fields)


def test_beancount_ledgers_arguments_name_every_taskset_knob():
    section = _readme(BEANCOUNT)["environment arguments"]
    for field in sorted(_config_fields()):
        assert f"`--env.taskset.{field.replace('_', '-')}" in section, field
