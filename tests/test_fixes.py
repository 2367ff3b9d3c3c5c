"""Applying fixes: safe vs unsafe, rounds for overlapping fixes, reverting harmful fixes, and
`check --fix` / `--diff` end to end."""

from __future__ import annotations

import re

import pytest

from sglang_lsp.engine import fixing as fixes_mod
from sglang_lsp.cli.main import main
from sglang_lsp.base.document import Document
from sglang_lsp.engine.check import Result
from sglang_lsp.base.findings import Applicability, Edit, Finding, Fix, Severity, Span
from sglang_lsp.engine.fixing import apply_fix, fix_document

BROKEN = "#!/bin/bash\npython3 -m sglang.launch_server --model-path /m --quantization FP8 --max-model-len 4096\n"
SAFE_FIXED = BROKEN.replace("FP8", "fp8")
ALL_FIXED = SAFE_FIXED.replace("--max-model-len", "--context-length")


def test_safe_fixes_only_by_default():
    out = fix_document(Document(BROKEN, "a.sh", "shell"))
    assert out.text == SAFE_FIXED
    assert [a.code for a in out.applied] == ["SGL002"]
    assert [f.code for f in out.result.findings] == ["SGL001"]  # the unsafe one is left and reported
    assert not out.rejected


def test_unsafe_fixes_on_request():
    out = fix_document(Document(BROKEN, "a.sh", "shell"), unsafe=True)
    assert out.text == ALL_FIXED
    assert sorted(a.code for a in out.applied) == ["SGL001", "SGL002"]
    assert out.result.findings == []


def test_clean_file_is_unchanged():
    text = "#!/bin/bash\npython3 -m sglang.launch_server --model-path /m --tp-size 2\n"
    out = fix_document(Document(text, "a.sh", "shell"), unsafe=True)
    assert out.text == text and not out.changed and out.rounds == 0


def test_apply_fix_applies_all_edits_together():
    fix = Fix("t", Applicability.SAFE, (Edit(Span(4, 5), "XY"), Edit(Span(0, 1), "")))
    assert apply_fix(b"abcdef", fix) == b"bcdXYf"
    with pytest.raises(ValueError):
        apply_fix(b"abcdef", Fix("t", Applicability.SAFE, (Edit(Span(0, 3), ""), Edit(Span(2, 4), ""))))


# --- a fake checker, so that rounds and reverts are exercised deterministically ------------

def _fake(rules):
    """A check_document stand-in: ``rules`` is a list of (regex, replacement, severity, applicability);
    every match is a finding whose fix replaces the match."""

    def check(doc, options=None, old_tree=None):
        found = []
        data = doc.data
        for pattern, repl, sev, app in rules:
            for m in re.finditer(pattern.encode(), data):
                fx = [Fix(f"make {repl}", app, (Edit(Span(m.start(), m.end()), repl),))] if repl is not None else []
                found.append(Finding("T" + pattern, sev, f"found {pattern}", Span(m.start(), m.end()), fixes=fx))
        return Result(doc.path, doc, sorted(found, key=lambda f: f.sort_key()))

    return check


def test_overlapping_fixes_are_applied_in_later_rounds(monkeypatch):
    monkeypatch.setattr(fixes_mod, "check_document", _fake([
        ("ab", "AB", Severity.WARNING, Applicability.SAFE),
        ("[bB]c", "BC", Severity.WARNING, Applicability.SAFE),
    ]))
    out = fix_document(Document("echo abc\n", "a.sh", "shell"))
    assert out.text == "echo ABC\n"
    assert [a.code for a in out.applied] == ["Tab", "T[bB]c"]
    assert out.rounds == 2


def test_non_overlapping_fixes_share_a_round(monkeypatch):
    monkeypatch.setattr(fixes_mod, "check_document", _fake([("x", "y", Severity.WARNING, Applicability.SAFE)]))
    out = fix_document(Document("echo x x x\n", "a.sh", "shell"))
    assert out.text == "echo y y y\n"
    assert out.rounds == 1 and len(out.applied) == 3


def test_rounds_are_bounded(monkeypatch):
    monkeypatch.setattr(fixes_mod, "check_document", _fake([
        ("a", "b", Severity.WARNING, Applicability.SAFE),
        ("b", "a", Severity.WARNING, Applicability.SAFE),
    ]))
    out = fix_document(Document("echo a\n", "a.sh", "shell"), max_rounds=10)
    assert out.rounds == 10


