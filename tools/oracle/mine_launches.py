#!/usr/bin/env python3
"""Collect the flag sets of real sglang launch commands from local git mirrors of public
repositories (dev tool; feeds ``gen_cases2.py``'s co-occurrence sampling).

For every file of a mirror's HEAD that runs ``python -m sglang.launch_server`` or
``sglang serve`` (shell, Markdown, YAML, Python strings, Dockerfiles …) it reads the command
(backslash continuations, YAML list items, inline argument lists), keeps the options that the
bundled sglang 0.5.23 catalog knows, and records, per command:

    {"repo": "owner/name", "path": "…", "line": N, "model": "org/Model" or null,
     "flags": [["--tp", "8"], ["--enable-dp-attention", true], ["--mem-fraction-static", null]],
     "env": {"SGLANG_…": "1"}}

``flags`` lists the options as written (abbreviations and options 0.5.23 no longer has
included; ``--model-path`` left out) with their literal value (``true`` for a switch, ``null``
when the value is a variable or a template). A switch is known from the bundled 0.5.23 catalog;
an option the catalog does not know takes the next word as its value unless it starts with ``-``.
``env`` holds the ``SGLANG_*``/``SGL_*`` assignments written on the command itself. Identical
commands (options, values, environment) are kept once. Only these facts are stored, never the
files. A command most of whose options the catalog does not know is left out (the diffusion
server's options, or a benchmark command mislabelled as ``sglang serve``).

    python tools/oracle/mine_launches.py /work/.mirror/*/repo > tools/oracle/data/real_launches.jsonl
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CATALOG = ROOT / "server" / "sglang_lsp" / "catalog" / "data" / "catalogs" / "sglang-0.5.23.json"

LAUNCH = re.compile(r"(?:sglang\.launch_server|sglang\s+serve)\b")
SKIP_REPOS = {"sgl-project/sglang"}
TEXT_SUFFIXES = {".sh", ".bash", ".md", ".mdx", ".rst", ".txt", ".yaml", ".yml", ".py", ".ipynb", ".json",
                 ".toml", ".slurm", ".sbatch", ".j2", ".tpl", ".ts", ".tsx", ".js", ""}
ENV_ASSIGN = re.compile(r"^((?:SGLANG|SGL)_[A-Z0-9_]+)=(\S*)$")
TEMPLATED = re.compile(r"[$<>{}%]|^\w+\)$")  # $VAR, ${X}, {x}, <path>, %s, $(X) tails


def load_catalog() -> tuple[dict, dict]:
    """option string → catalog entry; dest → entry."""
    options = json.loads(CATALOG.read_text())["options"]
    by_flag, by_dest = {}, {}
    for o in options:
        for s in o["option_strings"]:
            if s.startswith("--"):
                by_flag[s] = o
        by_dest.setdefault(o["dest"], o)
    return by_flag, by_dest


def repo_name(mirror: Path) -> str:
    """owner/name from a /work/.mirror/owner+name/repo directory."""
    d = mirror.parent.name if mirror.name == "repo" else mirror.name
    return d.replace("+", "/", 1)


def git(mirror: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(mirror), *args], capture_output=True, text=True,
                          errors="replace", check=False).stdout


def command_lines(lines: list[str], i: int) -> list[str]:
    """The lines that make up the command starting on line ``i``."""
    first = lines[i]
    out = [first]
    yaml_item = re.match(r"^(\s*)-\s*['\"]?[\w./ -]*(?:sglang\.launch_server|sglang)['\"]?\s*$", first)
    if yaml_item:  # command as a YAML list: following "- item" lines at the same indentation
        indent = yaml_item.group(1)
        for line in lines[i + 1: i + 200]:
            if line.strip().startswith("{{"):  # Helm template control lines
                continue
            if line.startswith(indent + "-") and not line.startswith(indent + "--"):
                out.append(line)
            elif re.match(rf"^{re.escape(indent)}-\s", line):
                out.append(line)
            else:
                break
        return out
    j = i
    while j + 1 < len(lines) and j - i < 200 and lines[j].rstrip().endswith("\\"):
        j += 1
        out.append(lines[j])
    return out


def tokens_of(text_lines: list[str]) -> list[str]:
    toks: list[str] = []
    for line in text_lines:
        line = line.replace("\\n", " ").rstrip().rstrip("\\")
        line = re.sub(r"^\s*-\s+", " ", line)  # YAML list item marker
        line = re.sub(r"(^|\s)#.*$", "", line)  # shell comment
        for t in re.split(r"[\s,\[\]]+", line):
            t = t.strip().strip("'\"`(),").strip()
            if t:
                toks.append(t)
    return toks


def resolve_option(name: str, by_flag: dict):
    """The catalog entry an option string names: exact, or (argparse's allow_abbrev) the one
    long option it is a prefix of; None when unknown or ambiguous."""
    if name in by_flag:
        return by_flag[name]
    hits = [s for s in by_flag if s.startswith(name)]
    return by_flag[hits[0]] if len(hits) == 1 else None


def parse_command(toks: list[str], by_flag: dict) -> tuple[list, dict]:
    """([option as written, value], …) and the SGLANG_* assignments before the command."""
    flags: list = []
    env: dict = {}
    start = next((k for k, t in enumerate(toks) if LAUNCH.search(t) or t == "serve"), None)
    if start is None:
        return flags, env
    for t in toks[:start]:
        m = ENV_ASSIGN.match(t)
        if m:
            env[m.group(1)] = None if TEMPLATED.search(m.group(2)) else m.group(2)
    k = start + 1
    while k < len(toks):
        t = toks[k]
        k += 1
        if t in ("|", "||", "&&", ";", "&", "2>&1", "|&") or t.startswith(">") or t.endswith(";"):
            break
        if not re.fullmatch(r"--[a-z0-9][a-z0-9-]*(=.*)?", t):
            continue
        name, eq, inline = t.partition("=")
        opt = resolve_option(name, by_flag)
        switch = opt is not None and (opt["nargs"] == 0 or opt["action"] in (
            "store_true", "store_false", "store_const", "count", "help"))
        if switch:
            flags.append([name, True])
            continue
        if eq:
            value = inline
        elif k < len(toks) and not toks[k].startswith("-"):
            value = toks[k]
            k += 1
        else:
            value = None if opt is not None else True
        if isinstance(value, str) and TEMPLATED.search(value):
            value = None
        flags.append([name, value])
    return flags, env


def mine(mirror: Path, by_flag: dict):
    repo = repo_name(mirror)
    if repo in SKIP_REPOS:
        return
    listing = git(mirror, "grep", "-l", "-I", "-E", r"sglang\.launch_server|sglang serve", "HEAD")
    for entry in listing.splitlines():
        path = entry.split(":", 1)[1] if entry.startswith("HEAD:") else entry
        if Path(path).suffix.lower() not in TEXT_SUFFIXES and Path(path).name != "Dockerfile":
            continue
        text = git(mirror, "show", f"HEAD:{path}")
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if not LAUNCH.search(line) or "sglang_router" in line:
                continue
            flags, env = parse_command(tokens_of(command_lines(lines, i)), by_flag)
            model = next((v for f, v in flags if f in ("--model-path", "--model")), None)
            flags = [f for f in flags if f[0] not in ("--model-path", "--model")]
            known = sum(1 for name, _ in flags if resolve_option(name, by_flag) is not None)
            if not flags or known * 2 <= len(flags):
                continue  # not a language-model server launch (a diffusion server, a benchmark …)
            yield {"repo": repo, "path": path, "line": i + 1, "model": model, "flags": flags, "env": env}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mirrors", nargs="+", help="git directories (e.g. /work/.mirror/owner+name/repo)")
    a = ap.parse_args()
    by_flag, _ = load_catalog()
    seen = set()
    n = 0
    for m in sorted(a.mirrors):
        for rec in mine(Path(m), by_flag):
            key = json.dumps([rec["flags"], rec["env"]], sort_keys=True)
            if key in seen:
                continue
            seen.add(key)
            n += 1
            print(json.dumps(rec, sort_keys=True))
    print(f"{n} distinct launch commands", file=sys.stderr)


if __name__ == "__main__":
    main()
