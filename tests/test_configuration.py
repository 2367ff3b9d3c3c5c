"""Configuration files (.sglang-lsp.toml / [tool.sglang-lsp]), the precedence chain, rule
selection levels and severity overrides (docs/configuration.md)."""

from __future__ import annotations

import io
import json
import textwrap
from pathlib import Path

import pytest

from sglang_lsp.config import project as project_config
from sglang_lsp.cli.main import main
from sglang_lsp.base.document import Document
from sglang_lsp.engine.check import Options, check_document
from sglang_lsp.base.findings import Severity
from sglang_lsp.context.precedence import LaunchContext, Origin
from sglang_lsp.config.discovery import ConfigError, invalidate
from sglang_lsp.config.project import glob_match
from sglang_lsp.config.selection import Selection, selected, severity_for

# SGL107 fires for --quantization w8a8_int8 on an AMD GPU only: a probe for which GPU won
AMD_ONLY = "python -m sglang.launch_server --model-path /models/x --quantization w8a8_int8\n"


@pytest.fixture(autouse=True)
def fresh_cache():
    invalidate()
    yield
    invalidate()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def run(capsys, *argv) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def concise(capsys, *argv) -> tuple[int, list[str], str]:
    rc, out, err = run(capsys, "check", "--format", "concise", *argv)
    return rc, out.splitlines(), err


# --- discovery ------------------------------------------------------------------------------


def test_nearest_configuration_wins_entirely(tmp_path):
    write(tmp_path / "pyproject.toml", """
        [tool.sglang-lsp]
        gpu = "MI300X"
        ignore = ["SGL007"]
    """)
    write(tmp_path / "sub" / ".sglang-lsp.toml", 'gpu = "H100"\n')
    top = project_config.discover(str(tmp_path / "a.sh")).for_file(str(tmp_path / "a.sh"))
    sub = project_config.discover(str(tmp_path / "sub" / "b.sh")).for_file(str(tmp_path / "sub" / "b.sh"))
    assert top.value("gpu")[0] == "MI300X" and top.selections == (Selection(None, (), ("SGL007",)),)
    assert sub.value("gpu")[0] == "H100" and sub.selections == ()  # the top file's ignore does not reach here
    assert sub.value("gpu")[1] == Origin("config", str(tmp_path / "sub" / ".sglang-lsp.toml"), 1, "gpu")


def test_pyproject_without_the_table_is_passed_over_and_dotfile_comes_first(tmp_path):
    write(tmp_path / ".sglang-lsp.toml", 'gpu = "B200"\n')
    write(tmp_path / "proj" / "pyproject.toml", '[project]\nname = "x"\n')
    cfg = project_config.discover(str(tmp_path / "proj" / "run.sh"))
    assert cfg.path == str(tmp_path / ".sglang-lsp.toml")
    write(tmp_path / "both" / "pyproject.toml", '[tool.sglang-lsp]\ngpu = "H100"\n')
    write(tmp_path / "both" / ".sglang-lsp.toml", 'gpu = "H200"\n')
    assert project_config.discover(str(tmp_path / "both" / "x.sh")).path.endswith(".sglang-lsp.toml")


def test_extend_layers_the_nearest_file_over_its_base(tmp_path):
    write(tmp_path / ".sglang-lsp.toml", """
        gpu = "H100"
        sglang-version = "0.5.23"
        ignore = ["SGL007"]
        exclude = ["build"]
        [severity]
        SGL001 = "warning"
    """)
    write(tmp_path / "amd" / ".sglang-lsp.toml", """
        extend = "../.sglang-lsp.toml"
        gpu = "MI355X"
        extend-exclude = ["old"]
        [severity]
        SGL001 = "info"
    """)
    cfg = project_config.discover(str(tmp_path / "amd" / "x.sh"))
    fs = cfg.for_file(str(tmp_path / "amd" / "x.sh"))
    assert fs.value("gpu")[0] == "MI355X" and fs.value("sglang-version")[0] == "0.5.23"
    assert fs.selections == (Selection(None, (), ("SGL007",)),)
    assert severity_for("SGL001", fs.severity)[0] == Severity.INFO
    assert cfg.excluded(str(tmp_path / "build" / "a.sh")) and cfg.excluded(str(tmp_path / "amd" / "old" / "b.sh"))
    write(tmp_path / "amd" / ".sglang-lsp.toml", 'extend = ".sglang-lsp.toml"\n')
    invalidate()
    with pytest.raises(ConfigError, match="cycle"):
        project_config.discover(str(tmp_path / "amd" / "x.sh"))


