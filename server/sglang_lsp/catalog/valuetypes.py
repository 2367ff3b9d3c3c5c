"""Value conversion for the type names used in flag catalogs.

Every catalog option carries a ``type`` (see docs/catalog-format.md).  This module says,
without importing sglang, whether a piece of command-line text would be accepted by the
converter sglang registers for that type, and what value it would produce:

* ``str``, ``int``, ``float``: Python's built-in constructors (so ``int`` takes ``"+8"``,
  ``" 8 "``, ``"1_000"``; ``float`` takes ``"inf"``, ``"nan"``, ``"1e3"``).
* ``json``: standard-library ``json.loads`` semantics (any JSON value, plus the
  ``NaN``/``Infinity`` extensions Python accepts).
* ``json_list``: sglang parses these with the ``orjson`` library, which is stricter than
  the standard library: no ``NaN``/``Infinity``, numbers must fit a double, integers outside
  the 64-bit range become floats, no unpaired surrogates, nesting at most 1024 deep.  Any
  JSON value is accepted, not only lists; a comma separated list is rejected.
* ``human_int``: an integer, optionally with a case-sensitive size suffix: decimal
  ``k M G T`` (a fractional number is allowed, the product is truncated) or binary
  ``Ki Mi Gi Ti`` (whole numbers only).  Without a suffix, ``int()`` rules apply.
* ``nullable_str``: any text; the empty string and ``"None"`` mean "unset" (``None``).
* ``cuda_graph_backend``: any text except the retired backend name ``tc_piecewise``
  (the allowed names are then enforced through the option's choices).
* ``cuda_graph_config``: a JSON object mapping the phases ``decode``/``prefill`` to
  objects whose keys come from a per-phase allow list; ``backend`` may not be
  ``tc_piecewise``.

The behaviour is pinned by ``tests/data/valuetype_cases.json``, labelled by calling
sglang's own converters (``tools/label_valuetypes.py``).
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any

__all__ = [
    "KNOWN_TYPES",
    "convert",
    "describe",
    "choice_matches",
    "is_custom",
]

KNOWN_TYPES: frozenset[str] = frozenset(
    {
        "str",
        "int",
        "float",
        "json",
        "json_list",
        "human_int",
        "nullable_str",
        "cuda_graph_backend",
        "cuda_graph_config",
    }
)

CUSTOM_PREFIX = "custom:"

_DESCRIPTIONS = {
    "str": "string",
    "int": "integer",
    "float": "number",
    "json": "JSON value",
    "json_list": "JSON value (typically a list)",
    "human_int": "integer or size such as 512, 4k, 1M or 2Gi",
    "nullable_str": "string (empty or None for unset)",
    "cuda_graph_backend": "CUDA graph backend name",
    "cuda_graph_config": "JSON object of per-phase CUDA graph settings",
}


def is_custom(type_name: str | None) -> bool:
    return isinstance(type_name, str) and type_name.startswith(CUSTOM_PREFIX)


def describe(type_name: str | None) -> str:
    """A short human name for a catalog type, for diagnostics and hovers."""
    if type_name is None:
        return "no value"
    if type_name in _DESCRIPTIONS:
        return _DESCRIPTIONS[type_name]
    if is_custom(type_name):
        func = type_name[len(CUSTOM_PREFIX):]
        return f"value parsed by {func}()" if func else "value"
    return type_name


# ---------------------------------------------------------------------------
# Converters: each returns (accepted, value)
# ---------------------------------------------------------------------------

_Result = tuple[bool, Any]
_REJECT: _Result = (False, None)


def _to_str(text: str) -> _Result:
    return True, text


def _to_int(text: str) -> _Result:
    try:
        return True, int(text)
    except (ValueError, TypeError):
        return _REJECT


def _to_float(text: str) -> _Result:
    try:
        return True, float(text)
    except (ValueError, TypeError):
        return _REJECT


def _json_text(text: str) -> _Result:
    try:
        return True, json.loads(text)
    except (ValueError, RecursionError):
        # A RecursionError is not turned into a usage error by argparse: sglang would
        # crash instead.  Either way the value is not usable.
        return _REJECT


def _to_nullable_str(text: str) -> _Result:
    if text == "" or text == "None":
        return True, None
    return True, text


# --- human_int -------------------------------------------------------------

_DECIMAL_SUFFIXES = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_BINARY_SUFFIXES = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}
# Number part: digits with an optional fraction; no sign, no exponent, no underscores.
# ``\d`` deliberately means any Unicode decimal digit, as in sglang's pattern.
_SIZE = re.compile(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)")


def _to_human_int(text: str) -> _Result:
    stripped = text.strip()
    m = _SIZE.fullmatch(stripped)
    if m is not None:
        number, suffix = m.group(1), m.group(2)
        if suffix in _BINARY_SUFFIXES:
            if "." in number:
                return _REJECT
            return True, int(number) * _BINARY_SUFFIXES[suffix]
        from decimal import Decimal  # imported for the rare decimal size (start-up time)

        return True, int(Decimal(number) * _DECIMAL_SUFFIXES[suffix])
    return _to_int(stripped)


# --- json_list (orjson rules) ---------------------------------------------

_ORJSON_MAX_DEPTH = 1024
_INT64_MIN = -(1 << 63)
_UINT64_MAX = (1 << 64) - 1


class _Reject(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _Reject(name)


def _finite_float(literal: str) -> float:
    value = float(literal)
    if math.isinf(value):
        raise _Reject(literal)
    return value


def _sized_int(literal: str) -> int | float:
    # Integers beyond the 64-bit range are read as doubles (and must still be finite).
    digits = len(literal) - (literal[0] == "-")
    if digits <= 20:
        value = int(literal)
        if _INT64_MIN <= value <= _UINT64_MAX:
            return value
    return _finite_float(literal)


def _has_surrogate(s: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in s)


def _nesting_depth(text: str) -> int:
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _strings_ok(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _has_surrogate(item):
                return False
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            for k, v in item.items():
                if _has_surrogate(k):
                    return False
                stack.append(v)
    return True


def _loads_deep(text: str) -> Any:
    try:
        return json.loads(
            text,
            parse_constant=_reject_constant,
            parse_float=_finite_float,
            parse_int=_sized_int,
        )
    except RecursionError:
        # The nesting is within orjson's limit but deeper than this interpreter's
        # recursion limit allows; retry with more headroom.
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(old + 4 * _ORJSON_MAX_DEPTH)
        try:
            return json.loads(
                text,
                parse_constant=_reject_constant,
                parse_float=_finite_float,
                parse_int=_sized_int,
            )
        finally:
            sys.setrecursionlimit(old)


def _to_json_list(text: str) -> _Result:
    if _has_surrogate(text) or _nesting_depth(text) > _ORJSON_MAX_DEPTH:
        return _REJECT
    try:
        value = _loads_deep(text)
    except (ValueError, RecursionError):
        return _REJECT
    if not _strings_ok(value):
        return _REJECT
    return True, value


# --- CUDA graph settings ---------------------------------------------------

_RETIRED_BACKEND = "tc_piecewise"
# Keys each phase object may contain (facts of sglang 0.5.23).
_PHASE_KEYS = {
    "decode": frozenset({"backend", "max_bs", "bs"}),
    "prefill": frozenset(
        {
            "backend",
            "max_bs",
            "bs",
            "max_context_size",
            "full_prefill_max_req",
            "full_prefill_prefix_chunk_tokens",
            "max_seq_len",
        }
    ),
}


def _to_cuda_graph_backend(text: str) -> _Result:
    if text == _RETIRED_BACKEND:
        return _REJECT
    return True, text


def _to_cuda_graph_config(text: str) -> _Result:
    ok, parsed = _json_text(text)
    if not ok or not isinstance(parsed, dict):
        return _REJECT
    result: dict[str, dict[str, Any]] = {}
    for phase, settings in parsed.items():
        allowed = _PHASE_KEYS.get(phase)
        if allowed is None or not isinstance(settings, dict):
            return _REJECT
        if "backend" in settings and settings["backend"] == _RETIRED_BACKEND:
            return _REJECT
        if any(key not in allowed for key in settings):
            return _REJECT
        result[phase] = dict(settings)
    return True, result


_CONVERTERS = {
    "str": _to_str,
    "int": _to_int,
    "float": _to_float,
    "json": _json_text,
    "json_list": _to_json_list,
    "human_int": _to_human_int,
    "nullable_str": _to_nullable_str,
    "cuda_graph_backend": _to_cuda_graph_backend,
    "cuda_graph_config": _to_cuda_graph_config,
}

assert set(_CONVERTERS) == KNOWN_TYPES


def convert(type_name: str | None, text: str) -> tuple[bool, object | None]:
    """Convert ``text`` as sglang's parser would for ``type_name``.

    Returns ``(accepted, value)``.  ``custom:*`` and unknown types cannot be judged and
    give ``(True, None)``; so does ``None`` (a switch takes no value to convert).
    """
    func = _CONVERTERS.get(type_name) if type_name is not None else None
    if func is None:
        return True, None
    return func(text)


def choice_matches(value: Any, choices: Any) -> bool:
    """Whether an already converted ``value`` is one of ``choices``, compared the way
    argparse compares (membership, i.e. equality; a string of choices is a sequence of
    characters, not a substring test).  ``None`` choices accept everything."""
    if choices is None:
        return True
    if isinstance(choices, str):
        choices = list(choices)
    try:
        return value in choices
    except TypeError:
        return False
