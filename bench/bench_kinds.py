#!/usr/bin/env python3
"""Benchmark of ``sglang-lsp check`` on the new kinds of files (issue 19 §3, issue 23): Markdown
docs, Dockerfiles, Python files and Jupyter notebooks, each against its own floor.

This is a benchmark, not a test: it prints numbers and never fails on them.

For each kind it times, in one interpreter (median of ``--runs`` passes, the two measurements of
a kind alternating pass by pass):

* **bare**: read every file and parse it with the kind's own tree-sitter grammar
  (tree-sitter-markdown's block grammar, tree-sitter-containerfile, tree-sitter-python; a
  notebook: ``json.loads`` and each cell's source parsed in its language: tree-sitter-python,
  tree-sitter-markdown or, for a ``%%bash`` / ``%%sh`` cell, tree-sitter-bash);
* **bare+embedded**: the same, plus the parses any checker must add because launches sit in
  another language inside the file: each fenced code block (of a doc or of a notebook's
  markdown cell), notebook ``!`` line and Dockerfile shell-form command that mentions sglang
  parsed with its language's grammar (bash, YAML, Python, Dockerfile);
* **full**: read every file and run :func:`sglang_lsp.engine.check.check_document` on it.

The ratios full / bare and full / bare+embedded are the kind's floor. Two sets of files:

* **generated** (``--files`` per kind, seeded): docs with prose, lists, tables, shell / console /
  YAML / Python / untagged blocks (about half of them launching sglang, with 5-40 flags, a fifth
  of the launches with a typical mistake); Dockerfiles with ``ARG``/``ENV``, ``RUN`` steps,
  multi-stage builds, ``CMD``/``ENTRYPOINT`` in exec and shell form; Python scripts with helper
  code, ``subprocess`` argv lists, ``sgl.Engine(...)`` keywords, ``popen_launch_server(...,
  other_args=[...])``; notebooks with markdown, code cells, ``!python -m sglang.launch_server``
  lines, ``%%bash`` cells and text outputs.
* **corpus**: the real files of ``tests/corpus/files/<kind>/`` (the reach corpus of issue 19),
  as they are (small sets: a pass over them is short, so the medians are noisier).

Usage (from the repository root)::

    python bench/bench_kinds.py                     # ~1 minute on 2 cores
    python bench/bench_kinds.py --files 200 --runs 9
    python bench/bench_kinds.py --kinds markdown,python --profile
    python bench/bench_kinds.py --skip-corpus --keep
    python bench/bench_kinds.py --clock cpu         # process CPU time instead of wall clock

It uses the installed ``sglang_lsp`` when there is one, otherwise ``server/`` of this checkout.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import io
import json
import pstats
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if importlib.util.find_spec("sglang_lsp") is None:
    sys.path.insert(0, str(ROOT / "server"))

import tree_sitter as ts  # noqa: E402
import tree_sitter_bash  # noqa: E402
import tree_sitter_containerfile  # noqa: E402
import tree_sitter_markdown  # noqa: E402
import tree_sitter_python  # noqa: E402
import tree_sitter_yaml  # noqa: E402

import sglang_lsp  # noqa: E402
from sglang_lsp.base.document import Document, decode  # noqa: E402
from sglang_lsp.engine.check import Options, check_document, detect_language  # noqa: E402

KINDS = ("markdown", "dockerfile", "python", "notebook")
SUFFIX = {"markdown": ".md", "dockerfile": ".Dockerfile", "python": ".py", "notebook": ".ipynb"}
CORPUS = ROOT / "tests" / "corpus" / "files"

# --- generators ------------------------------------------------------------------------------------

MODELS = ["meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-8B", "Qwen/Qwen2.5-72B-Instruct",
          "deepseek-ai/DeepSeek-V3-0324", "mistralai/Mistral-7B-Instruct-v0.3", "google/gemma-3-27b-it",
          "/models/Llama-3.3-70B-Instruct-FP8"]
# flags people write, with plausible values (all exist in sglang 0.5.23); None: a switch
FLAGS = {
    "--tp-size": ["1", "2", "4", "8"], "--dp-size": ["1", "2", "4"], "--host": ["0.0.0.0", "127.0.0.1"],
    "--port": ["30000", "30001", "8000"], "--mem-fraction-static": ["0.7", "0.8", "0.85", "0.9"],
    "--context-length": ["4096", "8192", "32768", "131072"], "--chunked-prefill-size": ["2048", "4096", "8192"],
    "--max-running-requests": ["64", "128", "256"], "--served-model-name": ["llama", "qwen", "default"],
    "--log-level": ["info", "debug", "warning"], "--quantization": ["fp8", "awq", "gptq"],
    "--kv-cache-dtype": ["auto", "fp8_e4m3"], "--schedule-policy": ["lpm", "fcfs"],
    "--dtype": ["auto", "bfloat16", "float16"], "--watchdog-timeout": ["300", "600"],
    "--random-seed": ["0", "42", "1234"], "--reasoning-parser": ["deepseek-r1", "qwen3"],
    "--tool-call-parser": ["llama3", "mistral", "qwen25"], "--attention-backend": ["flashinfer", "triton", "fa3"],
    "--trust-remote-code": None, "--enable-metrics": None, "--disable-radix-cache": None,
    "--enable-torch-compile": None, "--log-requests": None, "--skip-server-warmup": None,
}
MISTAKES = [("--max-model-len", "8192"), ("--gpu-memory-utilization", "0.9"), ("--quantization", "FP8"),
            ("--disable-cuda-graphs", None), ("--enable-metrics=true", None), ("--mem-fraction", "0.8")]
PROSE = ["SGLang serves the model behind an OpenAI-compatible API; the flags below size it for one node.",
         "Tensor parallelism splits each layer across the GPUs of the node, so `--tp-size` must divide the "
         "number of attention heads.", "Check the logs for the line that says the server is ready before "
         "sending requests.", "If the KV cache does not fit, lower `--mem-fraction-static` or the context length.",
         "The same command works inside the container image; mount the model directory read-only.",
         "Throughput depends on the batch size the scheduler can keep running, see the metrics endpoint."]


def _flags(rng: random.Random, lo: int = 5, hi: int = 40) -> list[tuple[str, str | None]]:
    names = rng.sample(sorted(FLAGS), min(len(FLAGS), rng.randint(lo, hi)))
    out = [("--model-path", rng.choice(MODELS))]
    out += [(n, rng.choice(FLAGS[n]) if FLAGS[n] else None) for n in names]
    if rng.random() < 0.2:
        out.insert(rng.randrange(1, len(out) + 1), rng.choice(MISTAKES))
    return out


def _argv(flags) -> list[str]:
    words = []
    for f, v in flags:
        words.append(f)
        if v is not None:
            words.append(v)
    return words


def _shell_launch(rng: random.Random, flags, prompt: str = "") -> list[str]:
    head = rng.choice(["python3 -m sglang.launch_server", "python -m sglang.launch_server", "sglang serve"])
    if rng.random() < 0.5:
        return [prompt + head + " " + " ".join(_argv(flags))]
    lines = [prompt + head + " \\"]
    lines += [f"  {f}" + (f" {v}" if v is not None else "") + " \\" for f, v in flags]
    lines[-1] = lines[-1][:-2]
    return lines


def gen_markdown(rng: random.Random) -> str:
    out = [f"# Serving {rng.choice(MODELS).split('/')[-1]} with SGLang", ""]
    for section in range(rng.randint(4, 10)):
        out += [f"## Step {section + 1}", "", rng.choice(PROSE), rng.choice(PROSE), ""]
        shape = rng.random()
        if shape < 0.15:
            out += ["| flag | meaning |", "|---|---|"] + [f"| `{f}` | {rng.choice(PROSE)[:40]} |"
                                                        for f in rng.sample(sorted(FLAGS), 4)] + [""]
        elif shape < 0.3:
            out += [f"- {rng.choice(PROSE)}" for _ in range(rng.randint(2, 5))] + [""]
        block = rng.random()
        if block < 0.35:
            out += ["```bash"] + _shell_launch(rng, _flags(rng)) + ["```", ""]
        elif block < 0.45:
            out += ["```console"] + _shell_launch(rng, _flags(rng, 3, 12), "$ ") + [
                "[2026-01-01 00:00:00] server_args=ServerArgs(...)", "The server is fired up and ready to roll!",
                "```", ""]
        elif block < 0.55:
            args = "\n".join(f"            - \"{w}\"" for w in _argv(_flags(rng, 3, 15)))
            out += ["```yaml", "apiVersion: apps/v1", "kind: Deployment", "metadata:", "  name: sglang",
                    "spec:", "  replicas: 1", "  template:", "    spec:", "      containers:",
                    "        - name: server", "          image: lmsysorg/sglang:v0.5.9-cu129",
                    "          command: [python3, -m, sglang.launch_server]", "          args:", args, "```", ""]
        elif block < 0.65:
            kw = ", ".join(f"{f[2:].replace('-', '_')}={v!r}" for f, v in _flags(rng, 2, 8) if v is not None
                           and not f.endswith("=true"))
            out += ["```python", "import sglang as sgl", "", f"llm = sgl.Engine({kw})",
                    "print(llm.generate('The capital of France is', {'max_new_tokens': 16}))", "```", ""]
        elif block < 0.8:
            out += ["```bash", "pip install --upgrade pip", 'pip install "sglang[all]>=0.5.9"',
                    "curl -s http://localhost:30000/v1/models | jq .", "```", ""]
        else:
            out += ["```", "{\"model\": \"default\", \"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}",
                    "```", ""]
    return "\n".join(out) + "\n"


def gen_dockerfile(rng: random.Random) -> str:
    tag = rng.choice(["v0.5.9-cu129", "v0.4.6.post5-cu124", "latest", "v0.5.23-cu129"])
    out = ["# syntax=docker/dockerfile:1", "ARG BASE=lmsysorg/sglang", f"FROM ${{BASE}}:{tag} AS base",
           "ENV DEBIAN_FRONTEND=noninteractive PYTHONUNBUFFERED=1", "RUN apt-get update && \\",
           "    apt-get install -y --no-install-recommends curl jq && \\", "    rm -rf /var/lib/apt/lists/*",
           "WORKDIR /app", "COPY requirements.txt .", "RUN pip install --no-cache-dir -r requirements.txt", ""]
    if rng.random() < 0.4:
        out += ["FROM base AS runtime", f"ARG MODEL={rng.choice(MODELS)}", "ENV MODEL=${MODEL}",
                f"ENV TP={rng.choice(['1', '2', '8'])}", "COPY . /app", ""]
    out += [f"LABEL org.opencontainers.image.description=\"{rng.choice(PROSE)}\"", "EXPOSE 30000",
            "HEALTHCHECK CMD curl -f http://localhost:30000/health || exit 1"]
    flags = _flags(rng)
    form = rng.random()
    if form < 0.4:
        words = ["python3", "-m", "sglang.launch_server"] + _argv(flags)
        out.append("CMD " + json.dumps(words))
    elif form < 0.7:
        out.append('ENTRYPOINT ["python3", "-m", "sglang.launch_server"]')
        out.append("CMD " + json.dumps(_argv(flags)))
    else:
        lines = _shell_launch(rng, flags)
        out += ["CMD " + lines[0]] + lines[1:]
    return "\n".join(out) + "\n"


def gen_python(rng: random.Random) -> str:
    out = ['"""Launch an sglang server, wait until it answers, run a small benchmark."""', "",
           "import argparse", "import os", "import subprocess", "import sys", "import time", "",
           "import requests", "", "", "def wait_for_server(url: str, timeout: float = 600.0) -> None:",
           "    start = time.time()", "    while time.time() - start < timeout:", "        try:",
           "            if requests.get(f\"{url}/health\", timeout=5).status_code == 200:", "                return",
           "        except requests.RequestException:", "            pass", "        time.sleep(2)",
           "    raise TimeoutError(url)", ""]
    for i in range(rng.randint(1, 4)):
        out += ["", f"def helper_{i}(rows: list[dict]) -> dict:", "    totals = {}", "    for row in rows:",
                "        for key, value in row.items():", "            totals[key] = totals.get(key, 0) + value",
                "    return {k: v / max(1, len(rows)) for k, v in sorted(totals.items())}", ""]
    style = rng.random()
    flags = _flags(rng)
    if style < 0.45:
        argv = ", ".join(json.dumps(w) for w in ["-m", "sglang.launch_server"] + _argv(flags))
        out += ["", "def launch(port: int) -> subprocess.Popen:", f"    cmd = [sys.executable, {argv}]",
                "    cmd += [\"--port\", str(port)]", "    return subprocess.Popen(cmd, stdout=sys.stdout, stderr=sys.stderr)", ""]
    elif style < 0.75:
        kw = ",\n        ".join(f"{f[2:].replace('-', '_')}={v!r}" for f, v in flags if v is not None
                                and "=" not in f)
        out += ["", "def launch(port: int):", "    import sglang as sgl", "", "    return sgl.Engine(",
                f"        {kw},", "    )", ""]
    else:
        other = ", ".join(json.dumps(w) for w in _argv(flags[1:]))
        out += ["", "from sglang.test.test_utils import popen_launch_server", "", "", "def launch(port: int):",
                f"    return popen_launch_server({json.dumps(flags[0][1])}, f\"http://127.0.0.1:{{port}}\",",
                f"                               timeout=600, other_args=[{other}])", ""]
    out += ["", "def main() -> int:", "    parser = argparse.ArgumentParser()",
            "    parser.add_argument(\"--port\", type=int, default=30000)", "    args = parser.parse_args()",
            "    proc = launch(args.port)", "    try:", "        wait_for_server(f\"http://127.0.0.1:{args.port}\")",
            "        print(helper_0([{\"latency\": 1.0}]))", "    finally:", "        proc.terminate() if hasattr(proc, 'terminate') else proc.shutdown()",
            "    return 0", "", "", "if __name__ == \"__main__\":", "    sys.exit(main())"]
    return "\n".join(out) + "\n"


def gen_notebook(rng: random.Random) -> str:
    cells = [("markdown", f"# {rng.choice(MODELS)} with SGLang\n\n{rng.choice(PROSE)}\n", None)]
    cells.append(("code", "!pip install -q \"sglang[all]\"\nimport json, time, requests\n", "Successfully installed\n"))
    for _ in range(rng.randint(2, 6)):
        shape = rng.random()
        flags = _flags(rng, 3, 15)
        if shape < 0.35:
            head = rng.choice(["python3 -m sglang.launch_server", "python -m sglang.launch_server"])
            src = f"!{head} {' '.join(_argv(flags))} > server.log 2>&1 &\n"
            cells.append(("code", src, "[2026-01-01 00:00:00] Load weight end.\n" * rng.randint(1, 30)))
        elif shape < 0.55:
            cells.append(("code", "%%bash\n" + "\n".join(_shell_launch(rng, flags)) + " &\nsleep 60\n", None))
        elif shape < 0.75:
            kw = ", ".join(f"{f[2:].replace('-', '_')}={v!r}" for f, v in flags if v is not None and "=" not in f)
            cells.append(("code", f"import sglang as sgl\nllm = sgl.Engine({kw})\n", None))
        else:
            cells.append(("markdown", f"## Results\n\n{rng.choice(PROSE)}\n\n```bash\ncurl localhost:30000/health\n```\n",
                          None))
        cells.append(("code", "resp = requests.post('http://localhost:30000/generate', json={'text': 'Hi'})\n"
                              "print(json.dumps(resp.json(), indent=2))\n", json.dumps({"text": "Hello"}, indent=2)))
    nb_cells = []
    for n, (kind, src, output) in enumerate(cells):
        cell = {"cell_type": kind, "id": f"c{n:03d}", "metadata": {}, "source": src.splitlines(keepends=True)}
        if kind == "code":
            cell["execution_count"] = n
            cell["outputs"] = ([{"name": "stdout", "output_type": "stream", "text": output.splitlines(keepends=True)}]
                               if output else [])
        nb_cells.append(cell)
    return json.dumps({"cells": nb_cells, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                       "language": "python"}},
                       "nbformat": 4, "nbformat_minor": 5}, indent=1, ensure_ascii=False) + "\n"


GENERATORS = {"markdown": gen_markdown, "dockerfile": gen_dockerfile, "python": gen_python, "notebook": gen_notebook}


def generate(directory: Path, kind: str, count: int, seed: int) -> list[Path]:
    rng = random.Random(f"{seed}-{kind}")
    paths = []
    for i in range(count):
        name = f"Dockerfile.{i:04d}" if kind == "dockerfile" else f"{kind}_{i:04d}{SUFFIX[kind]}"
        p = directory / name
        p.write_text(GENERATORS[kind](rng), encoding="utf-8")
        paths.append(p)
    return paths


def corpus_files(kind: str) -> list[Path]:
    root = CORPUS / kind
    if not root.is_dir():
        return []
    return sorted(p for p in root.rglob("*") if p.is_file() and detect_language(str(p), "") == kind)


# --- the measurements ----------------------------------------------------------------------------


class Parsers:
    def __init__(self):
        def make(module) -> ts.Parser:
            return ts.Parser(ts.Language(module.language()))
        self.bash = make(tree_sitter_bash)
        self.yaml = make(tree_sitter_yaml)
        self.dockerfile = make(tree_sitter_containerfile)
        self.markdown = make(tree_sitter_markdown)
        self.python = make(tree_sitter_python)
        self.by_tag = {"bash": self.bash, "sh": self.bash, "shell": self.bash, "console": self.bash, "zsh": self.bash,
                       "": self.bash, "yaml": self.yaml, "yml": self.yaml, "python": self.python, "py": self.python,
                       "dockerfile": self.dockerfile}


_FENCE = re.compile(rb"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+-]*)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.M | re.S)
_SHELL_FORM = re.compile(rb"^(?:RUN|CMD|ENTRYPOINT)[ \t]+(?!\[)((?:[^\n]*\\\n)*[^\n]*)", re.M | re.I)
_MENTION = b"sglang"


def _embedded_blocks(data: bytes, parsers: Parsers) -> int:
    """Parse each fenced block that mentions sglang with its language's grammar."""
    n = 0
    for m in _FENCE.finditer(data):
        body = m.group(3)
        parser = parsers.by_tag.get(m.group(2).decode("ascii", "replace").lower())
        if parser is not None and _MENTION in body:
            n += parser.parse(body).root_node.end_byte
    return n


