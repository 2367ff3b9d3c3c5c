#!/usr/bin/env python3
"""Replay labelled oracle cases through ``sglang-lsp check`` and compare with sglang's verdict.

A labelled case (``tests/data/oracle_cases.jsonl``, built by ``label.py``) holds the inputs of
one launch (argv, GPU profile, model fixture, environment) and what sglang 0.5.23 did with it
(``outcome`` ok/error, ``phase``, ``message``). Replaying writes the launch as a one-line shell
script (``VAR=… python -m sglang.launch_server --model-path <fixture> …``), checks it with the
case's GPU, and classifies the result:

* sglang rejected it: is an error reported (``detected``)? does a finding's ``sglang_error``
  match sglang's message (``explained``)? is the message in the scope of a knowledge-base rule
  (some rule's regex matches it)?
* sglang accepted it: is any error reported (a false error)?

    python tools/oracle/replay.py tests/data/oracle_cases.jsonl [--show-misses] [--show-false]

Used by ``tests/test_kb_oracle.py`` (no sglang needed) and for the report on a fresh set.
"""

from __future__ import annotations

import argparse
import collections
import functools
import gzip
import json
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODELS_DIR = ROOT / "tests" / "fixtures" / "models"

if str(ROOT / "server") not in sys.path:
    try:
        import sglang_lsp  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(ROOT / "server"))

from sglang_lsp.engine.check import Options, check  # noqa: E402
from sglang_lsp.base.findings import Severity  # noqa: E402
from sglang_lsp.checks.kb.rule import kb_rules  # noqa: E402

JUDGED = ("ok", "error")  # harness_limit / timeout / crash are not sglang's verdict
# Deployment rules (checks/deployment.py): what happens after argument resolution (start-up,
# networking, containers, node ranks). The oracle stops at resolution (or layer construction), so
# an accepted case says nothing about them: their errors on accepted cases are counted apart
# ("unconfirmed"), never as false errors. E.g. SGL057 (`--node-rank` not below `--nnodes`):
# sglang resolves the arguments, then the node computes rank ranges outside the group
# (entrypoints/engine.py:_calculate_rank_ranges) and never joins it.
DEPLOYMENT_CODES = frozenset(f"SGL{n:03d}" for n in range(50, 62))
# Memory rules (stage "load": loading the weights, sizing the KV cache) fail after the stage the
# oracle stops at too; they are labelled by the memory oracle instead (tools/oracle/memory_probe.py,
# tests/test_memory_diagnostics.py) and counted apart here like the deployment rules.


@functools.cache
def _stage_rules(stage: str) -> frozenset[str]:
    """The codes of the knowledge-base rules sglang raises at ``stage`` (``load``, ``layers`` …)."""
    return frozenset(r.code for r in kb_rules() if r.stage == stage)


def script_for(case: dict) -> str:
    argv = [str(a).replace("{MODELS}", str(MODELS_DIR)) for a in case.get("argv") or []]
    has_model = any(a in ("--model-path", "--model") or a.startswith("--model-path=") for a in argv)
    model = case.get("model")
    if not has_model:
        argv = ["--model-path", str(MODELS_DIR / model) if model else "dummy"] + argv
    env = case.get("env") or {}
    prefix = " ".join(f"{k}={shlex.quote(str(v))}" for k, v in env.items() if v is not None)
    cmd = "python -m sglang.launch_server " + shlex.join(argv)
    return (prefix + " " + cmd if prefix else cmd) + "\n"


def rejected(case: dict) -> bool:
    return case["outcome"] == "error"


# Rejections that say what the oracle's machine lacks, not what the launch file says: the same
# launch passes on a GPU node that has the hardware or packages. sglang 0.5.23 reads
# /sys/class/infiniband for every IB device a launch names (validation_hook.py,
# validate_ib_devices: no such directory, no device in it, or the named device not among them);
# quantization methods import their kernels' packages when the layers are built
# (bitsandbytes, humming-kernels); --mamba-backend flashinfer imports flashinfer.mamba on a
# platform that has FlashInfer (the oracle's environment has none; AMD has no FlashInfer at all,
# and SGLANG_IS_FLASHINFER_AVAILABLE=0 turns it off, which a file can tell, so those stay counted).
_HOST_MESSAGES = re.compile(
    r"InfiniBand sysfs path not found|No IB devices found in|Invalid IB devices specified"
    r"|^Please install bitsandbytes|requires `humming-kernels`")
