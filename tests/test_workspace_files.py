"""Files a repository can plant (issue 24): every file a check reads from the workspace goes
through :mod:`sglang_lsp.base.workspace_files`, which reads regular files within a size limit
only, never waits, and caches what it read by (path, mtime, size).

Each planted kind — a FIFO, a link to ``/dev/zero``, a link to ``/proc/self/fd/0``, a sparse
file of several gigabytes, a directory — is put in each place a check reads: a virtual
environment's sglang ``METADATA``, a Compose ``.env``, a ``.sglang-lsp.toml`` and the file it
extends, a ``--config`` YAML, a model's ``config.json`` (and the memory plan's checkpoint files),
and the files a directory walk checks.
The CLI runs in a child process (a regression would hang it, not this test run; the time limit
is a guard, nothing here is timed); the language server case is in tests/test_lsp_planted_files.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

import sglang_lsp
from sglang_lsp.base import workspace_files
from sglang_lsp.base.workspace_files import RefusedFile

ROOT = Path(__file__).resolve().parents[1]
GUARD = 120  # seconds a child may take before the test calls it hung

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"),
                                reason="needs FIFOs and /dev/zero (POSIX)")


def plant(path: Path, kind: str) -> None:
    """Put a file of ``kind`` at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero-link":
        path.symlink_to("/dev/zero")
    elif kind == "stdin-link":
        path.symlink_to("/proc/self/fd/0")
    elif kind == "sparse-3gb":
        with open(path, "wb") as fh:
            fh.truncate(3 * 1024**3)
    elif kind == "directory":
        path.mkdir()
    else:  # pragma: no cover
        raise ValueError(kind)


KINDS = ["fifo", "dev-zero-link", "stdin-link", "sparse-3gb", "directory"]
# what the refusal says, per kind (standard input is a pipe, a terminal or /dev/null)
REASON = {"fifo": ("FIFO",), "dev-zero-link": ("/dev/zero, a character device",),
          "stdin-link": ("pseudo file systems", "a character device"),
          "sparse-3gb": ("3.0 GiB, larger than",), "directory": ("a directory",)}


def says_why(kind: str, text: str) -> bool:
    return any(reason in text for reason in REASON[kind])


@pytest.fixture(autouse=True)
def fresh_cache():
    workspace_files.forget()
    yield
    workspace_files.forget()


# --- the reader ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_planted_file_is_refused_without_a_read(tmp_path, kind):
    path = tmp_path / "config.json"
    plant(path, kind)
    with pytest.raises(RefusedFile) as caught:
        workspace_files.read_bytes(path, workspace_files.MODEL_CONFIG)
    assert says_why(kind, caught.value.reason)
    assert str(path) in str(caught.value)
    assert isinstance(caught.value, OSError)  # callers' `except OSError` handle it


def test_missing_file_is_file_not_found_named_as_given(tmp_path):
    with pytest.raises(FileNotFoundError) as caught:
        workspace_files.read_bytes(tmp_path / "nope.json", workspace_files.MODEL_CONFIG)
    assert caught.value.filename == str(tmp_path / "nope.json")


def test_regular_files_and_links_to_them_are_read(tmp_path):
    real = tmp_path / "real.json"
    real.write_bytes(b'{"a": 1}')
    (tmp_path / "link.json").symlink_to(real)
    assert workspace_files.read_bytes(real, workspace_files.MODEL_CONFIG) == b'{"a": 1}'
    assert workspace_files.read_bytes(tmp_path / "link.json", workspace_files.MODEL_CONFIG) == b'{"a": 1}'


def test_size_limit_is_per_kind(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * (2 * 1024 * 1024))
    with pytest.raises(RefusedFile, match="larger than the 1.0 MiB a model configuration"):
        workspace_files.read_bytes(path, workspace_files.MODEL_CONFIG)
    assert len(workspace_files.read_bytes(path, workspace_files.SGLANG_CONFIG)) == 2 * 1024 * 1024


def test_a_head_kind_reads_its_head_of_a_huge_file(tmp_path):
    path = tmp_path / "METADATA"
    with open(path, "wb") as fh:
        fh.write(b"Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.0\n\n")
        fh.truncate(3 * 1024**3)
    head = workspace_files.read_bytes(path, workspace_files.PACKAGE_METADATA)
    assert len(head) == workspace_files.PACKAGE_METADATA.limit and head.startswith(b"Metadata-Version")


