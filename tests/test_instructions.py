"""Instructions that must work verbatim on a fresh machine, from a clone of this repository.

The shell commands of the README's Quick start and of the editors' READMEs are read out of their
code blocks and followed, each block from the repository root, keeping track of `cd`; what can be
checked without the network is checked: directories and files exist where a command expects
them (after its `cd`), `npm run` names a script of the package.json there, `code
--install-extension` names the file the preceding `npm run package` writes, `sglang-lsp`
arguments parse, `pip install` installs something that exists (this checkout, a path to a
clone, a git URL) and never the name `sglang-lsp`, which is not on PyPI. A command without a
check here fails the test, so a new instruction gets one.

Beyond the blocks: no document or editor file tells anyone to `pip install sglang-lsp`; every
GitHub URL of sglang-lsp is under the one repository URL (pyproject's [project.urls]); a release
tag is named only if it exists; the Neovim snippets' paths exist in the clone; the README's
pre-commit snippet names hooks this repository defines.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from sglang_lsp import REPOSITORY_URL
from sglang_lsp.cli.main import build_parser

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

# how the documents write the clone and the values a reader fills in
CLONE_PLACEHOLDERS = ("/path/to/sglang-lsp", "~/src/sglang-lsp")
GIT_PLACEHOLDER = re.compile(r"git\+(URL|https://\S+?)@(COMMIT|[0-9a-f]{7,40})")

# documents and editor files that instruct users (not package-lock.json, not test workspaces)
INSTRUCTION_FILES = sorted(
    [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), ROOT / "examples" / "README.md"]
    + [p for p in (ROOT / "editors").rglob("*")
       if p.is_file() and p.suffix in {".md", ".lua", ".el", ".toml", ".json", ".ts"}
       and "node_modules" not in p.parts and p.name != "package-lock.json" and "e2e" not in p.parts]
)


# --- reading the documents ----------------------------------------------------------------------

def _fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of each fenced code block, indented ones (in a list item) dedented."""
    blocks = []
    for m in re.finditer(r"^([ \t]*)```(\w*)[^\n]*\n(.*?)^\1```", text, re.MULTILINE | re.DOTALL):
        indent = m.group(1)
        body = "".join(line[len(indent):] if line.startswith(indent) else line
                       for line in m.group(3).splitlines(keepends=True))
        blocks.append((m.group(2), body))
    return blocks


def _section(text: str, heading: str) -> str:
    m = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert m, f"no section '## {heading}'"
    return m.group(1)


