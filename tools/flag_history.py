#!/usr/bin/env python3
"""Build the sglang server-flag history across PyPI releases, statically.

What it does
------------
For every sglang release on PyPI between ``--min`` (default 0.4.0) and ``--max``
(default 0.5.23) this script

1. fetches the release wheel with ``pip download --no-deps --only-binary=:all:``
   into a cache directory (``--cache``, default ``/tmp/sglang-wheels``; a wheel
   already in the cache is reused, so re-runs need no network for those);
2. reads ``sglang/srt/server_args.py`` (and, lazily, the ``sglang/srt`` modules
   it imports from, e.g. ``arg_groups/**`` and ``utils``) straight out of the
   wheel -- nothing is imported or executed;
3. walks the AST and derives the flag catalog:

   * every ``<x>.add_argument(...)`` call in ``server_args.py`` whose option
     strings are literals;
   * when the module calls ``add_cli_args_from_dataclass``, every annotated
     field ``name: A[T, Arg(...)]`` / ``name: A[T, "help"]`` of ``ServerArgs``
     and of the namespace classes (classes carrying ``_NS_PATH``) it is
     assembled from, turned into a flag by the same rules as sglang's
     ``arg_groups/arg_utils.py`` (``--`` + field name with ``_`` -> ``-``,
     ``cli_name``/``aliases``, explicit ``action``, ``Literal`` -> choices,
     ``list[...]`` -> ``nargs='+'``, ``bool`` -> ``store_true``, otherwise a
     typed store; ``no_cli=True`` and un-annotated fields are skipped);
   * ``choices=`` / ``default=`` are evaluated statically: literals, simple
     name references (also across ``from ... import``), ``+`` concatenation,
     ``list()/tuple()/sorted()`` of those, ``ServerArgs.<field>`` and
     ``_declared_default("<field>")``.  Anything else is recorded as unknown
     (``choices: null`` / ``default_unknown: true``) -- never guessed;
   * deprecation: sglang's ``Deprecated*Action`` classes (``new_flag=`` is the
     replacement; ``error_message=`` means the flag is rejected), or a help text
     that starts by saying the flag is deprecated and names what to use instead
     (the help text itself is not stored);

4. folds the per-release catalogs into a compact history
   (``server/sglang_lsp/catalog/data/flag_history.json``; format in
   ``docs/flag-history.md``) and prints a summary, including the agreement of
   the static 0.5.23 extraction with the bundled, parser-generated catalog
   ``server/sglang_lsp/catalog/data/catalogs/sglang-0.5.23.json``.

Re-running
----------
::

    python3 tools/flag_history.py                       # all releases, default cache
    python3 tools/flag_history.py --cache DIR --out FILE
    python3 tools/flag_history.py --offline             # only wheels already cached

Releases that are yanked, have no wheel, or cannot be read are skipped and listed
under ``"skipped"`` in the output with the reason.
"""

from __future__ import annotations

import argparse
import ast
import glob
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any, Iterable

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "server" / "sglang_lsp" / "catalog" / "data" / "flag_history.json"
DEFAULT_CATALOG = REPO / "server" / "sglang_lsp" / "catalog" / "data" / "catalogs" / "sglang-0.5.23.json"
SERVER_ARGS_MODULE = "sglang.srt.server_args"


class _Unknown:
    """Marker for a value that cannot be determined statically."""

    _inst = None

    def __new__(cls):
        if cls._inst is None:
            cls._inst = super().__new__(cls)
        return cls._inst

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()
_MISSING = object()  # dataclass field without a default


# --------------------------------------------------------------------------- versions

def version_key(v: str) -> tuple:
    """Sort key for sglang versions like ``0.4.3.post2`` / ``0.5.0rc1``."""
    m = re.match(r"^(\d+(?:\.\d+)*)(?:(a|b|rc)(\d+))?(?:\.post(\d+))?$", v)
    if not m:
        return ((0,), 0, 0, 0)
    nums = tuple(int(x) for x in m.group(1).split("."))
    nums = nums + (0,) * (4 - len(nums))
    pre = {"a": -3, "b": -2, "rc": -1}.get(m.group(2) or "", 0)
    return (nums, pre, int(m.group(3) or 0), int(m.group(4) or 0))


def list_pypi_versions() -> list[str]:
    out = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", "sglang"],
        capture_output=True, text=True, check=True,
    ).stdout
    for line in out.splitlines():
        if line.strip().startswith("Available versions:"):
            return [v.strip() for v in line.split(":", 1)[1].split(",") if v.strip()]
    raise RuntimeError("could not parse `pip index versions sglang` output")


def cached_archive(version: str, cache: Path) -> Path | None:
    for pat in (f"sglang-{version}-*.whl",):
        hits = sorted(glob.glob(str(cache / pat)))
        if hits:
            return Path(hits[0])
    return None


