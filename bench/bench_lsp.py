#!/usr/bin/env python3
"""Benchmark of ``sglang-lsp serve``: edit-to-diagnostics latency and memory.

This is a benchmark, not a test: it prints numbers and never fails on them.

It starts the real server (``python -m sglang_lsp.cli.main serve``) and drives it over stdio with a
minimal JSON-RPC client, like an editor would (a publish counts when its frame has arrived,
before the client decodes it; see :class:`Bench`):

Latency
    For each generated file, opens it, then ``--edits`` times replaces one number in it (a
    ``--port`` value: the text length stays the same, the findings do not change) and measures
    the wall-clock time from sending ``textDocument/didChange`` to receiving the
    ``textDocument/publishDiagnostics`` of that version. Median and p99 are reported, together
    with the engine's own time for the same text in this process (``check_document``, warm), so
    the server's overhead (debounce, I/O, conversion) is visible. With ``--typing``, also keystrokes
    that change the text's length, as typing does: three digits typed after a port, one at a time,
    then deleted with backspace (row ``typing``).

    * ``script``: a 2,000-line shell script, mostly ordinary shell (functions, loops, curl,
      docker …) with ``--launches`` (default 20) multi-line sglang launches;
    * ``script-dense``: a 2,000-line script that is nothing but launches (about 150);
    * ``yaml``: a 3,000-line multi-document Kubernetes YAML (Deployments whose containers launch
      sglang, Services, ConfigMaps).

    The server can debounce changes (``SGLANG_LSP_DEBOUNCE_MS``, default 0: none); the latency
    is measured with the default and with ``--debounce-ms`` (default 5) for comparison.

Memory
    RSS of the server process (``/proc/<pid>/status``) after initialize, with 100 open documents
    (a mix of scripts and YAML files of 100–400 lines), and after ``--memory-edits`` (default
    1,000) further edits to one of them (flat memory: no growth per edit).

Goals (from the issue; reported, never asserted): median <= 10 ms, p99 <= 50 ms; RSS <= 150 MB.

Usage (from the repository root)::

    python bench/bench_lsp.py
    python bench/bench_lsp.py --edits 50 --skip-memory
    python bench/bench_lsp.py --only yaml

It uses the installed ``sglang_lsp`` when there is one, otherwise ``server/`` of this checkout.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if importlib.util.find_spec("sglang_lsp") is None:
    sys.path.insert(0, str(ROOT / "server"))

import sglang_lsp  # noqa: E402
from sglang_lsp.base.document import Document  # noqa: E402
from sglang_lsp.engine.check import check_document  # noqa: E402

FLAGS = [
    "--tp 8", "--dp-size 2", "--mem-fraction-static 0.85", "--quantization fp8", "--kv-cache-dtype fp8_e4m3",
    "--context-length 32768", "--max-running-requests 256", "--chunked-prefill-size 8192", "--dtype bfloat16",
    "--trust-remote-code", "--enable-metrics", "--host 0.0.0.0", "--attention-backend flashinfer",
    "--schedule-policy lpm", "--log-level info", "--served-model-name llama", "--enable-torch-compile",
    "--cuda-graph-max-bs 128", "--moe-runner-backend auto", "--random-seed 42",
]
OTHER_SHELL = [
    'log() {{ echo "[$(date +%H:%M:%S)] $*" >&2; }}',
    'for i in $(seq 1 {n}); do curl -sf "http://localhost:${{PORT:-30000}}/health" >/dev/null && break; done',
    '  curl -sf "http://localhost:${{PORT:-30000}}/health" >/dev/null || true',
    "  sleep 2",
    'if [[ -z "${{HF_TOKEN:-}}" ]]; then log "no token"; fi',
    'docker pull "lmsysorg/sglang:v0.5.{n}" || true',
    "export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
    'mkdir -p "/tmp/run-{n}" && cd "/tmp/run-{n}"',
    "nvidia-smi --query-gpu=name,memory.used --format=csv",
    'case "$MODE" in prod) REPLICAS=4 ;; *) REPLICAS=1 ;; esac',
    '# step {n}: warm up the cache',
    'python3 scripts/warmup.py --requests {n} --concurrency 8',
    "wait",
]


def launch(rng: random.Random, port: int) -> list[str]:
    flags = rng.sample(FLAGS, rng.randint(6, 14))
    lines = ["python3 -m sglang.launch_server \\", '  --model-path "$MODEL" \\', f"  --port {port} \\"]
    lines += [f"  {f} \\" for f in flags[:-1]] + [f"  {flags[-1]} &"]
    return lines


def make_script(lines: int, launches: int, seed: int = 0) -> str:
    """A valid script (every line a complete command, no launch cut off at the end)."""
    rng = random.Random(seed)
    out = ["#!/usr/bin/env bash", "set -euo pipefail", "MODEL=meta-llama/Llama-3.1-8B-Instruct"]
    every = max(1, (lines - 3) // max(launches, 1))
    port = 30000
    while len(out) < lines:
        command = launch(rng, port) if launches and len(out) // every > (port - 30000) and port - 30000 < launches \
            else []
        if command and len(out) + len(command) <= lines:
            out += command
            port += 1
        else:
            out.append(rng.choice(OTHER_SHELL).format(n=len(out)))
    return "\n".join(out) + "\n"


def make_dense_script(lines: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    out = ["#!/usr/bin/env bash", "MODEL=meta-llama/Llama-3.1-8B-Instruct"]
    port = 30000
    while len(out) < lines:
        command = launch(rng, port)
        out += command if len(out) + len(command) <= lines else ["wait"]
        port += 1
    return "\n".join(out) + "\n"


DEPLOYMENT = """---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: sglang-{n}
  labels: {{app: sglang-{n}}}