def test_fix_introducing_an_error_is_reverted(monkeypatch):
    monkeypatch.setattr(fixes_mod, "check_document", _fake([
        ("good", "bad", Severity.WARNING, Applicability.SAFE),
        ("bad", None, Severity.ERROR, Applicability.SAFE),
        ("plain", "PLAIN", Severity.WARNING, Applicability.SAFE),
    ]))
    out = fix_document(Document("echo good plain\n", "a.sh", "shell"))
    assert out.text == "echo good PLAIN\n"  # the harmless fix still applies
    assert [(r.code, r.reason.split(" (")[0]) for r in out.rejected] == [("Tgood", "it would introduce a new error")]


def test_fix_leaving_the_file_unparsable_is_reverted(monkeypatch):
    monkeypatch.setattr(fixes_mod, "check_document", _fake([("word", 'wo"rd', Severity.WARNING, Applicability.SAFE)]))
    out = fix_document(Document("echo word\n", "a.sh", "shell"))
    assert out.text == "echo word\n" and not out.applied
    assert out.rejected[0].reason == "it would leave the file unparsable"


def test_unsafe_and_display_only_fixes(monkeypatch):
    monkeypatch.setattr(fixes_mod, "check_document", _fake([
        ("u", "U", Severity.WARNING, Applicability.UNSAFE),
        ("d", "D", Severity.WARNING, Applicability.DISPLAY),
    ]))
    assert fix_document(Document("echo u d\n", "a.sh", "shell")).text == "echo u d\n"
    assert fix_document(Document("echo u d\n", "a.sh", "shell"), unsafe=True).text == "echo U d\n"


def test_fix_editing_another_file_is_skipped(monkeypatch):
    def check(doc, options=None, old_tree=None):
        fx = Fix("edit config", Applicability.SAFE, (Edit(Span(0, 1, "cfg.yaml"), "x"),))
        return Result(doc.path, doc, [Finding("T1", Severity.WARNING, "m", Span(0, 1), fixes=[fx])])

    monkeypatch.setattr(fixes_mod, "check_document", check)
    out = fix_document(Document("echo a\n", "a.sh", "shell"))
    assert not out.applied and out.skipped[0].reason == "it edits another file"


# --- the command line -------------------------------------------------------------------

def test_cli_fix_writes_safe_fixes(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.sh").write_text(BROKEN)
    assert main(["check", "--fix", "a.sh"]) == 1  # the unsafe SGL001 is still an error
    assert (tmp_path / "a.sh").read_text() == SAFE_FIXED
    out, err = capsys.readouterr()
    assert "SGL001" in out and "SGL002" not in out
    assert "Fixed 1 problem." in err
    assert main(["check", "--fix", "--unsafe-fixes", "a.sh"]) == 0
    assert (tmp_path / "a.sh").read_text() == ALL_FIXED


def test_cli_diff_writes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.sh").write_text(BROKEN)
    before = (tmp_path / "a.sh").stat()
    assert main(["check", "--diff", "--unsafe-fixes", "a.sh"]) == 1
    out, _ = capsys.readouterr()
    assert (tmp_path / "a.sh").read_text() == BROKEN
    assert (tmp_path / "a.sh").stat().st_mtime_ns == before.st_mtime_ns
    assert out.startswith("--- a/a.sh\n+++ b/a.sh\n")
    assert "-python3 -m sglang.launch_server --model-path /m --quantization FP8 --max-model-len 4096" in out
    assert "+python3 -m sglang.launch_server --model-path /m --quantization fp8 --context-length 4096" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.sh"]
    # nothing to fix: no diff, exit 0
    (tmp_path / "a.sh").write_text(ALL_FIXED)
    assert main(["check", "--diff", "a.sh"]) == 0
    assert capsys.readouterr().out == ""


def test_cli_fix_refuses_stdin(monkeypatch, capsys):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BROKEN.encode())))
    assert main(["check", "--fix", "-"]) == 2
    assert "--diff" in capsys.readouterr().err


def test_cli_diff_on_stdin(monkeypatch, capsys):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BROKEN.encode())))
    assert main(["check", "--diff", "--stdin-filename", "x.sh", "-"]) == 1
    assert "+python3 -m sglang.launch_server --model-path /m --quantization fp8" in capsys.readouterr().out


# --- every error fixture of the rule suite, fixed with the real engine -----------------------

def _fixture_files():
    from pathlib import Path

    root = Path(__file__).parent / "fixtures" / "rules"
    return sorted(p for p in root.glob("*/err/*") if p.suffix in (".sh", ".yaml", ".yml"))


