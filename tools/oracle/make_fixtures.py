#!/usr/bin/env python3
"""Write the per-rule fixtures of the knowledge-base rules from the labelled oracle corpus.

For every knowledge-base rule (SGL1xx–SGL2xx): ``err/`` gets launches sglang 0.5.23 refused with a message in the rule's
scope (and that `check` reports with the rule); ``ok/`` gets launches sglang accepted that use
the rule's flags (near misses). Each script names its oracle case and sglang's verdict in a
comment, sets the GPU with a ``# sglang-lsp: gpu=…`` comment, and points ``--model-path`` at the
fixture checkpoints in ``tests/fixtures/models``, and the expected ``.out`` (the concise output
of ``sglang-lsp check --select CODE``) is written next to it.

    python tools/oracle/make_fixtures.py tests/data/oracle_cases.jsonl [--codes SGL100,SGL101]
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import replay  # noqa: E402

ROOT = replay.ROOT
FIXTURES = ROOT / "tests" / "fixtures" / "rules"
N = 2


def script(case: dict, code: str, kind: str) -> str:
    directory = FIXTURES / code / kind
    models = os.path.relpath(replay.MODELS_DIR, directory)
    argv = [str(a).replace("{MODELS}", models) for a in case.get("argv") or []]
    if not any(a in ("--model-path", "--model") for a in argv):
        argv = ["--model-path", f"{models}/{case['model']}" if case.get("model") else "dummy"] + argv
    env = case.get("env") or {}
    prefix = "".join(f"{k}={shlex.quote(str(v))} " for k, v in env.items() if v is not None)
    verdict = "accepts it" if case["outcome"] == "ok" else \
        f"refuses it: {(case.get('message') or 'AssertionError (no message)').splitlines()[0][:150]}"
    return (f"#!/bin/bash\n# oracle case {case['id']}: sglang 0.5.23 on {case['hardware']} {verdict}\n"
            f"# sglang-lsp: gpu={case['hardware']}\n"
            f"{prefix}python -m sglang.launch_server {shlex.join(argv)}\n")


def _dests(cat, argv: list) -> set:
    out = set()
    for w in argv:
        if not isinstance(w, str) or not w.startswith("--"):
            continue
        name = w.split("=", 1)[0]
        opt = cat.lookup(name)
        if opt is None:
            matches = cat.prefix_matches(name)
            opt = cat.lookup(matches[0]) if len(matches) == 1 else None
        if opt is not None:
            out.add(opt.dest)
    return out


def regen(codes: list[str]) -> None:
    """Write the expected `.out` of every err fixture of ``codes`` (the CLI's concise output)."""
    import contextlib
    import io

    from sglang_lsp.cli.main import main as cli

    os.chdir(ROOT)
    for code in codes:
        for sh in sorted((FIXTURES / code / "err").glob("*.sh")):
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                cli(["check", "--format", "concise", "--select", code, sh.relative_to(ROOT).as_posix()])
            sh.with_suffix(".out").write_text(buf.getvalue(), encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--codes", default="")
    a = ap.parse_args()
    from sglang_lsp.checks.kb.rule import kb_rules

    from sglang_lsp.catalog.catalog import load_catalog

    cat = load_catalog(None)
    want = {c for c in a.codes.split(",") if c}
    summary, verdicts = replay.replay(replay.load(a.corpus))
    rules = [r for r in kb_rules() if not want or r.code in want]
    for rule in rules:
        flags = set(rule.anchor) | {x["flag"] for x in rule.related} - {"--model-path"}
        err = [v for v in verdicts if rule.code in v.in_scope and rule.code in [f.code for f in v.errors]
               and v.explained]
        err.sort(key=lambda v: len(v.case.get("argv") or []))
        dests = {cat.lookup(f).dest for f in flags if cat.lookup(f) is not None}
        ok = [v for v in verdicts if v.case["outcome"] == "ok" and dests & _dests(cat, v.case.get("argv") or [])]
        ok.sort(key=lambda v: len(v.case.get("argv") or []))
        for kind, picked in (("err", err[:N]), ("ok", ok[:N])):
            d = FIXTURES / rule.code / kind
            d.mkdir(parents=True, exist_ok=True)
            for old in d.glob("oracle_*"):
                old.unlink()
            for v in picked:
                (d / f"oracle_{v.case['id']}.sh").write_text(script(v.case, rule.code, kind), encoding="utf-8")
        print(rule.code, "err", len(err[:N]), "ok", len(ok[:N]))
    regen([r.code for r in rules])


if __name__ == "__main__":
    main()
