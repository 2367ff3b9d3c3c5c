"""The flag catalog of one sglang release (see ``docs/catalog-format.md``).

Catalogs are JSON files generated from sglang's own argparse parser by
``tools/extract_catalog.py``; this module loads them and answers argparse's questions:
which option does a spelling name, which spellings does a prefix match.
"""

from __future__ import annotations

import bisect
import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import DEFAULT_SGLANG_VERSION
from .findings import CheckError

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


class Catalog:
    def __init__(self, data: dict):
        self.sglang_version: str = data["sglang_version"]
        self.python_version: str | None = data.get("python_version")
        self.options: list[Option] = []
        self.by_string: dict[str, Option] = {}
        self.by_dest: dict[str, list[Option]] = {}
        for raw in data["options"]:
            opt = Option(
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
            )
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
    out = []
    for p in CATALOG_DIR.glob("sglang-*.json"):
        out.append(p.stem[len("sglang-") :])
    return sorted(out, key=_version_key)


@functools.lru_cache(maxsize=256)
def _version_key(v: str) -> tuple:
    return tuple(int(x) if x.isdigit() else x for x in v.replace("-", ".").split("."))


@functools.cache
def load_catalog(version: str | None = None) -> Catalog:
    version = version or DEFAULT_SGLANG_VERSION
    path = CATALOG_DIR / f"sglang-{version}.json"
    if not path.is_file():
        known = ", ".join(available_versions()) or "none"
        raise CheckError(f"no flag catalog for sglang {version} (bundled: {known})")
    with path.open(encoding="utf-8") as fh:
        return Catalog(json.load(fh))