def fetch(version: str, cache: Path, offline: bool) -> tuple[Path | None, str | None]:
    """Return (archive, None) or (None, reason)."""
    hit = cached_archive(version, cache)
    if hit:
        return hit, None
    if offline:
        return None, "not in cache (offline run)"
    cache.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
         f"sglang=={version}", "-d", str(cache)],
        capture_output=True, text=True,
    )
    hit = cached_archive(version, cache)
    if hit:
        return hit, None
    err = (proc.stderr or proc.stdout).strip().splitlines()
    tail = err[-1] if err else "pip download failed"
    if "yanked" in (proc.stderr or "").lower():
        return None, "yanked: " + tail
    return None, "unavailable: " + tail


# --------------------------------------------------------------------------- sources

class SourceTree:
    """Python modules of one release, read lazily from the wheel (or a dict)."""

    def __init__(self, files: dict[str, str] | None = None, archive: Path | None = None):
        self._files = dict(files or {})
        self._zip = zipfile.ZipFile(archive) if archive else None
        self._names = set(self._zip.namelist()) if self._zip else set()
        self._ast: dict[str, ast.Module | None] = {}

    def _path_of(self, module: str) -> str | None:
        base = module.replace(".", "/")
        for cand in (base + ".py", base + "/__init__.py"):
            if cand in self._files or cand in self._names:
                return cand
        return None

    def has(self, module: str) -> bool:
        return self._path_of(module) is not None

    def is_package(self, module: str) -> bool:
        p = self._path_of(module)
        return bool(p and p.endswith("__init__.py"))

    def module(self, module: str) -> ast.Module | None:
        if module in self._ast:
            return self._ast[module]
        path = self._path_of(module)
        tree = None
        if path is not None:
            src = self._files.get(path)
            if src is None and self._zip is not None:
                src = self._zip.read(path).decode("utf-8", "replace")
            try:
                tree = ast.parse(src)
            except SyntaxError:
                tree = None
        self._ast[module] = tree
        return tree


# --------------------------------------------------------------------------- evaluation

def _module_level_nodes(mod: ast.Module):
    """All nodes of code that runs at import time (not inside def/class/lambda bodies)."""
    stack = list(mod.body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))


_MUTATORS = {"add", "append", "extend", "insert", "update", "remove", "discard", "pop", "clear",
             "__setitem__", "setdefault"}