def _notebook_cells(data: bytes) -> list[tuple[str, str]]:
    nb = json.loads(data)
    return [(c.get("cell_type", ""), "".join(c["source"]) if isinstance(c.get("source"), list) else c.get("source", ""))
            for c in nb.get("cells", [])]


def bare_pass(paths: list[Path], kind: str, parsers: Parsers, embedded: bool) -> int:
    n = 0
    for p in paths:
        data = p.read_bytes()
        if kind == "notebook":
            for cell_type, source in _notebook_cells(data):
                src = source.encode("utf-8", "surrogatepass")
                if cell_type == "markdown":
                    n += parsers.markdown.parse(src).root_node.end_byte
                    if embedded:
                        n += _embedded_blocks(src, parsers)
                elif cell_type == "code":
                    if src.lstrip().startswith((b"%%bash", b"%%sh")):  # a cell in its own language
                        n += parsers.bash.parse(src).root_node.end_byte
                        continue
                    n += parsers.python.parse(src).root_node.end_byte
                    if embedded:
                        for line in src.splitlines():
                            if line.lstrip().startswith(b"!") and _MENTION in line:
                                n += parsers.bash.parse(line.lstrip()[1:]).root_node.end_byte
            continue
        parser = getattr(parsers, kind)
        n += parser.parse(data).root_node.end_byte
        if embedded and kind == "markdown":
            n += _embedded_blocks(data, parsers)
        elif embedded and kind == "dockerfile":
            for m in _SHELL_FORM.finditer(data):
                if _MENTION in m.group(1):
                    n += parsers.bash.parse(m.group(1)).root_node.end_byte
    return n


