"""Structure the packages keep: no import circle among a package's modules, no `assert` guarding
an invariant in package code (``python -O`` removes them), a docstring on every module, no module
over `MAX_LINES` lines, no import from the core into an environment (the core reaches
environments only through their registrations, `piv_core.plugins`), and the core's layers: each of
its units (a top-level module or a subpackage) imports only units of lower layers, as the table in
``piv_core/__init__.py`` states them, and ``docs/architecture.md`` draws who imports whom as it is."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(
    p.parent for p in [*ROOT.glob("packages/*/*/__init__.py"), *ROOT.glob("environments/*/*/__init__.py")]
)


CORE = ROOT / "packages" / "piv_core" / "piv_core"
ENVIRONMENTS = sorted(p.name for p in PACKAGES if p.parent.parent.name == "environments")
MAX_LINES = 450
SOURCE_DIRS = ("packages", "environments", "tests", "bench", "scripts")


def _modules(package: Path) -> dict[str, Path]:
    """Every module of `package` by dotted name."""
    found = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's own modules `name` imports, at any depth of its code."""
    out: set[str] = set()
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text())):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            # `from package import module` imports the module; any other name comes from `base`.
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name and not name.startswith(target + "."):
                out.add(target)
    return out


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_no_import_circle(package):
    modules = _modules(package)
    # A package's __init__ re-exports its modules; the circle that matters is between modules.
    graph = {
        name: {t for t in _imports(name, path, modules) if t != package.name}
        for name, path in modules.items()
        if name != package.name
    }
    assert _cycle(graph) is None, f"import circle: {' -> '.join(_cycle(graph) or [])}"


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_no_assert_in_package_code(package):
    found = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in package.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Assert)
    ]
    assert not found, f"invariants guarded by assert (removed under python -O): {found}"


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_every_module_says_what_it_owns(package):
    missing = [
        str(path.relative_to(ROOT))
        for path in package.rglob("*.py")
        if path.stat().st_size and not ast.get_docstring(ast.parse(path.read_text()))
    ]
    assert not missing, f"modules without a docstring: {missing}"


def test_the_walk_finds_every_package():
    assert {p.name for p in PACKAGES} >= {
        "piv_core",
        "au_bas_reconciliation_v1",
        "us_sut_reconciliation_v1",
        "geo_reprojection_v1",
        "beancount_ledger",
    }


def test_cycle_finder_by_hand():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def _absolute_imports(source: str) -> set[str]:
    """Every module `source` imports by absolute name, at any depth of its code: import statements,
    and `importlib.import_module` / `__import__` calls with a literal name."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                found.add(node.args[0].value)
    return found


def test_the_core_imports_no_environment():
    upward = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in CORE.rglob("*.py")
        for name in _absolute_imports(path.read_text())
        if name.split(".")[0] in ENVIRONMENTS
    }
    assert len(ENVIRONMENTS) >= 4 and not upward, f"the core imports environments: {sorted(upward)}"


def test_the_import_finder_sees_lazy_and_dynamic_imports():
    source = (
        "import os\n"
        "def later():\n"
        "    from beancount_ledger.taskset import LedgerData\n"
        "    import importlib\n"
        "    importlib.import_module('geo_reprojection_v1.levels')\n"
        "    __import__('au_bas_reconciliation_v1')\n"
        "from . import sibling\n"
    )
    assert _absolute_imports(source) == {
        "os",
        "beancount_ledger.taskset",
        "importlib",
        "geo_reprojection_v1.levels",
        "au_bas_reconciliation_v1",
    }


def test_no_module_is_over_the_line_limit():
    long = {
        str(path.relative_to(ROOT)): lines
        for folder in SOURCE_DIRS
        for path in (ROOT / folder).rglob("*.py")
        if ".venv" not in path.parts and (lines := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines: {long}"


ARCHITECTURE = ROOT / "docs" / "architecture.md"


def _unit(module: str) -> str:
    """The unit of the core a module belongs to: its top-level module or subpackage."""
    return module.split(".")[1]


def _core_layers() -> dict[str, int]:
    """Each unit's layer, read from the table in the core's package docstring."""
    layers: dict[str, int] = {}
    layer = None
    for line in (ast.get_docstring(ast.parse((CORE / "__init__.py").read_text())) or "").splitlines():
        match = re.match(r" {4}(?:layer (\d+))?\s+([a-z_]+)/?\s", line)
        if match:
            layer = int(match.group(1)) if match.group(1) else layer
            if match.group(2) in layers:
                raise ValueError(f"{match.group(2)} is in the layer table twice")
            layers[match.group(2)] = layer
    return layers


def _core_units() -> set[str]:
    return {p.stem for p in CORE.glob("*.py") if p.stem != "__init__"} | {
        p.parent.name for p in CORE.glob("*/__init__.py")
    }


def _core_edges() -> dict[str, set[str]]:
    """Unit -> the other units it imports (the package root, a facade, stands for what it re-exports)."""
    modules = _modules(CORE)
    reexported = {_unit(t) for t in _imports("piv_core", CORE / "__init__.py", modules)}
    edges: dict[str, set[str]] = {unit: set() for unit in _core_units()}
    for name, path in modules.items():
        if name == "piv_core":
            continue
        for target in _imports(name, path, modules):
            units = reexported if target == "piv_core" else {_unit(target)}
            edges[_unit(name)] |= units - {_unit(name)}
    return edges


def _picture(edges: dict[str, set[str]], layers: dict[str, int]) -> str:
    """Who imports whom, highest layer first, one unit a line: ``unit -> units it imports``."""

    def shown(unit: str) -> str:
        return f"{unit}/" if (CORE / unit).is_dir() else unit

    def ordered(units) -> list[str]:
        return sorted(units, key=lambda u: (-layers.get(u, -1), u))

    width = max(len(shown(u)) for u in edges)
    return "\n".join(
        f"{layers.get(u, '?')}  {shown(u).ljust(width)}  -> "
        + (" ".join(shown(t) for t in ordered(edges[u])) or "(nothing)")
        for u in ordered(edges)
    )


def test_every_core_unit_has_one_layer():
    layers, units = _core_layers(), _core_units()
    assert set(layers) == units, (
        f"units missing from the layer table in piv_core/__init__.py: {sorted(units - set(layers))}; "
        f"listed but absent: {sorted(set(layers) - units)}"
    )


def test_the_core_imports_only_downwards():
    layers = _core_layers()
    upward = sorted(
        f"{unit} (layer {layers[unit]}) imports {target} (layer {layers[target]})"
        for unit, targets in _core_edges().items()
        for target in targets
        if layers[target] >= layers[unit]
    )
    assert not upward, f"imports that do not go down a layer: {upward}"


def test_the_architecture_page_draws_the_imports_as_they_are():
    picture = _picture(_core_edges(), _core_layers())
    page = ARCHITECTURE.read_text()
    assert picture in page, f"docs/architecture.md's import picture is stale; it is now:\n{picture}"


def test_the_layer_check_catches_an_upward_import():
    layers = {"low": 0, "high": 1}
    edges = {"low": {"high"}, "high": {"low"}}
    assert [(u, t) for u, ts in edges.items() for t in ts if layers[t] >= layers[u]] == [("low", "high")]
    assert _unit("piv_core.runs.reading") == "runs" and _unit("piv_core.policy") == "policy"
