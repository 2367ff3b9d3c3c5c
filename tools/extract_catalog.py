#!/usr/bin/env python3
"""Generate a flag catalog (docs/catalog-format.md) from sglang's real argparse parser.

The extractor lives in the package (``server/sglang_lsp/catalog/extract_catalog.py``) so that
``sglang-lsp catalog build --python PATH`` can run it with another interpreter; this script
runs it unchanged. It needs sglang importable by the Python that runs it::

    /tmp/sglang-oracle-venv/bin/python tools/extract_catalog.py \\
        --out server/sglang_lsp/catalog/data/catalogs/sglang-0.5.23.json
"""

import runpy
from pathlib import Path

if __name__ == "__main__":
    runpy.run_path(str(Path(__file__).resolve().parents[1] / "server" / "sglang_lsp" / "catalog" / "extract_catalog.py"),
                   run_name="__main__")
