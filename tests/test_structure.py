"""Structure the packages keep: no import circle among a package's modules, no `assert` guarding
an invariant in package code (``python -O`` removes them), a docstring on every module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(
    p.parent for p in [*ROOT.glob("packages/*/*/__init__.py"), *ROOT.glob("environments/*/*/__init__.py")]
)


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
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
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