def full_pass(paths: list[Path], kind: str, options: Options) -> int:
    findings = 0
    for p in paths:
        text = decode(p.read_bytes())
        result = check_document(Document(text, str(p), kind), options)
        findings += len(result.findings)
    return findings


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def alternate(runs: int, fns: dict, clock=time.perf_counter) -> dict[str, list[float]]:
    """Each function once (warm-up), then ``runs`` rounds of all of them in turn."""
    for fn in fns.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(runs):
        for name, fn in fns.items():
            t0 = clock()
            fn()
            times[name].append(clock() - t0)
    return times


def measure(label: str, paths: list[Path], kind: str, parsers: Parsers, options: Options, runs: int,
            clock=time.perf_counter) -> dict:
    size = sum(p.stat().st_size for p in paths)
    findings = full_pass(paths, kind, options)
    times = alternate(runs, clock=clock, fns={
        "bare": lambda: bare_pass(paths, kind, parsers, embedded=False),
        "embedded": lambda: bare_pass(paths, kind, parsers, embedded=True),
        "full": lambda: full_pass(paths, kind, options),
    })
    med = {name: statistics.median(t) for name, t in times.items()}
    return {"label": label, "kind": kind, "files": len(paths), "bytes": size, "findings": findings, **med,
            "ratio": med["full"] / med["bare"], "ratio_embedded": med["full"] / med["embedded"]}


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:9.1f} ms"


