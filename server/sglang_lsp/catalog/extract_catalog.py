#!/usr/bin/env python3
"""Generate a flag catalog (docs/catalog-format.md) from sglang's real argparse parser.

What it does
------------
1. Builds ``argparse.ArgumentParser(prog="sglang serve")`` and lets the installed sglang
   register its server options on it (``ServerArgs.add_cli_args``).
2. Walks ``parser._actions`` in registration order and records, for every action, the
   facts the linter needs: option spellings, destination, action kind, ``nargs``, value
   type, choices, default, const, whether it is required, whether sglang retired it, and
   whether a ``--config`` YAML key may set it.  No help text is recorded, except with
   ``--with-help`` (what ``sglang-lsp catalog build`` uses for catalogs in the user's cache).
3. Applies a small hand-maintained table (``DEPRECATED_BY_REGISTRATION``) for flags that
   sglang registers with a plain action but declares deprecated where it registers them.
4. Writes pretty-printed JSON with a stable key order.

The walking part, :func:`catalog_from_parser`, is a pure function of an argparse parser
and does not import sglang, so tests can feed it a small hand-made parser.

This module runs standalone (only the standard library; it imports nothing of sglang-lsp), so
``sglang-lsp catalog build --python PATH`` runs it with the user's interpreter.

How to re-run it
----------------
sglang must be importable (its GPU dependencies are not needed for the parser); the
project keeps a helper venv for that (``/work/shared/oracle/setup_venv.sh``)::

    /tmp/sglang-oracle-venv/bin/python tools/extract_catalog.py \\
        --out server/sglang_lsp/catalog/data/catalogs/sglang-0.5.23.json

Without ``--out`` the catalog is printed to stdout.  Environment variables that change
sglang's dynamic choices (for example ``SGLANG_KV_CANARY_ENABLE_TOKEN_ORACLE``, which adds
a ``--sampling-backend`` choice) should be unset while generating a bundled catalog.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
from collections.abc import Mapping
from typing import Any

FORMAT_VERSION = 1
EXTRACTOR_PATH = "tools/extract_catalog.py"
PROG = "sglang serve"

# ---------------------------------------------------------------------------
# Facts not visible in the parser objects
# ---------------------------------------------------------------------------

# Flags that sglang registers with an ordinary action (store_true, ...) although the place
# where sglang registers them states that the flag is deprecated and names what to use
# instead.  Key: an option string of the flag.  Value: the replacement, written the way
# sglang's own deprecation actions write ``new_flag`` (flag, possibly with a value).
# Only facts are recorded here; the wording is ours.  Checked against sglang 0.5.23.
DEPRECATED_BY_REGISTRATION: dict[str, str | None] = {
    # Registered in ServerArgs.add_cli_args as store_true; superseded by the backend
    # selector with the value "auto".
    "--enable-flashinfer-allreduce-fusion": "--flashinfer-allreduce-fusion-backend=auto",
    # Field `disable_fast_image_processor` (multimodal fields); superseded by selecting
    # the "pil" image processor backend.
    "--disable-fast-image-processor": "--image-processor-backend=pil",
    # Field `grpc_mode` (serving fields); renamed to --smg-grpc-mode.
    "--grpc-mode": "--smg-grpc-mode",
}

# ---------------------------------------------------------------------------
# Action kinds
# ---------------------------------------------------------------------------

# Exact classes only: a subclass may override __call__, so it is reported as "custom"
# together with its class name.
_ACTION_KINDS: dict[type, str] = {
    argparse._StoreAction: "store",
    argparse._StoreTrueAction: "store_true",
    argparse._StoreFalseAction: "store_false",
    argparse._StoreConstAction: "store_const",
    argparse.BooleanOptionalAction: "boolean_optional",
    argparse._AppendAction: "append",
    argparse._AppendConstAction: "append_const",
    argparse._CountAction: "count",
    argparse._HelpAction: "help",
    argparse._VersionAction: "version",
}

# Kinds whose argparse ``const`` decides the stored value.
_CONST_KINDS = frozenset({"store_const", "append_const"})


def action_kind(action: argparse.Action) -> str:
    """Return the catalog action kind of an argparse action."""
    return _ACTION_KINDS.get(type(action), "custom")


# ---------------------------------------------------------------------------
# Value types
# ---------------------------------------------------------------------------

# sglang helper functions, recognised by name so that this module never imports sglang.
_TYPE_NAMES_BY_FUNCTION_NAME: dict[str, str] = {
    "json_list_type": "json_list",
    "human_readable_int": "human_int",
    "nullable_str": "nullable_str",
    "parse_cuda_graph_backend_arg": "cuda_graph_backend",
    "parse_cuda_graph_config_arg": "cuda_graph_config",
}


def _callable_name(func: Any) -> str:
    name = getattr(func, "__name__", None)
    if isinstance(name, str) and name:
        return name
    inner = getattr(func, "func", None)  # functools.partial
    if inner is not None:
        return _callable_name(inner)
    return type(func).__name__


def _is_json_loads(func: Any) -> bool:
    return func is json.loads or (
        getattr(func, "__module__", None) == "json"
        and getattr(func, "__name__", None) == "loads"
    )


def type_name(action: argparse.Action) -> str | None:
    """Return the catalog type name of the values an action consumes.

    Switches (``nargs == 0``) have no value type: ``None``.  A value-taking action with
    no ``type`` receives the raw string, so it is reported as ``"str"``.
    """
    func = action.type
    if action.nargs == 0:
        return None
    if func is None or func is str:
        return "str"
    if func is int:
        return "int"
    if func is float:
        return "float"
    if _is_json_loads(func):
        return "json"
    name = _callable_name(func)
    return _TYPE_NAMES_BY_FUNCTION_NAME.get(name, f"custom:{name}")


# ---------------------------------------------------------------------------
# JSON-safe values
# ---------------------------------------------------------------------------


def _is_plain_json(value: Any) -> bool:
    """True when ``value`` survives a JSON round trip unchanged (tuples become lists)."""
    if value is None or isinstance(value, (bool, str)):
        return True
    if isinstance(value, int):
        return type(value) is int
    if isinstance(value, float):
        return type(value) is float and math.isfinite(value)
    if isinstance(value, (list, tuple)):
        return all(_is_plain_json(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_plain_json(v) for k, v in value.items())
    return False


def _to_plain(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_to_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _to_plain(v) for k, v in value.items()}
    return value


def json_value(value: Any) -> Any:
    """``value`` itself when it is JSON data, else its ``repr`` string."""
    if _is_plain_json(value):
        return _to_plain(value)
    return repr(value)


def choices_value(choices: Any) -> list | None:
    """Choices as a JSON list; unordered collections are sorted for stability."""
    if choices is None:
        return None
    if isinstance(choices, (set, frozenset)) or (
        isinstance(choices, Mapping)
    ):
        items = list(choices)
        try:
            items = sorted(items)
        except TypeError:
            items = sorted(items, key=repr)
    else:
        items = list(choices)
    return [json_value(c) for c in items]


# ---------------------------------------------------------------------------
# --config support
# ---------------------------------------------------------------------------


def config_settable(action: argparse.Action) -> bool:
    """Whether sglang's ``--config`` YAML merger accepts this option as a key.

    sglang 0.5.23 (``ConfigArgumentMerger``) accepts keys of store_true actions and of
    actions that consume one command-line word group the way ``store`` does: instances
    of argparse's store action (whatever their ``nargs``; a YAML list is expanded into
    several words) and any action whose ``nargs`` is ``None``.  Every other optional
    action makes the merger raise, except ``-h/--help`` and ``--config`` which it leaves
    alone; neither is usable from a YAML file in practice, and ``--help`` is reported as
    not settable here.
    """
    if isinstance(action, (argparse._StoreTrueAction, argparse._StoreAction)):
        return True
    return action.nargs is None


# ---------------------------------------------------------------------------
# Deprecation
# ---------------------------------------------------------------------------


def _deprecation(action: argparse.Action, kind: str) -> tuple[bool, str | None, bool]:
    """(deprecated, replacement, rejects) as far as the action object tells."""
    deprecated = False
    replacement = None
    rejects = False
    if kind == "custom" and type(action).__name__.startswith("Deprecated"):
        deprecated = True
        new_flag = getattr(action, "new_flag", None)
        replacement = new_flag if isinstance(new_flag, str) else None
        rejects = getattr(action, "error_message", None) is not None
    # Python 3.13 added add_argument(..., deprecated=True).
    if getattr(action, "deprecated", False) is True:
        deprecated = True
    return deprecated, replacement, rejects


# ---------------------------------------------------------------------------
# The walk
# ---------------------------------------------------------------------------


def _const(action: argparse.Action, kind: str) -> Any:
    if kind in _CONST_KINDS or action.nargs == "?":
        return json_value(action.const)
    if kind == "custom":
        # sglang's store-const style deprecation action keeps the stored value apart
        # from argparse's const.
        if hasattr(action, "const_value"):
            return json_value(action.const_value)
        return json_value(action.const)
    return None


def option_from_action(action: argparse.Action) -> dict[str, Any]:
    """Describe one argparse action as a catalog option (keys in schema order)."""
    kind = action_kind(action)
    deprecated, replacement, rejects = _deprecation(action, kind)
    nargs = action.nargs
    return {
        "dest": action.dest,
        "option_strings": list(action.option_strings),
        "action": kind,
        "action_class": type(action).__name__ if kind == "custom" else None,
        "nargs": nargs if nargs is None or isinstance(nargs, (int, str)) else repr(nargs),
        "type": type_name(action),
        "choices": choices_value(action.choices),
        "default": json_value(action.default),
        "const": _const(action, kind),
        "required": bool(action.required),
        "deprecated": deprecated,
        "replacement": replacement,
        "rejects": rejects,
        "config": config_settable(action),
    }


def apply_deprecations(
    options: list[dict[str, Any]], table: Mapping[str, str | None]
) -> list[str]:
    """Mark options listed in ``table`` deprecated (in place).

    An explicit ``replacement`` already found on the action wins over the table.
    Returns the table keys that matched no option (stale entries).
    """
    unmatched = []
    for flag, replacement in table.items():
        hits = [o for o in options if flag in o["option_strings"]]
        if not hits:
            unmatched.append(flag)
        for option in hits:
            option["deprecated"] = True
            if option["replacement"] is None:
                option["replacement"] = replacement
    return unmatched


def catalog_from_parser(
    parser: argparse.ArgumentParser,
    sglang_version: str,
    python_version: str,
    deprecations: Mapping[str, str | None] | None = None,
) -> dict[str, Any]:
    """Build the catalog dict for ``parser`` (pure: needs no sglang).

    ``deprecations`` maps option strings to replacements for flags deprecated by
    declaration only (see ``DEPRECATED_BY_REGISTRATION``); ``None`` applies nothing.
    """
    options = [option_from_action(a) for a in parser._actions]
    if deprecations:
        apply_deprecations(options, deprecations)
    return {
        "format": FORMAT_VERSION,
        "sglang_version": sglang_version,
        "python_version": python_version,
        "extractor": EXTRACTOR_PATH,
        "parser": {"prog": parser.prog, "allow_abbrev": bool(parser.allow_abbrev)},
        "options": options,
    }


def help_text(parser: argparse.ArgumentParser, action: argparse.Action) -> str | None:
    """The action's help as ``--help`` prints it (``%(default)s`` and the like expanded), or
    ``None`` when it has none or hides itself."""
    if not action.help or action.help == argparse.SUPPRESS:
        return None
    try:
        return " ".join(parser._get_formatter()._expand_help(action).split())
    except (ValueError, TypeError, KeyError):
        return " ".join(str(action.help).split())


def add_help_texts(parser: argparse.ArgumentParser, catalog: dict[str, Any]) -> None:
    """Record every option's help text (for catalogs kept in a user's cache; bundled catalogs
    hold no help text)."""
    for action, option in zip(parser._actions, catalog["options"]):
        text = help_text(parser, action)
        if text is not None:
            option["help"] = text


def dumps(catalog: Mapping[str, Any]) -> str:
    """Serialise a catalog the way bundled catalogs are stored."""
    return json.dumps(catalog, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


# ---------------------------------------------------------------------------
# Driver (needs sglang)
# ---------------------------------------------------------------------------


def build_sglang_parser() -> tuple[argparse.ArgumentParser, str]:
    """Return sglang's server parser and the installed sglang version."""
    import sglang
    from sglang.srt.server_args import ServerArgs

    parser = argparse.ArgumentParser(prog=PROG)
    ServerArgs.add_cli_args(parser)
    return parser, sglang.__version__


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="write the catalog here instead of stdout")
    ap.add_argument("--with-help", action="store_true",
                    help="also record sglang's help text of every option (never for bundled catalogs)")
    args = ap.parse_args(argv)

    parser, version = build_sglang_parser()
    python_version = platform.python_version()
    catalog = catalog_from_parser(parser, version, python_version)
    stale = apply_deprecations(catalog["options"], DEPRECATED_BY_REGISTRATION)
    for flag in stale:
        print(f"warning: deprecation table entry {flag} matches no option", file=sys.stderr)
    if args.with_help:
        add_help_texts(parser, catalog)

    text = dumps(catalog)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text)
        print(f"wrote {len(catalog['options'])} options to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
