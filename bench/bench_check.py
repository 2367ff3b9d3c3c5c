#!/usr/bin/env python3
"""Benchmark of ``sglang-lsp check`` against the cost of just parsing the shell.

This is a benchmark, not a test: it prints numbers and never fails on them.

Part (a), warm, in one interpreter
    Generates ``--files`` (default 500) realistic launch scripts into a temporary directory:
    continuation lines, bash arrays (``ARGS=(…)``/``ARGS+=(…)``), env prefixes, ``srun`` /
    ``docker run`` / ``bash -c`` wrappers, variables, 10–60 flags each, and about one script
    in five with a typical mistake (vLLM flag, typo, bad choice, ``--switch=true``, repeated
    flag, comment line or trailing space in a ``\\``-continued command). Then it times, over
    ``--runs`` passes (median reported):

    * bare: read every file and parse it with tree-sitter-bash;
    * full: read every file and run :func:`sglang_lsp.engine.check.check_document` on it.

    Goal: full / bare <= 1.5. It also times one pass over as many files the interpreter has
    never seen (another seed): a cache keyed by file or launch contents would show up as a
    higher ratio there than in the repeated passes.

Part (b), cold, one file per process
    Median of ``--cold-runs`` (default 15) wall-clock runs of
    ``python -m sglang_lsp.cli.main check one.sh`` against ``python -c "import tree_sitter_bash"``
    (the floor: an interpreter that only loads the grammar). Goal: ratio <= 1.5 (issue 23; it was 2
    for issues 2 and 3). Both run with
    bytecode caching on (a private ``PYTHONPYCACHEPREFIX``), like an installed package.

Usage (from the repository root)::

    python bench/bench_check.py                 # both parts
    python bench/bench_check.py --files 1000 --runs 9
    python bench/bench_check.py --skip-cold     # part (a) only
    python bench/bench_check.py --profile       # also cProfile one full pass, top hotspots
    python bench/bench_check.py --keep          # keep (and print) the generated directory

It uses the installed ``sglang_lsp`` when there is one, otherwise ``server/`` of this checkout;
the cold runs use the same package as the warm ones.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import io
import os
import pstats
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if importlib.util.find_spec("sglang_lsp") is None:
    sys.path.insert(0, str(ROOT / "server"))

import tree_sitter as ts  # noqa: E402
import tree_sitter_bash  # noqa: E402

import sglang_lsp  # noqa: E402
from sglang_lsp.catalog.catalog import load_catalog  # noqa: E402
from sglang_lsp.base.document import Document, decode  # noqa: E402
from sglang_lsp.engine.check import Options, check_document, detect_language  # noqa: E402

WARM_GOAL = 1.5
COLD_GOAL = 1.5  # issue 23 (issues 2 and 3 had set 2.0)

# --- script generator ----------------------------------------------------------------------

MODELS = [
    "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.3-70B-Instruct", "Qwen/Qwen3-8B",
    "Qwen/Qwen2.5-72B-Instruct", "deepseek-ai/DeepSeek-V3-0324", "mistralai/Mistral-7B-Instruct-v0.3",
    "/shared/models/Meta-Llama-3.1-405B-Instruct-FP8", "google/gemma-3-27b-it",
]
# common flags with realistic values (all exist in sglang 0.5.23)
COMMON = {
    "--tp-size": lambda r: r.choice(["1", "2", "4", "8", "16", '"$TP"']),
    "--dp-size": lambda r: r.choice(["1", "2", "4", "8"]),
    "--host": lambda r: r.choice(["0.0.0.0", "127.0.0.1", '"$HOST"']),
    "--port": lambda r: r.choice(["30000", "30001", '"$PORT"', '"${PORT:-30000}"']),
    "--mem-fraction-static": lambda r: r.choice(["0.7", "0.8", "0.85", "0.88", "0.9"]),
    "--context-length": lambda r: r.choice(["4096", "8192", "32768", "65536", "131072"]),
    "--chunked-prefill-size": lambda r: r.choice(["2048", "4096", "8192", "16384"]),
    "--max-running-requests": lambda r: r.choice(["64", "128", "256", "512"]),
    "--served-model-name": lambda r: r.choice(["llama", "qwen", "deepseek-v3", "'my model'"]),
    "--log-level": lambda r: r.choice(["info", "debug", "warning"]),
    "--quantization": lambda r: r.choice(["fp8", "awq", "gptq", "modelopt_fp4"]),
    "--kv-cache-dtype": lambda r: r.choice(["auto", "fp8_e4m3", "fp8_e5m2"]),
    "--schedule-policy": lambda r: r.choice(["lpm", "fcfs", "random"]),
    "--dtype": lambda r: r.choice(["auto", "bfloat16", "float16"]),
    "--watchdog-timeout": lambda r: r.choice(["300", "600"]),
    "--random-seed": lambda r: str(r.randrange(1000)),
    "--api-key": lambda r: '"$API_KEY"',
    "--dist-init-addr": lambda r: r.choice(['"${HEAD_IP}:5000"', "10.0.0.1:5000"]),
    "--nnodes": lambda r: r.choice(["1", "2", "4"]),
    "--node-rank": lambda r: r.choice(["0", '"$SLURM_NODEID"', "${NODE_RANK}"]),
    "--cuda-graph-max-bs-decode": lambda r: r.choice(["32", "64", "160"]),
    "--reasoning-parser": lambda r: r.choice(["deepseek-r1", "qwen3"]),
    "--tool-call-parser": lambda r: r.choice(["deepseekv3", "llama3", "mistral"]),
}
VLLM_FLAGS = ["--max-model-len 8192", "--gpu-memory-utilization 0.9", "--tensor-parallel 2",
              "--max-num-seqs 256", "--enforce-eager"]


def _flag_pool(rng: random.Random) -> list[tuple[str, callable]]:
    """Common flags plus switches and choice flags from the catalog, for variety."""
    cat = load_catalog()
    pool = list(COMMON.items())
    for opt in cat.options:
        name = opt.option_strings[0] if opt.option_strings else ""
        if not name.startswith("--") or opt.deprecated or opt.rejects or opt.required or name in COMMON:
            continue
        if name in ("--help", "--version", "--config") or opt.action in ("help", "version"):
            continue
        if opt.action == "store_true" and opt.nargs in (None, 0):
            pool.append((name, None))
        elif opt.choices and opt.nargs is None and opt.action == "store":
            choices = [str(c) for c in opt.choices]
            pool.append((name, lambda r, c=choices: r.choice(c)))
    return pool


def _mistake(rng: random.Random, flags: list[tuple[str, str | None]], pool) -> tuple[list, str]:
    kind = rng.choice(["vllm", "typo", "choice", "switch_value", "repeat", "comment", "space"])
    flags = list(flags)
    if kind == "vllm":
        f, _, v = rng.choice(VLLM_FLAGS).partition(" ")
        flags.insert(rng.randrange(1, len(flags) + 1), (f, v or None))
    elif kind == "typo":
        i = rng.randrange(1, len(flags))
        f, v = flags[i]
        cut = rng.randrange(3, len(f))
        flags[i] = (f[:cut] + f[cut + 1:], v)
    elif kind == "choice":
        flags.append(("--quantization", "FP8"))
    elif kind == "switch_value":
        flags.append(("--enable-metrics=true", None))
    elif kind == "repeat":
        f, v = rng.choice([x for x in flags if x[1] is not None] or flags)
        flags.append((f, v))
    return flags, kind


def _render_flags(flags: list[tuple[str, str | None]], indent: str, continuation: bool, mistake: str) -> list[str]:
    lines = []
    for f, v in flags:
        lines.append(f"{indent}{f}" + (f" {v}" if v is not None else ""))
    if not continuation:
        return [" ".join(x.strip() for x in lines)]
    out = [x + " \\" for x in lines[:-1]] + [lines[-1]]
    if mistake == "comment" and len(out) > 3:
        i = len(out) // 2
        out.insert(i, f"{indent}# {flags[i][0]} \\")
    if mistake == "space" and len(out) > 3:
        i = len(out) // 2
        out[i] = out[i] + " "
    return out


def generate_script(rng: random.Random, pool) -> str:
    n = rng.randint(10, 60)
    model = rng.choice(MODELS)
    flags: list[tuple[str, str | None]] = [("--model-path", rng.choice(['"$MODEL"', model]))]
    seen = {"--model-path"}
    common = list(COMMON.items())
    while len(flags) < n:
        # mostly the flags people actually write, topped up with other catalog switches/choices
        f, gen = rng.choice(common) if rng.random() < 0.7 else rng.choice(pool)
        if f in seen:
            continue
        seen.add(f)
        flags.append((f, gen(rng) if gen else None))
    mistake = ""
    if rng.random() < 0.2:
        flags, mistake = _mistake(rng, flags, pool)
    style = rng.choice(["continuation", "array", "env", "bash_c", "srun", "docker", "serve"])
    head = ["#!/bin/bash", f"# generated launch script ({style}{', ' + mistake if mistake else ''})",
            "set -euo pipefail", "", f"MODEL={model}", "TP=8", "HOST=0.0.0.0", "PORT=30000",
            "HEAD_IP=$(hostname --ip-address)", ""]
    py = rng.choice(["python3 -m sglang.launch_server", "python -m sglang.launch_server", "sglang serve"])
    if style == "array":
        k = rng.randint(1, len(flags) - 1)
        first, rest = flags[:k], flags[k:]
        body = ["ARGS=("] + [f"  {f}" + (f" {v}" if v is not None else "") for f, v in first] + [")"]
        while rest:
            k = rng.randint(1, 12)
            chunk, rest = rest[:k], rest[k:]
            body += ["ARGS+=(" + " ".join(f + (f" {v}" if v is not None else "") for f, v in chunk) + ")"]
        body += ["", f'exec {py} "${{ARGS[@]}}" "$@"']
    elif style == "env":
        body = [f"CUDA_VISIBLE_DEVICES=0,1,2,3 NCCL_DEBUG=WARN {py} \\"] + _render_flags(flags, "  ", True, mistake)
    elif style == "bash_c":
        inner = [x.replace('"', '\\"') for x in _render_flags(flags, "    ", True, "")]
        body = ['nohup bash -c "source /opt/venv/bin/activate && \\', f"  exec {py} \\"] + inner
        body[-1] += '" > server.log 2>&1 &'
    elif style == "srun":
        body = ["srun --nodes=2 --ntasks-per-node=1 \\", f"  {py} \\"] + _render_flags(flags, "    ", True, mistake)
    elif style == "docker":
        body = ["docker run --rm --gpus all --ipc=host -p 30000:30000 \\", "  lmsysorg/sglang:latest \\",
                f"  {py} \\"] + _render_flags(flags, "    ", True, mistake)
    elif style == "serve":
        body = ["sglang serve " + " ".join(_render_flags(flags, "", False, ""))]
    else:
        body = [f"{py} \\"] + _render_flags(flags, "  ", True, mistake)
    return "\n".join(head + body) + "\n"


def generate(directory: Path, count: int, seed: int, prefix: str = "launch") -> list[Path]:
    rng = random.Random(seed)
    pool = _flag_pool(rng)
    paths = []
    for i in range(count):
        p = directory / f"{prefix}_{i:04d}.sh"
        p.write_text(generate_script(rng, pool), encoding="utf-8")
        paths.append(p)
    return paths


# --- part (a): warm ------------------------------------------------------------------------


def bare_pass(paths: list[Path], parser: ts.Parser) -> int:
    nodes = 0
    for p in paths:
        tree = parser.parse(p.read_bytes())
        nodes += tree.root_node.end_byte
    return nodes


def full_pass(paths: list[Path], options: Options) -> int:
    findings = 0
    for p in paths:
        text = decode(p.read_bytes())
        doc = Document(text, str(p), detect_language(str(p), text) or "shell")
        findings += len(check_document(doc, options).findings)
    return findings


def time_passes(fn, runs: int) -> list[float]:
    fn()  # warm-up (catalog load, query compilation, caches)
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def profile_full(paths: list[Path], options: Options, top: int) -> str:
    prof = cProfile.Profile()
    prof.enable()
    full_pass(paths, options)
    prof.disable()
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf)
    stats.sort_stats("tottime").print_stats(top)
    buf.write("\n--- by cumulative time ---\n")
    stats.sort_stats("cumulative").print_stats(top)
    return buf.getvalue()


# --- part (b): cold ------------------------------------------------------------------------


def _env(pycache: Path) -> dict[str, str]:
    """Environment of the cold runs: the same sglang_lsp as the warm part, and bytecode caching
    on (in a private prefix, so nothing is written into the checkout) even where the caller
    sets PYTHONDONTWRITEBYTECODE: an installed package has its .pyc files, and compiling the
    sources on every run would be measured otherwise."""
    env = dict(os.environ)
    pkg_parent = str(Path(sglang_lsp.__file__).resolve().parents[1])
    env["PYTHONPATH"] = pkg_parent + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def time_command(cmd: list[str], runs: int, cwd: Path, expect: set[int]) -> list[float]:
    env = _env(cwd / "pycache")
    out = []
    for i in range(runs + 1):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        elapsed = time.perf_counter() - t0
        if proc.returncode not in expect:
            raise SystemExit(f"{' '.join(cmd)} exited with {proc.returncode}: {proc.stderr.decode()[-500:]}")
        if i:  # the first run only warms the OS file cache and writes the bytecode cache
            out.append(elapsed)
    return out


# --- report --------------------------------------------------------------------------------


def _fmt(seconds: float) -> str:
    return f"{seconds * 1000:9.1f} ms"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=500, help="scripts to generate (default 500)")
    ap.add_argument("--runs", type=int, default=7, help="timed passes over all files (default 7)")
    ap.add_argument("--cold-runs", type=int, default=15, help="subprocess runs for part (b) (default 15)")
    ap.add_argument("--seed", type=int, default=20251201)
    ap.add_argument("--skip-cold", action="store_true", help="only part (a)")
    ap.add_argument("--profile", action="store_true", help="cProfile one full pass and print hotspots")
    ap.add_argument("--top", type=int, default=25, help="rows of profile output (default 25)")
    ap.add_argument("--keep", action="store_true", help="keep the generated scripts")
    args = ap.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="sglang-lsp-bench-"))
    try:
        paths = generate(tmp, args.files, args.seed)
        total_bytes = sum(p.stat().st_size for p in paths)
        options = Options()
        parser = ts.Parser(ts.Language(tree_sitter_bash.language()))
        print(f"sglang_lsp {sglang_lsp.__version__} from {Path(sglang_lsp.__file__).parent}")
        print(f"python {sys.version.split()[0]}, tree-sitter {_version('tree-sitter')}, "
              f"tree-sitter-bash {_version('tree-sitter-bash')}")
        print(f"(a) {len(paths)} generated scripts, {total_bytes / 1024:.0f} KiB, in {tmp}")
        findings = full_pass(paths, options)
        print(f"    full check reports {findings} findings in total\n")

        bare = time_passes(lambda: bare_pass(paths, parser), args.runs)
        full = time_passes(lambda: full_pass(paths, options), args.runs)
        mb, mf = statistics.median(bare), statistics.median(full)
        ratio = mf / mb
        print(f"    {'measurement':<44}{'median':>12}{'per file':>14}")
        print(f"    {'bare: read + tree-sitter-bash parse':<44}{_fmt(mb)}{mb / len(paths) * 1e6:11.0f} us")
        print(f"    {'full: read + engine.check_document':<44}{_fmt(mf)}{mf / len(paths) * 1e6:11.0f} us")
        print(f"    {'ratio full / bare':<44}{ratio:9.2f} x   (goal <= {WARM_GOAL} x: "
              f"{'met' if ratio <= WARM_GOAL else 'MISSED'})")
        print(f"    ({args.runs} runs each; min bare {_fmt(min(bare)).strip()}, min full {_fmt(min(full)).strip()}, "
              f"ratio of minima {min(full) / min(bare):.2f} x)")
        # the same measurement once, on files this interpreter has never seen: a cache keyed by
        # file or launch contents would make the passes above cheaper than this one
        unseen = generate(tmp, len(paths), args.seed + 1, prefix="unseen")
        ub = time_passes(lambda: bare_pass(unseen, parser), 1)[0]
        t0 = time.perf_counter()
        full_pass(unseen, options)
        uf = time.perf_counter() - t0
        print(f"    (one pass over {len(unseen)} unseen files: bare {_fmt(ub).strip()}, full {_fmt(uf).strip()}, "
              f"ratio {uf / ub:.2f} x)\n")

        if not args.skip_cold:
            one = paths[0]
            shutil.copy(one, tmp / "one.sh")
            check_cmd = [sys.executable, "-m", "sglang_lsp.cli.main", "check", "one.sh"]
            floor_cmd = [sys.executable, "-c", "import tree_sitter_bash"]
            cold_check = time_command(check_cmd, args.cold_runs, tmp, {0, 1})
            cold_floor = time_command(floor_cmd, args.cold_runs, tmp, {0})
            cc, cf = statistics.median(cold_check), statistics.median(cold_floor)
            cratio = cc / cf
            print(f"(b) cold single-file runs ({args.cold_runs} each, median wall clock)")
            print(f"    {'python -m sglang_lsp.cli.main check one.sh':<44}{_fmt(cc)}")
            floor_label = 'python -c "import tree_sitter_bash"'
            print(f"    {floor_label:<44}{_fmt(cf)}")
            print(f"    {'ratio':<44}{cratio:9.2f} x   (goal <= {COLD_GOAL} x: "
                  f"{'met' if cratio <= COLD_GOAL else 'MISSED'})")
            print(f"    (min check {_fmt(min(cold_check)).strip()}, min floor {_fmt(min(cold_floor)).strip()}, "
                  f"ratio of minima {min(cold_check) / min(cold_floor):.2f} x)\n")

        if args.profile:
            print("cProfile of one full pass (sorted by own time):")
            print(profile_full(paths, options, args.top))
        if args.keep:
            print(f"generated scripts kept in {tmp}")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


def _version(dist: str) -> str:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:  # pragma: no cover
        return "?"


if __name__ == "__main__":
    sys.exit(main())