def test_reads_are_cached_until_the_file_changes(tmp_path, monkeypatch):
    path = tmp_path / "config.json"
    path.write_bytes(b"one")
    reads = []
    real_read = os.read
    monkeypatch.setattr(workspace_files.os, "read", lambda fd, n: reads.append(n) or real_read(fd, n))
    assert workspace_files.read_bytes(path, workspace_files.MODEL_CONFIG) == b"one"
    first = len(reads)
    for _ in range(5):
        assert workspace_files.read_bytes(path, workspace_files.MODEL_CONFIG) == b"one"
    assert len(reads) == first  # no read while (path, mtime, size) stays the same
    path.write_bytes(b"three")
    assert workspace_files.read_bytes(path, workspace_files.MODEL_CONFIG) == b"three"
    assert len(reads) > first


def test_the_cache_keeps_one_version_per_file(tmp_path, monkeypatch):
    """A changed file's old bytes leave the cache when the new ones come in, and eviction keeps
    the byte count and the per-file index in step with what is cached."""
    path = tmp_path / "run.sh"
    for n, text in enumerate([b"a", b"bb", b"ccc"]):
        path.write_bytes(text)
        os.utime(path, ns=(n * 10**9, n * 10**9))
        assert workspace_files.read_bytes(path, workspace_files.CHECKED_FILE) == text
    mine = [key for key in workspace_files._cache if key[0] == os.path.realpath(path)]
    assert len(mine) == 1 and workspace_files._cache[mine[0]] == b"ccc"
    assert workspace_files._cached_bytes == 3
    # a cache room for four 9-byte files drops the oldest ones, index and count included
    monkeypatch.setattr(workspace_files, "_CACHE_BYTES", 36)
    for n in range(6):
        other = tmp_path / f"other{n}.sh"
        other.write_bytes(b"x" * 9)
        workspace_files.read_bytes(other, workspace_files.CHECKED_FILE)
    assert [os.path.basename(key[0]) for key in workspace_files._cache] == [f"other{n}.sh" for n in range(2, 6)]
    assert workspace_files._cached_bytes == 36
    assert set(workspace_files._version_of.values()) == set(workspace_files._cache)


def test_a_pipe_named_on_the_command_line_is_read(tmp_path):
    """``check <(generate)``: a pipe the user hands over is read (within the limit), as `cat`
    would; a FIFO found by the checker is not."""
    fifo = tmp_path / "pipe.sh"
    os.mkfifo(fifo)

    def writer():
        with open(fifo, "wb") as fh:
            fh.write(b"python -m sglang.launch_server --model-path m\n")

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    data = workspace_files.read_bytes(fifo, workspace_files.CHECKED_FILE, regular_only=False)
    t.join(GUARD)
    assert data == b"python -m sglang.launch_server --model-path m\n"
    with pytest.raises(RefusedFile):
        workspace_files.read_bytes(fifo, workspace_files.CHECKED_FILE)


def test_devices_stay_refused_even_when_named(tmp_path):
    with pytest.raises(RefusedFile, match="character device"):
        workspace_files.read_bytes("/dev/zero", workspace_files.CHECKED_FILE, regular_only=False)


# --- through the CLI -------------------------------------------------------------------

LAUNCH = "python -m sglang.launch_server --model-path m --tp-size 2 --quantization nope\n"