class Evaluator:
    """Static evaluation of simple expressions within a SourceTree."""

    def __init__(self, tree: SourceTree, field_defaults: dict[str, Any] | None = None):
        self.tree = tree
        self.field_defaults = field_defaults if field_defaults is not None else {}
        self._symtab: dict[str, dict[str, tuple]] = {}

    def symbols(self, module: str) -> dict[str, tuple]:
        """name -> ("expr", node) | ("import", module, name) | ("module", module)."""
        if module in self._symtab:
            return self._symtab[module]
        table: dict[str, tuple] = {}
        self._symtab[module] = table
        mod = self.tree.module(module)
        if mod is None:
            return table
        pkg = module if self.tree.is_package(module) else module.rpartition(".")[0]

        def walk(body):
            for node in body:
                if isinstance(node, ast.Assign):
                    for t in node.targets:
                        if isinstance(t, ast.Name):
                            table[t.id] = ("expr", node.value)
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
                    table[node.target.id] = ("expr", node.value)
                elif isinstance(node, ast.ImportFrom):
                    src = node.module or ""
                    if node.level:
                        parts = pkg.split(".")
                        up = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
                        src = ".".join(up + ([node.module] if node.module else []))
                    for a in node.names:
                        table.setdefault(a.asname or a.name, ("import", src, a.name))
                elif isinstance(node, ast.Import):
                    for a in node.names:
                        if a.asname:
                            table[a.asname] = ("module", a.name)
                elif isinstance(node, ast.If):
                    walk(node.body)
                elif isinstance(node, ast.Try):
                    walk(node.body)
                elif isinstance(node, ast.ClassDef):
                    table.setdefault(node.name, ("class", node))

        walk(mod.body)
        # A module-level name that is assigned more than once, augmented (``+=``) or
        # mutated in place (``NAME.add(...)``, ``NAME.append(...)``...) by code that runs
        # at import time has no single static value: drop it, so it evaluates as unknown.
        # (Mutations inside functions -- plugin registration hooks -- do not run when the
        # parser is built, so they do not make the built-in value unknown.)
        assigned: dict[str, int] = {}
        unstable: set[str] = set()
        for node in _module_level_nodes(mod):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        assigned[t.id] = assigned.get(t.id, 0) + 1
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                unstable.add(node.target.id)
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and isinstance(node.func.value, ast.Name)
                  and node.func.attr in _MUTATORS):
                unstable.add(node.func.value.id)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                unstable.update(node.names)
        unstable.update(n for n, c in assigned.items() if c > 1)
        for name in unstable:
            if name in table and table[name][0] == "expr":
                del table[name]
        return table

    def lookup(self, module: str, name: str, depth: int = 0) -> tuple[str, Any] | None:
        """Resolve ``name`` in ``module`` to ("expr", node, module) etc."""
        if depth > 12:
            return None
        entry = self.symbols(module).get(name)
        if entry is None:
            return None
        if entry[0] == "import":
            src, orig = entry[1], entry[2]
            if self.tree.has(src):
                return self.lookup(src, orig, depth + 1)
            sub = f"{src}.{orig}"
            if self.tree.has(sub):
                return ("module", sub, None)
            return None
        if entry[0] == "expr":
            return ("expr", entry[1], module)
        if entry[0] == "module":
            return ("module", entry[1], None)
        return (entry[0], entry[1], module)

    def eval(self, node: ast.AST | None, module: str, depth: int = 0,
             scope: dict[str, ast.AST] | None = None) -> Any:
        """Value of ``node`` in ``module`` (``scope``: a class body's own names), or UNKNOWN."""
        if node is None or depth > 20:
            return UNKNOWN
        ev = lambda n: self.eval(n, module, depth + 1, scope)  # noqa: E731
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            out = []
            for elt in node.elts:
                if isinstance(elt, ast.Starred):
                    v = ev(elt.value)
                    if not isinstance(v, list):
                        return UNKNOWN
                    out.extend(v)
                    continue
                v = ev(elt)
                if v is UNKNOWN:
                    return UNKNOWN
                out.append(v)
            return out
        if isinstance(node, ast.Dict):
            out = {}
            for k, v in zip(node.keys, node.values):
                kv = ev(k) if k is not None else UNKNOWN
                vv = ev(v)
                if kv is UNKNOWN or isinstance(kv, (list, dict)):
                    return UNKNOWN
                out[kv] = vv
            return out
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = ev(node.operand)
            return -v if isinstance(v, (int, float)) and not isinstance(v, bool) else UNKNOWN
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            a, b = ev(node.left), ev(node.right)
            if isinstance(a, list) and isinstance(b, list):
                return a + b
            if isinstance(a, str) and isinstance(b, str):
                return a + b
            if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
                return a + b
            return UNKNOWN
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Pow)):
            a, b = ev(node.left), ev(node.right)
            if all(isinstance(x, int) and not isinstance(x, bool) for x in (a, b)):
                return a * b if isinstance(node.op, ast.Mult) else (a ** b if b < 64 else UNKNOWN)
            if isinstance(a, float) or isinstance(b, float):
                if all(isinstance(x, (int, float)) for x in (a, b)):
                    return a * b if isinstance(node.op, ast.Mult) else UNKNOWN
            return UNKNOWN
        if isinstance(node, ast.Name):
            if node.id in ("True", "False", "None"):
                return {"True": True, "False": False, "None": None}[node.id]
            if scope and node.id in scope:
                return self.eval(scope[node.id], module, depth + 1, scope)
            hit = self.lookup(module, node.id)
            if hit and hit[0] == "expr":
                return self.eval(hit[1], hit[2], depth + 1)
            return UNKNOWN
        if isinstance(node, ast.Attribute):
            # ServerArgs.<field> (old releases: default=ServerArgs.port)
            if isinstance(node.value, ast.Name) and node.value.id in ("ServerArgs", "cls", "self"):
                return self.field_defaults.get(node.attr, UNKNOWN)
            # module_alias.CONST / SomeClass.CONST (class attribute assigned once)
            if isinstance(node.value, ast.Name):
                hit = self.lookup(module, node.value.id)
                if hit and hit[0] == "class" and not hit[1].bases:  # Enum members are not literals
                    body: dict[str, ast.AST] = {}
                    counts: dict[str, int] = {}
                    for stmt in hit[1].body:
                        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                                and isinstance(stmt.targets[0], ast.Name):
                            body[stmt.targets[0].id] = stmt.value
                            counts[stmt.targets[0].id] = counts.get(stmt.targets[0].id, 0) + 1
                        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) \
                                and stmt.value is not None:
                            body[stmt.target.id] = stmt.value
                            counts[stmt.target.id] = counts.get(stmt.target.id, 0) + 1
                    if counts.get(node.attr) == 1:
                        return self.eval(body[node.attr], hit[2], depth + 1, body)
                    return UNKNOWN
                if hit and hit[0] == "module":
                    sub = self.lookup(hit[1], node.attr)
                    if sub and sub[0] == "expr":
                        return self.eval(sub[1], sub[2], depth + 1)
            return UNKNOWN
        if isinstance(node, ast.Call):
            fn = node.func
            fname = fn.id if isinstance(fn, ast.Name) else None
            if fname in ("list", "tuple", "sorted") and len(node.args) == 1 and not node.keywords:
                v = ev(node.args[0])
                if isinstance(v, dict):
                    v = list(v.keys())
                if isinstance(v, list):
                    return sorted(v, key=repr) if fname == "sorted" else list(v)
                return UNKNOWN
            if fname == "_declared_default" and len(node.args) == 1:
                key = ev(node.args[0])
                return self.field_defaults.get(key, UNKNOWN) if isinstance(key, str) else UNKNOWN
            if isinstance(fn, ast.Attribute) and fn.attr == "keys" and not node.args:
                v = ev(fn.value)
                return list(v.keys()) if isinstance(v, dict) else UNKNOWN
            return UNKNOWN
        if isinstance(node, ast.JoinedStr):
            return UNKNOWN
        return UNKNOWN


