"""The `sglang-lsp` command line: formats, the JSON contract, exit codes, file discovery."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sglang_lsp import __version__
from sglang_lsp.cli.main import main

BROKEN = (
    "#!/bin/bash\n"
    "# 日本語 comment 🚀\n"
    'python3 -m sglang.launch_server --model-path /m --quantization FP8 --max-model-len 4096\n'
)
CLEAN = "#!/bin/bash\npython3 -m sglang.launch_server --model-path /m --tp-size 2\n"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    (tmp_path / "bad.sh").write_text(BROKEN, encoding="utf-8")
    (tmp_path / "good.sh").write_text(CLEAN, encoding="utf-8")
    (tmp_path / "notes.txt").write_text("python -m sglang.launch_server --bogus\n", encoding="utf-8")
    sub = tmp_path / "node_modules"
    sub.mkdir()
    (sub / "x.sh").write_text(BROKEN, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_json_contract(tree, capsys):
    code, out, _ = run(capsys, "check", "--format", "json", "bad.sh")
    assert code == 1
    payload = json.loads(out)
    assert set(payload) == {"tool", "version", "sglang_version", "files_checked", "diagnostics", "undecided"}
    assert payload["tool"] == "sglang-lsp"
    assert payload["version"] == __version__
    assert payload["sglang_version"] == "0.5.23"
    assert payload["files_checked"] == 1
    diags = payload["diagnostics"]
    assert [d["code"] for d in diags] == ["SGL002", "SGL001"]
    choice = diags[0]
    assert set(choice) == {"path", "code", "severity", "message", "flag", "start", "end", "kb_id",
                           "sglang_error", "fixes"}
    assert choice["path"] == "bad.sh"
    assert choice["severity"] == "error"
    assert choice["flag"] == "--quantization"
    line = BROKEN.split("\n")[2]
    # 1-based, code points, end exclusive
    assert choice["start"] == {"line": 3, "column": line.index("FP8") + 1}
    assert choice["end"] == {"line": 3, "column": line.index("FP8") + 4}
    assert choice["kb_id"] is None
    assert choice["sglang_error"].startswith("argument --quantization: invalid choice")
    fix = choice["fixes"][0]
    assert fix["applicability"] == "safe"
    assert fix["edits"] == [{"start": choice["start"], "end": choice["end"], "new_text": "fp8"}]
    vllm = diags[1]
    assert vllm["fixes"][0]["applicability"] == "unsafe"
    assert vllm["fixes"][0]["edits"][0]["new_text"] == "--context-length"


def test_text_format_has_source_and_caret(tree, capsys):
    code, out, err = run(capsys, "check", "bad.sh")
    assert code == 1
    lines = out.splitlines()
    line = BROKEN.split("\n")[2]
    col = line.index("FP8") + 1
    assert lines[0] == (f"bad.sh:3:{col}: error SGL002 `FP8` is not a valid choice for `--quantization`; "
                        f"did you mean `fp8`? " + lines[0].split("did you mean `fp8`? ", 1)[1])
    assert lines[1] == f"3 | {line}"
    assert lines[2] == " " * (len("3 | ") + col - 1) + "^^^"
    assert "2 errors" in err


def test_concise_and_clean_exit(tree, capsys):
    code, out, _ = run(capsys, "check", "--format", "concise", "good.sh")
    assert (code, out) == (0, "")
    code, out, _ = run(capsys, "check", "--format", "concise", "bad.sh")
    assert code == 1 and len(out.splitlines()) == 2


def test_select_and_ignore(tree, capsys):
    _, out, _ = run(capsys, "check", "--format", "concise", "--select", "SGL001", "bad.sh")
    assert [l.split()[2] for l in out.splitlines()] == ["SGL001"]
    code, out, _ = run(capsys, "check", "--format", "concise", "--ignore", "SGL001,SGL002", "bad.sh")
    assert (code, out) == (0, "")


def test_directory_walk_skips_vendor_dirs_and_keeps_relative_paths(tree, capsys):
    code, out, _ = run(capsys, "check", "--format", "json", ".")
    payload = json.loads(out)
    assert payload["files_checked"] == 2  # bad.sh and good.sh; not node_modules, not notes.txt
    assert {d["path"] for d in payload["diagnostics"]} == {"bad.sh"}
    code, out, _ = run(capsys, "check", "--format", "json", str(tree))
    assert {d["path"] for d in json.loads(out)["diagnostics"]} == {os.path.join(str(tree), "bad.sh")}


def test_gitignore_is_honoured(tree, capsys):
    if subprocess.run(["git", "--version"], capture_output=True).returncode != 0:
        pytest.skip("git not available")
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    (tree / ".gitignore").write_text("bad.sh\n")
    code, out, _ = run(capsys, "check", "--format", "json", ".")
    assert json.loads(out)["diagnostics"] == [] and code == 0


def test_explicit_file_of_any_name_is_checked(tree, capsys):
    code, out, _ = run(capsys, "check", "--format", "concise", "notes.txt")
    assert code == 1 and "SGL001" in out


def test_stdin_with_filename(tree, capsys, monkeypatch):
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BROKEN.encode())))
    code, out, _ = run(capsys, "check", "--format", "concise", "--stdin-filename", "deploy/run.sh", "-")
    assert code == 1
    assert all(l.startswith("deploy/run.sh:3:") for l in out.splitlines())


def test_usage_errors_exit_2(tree, capsys):
    code, _, err = run(capsys, "check", "missing.sh")
    assert code == 2 and "missing.sh" in err
    code, _, err = run(capsys, "check", "--sglang-version", "0.0.1", "bad.sh")
    assert code == 2 and "no flag catalog" in err
    with pytest.raises(SystemExit) as exc:
        main(["check", "--format", "xml"])
    assert exc.value.code == 2
    code, _, err = run(capsys, "rule", "SGL999")
    assert code == 2 and "unknown rule" in err


def test_unreadable_file_is_an_error_not_a_traceback(tree, capsys):
    if os.geteuid() == 0:
        target = tree / "dir.sh"
        target.mkdir()  # a directory named like a script cannot be read as one
        code, _, err = run(capsys, "check", str(target / "missing" / "x.sh"))
    else:  # pragma: no cover
        (tree / "locked.sh").write_text(CLEAN)
        os.chmod(tree / "locked.sh", 0)
        code, _, err = run(capsys, "check", "locked.sh")
    assert code == 2 and "Traceback" not in err


def test_invalid_utf8_and_crlf(tree, capsys):
    data = b"#!/bin/bash\r\n# \xff\xfe\r\npython3 -m sglang.launch_server --model-path /m --bogus-flag\r\n"
    (tree / "crlf.sh").write_bytes(data)
    code, out, _ = run(capsys, "check", "--format", "json", "crlf.sh")
    d = json.loads(out)["diagnostics"][0]
    assert d["code"] == "SGL001"
    line = "python3 -m sglang.launch_server --model-path /m --bogus-flag"
    assert d["start"] == {"line": 3, "column": line.index("--bogus-flag") + 1}
    assert d["end"] == {"line": 3, "column": len(line) + 1}


def test_rule_and_rules_and_version(capsys):
    code, out, _ = run(capsys, "rule", "sgl001")
    assert code == 0 and "## What it does" in out and out.startswith("SGL001 (unknown-flag)")
    code, out, _ = run(capsys, "rules")
    assert code == 0 and "SGL002" in out and "invalid-choice" in out
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert __version__ in capsys.readouterr().out


def _imported_by_check(argv: list[str], watched: list[str], cwd: Path) -> tuple[int, list[str]]:
    """Exit code of ``sglang-lsp <argv>`` run in a fresh interpreter, and which of the modules
    ``watched`` (or their submodules) it imported."""
    code = (  # nothing imported here but sys: the answer is about what the check imports
        "import sys; from sglang_lsp.cli.main import main; watched = set(sys.argv[1].split(',')); rc = main(sys.argv[2:]);"
        "print('IMPORTED', ','.join(sorted(m for m in sys.modules if m in watched or m.split('.')[0] in watched)));"
        "sys.exit(rc)"
    )
    env = dict(os.environ)
    server = Path(__file__).resolve().parent.parent / "server"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), str(server)]))
    proc = subprocess.run([sys.executable, "-c", code, ",".join(watched), *argv], capture_output=True, text=True,
                          env=env, cwd=cwd)
    line = next((x for x in proc.stdout.splitlines() if x.startswith("IMPORTED ")), None)
    assert line is not None, proc.stdout + proc.stderr
    return proc.returncode, [m for m in line[len("IMPORTED "):].split(",") if m]


def test_check_path_does_not_import_pygls(tmp_path):
    (tmp_path / "a.sh").write_text(BROKEN)
    assert _imported_by_check(["check", "--format", "concise", "a.sh"], ["pygls", "lsprotocol"], tmp_path) == (1, [])


def test_check_of_a_clean_script_loads_only_what_it_needs(tmp_path):
    # start-up time of `sglang-lsp check one.sh` (bench/bench_check.py part b): what a clean shell
    # file without directives, --config or sglang-lsp configuration never needs stays unimported
    (tmp_path / "a.sh").write_text(CLEAN)
    unwanted = ["logging", "difflib", "decimal", "csv", "argparse", "gettext", "dataclasses", "inspect",
                "sglang_lsp.config.project", "sglang_lsp.context.directives", "sglang_lsp.engine.suppress", "sglang_lsp.extract.sglang_config",
                "sglang_lsp.extract.yaml.scan", "sglang_lsp.engine.fixing"]
    assert _imported_by_check(["check", "a.sh"], unwanted, tmp_path) == (0, [])


def test_check_of_a_manifest_or_of_a_script_with_mistakes_loads_no_dataclasses(tmp_path):
    # the other cold paths (bench/bench_check.py part b measures the clean script): a Kubernetes
    # manifest and a script with findings do not pay for dataclasses (inspect, ast) or argparse
    (tmp_path / "bad.sh").write_text(BROKEN, encoding="utf-8")
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: s}\nspec:\n  containers:\n  - name: s\n    image: lmsysorg/sglang\n"
        "    command: [python3, -m, sglang.launch_server, --model-path, /m, --tp-size, '2']\n", encoding="utf-8")
    unwanted = ["dataclasses", "inspect", "ast", "argparse", "gettext"]
    for name, rc in (("bad.sh", 1), ("pod.yaml", 0)):
        assert _imported_by_check(["check", name], unwanted, tmp_path) == (rc, []), name


@pytest.mark.parametrize("argv", [["check", "--format", "concise", "bad.sh", "good.sh"], ["check", "bad.sh"],
                                  ["check", "--format", "json", "."], ["rules"], ["check", "--bogus"]])
def test_the_command_prints_and_exits_like_main(argv, tree, capsys):
    # `sglang-lsp` / `python -m sglang_lsp.cli.main` run cli.run(), which ends without the interpreter's
    # teardown: nothing printed may be lost and the exit code is main()'s
    try:
        expected = main(list(argv))
    except SystemExit as exc:
        expected = exc.code
    out, err = capsys.readouterr()
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)  # buffered, as usual when the output is a pipe
    server = Path(__file__).resolve().parent.parent / "server"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), str(server)]))
    proc = subprocess.run([sys.executable, "-m", "sglang_lsp.cli.main", *argv], capture_output=True, text=True, env=env)
    assert (proc.returncode, proc.stdout, proc.stderr) == (expected, out, err)
    assert out or err


@pytest.mark.parametrize("argv", [
    ["check", "-h"], ["check", "--bogus"], ["check", "--format", "xml", "a.sh"], ["check", "a.sh", "--version"],
    ["check", "--config-file", "c.toml", "--isolated", "a.sh"], ["check", "--fail", "info", "a.sh"],
    ["migrate", "-h"], ["migrate", "a.sh"], ["catalog", "-h"], ["catalog", "build"], ["catalog", "list", "x"],
    ["rule"], ["rules", "-h"], ["explain", "-h"], ["kb", "import"], ["kb", "import", "-h"], ["serve", "--tcp", "x"],
    ["serve", "-h"], ["check", "a.sh"], ["rule", "SGL001", "extra"],
])
def test_parser_of_the_named_subcommand_parses_like_the_full_one(argv, capsys, monkeypatch):
    # main() builds only the parser of the subcommand argv names: help, errors and results must
    # be those of the full parser
    from sglang_lsp.cli.main import build_parser

    monkeypatch.setenv("COLUMNS", "100")

    def outcome(parser):
        try:
            ns = parser.parse_args(argv)
            result = ("ok", sorted((k, repr(v)) for k, v in vars(ns).items()))
        except SystemExit as exc:
            result = ("exit", exc.code)
        return result, capsys.readouterr()

    full, only = outcome(build_parser()), outcome(build_parser(argv[0]))
    assert only == full
    assert full[1].out or full[1].err or full[0][0] == "ok"


@pytest.mark.parametrize("argv", [
    ["check"], ["check", "a.sh"], ["check", "a.sh", "dir/", "b.yaml"], ["check", "-"], ["check", "-", "a.sh"],
    ["check", ""], ["check", "--", "a.sh"], ["check", "-q", "a.sh"], ["check", "a.sh", "--format=json"],
    ["check", "-1"], ["rules"], [],
])
def test_plain_check_arguments_are_what_the_parser_gives(argv):
    # main() reads `check` followed by paths only without building the parser (start-up time):
    # the namespace must be the parser's, and anything else is left to the parser
    from sglang_lsp.cli.main import _plain_check, build_parser

    plain = _plain_check(argv)
    if plain is None:
        assert not argv or argv[0] != "check" or any(a.startswith("-") and a != "-" for a in argv[1:])
        return
    assert vars(plain) == vars(build_parser().parse_args(argv)) == vars(build_parser("check").parse_args(argv))


def test_plain_data_classes_of_the_check_path_behave_like_the_dataclasses_they_replace():
    # findings.Record stands in for dataclasses on the check path (start-up time): equality by
    # value, unhashable unless frozen, a repr naming the fields, replace() as dataclasses.replace
    from sglang_lsp.context.facts import gpu_profile
    from sglang_lsp.base.document import Document
    from sglang_lsp.engine.check import Options
    from sglang_lsp.base.findings import Finding, Severity, Span

    a = Finding("SGL001", Severity.ERROR, "bad", Span(1, 2))
    b = Finding("SGL001", Severity.ERROR, "bad", Span(1, 2))
    assert a == b and a is not b and a.fixes == [] and a.fixes is not b.fixes
    assert a != a.replace(message="worse") and a.replace(message="worse").message == "worse" and a.message == "bad"
    assert a != ("SGL001", Severity.ERROR, "bad", Span(1, 2))
    with pytest.raises(TypeError):
        hash(a)
    assert repr(a).startswith("Finding(code='SGL001', severity=<Severity.ERROR: 'error'>, message='bad', span=Span(")
    with pytest.raises(TypeError):
        a.replace(colour="red")
    assert Options(gpu="H100").replace(select=("SGL0",)) == Options(gpu="H100", select=("SGL0",))
    doc = Document("x\n", "a.sh")
    assert doc == Document("x\n", "a.sh") != Document("x\n", "b.sh") and doc.data == b"x\n" and doc.derived == {}
    assert "derived" not in repr(doc) and "data" not in repr(doc)
    h100 = gpu_profile("H100")
    assert h100 is not None and {h100: 1}[h100.replace()] == 1  # frozen in spirit: hashed by value
