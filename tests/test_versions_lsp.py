"""The language server's side of version selection: the target release from the settings or the
workspace's environment, and sglang's own help text on hover from a user-built catalog."""

from __future__ import annotations

import json

import pytest
from lsprotocol import types
from sglang_lsp.catalog import catalog as catalog_mod
from test_lsp_server import (
    codes,
    doc_id,
    find_char,
    open_doc,
    published,
    server_env,
    session,
)

pytestmark = pytest.mark.asyncio

LAUNCH = "python -m sglang.launch_server --model-path m --tp-size 2 --moe-a2a-backend deepep\n"


async def test_sglang_version_setting_selects_a_history_release():
    async with session(init_options={"sglangVersion": "v0.4.3"}) as lsp:
        uri = open_doc(lsp, "old.sh", LAUNCH)
        assert codes(await published(lsp, uri, 1)) == ["SGL032"]
        await lsp.shutdown_session()


async def test_hover_shows_the_installed_sglangs_help(tmp_path):
    # a workspace environment with sglang 0.5.23 installed (metadata only), and the catalog
    # `sglang-lsp catalog build` would have written for it, with its help texts
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("")
    meta = venv / "lib" / "python3.11" / "site-packages" / "sglang-0.5.23.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.23\n\n")
    data = json.loads((catalog_mod.CATALOG_DIR / "sglang-0.5.23.json").read_text(encoding="utf-8"))
    for opt in data["options"]:
        if "--tp-size" in opt["option_strings"]:
            opt["help"] = "Tensor parallel degree, as this installation describes it."
    cache = tmp_path / "cache"
    (cache / "catalogs").mkdir(parents=True)
    (cache / "catalogs" / "0.5.23.json").write_text(json.dumps(data), encoding="utf-8")

    env = server_env(SGLANG_LSP_CACHE_DIR=str(cache))
    async with session(env=env, init_options={"python": str(venv / "bin" / "python")}) as lsp:
        uri = open_doc(lsp, "help.sh", LAUNCH)
        await published(lsp, uri, 1)
        h = await lsp.text_document_hover_async(types.HoverParams(
            text_document=doc_id(uri), position=find_char(LAUNCH, "--tp-size")))
        assert "Tensor parallel degree, as this installation describes it." in h.contents.value
        assert "built from the installed sglang" in h.contents.value
        await lsp.shutdown_session()
    async with session(env=server_env(SGLANG_LSP_CACHE_DIR=str(tmp_path / "empty"))) as lsp:
        uri = open_doc(lsp, "help.sh", LAUNCH)
        await published(lsp, uri, 1)
        h = await lsp.text_document_hover_async(types.HoverParams(
            text_document=doc_id(uri), position=find_char(LAUNCH, "--tp-size")))
        assert "as this installation describes it" not in h.contents.value
        await lsp.shutdown_session()