def test_overrides_apply_to_matching_files_in_order(tmp_path):
    write(tmp_path / "pyproject.toml", """
        [tool.sglang-lsp]
        gpu = "H100"

        [[tool.sglang-lsp.overrides]]
        files = ["deploy/amd/**"]
        gpu = "MI355X"
        ignore = ["SGL019"]
        severity = { SGL107 = "warning" }

        [[tool.sglang-lsp.overrides]]
        files = ["*.yaml"]
        extend-select = ["SGL042"]
    """)
    cfg = project_config.discover(str(tmp_path / "x.sh"))
    amd = cfg.for_file(str(tmp_path / "deploy" / "amd" / "run.yaml"))
    assert amd.value("gpu") == ("MI355X", Origin("config", str(tmp_path / "pyproject.toml"), 6, "overrides[0].gpu"))
    assert amd.selections == (Selection(None, (), ("SGL019",)), Selection(None, ("SGL042",), ()))
    other = cfg.for_file(str(tmp_path / "deploy" / "nv" / "run.sh"))
    assert other.value("gpu")[0] == "H100" and other.selections == ()


@pytest.mark.parametrize("pattern, path, expected", [
    ("build", "build/x.sh", True),
    ("build", "src/build/x.sh", True),
    ("build", "builder/x.sh", False),
    ("*.gen.yaml", "a/b/c.gen.yaml", True),
    ("deploy/amd/**", "deploy/amd/a/b.yaml", True),
    ("deploy/amd/**", "deploy/nv/a.yaml", False),
    ("deploy/amd", "deploy/amd/a.yaml", True),
    ("deploy/*.sh", "deploy/a.sh", True),
    ("deploy/*.sh", "deploy/x/a.sh", False),
    ("**/legacy/*.sh", "a/b/legacy/x.sh", True),
    ("**/legacy/*.sh", "legacy/x.sh", True),
    ("./examples/old.sh", "examples/old.sh", True),
    ("examples/old.sh", "other/examples/old.sh", False),
])
def test_globs(tmp_path, pattern, path, expected):
    assert glob_match(pattern, str(tmp_path / path), str(tmp_path)) is expected


@pytest.mark.parametrize("text, fragment", [
    ('slect = ["SGL1"]\n', ":1: `slect`: unknown key; did you mean `select`?"),
    ('model_search_paths = ["m"]\n', "`model_search_paths`: unknown key; did you mean `model-search-paths`?"),
    ('gpu = "H1000"\n', "`gpu`: unknown GPU `H1000`; did you mean `H100`?"),
    ('gpu = 100\n', "`gpu`: must be a string, not an integer"),
    ('select = "SGL1"\n', "`select`: must be a list of strings, not a string"),
    ('ignore = ["E501"]\n', "`ignore`: `E501` is not a rule code or prefix"),
    ('ignore = ["SGL999"]\n', "`ignore`: no rule code starts with `SGL999`"),
    ('sglang-version = "0.1.0"\n', "`sglang-version`: no flag catalog for sglang '0.1.0': known releases are 0.4.0"),
    ('gpu = "H100"\n[severity]\nSGL001 = "warn"\n', ":3: `severity.SGL001`: `warn` is not a severity (one of error, warning, info, hint); "
                                        "did you mean `warning`?"),
    ('[[overrides]]\ngpu = "H100"\n', ":1: `overrides[0]`: needs `files`, a list of globs"),
    ('[[overrides]]\nfiles = ["a"]\nfile = 1\n', ":3: `overrides[0].file`: unknown key; did you mean `files`?"),
    ('extend = "nope.toml"\n', "`extend`: `nope.toml` does not exist"),
    ('gpu = "H100\n', "not valid TOML"),
])
def test_invalid_configuration_names_file_line_and_key(tmp_path, text, fragment):
    cfg = write(tmp_path / ".sglang-lsp.toml", text)
    with pytest.raises(ConfigError) as info:
        project_config.discover(str(tmp_path / "x.sh"))
    assert str(cfg) in str(info.value) and fragment in str(info.value)


def test_pyproject_errors_name_the_tool_table(tmp_path):
    write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n\n[tool.sglang-lsp]\ngpu = "H100"\nselec = []\n')
    with pytest.raises(ConfigError, match=r"pyproject.toml:6: `tool.sglang-lsp.selec`: unknown key"):
        project_config.discover(str(tmp_path / "x.sh"))


