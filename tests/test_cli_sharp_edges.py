"""The command line's sharp edges (issue 20): structured output that must be valid, rule codes
on the command line, usage errors shown with the right usage, summaries that do not claim "no
problems" after a path was not checked, `migrate`'s report on standard output."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import xml.dom.minidom

import pytest

from sglang_lsp.cli.main import SUBCOMMANDS, main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


# --- output that must be valid ---------------------------------------------------------------

# undecodable bytes wherever a file's bytes can reach the output: in a flag's name (the
# message), in a value (a message and a fix), in a comment before the flag (the source line of
# the text format), and in the file's name (every path and SARIF URI)
NOT_UTF8_SCRIPT = (b"#!/bin/bash\n# caf\xe9 \xff\n"
                   b"python -m sglang.launch_server --model-path /m --bogus-\xfe-flag --quantization fp\x88 --tp 2\n")
FORMATS = ["text", "concise", "json", "sarif", "github", "junit", "gitlab"]


def _text_of(fmt: str, out: str) -> str:
    """The output parsed as its format says (a parse error fails the test), as the text a reader
    of it sees: every string of a JSON document, the XML's text and attributes."""
    if fmt in ("json", "sarif", "gitlab"):
        def strings(v):
            if isinstance(v, str):
                yield v
            elif isinstance(v, dict):
                for x in v.values():
                    yield from strings(x)
            elif isinstance(v, list):
                for x in v:
                    yield from strings(x)
        return "\n".join(strings(json.loads(out)))
    if fmt == "junit":
        nodes = list(_walk(xml.dom.minidom.parseString(out.encode("utf-8"))))
        texts = [n.data for n in nodes if n.nodeType == n.TEXT_NODE]
        attributes = [a.value for n in nodes if n.attributes for a in n.attributes.values()]
        return "\n".join(texts + attributes)
    return out


def _walk(node):
    yield node
    for child in node.childNodes:
        yield from _walk(child)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_is_valid_utf8_with_undecodable_bytes_escaped(tmp_path, monkeypatch, capsys, fmt):
    monkeypatch.chdir(tmp_path)
    name = os.fsdecode(b"run-\xfd.sh")  # a file name that is not UTF-8 either
    with open(name, "wb") as fh:
        fh.write(NOT_UTF8_SCRIPT)
    code, out, _ = run(capsys, "check", "--format", fmt, "--gpu", "H100", name)
    assert code == 1
    out.encode("utf-8")  # strict: a byte that reached the output raw (a lone surrogate) raises here
    seen = _text_of(fmt, out)
    assert "--bogus-\\xfe-flag" in seen  # the flag's byte, shown escaped
    assert "fp\\x88" in seen  # a value's byte
    if fmt == "sarif":  # SARIF names the file by a URI: its bytes percent-encoded
        assert "run-%FD.sh" in seen
    else:
        assert "run-\\xfd.sh" in seen


def test_text_caret_stays_under_the_flag_after_escaped_bytes(tmp_path, capsys):
    f = tmp_path / "a.sh"
    f.write_bytes(b"python -m sglang.launch_server --model-path /m\xff\xfe --bogus-flag\n")
    code, out, _ = run(capsys, "check", str(f))
    lines = out.splitlines()
    source = next(l for l in lines if l.startswith("1 | "))
    caret = lines[lines.index(source) + 1]
    start = caret.index("^")
    assert source[start:start + len("--bogus-flag")] == "--bogus-flag"
    assert caret.count("^") == len("--bogus-flag")


# every control character a file can hold but tab and line feed: C0, DEL, C1 (ESC starts a
# terminal's command sequence; a NUL cuts a log line)
CONTROLS = [chr(c) for c in [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)]]


