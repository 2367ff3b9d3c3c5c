#!/usr/bin/env python3
"""List the environment variables sglang reads while it resolves a launch (dev tool; feeds
``gen_cases2.py``). Reads sglang's source as text (nothing is imported or run):

* the registry ``sglang/srt/environ.py`` (``class Envs``: ``NAME = EnvBool(default)`` …) gives
  each variable's kind and default;
* the modules a launch's resolution and the oracle's layer probe go through (``arg_groups/``,
  ``server_args.py``, ``configs/``, ``layers/moe``, ``layers/quantization``, ``model_loader/``,
  ``utils/common.py``, ``runtime_context.py``, ``platforms/``, ``layers/attention/``) give where
  each is read: ``envs.NAME`` and ``get_bool_env_var("NAME")``/``get_int_env_var``/
  ``os.environ[...]``/``os.getenv(...)`` with a literal name;
* string literals compared with a read on the same line (``envs.X.get() == "a"``,
  ``in ("a", "b")``) are kept as the values that line tells apart.

    python tools/oracle/extract_envs.py /tmp/sglang-oracle-venv/lib/python3.11/site-packages/sglang \\
        > tools/oracle/data/sglang-0.5.23-envs.json
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

READ_SCOPES = ["srt/arg_groups", "srt/server_args.py", "srt/configs", "srt/layers/moe", "srt/layers/quantization",
               "srt/model_loader", "srt/utils/common.py", "srt/runtime_context.py", "srt/platforms",
               "srt/layers/attention", "srt/speculative", "srt/mem_cache/hicache_storage.py",
               "srt/disaggregation/utils.py", "srt/layers/dp_attention.py"]
NAMED_READ = re.compile(r"""(?:get_bool_env_var|get_int_env_var|get_float_env_var|os\.getenv|os\.environ\.get|"""
                        r"""os\.environ\[|environ\.get)\(?\s*["']([A-Z][A-Z0-9_]+)["']""")
ENVS_READ = re.compile(r"\benvs\.([A-Z][A-Z0-9_]+)\b")
COMPARED = re.compile(r"""(?:==|!=)\s*["']([^"']{1,40})["']|\bin\s*[\(\[{]([^)\]}]{1,200})[\)\]}]""")


def registry(environ_py: Path) -> dict:
    """name → {"kind": "EnvBool", "default": …} from ``class Envs``."""
    tree = ast.parse(environ_py.read_text())
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "Envs":
            for stmt in node.body:
                if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                        and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Name)):
                    kind = stmt.value.func.id
                    default = None
                    if stmt.value.args:
                        try:
                            default = ast.literal_eval(stmt.value.args[0])
                        except ValueError:
                            default = "<computed>"
                    if isinstance(default, tuple):
                        default = list(default)
                    out[stmt.targets[0].id] = {"kind": kind, "default": default}
    return out


def reads(pkg: Path) -> dict:
    """name → {"read_in": [relative paths], "compared_with": [literals]}."""
    found: dict = {}
    for scope in READ_SCOPES:
        base = pkg / scope
        files = [base] if base.is_file() else sorted(base.rglob("*.py")) if base.is_dir() else []
        for f in files:
            rel = str(f.relative_to(pkg.parent))
            for line in f.read_text(errors="replace").splitlines():
                names = set(ENVS_READ.findall(line)) | set(NAMED_READ.findall(line))
                for name in names:
                    entry = found.setdefault(name, {"read_in": set(), "compared_with": set()})
                    entry["read_in"].add(rel)
                    for eq, group in COMPARED.findall(line):
                        if eq:
                            entry["compared_with"].add(eq)
                        else:
                            entry["compared_with"].update(re.findall(r"""["']([^"']{1,40})["']""", group))
    return found


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: extract_envs.py <path of the installed sglang package>")
    pkg = Path(sys.argv[1])
    environ_py = pkg / "srt" / "environ.py"
    if not environ_py.is_file():
        sys.exit(f"not an sglang package (no {environ_py})")
    reg = registry(environ_py)
    out = {}
    for name, r in sorted(reads(pkg).items()):
        info = reg.get(name, {"kind": "raw", "default": None})
        out[name] = {**info, "read_in": sorted(r["read_in"]), "compared_with": sorted(r["compared_with"])}
    version = "unknown"  # from the installed distribution's metadata next to the package
    for meta in sorted(pkg.parent.glob("sglang-*.dist-info/METADATA")):
        m = re.search(r"^Version: (\S+)", meta.read_text(errors="replace"), re.M)
        version = m.group(1) if m else version
    json.dump({"sglang_version": version, "source": "sglang/srt/environ.py (class Envs) and reads in "
               + ", ".join(READ_SCOPES), "envs": out}, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