# --------------------------------------------------------------------------- extraction

_DEPRECATED_HELP = re.compile(
    r"^\s*(?:\(?\s*deprecated\b|(?:NOTE:\s*)?--[\w-]+ is deprecated\b)", re.I)
_USE_INSTEAD = re.compile(
    r"\b(?:use|set)\s+[`'\"]?(--[A-Za-z0-9][\w\-{},]*"
    r"(?:=[^\s)`'\".,;]+| <[^>\s]+>"
    r"| (?!(?:instead|to|and|or|for|with|in|if|which|when|as|the|a|an)\b)[A-Za-z0-9_][^\s)`'\".,;]*)?)",
    re.I)


def _help_text(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _help_text(node.left), _help_text(node.right)
        return (a or "") + (b or "") if (a is not None or b is not None) else None
    return None


def deprecation_from_help(help_text: str | None) -> tuple[bool, str | None]:
    """(deprecated, replacement) when a help text opens by declaring deprecation."""
    if not help_text or not _DEPRECATED_HELP.match(help_text):
        return False, None
    m = _USE_INSTEAD.search(help_text)
    return True, (m.group(1).rstrip(".,") if m else None)


def _action_kind(node: ast.AST | None, evaluator: Evaluator, module: str) -> tuple[str, str | None]:
    """(action kind, custom class name)."""
    if node is None:
        return "store", None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, None
    name = node.attr if isinstance(node, ast.Attribute) else (node.id if isinstance(node, ast.Name) else None)
    if name == "BooleanOptionalAction":
        return "boolean_optional", None
    return "custom", name


def _type_name(node: ast.AST | None) -> str | None:
    if node is None:
        return None
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = node.value.id if isinstance(node.value, ast.Name) else "?"
        return f"{base}.{node.attr}"
    if isinstance(node, ast.Lambda):
        return "lambda"
    if isinstance(node, ast.Call):
        return _type_name(node.func) + "(...)" if _type_name(node.func) else None
    return None


def _jsonable(v: Any) -> Any:
    if v is UNKNOWN or v is _MISSING:
        return v
    try:
        json.dumps(v)
        return v
    except (TypeError, ValueError):
        return UNKNOWN


def _finish(entry: dict, choices: Any, default: Any, help_node: ast.AST | None,
            deprecated: bool = False, replacement: str | None = None, rejects: bool = False) -> dict:
    if choices is not None:
        entry["choices"] = None if choices is UNKNOWN or not isinstance(choices, list) else _jsonable(choices)
        if entry["choices"] is UNKNOWN:
            entry["choices"] = None
    if default is UNKNOWN:
        entry["default_unknown"] = True
    else:
        d = _jsonable(default)
        if d is UNKNOWN:
            entry["default_unknown"] = True
        else:
            entry["default"] = d
    h_dep, h_rep = deprecation_from_help(_help_text(help_node))
    deprecated = deprecated or h_dep
    replacement = replacement or h_rep
    if deprecated:
        entry["deprecated"] = True
        if replacement:
            entry["replacement"] = replacement
        if rejects:
            entry["rejects"] = True
    return entry


def _action_always_rejects(ev: Evaluator, module: str, cls_name: str) -> bool:
    """Whether the action class's ``__call__`` unconditionally raises / calls parser.error."""
    hit = ev.lookup(module, cls_name)
    if not hit or hit[0] != "class":
        return False
    for node in hit[1].body:
        if isinstance(node, ast.FunctionDef) and node.name == "__call__":
            for stmt in node.body:
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                    continue  # docstring
                if isinstance(stmt, ast.Raise):
                    return True
                if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                        and _head(stmt.value.func) == "error"):
                    return True
                return False
    return False


