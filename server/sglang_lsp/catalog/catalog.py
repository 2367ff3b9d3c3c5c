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
from pathlib import Path
from typing import Any, NamedTuple

from .. import DEFAULT_SGLANG_VERSION, logger
from ..base.findings import CheckError

log = logger(__name__)

CATALOG_DIR = Path(__file__).resolve().parent / "data" / "catalogs"
# the bundled catalogs in row form (:func:`to_rows`), which a check reads instead
ROWS_DIR = CATALOG_DIR / "rows"


class Option(NamedTuple):
    """One option of sglang's server parser, as the catalog records it (a named tuple rather than
    a frozen dataclass: one costs a cold ``sglang-lsp check`` about a millisecond to build)."""

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


def to_rows(data: dict) -> dict:
    """A catalog in row form: its top-level entries, ``keys`` (the keys every option has, in
    order) and ``rows`` (each option's values in that order) instead of ``options``. The same
    facts in a third of the text, and parsed about three times faster than one JSON object per
    option (start-up time of ``sglang-lsp check``). ``tools/catalog_rows.py`` writes the row
    form of every bundled catalog into :data:`ROWS_DIR`; a test keeps them in sync."""
    options = data["options"]
    keys = list(options[0]) if options else []
    if any(list(o) != keys for o in options):
        raise ValueError("the options of this catalog do not all have the same keys")
    out = {k: v for k, v in data.items() if k != "options"}
    out["keys"] = keys
    out["rows"] = [[o[k] for k in keys] for o in options]
    return out


def _rows_of(data: dict) -> tuple[list[str], list[list]]:
    """(keys, rows) of a catalog in either form. Of one object per option, a key some option
    lacks reads as what :func:`option_from_raw` takes its absence for."""
    if "rows" in data:
        return data["keys"], data["rows"]
    options = data["options"]
    keys: dict[str, None] = {}
    for raw in options:
        if not isinstance(raw, dict):
            raise TypeError("a catalog option is a JSON object")
        keys.update(dict.fromkeys(raw))
    absent = {k: (True if k == "config" else None) for k in keys}
    return list(keys), [[raw.get(k, absent[k]) for k in keys] for raw in options]


# argparse destination → ServerArgs field, as ServerArgs.from_cli_args of sglang 0.4.0 – 0.5.13.post1
# copies them (sglang/srt/server_args.py of those releases; 0.5.14 parses into the fields directly)
_FIELD_OF_DEST = {
    "tensor_parallel_size": "tp_size", "pipeline_parallel_size": "pp_size", "data_parallel_size": "dp_size",
    "expert_parallel_size": "ep_size", "attention_context_parallel_size": "attn_cp_size",
    "moe_data_parallel_size": "moe_dp_size",
}


class Catalog:
    """The options of one release. A check looks up a dozen of its hundreds of options, so an
    :class:`Option` is made when it is first asked for (by :meth:`lookup`, or by ``options``,
    ``by_string`` and ``by_dest``, which make them all); spellings, destinations and defaults
    come straight from the catalog's data (start-up time of ``sglang-lsp check``)."""

    def __init__(self, data: dict):
        self.sglang_version: str = data["sglang_version"]
        self.python_version: str | None = data.get("python_version")
        # where the catalog comes from: "bundled", "history" (derived from the flag history:
        # some facts unknown) or "user" (built from an installation by `sglang-lsp catalog build`)
        self.source: str = data.get("source") or "bundled"
        self.path: str | None = data.get("_path")
        self._keys, self._rows = _rows_of(data)
        self._made: list[Option | None] = [None] * len(self._rows)
        self._at: dict[str, int] = {}  # option string → position of its option (the last one registered)
        self._dests: dict[str, list[int]] = {}  # destination → positions of the options storing to it
        self.unknown_defaults: set[str] = set()
        # argparse sets each destination's default from the first action that declares it
        self.defaults: dict[str, Any] = {}
        col = {k: i for i, k in enumerate(self._keys)}
        dest_at, strings_at = col["dest"], col["option_strings"]
        default_at, unknown_at, required_at = col.get("default"), col.get("default_unknown"), col.get("required")
        at, dests, defaults = self._at, self._dests, self.defaults
        for i, row in enumerate(self._rows):
            dest = row[dest_at]
            if unknown_at is not None and row[unknown_at]:
                self.unknown_defaults.add(dest)
            if dest in dests:
                dests[dest].append(i)
            else:
                dests[dest] = [i]
                defaults[dest] = None if default_at is None else row[default_at]
            for s in row[strings_at]:
                at[s] = i
        self.required = [] if required_at is None else [
            self._option(i) for i, row in enumerate(self._rows) if row[required_at]]
        # ServerArgs fields that releases up to 0.5.13.post1 parse under another destination and
        # copy over in ServerArgs.from_cli_args (`args.tp_size = args.tensor_parallel_size` …):
        # rules and checks read the field names, which these catalogs answer for
        self.field_dests: dict[str, str] = {
            field_name: dest for dest, field_name in _FIELD_OF_DEST.items()
            if dest in self._dests and field_name not in self._dests
        }
        for field_name, dest in self.field_dests.items():
            self._dests[field_name] = self._dests[dest]
            self.defaults[field_name] = self.defaults[dest]
            if dest in self.unknown_defaults:
                self.unknown_defaults.add(field_name)
        # argparse treats "-1" as a value unless some option looks like a negative number.
        self.has_negative_number_options = any(
            s[1:].replace(".", "", 1).isdigit() for s in self._at if s.startswith("-") and not s.startswith("--")
        )

    @functools.cached_property
    def _sorted(self) -> list[str]:
        """Every option string, sorted (for prefix matches: a check whose flags are all spelled
        out never needs it)."""
        return sorted(self._at)

    def _option(self, i: int) -> Option:
        opt = self._made[i]
        if opt is None:
            opt = self._made[i] = option_from_raw(dict(zip(self._keys, self._rows[i])))
        return opt

    @functools.cached_property
    def options(self) -> list[Option]:
        return [self._option(i) for i in range(len(self._rows))]

    @functools.cached_property
    def by_string(self) -> dict[str, Option]:
        return {s: self._option(i) for s, i in self._at.items()}

    @functools.cached_property
    def by_dest(self) -> dict[str, list[Option]]:
        """Destination → its options; a ServerArgs field name shares the list of its destination."""
        lists: dict[int, list[Option]] = {}  # one list per list of positions (field names share theirs)
        out = {}
        for dest, idx in self._dests.items():
            if id(idx) not in lists:
                lists[id(idx)] = [self._option(i) for i in idx]
            out[dest] = lists[id(idx)]
        return out

    def has_dest(self, dest: str) -> bool:
        """Whether some option stores to ``dest`` (or to the destination of the field ``dest``)."""
        return dest in self._dests

    def lookup(self, spelling: str) -> Option | None:
        i = self._at.get(spelling)
        if i is None:
            return None
        return self._made[i] or self._option(i)  # (the made option inline: the warm path's hot call)

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
    """The release a version string names (see :func:`sglang_lsp.catalog.versions.normalize`);
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
        rows = ROWS_DIR / path.name
        with (rows if rows.is_file() else path).open(encoding="utf-8") as fh:
            data = json.load(fh)
        data.setdefault("source", "bundled")
        return Catalog(data)
    if release in versions.releases():
        return Catalog(versions.catalog_data(release))
    raise CheckError(f"no flag catalog for sglang {release} (known: {versions.known_range()})")