def print_table(rows: list[dict]) -> None:
    print(f"    {'set':<10}{'kind':<12}{'files':>6}{'KiB':>7}{'findings':>9}{'bare':>13}{'bare+emb.':>13}"
          f"{'full':>13}{'full/bare':>11}{'full/b+e':>10}")
    for r in rows:
        print(f"    {r['label']:<10}{r['kind']:<12}{r['files']:>6}{r['bytes'] / 1024:>7.0f}{r['findings']:>9}"
              f"{_ms(r['bare']):>13}{_ms(r['embedded']):>13}{_ms(r['full']):>13}{r['ratio']:>9.2f} x"
              f"{r['ratio_embedded']:>8.2f} x")


def profile(paths: list[Path], kind: str, options: Options, top: int) -> str:
    prof = cProfile.Profile()
    prof.enable()
    full_pass(paths, kind, options)
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(top)
    return buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=100, help="generated files per kind (default 100)")
    ap.add_argument("--runs", type=int, default=7, help="timed passes per measurement (default 7)")
    ap.add_argument("--seed", type=int, default=20261204)
    ap.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                    help="wall (default) or cpu: this process's CPU time, steadier on a shared machine")
    ap.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated subset of {','.join(KINDS)}")
    ap.add_argument("--skip-corpus", action="store_true", help="only the generated files")
    ap.add_argument("--profile", action="store_true", help="cProfile one full pass per kind (generated files)")
    ap.add_argument("--top", type=int, default=20, help="rows of profile output (default 20)")
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    args = ap.parse_args(argv)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        ap.error(f"unknown kind(s) {', '.join(unknown)}; choose from {', '.join(KINDS)}")

    tmp = Path(tempfile.mkdtemp(prefix="sglang-lsp-bench-kinds-"))
    try:
        parsers, options = Parsers(), Options()
        print(f"sglang_lsp {sglang_lsp.__version__} from {Path(sglang_lsp.__file__).parent}")
        print(f"python {sys.version.split()[0]}; median of {args.runs} alternating passes per measurement "
              f"({args.clock} clock)\n")
        rows, generated = [], {}
        for kind in kinds:
            (tmp / kind).mkdir()
            generated[kind] = generate(tmp / kind, kind, args.files, args.seed)
            rows.append(measure("generated", generated[kind], kind, parsers, options, args.runs, CLOCKS[args.clock]))
        if not args.skip_corpus:
            for kind in kinds:
                paths = corpus_files(kind)
                if paths:
                    rows.append(measure("corpus", paths, kind, parsers, options, args.runs, CLOCKS[args.clock]))
        print_table(rows)
        if args.profile:
            for kind in kinds:
                print(f"\ncProfile of one full pass over the generated {kind} files (own time):")
                print(profile(generated[kind], kind, options, args.top))
        if args.keep:
            print(f"\ngenerated files kept in {tmp}")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