def option_from_add_argument(call: ast.Call, ev: Evaluator, module: str) -> dict | None:
    """Flag record from one ``add_argument`` call, or None if not a literal optional."""
    names = []
    for a in call.args:
        if isinstance(a, ast.Constant) and isinstance(a.value, str):
            names.append(a.value)
        else:
            return None
    if not names or not all(n.startswith("-") for n in names):
        return None
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    kind, cls = _action_kind(kw.get("action"), ev, module)
    long = next((n for n in names if n.startswith("--")), names[0])
    dest = ev.eval(kw["dest"], module) if "dest" in kw else long.lstrip("-").replace("-", "_")
    entry: dict[str, Any] = {"option_strings": names, "dest": dest if isinstance(dest, str) else None,
                             "action": kind}
    if cls:
        entry["action_class"] = cls
    if "nargs" in kw:
        n = ev.eval(kw["nargs"], module)
        entry["nargs"] = None if n is UNKNOWN else n
    if "type" in kw:
        entry["type"] = _type_name(kw["type"])
    if "const" in kw:
        c = _jsonable(ev.eval(kw["const"], module))
        entry["const"] = None if c is UNKNOWN else c
    if "required" in kw and ev.eval(kw["required"], module) is True:
        entry["required"] = True
    choices = ev.eval(kw["choices"], module) if "choices" in kw else None
    if "default" in kw:
        default = ev.eval(kw["default"], module)
    elif kind == "store_true":
        default = False
    elif kind == "store_false":
        default = True
    elif kind == "custom" and cls and "storetrue" in cls.lower():
        default = False  # sglang's Deprecated*StoreTrueAction sets default=False itself
    else:
        default = None
    deprecated = bool(cls and "deprecat" in cls.lower())
    replacement = None
    rejects = False
    if deprecated:
        if "new_flag" in kw:
            r = ev.eval(kw["new_flag"], module)
            replacement = r if isinstance(r, str) else None
        rejects = "error_message" in kw or _action_always_rejects(ev, module, cls)
    return _finish(entry, choices, default, kw.get("help"), deprecated, replacement, rejects)


# ---- dataclass fields

def _subscript_parts(node: ast.Subscript) -> list[ast.AST]:
    s = node.slice
    if isinstance(s, ast.Index):  # pragma: no cover (py<3.9)
        s = s.value  # type: ignore[attr-defined]
    return list(s.elts) if isinstance(s, ast.Tuple) else [s]


def _head(node: ast.AST) -> str | None:
    if isinstance(node, ast.Subscript):
        return _head(node.value)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _unwrap_optional(tp: ast.AST) -> ast.AST:
    if isinstance(tp, ast.BinOp) and isinstance(tp.op, ast.BitOr):
        parts = [tp.left, tp.right]
        non_none = [p for p in parts if not (isinstance(p, ast.Constant) and p.value is None)
                    and not (isinstance(p, ast.Name) and p.id == "None")]
        if len(non_none) == 1:
            return non_none[0]
        return tp
    if isinstance(tp, ast.Subscript) and _head(tp) == "Optional":
        return _subscript_parts(tp)[0]
    if isinstance(tp, ast.Subscript) and _head(tp) == "Union":
        parts = _subscript_parts(tp)
        non_none = [p for p in parts if not (isinstance(p, ast.Constant) and p.value is None)
                    and not (isinstance(p, ast.Name) and p.id == "None")]
        if len(non_none) == 1:
            return non_none[0]
    return tp


def _annotation_node(node: ast.AST) -> ast.AST:
    # ``from __future__ import annotations`` does not change the AST, but a string
    # annotation might appear; parse it.
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return node
    return node


def _field_default(value: ast.AST | None, ev: Evaluator, module: str) -> Any:
    if value is None:
        return _MISSING
    if isinstance(value, ast.Call) and _head(value.func) == "field":
        kw = {k.arg: k.value for k in value.keywords if k.arg}
        if "default" in kw:
            return ev.eval(kw["default"], module)
        if "default_factory" in kw:
            f = kw["default_factory"]
            if isinstance(f, ast.Name) and f.id in ("list", "dict", "set", "tuple"):
                return {"list": [], "dict": {}, "set": [], "tuple": []}[f.id]
            if isinstance(f, ast.Lambda):
                return ev.eval(f.body, module)
            return UNKNOWN
        return _MISSING
    return ev.eval(value, module)