_AMD = frozenset({"MI300X", "MI325X", "MI355X"})


def host_dependent(case: dict) -> bool:
    """Whether sglang's rejection of ``case`` depends on the machine it ran on (see
    :data:`_HOST_MESSAGES`): no file-level check can predict it; counted apart."""
    if not rejected(case):
        return False
    message = case.get("message") or ""
    if _HOST_MESSAGES.search(message):
        return True
    if not message.startswith("FlashInfer mamba module not available") or case.get("hardware") in _AMD:
        return False
    # SGLANG_IS_FLASHINFER_AVAILABLE set to anything but 1/true turns FlashInfer off whatever the
    # machine has (utils/common.py:is_flashinfer_available): the file says it (SGL215)
    off = (case.get("env") or {}).get("SGLANG_IS_FLASHINFER_AVAILABLE")
    return off is None or str(off).lower() in ("1", "true")


@dataclass
class Verdict:
    case: dict
    errors: list  # error-level findings
    kb_codes: list
    explained: bool
    in_scope: list  # KB rule codes whose regex matches sglang's message
    unconfirmed: list = field(default_factory=list)  # deployment errors on an accepted case


@dataclass
class Summary:
    total: int = 0
    rejected: int = 0
    accepted: int = 0
    detected: int = 0
    explained: int = 0
    scope_rejected: int = 0
    scope_detected: int = 0
    scope_explained: int = 0
    false_errors: int = 0
    host_rejected: int = 0  # rejections that depend on the oracle's machine (host_dependent)
    host_detected: int = 0
    host_explained: int = 0
    unconfirmed: int = 0  # accepted cases with deployment errors only the real start-up could confirm
    misses: list = field(default_factory=list)
    scope_misses: list = field(default_factory=list)
    unexplained: list = field(default_factory=list)
    false: list = field(default_factory=list)
    per_rule: dict = field(default_factory=lambda: collections.defaultdict(lambda: [0, 0, 0]))  # scope, detected, explained

    def as_dict(self) -> dict:
        def pct(a, b):
            return round(100.0 * a / b, 2) if b else None

        return {
            "cases": self.total, "rejected": self.rejected, "accepted": self.accepted,
            "detected": self.detected, "detected_pct": pct(self.detected, self.rejected),
            "explained": self.explained, "explained_pct": pct(self.explained, self.rejected),
            "scope_rejected": self.scope_rejected,
            "scope_detected_pct": pct(self.scope_detected, self.scope_rejected),
            "scope_explained_pct": pct(self.scope_explained, self.scope_rejected),
            "false_errors": self.false_errors, "false_error_pct": pct(self.false_errors, self.accepted),
            "host_rejected": self.host_rejected,
            "file_rejected": self.rejected - self.host_rejected,
            "file_detected_pct": pct(self.detected - self.host_detected, self.rejected - self.host_rejected),
            "file_explained_pct": pct(self.explained - self.host_explained, self.rejected - self.host_rejected),
            "unconfirmed_deployment_errors": self.unconfirmed,
        }


_SITES = None


def _sites() -> dict:
    """code → (compiled patterns, raise sites) of every knowledge-base rule."""
    global _SITES
    if _SITES is None:
        _SITES = {r.code: ([re.compile(p) for p in r.patterns],
                           {f"{x['file']}:{x['line']}" for x in r.data["raised_at"] if x.get("line")})
                  for r in kb_rules()}
    return _SITES


def matches(pattern: str, case: dict, sites: set | None) -> bool:
    """Does sglang's message of ``case`` match ``pattern``? A pattern that matches an empty
    message (a bare ``assert``) only counts at the rule's own raise site."""
    msg = case.get("message") or ""
    if not re.search(pattern, msg):
        return False
    if re.fullmatch(pattern, ""):
        return bool(sites) and case.get("raised_at") in sites
    return True


def in_scope(case: dict) -> list[str]:
    return [code for code, (pats, sites) in _sites().items() if any(matches(p.pattern, case, sites) for p in pats)]


