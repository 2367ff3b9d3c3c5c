"""The flag catalog of one sglang release (see ``docs/catalog-format.md``).

Catalogs are JSON files generated from sglang's own argparse parser by
``tools/extract_catalog.py``; this module loads them and answers argparse's questions:
which option does a spelling name, which spellings does a prefix match.
"""

from __future__ import annotations

import bisect
import functools
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import DEFAULT_SGLANG_VERSION, logger
from .findings import CheckError

log = logger(__name__)

CATALOG_DIR = Path(__file__).resolve().parent / "data" / "catalogs"


@dataclass(frozen=True)
class Option:
    dest: str
    option_strings: tuple[str, ...]
    action: str
    action_class: str | None
    nargs: int | str | None
    type: str | None
    choices: tuple | None
    default: Any
    const: Any
    required: bool
    deprecated: bool
    replacement: str | None
    rejects: bool
    config: bool
    help: str | None = None  # sglang's own help text (only in catalogs built from an installation)

    @property
    def name(self) -> str:
        """The canonical spelling: the first long option string that is not a ``--no-`` form."""
        longs = [s for s in self.option_strings if s.startswith("--")]
        if self.action == "boolean_optional":
            longs = [s for s in longs if not s.startswith("--no-")] or longs
        return longs[0] if longs else self.option_strings[0]

    @property
    def is_switch(self) -> bool:
        """Takes no value on the command line."""
        return self.nargs == 0 or self.action in (
            "store_true", "store_false", "store_const", "append_const", "count", "help", "version",
            "boolean_optional",
        )

    @property
    def config_keys(self) -> frozenset[str]:
        """The ``--config`` YAML keys (dashes as underscores) sglang maps to this option: its
        dest and every long spelling."""
        return frozenset({self.dest} | {s[2:].replace("-", "_") for s in self.option_strings if s.startswith("--")})

    @property
    def spelled(self) -> str:
        return "/".join(self.option_strings)


def option_from_raw(raw: dict) -> Option:
    """One option of a catalog's JSON (docs/catalog-format.md)."""
    return Option(
        dest=raw["dest"],
        option_strings=tuple(raw["option_strings"]),
        action=raw["action"],
        action_class=raw.get("action_class"),
        nargs=raw.get("nargs"),
        type=raw.get("type"),
        choices=tuple(raw["choices"]) if raw.get("choices") is not None else None,
        default=raw.get("default"),
        const=raw.get("const"),
        required=bool(raw.get("required")),
        deprecated=bool(raw.get("deprecated")),
        replacement=raw.get("replacement"),
        rejects=bool(raw.get("rejects")),
        config=bool(raw.get("config", True)),
        help=raw.get("help") if isinstance(raw.get("help"), str) else None,
    )


# argparse destination → ServerArgs field, as ServerArgs.from_cli_args of sglang 0.4.0 – 0.5.13.post1
# copies them (sglang/srt/server_args.py of those releases; 0.5.14 parses into the fields directly)
_FIELD_OF_DEST = {
    "tensor_parallel_size": "tp_size", "pipeline_parallel_size": "pp_size", "data_parallel_size": "dp_size",
    "expert_parallel_size": "ep_size", "attention_context_parallel_size": "attn_cp_size",
    "moe_data_parallel_size": "moe_dp_size",
}


class Catalog:
    def __init__(self, data: dict):
        self.sglang_version: str = data["sglang_version"]
        self.python_version: str | None = data.get("python_version")
        # where the catalog comes from: "bundled", "history" (derived from the flag history:
        # some facts unknown) or "user" (built from an installation by `sglang-lsp catalog build`)
        self.source: str = data.get("source") or "bundled"
        self.path: str | None = data.get("_path")
        self.unknown_defaults: set[str] = set()
        self.options: list[Option] = []
        self.by_string: dict[str, Option] = {}
        self.by_dest: dict[str, list[Option]] = {}
        for raw in data["options"]:
            opt = option_from_raw(raw)
            if raw.get("default_unknown"):
                self.unknown_defaults.add(opt.dest)
            self.options.append(opt)
            self.by_dest.setdefault(opt.dest, []).append(opt)
            for s in opt.option_strings:
                self.by_string[s] = opt
        self._sorted = sorted(self.by_string)
        # argparse sets each destination's default from the first action that declares it
        self.defaults: dict[str, Any] = {}
        for opt in self.options:
            self.defaults.setdefault(opt.dest, opt.default)
        self.required = [opt for opt in self.options if opt.required]
        # ServerArgs fields that releases up to 0.5.13.post1 parse under another destination and
        # copy over in ServerArgs.from_cli_args (`args.tp_size = args.tensor_parallel_size` …):
        # rules and checks read the field names, which these catalogs answer for
        self.field_dests: dict[str, str] = {
            field_name: dest for dest, field_name in _FIELD_OF_DEST.items()
            if dest in self.by_dest and field_name not in self.by_dest
        }
        for field_name, dest in self.field_dests.items():
            self.by_dest[field_name] = self.by_dest[dest]
            self.defaults[field_name] = self.defaults[dest]
            if dest in self.unknown_defaults:
                self.unknown_defaults.add(field_name)
        # argparse treats "-1" as a value unless some option looks like a negative number.
        self.has_negative_number_options = any(
            s[1:].replace(".", "", 1).isdigit() for s in self.by_string if s.startswith("-") and not s.startswith("--")
        )

    def lookup(self, spelling: str) -> Option | None:
        return self.by_string.get(spelling)

    def prefix_matches(self, prefix: str) -> list[str]:
        """Option strings that start with ``prefix``, in sorted order."""
        i = bisect.bisect_left(self._sorted, prefix)
        out = []
        while i < len(self._sorted) and self._sorted[i].startswith(prefix):
            out.append(self._sorted[i])
            i += 1
        return out

    def long_names(self) -> list[str]:
        return [s for s in self._sorted if s.startswith("--")]

    def config_key(self, key: str) -> Option | None:
        """The option a ``--config`` YAML key sets: its dest or any long spelling, with
        dashes and underscores interchangeable."""
        return self._config_keys().get(key.replace("-", "_"))

    @functools.cached_property
    def _config_key_map(self) -> dict[str, Option]:
        out: dict[str, Option] = {}
        for opt in self.options:
            for k in opt.config_keys:
                # a key a config-capable option also reads stays usable (shared dests)
                if k not in out or (opt.config and not out[k].config):
                    out[k] = opt
        return out

    def _config_keys(self) -> dict[str, Option]:
        return self._config_key_map