def option_from_field(name: str, annotation: ast.AST, value: ast.AST | None,
                      ev: Evaluator, module: str) -> dict | None:
    """Flag record for one ``name: A[T, meta] = default`` field, per arg_utils rules."""
    ann = _annotation_node(annotation)
    if not (isinstance(ann, ast.Subscript) and _head(ann) in ("A", "Annotated")):
        return None
    parts = _subscript_parts(ann)
    raw_type, metas = parts[0], parts[1:]
    meta: dict[str, ast.AST] | None = None
    help_node = None
    for m in metas:
        if isinstance(m, ast.Call) and _head(m.func) == "Arg":
            meta = {k.arg: k.value for k in m.keywords if k.arg}
            if m.args:
                meta.setdefault("help", m.args[0])
            help_node = meta.get("help")
            break
        if _help_text(m) is not None:
            meta, help_node = {}, m
            break
    if meta is None:
        return None
    if "no_cli" in meta and ev.eval(meta["no_cli"], module) is True:
        return None
    cli = ev.eval(meta["cli_name"], module) if "cli_name" in meta else None
    cli_name = cli if isinstance(cli, str) else "--" + name.replace("_", "-")
    aliases = ev.eval(meta["aliases"], module) if "aliases" in meta else []
    if aliases is UNKNOWN or aliases is None:
        aliases = []
    names = [cli_name] + list(aliases)
    default = _field_default(value, ev, module)
    entry: dict[str, Any] = {"option_strings": names, "dest": name}
    choices_meta = ev.eval(meta["choices"], module) if "choices" in meta else None
    const = _jsonable(ev.eval(meta["const"], module)) if "const" in meta else None
    has_type_parser = "type_parser" in meta and not (
        isinstance(meta["type_parser"], ast.Constant) and meta["type_parser"].value is None)

    def done(choices, dflt):
        if const is not None:
            entry["const"] = None if const is UNKNOWN else const
        return _finish(entry, choices, None if dflt is _MISSING else dflt, help_node)

    if "action" in meta and not (isinstance(meta["action"], ast.Constant) and meta["action"].value is None):
        kind, cls = _action_kind(meta["action"], ev, module)
        entry["action"] = kind
        if cls:
            entry["action_class"] = cls
        dflt = default
        if dflt is _MISSING:
            dflt = False if kind == "store_true" else (True if kind == "store_false" else None)
        akw = ev.eval(meta["action_kwargs"], module) if "action_kwargs" in meta else None
        choices = None
        if isinstance(akw, dict):
            choices = akw.get("choices")
            if "default" in akw:
                dflt = akw["default"]
        deprecated = bool(cls and "deprecat" in cls.lower())
        replacement = akw.get("new_flag") if isinstance(akw, dict) and deprecated else None
        return _finish(entry, choices, dflt, help_node, deprecated, replacement)

    inner = _unwrap_optional(_annotation_node(raw_type))
    head = _head(inner)
    if head == "Literal" and isinstance(inner, ast.Subscript):
        lits = [ev.eval(p, module) for p in _subscript_parts(inner)]
        lits = UNKNOWN if any(v is UNKNOWN for v in lits) else lits
        entry["action"] = "store"
        vt = type(lits[0]).__name__ if isinstance(lits, list) and lits else "str"
        entry["type"] = _type_name(meta["type_parser"]) if has_type_parser else (vt if vt in ("int", "float") else "str")
        choices = choices_meta if choices_meta not in (None, [], ()) else lits
        return done(choices, default)
    if head in ("list", "List") and not has_type_parser:
        entry["action"] = "store"
        elem = _subscript_parts(inner)[0] if isinstance(inner, ast.Subscript) else None
        en = _head(elem) if elem is not None else "str"
        entry["type"] = en if en in ("int", "float") else "str"
        n = ev.eval(meta["nargs"], module) if "nargs" in meta else None
        entry["nargs"] = n if isinstance(n, (str, int)) else "+"
        return done(choices_meta if choices_meta else None, default)
    if head == "bool" and isinstance(inner, ast.Name):
        entry["action"] = "store_true"
        return _finish(entry, None, False if default is _MISSING else default, help_node)
    entry["action"] = "store"
    if has_type_parser:
        entry["type"] = _type_name(meta["type_parser"])
    else:
        entry["type"] = head if head in ("int", "float") and isinstance(inner, ast.Name) else "str"
    if "nargs" in meta:
        n = ev.eval(meta["nargs"], module)
        entry["nargs"] = None if n is UNKNOWN else n
    req = ev.eval(meta["required"], module) if "required" in meta else None
    if req is True or (req is None and default is _MISSING):
        entry["required"] = True
    return done(choices_meta if choices_meta else None, default)


def _class_fields(cls: ast.ClassDef) -> list[tuple[str, ast.AST, ast.AST | None]]:
    out = []
    for node in cls.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.append((node.target.id, node.annotation, node.value))
    return out


def _namespace_classes(tree: SourceTree, ev: Evaluator) -> list[tuple[str, ast.ClassDef]]:
    """Classes carrying ``_NS_PATH`` that ServerArgs collects (arg_groups.fields.*)."""
    out = []
    seen = set()
    for name, entry in ev.symbols(SERVER_ARGS_MODULE).items():
        if entry[0] != "import" or ".fields" not in entry[1]:
            continue
        hit = ev.lookup(SERVER_ARGS_MODULE, name)
        if not hit or hit[0] != "class":
            continue
        cls = hit[1]
        if id(cls) in seen:
            continue
        has_ns = any(isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_NS_PATH" for t in n.targets)
                     or isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and n.target.id == "_NS_PATH"
                     for n in cls.body)
        if has_ns:
            seen.add(id(cls))
            out.append((hit[2], cls))
    return out


