"""The pre-commit hook (a real `pre-commit run` on a temporary repository) and the composite
GitHub Action (its shell steps run locally against a shim of the `sglang-lsp` command).

The hook repository is a fresh git repository holding a copy of this working tree (pre-commit
installs hooks from commits, and `pre-commit try-repo` would leave out files not yet committed);
pre-commit builds it with pip, which needs only the package index.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
BROKEN = "#!/bin/bash\npython3 -m sglang.launch_server --model-path /m --quantization FP8\n"
FIXED = BROKEN.replace("FP8", "fp8")
GIT = ["git", "-c", "user.email=test@example.com", "-c", "user.name=test", "-c", "commit.gpgsign=false"]


def test_hook_definitions():
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    by_id = {h["id"]: h for h in hooks}
    assert set(by_id) == {"sglang-lsp", "sglang-lsp-fix"}
    for h in hooks:
        assert h["language"] == "python"
        assert h["entry"].startswith("sglang-lsp check")
        assert set(h["types_or"]) == {"shell", "yaml", "dockerfile", "markdown", "mdx", "rst", "python", "jupyter"}
    assert "--fix" in by_id["sglang-lsp-fix"]["entry"]


def _hook_repo(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "hook"
    repo.mkdir()
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy2(ROOT / name, repo / name)
    shutil.copytree(ROOT / "grammar_queries", repo / "grammar_queries")
    shutil.copytree(ROOT / "server" / "sglang_lsp", repo / "server" / "sglang_lsp",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(GIT + ["-C", str(repo), "add", "-A"], check=True)
    subprocess.run(GIT + ["-C", str(repo), "commit", "-qm", "hook"], check=True)
    rev = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True, capture_output=True,
                         text=True).stdout.strip()
    return repo, rev


@pytest.fixture(scope="module")
def hook_home(tmp_path_factory):
    if shutil.which("pre-commit") is None and subprocess.run([sys.executable, "-m", "pre_commit", "--version"],
                                                             capture_output=True).returncode != 0:
        pytest.skip("pre-commit is not installed")
    base = tmp_path_factory.mktemp("precommit")
    repo, rev = _hook_repo(base)
    return base, repo, rev


def _pre_commit(project: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never")
    env.pop("PYTHONPATH", None)  # the hook must run from its own installed environment
    return subprocess.run([sys.executable, "-m", "pre_commit", "run", *args], cwd=project, env=env,
                          capture_output=True, text=True, timeout=900)


def _project(base: Path, name: str, repo: Path, rev: str, hook_id: str) -> Path:
    project = base / name
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [
        {"repo": str(repo), "rev": rev, "hooks": [{"id": hook_id}]}]}))
    (project / "bad.sh").write_text(BROKEN)
    (project / "notes.md").write_text("python -m sglang.launch_server --bogus\n")  # prose: no code block
    subprocess.run(GIT + ["-C", str(project), "add", "-A"], check=True)
    return project


def test_pre_commit_check_hook(hook_home):
    base, repo, rev = hook_home
    project = _project(base, "proj-check", repo, rev, "sglang-lsp")
    proc = _pre_commit(project, base / "home", "--all-files")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "bad.sh:2:" in proc.stdout and "SGL002" in proc.stdout
    assert "notes.md" not in proc.stdout
    (project / "bad.sh").write_text(FIXED)
    subprocess.run(GIT + ["-C", str(project), "add", "-A"], check=True)
    proc = _pre_commit(project, base / "home", "--all-files")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Passed" in proc.stdout


def test_pre_commit_fix_hook(hook_home):
    base, repo, rev = hook_home
    project = _project(base, "proj-fix", repo, rev, "sglang-lsp-fix")
    proc = _pre_commit(project, base / "home", "--all-files")
    # pre-commit fails a hook that modified files, so the user can review and stage the fix
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "files were modified by this hook" in proc.stdout
    assert (project / "bad.sh").read_text() == FIXED


# --- the GitHub Action ----------------------------------------------------------------------

def _action():
    return yaml.safe_load((ROOT / "action.yml").read_text())


def test_action_definition():
    action = _action()
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    uses = [s.get("uses", "") for s in steps]
    assert any(u.startswith("actions/setup-python@") for u in uses)
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)
    for s in steps:
        if "run" in s:
            assert s["shell"] == "bash"  # composite steps must name their shell
            assert "${{" not in s["run"]  # inputs go through env, never spliced into the script
    assert set(action["inputs"]) >= {"paths", "args", "upload-sarif", "sarif-file"}


def _run_step(name: str, env: dict, cwd: Path, shim_dir: Path) -> subprocess.CompletedProcess:
    step = next(s for s in _action()["runs"]["steps"] if s.get("name") == name)
    full = dict(os.environ, PATH=f"{shim_dir}{os.pathsep}{os.environ['PATH']}", **env)
    return subprocess.run(["bash", "-e", "-c", step["run"]], cwd=cwd, env=full, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def shim(tmp_path):
    d = tmp_path / "bin"
    d.mkdir()
    exe = d / "sglang-lsp"
    exe.write_text(f"#!/bin/sh\nPYTHONPATH={ROOT / 'server'} exec {sys.executable} -m sglang_lsp.cli.main \"$@\"\n")
    exe.chmod(0o755)
    return d


def test_action_steps_write_sarif_and_annotations(tmp_path, shim):
    work = tmp_path / "work"
    work.mkdir()
    (work / "bad.sh").write_text(BROKEN)
    env = {"PATHS": ".", "ARGS": "--gpu H100", "SARIF_FILE": "out.sarif"}
    proc = _run_step("Write SARIF report", env, work, shim)
    assert proc.returncode == 0, proc.stderr  # --exit-zero: the upload step must still run
    log = json.loads((work / "out.sarif").read_text())
    assert log["version"] == "2.1.0"
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["SGL002"]
    proc = _run_step("Check (annotations and exit code)", {"PATHS": ".", "ARGS": ""}, work, shim)
    assert proc.returncode == 1
    assert proc.stdout.startswith("::error file=bad.sh,line=2,")
