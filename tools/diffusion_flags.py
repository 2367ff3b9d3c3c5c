#!/usr/bin/env python3
"""Write the flags of sglang's diffusion server (``sglang serve`` for a diffusion model).

``sglang serve`` picks its backend from the model (sglang/cli/serve.py): a diffusion model is
served by ``sglang.multimodal_gen`` with a parser of its own (``--num-gpus``,
``--performance-mode`` …), not by the LLM server parser the catalog describes. sglang-lsp uses
this list to recognise such launches and leave them alone instead of calling those flags
unknown.

The flags are read statically from the wheel's source (every literal option string of an
``add_argument`` call in ``multimodal_gen/runtime/server_args/server_args.py`` and
``multimodal_gen/runtime/entrypoints/cli/serve.py``); nothing is imported, since the diffusion
server needs packages (diffusers, imageio …) that an LLM installation lacks.

    python tools/diffusion_flags.py /path/to/site-packages/sglang 0.5.23 \\
        > server/sglang_lsp/catalog/data/diffusion_serve_flags.json
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

SOURCES = (
    "multimodal_gen/runtime/server_args/server_args.py",
    "multimodal_gen/runtime/entrypoints/cli/serve.py",
)


def option_strings(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument":
            out.update(a.value for a in node.args
                       if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("--"))
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root, version = Path(argv[0]), argv[1]
    flags: set[str] = set()
    for rel in SOURCES:
        flags |= option_strings(root / rel)
    json.dump({"sglang_version": version, "sources": list(SOURCES), "flags": sorted(flags)}, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
