"""Test-session setup.

The tests import the *installed* ``sglang_lsp`` when there is one (that is what ``.ci/run``
exercises: a non-editable install, with the wheel's force-included ``grammar_queries``).
Only when the package is not importable at all (a bare checkout) is ``server/`` put on
``sys.path``, so ``python -m pytest`` also works without installing.

``SGLANG_LSP_REQUIRE_INSTALLED=1`` turns that fallback into an error (CI uses it to make
sure the installed package is what gets tested).

Hypothesis profiles: ``HYPOTHESIS_PROFILE=ci`` (set by ``.ci/run``) derandomizes the property
tests so a CI run is reproducible; the default profile explores randomly.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Catalogs a user built (`sglang-lsp catalog build`) take precedence over the bundled ones: the
# tests (and the servers and CLIs they start) use an empty cache of their own.
import tempfile

os.environ["SGLANG_LSP_CACHE_DIR"] = tempfile.mkdtemp(prefix="sglang-lsp-test-cache-")

try:
    from hypothesis import settings as _hypothesis_settings
except ImportError:  # pragma: no cover - hypothesis is a test extra
    _hypothesis_settings = None
else:
    _hypothesis_settings.register_profile("ci", derandomize=True, database=None)
    _hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

if importlib.util.find_spec("sglang_lsp") is None:
    if os.environ.get("SGLANG_LSP_REQUIRE_INSTALLED") == "1":
        raise RuntimeError("SGLANG_LSP_REQUIRE_INSTALLED=1 but sglang_lsp is not installed")
    sys.path.insert(0, str(ROOT / "server"))


def pytest_report_header(config):
    import sglang_lsp
    from sglang_lsp.base import queries

    return [f"sglang_lsp: {Path(sglang_lsp.__file__).parent} (queries: {queries.queries_dir()})"]