def extract_catalog(tree: SourceTree) -> list[dict]:
    """Static flag catalog of one release: list of option records."""
    mod = tree.module(SERVER_ARGS_MODULE)
    if mod is None:
        raise ValueError("sglang/srt/server_args.py not found")
    ev = Evaluator(tree)
    server_cls = next((n for n in mod.body if isinstance(n, ast.ClassDef) and n.name == "ServerArgs"), None)
    field_sources: list[tuple[str, ast.ClassDef]] = []
    uses_dataclass = any(isinstance(n, ast.Call) and _head(n.func) == "add_cli_args_from_dataclass"
                         for n in ast.walk(mod))
    if uses_dataclass:
        field_sources.extend(_namespace_classes(tree, ev))
    if server_cls is not None:
        field_sources.append((SERVER_ARGS_MODULE, server_cls))
    # field defaults first (used by default=ServerArgs.x and _declared_default(...))
    for module, cls in field_sources:
        for name, _ann, value in _class_fields(cls):
            d = _field_default(value, ev, module)
            ev.field_defaults.setdefault(name, UNKNOWN if d is _MISSING else d)
    options: list[dict] = []
    if uses_dataclass:
        for module, cls in field_sources:
            for name, ann, value in _class_fields(cls):
                opt = option_from_field(name, ann, value, ev, module)
                if opt is not None:
                    options.append(opt)
    for node in ast.walk(mod):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            opt = option_from_add_argument(node, ev, SERVER_ARGS_MODULE)
            if opt is not None:
                options.append(opt)
    for opt in options:
        if opt.get("action") == "boolean_optional":  # argparse adds the --no- spellings
            opt["option_strings"] = opt["option_strings"] + [
                "--no-" + o[2:] for o in opt["option_strings"] if o.startswith("--")]
    # one record per option string; a later registration of the same string wins
    # (argparse would raise on a real conflict; sglang never ships one).
    seen: dict[str, int] = {}
    result: list[dict] = []
    for opt in options:
        dup = [seen[s] for s in opt["option_strings"] if s in seen]
        if dup:
            result[dup[0]] = opt
            for s in opt["option_strings"]:
                seen[s] = dup[0]
            continue
        for s in opt["option_strings"]:
            seen[s] = len(result)
        result.append(opt)
    return result


# --------------------------------------------------------------------------- history

# Attributes tracked per release range (everything an option record carries).
TRACKED = ("aliases", "dest", "action", "action_class", "nargs", "type", "const", "required",
           "choices", "default", "default_unknown", "deprecated", "replacement", "rejects")


def _per_flag_attrs(opt: dict, flag: str) -> dict:
    attrs = {k: v for k, v in opt.items() if k != "option_strings"}
    others = [s for s in opt["option_strings"] if s != flag]
    if others:
        attrs["aliases"] = others
    return {k: attrs[k] for k in TRACKED if k in attrs}


def build_history(catalogs: dict[str, list[dict]], skipped: dict[str, str]) -> dict:
    releases = sorted(catalogs, key=version_key)
    idx = {v: i for i, v in enumerate(releases)}
    per_flag: dict[str, dict[str, dict]] = {}
    for v in releases:
        for opt in catalogs[v]:
            for s in opt["option_strings"]:
                per_flag.setdefault(s, {})[v] = _per_flag_attrs(opt, s)
    flags = {}
    for flag in sorted(per_flag):
        by_rel = per_flag[flag]
        present = []
        segments = []
        for v in sorted(by_rel, key=version_key):
            attrs = by_rel[v]
            if present and idx[present[-1][1]] == idx[v] - 1:
                present[-1][1] = v
            else:
                present.append([v, v])
            last = segments[-1] if segments else None
            if last and last["attrs"] == attrs and idx[last["until"]] == idx[v] - 1:
                last["until"] = v
            else:
                segments.append({"since": v, "until": v, "attrs": attrs})
        flags[flag] = {
            "present": present,
            "segments": [{"since": s["since"], "until": s["until"], **s["attrs"]} for s in segments],
        }
    return {
        "format": 1,
        "generator": "tools/flag_history.py",
        "method": "static AST extraction from each release wheel",
        "releases": releases,
        "skipped": dict(sorted(skipped.items(), key=lambda kv: version_key(kv[0]))),
        "flags": flags,
    }


# --------------------------------------------------------------------------- comparison

def _norm_choices(c):
    if c is None:
        return None
    try:
        return sorted(set(json.dumps(x, sort_keys=True) for x in c))
    except TypeError:
        return None