def _shell_blocks() -> list[tuple[str, str]]:
    """(where, body) of the shell blocks under test."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    out = [(f"README.md Quick start #{i}", body)
           for i, (lang, body) in enumerate(_fenced_blocks(_section(readme, "Quick start")))
           if lang in {"console", "bash", "sh", "shell"}]
    for doc in sorted((ROOT / "editors").rglob("README.md")):
        if "node_modules" in doc.parts:
            continue
        for i, (lang, body) in enumerate(_fenced_blocks(doc.read_text(encoding="utf-8"))):
            if lang in {"console", "bash", "sh", "shell"}:
                out.append((f"{doc.relative_to(ROOT)} #{i}", body))
    return out


def _commands(body: str) -> list[list[str]]:
    """The simple commands of a block: continuation lines joined, comments dropped, `&&`, `||` and
    `;` separating commands."""
    commands = []
    for line in body.replace("\\\n", " ").splitlines():
        current: list[str] = []
        for token in shlex.split(line, comments=True):
            if token in {"&&", "||", ";"}:
                commands.append(current)
                current = []
            else:
                current.append(token)
        if current:
            commands.append(current)
    return [c for c in commands if c]


# --- following the commands ---------------------------------------------------------------------

@dataclass
class Session:
    """A shell that follows a block's commands from the repository root, checking each."""

    where: str
    cwd: Path = ROOT
    built: dict[Path, str] = field(default_factory=dict)  # files the commands so far have written

    def fail(self, command: list[str], why: str):
        pytest.fail(f"{self.where}: `{shlex.join(command)}` (in {self.cwd.relative_to(ROOT) or '.'}): {why}")

    def run(self, command: list[str]):
        while command and re.match(r"^[A-Za-z_]\w*=", command[0]):  # env prefix: VAR=value cmd
            command = command[1:]
        name = command[0]
        if name == "cd":
            target = (self.cwd / command[1]).resolve()
            if not target.is_dir():
                self.fail(command, "no such directory")
            self.cwd = target
        elif name == "pip" or name.endswith("/pip") or command[:3] in (["python", "-m", "pip"], ["python3", "-m", "pip"]):
            self.pip(command)
        elif name == "sglang-lsp":
            self.sglang_lsp(command)
        elif command[:3] == ["python", "-m", "pytest"]:
            config = tomllib.loads((self.cwd / "pyproject.toml").read_text(encoding="utf-8"))
            paths = config["tool"]["pytest"]["ini_options"]["testpaths"]
            if not all((self.cwd / p).is_dir() for p in paths):
                self.fail(command, f"the test paths {paths} do not exist")
        elif name == "npm":
            self.npm(command)
        elif name == "code" and command[1] == "--install-extension":
            vsix = (self.cwd / command[2]).resolve()
            if vsix not in self.built:
                written = ", ".join(str(p.relative_to(ROOT)) for p in self.built) or "nothing"
                self.fail(command, f"{vsix.relative_to(ROOT) if vsix.is_relative_to(ROOT) else vsix} is not "
                                   f"written by the commands before it (they write: {written})")
        elif "/" in name:  # a script of the repository
            script = self.cwd / name
            if not (script.is_file() and os.access(script, os.X_OK)):
                self.fail(command, "no such executable file")
        else:
            self.fail(command, "no check for this command: add one to tests/test_instructions.py")

    def pip(self, command: list[str]):
        args = command[command.index("install") + 1:]
        requirements = [a for a in args if not a.startswith("-")]
        if not requirements:
            self.fail(command, "installs nothing")
        for req in requirements:
            if req.startswith("git+"):
                if not GIT_PLACEHOLDER.fullmatch(req):
                    self.fail(command, f"{req}: a git URL is git+URL@COMMIT")
                continue
            base, extras = re.fullmatch(r"([^\[]*)(?:\[([\w,-]+)\])?", req).groups()
            clone = next((p for p in CLONE_PLACEHOLDERS if base == p), None)
            if clone:
                project_dir = ROOT  # this checkout stands for the reader's clone
            elif base.startswith((".", "/")):
                project_dir = (self.cwd / base).resolve()
            else:
                self.fail(command, f"{req!r} is a package name: sglang-lsp is not published on PyPI, install "
                                   "a clone's path or git+URL@COMMIT")
            pyproject = project_dir / "pyproject.toml"
            if not pyproject.is_file():
                self.fail(command, f"{base}: no pyproject.toml there")
            project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
            if project["name"] != "sglang-lsp":
                self.fail(command, f"{base} is {project['name']}, not sglang-lsp")
            missing = set(filter(None, (extras or "").split(","))) - set(project.get("optional-dependencies", {}))
            if missing:
                self.fail(command, f"no extra {sorted(missing)} in pyproject.toml")

    def sglang_lsp(self, command: list[str]):
        try:
            args = build_parser().parse_args(command[1:])
        except SystemExit:
            self.fail(command, "sglang-lsp rejects these arguments")
        for path in getattr(args, "paths", None) or []:
            if path != "-" and not (self.cwd / path).exists():
                self.fail(command, f"{path} does not exist")

    def npm(self, command: list[str]):
        package_json = self.cwd / "package.json"
        if not package_json.is_file():
            self.fail(command, "no package.json here")
        verb, rest = command[1], [a for a in command[2:] if not a.startswith("-")]
        if verb == "ci":
            if not (self.cwd / "package-lock.json").is_file():
                self.fail(command, "npm ci needs a package-lock.json")
        elif verb == "run":
            import json

            scripts = json.loads(package_json.read_text(encoding="utf-8"))["scripts"]
            if rest[0] not in scripts:
                self.fail(command, f"no script {rest[0]!r} in package.json")
            out = re.search(r"--out (\S+)", scripts[rest[0]])
            if out:
                self.built[(self.cwd / out.group(1)).resolve()] = rest[0]
        else:
            self.fail(command, f"no check for npm {verb}")


BLOCKS = _shell_blocks()


def test_the_documents_have_shell_instructions():
    where = {w.split(" #")[0] for w, _ in BLOCKS}
    assert {"README.md Quick start", "editors/vscode/README.md"} <= where
    assert sum(len(_commands(body)) for _, body in BLOCKS) >= 15


@pytest.mark.parametrize("where,body", BLOCKS, ids=[w for w, _ in BLOCKS])
def test_shell_block_works_verbatim(where, body):
    session = Session(where)
    for command in _commands(body):
        session.run(command)


@pytest.mark.parametrize("body,why", [
    ("cd editors/vscode && npm ci && npm run package\ncode --install-extension editors/vscode/sglang-lsp.vsix",
     "is not written by the commands before it"),
    ("pip install sglang-lsp", "is a package name"),
    ("pip install '.[tests]'", "no extra ['tests']"),
    ("cd editors/vscod", "no such directory"),
    ("cd editors/vscode && npm run bundle", "no script 'bundle'"),
    ("sglang-lsp check --formatt json examples/", "rejects these arguments"),
    ("sglang-lsp check exampels/", "does not exist"),
    ("pip install git+https://github.com/x/sglang-lsp", "a git URL is git+URL@COMMIT"),
    ("make install", "no check for this command"),
])
def test_broken_instructions_are_caught(body, why):
    """The checks above can fail: each of these is a mistake a document could make."""
    with pytest.raises(pytest.fail.Exception, match=re.escape(why)):
        session = Session("example")
        for command in _commands(body):
            session.run(command)


# --- beyond the shell blocks -------------------------------------------------------------------

