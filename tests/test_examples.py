"""The bundled examples/ pin the checker's behaviour end to end.

``sglang-lsp check examples --format concise`` (run from the repository root) must print
exactly ``tests/data/examples.out``; the clean examples must produce no finding at all, and
every broken one at least one. To update the pinned output after a deliberate change::

    sglang-lsp check examples --format concise > tests/data/examples.out
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sglang_lsp.cli import main as cli
from sglang_lsp.base.document import Document, decode
from sglang_lsp.engine.check import check_document, detect_language

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
EXPECTED = ROOT / "tests" / "data" / "examples.out"

CLEAN = [
    "slurm_multinode.sbatch",
    "start_with_arrays.sh",
    "sglang_serve.sh",
    "bash_c_launch.sh",
    "serve_with_config.sh",
    "serve.yaml",
    "router.sh",
    "compose.yaml",
]
BROKEN = [
    "docker_run.sh",
    "env_prefix.sh",
    "pd_disaggregation.sh",
    "dp_attention.sh",
    "k8s_deployment.yaml",
]


def _run_cli(argv: list[str], capsys, monkeypatch) -> tuple[int, str]:
    monkeypatch.chdir(ROOT)
    code = cli.main(argv)
    return code, capsys.readouterr().out


def _check_file(name: str, monkeypatch):
    monkeypatch.chdir(ROOT)  # --config paths are shown relative to the working directory
    rel = f"examples/{name}"
    text = decode((ROOT / rel).read_bytes())
    language = detect_language(rel, text)
    assert language is not None, f"{rel} is not recognised as a file to check"
    return check_document(Document(text, rel, language))


def test_every_example_is_classified():
    on_disk = sorted(p.name for p in EXAMPLES.iterdir() if p.name != "README.md")
    assert on_disk == sorted(CLEAN + BROKEN)


def test_readme_mentions_every_example():
    readme = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    for name in CLEAN + BROKEN:
        assert f"`{name}`" in readme, name


def test_concise_output_is_pinned(capsys, monkeypatch):
    code, out = _run_cli(["check", "examples", "--format", "concise"], capsys, monkeypatch)
    expected = EXPECTED.read_text(encoding="utf-8")
    assert out == expected
    assert code == 1  # the broken examples contain errors


def test_pinned_output_names_only_broken_files():
    paths = {line.split(":", 1)[0] for line in EXPECTED.read_text(encoding="utf-8").splitlines()}
    assert paths == {f"examples/{name}" for name in BROKEN}


@pytest.mark.parametrize("name", CLEAN)
def test_clean_example_has_no_findings(name, monkeypatch):
    result = _check_file(name, monkeypatch)
    assert result.errors == []
    assert [(f.code, f.message) for f in result.findings] == []


@pytest.mark.parametrize("name", CLEAN)
def test_clean_example_passes_cli(name, capsys, monkeypatch):
    code, out = _run_cli(["check", f"examples/{name}", "--format", "concise"], capsys, monkeypatch)
    assert (code, out) == (0, "")


@pytest.mark.parametrize("name", BROKEN)
def test_broken_example_has_findings(name, monkeypatch):
    result = _check_file(name, monkeypatch)
    assert result.errors == []
    assert result.findings


def test_clean_launches_are_really_checked(monkeypatch):
    """A clean example must be clean because its flags are fine, not because the launch was
    missed: every clean shell example except the router one yields a server invocation whose
    flags are resolved."""
    for name in CLEAN:
        if name.endswith(".yaml"):
            continue
        result = _check_file(name, monkeypatch)
        kinds = [inv.kind for inv in result.invocations]
        if name == "router.sh":
            assert kinds == ["router"]
            continue
        assert "server" in kinds, name
        assert any(p.uses for p in result.parsed), name


def test_config_file_is_merged(monkeypatch):
    result = _check_file("serve_with_config.sh", monkeypatch)
    (parsed,) = result.parsed
    assert parsed.values["model_path"] == "meta-llama/Llama-3.3-70B-Instruct"
    assert parsed.values["tp_size"] == 4
    assert parsed.values["port"] is not None


def test_array_appends_are_resolved_in_document_order(monkeypatch):
    result = _check_file("start_with_arrays.sh", monkeypatch)
    (inv,) = [i for i in result.invocations if i.kind == "server"]
    flags = [w.text for w in inv.args if w.text and w.text.startswith("--")]
    assert flags == [
        "--model-path", "--tp-size", "--trust-remote-code", "--host", "--port",
        "--mem-fraction-static", "--chunked-prefill-size", "--max-running-requests",
        "--served-model-name", "--reasoning-parser", "--tool-call-parser",
    ]
    assert inv.open  # "$@" may add more


def test_concise_lines_have_the_documented_shape():
    pattern = re.compile(r"^examples/[\w.]+:\d+:\d+: (error|warning|info|hint) SGL\d{3} .+$")
    for line in EXPECTED.read_text(encoding="utf-8").splitlines():
        assert pattern.match(line), line
