"""A dry run of the release workflow's Python build: its "Build the sdist and the wheel" step, run
as written in a copy of this checkout (``python -m build``: the sdist, then the wheel built from
the unpacked sdist), and what the two files must hold to be published: the whole package with
its grammar queries, knowledge-base rules, rule documentation and flag catalogs, the console
script, and the metadata PyPI shows. (The .vsix is built by .ci/e2e-vscode with the commands of
the workflow's .vsix step; tests/test_release_workflow.py checks that they agree.)

The build installs hatchling from the package index into an isolated environment, like pip does
for ``pip install .``; it takes about 15 s.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
import yaml

from sglang_lsp import REPOSITORY_URL

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
VERSION = PYPROJECT["project"]["version"]
PACKAGE = ROOT / "server" / "sglang_lsp"
JUNK = {"__pycache__", ".pytest_cache", ".hypothesis", "node_modules", "dist", "build", ".venv"}


def _build_step() -> str:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    step = next(s for s in workflow["jobs"]["build"]["steps"] if s.get("name") == "Build the sdist and the wheel")
    return step["run"]


def _checkout_files() -> list[str]:
    """The files of the working tree that git would commit (tracked, plus untracked ones that are
    not ignored), or, outside git (an unpacked sdist), every file but caches and build output."""
    proc = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                          capture_output=True)
    if proc.returncode == 0:
        return [f for f in proc.stdout.decode().split("\0") if f and (ROOT / f).is_file()]
    return [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*")
            if p.is_file() and not JUNK & set(p.relative_to(ROOT).parts) and p.suffix != ".pyc"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    pytest.importorskip("build", reason="the build frontend comes with the test extra (pip install '.[test]')")
    copy = tmp_path_factory.mktemp("release") / "sglang-lsp"
    for rel in _checkout_files():
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, copy / rel)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(["bash", "-e", "-c", _build_step()], cwd=copy, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return copy / "dist", proc.stdout + proc.stderr


def test_one_sdist_and_one_wheel(built):
    dist, _ = built
    assert sorted(p.name for p in dist.iterdir()) == [f"sglang_lsp-{VERSION}-py3-none-any.whl",
                                                      f"sglang_lsp-{VERSION}.tar.gz"]


def test_the_wheel_is_built_from_the_sdist(built):
    # build's own account of what it did (build is pinned in the test extra and the workflow)
    _, log = built
    assert "Building sdist..." in log and "Building wheel from sdist" in log


def _wheel(dist: Path) -> zipfile.ZipFile:
    return zipfile.ZipFile(dist / f"sglang_lsp-{VERSION}-py3-none-any.whl")


def test_wheel_holds_the_package_queries_rules_and_catalogs(built):
    dist, _ = built
    names = set(_wheel(dist).namelist())
    expected = {"sglang_lsp/" + p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*")
                if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}
    expected |= {"sglang_lsp/grammar_queries/" + p.relative_to(ROOT / "grammar_queries").as_posix()
                 for p in (ROOT / "grammar_queries").rglob("*.scm")}
    assert expected - names == set()
    # the kinds of data the checks cannot run without, counted so an empty glob cannot pass
    for prefix, suffix in (("sglang_lsp/grammar_queries/", ".scm"), ("sglang_lsp/kb/rules/", ".json"),
                           ("sglang_lsp/rules/docs/", ".md"), ("sglang_lsp/catalog/data/catalogs/", ".json")):
        assert any(n.startswith(prefix) and n.endswith(suffix) for n in names), prefix
    # nothing but the package and its metadata
    assert {n.split("/")[0] for n in names} == {"sglang_lsp", f"sglang_lsp-{VERSION}.dist-info"}


def test_wheel_metadata(built):
    dist, _ = built
    wheel = _wheel(dist)
    info = f"sglang_lsp-{VERSION}.dist-info"
    meta = Parser().parsestr(wheel.read(f"{info}/METADATA").decode())
    assert meta["Name"] == "sglang-lsp" and meta["Version"] == VERSION
    assert meta["Requires-Python"] == PYPROJECT["project"]["requires-python"]
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert urls["Repository"] == REPOSITORY_URL
    assert meta.get_payload().startswith("# sglang-lsp")  # the README is the long description
    entry_points = wheel.read(f"{info}/entry_points.txt").decode()
    assert "sglang-lsp = sglang_lsp.cli.main:run" in entry_points


def test_sdist_holds_what_the_wheel_and_the_tests_are_built_from(built):
    dist, _ = built
    with tarfile.open(dist / f"sglang_lsp-{VERSION}.tar.gz") as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    for rel in ("pyproject.toml", "README.md", "PKG-INFO", "server/sglang_lsp/__init__.py",
                "server/sglang_lsp/kb/index.json", "grammar_queries/bash/script.scm", "tests/conftest.py",
                ".github/workflows/release.yml", "action.yml", ".pre-commit-hooks.yaml", "editors/vscode/package.json"):
        assert rel in names, rel
    assert not any(part in JUNK for n in names for part in n.split("/")), "caches or build output in the sdist"