@pytest.mark.parametrize("fmt", ["text", "concise", "github"])
def test_control_characters_of_a_file_never_reach_a_terminal(tmp_path, capsys, fmt):
    """The formats read on a terminal or in a workflow log show every control character of the
    file escaped (a flag name, a value, the source line); the structured formats escape them as
    their syntax says (JSON's \\u0000), which the validity test above parses."""
    # a file per control character (a NUL makes its file SGL070), its flag name holding it: the
    # finding's message and source line hold it too
    paths = []
    for n, ch in enumerate(CONTROLS):
        f = tmp_path / f"c{n}.sh"
        f.write_bytes(f"python -m sglang.launch_server --model-path m --x{ch}y 1\n".encode())
        paths.append(str(f))
    code, out, _ = run(capsys, "check", "--select", "SGL001,SGL070", "--format", fmt, *paths)
    assert code == 1
    leaked = sorted({hex(ord(ch)) for ch in out if ch in CONTROLS})
    assert leaked == []
    assert out.count("SGL001") >= len(CONTROLS) - 2 and "SGL070" in out
    assert "--x\\x1by" in out and "--x\\x9by" in out and "--x\\x7fy" in out


def _caret_under_mark(source: str, caret: str, mark: str) -> None:
    start = caret.index("^")
    width = caret.count("^")
    assert caret.strip() == "^" * width  # one run of carets
    shown_mark = source[start:start + width]
    assert shown_mark == mark[:width] or (shown_mark.endswith("…") and mark.startswith(shown_mark[:-1])), \
        (source, caret, mark)


@pytest.mark.parametrize("before, after", [
    (0, 0), (10, 10), (0, 5000), (5000, 0), (5000, 5000), (130, 30), (39, 200), (41, 200)])
@pytest.mark.parametrize("filler", ["--tp 2 ", "\x00", "é", "\t", "\x1b["], ids=["flags", "nul", "wide", "tab", "esc"])
def test_text_source_line_is_cut_around_the_mark(tmp_path, capsys, before, after, filler):
    """A source line of any length (a file that is not text may be one line of a megabyte) is
    shown in at most SOURCE_WIDTH columns around its mark, cuts marked with … and never inside an
    escape, the caret under the mark."""
    from sglang_lsp.cli.output import SOURCE_WIDTH, source_window

    mark = "--bogus-flag"
    line = (filler * before)[:before] + mark + (filler * after)[:after]
    start = len((filler * before)[:before])
    src, column, width = source_window(line, start, start + len(mark))
    assert len(src) <= SOURCE_WIDTH
    assert src[column:column + width] == mark
    assert not re.search(r"\\x?[0-9a-f]?…|\\…", src)  # no escape cut in two
    if len(line) <= SOURCE_WIDTH and filler not in ("\x00", "\x1b["):
        assert src == line.replace("\t", " ")  # a short printable line is shown whole
    # a mark longer than the room left: cut, still starting under the caret
    long_mark = "--" + "x" * 1000
    src, column, width = source_window(filler * before + long_mark, len(filler * before), len(filler * before) + 1002)
    assert len(src) <= SOURCE_WIDTH and src[column:column + width].startswith("--x") and src.endswith("…")


def test_text_output_of_a_megabyte_line_of_nul_bytes(tmp_path, capsys):
    f = tmp_path / "zeros.sh"
    f.write_bytes(b"\0" * 1_000_000)
    code, out, _ = run(capsys, "check", str(f))
    assert code == 0 and "SGL070" in out
    assert max(len(line) for line in out.splitlines()) < 400
    assert "\0" not in out
    source = next(l for l in out.splitlines() if l.startswith("1 | "))
    caret = out.splitlines()[out.splitlines().index(source) + 1]
    _caret_under_mark(source[4:], caret[4:], "\\x00")


def test_json_positions_still_count_code_points(tmp_path, capsys):
    f = tmp_path / "a.sh"
    f.write_bytes(b"python -m sglang.launch_server --model-path /m\xff --bogus-flag\n")
    _, out, _ = run(capsys, "check", "--format", "json", str(f))
    d = json.loads(out)["diagnostics"][0]
    line = "python -m sglang.launch_server --model-path /m\udcff --bogus-flag"
    assert d["start"]["column"] == line.index("--bogus-flag") + 1


# --- rule codes on the command line ------------------------------------------------------------


