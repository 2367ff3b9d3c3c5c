"""``check --jobs`` / ``migrate --jobs`` / ``resolve --jobs``: worker processes give byte for byte what a serial run
gives (every output format, fixes, diffs, unreadable files, exit codes), and Ctrl-C stops them."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sglang_lsp.cli import parallel

ROOT = Path(__file__).resolve().parents[1]
FORMATS = ["text", "concise", "json", "sarif", "github", "junit", "gitlab"]

UPGRADE = textwrap.dedent("""\
    #!/bin/bash
    python3 -m sglang.launch_server \\
      --model-path m \\
      --cuda-graph-max-bs 256 \\
      --nsa-decode-backend flashmla_kv \\
      --enable-ep-moe
    """)


def _mixed_tree(root: Path) -> Path:
    """A directory of the kinds a run meets: the examples (shell, Compose, Kubernetes, sglang
    configs), scripts with findings and safe fixes, a manifest with a mistake, a file that is
    not UTF-8, one that is not a launch file, and one that cannot be read (a broken link)."""
    root.mkdir()
    for f in (ROOT / "examples").iterdir():
        if f.is_file() and f.name != "README.md":
            shutil.copy(f, root / f.name)
    for i in range(12):
        (root / f"fixable_{i:02d}.sh").write_text(
            "#!/bin/bash\n"
            f"python3 -m sglang.launch_server --model-path /m{i} --quantization FP8 --tp-size {i % 4 + 1}"
            " --enable-metrics=true --max-model-len 4096\n", encoding="utf-8")
    (root / "upgrade.sh").write_text(UPGRADE, encoding="utf-8")
    (root / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: s}\nspec:\n  containers:\n  - name: s\n"
        "    image: lmsysorg/sglang\n    command: [python3, -m, sglang.launch_server, --model-path, /m,"
        " --tp-size, '2', --bogus-flag]\n", encoding="utf-8")
    (root / "latin1.sh").write_bytes(b"#!/bin/bash\n# caf\xe9\npython -m sglang.launch_server --model-path m --mem-frac 0.8\n")
    (root / "unrelated.yaml").write_text("a: 1\nb: [2, 3]\n", encoding="utf-8")
    (root / "gone.sh").symlink_to(root / "does-not-exist.sh")
    return root


def _run(cwd: Path, *argv: str) -> tuple[int, bytes, bytes]:
    proc = subprocess.run([sys.executable, "-m", "sglang_lsp.cli.main", *argv], cwd=cwd, capture_output=True,
                          timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> Path:
    return _mixed_tree(tmp_path_factory.mktemp("parallel") / "mixed")


@pytest.mark.parametrize("fmt", FORMATS)
def test_parallel_check_prints_what_a_serial_check_prints(mixed, fmt):
    extra = ["--statistics"] if fmt == "concise" else []
    serial = _run(mixed, "check", "--format", fmt, "--jobs", "1", *extra, ".")
    assert serial[0] == 2  # the broken link is an error
    assert b"gone.sh" in serial[2] and b"Traceback" not in serial[2]
    assert b"SGL" in serial[1] or b"SGL" in serial[2]
    assert _run(mixed, "check", "--format", fmt, "-j", "3", *extra, ".") == serial


def test_parallel_diff_and_fix_match_serial(mixed, tmp_path):
    serial = _run(mixed, "check", "--diff", "--jobs", "1", ".")
    assert serial[1].count(b"\n--- ") + serial[1].startswith(b"--- ") >= 12  # one diff per fixable script
    assert _run(mixed, "check", "--diff", "--jobs", "3", ".") == serial
    copies = {}
    for jobs in ("1", "3"):
        tree = tmp_path / f"fix{jobs}"
        shutil.copytree(mixed, tree, symlinks=True)
        outcome = _run(tree, "check", "--fix", "--jobs", jobs, ".")
        contents = {p.name: p.read_bytes() for p in sorted(tree.iterdir()) if not p.is_symlink()}
        copies[jobs] = (outcome, contents)
    assert copies["3"] == copies["1"]
    assert copies["1"][1]["fixable_00.sh"] != (mixed / "fixable_00.sh").read_bytes()  # the fixes were written


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_parallel_resolve_prints_what_a_serial_resolve_prints(mixed, fmt):
    serial = _run(mixed, "resolve", "--format", fmt, "--gpu", "H100", "--jobs", "1", ".")
    assert serial[0] == 2 and b"gone.sh" in serial[2] and b"Traceback" not in serial[2]
    if fmt == "json":
        import json

        launches = json.loads(serial[1])["launches"]
        assert len({l["path"] for l in launches}) >= 14  # the examples and the fixable scripts
    else:
        assert serial[1].count(b"fixable_") >= 12
    assert _run(mixed, "resolve", "--format", fmt, "--gpu", "H100", "-j", "3", ".") == serial


def test_parallel_migrate_matches_serial(tmp_path):
    tree = tmp_path / "m"
    tree.mkdir()
    for i in range(9):
        (tree / f"u{i}.sh").write_text(UPGRADE.replace("--model-path m", f"--model-path m{i}"), encoding="utf-8")
    (tree / "gone.sh").symlink_to(tree / "nowhere.sh")
    serial = _run(tree, "migrate", "--to", "0.5.23", "--jobs", "1", ".")
    assert serial[0] == 2 and serial[1].count(b"+  --cuda-graph-max-bs-decode 256") == 9
    assert _run(tree, "migrate", "--to", "0.5.23", "-j", "3", ".") == serial


def test_parallel_map_keeps_order_output_and_errors_with_spawned_workers(capfd):
    items = list(range(10))
    got = list(parallel.map_in_order(_shout, items[:6], jobs=2, start_method="spawn"))
    assert got == [i * i for i in items[:6]]
    out, err = capfd.readouterr()
    assert out == "".join(f"out {i}\n" for i in items[:6]) and err == "".join(f"err {i}\n" for i in items[:6])
    seen = []
    with pytest.raises(ValueError, match="seven"):
        for value in parallel.map_in_order(_shout, items, jobs=3):
            seen.append(value)
    assert seen == [i * i for i in range(7)]  # the items before the failing one, in order
    out, _ = capfd.readouterr()
    assert out.splitlines()[-1] == "out 7"  # the failing item's own output came first


def _shout(i: int) -> int:
    print(f"out {i}")
    print(f"err {i}", file=sys.stderr)
    if i == 7:
        raise ValueError("seven")
    return i * i


def test_job_count():
    assert parallel.job_count(1, 500) == 1
    assert parallel.job_count(8, 3) == 3  # never more workers than files
    assert parallel.job_count(None, 3) == 1  # a handful of files: no workers
    many = parallel.FILES_PER_WORKER * 64
    assert parallel.job_count(None, many) == min(parallel.available_cores(), 64)


def test_bad_jobs_is_a_usage_error(tmp_path):
    (tmp_path / "a.sh").write_text("python -m sglang.launch_server --model-path m\n")
    code, _, err = _run(tmp_path, "check", "--jobs", "0", "a.sh")
    assert code == 2 and b"expected a number of processes" in err and b"Traceback" not in err


def _children(pid: int) -> set[int]:
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found.update(int(c) for c in (task / "children").read_text().split())
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").exists() or not hasattr(os, "mkfifo"), reason="needs /proc and FIFOs")
def test_ctrl_c_stops_the_workers_and_exits_130(tmp_path):
    for i in range(8):
        (tmp_path / f"a{i}.sh").write_text(f"python -m sglang.launch_server --model-path m{i}\n")
    fifo = tmp_path / "zz_blocks.sh"
    os.mkfifo(fifo)  # a worker reading it waits until a writer comes: the run is mid-way, in a worker
    # (named on the command line: a directory walk leaves FIFOs alone, a path given is read as `cat` would)
    names = [f"a{i}.sh" for i in range(8)] + [fifo.name]
    proc = subprocess.Popen([sys.executable, "-m", "sglang_lsp.cli.main", "check", "--jobs", "2", *names],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    writer = None
    try:
        while writer is None:  # opening the write end without blocking succeeds once a reader has it open
            try:
                writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                assert proc.poll() is None, proc.communicate()
                os.sched_yield()
        workers = _children(proc.pid)
        assert len(workers) == 2
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if writer is not None:
            os.close(writer)
        if proc.poll() is None:  # pragma: no cover
            proc.kill()
    assert proc.returncode == 130, err
    assert b"Traceback" not in err
    assert not [pid for pid in workers if _alive(pid)]


def _sleep_on_block(item: str) -> str:
    if item == "block":
        import time

        time.sleep(3600)
    return item


@pytest.mark.skipif("fork" not in __import__("multiprocessing").get_all_start_methods(), reason="needs fork")
def test_a_pool_that_does_not_stop_has_its_workers_killed(monkeypatch):
    """Stopping mid-run (here the consumer closes the results early; Ctrl-C takes the same path)
    must end the workers even when ``Pool.terminate()`` hangs, as CPython's can (issues 73945,
    78178): after STOP_GRACE the workers are killed and reaped."""
    import multiprocessing
    import multiprocessing.pool
    import threading

    released = threading.Event()
    real_terminate = multiprocessing.pool.Pool.terminate

    def stuck_terminate(self):
        released.wait()  # hangs until the test is done, then stops the pool for real
        real_terminate(self)

    monkeypatch.setattr(multiprocessing.pool.Pool, "terminate", stuck_terminate)
    monkeypatch.setattr(parallel, "STOP_GRACE", 0.2)
    results = parallel.map_in_order(_sleep_on_block, ["a", "b", "block", "c"], jobs=2, start_method="fork")
    try:
        assert [next(results), next(results)] == ["a", "b"]  # one worker now sleeps on "block"
        workers = multiprocessing.active_children()
        assert len(workers) == 2
        closer = threading.Thread(target=results.close, daemon=True)
        closer.start()
        closer.join(60)  # (a guard against hanging the suite, not a measurement)
        assert not closer.is_alive(), "the stop waited for the pool's terminate()"
        assert not [p for p in workers if p.is_alive()]
    finally:
        released.set()