def test_cache_is_per_directory_and_follows_edits(tmp_path):
    cfg = write(tmp_path / ".sglang-lsp.toml", 'gpu = "H100"\n')
    first = project_config.discover(str(tmp_path / "a" / "x.sh"))
    assert project_config.discover(str(tmp_path / "a" / "y.sh")) is first  # parsed once
    cfg.write_text('gpu = "B200"\n# longer now\n')
    assert project_config.discover(str(tmp_path / "a" / "x.sh")).values[0][1] == "B200"
    # a new, nearer file needs invalidate() (the language server calls it on a watched change)
    write(tmp_path / "a" / ".sglang-lsp.toml", 'gpu = "H200"\n')
    assert project_config.discover(str(tmp_path / "a" / "x.sh")).values[0][1] == "B200"
    invalidate()
    assert project_config.discover(str(tmp_path / "a" / "x.sh")).values[0][1] == "H200"


# --- selection and severity -----------------------------------------------------------------


def test_selection_levels_work_like_ruff():
    config = Selection(("SGL1",), (), ("SGL107",))
    assert selected("SGL101", [config]) and not selected("SGL107", [config]) and not selected("SGL001", [config])
    assert selected("SGL107", [config, Selection(("SGL107",))])  # a later `select` starts over
    assert selected("SGL001", [config, Selection(None, ("SGL0",))])  # extend-select adds
    assert not selected("SGL101", [config, Selection(None, (), ("SGL10",))])
    assert selected("SGL003", [Selection(None, ("SGL003",), ("SGL0",))])  # most specific entry decides


def test_severity_override_changes_output_and_exit_code(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "run.sh", "python -m sglang.launch_server --model-path /m --bogus 1 --tp 2\n")
    rc, lines, _ = concise(capsys, "run.sh")
    assert rc == 1 and lines[0].startswith("run.sh:1:48: error SGL001")
    write(tmp_path / ".sglang-lsp.toml", '[severity]\nSGL001 = "warning"\nSGL0 = "info"\n')
    rc, lines, _ = concise(capsys, "run.sh")
    assert rc == 0
    assert [l.split()[1:3] for l in lines] == [["warning", "SGL001"], ["info", "SGL007"]]
    rc, _, _ = concise(capsys, "run.sh", "--fail-on", "warning")
    assert rc == 1
    rc, out, _ = run(capsys, "check", "--format", "json", "run.sh")
    assert [d["severity"] for d in json.loads(out)["diagnostics"]] == ["warning", "info"]


def test_cli_flags_config_file_isolated_and_exclude(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "pyproject.toml", """
        [tool.sglang-lsp]
        ignore = ["SGL007"]
        exclude = ["generated"]
    """)
    script = "python -m sglang.launch_server --model-path /m --bogus 1 --tp 2\n"
    write(tmp_path / "a.sh", script)
    write(tmp_path / "generated" / "b.sh", script)
    rc, lines, _ = concise(capsys, ".")
    assert [l.split(":")[0] for l in lines] == ["a.sh"] and "SGL007" not in " ".join(lines)
    rc, lines, _ = concise(capsys, "generated/b.sh")  # named explicitly: checked
    assert lines and lines[0].startswith("generated/b.sh")
    rc, lines, _ = concise(capsys, ".", "--isolated")
    assert {l.split(":")[0] for l in lines} == {"a.sh", "generated/b.sh"} and "SGL007" in " ".join(lines)
    rc, lines, _ = concise(capsys, "a.sh", "--select", "SGL007")  # the command line starts over
    assert [l.split()[2] for l in lines] == ["SGL007"]
    other = write(tmp_path / "elsewhere.toml", 'ignore = ["SGL001"]\n')
    rc, lines, _ = concise(capsys, "a.sh", "--config-file", str(other))
    assert [l.split()[2] for l in lines] == ["SGL007"]
    rc, _, err = run(capsys, "check", "a.sh", "--config-file", "missing.toml")
    assert rc == 2 and "missing.toml: no such configuration file" in err
    with pytest.raises(SystemExit) as exited:
        main(["check", "a.sh", "--config-file", str(other), "--isolated"])
    assert exited.value.code == 2 and "not allowed with" in capsys.readouterr().err


