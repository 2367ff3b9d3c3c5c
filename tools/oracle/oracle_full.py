#!/usr/bin/env python3
"""The shared oracle harness plus the *full* resolved configuration of every accepted launch.

The harness (``../shared/oracle/oracle.py``, the ``ORACLE_DIR`` environment variable overrides
its location) reports, for an accepted launch, a ``resolved`` selection of 26 fields. This
wrapper runs the same harness (same workers, same simulation, same isolation; nothing of it is
copied) and adds, for accepted launches, a ``full`` record:

* ``resolved``: every ServerArgs field after resolution, as sglang 0.5.23 serialises it itself
  (``ServerArgs.resolved_dict()``, which reads ``resolution_result`` field by field, the way
  ``/server_info`` reports it), made JSON-safe: numbers stay numbers, None is null, tuples are
  lists, nested records are objects, anything else is its ``repr`` (memory addresses removed);
* ``raw``: the same fields as the parser gave them, before resolution (``_raw_input``);
* ``flags``: the fields the argv set explicitly (parsed again with every default suppressed);
* ``declared``: for each field that resolution declared (``_resolved_overrides``), the names of
  the handlers/passes that declared it, in order.

Per worker it also reports ``defaults``: the raw fields of a launch with no flag but
``--model-path dummy`` (the parser's default namespace as a ServerArgs). From these, "what
sglang picked by itself" is: fields not in ``flags`` whose resolved value differs from the raw
value; ``declared`` says which handler did it (no handler: sglang's declared fallback for a None
input).

    ORACLE_PY=/tmp/sglang-oracle-venv/bin/python
    $ORACLE_PY tools/oracle/oracle_full.py --cases cases.jsonl --out results.jsonl -j 2 --stage layers

``--out`` is written as results arrive (one JSON line per case, not in input order) and a run
restarted with the same ``--out`` skips the ids already in it. ``label_full.py`` turns inputs +
results into the committed files. The extra record costs about 5 ms per accepted case.
"""

from __future__ import annotations

import argparse
import enum
import json
import math
import os
import re
import sys
import threading
import time

ORACLE_DIR = os.environ.get("ORACLE_DIR", "/work/shared/oracle")
if ORACLE_DIR not in sys.path:
    sys.path.insert(0, ORACLE_DIR)

