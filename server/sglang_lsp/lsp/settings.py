"""The server's settings (section ``sglang-lsp``), from ``initializationOptions``,
``workspace/didChangeConfiguration`` or ``workspace/configuration``.

Every setting has a type and a default. A value of the wrong type (or an unknown sglang
version, or a code pattern that is no rule code) falls back to the default and is reported
in :attr:`Parsed.problems`, which the server shows with ``window/showMessage``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from ..catalog.catalog import resolve_version
from ..catalog.user_catalogs import environment_version
from ..engine.check import Options
from ..base.findings import CheckError

SECTION = "sglang-lsp"
_CODE_PREFIX = re.compile(r"^SGL\d{0,3}$")
KNOWN_KEYS = ("gpu", "sglangVersion", "select", "ignore", "modelSearchPaths", "inlayHints", "python", "maxDiagnostics")
DEFAULT_MAX_DIAGNOSTICS = 1000


@dataclass(frozen=True)
class Settings:
    gpu: str | None = None
    sglang_version: str | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    model_search_paths: tuple[str, ...] = ()
    inlay_hints: bool = False
    python: str | None = None  # interpreter whose installed sglang sets the target release
    max_diagnostics: int = DEFAULT_MAX_DIAGNOSTICS  # per document; the rest are counted in one more

    def options(self, roots: tuple[str, ...] = ()) -> Options:
        """Engine options; ``roots`` (the workspace folders) are searched for models after the
        configured paths, as the CLI searches its working directory."""
        paths = self.model_search_paths + tuple(r for r in roots if r not in self.model_search_paths)
        explicit = self.sglang_version or (environment_version(self.python) if self.python else None)
        found = None if explicit else environment_version(None, roots)
        return Options(sglang_version=explicit, gpu=self.gpu, select=self.select, ignore=self.ignore,
                       model_search_paths=paths, origin="setting",
                       environment_version=found, environment_detail="sglang installed in the workspace's virtualenv")

    def target_version(self, roots: tuple[str, ...] = ()) -> str | None:
        """``sglangVersion``; else the version of the sglang installed for ``python``, else in a
        workspace folder's ``.venv``/``venv`` — read from its metadata, nothing is run (its
        catalog from the user's cache is then preferred, see docs/versions.md). The first two
        are settings; the last is only a guess, below what a file says (docs/configuration.md)."""
        if self.sglang_version:
            return self.sglang_version
        return environment_version(self.python, roots)


def engine_options(path: str | None, settings: Settings, roots: tuple[str, ...]) -> tuple[Options, tuple[str, str] | None, Any]:
    """Engine options for a document: the settings over the sglang-lsp configuration file that
    governs it; ``(path, problems)`` of an invalid configuration file (left out: its defaults
    are used); and the configuration found (``None``: none)."""
    from ..config import discovery as config_discovery
    from ..config import project as project_config

    options = settings.options(roots)
    start = path or (roots[0] + os.sep + "-" if roots else None)
    if start is None:
        return options, None, None
    try:
        cfg = project_config.discover(start)
    except config_discovery.ConfigError as exc:
        return options, (exc.path, "; ".join(exc.problems)), None
    if cfg is None:
        return options, None, None
    return options.replace(project=cfg.for_file(start)), None, cfg


@dataclass
class Parsed:
    settings: Settings
    problems: list[str] = field(default_factory=list)


def section_of(raw: Any) -> Any:
    """The ``sglang-lsp`` section of what a client sent: either wrapped in the section name
    (``{"sglang-lsp": {...}}``, what VS Code sends) or the section itself."""
    if isinstance(raw, dict) and SECTION in raw:
        return raw[SECTION]
    return raw


def _codes(name: str, value: Any, problems: list[str]) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [v for v in value.split(",")]
    if not isinstance(value, list):
        problems.append(f"`{name}` must be a list of rule codes (e.g. [\"SGL008\"]), not {type(value).__name__}")
        return ()
    out = []
    for item in value:
        code = item.strip().upper() if isinstance(item, str) else None
        if code == "":
            continue
        if code is None or not _CODE_PREFIX.match(code):
            problems.append(f"`{name}`: {item!r} is not a rule code or prefix (SGL, SGL0, SGL008 …); ignored")
            continue
        out.append(code)
    return tuple(out)


def parse(raw: Any) -> Parsed:
    raw = section_of(raw)
    problems: list[str] = []
    if raw is None:
        return Parsed(Settings())
    if not isinstance(raw, dict):
        return Parsed(Settings(), [f"settings must be an object, not {type(raw).__name__}; using the defaults"])

    gpu = raw.get("gpu")
    if gpu is not None and not (isinstance(gpu, str) and gpu.strip()):
        problems.append(f"`gpu` must be a GPU name such as \"H100\", not {gpu!r}; using none")
        gpu = None
    elif isinstance(gpu, str):
        gpu = gpu.strip()

    version = raw.get("sglangVersion")
    if version is not None:
        if not isinstance(version, str):
            problems.append(f"`sglangVersion` must be a version string such as \"0.5.23\", not {version!r}; "
                            "using the default")
            version = None
        else:
            try:
                version = resolve_version(version)
            except CheckError as exc:
                problems.append(f"`sglangVersion`: {exc}; using the default")
                version = None

    python = raw.get("python")
    if python is not None and not (isinstance(python, str) and python.strip()):
        problems.append(f"`python` must be the path of a Python interpreter, not {python!r}; using none")
        python = None
    elif isinstance(python, str):
        python = os.path.expanduser(python.strip())
        from ..catalog.user_catalogs import version_in_environment

        if version_in_environment(python) is None:
            problems.append(f"`python`: no sglang is installed in the environment of {python}; "
                            "the sglang version is not taken from it")

    select = _codes("select", raw.get("select"), problems)
    ignore = _codes("ignore", raw.get("ignore"), problems)

    paths_raw = raw.get("modelSearchPaths")
    paths: tuple[str, ...] = ()
    if paths_raw is not None:
        if isinstance(paths_raw, list) and all(isinstance(p, str) for p in paths_raw):
            paths = tuple(os.path.expanduser(p) for p in paths_raw if p)
        else:
            problems.append("`modelSearchPaths` must be a list of directory paths; using none")

    inlay = raw.get("inlayHints", False)
    if not isinstance(inlay, bool):
        problems.append(f"`inlayHints` must be true or false, not {inlay!r}; using false")
        inlay = False

    max_diagnostics = raw.get("maxDiagnostics", DEFAULT_MAX_DIAGNOSTICS)
    if isinstance(max_diagnostics, bool) or not isinstance(max_diagnostics, int) or max_diagnostics < 1:
        problems.append(f"`maxDiagnostics` must be a whole number of at least 1, not {max_diagnostics!r}; "
                        f"using {DEFAULT_MAX_DIAGNOSTICS}")
        max_diagnostics = DEFAULT_MAX_DIAGNOSTICS

    unknown = sorted(k for k in raw if k not in KNOWN_KEYS)
    if unknown:
        problems.append("unknown setting" + ("s" if len(unknown) > 1 else "") + ": "
                        + ", ".join(f"`{k}`" for k in unknown) + " (ignored)")
    return Parsed(Settings(gpu, version, select, ignore, paths, inlay, python, max_diagnostics), problems)
