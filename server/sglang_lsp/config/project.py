"""sglang-lsp's own configuration files: ``.sglang-lsp.toml`` (top-level keys) or the
``[tool.sglang-lsp]`` table of a ``pyproject.toml``. Not to be confused with
:mod:`sglang_lsp.extract.sglang_config`, which reads the ``--config`` YAML files sglang itself takes.

Discovery (docs/configuration.md): from the directory of the checked file upwards, the first
directory holding a ``.sglang-lsp.toml``, or a ``pyproject.toml`` with a ``[tool.sglang-lsp]``
table, wins (``.sglang-lsp.toml`` first when a directory has both). The nearest configuration
replaces the ones further up entirely, as in Ruff, unless it says ``extend = "<path>"``: then the
named file is read first and this one is layered on top (selections and severities add up;
``gpu``, ``sglang-version``, ``model-search-paths``, ``exclude`` are replaced when given;
``overrides`` of both apply, the extending file's last).

Keys: ``gpu``, ``sglang-version``, ``select``, ``extend-select``, ``ignore``, ``severity`` (a table
code-or-prefix → error|warning|info|hint), ``model-search-paths`` (relative to the configuration
file), ``exclude`` / ``extend-exclude`` (globs, for directory walks), ``extend`` and
``overrides`` (an array of tables with ``files`` globs and ``gpu``, ``sglang-version``,
``select``, ``extend-select``, ``ignore``, ``severity``).

Invalid configuration raises :class:`ConfigError` naming the file, line and key; nothing here
prints. Parsed files are cached by (path, mtime, size) and discovery per directory;
:func:`invalidate` forgets both (the language server calls it when a configuration changes).
Discovery lives in :mod:`sglang_lsp.config.discovery` and rule selection in
:mod:`sglang_lsp.config.selection` (both re-exported here): a check that no configuration file governs
never imports this module.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from . import discovery as config_discovery
from .discovery import PYPROJECT, TOOL_TABLE, ConfigError, governing_file, toml_reader
from ..base import workspace_files
from ..base.findings import Severity
from ..context.precedence import Origin
from .selection import Selection, code_problem, suggest

SCALAR_KEYS = ("gpu", "sglang-version")
CODE_LIST_KEYS = ("select", "extend-select", "ignore")
TOP_KEYS = ("gpu", "sglang-version", "select", "extend-select", "ignore", "severity", "model-search-paths",
            "exclude", "extend-exclude", "extend", "overrides")
OVERRIDE_KEYS = ("files", "gpu", "sglang-version", "select", "extend-select", "ignore", "severity")


@dataclass(frozen=True)
class Override:
    files: tuple[str, ...]
    root: str  # directory the globs are relative to
    values: tuple[tuple[str, Any, Origin], ...]
    selection: Selection
    severity: tuple[tuple[str, Severity, Origin], ...]


@dataclass(frozen=True)
class FileSettings:
    """What the configuration says for one checked file (its overrides applied)."""

    config_path: str | None
    values: tuple[tuple[str, Any, Origin], ...] = ()  # (key, value, origin), later wins
    selections: tuple[Selection, ...] = ()
    severity: tuple[tuple[str, Severity, Origin], ...] = ()
    model_search_paths: tuple[str, ...] = ()

    def value(self, key: str) -> tuple[Any, Origin] | None:
        found = [(v, o) for k, v, o in self.values if k == key]
        return found[-1] if found else None


@dataclass(frozen=True)
class ProjectConfig:
    path: str  # the configuration file (the extending one, when it extends another)
    root: str  # its directory
    values: tuple[tuple[str, Any, Origin], ...] = ()
    selections: tuple[Selection, ...] = ()
    severity: tuple[tuple[str, Severity, Origin], ...] = ()
    model_search_paths: tuple[str, ...] = ()
    exclude: tuple[tuple[str, str], ...] = ()  # (glob, directory it is relative to)
    overrides: tuple[Override, ...] = ()
    files: tuple[str, ...] = field(default=())  # every file read (the extend chain), for reloads

    def for_file(self, path: str) -> FileSettings:
        values = list(self.values)
        selections = list(self.selections)
        severity = list(self.severity)
        for ov in self.overrides:
            if any(glob_match(g, path, ov.root) for g in ov.files):
                values += ov.values
                if not ov.selection.empty:
                    selections.append(ov.selection)
                severity += ov.severity
        return FileSettings(self.path, tuple(values), tuple(selections), tuple(severity), self.model_search_paths)

    def excluded(self, path: str) -> bool:
        return any(glob_match(g, path, root) for g, root in self.exclude)


# --- globs ------------------------------------------------------------------------------------


def _glob_regex(pattern: str) -> str:
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 1)
            if j == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:j]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def glob_match(pattern: str, path: str, root: str) -> bool:
    """Whether ``path`` (a file) is matched by ``pattern`` relative to ``root``. A pattern without
    ``/`` matches any file or directory name on the way (``build``, ``*.gen.yaml``); one with ``/``
    is anchored at ``root`` (``deploy/amd/**``, ``examples/old.sh``); a pattern that names a
    directory matches every file below it. ``**`` spans directories, ``*`` and ``?`` do not."""
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root)).replace(os.sep, "/")
    pat = pattern.strip()
    if pat.startswith("./"):
        pat = pat[2:]
    pat = pat.rstrip("/")
    if not pat:
        return False
    parts = rel.split("/")
    if "/" not in pat:
        rx = re.compile(_glob_regex(pat))
        return any(rx.fullmatch(p) for p in parts if p not in ("..", "."))
    if rel.startswith("../"):
        return False
    rx = re.compile(_glob_regex(pat.lstrip("/")))
    return any(rx.fullmatch("/".join(parts[:n])) for n in range(1, len(parts) + 1))


# --- reading ----------------------------------------------------------------------------------

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_KEY = re.compile(r"^\s*(\"[^\"]*\"|'[^']*'|[A-Za-z0-9_.-]+)\s*=")


def _table_name(raw: str) -> tuple[str, ...]:
    return tuple(p.strip().strip("\"'") for p in re.findall(r"\"[^\"]*\"|'[^']*'|[^.]+", raw))


def key_lines(text: str, prefix: tuple[str, ...]) -> dict[str, int]:
    """1-based lines of the keys of the configuration table at ``prefix`` (``()``: top level):
    ``gpu``, ``severity``, ``severity.SGL101``, ``overrides[0]``, ``overrides[0].gpu`` …"""
    out: dict[str, int] = {}
    table: tuple[str, ...] | None = prefix if not prefix else ()
    arrays: dict[tuple[str, ...], int] = {}
    for n, line in enumerate(text.splitlines(), 1):
        h = _HEADER.match(line)
        if h:
            name = _table_name(h.group(2))
            table = name
            if h.group(1) == "[[":
                arrays[name] = arrays.get(name, -1) + 1
            rel = name[len(prefix):] if name[:len(prefix)] == prefix else None
            if rel:
                label = _label(rel, arrays, prefix)
                out.setdefault(label, n)
            continue
        k = _KEY.match(line)
        if k is None or table is None or table[:len(prefix)] != prefix:
            continue
        rel = table[len(prefix):]
        key = ".".join(_table_name(k.group(1)))
        label = (_label(rel, arrays, prefix) + "." if rel else "") + key
        out.setdefault(label, n)
    return out


def _label(rel: tuple[str, ...], arrays: dict, prefix: tuple[str, ...]) -> str:
    if rel and rel[0] == "overrides":
        idx = arrays.get(prefix + ("overrides",), 0)
        return ".".join([f"overrides[{idx}]", *rel[1:]])
    return ".".join(rel)


class _Reader:
    def __init__(self, path: str, text: str, prefix: tuple[str, ...]):
        self.path = path
        self.lines = key_lines(text, prefix)
        self.prefix = ".".join(prefix)
        self.problems: list[str] = []

    def line(self, key: str) -> int | None:
        while key:
            if key in self.lines:
                return self.lines[key]
            key = key.rpartition(".")[0]
        return None

    def origin(self, key: str) -> Origin:
        return Origin("config", self.path, self.line(key), key)

    def problem(self, key: str, message: str) -> None:
        line = self.line(key)
        shown = f"{self.prefix}.{key}" if self.prefix else key
        self.problems.append(f"{self.path}{':' + str(line) if line else ''}: `{shown}`: {message}")

    # --- typed values
    def string(self, key: str, value: Any) -> str | None:
        if not isinstance(value, str):
            self.problem(key, f"must be a string, not {_type(value)}")
            return None
        return value

    def strings(self, key: str, value: Any) -> tuple[str, ...] | None:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.problem(key, f"must be a list of strings, not {_type(value)}")
            return None
        return tuple(value)

    def codes(self, key: str, value: Any) -> tuple[str, ...] | None:
        items = self.strings(key, value)
        if items is None:
            return None
        out = []
        for item in items:
            code = item.strip().upper()
            problem = code_problem(code, item)
            if problem is not None:
                self.problem(key, problem)
            else:
                out.append(code)
        return tuple(out)

    def gpu(self, key: str, value: Any) -> str | None:
        name = self.string(key, value)
        if name is None:
            return None
        from ..context.facts import gpu_names, gpu_profile

        if gpu_profile(name) is None:
            self.problem(key, f"unknown GPU `{name}`{suggest(name.upper(), gpu_names())} "
                              f"(known: {', '.join(gpu_names())})")
            return None
        return name

    def version(self, key: str, value: Any) -> str | None:
        v = self.string(key, value)
        if v is None:
            return None
        from ..catalog.catalog import resolve_version
        from ..base.findings import CheckError

        try:
            return resolve_version(v.strip())
        except CheckError as exc:
            self.problem(key, str(exc))
            return None

    def severity(self, key: str, value: Any) -> tuple[tuple[str, Severity, Origin], ...]:
        if not isinstance(value, dict):
            self.problem(key, f"must be a table of rule code = severity, not {_type(value)}")
            return ()
        out = []
        names = [s.value for s in Severity]
        for code, sev in value.items():
            sub = f"{key}.{code}"
            checked = self.codes(sub, [code])
            if not checked:
                continue
            if not isinstance(sev, str) or sev.lower() not in names:
                shown = repr(sev) if not isinstance(sev, str) else f"`{sev}`"
                self.problem(sub, f"{shown} is not a severity (one of {', '.join(names)})"
                             f"{suggest(sev.lower(), names) if isinstance(sev, str) else ''}")
                continue
            out.append((checked[0], Severity(sev.lower()), self.origin(sub)))
        return tuple(out)

    def unknown(self, table: dict, known, where: str = "") -> None:
        for k in table:
            if k not in known:
                alt = k.replace("_", "-")
                hint = f"; did you mean `{alt}`?" if alt in known else suggest(k, known)
                self.problem(f"{where}{k}", f"unknown key{hint} (known: {', '.join(known)})")


def _type(value: Any) -> str:
    return {str: "a string", bool: "a boolean", int: "an integer", float: "a number", list: "a list",
            dict: "a table"}.get(type(value), type(value).__name__)


def _read_toml(path: str) -> tuple[str, dict]:
    try:
        raw = workspace_files.read_bytes(path, workspace_files.PROJECT_CONFIG)
    except OSError as exc:
        raise ConfigError(path, [f"{path}: cannot be read ({workspace_files.describe(exc)})"]) from None
    text = raw.decode("utf-8", "replace")
    try:
        return text, toml_reader().loads(text)
    except toml_reader().TOMLDecodeError as exc:
        raise ConfigError(path, [f"{path}: not valid TOML: {exc}"]) from None


def _table_of(path: str, data: dict) -> tuple[dict | None, tuple[str, ...]]:
    if os.path.basename(path) == PYPROJECT:
        tool = data.get("tool")
        table = tool.get("sglang-lsp") if isinstance(tool, dict) else None
        return table, TOOL_TABLE
    return data, ()


def _parse(path: str, chain: tuple[str, ...] = ()) -> ProjectConfig:
    path = os.path.abspath(path)
    if path in chain:
        raise ConfigError(path, [f"{path}: `extend` forms a cycle: {' -> '.join(chain + (path,))}"])
    text, data = _read_toml(path)
    table, prefix = _table_of(path, data)
    r = _Reader(path, text, prefix)
    if table is None:
        return ProjectConfig(path, os.path.dirname(path), files=(path,))
    if not isinstance(table, dict):
        raise ConfigError(path, [f"{path}: `{'.'.join(prefix)}` must be a table"])
    root = os.path.dirname(path)
    r.unknown(table, TOP_KEYS)

    base: ProjectConfig | None = None
    if "extend" in table:
        target = r.string("extend", table["extend"])
        if target is not None:
            full = os.path.normpath(os.path.join(root, os.path.expanduser(target)))
            if os.path.isdir(full):
                r.problem("extend", f"`{target}` is a directory, not a configuration file ({full})")
            elif not os.path.lexists(full):
                r.problem("extend", f"`{target}` does not exist (looked for {full})")
            else:
                try:
                    base = _parse(full, chain + (path,))
                except ConfigError as exc:
                    r.problems += exc.problems

    values: list[tuple[str, Any, Origin]] = []
    if "gpu" in table and (g := r.gpu("gpu", table["gpu"])) is not None:
        values.append(("gpu", g, r.origin("gpu")))
    if "sglang-version" in table and (v := r.version("sglang-version", table["sglang-version"])) is not None:
        values.append(("sglang-version", v, r.origin("sglang-version")))
    selection = _selection(r, table, "")
    severity = r.severity("severity", table["severity"]) if "severity" in table else ()
    paths = None
    if "model-search-paths" in table and (ps := r.strings("model-search-paths", table["model-search-paths"])) is not None:
        paths = tuple(os.path.normpath(os.path.join(root, os.path.expanduser(p))) for p in ps if p)
    exclude = None
    if "exclude" in table and (ex := r.strings("exclude", table["exclude"])) is not None:
        exclude = tuple((g, root) for g in ex)
    extend_exclude = ()
    if "extend-exclude" in table and (ex := r.strings("extend-exclude", table["extend-exclude"])) is not None:
        extend_exclude = tuple((g, root) for g in ex)
    overrides = []
    raw_ov = table.get("overrides", [])
    if not isinstance(raw_ov, list) or not all(isinstance(o, dict) for o in raw_ov):
        r.problem("overrides", "must be an array of tables (`[[" + ".".join(prefix + ("overrides",)) + "]]`)")
        raw_ov = []
    for i, ov in enumerate(raw_ov):
        where = f"overrides[{i}]."
        r.unknown(ov, OVERRIDE_KEYS, where)
        files = r.strings(where + "files", ov["files"]) if "files" in ov else None
        if "files" not in ov:
            r.problem(f"overrides[{i}]", "needs `files`, a list of globs")
        ov_values = []
        if "gpu" in ov and (g := r.gpu(where + "gpu", ov["gpu"])) is not None:
            ov_values.append(("gpu", g, r.origin(where + "gpu")))
        if "sglang-version" in ov and (v := r.version(where + "sglang-version", ov["sglang-version"])) is not None:
            ov_values.append(("sglang-version", v, r.origin(where + "sglang-version")))
        sel = _selection(r, ov, where)
        sev = r.severity(where + "severity", ov["severity"]) if "severity" in ov else ()
        if files:
            overrides.append(Override(files, root, tuple(ov_values), sel, sev))
    if r.problems:
        raise ConfigError(path, r.problems)

    own_selections = (selection,) if not selection.empty else ()
    if base is None:
        return ProjectConfig(path, root, tuple(values), own_selections, severity, paths or (),
                             (exclude if exclude is not None else ()) + extend_exclude, tuple(overrides), (path,))
    merged_values = base.values + tuple(values)
    return ProjectConfig(
        path, root, merged_values, base.selections + own_selections, base.severity + severity,
        paths if paths is not None else base.model_search_paths,
        (exclude if exclude is not None else base.exclude) + extend_exclude,
        base.overrides + tuple(overrides), base.files + (path,))


def _selection(r: _Reader, table: dict, where: str) -> Selection:
    got = {k: r.codes(where + k, table[k]) for k in CODE_LIST_KEYS if k in table}
    return Selection(got.get("select"), got.get("extend-select") or (), got.get("ignore") or ())


# --- cache (discovery: sglang_lsp.config.discovery) ------------------------------------------

_parsed: dict[str, tuple[tuple, ProjectConfig | ConfigError]] = {}
config_discovery.CACHES.append(_parsed)  # invalidate() forgets them too


def known_files() -> set[str]:
    """Every configuration file read so far (with the files they extend)."""
    out = set()
    for path, (_, cfg) in list(_parsed.items()):
        out.add(path)
        if isinstance(cfg, ProjectConfig):
            out.update(cfg.files)
    return out


def _stamp(path: str) -> tuple:
    try:
        st = os.stat(path)
    except OSError:
        return (None,)
    return (st.st_mtime_ns, st.st_size)


def discover(path: str | None, cwd: str | None = None) -> ProjectConfig | None:
    """The configuration for the file ``path`` (None: standard input or an untitled buffer,
    looked up from ``cwd``); raises ConfigError when the governing file is invalid."""
    found = governing_file(path, cwd)
    return load(found) if found else None


def load(path: str) -> ProjectConfig:
    """The configuration in ``path`` (cached while it and the files it extends are unchanged);
    raises ConfigError."""
    path = os.path.abspath(path)
    hit = _parsed.get(path)
    if hit is not None:
        stamps, cfg = hit
        files = cfg.files if isinstance(cfg, ProjectConfig) else (path,)
        if stamps == tuple(_stamp(f) for f in files):
            if isinstance(cfg, ConfigError):
                raise cfg
            return cfg
    try:
        cfg = _parse(path)
    except ConfigError as exc:
        _parsed[path] = ((_stamp(path),), exc)
        raise
    _parsed[path] = (tuple(_stamp(f) for f in cfg.files), cfg)
    return cfg