def cli(cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    package_parent = Path(sglang_lsp.__file__).resolve().parents[1]
    env["PYTHONPATH"] = os.pathsep.join([str(package_parent)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    # stdin is a pipe nobody writes to or closes: a read of /proc/self/fd/0 would wait for good
    r, w = os.pipe()
    try:
        return subprocess.run([sys.executable, "-m", "sglang_lsp.cli.main", *argv], cwd=cwd, stdin=r,
                              capture_output=True, text=True, timeout=GUARD, env=env)
    finally:
        os.close(r)
        os.close(w)


def codes(proc: subprocess.CompletedProcess) -> list[str]:
    return [d["code"] for d in json.loads(proc.stdout)["diagnostics"]]


@pytest.mark.parametrize("kind", KINDS)
def test_venv_metadata(tmp_path, kind):
    """A workspace `.venv` with sglang's METADATA planted: the installed version is a guess the
    check does without; it runs as if there were no virtual environment."""
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").write_text("")
    info = tmp_path / ".venv" / "lib" / "python3.11" / "site-packages" / "sglang-0.5.0.dist-info"
    (tmp_path / "run.sh").write_text(LAUNCH)
    # before: a real METADATA of sglang 0.5.0 makes 0.5.0 the target (its catalog knows no
    # `--quantization nope` either, and no `--tp-size` problem), the planted one is skipped
    plant(info / "METADATA", kind)
    proc = cli(tmp_path, "check", "--format", "json", "run.sh")
    assert proc.returncode == 1, proc.stderr
    assert codes(proc) == ["SGL002"]


def test_venv_metadata_regular_file_is_used(tmp_path):
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").write_text("")
    info = tmp_path / ".venv" / "lib" / "python3.11" / "site-packages" / "sglang-0.4.3.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sglang\nVersion: 0.4.3\n\nlong text\n")
    # `--enable-ep-moe` exists in 0.4.3 and was removed later: no SGL031 against the venv's release
    (tmp_path / "run.sh").write_text("python -m sglang.launch_server --model-path m --enable-ep-moe\n")
    assert codes(cli(tmp_path, "check", "--format", "json", "run.sh")) == []
    (info / "METADATA").unlink()
    plant(info / "METADATA", "fifo")
    assert codes(cli(tmp_path, "check", "--format", "json", "run.sh")) == ["SGL031"]


COMPOSE = textwrap.dedent("""\
    services:
      sglang:
        image: lmsysorg/sglang:latest
        ipc: host
        environment:
          MODEL: Qwen/Qwen2.5-7B-Instruct
        command: ["python3", "-m", "sglang.launch_server", "--model-path", "$MODEL", "--host", "0.0.0.0"]
    """)


@pytest.mark.parametrize("kind", KINDS)
def test_compose_dot_env(tmp_path, kind):
    (tmp_path / "compose.yaml").write_text(COMPOSE)
    plant(tmp_path / ".env", kind)
    proc = cli(tmp_path, "check", "--format", "json", "compose.yaml")
    diags = json.loads(proc.stdout)["diagnostics"]
    assert [d["code"] for d in diags] == ["SGL071"], proc.stderr
    assert ".env: " in diags[0]["message"] and says_why(kind, diags[0]["message"])


def test_compose_dot_env_regular_file_is_read(tmp_path):
    (tmp_path / "compose.yaml").write_text(COMPOSE)
    assert codes(cli(tmp_path, "check", "--format", "json", "compose.yaml")) == ["SGL060"]
    (tmp_path / ".env").write_text("MODEL=Qwen/Qwen2.5-7B-Instruct\n")
    assert codes(cli(tmp_path, "check", "--format", "json", "compose.yaml")) == []


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("where", [".sglang-lsp.toml", "extended"])
def test_project_configuration(tmp_path, kind, where):
    """A configuration file that must not be read is a configuration error naming the file
    and why (exit 2), never a hang or a MemoryError."""
    (tmp_path / "run.sh").write_text(LAUNCH)
    if where == "extended":
        (tmp_path / ".sglang-lsp.toml").write_text('extend = "big.toml"\n')
        plant(tmp_path / "big.toml", kind)
        named = "big.toml"
    else:
        plant(tmp_path / ".sglang-lsp.toml", kind)
        named = ".sglang-lsp.toml"
    proc = cli(tmp_path, "check", "run.sh")
    if kind == "directory" and where == ".sglang-lsp.toml":
        assert proc.returncode == 1 and "SGL002" in proc.stdout  # no configuration file: checked without
        return
    assert proc.returncode == 2
    assert named in proc.stderr and says_why(kind, proc.stderr), proc.stderr


@pytest.mark.parametrize("kind", KINDS)
def test_sglang_config_yaml(tmp_path, kind):
    (tmp_path / "run.sh").write_text("python -m sglang.launch_server --config serve.yaml --port 30000\n")
    plant(tmp_path / "serve.yaml", kind)
    proc = cli(tmp_path, "check", "--format", "json", "run.sh")
    diags = json.loads(proc.stdout)["diagnostics"]
    assert [d["code"] for d in diags] == ["SGL016"], proc.stderr
    if kind == "directory":
        assert "was not found" in diags[0]["message"]
    else:
        assert "cannot be read" in diags[0]["message"] and says_why(kind, diags[0]["message"])


@pytest.mark.parametrize("kind", KINDS)
def test_model_config_json(tmp_path, kind):
    (tmp_path / "run.sh").write_text("# sglang-lsp: gpu=MI300X\n"
                                     "python -m sglang.launch_server --model-path models/m --quantization fp8\n")
    plant(tmp_path / "models" / "m" / "config.json", kind)
    proc = cli(tmp_path, "check", "--format", "json", "run.sh")
    diags = json.loads(proc.stdout)["diagnostics"]
    assert [d["code"] for d in diags] == ["SGL071"], proc.stderr
    assert diags[0]["flag"] == "--model-path"
    assert "models/m/config.json" in diags[0]["message"] and says_why(kind, diags[0]["message"])


def test_model_config_json_regular_file_is_read(tmp_path):
    shutil.copytree(ROOT / "tests" / "fixtures" / "models" / "qwen3-moe-quark-mxfp4", tmp_path / "models" / "m")
    (tmp_path / "run.sh").write_text("# sglang-lsp: gpu=GB200\n"
                                     "python -m sglang.launch_server --model-path models/m --quantization fp8\n")
    assert codes(cli(tmp_path, "check", "--format", "json", "run.sh")) == ["SGL106"]  # the checkpoint was read


def _safetensors(path: Path, tensors: dict[str, int]) -> None:
    import struct

    header, offset = {}, 0
    for name, size in tensors.items():
        header[name] = {"dtype": "U8", "shape": [size], "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw)


@pytest.mark.parametrize("kind", KINDS)
def test_memory_plan_reads_of_a_checkpoint(tmp_path, kind):
    """The memory plan's reads of a local checkpoint (config.json, hf_quant_config.json, the
    weight index, each safetensors header) go through the reader: a planted file is refused with
    its reason or skipped, never waited on or read whole."""
    from sglang_lsp.context.memory import plan, weights
    from sglang_lsp.context.memory.model import UnsupportedModel

    model = tmp_path / "m"
    plant(model / "config.json", kind)
    with pytest.raises(UnsupportedModel) as caught:
        plan.read_model_dir(str(model))
    assert "config.json" in str(caught.value) and says_why(kind, str(caught.value))

    good = tmp_path / "good"
    good.mkdir()
    (good / "config.json").write_text('{"model_type": "llama"}')
    plant(good / "hf_quant_config.json", kind)
    assert plan.read_model_dir(str(good)) == ({"model_type": "llama"}, {})  # the side file skipped

    # a planted index: the size comes from the headers; a planted shard: no size, no guess
    _safetensors(good / "model-00001.safetensors", {"model.layers.0.mlp.weight": 100})
    plant(good / "model.safetensors.index.json", kind)
    assert weights.checkpoint_size(str(good)).total_bytes == 100
    plant(good / "model-00002.safetensors", kind)
    assert weights.checkpoint_size(str(good)) is None
    if kind != "sparse-3gb":  # (a regular file: opened, its zero header length rejected)
        with pytest.raises(RefusedFile):
            weights.read_safetensors_header(str(good / "model-00002.safetensors"))


@pytest.mark.parametrize("kind", KINDS)
def test_files_a_directory_walk_finds(tmp_path, kind):
    """A planted `run.sh` is reported as not checked (exit 2); the other files are checked."""
    (tmp_path / "good.sh").write_text(LAUNCH)
    plant(tmp_path / "bad.sh", kind)
    plant(tmp_path / "noext", kind)  # looked at for a shebang: not opened
    proc = cli(tmp_path, "check", "--format", "concise", ".")
    assert "good.sh:1:" in proc.stdout and "SGL002" in proc.stdout
    if kind == "directory":  # a directory named bad.sh is walked into, not checked
        assert proc.returncode == 1, proc.stderr
        return
    assert proc.returncode == 2
    assert f"bad.sh: " in proc.stderr and "not checked" in proc.stderr and says_why(kind, proc.stderr)
    assert "noext" not in proc.stderr


@pytest.mark.parametrize("kind", KINDS)
def test_files_a_directory_walk_finds_for_resolve(tmp_path, kind):
    """`sglang-lsp resolve DIR` reads the files it finds as `check` does: a planted one is named
    with the reason (exit 2), the others are resolved."""
    (tmp_path / "good.sh").write_text(LAUNCH)
    plant(tmp_path / "bad.sh", kind)
    proc = cli(tmp_path, "resolve", ".")
    assert "good.sh:1:" in proc.stdout, proc.stderr
    if kind == "directory":
        return
    assert proc.returncode == 2
    assert "bad.sh: " in proc.stderr and says_why(kind, proc.stderr)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_directory_walk_runs_nothing_a_repository_configures(tmp_path):
    """`check DIR` lists files with `git ls-files`; a repository's `.git/config` can name a
    program for git to run (`core.fsmonitor`), which the walk turns off."""
    marker = tmp_path / "ran"
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=GUARD)
    (repo / "run.sh").write_text(LAUNCH)
    subprocess.run(["git", "-C", str(repo), "config", "core.fsmonitor", f"touch {marker}; false"], check=True,
                   timeout=GUARD)
    proc = cli(repo, "check", "--format", "concise", ".")
    assert "run.sh:1:" in proc.stdout and "SGL002" in proc.stdout
    assert not marker.exists()


# --- no other way in ------------------------------------------------------------------------

# Every place in the package that opens a file by other means than the reader, and why that file
# is not one a repository can plant. A new open() of the package fails the test until it goes
# through sglang_lsp.base.workspace_files or is listed here with its reason.
# (module, the call's source text up to its first argument) -> why
OTHER_READS = {
    ("catalog.versions", "HISTORY_PATH.open"): "the flag history bundled with the package",
    ("catalog.catalog", "open(user_stamp[0]"): "the user's catalog cache, written by `catalog build`",
    ("catalog.catalog", "(rows if rows.is_file() else path).open"): "a catalog bundled with the package",
    ("catalog.user_catalogs", "out.read_text"): "the extractor's output in a temporary directory of ours",
    ("catalog.user_catalogs", "os.fdopen(fd"): "writing the user's catalog cache (a file of ours)",
    ("catalog.extract_catalog", "open(args.out"): "the extractor writing its output (a tool)",
    ("kb", "path.open"): "the knowledge-base rule files bundled with the package",
    ("kb", "INDEX_PATH.open"): "the knowledge-base index bundled with the package",
    ("kb.importer", "Path(path).read_text"): "`kb import PATH`: a dataset the user names",
    ("engine.check", "_DIFFUSION_FLAGS_PATH.read_text"): "data bundled with the package",
    ("catalog.dialects", "_DYNAMO_FLAGS.read_text"): "data bundled with the package",
    ("catalog.server_fields", "_DATA.read_text"): "data bundled with the package",
    ("rules", "self.doc_path.read_text"): "rule documentation bundled with the package",
    ("base.queries", "path.read_text"): "tree-sitter queries bundled with the package",
    ("cli.writing", "os.fdopen(fd"): "`check --fix` writing its temporary file (a file of ours)",
    ("cli.writing", "open(path"): "`check --fix` re-reading a file it read through the reader and found "
                                  "regular and of the same size just before",
}
OPENERS = {"open", "read_text", "read_bytes", "fdopen", "load_file", "loadtxt"}


def _opens(tree) -> list[tuple[str, int]]:
    import ast

    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name not in OPENERS:
            continue
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "workspace_files":
            continue  # the reader itself
        first = f"({ast.unparse(node.args[0])}" if node.args else ""
        out.append((ast.unparse(func) + first, node.lineno))
    return out


def test_every_file_the_package_opens_goes_through_the_reader_or_is_listed():
    import ast

    package = Path(sglang_lsp.__file__).resolve().parent
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        module = ".".join(parts)
        if module == "base.workspace_files":
            continue
        for call, line in _opens(ast.parse(path.read_text(encoding="utf-8"))):
            found.setdefault((module, call), []).append(f"{path.relative_to(package)}:{line}")
    unlisted = {k: v for k, v in found.items() if k not in OTHER_READS}
    assert not unlisted, ("read these through sglang_lsp.base.workspace_files, or list them in OTHER_READS "
                          f"with the reason a repository cannot plant them: {unlisted}")
    stale = set(OTHER_READS) - set(found)
    assert not stale, f"listed in OTHER_READS but no longer in the package: {stale}"