@pytest.mark.parametrize("option", ["--select", "--ignore", "--extend-select"])
@pytest.mark.parametrize("value, hint", [
    ("FOO", "not a rule code or prefix"),
    ("SGL0O2", "did you mean `SGL002`"),  # a letter O for a zero
    ("SGLI01", "did you mean `SGL101`"),
    ("SLG001", "did you mean `SGL001`"),
    ("SGL999", "no rule code starts with `SGL999`"),
    ("SGL001,BAR", "`BAR` is not a rule code"),
])
def test_unknown_codes_on_the_command_line_are_usage_errors(tmp_path, capsys, option, value, hint):
    f = tmp_path / "a.sh"
    f.write_text("python -m sglang.launch_server --model-path /m --bogus\n")
    code, out, err = run(capsys, "check", option, value, str(f))
    assert code == 2 and out == ""
    assert f"argument {option}:" in err and hint in err
    assert "usage: sglang-lsp check" in err


@pytest.mark.parametrize("value", ["SGL001", "sgl00", "SGL", "SGL1", "SGL001, SGL002", "sgl107"])
def test_codes_and_prefixes_are_accepted_in_any_case(tmp_path, capsys, value):
    f = tmp_path / "a.sh"
    f.write_text("python -m sglang.launch_server --model-path /m --bogus\n")
    code, _, err = run(capsys, "check", "--select", value, str(f))
    assert code in (0, 1) and "error:" not in err


def test_configuration_file_codes_get_the_same_check(tmp_path, capsys):
    (tmp_path / ".sglang-lsp.toml").write_text('select = ["SGL0O2"]\n')
    f = tmp_path / "a.sh"
    f.write_text("python -m sglang.launch_server --model-path /m\n")
    code, _, err = run(capsys, "check", str(f))
    assert code == 2 and "did you mean `SGL002`" in err


# --- usage errors show the usage of the command they are about ---------------------------------


@pytest.mark.parametrize("argv, usage", [
    (["check", "--bogus"], "usage: sglang-lsp check "),
    (["check", "a.sh", "--bogus", "x"], "usage: sglang-lsp check "),
    (["migrate", "--to", "0.5.23", "a.sh", "--bogus"], "usage: sglang-lsp migrate "),
    (["rules", "--bogus"], "usage: sglang-lsp rules "),
    (["rule", "SGL001", "--bogus"], "usage: sglang-lsp rule "),
    (["explain", "--bogus"], "usage: sglang-lsp explain "),
    (["serve", "--bogus"], "usage: sglang-lsp serve "),
    (["catalog", "list", "--bogus"], "usage: sglang-lsp catalog list "),
    (["catalog", "build", "--python", "x", "--bogus"], "usage: sglang-lsp catalog build "),
    (["kb", "import", "a.json", "--bogus"], "usage: sglang-lsp kb import "),
])
def test_unrecognized_arguments_show_the_subcommands_usage(capsys, argv, usage):
    assert argv[0] in SUBCOMMANDS
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith(usage) and "unrecognized arguments: --bogus" in err


def test_format_option_has_help_for_every_format(capsys):
    code, out, _ = run(capsys, "check", "--help")
    assert code == 0
    help_text = " ".join(out.split())
    section = help_text[help_text.index("--format FORMAT"):]
    for fmt in FORMATS:
        assert f"{fmt}:" in section, fmt


# --- summaries -------------------------------------------------------------------------------------


def test_missing_path_is_never_followed_by_no_problems(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "check", "missing.sh")
    assert code == 2 and out == ""
    assert "missing.sh: no such file or directory" in err and "no problems" not in err
    assert "1 path not checked" in err
    (tmp_path / "good.sh").write_text("python -m sglang.launch_server --model-path /m --tp-size 2\n")
    code, _, err = run(capsys, "check", "good.sh", "missing.sh")
    assert code == 2 and "Checked 1 file: 1 path not checked" in err and "no problems" not in err