def judge(case: dict, with_gpu: bool = True) -> Verdict:
    """``with_gpu=False``: checked without naming the case's GPU (the launch may run on any)."""
    text = script_for(case)
    findings = check(text, "launch.sh", Options(gpu=case.get("hardware") if with_gpu else None))
    errors = [f for f in findings if f.severity == Severity.ERROR]
    if case.get("outcome") == "ok" and case.get("stage", "resolve") == "resolve" and case.get("model"):
        # the case stopped after argument resolution: it says nothing about layer-construction checks
        errors = [f for f in errors if f.code not in _stage_rules("layers")]
    unconfirmed = []
    if case.get("outcome") != "ok":
        # a launch sglang refuses while resolving never loads: a memory error does not detect it
        errors = [f for f in errors if f.code not in _stage_rules("load")]
    if case.get("outcome") == "ok":
        later = DEPLOYMENT_CODES | _stage_rules("load")
        unconfirmed = [f for f in errors if f.code in later]
        errors = [f for f in errors if f.code not in later]
    explained = any(f.sglang_error and matches(f.sglang_error, case, _sites().get(f.code, (None, None))[1])
                    for f in errors)
    return Verdict(case, errors, [f.code for f in findings if f.kb_id], explained, in_scope(case) if rejected(case) else [],
                   unconfirmed)


def replay(cases: list[dict], with_gpu: bool = True) -> tuple[Summary, list[Verdict]]:
    """The verdicts on ``cases``, checked with each case's GPU, or without naming it
    (``with_gpu=False``: a rule that fires then must hold on every GPU, and a case sglang
    accepted on its GPU must get no error)."""
    s = Summary()
    verdicts = []
    for case in cases:
        if case.get("outcome") not in JUDGED:
            continue
        v = judge(case, with_gpu)
        verdicts.append(v)
        s.total += 1
        if rejected(case):
            s.rejected += 1
            det = bool(v.errors)
            s.detected += det
            if host_dependent(case):
                s.host_rejected += 1
                s.host_detected += det
                s.host_explained += v.explained
            s.explained += v.explained
            if not det:
                s.misses.append(v)
            elif not v.explained:
                s.unexplained.append(v)
            if v.in_scope:
                s.scope_rejected += 1
                s.scope_detected += det
                s.scope_explained += v.explained
                if not det or not v.explained:
                    s.scope_misses.append(v)
                for code in v.in_scope:
                    pr = s.per_rule[code]
                    pr[0] += 1
                    pr[1] += det
                    pr[2] += v.explained
        else:
            s.accepted += 1
            s.unconfirmed += bool(v.unconfirmed)
            if v.errors:
                s.false_errors += 1
                s.false.append(v)
    return s, verdicts


def load(path: str) -> list[dict]:
    """Labelled cases of a JSON-lines file (gzip-compressed when the name ends in ``.gz``)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _short(case: dict) -> str:
    return (f"{case['id']} {case.get('hardware')} {case.get('model')} {' '.join(map(str, case.get('argv') or []))}"
            + (f" env={case['env']}" if case.get("env") else ""))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--show-misses", action="store_true", help="rejections in a rule's scope not detected/explained")
    ap.add_argument("--show-all-misses", action="store_true", help="every rejection not detected")
    ap.add_argument("--show-false", action="store_true")
    ap.add_argument("--limit", type=int, default=40)
    ap.add_argument("--no-gpu", action="store_true", help="check without naming each case's GPU")
    a = ap.parse_args()
    s, _ = replay(load(a.corpus), with_gpu=not a.no_gpu)
    print(json.dumps(s.as_dict(), indent=1))
    print("per rule (scope, detected, explained):")
    for code, (n, d, e) in sorted(s.per_rule.items()):
        print(f"  {code}: {n} {d} {e}")
    if a.show_false:
        print(f"\nFALSE ERRORS ({len(s.false)}):")
        for v in s.false[: a.limit]:
            print(" ", _short(v.case), "->", [(f.code, f.message[:100]) for f in v.errors])
    if a.show_misses:
        print(f"\nIN-SCOPE MISSES ({len(s.scope_misses)}):")
        for v in s.scope_misses[: a.limit]:
            print(" ", _short(v.case), "| scope", v.in_scope, "| got", [f.code for f in v.errors],
                  "|", (v.case.get("message") or "")[:140])
    if a.show_all_misses:
        c = collections.Counter()
        ex = {}
        for v in s.misses:
            host = "(host) " if host_dependent(v.case) else ""
            key = (v.case.get("raised_at"), host + re.sub(r"\d+", "N", (v.case.get("message") or "")[:90]))
            c[key] += 1
            ex.setdefault(key, v.case["id"])
        print(f"\nUNDETECTED REJECTIONS by site ({len(s.misses)}):")
        for (at, m), n in c.most_common(a.limit):
            print(f"  {n:4d} {at} | {m} | {ex[(at, m)]}")


if __name__ == "__main__":
    main()
