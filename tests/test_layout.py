"""The package's layout holds (``../shared/design.md``, README "Layout"): the data flows one way
through floors of packages, nothing imports upward or in a cycle, no module reaches into another
module's private names, and no module grows past 900 lines.

Every import statement counts, at module level and inside functions (``if TYPE_CHECKING`` too):
a function-level import that goes upward is a cycle all the same, only hidden until it runs.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "server" / "sglang_lsp"

# lowest first; a module may import its own floor and the ones below it
FLOORS = ("base", "kb", "rules", "catalog", "extract", "context", "config", "fixes", "checks", "engine", "lsp",
          "cli")
MAX_LINES = 900


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()
TREES = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in MODULES.items()}


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _target(name: str, node: ast.ImportFrom) -> str | None:
    """The absolute module an ``from … import`` statement of module ``name`` imports from."""
    if node.level == 0:
        return node.module
    base = name.split(".") if _is_package(name) else name.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(name: str) -> list[tuple[str, str | None, int]]:
    """(module imported, name imported from it or None, line) for every import of ``name``."""
    out = []
    for node in ast.walk(TREES[name]):
        if isinstance(node, ast.ImportFrom):
            target = _target(name, node)
            if not target or not (target == "sglang_lsp" or target.startswith("sglang_lsp.")):
                continue
            for alias in node.names:
                full = f"{target}.{alias.name}"
                if full in MODULES:
                    out.append((full, None, node.lineno))
                else:
                    out.append((target, alias.name, node.lineno))
        elif isinstance(node, ast.Import):
            out += [(a.name, None, node.lineno) for a in node.names if a.name.startswith("sglang_lsp.")]
    return out


EDGES = {name: sorted({m for m, _, _ in _imports(name) if m in MODULES}) for name in MODULES}


def _floor(name: str) -> int:
    parts = name.split(".")
    return -1 if len(parts) == 1 else FLOORS.index(parts[1])


def test_every_subpackage_has_a_floor():
    tops = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert tops == set(FLOORS)
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert not loose, f"modules outside the floors: {loose}"


def test_root_package_imports_nothing_of_ours():
    assert EDGES["sglang_lsp"] == []


def test_no_module_imports_upward():
    upward = [f"{a} -> {b}" for a, targets in EDGES.items() for b in targets if _floor(b) > _floor(a)]
    assert not upward, "imports against the flow:\n" + "\n".join(upward)


def test_import_graph_has_no_cycle():
    # Tarjan's strongly connected components, iteratively
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    cycles = []
    counter = 0
    for root in MODULES:
        if root in index:
            continue
        work = [(root, iter(EDGES[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(EDGES[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in EDGES[node]:
                    cycles.append(sorted(component))
    assert not cycles, f"import cycles: {cycles}"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _defined(tree: ast.Module) -> set[str]:
    """Every name a module defines: functions, classes, methods, assigned names and attributes."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.attr)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            out.add(node.value)  # names in __slots__
    return out


DEFINED = {name: _defined(tree) for name, tree in TREES.items()}


def test_no_module_imports_a_private_name():
    found = [f"{name}:{line} imports {target}.{imported}" for name in MODULES
             for target, imported, line in _imports(name) if imported is not None and _private(imported)]
    assert not found, "\n".join(found)


def test_no_module_reaches_into_another_modules_private_names():
    """``module._name`` of a module of ours, and ``obj._name`` where ``_name`` is defined in
    another module of ours but not in this one (a private method or attribute used from outside
    the module that owns it). Private names of the standard library and of pygls are not ours."""
    ours_elsewhere: dict[str, set[str]] = {}
    for name, names in DEFINED.items():
        for n in names:
            if _private(n):
                ours_elsewhere.setdefault(n, set()).add(name)
    found = []
    for name, tree in TREES.items():
        aliases = {}  # local name → module of ours it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _target(name, node)
                for alias in node.names:
                    if target and f"{target}.{alias.name}" in MODULES:
                        aliases[alias.asname or alias.name] = f"{target}.{alias.name}"
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or not _private(node.attr):
                continue
            if isinstance(node.value, ast.Name) and node.value.id in aliases:
                found.append(f"{name}:{node.lineno} uses {aliases[node.value.id]}.{node.attr}")
            elif node.attr not in DEFINED[name] and ours_elsewhere.get(node.attr):
                owners = ", ".join(sorted(ours_elsewhere[node.attr]))
                found.append(f"{name}:{node.lineno} uses .{node.attr} (defined in {owners})")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_size(name):
    lines = MODULES[name].read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{MODULES[name].relative_to(PACKAGE)} has {lines} lines"


def test_the_checks_catch_what_they_are_for(tmp_path):
    """The helpers above on a planted package: an upward import inside a function, a private
    name imported, a private method called from outside its module."""
    tree = ast.parse("def f():\n    from ..engine.check import _hidden\n    x.helper._secret()\n")
    name = "sglang_lsp.base.planted"
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom))
    MODULES[name] = tmp_path / "planted.py"
    try:
        assert _target(name, node) == "sglang_lsp.engine.check"
        assert _floor("sglang_lsp.engine.check") > _floor(name)
        assert _private(node.names[0].name) and not _private("__init__")
        attr = next(n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "_secret")
        assert _private(attr.attr) and "_secret" not in _defined(tree)
    finally:
        del MODULES[name]


def test_layout_in_docs_names_real_folders():
    """README's Layout section names each floor folder, and every ``server/sglang_lsp/…`` path the
    docs mention exists."""
    root = PACKAGE.parents[1]
    readme = (root / "README.md").read_text(encoding="utf-8")
    layout = readme.split("## Layout", 1)[1].split("\n## ", 1)[0]
    for floor in FLOORS:
        assert re.search(rf"\b{floor}/", layout), f"README's Layout does not describe {floor}/"
    texts = [readme] + [p.read_text(encoding="utf-8") for p in (root / "docs").glob("*.md")]
    texts += [p.read_text(encoding="utf-8") for p in (PACKAGE / "rules" / "docs").glob("*.md")]
    missing = {m for t in texts for m in re.findall(r"server/sglang_lsp/[\w/]+\.(?:py|json)", t)
               if not (root / m).exists()}
    assert not missing, sorted(missing)