def compare_with_catalog(static: list[dict], catalog: dict) -> dict:
    """Agreement of a static extraction with a parser-generated catalog."""
    real = {tuple(o["option_strings"]): o for o in catalog["options"] if o["action"] != "help"}
    real_by_flag = {s: o for o in real.values() for s in o["option_strings"]}
    stat_by_flag = {s: o for o in static for s in o["option_strings"]}
    real_flags, stat_flags = set(real_by_flag), set(stat_by_flag)
    common_opts = [o for o in real.values() if o["option_strings"][0] in stat_by_flag]
    res = {"real_options": len(real), "static_options": len(static),
           "missing": sorted(real_flags - stat_flags), "extra": sorted(stat_flags - real_flags),
           "option_strings_equal": 0, "action_equal": 0, "choices_equal": 0, "choices_unknown": 0,
           "default_equal": 0, "default_unknown": 0, "deprecated_equal": 0, "mismatches": []}
    for r in common_opts:
        s = stat_by_flag[r["option_strings"][0]]
        key = r["option_strings"][0]
        if sorted(s["option_strings"]) == sorted(r["option_strings"]):
            res["option_strings_equal"] += 1
        else:
            res["mismatches"].append((key, "option_strings", s["option_strings"], r["option_strings"]))
        if s["action"] == r["action"]:
            res["action_equal"] += 1
        else:
            res["mismatches"].append((key, "action", s["action"], r["action"]))
        if "choices" in s and s["choices"] is None:
            res["choices_unknown"] += 1
        elif _norm_choices(s.get("choices")) == _norm_choices(r["choices"]):
            res["choices_equal"] += 1
        else:
            res["mismatches"].append((key, "choices", s.get("choices"), r["choices"]))
        if s.get("default_unknown"):
            res["default_unknown"] += 1
        elif json.dumps(s.get("default"), sort_keys=True) == json.dumps(r["default"], sort_keys=True):
            res["default_equal"] += 1
        else:
            res["mismatches"].append((key, "default", s.get("default"), r["default"]))
        if bool(s.get("deprecated")) == bool(r["deprecated"]):
            res["deprecated_equal"] += 1
        else:
            res["mismatches"].append((key, "deprecated", s.get("deprecated"), r["deprecated"]))
    res["common"] = len(common_opts)
    return res


# --------------------------------------------------------------------------- main

def main(argv: Iterable[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", default="/tmp/sglang-wheels", help="wheel cache directory")
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="output JSON file")
    ap.add_argument("--min", default="0.4.0")
    ap.add_argument("--max", default="0.5.23")
    ap.add_argument("--offline", action="store_true", help="use cached wheels only; list versions from the cache")
    ap.add_argument("--catalog", default=str(DEFAULT_CATALOG), help="parser-generated catalog to validate against")
    ap.add_argument("--report", action="store_true", help="print mismatches against the catalog")
    args = ap.parse_args(list(argv) if argv is not None else None)
    cache = Path(args.cache)
    lo, hi = version_key(args.min), version_key(args.max)
    if args.offline:
        versions = sorted({Path(p).name.split("-")[1] for p in glob.glob(str(cache / "sglang-*.whl"))}, key=version_key)
    else:
        versions = list_pypi_versions()
    versions = sorted((v for v in versions if lo <= version_key(v) <= hi), key=version_key)
    catalogs: dict[str, list[dict]] = {}
    skipped: dict[str, str] = {}
    for v in versions:
        archive, reason = fetch(v, cache, args.offline)
        if archive is None:
            skipped[v] = reason or "unavailable"
            print(f"skip {v}: {skipped[v]}", file=sys.stderr)
            continue
        try:
            catalogs[v] = extract_catalog(SourceTree(archive=archive))
        except Exception as exc:  # a broken release must not stop the run
            skipped[v] = f"unreadable: {type(exc).__name__}: {exc}"
            print(f"skip {v}: {skipped[v]}", file=sys.stderr)
            continue
        print(f"{v}: {len(catalogs[v])} options", file=sys.stderr)
    history = build_history(catalogs, skipped)
    Path(args.out).write_text(json.dumps(history, separators=(",", ":"), sort_keys=False) + "\n")
    size = os.path.getsize(args.out)
    print(f"releases processed: {len(catalogs)}; skipped: {len(skipped)}; "
          f"distinct flags: {len(history['flags'])}; {args.out}: {size} bytes")
    if args.max in catalogs and Path(args.catalog).exists():
        cmp = compare_with_catalog(catalogs[args.max], json.loads(Path(args.catalog).read_text()))
        n = cmp["common"] or 1
        print(f"{args.max} vs catalog: real {cmp['real_options']} options, static {cmp['static_options']}, "
              f"matched {cmp['common']}; missing {len(cmp['missing'])} {cmp['missing'][:10]}; "
              f"extra {len(cmp['extra'])} {cmp['extra'][:10]}")
        for k in ("option_strings_equal", "action_equal", "choices_equal", "default_equal", "deprecated_equal"):
            print(f"  {k}: {cmp[k]}/{cmp['common']} ({100.0 * cmp[k] / n:.1f}%)")
        print(f"  choices unknown: {cmp['choices_unknown']}; default unknown: {cmp['default_unknown']}")
        if args.report:
            for m in cmp["mismatches"]:
                print("  mismatch", m)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
