"""``UNKNOWN``: a value the file cannot tell (``$MODEL``, ``$(cmd)``, a Helm ``{{ … }}``, an unknown
GPU). It is neither empty nor wrong: a check that reads it stays undecided (three-valued logic,
``../shared/design.md``). One object, compared with ``is``; it refuses to be used as a truth value."""

from __future__ import annotations

from typing import Any


class _Unknown:
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:  # pragma: no cover - guard against accidental truthiness
        raise TypeError("UNKNOWN has no truth value; test `is UNKNOWN`")


UNKNOWN: Any = _Unknown()
