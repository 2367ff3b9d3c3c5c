#!/usr/bin/env python3
"""Benchmark of ``sglang-lsp check --jobs``: whole commands against a single-threaded bare parse.

This is a benchmark, not a test: it prints numbers and never fails on them.

The 600-file bench: the 500 scripts of ``bench_check.py`` (same seed) and 100 small Kubernetes
manifests made by ``bench_yaml.py``'s generator (~60 lines each, other seeds). Each measurement
is a whole process, timed by wall clock over ``--runs`` rounds (the commands alternate inside a
round; medians reported), with its CPU time (user + system of the process and its workers):

* bare: ``python -c`` that imports tree-sitter and both grammars, reads every file and parses
  it (bash or YAML), in one thread: the floor the issue's ratios are taken against;
* ``check --jobs 1``: everything in one process;
* ``check`` (default): one worker per core when the files pay for them (``cli/parallel.py``);
* ``check --jobs N`` for ``--also-jobs``.

Then the break-even of the pool: ``--jobs 1`` against ``--jobs 2`` on the first 8..64 scripts,
which is what ``parallel.FILES_PER_WORKER`` is set from.

Usage (from the repository root)::

    python bench/bench_jobs.py                    # ~2 minutes on a quiet 2-core machine
    python bench/bench_jobs.py --runs 9 --skip-break-even
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
if importlib.util.find_spec("sglang_lsp") is None:
    sys.path.insert(0, str(ROOT.parent / "server"))

import bench_check  # noqa: E402
import bench_yaml  # noqa: E402
import sglang_lsp  # noqa: E402
from sglang_lsp.cli import parallel  # noqa: E402

BARE = """
import sys
from pathlib import Path
import tree_sitter as ts, tree_sitter_bash, tree_sitter_yaml
bash = ts.Parser(ts.Language(tree_sitter_bash.language()))
yaml = ts.Parser(ts.Language(tree_sitter_yaml.language()))
n = 0
for p in sorted(Path(sys.argv[1]).iterdir()):
    n += (yaml if p.suffix == ".yaml" else bash).parse(p.read_bytes()).root_node.end_byte
"""


def generate(directory: Path, scripts: int, manifests: int, seed: int) -> None:
    bench_check.generate(directory, scripts, seed)
    for i in range(manifests):
        (directory / f"manifest_{i:03d}.yaml").write_text(bench_yaml.generate(60, seed + 100 + i), encoding="utf-8")


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall clock, CPU time of the process and its children) of one run of ``cmd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited with {proc.returncode}: {proc.stderr.decode()[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(commands: dict[str, list[str]], runs: int, cwd: Path, env: dict[str, str]) -> dict[str, tuple[float, float]]:
    """Median (wall, cpu) of each command; one warm-up round, then ``runs`` rounds in which the
    commands alternate (a burst of load on the machine hits them all alike)."""
    samples: dict[str, list[tuple[float, float]]] = {k: [] for k in commands}
    for i in range(runs + 1):
        for label, cmd in commands.items():
            got = timed(cmd, cwd, env)
            if i:
                samples[label].append(got)
    return {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in samples.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scripts", type=int, default=500)
    ap.add_argument("--manifests", type=int, default=100)
    ap.add_argument("--runs", type=int, default=7, help="rounds (default 7)")
    ap.add_argument("--seed", type=int, default=20251201)
    ap.add_argument("--also-jobs", type=int, nargs="*", default=[], help="also time check --jobs N")
    ap.add_argument("--skip-break-even", action="store_true")
    ap.add_argument("--breakdown", action="store_true",
                    help="also time check without the undecided list, with the GPU named, and the import alone")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--before", metavar="TREE",
                    help="also time `check` (serial, no --jobs) of the server/ of this checkout (e.g. an older commit)")
    args = ap.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="sglang-lsp-jobs-"))
    env = bench_check._env(tmp / "pycache")
    try:
        files = tmp / "files"
        files.mkdir()
        generate(files, args.scripts, args.manifests, args.seed)
        count = len(list(files.iterdir()))
        py = sys.executable
        check = [py, "-m", "sglang_lsp.cli.main", "check", "-q", "--format", "json", "."]
        default_jobs = parallel.job_count(None, count)
        print(f"sglang_lsp {sglang_lsp.__version__} from {Path(sglang_lsp.__file__).parent}")
        print(f"{count} files ({args.scripts} scripts, {args.manifests} manifests), {parallel.available_cores()} cores; "
              f"default --jobs here: {default_jobs}; load average before: {os.getloadavg()[0]:.2f}")
        commands = {"bare: read + tree-sitter parse, 1 thread": [py, "-c", BARE, str(files)],
                    "check --jobs 1": check[:-1] + ["--jobs", "1", "."],
                    f"check (default: {default_jobs} workers)": check}
        if args.breakdown:
            # where a one-core run's time goes: the JSON report lists the checks each launch leaves
            # undecided, which with the GPU unknown means sglang's resolution on each GPU profile
            # (checks/kb/undecided.py); the text report with -q does not need them
            commands["check --jobs 1, text -q (no undecided list)"] = [py, "-m", "sglang_lsp.cli.main", "check", "-q",
                                                                      "--jobs", "1", "."]
            commands["check --jobs 1 --gpu H100 (GPU named)"] = check[:-1] + ["--jobs", "1", "--gpu", "H100", "."]
            commands["python -c 'import sglang_lsp.engine.check'"] = [py, "-c", "import sglang_lsp.engine.check"]
        for n in args.also_jobs:
            commands[f"check --jobs {n}"] = check[:-1] + ["--jobs", str(n), "."]
        if args.before:
            commands["before: check (serial)"] = ["env", f"PYTHONPATH={Path(args.before).resolve() / 'server'}",
                                                  "PYTHONPYCACHEPREFIX=" + str(tmp / "pycache-before"), *check]
        got = measure(commands, args.runs, files, env)
        bare_wall, bare_cpu = next(iter(got.values()))
        print(f"\n{'command':<44}{'wall':>10}{'ratio':>8}{'cpu':>10}{'ratio':>8}")
        for label, (wall, cpu) in got.items():
            print(f"{label:<44}{wall * 1000:8.0f}ms{wall / bare_wall:7.2f}x{cpu * 1000:8.0f}ms{cpu / bare_cpu:7.2f}x")
        print(f"({args.runs} rounds, medians; load average after: {os.getloadavg()[0]:.2f})")

        if not args.skip_break_even:
            print("\nbreak-even of the pool (scripts only; wall clock, medians):")
            print(f"{'files':>6}{'--jobs 1':>12}{'--jobs 2':>12}{'2 / 1':>8}")
            scripts = sorted(files.glob("*.sh"))
            for n in (8, 16, 24, 32, 48, 64, 96):
                part = tmp / f"part{n}"
                part.mkdir()
                for p in scripts[:n]:
                    shutil.copy(p, part / p.name)
                cmds = {j: [py, "-m", "sglang_lsp.cli.main", "check", "-q", "--jobs", j, "."] for j in ("1", "2")}
                r = measure(cmds, args.runs, part, env)
                print(f"{n:>6}{r['1'][0] * 1000:10.0f}ms{r['2'][0] * 1000:10.0f}ms{r['2'][0] / r['1'][0]:7.2f}x")
            print(f"(load average after: {os.getloadavg()[0]:.2f})")
        if args.keep:
            print(f"files kept in {tmp}")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