def test_empty_directory_says_no_files_were_found(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.txt").write_text("nothing to check\n")
    for target in ("empty", "docs"):
        code, out, err = run(capsys, "check", target)
        assert code == 0 and out == ""
        assert f"no launch files (shell scripts, YAML) found in {target}" in err
    # the warning is about the input, not a summary: -q keeps it
    code, _, err = run(capsys, "check", "-q", "empty")
    assert code == 0 and "no launch files" in err


# --- migrate --------------------------------------------------------------------------------------

UPGRADE = ("#!/bin/bash\npython3 -m sglang.launch_server \\\n  --model-path m \\\n  --cuda-graph-max-bs 256 \\\n"
           "  --enable-ep-moe\n")


def test_migrate_report_goes_to_standard_output(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.sh").write_text(UPGRADE)
    code, out, err = run(capsys, "migrate", "--to", "0.5.23", "--fix", "a.sh")
    assert code == 1
    assert "a.sh: 2 migrations from 0.5.4" in out and "a.sh:5:3: SGL031" in out
    assert err == "Applied 1 migration fix; 1 migration left to do by hand.\n"
    code, out, err = run(capsys, "migrate", "--to", "0.5.23", "-q", "a.sh")
    assert "a.sh: 1 migration" in out and err == ""  # -q: no summary; the report is the output


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_migrate_output_applies_as_a_patch(tmp_path, capsys, monkeypatch):
    """The report lines before each file's diff are skipped by `git apply` (and `patch`)."""
    monkeypatch.chdir(tmp_path)
    subprocess.run(["git", "init", "-q", "."], check=True)
    for name in ("a.sh", "b.sh"):
        (tmp_path / name).write_text(UPGRADE)
    code, out, _ = run(capsys, "migrate", "--to", "0.5.23", "a.sh", "b.sh")
    assert code == 1 and out.count("migrations from") == 2
    (tmp_path / "fix.patch").write_text(out)
    subprocess.run(["git", "apply", "fix.patch"], check=True, capture_output=True)
    for name in ("a.sh", "b.sh"):
        assert "--cuda-graph-max-bs-decode 256" in (tmp_path / name).read_text()


# --- serve with a standard input the event loop cannot watch ------------------------------------

def _serve(stdin, tmp_path) -> subprocess.CompletedProcess:
    from test_lsp_transport import SERVE, server_env

    return subprocess.run(SERVE, stdin=stdin, capture_output=True, env=server_env(), timeout=60, cwd=tmp_path)


@pytest.mark.parametrize("source", ["/dev/null", "empty regular file", "empty pipe"])
def test_serve_with_nothing_on_stdin_exits_without_a_traceback(tmp_path, source):
    """`serve < /dev/null` printed an asyncio traceback and hung: the loop took the character
    device, and epoll refused it inside a callback. Every kind of standard input without a
    message ends the server with the status of a connection closed before `shutdown` (1)."""
    if source == "/dev/null":
        with open(os.devnull, "rb") as stdin:
            proc = _serve(stdin, tmp_path)
    elif source == "empty regular file":
        (tmp_path / "in").write_bytes(b"")
        with open(tmp_path / "in", "rb") as stdin:
            proc = _serve(stdin, tmp_path)
    else:
        proc = _serve(subprocess.PIPE, tmp_path)  # run() closes the pipe at once: EOF
    assert proc.returncode == 1, proc.stderr
    assert b"Traceback" not in proc.stderr, proc.stderr.decode(errors="replace")
    assert proc.stdout == b""


def test_serve_answers_a_session_read_from_a_regular_file(tmp_path):
    """A whole session in a file (not a pipe): read in a thread, answered, exit status 0."""
    from test_lsp_transport import frame, parse_frames

    session = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}, "processId": None}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    (tmp_path / "in").write_bytes(b"".join(frame(m) for m in session))
    with open(tmp_path / "in", "rb") as stdin:
        proc = _serve(stdin, tmp_path)
    assert proc.returncode == 0, proc.stderr
    answered = {m.get("id") for m in parse_frames(proc.stdout) if "id" in m}
    assert answered == {1, 2}