@pytest.mark.parametrize("path", _fixture_files(), ids=lambda p: f"{p.parts[-3]}/{p.name}")
def test_fixing_rule_fixtures_is_sound_and_idempotent(path):
    from collections import Counter

    from sglang_lsp.base.document import decode
    from sglang_lsp.engine.check import Options, check_document, detect_language

    text = decode(path.read_bytes())
    doc = Document(text, str(path), detect_language(str(path), text) or "shell")
    before = check_document(doc, Options())
    out = fix_document(doc, Options(), unsafe=True)
    errors = lambda r: Counter((f.code, f.message) for f in r.findings
                               if f.severity == Severity.ERROR and f.span.path is None)
    assert not (errors(out.result) - errors(before)), "a fix introduced an error"
    assert out.rounds < fixes_mod.MAX_ROUNDS
    again = fix_document(Document(out.text, doc.path, doc.language), Options(), unsafe=True)
    assert not again.applied, "fixing is not stable"


def test_cli_diff_is_a_valid_patch(tmp_path, monkeypatch, capsys):
    """The diff applies with `patch`, also for a file without a final newline."""
    import shutil
    import subprocess

    if shutil.which("patch") is None:
        pytest.skip("patch is not installed")
    monkeypatch.chdir(tmp_path)
    original = BROKEN.rstrip("\n") + " \\\n  --tp 2"  # no final newline; the fix is on another line
    (tmp_path / "a.sh").write_text(original)
    assert main(["check", "--diff", "--unsafe-fixes", "a.sh"]) == 1
    diff = capsys.readouterr().out
    assert "\\ No newline at end of file" not in diff or diff.endswith("\n")
    (tmp_path / "b.sh").write_text(original)
    subprocess.run(["patch", "-s", "b.sh"], input=diff, text=True, check=True, cwd=tmp_path)
    assert main(["check", "--fix", "--unsafe-fixes", "a.sh"]) == 0
    assert (tmp_path / "b.sh").read_text() == (tmp_path / "a.sh").read_text() != original


def test_removing_a_repeated_flag_leaves_no_empty_continuation_line():
    # a flag on a `\`-continued line of its own goes with its line; first and inline ones too
    text = ("#!/bin/bash\npython3 -m sglang.launch_server \\\n    --attention-backend=triton \\\n"
            "    --model-path /m \\\n    --attention-backend flashinfer \\\n    --host 0.0.0.0 \\\n"
            "    --attention-backend flashinfer \\\n    --port 30000\n"
            "python3 -m sglang.launch_server --port 1 --model-path /m --port 1\n")
    out = fix_document(Document(text, "a.sh", "shell"))
    assert out.text == ("#!/bin/bash\npython3 -m sglang.launch_server \\\n    --model-path /m \\\n"
                        "    --host 0.0.0.0 \\\n    --attention-backend flashinfer \\\n    --port 30000\n"
                        "python3 -m sglang.launch_server --model-path /m --port 1\n")
    assert [a.code for a in out.applied] == ["SGL009"] * 3
    assert not out.result.findings


def test_no_rename_fix_when_the_replacement_refuses_the_value():
    text = "python3 -m sglang.launch_server --model-path /m --nsa-prefill-cp-mode round-robin-split\n"
    out = fix_document(Document(text, "a.sh", "shell"), unsafe=True)
    assert out.text == text and not out.rejected
    (finding,) = out.result.findings
    assert finding.code == "SGL031" and "not `round-robin-split`" in finding.message
    assert [f.applicability for f in finding.fixes] == [Applicability.DISPLAY]


def test_dp_attention_migrates_to_attn_dp_size():
    # sglang 0.5.23 resolves `--dp-size 8 --enable-dp-attention` and `--attn-dp-size 8` alike
    # (oracle: dp_size 1, attn_dp_size 8) and refuses `--dp-size 8 --attn-dp-size 8`
    text = ("python3 -m sglang.launch_server --model-path /m \\\n  --tp 8 --dp 8 --enable-dp-attention \\\n"
            "  --port 30000\npython3 -m sglang.launch_server --model-path /m --enable-dp-attention --dp-size 2 --tp-size 2\n")
    assert fix_document(Document(text, "a.sh", "shell")).text.count("--enable-dp-attention") == 2  # unsafe only
    out = fix_document(Document(text, "a.sh", "shell"), unsafe=True)
    assert out.text == ("python3 -m sglang.launch_server --model-path /m \\\n  --tp-size 8 --attn-dp-size 8 \\\n"
                        "  --port 30000\npython3 -m sglang.launch_server --model-path /m --attn-dp-size 2 --tp-size 2\n")
    assert not out.result.findings and not out.rejected
