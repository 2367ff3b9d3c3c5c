#!/usr/bin/env python3
"""Benchmark of ``sglang-lsp check`` on YAML against the cost of just parsing the YAML.

This is a benchmark, not a test: it prints numbers and never fails on them.

It generates one multi-document Kubernetes manifest of about ``--lines`` lines (default 5,000):
Deployments, StatefulSets and LeaderWorkerSets that launch sglang (``command``/``args`` lists in
block and flow style, ``bash -c`` block scalars with ``$(VAR)`` references, env from ``value``
and ``valueFrom``), ConfigMaps holding sglang ``--config`` files, Services, and unrelated
workloads; about one launch in five carries a typical mistake. Then it times, over ``--runs``
passes (median reported):

* bare: read the file and parse it with tree-sitter-yaml;
* extract: read the file and run :func:`sglang_lsp.extract.yaml.scan.extract_yaml` (the YAML part:
  masking, parsing, finding launches, decoding scalars, shell in YAML, positions);
* full: read the file and run :func:`sglang_lsp.engine.check.check_document` on it (extraction, argv
  resolution against the catalog and the knowledge-base rules for every launch);
* unrelated: the full check of a manifest of the same size that launches no sglang (the
  byte-level pre-check should make it cost next to nothing);
* one document read through PyYAML: the full check of the manifest with a document inserted in
  its middle that tree-sitter-yaml rejects and kubectl reads (a multi-line quoted ``sh -c`` item),
  which makes the check confirm the error with PyYAML and parse the file again.

Then it checks ``--runs`` manifests generated with other seeds, each once (bare and full): files
this interpreter has never seen, so a cache keyed by contents cannot make them cheaper.

Usage (from the repository root)::

    python bench/bench_yaml.py
    python bench/bench_yaml.py --lines 20000 --runs 9 --profile
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import io
import pstats
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if importlib.util.find_spec("sglang_lsp") is None:
    sys.path.insert(0, str(ROOT / "server"))

import tree_sitter as ts  # noqa: E402
import tree_sitter_yaml  # noqa: E402

import sglang_lsp  # noqa: E402
from sglang_lsp.base.document import Document, decode  # noqa: E402
from sglang_lsp.catalog.catalog import load_catalog  # noqa: E402
from sglang_lsp.engine.check import Options, check_document  # noqa: E402
from sglang_lsp.extract.yaml.scan import extract_yaml  # noqa: E402

MODELS = ["meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-72B-Instruct", "deepseek-ai/DeepSeek-V3-0324",
          "/models/Meta-Llama-3.1-405B-Instruct-FP8", "Qwen/Qwen3-235B-A22B-FP8"]
FLAGS = [("--mem-fraction-static", ["0.8", "0.85", "0.88"]), ("--context-length", ["8192", "32768", "131072"]),
         ("--chunked-prefill-size", ["4096", "8192"]), ("--max-running-requests", ["128", "256"]),
         ("--kv-cache-dtype", ["auto", "fp8_e4m3"]), ("--schedule-policy", ["lpm", "fcfs"]),
         ("--log-level", ["info", "warning"]), ("--reasoning-parser", ["deepseek-r1", "qwen3"]),
         ("--served-model-name", ["llm", "chat"]), ("--watchdog-timeout", ["300", "600"]),
         ("--enable-metrics", None), ("--trust-remote-code", None), ("--enable-cache-report", None)]
MISTAKES = [("--max-model-len", "8192"), ("--quantization", "FP8"), ("--tp", "8"), ("--kv-cache-dtype", "fp8"),
            ("--mem-fraction-static", "0.8.5")]


def _args(rng: random.Random) -> list[str]:
    out = ["--model-path", rng.choice(MODELS), "--tp-size", rng.choice(["1", "2", "4", "8"]), "--host", "0.0.0.0",
           "--port", "30000"]
    for flag, values in rng.sample(FLAGS, rng.randint(3, 9)):
        out += [flag] if values is None else [flag, rng.choice(values)]
    if rng.random() < 0.2:
        flag, value = rng.choice(MISTAKES)
        out += [flag, value]
    return out


def _deployment(rng: random.Random, i: int) -> list[str]:
    kind = rng.choice(["Deployment", "StatefulSet"])
    args = _args(rng)
    lines = ["apiVersion: apps/v1", f"kind: {kind}", "metadata:", f"  name: sglang-{i}", "  labels:",
             f"    app: sglang-{i}", "spec:", "  replicas: 2", "  selector:", "    matchLabels:",
             f"      app: sglang-{i}", "  template:", "    metadata:", "      labels:", f"        app: sglang-{i}",
             "    spec:", "      nodeSelector:", "        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3",
             "      containers:", "        - name: server", "          image: lmsysorg/sglang:v0.5.3-cu129",
             "          env:", "            - name: HF_HOME", "              value: /cache",
             "            - name: POD_INDEX", "              valueFrom:", "                fieldRef:",
             "                  fieldPath: metadata.labels['apps.kubernetes.io/pod-index']"]
    style = rng.choice(["block", "flow", "bash"])
    if style == "block":
        lines += ["          command:", "            - python3", "            - -m", "            - sglang.launch_server",
                  "          args:"] + [f'            - "{a}"' if a[0].isdigit() else f"            - {a}" for a in args]
    elif style == "flow":
        lines += ['          command: ["python3", "-m", "sglang.launch_server"]',
                  "          args: [" + ", ".join(f'"{a}"' for a in args) + "]"]
    else:
        lines += ['          command: ["/bin/bash", "-c"]', "          args:", "            - |",
                  "              set -euo pipefail", "              exec python3 -m sglang.launch_server \\"]
        pairs = []
        for a in args + ["--node-rank", "$(POD_INDEX)"]:
            if a.startswith("--") or not pairs:
                pairs.append(a)
            else:
                pairs[-1] += " " + a
        lines += [f"                {p} \\" for p in pairs[:-1]] + [f"                {pairs[-1]}"]
    lines += ["          ports:", "            - containerPort: 30000", "          readinessProbe:",
              "            httpGet: {path: /health, port: 30000}", "            periodSeconds: 10",
              "          resources:", "            limits:", '              nvidia.com/gpu: "8"',
              "          volumeMounts:", "            - {name: cache, mountPath: /cache}", "      volumes:",
              "        - name: cache", "          persistentVolumeClaim: {claimName: hf-cache}"]
    return lines


def _service(i: int, name: str = "sglang") -> list[str]:
    return ["apiVersion: v1", "kind: Service", "metadata:", f"  name: {name}-{i}", "spec:", "  selector:",
            f"    app: {name}-{i}", "  ports:", "    - name: http", "      port: 80", "      targetPort: 30000"]


def _configmap(rng: random.Random, i: int) -> list[str]:
    return ["apiVersion: v1", "kind: ConfigMap", "metadata:", f"  name: sglang-config-{i}", "data:",
            "  serve.yaml: |", f"    model-path: {rng.choice(MODELS)}", "    tp-size: 8", "    mem-fraction-static: 0.85",
            "    kv-cache-dtype: fp8_e4m3", "    enable-metrics: true"]


def _unrelated(i: int) -> list[str]:
    return ["apiVersion: apps/v1", "kind: Deployment", "metadata:", f"  name: web-{i}", "spec:", "  replicas: 3",
            "  template:", "    spec:", "      containers:", "        - name: nginx", "          image: nginx:1.27",
            '          command: ["/bin/sh", "-c"]', "          args:", "            - |",
            "              envsubst < /etc/nginx/tmpl > /etc/nginx/conf.d/default.conf",
            "              exec nginx -g 'daemon off;'", "          env:", "            - name: PORT",
            '              value: "8080"', "          ports:", "            - containerPort: 8080"]


# a document that kubectl reads and tree-sitter-yaml does not (the continuation line of the quoted
# `sh -c` item is indented no deeper than the list): its file is read through PyYAML's view
QUIRKY_DOCUMENT = """---
apiVersion: v1
kind: Pod
metadata:
  name: sh-c-quirk