def available_versions() -> list[str]:
    """Versions with a bundled (full) catalog."""
    out = []
    for p in CATALOG_DIR.glob("sglang-*.json"):
        out.append(p.stem[len("sglang-") :])
    return sorted(out, key=_version_key)


def known_versions() -> list[str]:
    """Every version a catalog can be had for: the flag history's releases, the bundled
    catalogs and the catalogs built into the user's cache, oldest first."""
    from . import versions

    return sorted(set(versions.releases()) | set(available_versions()) | set(user_catalog_versions()),
                  key=versions.release_key)


@functools.lru_cache(maxsize=256)
def _version_key(v: str) -> tuple:
    return tuple(int(x) if x.isdigit() else x for x in v.replace("-", ".").split("."))


# --- the user's cache (`sglang-lsp catalog build`) --------------------------------------------

CACHE_ENV = "SGLANG_LSP_CACHE_DIR"


def cache_dir() -> Path:
    """``$SGLANG_LSP_CACHE_DIR``, else ``$XDG_CACHE_HOME/sglang-lsp``, else ``~/.cache/sglang-lsp``."""
    env = os.environ
    return _cache_dir(env.get(CACHE_ENV), env.get("XDG_CACHE_HOME"), env.get("HOME"))


@functools.lru_cache(maxsize=8)
def _cache_dir(explicit: str | None, xdg: str | None, home: str | None) -> Path:
    # computed once per environment: every check asks for it (is there a user-built catalog?)
    if explicit:
        return Path(explicit)
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "sglang-lsp"


def user_catalog_dir() -> Path:
    return cache_dir() / "catalogs"


def user_catalog_path(version: str) -> Path:
    return _user_catalog_path(cache_dir(), version)


@functools.lru_cache(maxsize=256)
def _user_catalog_path(cache: Path, version: str) -> Path:
    return cache / "catalogs" / f"{version}.json"


def user_catalog_versions() -> list[str]:
    try:
        return sorted(p.stem for p in user_catalog_dir().glob("*.json"))
    except OSError:
        return []


def resolve_version(version: str | None) -> str:
    """The release a version string names (see :func:`sglang_lsp.versions.normalize`);
    ``None`` is the default target."""
    from . import versions

    if version is None:
        return DEFAULT_SGLANG_VERSION
    if version in versions.releases():
        return version
    return versions.normalize(version, tuple(available_versions()) + tuple(user_catalog_versions()))


def catalog_for(version: str | None = None) -> Catalog:
    """The catalog for a version string, by precedence: a catalog the user built from an
    installation (user cache), else the bundled one, else one derived from the flag history.
    An unknown version is a :class:`CheckError` naming the known range."""
    release = resolve_version(version)
    user = user_catalog_path(release)
    try:
        st = user.stat()
        stamp: tuple | None = (str(user), st.st_mtime_ns, st.st_size)
    except OSError:
        stamp = None
    return _load(release, stamp)


load_catalog = catalog_for


@functools.lru_cache(maxsize=64)
def _load(release: str, user_stamp: tuple | None) -> Catalog:
    from . import versions

    if user_stamp is not None:
        try:
            with open(user_stamp[0], encoding="utf-8") as fh:
                data = json.load(fh)
            if data.get("sglang_version") != release or not isinstance(data.get("options"), list):
                raise ValueError("not a catalog of this release")
            data["source"] = "user"
            data["_path"] = user_stamp[0]
            return Catalog(data)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("ignoring the user catalog %s: %s", user_stamp[0], exc)
    path = CATALOG_DIR / f"sglang-{release}.json"
    if path.is_file():
        with path.open(encoding="utf-8") as fh:
            data = json.load(fh)
        data.setdefault("source", "bundled")
        return Catalog(data)
    if release in versions.releases():
        return Catalog(versions.catalog_data(release))
    raise CheckError(f"no flag catalog for sglang {release} (known: {versions.known_range()})")