spec:
  replicas: 1
  selector:
    matchLabels: {{app: sglang-{n}}}
  template:
    metadata:
      labels: {{app: sglang-{n}}}
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
      containers:
        - name: server
          image: lmsysorg/sglang:v0.5.{n}
          command: ["python3", "-m", "sglang.launch_server"]
          args:
            - --model-path
            - meta-llama/Llama-3.1-8B-Instruct
            - --port
            - "{port}"
{flags}          resources:
            limits:
              nvidia.com/gpu: 8
          ports:
            - containerPort: {port}
"""
SERVICE = """---
apiVersion: v1
kind: Service
metadata:
  name: svc-{n}
spec:
  selector: {{app: sglang-{n}}}
  ports:
    - port: 80
      targetPort: {port}
"""
CONFIGMAP = """---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings-{n}
data:
  LOG_LEVEL: info
  REPLICAS: "{n}"
  ENDPOINT: http://svc-{n}.default.svc.cluster.local
"""


def make_yaml(lines: int, seed: int = 2) -> str:
    rng = random.Random(seed)
    parts: list[str] = []
    n = 0
    total = 0
    while total < lines:
        flags = "".join(f"            - {w}\n" if i == 0 else f'            - "{w}"\n'
                        for f in rng.sample(FLAGS, rng.randint(4, 10)) for i, w in enumerate(f.split(" ", 1)))
        for template in (DEPLOYMENT, SERVICE, CONFIGMAP):
            text = template.format(n=n, port=30000 + n, flags=flags)
            parts.append(text)
            total += text.count("\n")
        n += 1
    return "".join(parts)


def make_list_yaml(lines: int, seed: int = 3) -> str:
    """One YAML document of about ``lines`` lines: a ``kind: List`` whose items are the
    Deployments and Services of :func:`make_yaml` (``kubectl get -o yaml`` writes this)."""
    rng = random.Random(seed)
    out = ["apiVersion: v1\nkind: List\nmetadata:\n  resourceVersion: \"\"\nitems:\n"]
    n = 0
    total = 5
    while total < lines:
        flags = "".join(f"            - {w}\n" if i == 0 else f'            - "{w}"\n'
                        for f in rng.sample(FLAGS, rng.randint(4, 10)) for i, w in enumerate(f.split(" ", 1)))
        for template in (DEPLOYMENT, SERVICE):
            body = template.format(n=n, port=30000 + n, flags=flags).removeprefix("---\n").splitlines()
            item = ["- " + body[0]] + ["  " + line if line else line for line in body[1:]]
            out.append("\n".join(item) + "\n")
            total += len(item)
        n += 1
    return "".join(out)


def make_compose(lines: int, seed: int = 4) -> str:
    """One Compose file of about ``lines`` lines: services that launch sglang (a ``command`` list
    or a ``bash -c`` string), each with its GPUs, ports and volumes."""
    rng = random.Random(seed)
    out = ["services:"]
    n = 0
    while len(out) < lines:
        port = 30000 + n
        flags = rng.sample(FLAGS, rng.randint(6, 12))
        service = [f"  sglang-{n}:", f"    image: lmsysorg/sglang:v0.5.{n % 10}", "    ipc: host", "    shm_size: 32g",
                   "    volumes:", "      - ~/.cache/huggingface:/root/.cache/huggingface",
                   "    ports:", f'      - "{port}:{port}"', "    environment:", "      - HF_TOKEN=${HF_TOKEN}"]
        if n % 2:
            service += ["    command:", "      - python3", "      - -m", "      - sglang.launch_server",
                        "      - --model-path", "      - meta-llama/Llama-3.1-8B-Instruct", "      - --port",
                        f'      - "{port}"']
            service += [f"      - {w}" if i == 0 else f'      - "{w}"' for f in flags for i, w in enumerate(f.split(" ", 1))]
        else:
            service += ["    command: >", "      bash -c 'python3 -m sglang.launch_server",
                        "      --model-path meta-llama/Llama-3.1-8B-Instruct", f"      --port {port}"]
            service += [f"      {f}" for f in flags[:-1]] + [f"      {flags[-1]}'"]
        service += ["    deploy:", "      resources:", "        reservations:", "          devices:",
                    "            - driver: nvidia", "              count: all", "              capabilities: [gpu]"]
        out += service
        n += 1
    return "\n".join(out) + "\n"


def make_pod_containers(containers: int, seed: int = 5) -> str:
    """One Deployment whose pod template has ``containers`` sglang containers (a router in front
    of many servers on one node is written this way)."""
    rng = random.Random(seed)
    head = DEPLOYMENT.split("      containers:\n")[0].format(n=0, port=30000, flags="")
    out = [head.rstrip("\n"), "      containers:"]
    for n in range(containers):
        port = 30000 + n
        out += [f"        - name: server-{n}", "          image: lmsysorg/sglang:v0.5.9",
                '          command: ["python3", "-m", "sglang.launch_server"]', "          args:",
                "            - --model-path", "            - meta-llama/Llama-3.1-8B-Instruct", "            - --port",
                f'            - "{port}"']
        out += [f"            - {w}" if i == 0 else f'            - "{w}"'
                for f in rng.sample(FLAGS, rng.randint(6, 12)) for i, w in enumerate(f.split(" ", 1))]
        out += ["          resources:", "            limits:", "              nvidia.com/gpu: 1"]
    return "\n".join(out) + "\n"


def make_block_script(lines: int, seed: int = 6) -> str:
    """One Deployment whose container runs a long ``bash -c`` block scalar: the 2,000-line mixed
    script of :func:`make_script`, indented under ``args: - |``."""
    head = DEPLOYMENT.split("          command:")[0].format(n=0, port=30000, flags="")
    body = make_script(lines, 20, seed).splitlines()
    return head + '          command: ["bash", "-c"]\n          args:\n            - |\n' + \
        "".join(f"              {line}\n" if line else "\n" for line in body)


# ---------------------------------------------------------------------------------------


def server_env(debounce_ms: float | None) -> dict[str, str]:
    env = dict(os.environ)
    package_parent = Path(sglang_lsp.__file__).resolve().parents[1]
    if package_parent == (ROOT / "server").resolve():
        env["PYTHONPATH"] = os.pathsep.join([str(package_parent)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    if debounce_ms is not None:
        env["SGLANG_LSP_DEBOUNCE_MS"] = str(debounce_ms)
    return env


class Bench:
    """A minimal LSP client speaking JSON-RPC over the server's stdio.

    The time of a ``publishDiagnostics`` is taken when its frame has been read off the pipe,
    before anything decodes it: what an editor sees. (pygls' client would first turn the JSON
    into lsprotocol objects with cattrs, in a process that shares the machine's cores with the
    server, and count that as server latency.) The JSON is then decoded with ``json.loads`` only
    to find the URI, version and number of diagnostics."""

    def __init__(self, debounce_ms: float | None):
        self.debounce_ms = debounce_ms
        self.proc: asyncio.subprocess.Process | None = None
        self.reader_task: asyncio.Task | None = None
        self.waiters: dict[tuple[str, int], asyncio.Future] = {}
        self.responses: dict[int, asyncio.Future] = {}
        self.next_id = 0

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "sglang_lsp.cli.main", "serve", "--log-level", "warning", env=server_env(self.debounce_ms),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=1 << 24)
        self.reader_task = asyncio.ensure_future(self._read())
        await self.request("initialize", {"processId": os.getpid(), "rootUri": None, "capabilities": {
            "general": {"positionEncodings": ["utf-16"]}}})
        self.notify("initialized", {})

    async def stop(self) -> None:
        await self.request("shutdown", None)
        self.notify("exit", None)
        await asyncio.wait_for(self.proc.wait(), 30)
        self.reader_task.cancel()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params) -> None:
        self._send({"method": method, "params": params})

    async def request(self, method: str, params):
        self.next_id += 1
        fut = asyncio.get_running_loop().create_future()
        self.responses[self.next_id] = fut
        self._send({"id": self.next_id, "method": method, "params": params})
        return await asyncio.wait_for(fut, 300)

    async def _read(self) -> None:
        stdout = self.proc.stdout
        while True:
            length = None
            while True:
                line = await stdout.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            body = await stdout.readexactly(length)
            arrived = time.perf_counter()
            message = json.loads(body)
            method = message.get("method")
            if method == "textDocument/publishDiagnostics":
                params = message["params"]
                fut = self.waiters.pop((params["uri"], params.get("version")), None)
                if fut is not None and not fut.done():
                    fut.set_result((arrived, len(params["diagnostics"])))
            elif method is not None and "id" in message:  # a request of the server: answer empty
                self._send({"id": message["id"], "result": [None] if method == "workspace/configuration" else None})
            elif "id" in message and message["id"] in self.responses:
                self.responses.pop(message["id"]).set_result(message.get("result"))

    def expect(self, uri: str, version: int) -> asyncio.Future:
        fut = asyncio.get_running_loop().create_future()
        self.waiters[(uri, version)] = fut
        return fut

    async def open(self, uri: str, text: str, language_id: str) -> int:
        fut = self.expect(uri, 1)
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": language_id, "version": 1, "text": text}})
        _, count = await asyncio.wait_for(fut, 300)
        return count

    async def edit(self, uri: str, version: int, line: int, start: int, end: int, new: str) -> float:
        fut = self.expect(uri, version)
        t0 = time.perf_counter()
        self.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": {"line": line, "character": start},
                                          "end": {"line": line, "character": end}}, "text": new}]})
        t1, _ = await asyncio.wait_for(fut, 300)
        return (t1 - t0) * 1000.0


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


def port_positions(text: str) -> list[tuple[int, int, int]]:
    """(line, start, end) of every 5-digit port number (same width: the edit keeps the length)."""
    import re

    out = []
    for i, line in enumerate(text.split("\n")):
        m = re.search(r"(?:--port |\")(3\d{4})\b", line)
        if m:
            out.append((i, m.start(1), m.end(1)))
    return out


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    k = max(0, min(len(values) - 1, int(round(q / 100.0 * (len(values) - 1)))))
    return values[k]


def engine_ms(text: str, path: str, language: str, runs: int = 7) -> float:
    doc = Document(text, path, language)
    check_document(doc)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        check_document(Document(text, path, language))
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def typed(ports: list[tuple[int, int, int]], edits: int, rng: random.Random):
    """``edits`` keystrokes (line, start, end, new text) as someone types: after a port number,
    three digits typed one at a time, then deleted one at a time with backspace (each keystroke
    changes the length by one; after each round the text is the original again)."""
    out: list[tuple[int, int, int, str]] = []
    while len(out) < edits:
        line, _, end = rng.choice(ports)
        out += [(line, end + k, end + k, str(rng.randint(0, 9))) for k in range(3)]
        out += [(line, end + k, end + k + 1, "") for k in (2, 1, 0)]
    return out[:edits]


async def latency(name: str, text: str, language_id: str, edits: int, debounce_ms: float | None,
                  typing: bool = False) -> dict:
    bench = Bench(debounce_ms)
    await bench.start()
    try:
        uri = (ROOT / "bench" / "virtual" / (name + (".yaml" if language_id == "yaml" else ".sh"))).as_uri()
        count = await bench.open(uri, text, language_id)
        ports = port_positions(text)
        rng = random.Random(7)
        times = []
        if typing:
            for version, (line, a, b, new) in enumerate(typed(ports, edits, rng), start=2):
                times.append(await bench.edit(uri, version, line, a, b, new))
        for version in range(2, 0 if typing else edits + 2):
            line, a, b = rng.choice(ports)
            times.append(await bench.edit(uri, version, line, a, b, str(rng.randint(30000, 39999))))
        return {"median": statistics.median(times), "p99": percentile(times, 99), "min": min(times),
                "max": max(times), "diagnostics": count, "n": len(times)}
    finally:
        await bench.stop()


async def memory(open_docs: int, memory_edits: int) -> dict:
    bench = Bench(None)
    await bench.start()
    try:
        await asyncio.sleep(0.2)
        base = rss_mb(bench.pid)
        docs = []
        for i in range(open_docs):
            if i % 3 == 2:
                text, lid, ext = make_yaml(100 + (i * 37) % 300, seed=i), "yaml", ".yaml"
            else:
                text, lid, ext = make_script(100 + (i * 53) % 300, launches=3, seed=i), "shellscript", ".sh"
            uri = (ROOT / "bench" / "virtual" / f"doc{i}{ext}").as_uri()
            await bench.open(uri, text, lid)
            docs.append((uri, text))
        opened = rss_mb(bench.pid)
        uri, text = docs[0]
        ports = port_positions(text)
        rng = random.Random(3)
        samples = []
        for version in range(2, memory_edits + 2):
            line, a, b = rng.choice(ports)
            await bench.edit(uri, version, line, a, b, str(rng.randint(30000, 39999)))
            if version % max(1, memory_edits // 4) == 0:
                samples.append(round(rss_mb(bench.pid), 1))
        return {"baseline": base, "open": opened, "after_edits": rss_mb(bench.pid), "samples": samples}
    finally:
        await bench.stop()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--edits", type=int, default=200, help="timed edits per file (default 200)")
    p.add_argument("--launches", type=int, default=20, help="launches in the 2,000-line mixed script")
    p.add_argument("--debounce-ms", type=float, default=5.0, help="second run with this debounce (default 5)")
    p.add_argument("--open-docs", type=int, default=100)
    p.add_argument("--memory-edits", type=int, default=1000)
    p.add_argument("--only", choices=["script", "script-dense", "yaml", "yaml-list", "compose", "pod", "yaml-block"],
                   action="append")
    p.add_argument("--skip-debounce", action="store_true", help="only the default (no debounce)")
    p.add_argument("--skip-memory", action="store_true")
    p.add_argument("--skip-latency", action="store_true")
    p.add_argument("--typing", action="store_true",
                   help="also time keystrokes that change the length: digits typed after a port, then deleted")
    args = p.parse_args()

    files = {
        "script": (make_script(2000, args.launches), "shellscript", "shell"),
        "script-dense": (make_dense_script(2000), "shellscript", "shell"),
        "yaml": (make_yaml(3000), "yaml", "yaml"),
        "yaml-list": (make_list_yaml(2000), "yaml", "yaml"),  # one document: a kind: List
        "compose": (make_compose(2000), "yaml", "yaml"),  # one document: ~70 services
        "pod": (make_pod_containers(40), "yaml", "yaml"),  # one Deployment, 40 containers
        "yaml-block": (make_block_script(2000), "yaml", "yaml"),  # one shell block scalar of 2,000 lines
    }
    print(f"sglang_lsp from {Path(sglang_lsp.__file__).parent}; python {sys.version.split()[0]}; "
          f"{os.cpu_count()} CPUs")
    print("latency didChange → publishDiagnostics (ms), goal: median <= 10, p99 <= 50")
    print(f"{'file':<14}{'lines':>7}{'diags':>7}{'engine':>9}  {'debounce':>9}{'median':>9}{'p99':>9}{'max':>9}")
    for name, (text, lid, lang) in files.items():
        if args.skip_latency or (args.only and name not in args.only):
            continue
        eng = engine_ms(text, f"/bench/{name}.{'yaml' if lang == 'yaml' else 'sh'}", lang)
        for debounce in (None,) if args.skip_debounce else (None, args.debounce_ms):
            r = asyncio.run(latency(name, text, lid, args.edits, debounce))
            shown = "default" if debounce is None else f"{debounce:g} ms"
            print(f"{name:<14}{text.count(chr(10)):>7}{r['diagnostics']:>7}{eng:>9.1f}  {shown:>9}"
                  f"{r['median']:>9.1f}{r['p99']:>9.1f}{r['max']:>9.1f}", flush=True)
        if args.typing:
            r = asyncio.run(latency(name, text, lid, args.edits, None, typing=True))
            print(f"{name:<14}{text.count(chr(10)):>7}{r['diagnostics']:>7}{eng:>9.1f}  {'typing':>9}"
                  f"{r['median']:>9.1f}{r['p99']:>9.1f}{r['max']:>9.1f}", flush=True)
    if not args.skip_memory:
        m = asyncio.run(memory(args.open_docs, args.memory_edits))
        print(f"RSS (MB), goal <= 150: after initialize {m['baseline']:.1f}; with {args.open_docs} open documents "
              f"{m['open']:.1f}; after {args.memory_edits} more edits {m['after_edits']:.1f} "
              f"(samples during the edits: {m['samples']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
