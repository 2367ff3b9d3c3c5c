"""The language server on the new kinds of documents (issue 19 §3, §4): a Markdown doc, a
Dockerfile, a Python file and a notebook cell as an editor sends it (a ``vscode-notebook-cell:``
document of language ``python``) get their diagnostics on the flag, hover, quick fixes, and the
other requests answer without an error. Driven through the real server process (pytest-lsp)."""

from __future__ import annotations

import pytest
from lsprotocol import types

from test_lsp_server import apply_text_edits, client, doc_id, find_char, open_doc, published  # noqa: F401

pytestmark = pytest.mark.asyncio

MARKDOWN = ("# Serving — 助手\n\n```console\n$ python -m sglang.launch_server --model-path /m --quantization FP8\n"
            "output line --not-a-flag\n```\n")
DOCKERFILE = ('FROM lmsysorg/sglang:v0.5.23-cu129\n'
              'CMD ["python3", "-m", "sglang.launch_server", "--model-path", "/m", "--quantization", "FP8"]\n')
PYTHON = ('import sglang as sgl\n\nllm = sgl.Engine(model_path="/m", quantization="FP8", tp_size=2)\n')
CELL = 'model = "/m"\n!python -m sglang.launch_server --model-path {model} --quantization FP8\n'

CASES = [
    ("guide.md", MARKDOWN, "markdown"),
    ("Dockerfile", DOCKERFILE, "dockerfile"),
    ("serve.py", PYTHON, "python"),
    (None, CELL, "python"),  # a notebook cell
]


def _uri(client, name, text, language_id):
    if name is not None:
        return open_doc(client, name, text, language_id)
    uri = "vscode-notebook-cell:/work/demo.ipynb#W1sZmlsZQ%3D%3D"
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id=language_id, version=1, text=text)))
    return uri


@pytest.mark.parametrize(("name", "text", "language_id"), CASES, ids=[c[0] or "notebook-cell" for c in CASES])
async def test_diagnostic_fix_and_requests(client, name, text, language_id):  # noqa: F811
    uri = _uri(client, name, text, language_id)
    params = await published(client, uri, 1)
    assert [d.code for d in params.diagnostics] == ["SGL002"]
    diag = params.diagnostics[0]
    assert diag.range.start == find_char(text, "FP8") and diag.source == "sglang-lsp"

    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=doc_id(uri), range=diag.range, context=types.CodeActionContext(diagnostics=[diag])))
    fix = next(a for a in actions if a.title == "Use `fp8`")
    fixed = apply_text_edits(text, fix.edit.changes[uri])
    assert fixed == text.replace("FP8", "fp8", 1)

    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=doc_id(uri), position=find_char(text, "quantization")))
    assert hover is not None and "--quantization" in hover.contents.value

    await client.text_document_completion_async(types.CompletionParams(text_document=doc_id(uri),
                                                                       position=diag.range.start))
    await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=doc_id(uri)))
    await client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=doc_id(uri), range=types.Range(start=types.Position(line=0, character=0),
                                                      end=types.Position(line=9, character=0))))