def test_resolve_walks_past_excluded_files_as_check_does(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "pyproject.toml", """
        [tool.sglang-lsp]
        exclude = ["generated"]
    """)
    script = "python -m sglang.launch_server --model-path /m --tp 2\n"
    write(tmp_path / "a.sh", script)
    write(tmp_path / "generated" / "b.sh", script)
    rc, out, _ = run(capsys, "resolve", "--format", "json", ".")
    assert rc == 0 and [l["path"] for l in json.loads(out)["launches"]] == ["a.sh"]
    rc, out, _ = run(capsys, "resolve", "--format", "json", "generated/b.sh")  # named explicitly: resolved
    assert rc == 0 and [l["path"] for l in json.loads(out)["launches"]] == ["generated/b.sh"]
    write(tmp_path / "pyproject.toml", "[tool.sglang-lsp]\nexclude = 3\n")
    rc, out, err = run(capsys, "resolve", ".")
    assert rc == 2 and out == "" and "Traceback" not in err and "exclude" in err


def test_invalid_configuration_is_exit_2_without_traceback(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "a.sh", AMD_ONLY)
    write(tmp_path / ".sglang-lsp.toml", 'gpu = "H1000"\nsever = {}\n')
    rc, out, err = run(capsys, "check", "a.sh")
    assert rc == 2 and out == ""
    assert "Traceback" not in err
    assert f"sglang-lsp: error: {tmp_path / '.sglang-lsp.toml'}:1: `gpu`: unknown GPU `H1000`" in err
    assert ":2: `sever`: unknown key; did you mean `severity`?" in err
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(AMD_ONLY.encode())))
    rc, _, err = run(capsys, "check", "-", "--stdin-filename", "x.sh")
    assert rc == 2 and "unknown GPU" in err


# --- precedence -----------------------------------------------------------------------------


def codes_for(text: str, path: Path, **options) -> set[str]:
    doc = Document(text, str(path), "shell")
    return {f.code for f in check_document(doc, Options(**options)).findings}


def test_precedence_cli_over_directive_over_config(tmp_path):
    write(tmp_path / ".sglang-lsp.toml", 'gpu = "MI300X"\n')
    path = tmp_path / "run.sh"
    fs = project_config.discover(str(path)).for_file(str(path))
    directive_nv = "# sglang-lsp: gpu=H100\n" + AMD_ONLY
    directive_amd = "# sglang-lsp: gpu=MI300X\n" + AMD_ONLY
    assert "SGL107" not in codes_for(AMD_ONLY, path)  # unknown GPU: quiet
    assert "SGL107" in codes_for(AMD_ONLY, path, project=fs)  # configuration file
    assert "SGL107" not in codes_for(directive_nv, path, project=fs)  # directive beats configuration
    assert "SGL107" in codes_for(directive_amd, path, gpu="MI300X")
    assert "SGL107" not in codes_for(directive_amd, path, gpu="H100", project=fs)  # CLI beats directive


def test_resolved_values_keep_their_origin(tmp_path):
    write(tmp_path / ".sglang-lsp.toml", 'gpu = "MI300X"\nsglang-version = "0.5.23"\n')
    path = tmp_path / "run.sh"
    fs = project_config.discover(str(path)).for_file(str(path))
    text = "#!/bin/bash\n# sglang-lsp: gpu=H100\n" + AMD_ONLY
    result = check_document(Document(text, str(path), "shell"), Options(project=fs))
    at = result.invocations[0].span.start
    gpu = result.context.resolve("gpu", at)
    assert (gpu.value, gpu.origin) == ("H100", Origin("directive", str(path), 2, "gpu=H100"))
    assert gpu.scope is not None  # right before the command: scoped to it
    version = result.context.resolve("sglang-version", at)
    assert version.origin == Origin("config", str(tmp_path / ".sglang-lsp.toml"), 2, "sglang-version")
    assert [v.origin.kind for v in result.context.candidates("gpu", at)] == ["directive", "config"]
    assert result.context.resolve("model", at) is None  # nothing says: unknown
    setting = check_document(Document(text, str(path), "shell"), Options(gpu="B200", origin="setting", project=fs))
    assert setting.context.resolve("gpu", at).origin == Origin("setting", detail="gpu")