import oracle  # noqa: E402  (the shared harness)

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def json_safe(value, depth: int = 0):
    """A JSON value for ``value``: scalars as they are, containers element-wise, the rest as a
    repr without memory addresses (so two runs give the same text)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, enum.Enum):
        return repr(value)
    if depth < 8 and isinstance(value, (list, tuple)):
        return [json_safe(v, depth + 1) for v in value]
    if depth < 8 and isinstance(value, (set, frozenset)):
        return sorted((json_safe(v, depth + 1) for v in value), key=repr)
    if depth < 8 and isinstance(value, dict):
        return {str(k): json_safe(v, depth + 1) for k, v in value.items()}
    return _ADDRESS.sub("", repr(value))


class FullWorker(oracle.Worker):
    """The harness worker; remembers the ServerArgs record of the case it ran."""

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        import argparse as _argparse

        import sglang.srt.server_args as sa_mod

        self._sa_mod = sa_mod
        self._original_prepare = sa_mod.prepare_server_args
        # dests the argv names: the real parser with every default suppressed
        p = _argparse.ArgumentParser(prog="sglang serve", add_help=False)
        sa_mod.ServerArgs.add_cli_args(p)
        for action in p._actions:
            action.default = _argparse.SUPPRESS
        self._given_parser = p
        base = self._original_prepare(["--model-path", "dummy"])
        self.defaults = self._fields(base)
        self.last_record = None

    def _fields(self, record) -> dict:
        from sglang.srt.arg_groups.arg_utils import record_fields

        return {f.name: json_safe(getattr(record, f.name)) for f in record_fields(type(record))}

    def _capture(self, argv):
        record = self._original_prepare(argv)
        self.last_record = record
        return record

    def given_fields(self, argv) -> list[str]:
        import io
        import contextlib

        try:
            with contextlib.redirect_stderr(io.StringIO()):
                ns, _ = self._given_parser.parse_known_args(argv)
        except BaseException:  # noqa: BLE001 - argparse exits on bad input; the case says why
            return []
        return sorted(vars(ns))

    def run_case(self, case):
        self.last_record = None
        self._sa_mod.prepare_server_args = self._capture
        try:
            res = super().run_case(case)
        finally:
            self._sa_mod.prepare_server_args = self._original_prepare
        record = self.last_record
        self.last_record = None
        if res.get("outcome") == "ok" and record is not None:
            try:
                res["full"] = self.full_record(record, self.build_argv(case))
            except Exception as e:  # noqa: BLE001 - the verdict stands; say why the record is missing
                res["full_error"] = f"{type(e).__name__}: {e}"[:500]
        return res

    def full_record(self, record, argv) -> dict:
        resolved = json_safe(record.resolved_dict())
        raw = {k: json_safe(v) for k, v in (getattr(record, "_raw_input", None) or {}).items()}
        declared: dict[str, list[str]] = {}
        for source, fields in getattr(record, "_resolved_overrides", None) or ():
            for name in fields:
                declared.setdefault(name, []).append(str(source))
        return {"resolved": resolved, "raw": raw, "flags": self.given_fields(argv), "declared": declared}


def full_worker_main(profile, timeout, stage):
    """oracle.worker_main with FullWorker; the hello line also carries the default fields."""
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    log_path = os.environ.get("ORACLE_WORKER_LOG") or os.devnull
    logf = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(logf, 1)
    os.dup2(logf, 2)
    sys.stdout = os.fdopen(1, "w", buffering=1)
    sys.stderr = os.fdopen(2, "w", buffering=1)
    try:
        w = FullWorker(profile, timeout, stage)
        proto.write(json.dumps({"hello": True, "profile": profile, "import_s": w.import_s,
                                "verify": w.verify, "defaults": w.defaults}, default=str) + "\n")
    except BaseException as e:  # noqa: BLE001
        import traceback

        proto.write(json.dumps({"hello": False, "error": repr(e),
                                "tb": traceback.format_exc()[-4000:]}) + "\n")
        return 3
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        case = json.loads(line)
        try:
            r = w.run_case(case)
        except BaseException as e:  # noqa: BLE001
            r = {"id": case.get("id"), "outcome": "crash", "exc_type": type(e).__name__,
                 "message": f"harness failure: {e!r}"[:2000], "hardware": profile}
        proto.write(json.dumps(r, default=str) + "\n")
    return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", required=False, help="JSONL file of cases")
    ap.add_argument("--out", help="results JSONL (appended to; ids already in it are skipped)")
    ap.add_argument("--defaults-out", help="write {profile: default fields} here (JSON)")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=30)
    ap.add_argument("--stage", choices=["resolve", "layers"], default="resolve")
    ap.add_argument("--chunk", type=int, default=100000)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--worker-log-dir", default=None)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        sys.exit(full_worker_main(args.worker, args.timeout, args.stage))
    if not args.cases or not args.out:
        ap.error("--cases and --out are required")
    # The harness starts each worker as `python <oracle.__file__> --worker P`; point it here so
    # the workers are FullWorkers (the only change to the harness's parent side).
    oracle.__file__ = os.path.abspath(__file__)
    cases = oracle._read_cases(args.cases)
    done = set()
    if os.path.exists(args.out):
        with open(args.out) as f:
            for line in f:
                if line.strip():
                    try:
                        done.add(json.loads(line)["id"])
                    except (json.JSONDecodeError, KeyError):
                        pass
    todo = [c for c in cases if c.get("id") not in done]
    print(f"{len(cases)} cases, {len(done)} already labelled, {len(todo)} to run", file=sys.stderr, flush=True)
    lock = threading.Lock()
    out = open(args.out, "a", buffering=1)
    t0 = time.time()
    n = [0]

    def on_result(r):
        with lock:
            out.write(json.dumps(r, default=str) + "\n")
            n[0] += 1
            if n[0] % 100 == 0:
                print(f"{n[0]}/{len(todo)} in {time.time() - t0:.0f}s", file=sys.stderr, flush=True)

    _, hellos = oracle.run_cases(todo, args, on_result=on_result)
    out.close()
    if args.defaults_out:
        prev = {}
        if os.path.exists(args.defaults_out):
            prev = json.load(open(args.defaults_out))
        prev.update({hw: h.get("defaults") for hw, h in hellos.items() if h and h.get("defaults")})
        with open(args.defaults_out, "w") as f:
            json.dump(prev, f, sort_keys=True)
    print(f"{len(todo)} cases in {time.time() - t0:.1f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