spec:
  containers:
    - name: server
      image: lmsysorg/sglang:v0.5.3-cu129
      command:
        - sh
        - -c
        - "python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --tp-size 2 \\
        --host 0.0.0.0 --port 30000"
"""


def generate(lines: int, seed: int, related: bool = True) -> str:
    rng = random.Random(seed)
    docs: list[list[str]] = []
    total = 0
    i = 0
    while total < lines:
        if not related:
            doc = _unrelated(i) if i % 2 else _service(i, "web")
        else:
            doc = rng.choice([_deployment, _deployment, _deployment, _configmap])(rng, i) if i % 3 else _service(i)
            if i % 7 == 6:
                doc = _unrelated(i)
        docs.append(doc)
        total += len(doc) + 1
        i += 1
    return "\n---\n".join("\n".join(d) for d in docs) + "\n"


def time_passes(fn, runs: int) -> list[float]:
    fn()
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def _fmt(seconds: float) -> str:
    return f"{seconds * 1000:9.1f} ms"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=5000, help="manifest size in lines (default 5000)")
    ap.add_argument("--runs", type=int, default=9, help="timed passes (default 9)")
    ap.add_argument("--seed", type=int, default=20251202)
    ap.add_argument("--profile", action="store_true", help="cProfile one full check and print hotspots")
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="sglang-lsp-bench-yaml-") as tmp:
        path = Path(tmp) / "manifest.yaml"
        path.write_text(generate(args.lines, args.seed), encoding="utf-8")
        quirky = Path(tmp) / "quirky.yaml"  # with one document that tree-sitter-yaml rejects and PyYAML reads
        text = path.read_text(encoding="utf-8")
        middle = text.index("\n---\n", len(text) // 2) + 1
        quirky.write_text(text[:middle] + QUIRKY_DOCUMENT + text[middle:], encoding="utf-8")
        unrelated = Path(tmp) / "unrelated.yaml"
        unrelated.write_text(generate(args.lines, args.seed, related=False), encoding="utf-8")
        parser = ts.Parser(ts.Language(tree_sitter_yaml.language()))
        options = Options()

        def bare(p=path):
            return parser.parse(p.read_bytes()).root_node.end_byte

        def full(p=path):
            text = decode(p.read_bytes())
            return check_document(Document(text, str(p), "yaml"), options)

        cat = load_catalog()

        def extract(p=path):
            text = decode(p.read_bytes())
            return extract_yaml(Document(text, str(p), "yaml"), str(p.parent), cat)

        result = full()
        n_lines = path.read_text(encoding="utf-8").count("\n")
        n_docs = path.read_text(encoding="utf-8").count("\n---\n") + 1
        print(f"sglang_lsp {sglang_lsp.__version__} from {Path(sglang_lsp.__file__).parent}")
        print(f"python {sys.version.split()[0]}, tree-sitter {_version('tree-sitter')}, "
              f"tree-sitter-yaml {_version('tree-sitter-yaml')}")
        print(f"manifest: {n_lines} lines, {n_docs} documents, {path.stat().st_size / 1024:.0f} KiB; "
              f"{len(result.invocations)} launches, {len(result.findings)} findings, {len(result.errors)} internal errors\n")
        tb = time_passes(bare, args.runs)
        te = time_passes(extract, args.runs)
        tf = time_passes(full, args.runs)
        tq = time_passes(lambda: full(quirky), args.runs)
        tu = time_passes(lambda: full(unrelated), args.runs)
        tub = time_passes(lambda: bare(unrelated), args.runs)
        mb, me, mf, mq, mu, mub = (statistics.median(x) for x in (tb, te, tf, tq, tu, tub))
        print(f"    {'measurement':<52}{'median':>12}")
        print(f"    {'bare: read + tree-sitter-yaml parse':<52}{_fmt(mb)}")
        print(f"    {'extract: read + yaml_extract.extract_yaml':<52}{_fmt(me)}")
        print(f"    {'full: read + engine.check_document':<52}{_fmt(mf)}")
        print(f"    {'ratio extract / bare':<52}{me / mb:9.2f} x")
        print(f"    {'ratio full / bare':<52}{mf / mb:9.2f} x")
        print(f"    {'full, one document read through PyYAML':<52}{_fmt(mq)}")
        print(f"    {'ratio that / full':<52}{mq / mf:9.2f} x")
        print(f"    {'unrelated manifest, bare parse':<52}{_fmt(mub)}")
        print(f"    {'unrelated manifest, full check (pre-check only)':<52}{_fmt(mu)}")
        print(f"    {'ratio unrelated full / bare':<52}{mu / mub:9.2f} x")
        print(f"    ({args.runs} runs each)")
        # the same on manifests this interpreter has never seen (other seeds), each checked once:
        # a cache keyed by a file's or a launch's contents would make the repeated passes above
        # cheaper than these
        ub, uf = [], []
        for i in range(args.runs):
            fresh = Path(tmp) / f"unseen_{i}.yaml"
            fresh.write_text(generate(args.lines, args.seed + 1 + i), encoding="utf-8")
            t0 = time.perf_counter()
            bare(fresh)
            t1 = time.perf_counter()
            full(fresh)
            ub.append(t1 - t0)
            uf.append(time.perf_counter() - t1)
        mub2, muf2 = statistics.median(ub), statistics.median(uf)
        print(f"    ({args.runs} unseen manifests, once each: bare {_fmt(mub2).strip()}, full {_fmt(muf2).strip()}, "
              f"ratio {muf2 / mub2:.2f} x)\n")
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            full()
            prof.disable()
            buf = io.StringIO()
            pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(30)
            print(buf.getvalue())
    return 0


def _version(dist: str) -> str:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:  # pragma: no cover
        return "?"


if __name__ == "__main__":
    sys.exit(main())