def test_inferred_level_sits_between_directive_and_configuration():
    ctx = LaunchContext()
    ctx.add("gpu", "H100", Origin("config", "/p/.sglang-lsp.toml", 1, "gpu"))
    assert ctx.resolve("gpu", 50).value == "H100"
    ctx.infer("gpu", "MI355X", Origin("inferred", "/p/k.yaml", 12, "image lmsysorg/sglang:v0.5.23-rocm700-mi35x"),
              scope=project_span(40, 90))
    assert ctx.resolve("gpu", 50).value == "MI355X"  # inferred for this pod template beats the configuration
    assert ctx.resolve("gpu", 100).value == "H100"  # another document: not in scope
    ctx.add("gpu", "B200", Origin("directive", "/p/k.yaml", 1, "gpu=B200"))  # a file-wide directive
    assert ctx.resolve("gpu", 50).value == "B200"
    ctx.add("gpu", "H200", Origin("cli", detail="--gpu"))
    assert ctx.resolve("gpu", 50).value == "H200"
    with pytest.raises(ValueError):
        ctx.infer("gpu", "H100", Origin("config"))
    assert "inferred from this file" in ctx.candidates("gpu", 50)[2].origin.describe()


def test_scoped_value_beats_file_wide_one_at_the_same_level():
    ctx = LaunchContext()
    ctx.add("gpu", "B200", Origin("directive", None, 1))
    ctx.add("gpu", "H100", Origin("directive", None, 5), scope=project_span(10, 20))
    ctx.add("gpu", "H200", Origin("directive", None, 30))  # later file-wide one
    assert ctx.resolve("gpu", 15).value == "H100"
    assert ctx.resolve("gpu", 25).value == "H200"


def project_span(start: int, end: int):
    from sglang_lsp.base.findings import Span

    return Span(start, end)


def test_model_search_paths_are_relative_to_the_configuration(tmp_path):
    write(tmp_path / "conf" / ".sglang-lsp.toml", 'model-search-paths = ["../models", "~/m"]\n')
    cfg = project_config.discover(str(tmp_path / "conf" / "x.sh"))
    assert cfg.model_search_paths[0] == str(tmp_path / "models")
    assert not cfg.model_search_paths[1].startswith("~")


@pytest.mark.parametrize("doc", ["docs/configuration.md", "README.md"])
def test_configuration_examples_in_the_docs_are_valid(tmp_path, doc):
    import re

    text = (Path(__file__).resolve().parents[1] / doc).read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```toml\n(.*?)```", text, re.S) if "[tool.sglang-lsp]" in b]
    assert blocks
    for block in blocks:
        write(tmp_path / "pyproject.toml", block)
        invalidate()
        cfg = project_config.discover(str(tmp_path / "x.sh"))
        assert cfg is not None and cfg.values


MANIFEST_ON_H100 = """\
apiVersion: v1
kind: Pod
metadata: {name: s}
spec:
  nodeSelector:
    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
  containers:
  - name: s
    image: lmsysorg/sglang:v0.5.10-cu129
    command: ["python3", "-m", "sglang.launch_server", "--model-path", "m"]
"""


def test_the_whole_chain_with_values_inferred_from_a_manifest(tmp_path):
    """CLI/setting > directive > inferred (node selector, image tag) > configuration file, end
    to end: the inferred values enter the same chain as the others, scoped to their launch."""
    write(tmp_path / ".sglang-lsp.toml", 'gpu = "B200"\nsglang-version = "0.5.23"\n')
    path = tmp_path / "pod.yaml"
    fs = project_config.discover(str(path)).for_file(str(path))

    def target(text: str, **options):
        result = check_document(Document(text, str(path), "yaml"), Options(project=fs, **options))
        inv = result.invocations[0]
        gpu = result.context.resolve("gpu", inv.span.start)
        return gpu.value, gpu.origin.kind, result.parsed[0].catalog.sglang_version

    # the file itself beats the configuration file, for the GPU and for the release
    assert target(MANIFEST_ON_H100) == ("H100", "inferred", "0.5.10")
    # a directive beats what the file suggests
    pinned = "# sglang-lsp: gpu=MI300X sglang=0.5.23\n" + MANIFEST_ON_H100
    assert target(pinned) == ("MI300X", "directive", "0.5.23")
    # the command line beats the directive
    assert target(pinned, gpu="GB200", sglang_version="0.5.13") == ("GB200", "cli", "0.5.13")
    # nothing in the file: the configuration file
    plain = MANIFEST_ON_H100.replace("  nodeSelector:\n    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3\n", "")
    plain = plain.replace("v0.5.10-cu129", "latest")
    assert target(plain) == ("B200", "config", "0.5.23")