_PIP_INSTALL = re.compile(r"pip install\s+(?:-\S+\s+)*(['\"]?)(?P<req>[^\s'\"`]+)\1")


def test_no_instruction_installs_sglang_lsp_from_pypi():
    """Every `pip install …` in the documents, the editor configs and the extension installs a
    path or a git URL. Once sglang-lsp is on PyPI, this and the extension's prompt change."""
    found = []
    for path in INSTRUCTION_FILES:
        for m in _PIP_INSTALL.finditer(path.read_text(encoding="utf-8")):
            req = m.group("req")
            if re.match(r"sglang-lsp(?![\w/.-])", req):
                line = path.read_text(encoding="utf-8")[:m.start()].count("\n") + 1
                found.append(f"{path.relative_to(ROOT)}:{line}: pip install {req}")
    assert found == []
    assert sum(1 for p in INSTRUCTION_FILES for _ in _PIP_INSTALL.finditer(p.read_text(encoding="utf-8"))) >= 5


def test_the_extension_offers_no_package_name_to_install():
    source = (ROOT / "editors" / "vscode" / "src" / "install.ts").read_text(encoding="utf-8")
    box = re.search(r"showInputBox\(\{(.*?)\}\);", source, re.DOTALL).group(1)
    assert "value: 'sglang-lsp'" not in box
    assert re.search(r"value: checkoutInWorkspace\(\) \?\? ''", box)
    assert "/path/to/sglang-lsp" in box


def _text_files() -> list[Path]:
    proc = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                          capture_output=True)
    if proc.returncode == 0:
        files = [ROOT / f for f in proc.stdout.decode().split("\0") if f]
    else:
        files = [p for p in ROOT.rglob("*") if "node_modules" not in p.parts and ".git" not in p.parts]
    return [p for p in files if p.is_file() and p.suffix in {".md", ".py", ".ts", ".mjs", ".lua", ".el", ".toml",
                                                                ".json", ".yml", ".yaml", ""}
            and p.stat().st_size < 2_000_000 and "node_modules" not in p.parts
            and p.relative_to(ROOT).parts[0] != "tests"]  # tests hold wrong URLs on purpose


def test_every_repository_link_is_the_one_url():
    pattern = re.compile(r"https?://github\.com/[\w.-]+/sglang-lsp\b[^\s'\"`)>\]]*")
    wrong = []
    for path in _text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for m in pattern.finditer(text):
            if not (m.group(0) + "/").startswith(REPOSITORY_URL + "/"):
                wrong.append(f"{path.relative_to(ROOT)}: {m.group(0)}")
    assert wrong == []


def _release_tags() -> set[str]:
    proc = subprocess.run(["git", "-C", str(ROOT), "tag", "--list"], capture_output=True, text=True)
    return set(proc.stdout.split()) if proc.returncode == 0 else set()


def test_release_tags_named_in_instructions_exist():
    tags = _release_tags()
    named = []
    for path in INSTRUCTION_FILES + [ROOT / ".pre-commit-hooks.yaml", ROOT / "action.yml"]:
        text = path.read_text(encoding="utf-8")
        named += [(path, t) for t in re.findall(r"(?:rev:\s*|sglang-lsp@)(v\d+(?:\.\d+)*)", text)]
    assert [f"{p.relative_to(ROOT)}: {t}" for p, t in named if t not in tags] == []


def test_readme_pre_commit_snippet():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    configs = [yaml.safe_load(b) for lang, b in _fenced_blocks(readme) if lang == "yaml" and "repos:" in b]
    (config,) = configs
    hooks = {h["id"] for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}
    (repo,) = config["repos"]
    assert repo["repo"] in CLONE_PLACEHOLDERS  # this checkout is what tests/test_precommit.py installs hooks from
    assert repo["rev"] == "COMMIT" or repo["rev"] in _release_tags()
    assert {h["id"] for h in repo["hooks"]} <= hooks


def test_neovim_snippets_name_paths_of_the_clone():
    """The Lua in the Neovim README: paths under the clone exist, `vim.lsp.enable` names a config
    of editors/nvim/lsp/, and no plugin spec names a GitHub repository by `owner/name`."""
    text = (ROOT / "editors" / "nvim" / "README.md").read_text(encoding="utf-8")
    lua = "\n".join(body for lang, body in _fenced_blocks(text) if lang == "lua")
    clone_paths = re.findall(r"'~/src/sglang-lsp(/[^']*)?'", lua)
    plugin_paths = re.findall(r"plugin\.dir \.\. '(/[^']*)'", lua)
    assert clone_paths and plugin_paths
    for sub in clone_paths + plugin_paths:
        assert (ROOT / sub.lstrip("/")).exists(), sub
    for name in re.findall(r"vim\.lsp\.enable\('(\w+)'\)", lua):
        assert (ROOT / "editors" / "nvim" / "lsp" / f"{name}.lua").is_file(), name
    assert not re.search(r"^\s*'[\w.-]+/[\w.-]+',\s*$", lua, re.MULTILINE), "a lazy.nvim GitHub shorthand"
