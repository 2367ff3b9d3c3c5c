"""In-file directives (`# sglang-lsp: gpu=… sglang=… model=…`), their scope ("right before"),
suppressions (`ignore[…]`, `ignore-file[…]`), SGL040/041/042 and the suppression edits the
editor offers (docs/configuration.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sglang_lsp.cli.main import main
from sglang_lsp.base.document import Document
from sglang_lsp.engine.check import Options, check_document
from sglang_lsp.engine.fixing import apply_fix, fix_document
from sglang_lsp.engine.suppress import suppression_fixes

MODELS = Path(__file__).resolve().parent / "fixtures" / "models"
# SGL107 fires for --quantization w8a8_int8 on an AMD GPU only
AMD_ONLY = "python -m sglang.launch_server --model-path /models/x --quantization w8a8_int8\n"


def result(text: str, path: str = "run.sh", language: str | None = None, **options):
    language = language or ("yaml" if path.endswith((".yaml", ".yml")) else "shell")
    return check_document(Document(text, path, language), Options(**options))


def found(text: str, path: str = "run.sh", **options) -> list[tuple[str, int]]:
    """(code, 1-based line) of every finding."""
    r = result(text, path, **options)
    return [(f.code, r.document.line_of(f.span.start) + 1) for f in r.findings]


def codes(text: str, path: str = "run.sh", **options) -> list[str]:
    return [c for c, _ in found(text, path, **options)]


# --- settings directives and their scope ------------------------------------------------------


def test_directive_right_before_a_command_applies_to_it_only():
    text = "# sglang-lsp: gpu=MI300X\n" + AMD_ONLY + "\n" + AMD_ONLY
    assert [l for c, l in found(text) if c == "SGL107"] == [2]


def test_directive_followed_by_a_blank_line_applies_to_the_file():
    text = "#!/bin/bash\n# sglang-lsp: gpu=MI300X\n\n" + AMD_ONLY + "echo\n" + AMD_ONLY
    assert [l for c, l in found(text) if c == "SGL107"] == [4, 6]
    # right before something that launches nothing: the file as well
    text = "#!/bin/bash\n# sglang-lsp: gpu=MI300X\nset -e\n" + AMD_ONLY
    assert [l for c, l in found(text) if c == "SGL107"] == [4]


def test_scoped_directive_beats_file_wide_one():
    text = "# sglang-lsp: gpu=MI300X\n\n" + AMD_ONLY + "# other comment\n# sglang-lsp: gpu=H100\n# more\n" + AMD_ONLY
    assert [l for c, l in found(text) if c == "SGL107"] == [3]


K8S_DOC = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
  - name: server
    image: lmsysorg/sglang:v0.5.23
    command: ["python3", "-m", "sglang.launch_server"]
    args: ["--model-path", "/models/x", "--quantization", "w8a8_int8"]
"""


def test_yaml_directive_before_a_document_applies_to_that_document():
    text = "# sglang-lsp: gpu=MI300X\n" + K8S_DOC.format(name="a") + "---\n" + K8S_DOC.format(name="b")
    assert [l for c, l in found(text, "pod.yaml") if c == "SGL107"] == [11]
    text = K8S_DOC.format(name="a") + "# sglang-lsp: gpu=MI300X\n---\n" + K8S_DOC.format(name="b")
    assert [l for c, l in found(text, "pod.yaml") if c == "SGL107"] == [22]


def test_yaml_directive_before_a_container_applies_to_its_launch():
    doc = K8S_DOC.format(name="a").replace("  - name: server\n", "  # sglang-lsp: gpu=MI300X\n  - name: server\n")
    assert [l for c, l in found(doc, "pod.yaml") if c == "SGL107"] == [11]
    # followed by a blank line: the whole file
    doc = "# sglang-lsp: gpu=MI300X\n\n" + K8S_DOC.format(name="a") + "---\n" + K8S_DOC.format(name="b")
    assert [l for c, l in found(doc, "pod.yaml") if c == "SGL107"] == [12, 23]


def test_directive_before_an_sglang_config_mapping_applies_to_it():
    text = "# sglang-lsp: gpu=MI300X\nmodel-path: /models/x\nquantization: w8a8_int8\n"
    assert "SGL107" in codes(text, "server.yaml")
    assert "SGL107" not in codes(text.replace("MI300X", "H100"), "server.yaml")


def test_model_directive_reads_the_named_checkpoint(tmp_path):
    model = tmp_path / "ckpt"
    shutil.copytree(MODELS / "llama3-8b", model)
    r = result(f"# sglang-lsp: model={model}\n" + 'python -m sglang.launch_server --model-path "$MODEL"\n',
               str(tmp_path / "run.sh"))
    at = r.invocations[0].span.start
    assert r.context.resolve("model", at).value == str(model)
    from sglang_lsp.context.launch import launch_context

    ctx = launch_context(r.parsed[0], r.invocations[0], gpu=None, base_dirs=[str(tmp_path)], sglang_version=None,
                         model_dir="ckpt")  # relative to the file's directory
    assert ctx.model is not None and ctx.model_facts()["known"] is True
    assert launch_context(r.parsed[0], r.invocations[0], gpu=None, base_dirs=[], sglang_version=None).model is None


def test_model_directive_feeds_the_rules():
    # a GPTQ checkpoint becomes gptq_marlin, which ROCm refuses (SGL107); the hub id is not cached here
    launch = "python -m sglang.launch_server --model-path someorg/llama3-8b-gptq\n"
    directive = f"# sglang-lsp: gpu=MI300X model={MODELS / 'llama3-8b-gptq'}\n"
    assert "SGL107" in codes(directive + launch)
    assert "SGL107" not in codes("# sglang-lsp: gpu=MI300X\n" + launch)


def test_model_directive_facts_feed_the_rules():
    text = "# sglang-lsp: model.quant_method=awq model.quant_bits=4\n" + AMD_ONLY
    r = result(text)
    facts = r.context.prefixed("model.", r.invocations[0].span.start)
    assert {k: v.value for k, v in facts.items()} == {"quant_method": "awq", "quant_bits": 4}


def test_sglang_directive_selects_the_catalog():
    r = result("# sglang-lsp: sglang=v0.5.23\n" + AMD_ONLY)
    assert r.context.resolve("sglang-version", r.invocations[0].span.start).value == "0.5.23"


@pytest.mark.parametrize("comment, message", [
    ("# sglang-lsp: gpus=H100", "unknown directive setting `gpus`; did you mean `gpu`?"),
    ("# sglang-lsp: gpu=H1000", "unknown GPU `H1000`; did you mean `H100`?"),
    ("# sglang-lsp: sglang=0.4.99", "no flag catalog for sglang '0.4.99': known releases are 0.4.0"),
    ("# sglang-lsp: model.quant_methd=awq", "unknown model fact `quant_methd`; did you mean `quant_method`?"),
    ("# sglang-lsp: gpu", "`gpu` is not a `key=value` directive setting"),
    ("# sglang-lsp: gpu=", "`gpu=` has no value"),
    ("# sglang-lsp: ignore SGL107", "a suppression needs its codes in brackets"),
    ("# sglang-lsp: ignore[SGL1] x", "`SGL1` is not a rule code (e.g. SGL101); use ignore-file[…] for a prefix"),
    ("# sglang-lsp: ignore[ALL] x", "`ALL` is not a rule code (e.g. SGL101); name the codes to suppress"),
    ("# sglang-lsp: ignore[SGL999] x", "no rule has the code `SGL999`"),
    ("# sglang-lsp: ignore[SGL107 x", "`ignore[` is not closed with `]`"),
    ("# sglang-lsp: ignore[] x", "`ignore[]` names no rule code"),
    ("# sglang-lsp: ignore-file[E501] x", "`E501` is not a rule code or prefix"),
    ("# sglang-lsp:", "empty `# sglang-lsp:` directive"),
])
def test_invalid_directives_are_reported(comment, message):
    r = result(comment + "\n" + AMD_ONLY)
    sgl040 = [f for f in r.findings if f.code == "SGL040"]
    assert len(sgl040) == 1 and message in sgl040[0].message, [f.message for f in sgl040]
    assert r.document.line_of(sgl040[0].span.start) == 0


def test_settings_directive_after_code_is_reported():
    r = result(AMD_ONLY.rstrip("\n") + "  # sglang-lsp: gpu=MI300X\n")
    assert [f.code for f in r.findings] == ["SGL040"]
    assert "on a line of their own" in r.findings[0].message


def test_directive_inside_a_string_is_no_directive():
    assert codes("echo '# sglang-lsp: gpu=MI300X'\n" + AMD_ONLY) == []
    assert codes('echo "x # sglang-lsp: ignore[SGL107] y"\n') == []
    assert codes("cat <<EOF\n# sglang-lsp: ignore[SGL107] y\nEOF\n") == []
    assert codes('args: ["--x", "a # sglang-lsp: ignore[SGL107] y"]\n', "c.yaml") == []


# --- suppressions -----------------------------------------------------------------------------

CONTINUED = ("# sglang-lsp: gpu=MI300X\n"
             "\n"
             "# sglang-lsp: ignore[SGL107,SGL001] fork with int8 kernels\n"
             "python -m sglang.launch_server --model-path /models/x \\\n"
             "  --quantization w8a8_int8 \\\n"
             "  --bogus 1\n"
             "python -m sglang.launch_server --model-path /models/x --quantization w8a8_int8 --bogus 2\n")


def test_suppression_before_a_command_covers_all_its_lines_and_nothing_else():
    assert found(CONTINUED) == [("SGL107", 7), ("SGL001", 7)] or sorted(found(CONTINUED)) == [("SGL001", 7), ("SGL107", 7)]
    assert sorted(found(CONTINUED.replace("# sglang-lsp: ignore", "# sglang-lsp: ignorex"))) != sorted(found(CONTINUED))


def test_trailing_suppression_covers_its_line_only():
    text = ("# sglang-lsp: gpu=MI300X\n\n"
            "python -m sglang.launch_server --model-path /models/x \\\n"
            "  --bogus 1 \\\n"
            "  --quantization w8a8_int8  # sglang-lsp: ignore[SGL107] patched kernels\n")
    assert found(text) == [("SGL001", 4)]


def test_ignore_file_takes_prefixes_anywhere():
    text = "# sglang-lsp: gpu=MI300X\n\n" + AMD_ONLY + "python -m sglang.launch_server --model-path /m --bogus 1\n" \
        + "# sglang-lsp: ignore-file[SGL1,SGL001] migration pending\n"
    assert found(text) == []


def test_unused_suppressions_are_reported_with_a_safe_fix():
    text = ("# sglang-lsp: ignore[SGL107] not needed any more\n"
            "python -m sglang.launch_server --model-path /m --bogus 1  # sglang-lsp: ignore[SGL001,SGL009] fork flag\n"
            "# sglang-lsp: ignore-file[SGL02] generated\n")
    r = result(text)
    unused = [(f.message, r.document.slice(f.span.start, f.span.end)) for f in r.findings if f.code == "SGL041"]
    assert unused == [
        ("unused suppression `ignore[SGL107]`: no finding here to suppress",
         "# sglang-lsp: ignore[SGL107] not needed any more"),
        ("unused suppression of `SGL009`: no SGL009 finding here", "SGL009"),
        ("unused suppression `ignore-file[SGL02]`: no finding in this file to suppress",
         "# sglang-lsp: ignore-file[SGL02] generated"),
    ]
    outcome = fix_document(Document(text, "run.sh", "shell"))
    assert outcome.text == ("python -m sglang.launch_server --model-path /m --bogus 1  "
                            "# sglang-lsp: ignore[SGL001] fork flag\n")
    assert outcome.result.findings == []


def test_a_fully_unused_trailing_suppression_goes_with_its_leading_space():
    text = "python -m sglang.launch_server --model-path /m  # sglang-lsp: ignore[SGL001] old\n"
    outcome = fix_document(Document(text, "run.sh", "shell"))
    assert outcome.text == "python -m sglang.launch_server --model-path /m\n"


def test_usage_is_decided_before_rule_selection(tmp_path, capsys):
    script = tmp_path / "run.sh"
    script.write_text("python -m sglang.launch_server --model-path /m --bogus 1  # sglang-lsp: ignore[SGL001] fork\n")
    assert main(["check", "--isolated", "--format", "json", "--select", "SGL041", str(script)]) == 0
    assert json.loads(capsys.readouterr().out)["diagnostics"] == []
    # and --fix removes a really unused one
    script.write_text("# sglang-lsp: ignore[SGL107] gone\npython -m sglang.launch_server --model-path /m\n")
    assert main(["check", "--isolated", "--fix", "-q", str(script)]) == 0
    assert script.read_text() == "python -m sglang.launch_server --model-path /m\n"


def test_suppression_without_a_reason_is_a_hint():
    r = result("python -m sglang.launch_server --model-path /m --bogus 1  # sglang-lsp: ignore[SGL001]\n")
    assert [(f.code, f.severity.value) for f in r.findings] == [("SGL042", "hint")]
    r = result("python -m sglang.launch_server --model-path /m --bogus 1\n# sglang-lsp: ignore-file[SGL042,SGL001]\n")
    assert r.findings == []  # ignore-file silences the suppression reports too


def test_yaml_comment_above_a_list_item_suppresses_it():
    text = ("# sglang-lsp: gpu=MI300X\n"
            "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n  - name: s\n"
            "    command: [\"python3\", \"-m\", \"sglang.launch_server\"]\n"
            "    args:\n"
            "    - --model-path\n    - /models/x\n"
            "    # sglang-lsp: ignore[SGL107] patched image\n"
            "    - --quantization\n    - w8a8_int8\n"
            "    - --bogus\n")
    assert found(text, "pod.yaml") == [("SGL001", 15)]


def test_comment_inside_a_literal_block_is_a_script_comment():
    text = ("# sglang-lsp: gpu=MI300X\n\n"
            "services:\n  sglang:\n    image: lmsysorg/sglang\n    command:\n    - bash\n    - -c\n    - |\n"
            "      echo start\n"
            "      # sglang-lsp: ignore[SGL107] patched image\n"
            "      python3 -m sglang.launch_server --model-path /models/x \\\n"
            "        --quantization w8a8_int8 --bogus 1\n")
    assert found(text, "compose.yaml") == [("SGL001", 13)]


# --- suppression edits (code actions) ---------------------------------------------------------


def suppress_and_recheck(text: str, path: str, code: str, title_part: str) -> str:
    r = result(text, path)
    finding = next(f for f in r.findings if f.code == code)
    fixes = [fx for fx in suppression_fixes(r, finding) if title_part in fx.title]
    assert len(fixes) == 1, [fx.title for fx in suppression_fixes(r, finding)]
    fixed = apply_fix(r.document.data, fixes[0]).decode()
    after = codes(fixed, path)
    assert code not in after and "SGL041" not in after and "SGL040" not in after, (fixed, after)
    return fixed


def test_suppress_a_command_in_a_script_keeps_indentation():
    text = "if true; then\n  python -m sglang.launch_server --model-path /m \\\n    --bogus 1\nfi\n"
    fixed = suppress_and_recheck(text, "run.sh", "SGL001", "for this launch command")
    assert fixed.splitlines()[1] == "  # sglang-lsp: ignore[SGL001] reason"


def test_no_trailing_suppression_after_a_line_continuation():
    text = "python -m sglang.launch_server --model-path /m \\\n  --bogus 1 \\\n  --port 1\n"
    r = result(text)
    f = next(f for f in r.findings if f.code == "SGL001")
    assert [fx.title for fx in suppression_fixes(r, f)] == ["Suppress SGL001 for this launch command"]
    # on the last line a trailing comment is fine
    text = "python -m sglang.launch_server --model-path /m \\\n  --port 1 --bogus 1\n"
    fixed = suppress_and_recheck(text, "run.sh", "SGL001", "on this line")
    assert fixed.splitlines()[1] == "  --port 1 --bogus 1  # sglang-lsp: ignore[SGL001] reason"


def test_no_trailing_suppression_inside_a_multiline_string():
    text = "bash -c 'python -m sglang.launch_server --model-path /m --bogus 1\necho done'\n"
    r = result(text)
    f = next(f for f in r.findings if f.code == "SGL001")
    assert "Suppress SGL001 on this line" not in [fx.title for fx in suppression_fixes(r, f)]


def test_suppression_is_added_to_an_existing_comment():
    text = "# sglang-lsp: ignore[SGL009] repeated on purpose\npython -m sglang.launch_server --model-path /m " \
           "--port 1 --port 2 \\\n  --bogus 1\n"
    fixed = suppress_and_recheck(text, "run.sh", "SGL001", "Add SGL001")
    assert fixed.startswith("# sglang-lsp: ignore[SGL009,SGL001] repeated on purpose\n")


K8S_BLOCK_ARGS = """\
apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  containers:
  - name: s
    command: ["python3", "-m", "sglang.launch_server"]
    args:
    - --model-path
    - /models/x
    - --bogus
    - "1"
"""


def test_suppress_in_a_kubernetes_args_list():
    fixed = suppress_and_recheck(K8S_BLOCK_ARGS, "pod.yaml", "SGL001", "on this line")
    assert "    - --bogus  # sglang-lsp: ignore[SGL001] reason\n" in fixed
    fixed = suppress_and_recheck(K8S_BLOCK_ARGS, "pod.yaml", "SGL001", "for this launch command")
    assert '    # sglang-lsp: ignore[SGL001] reason\n    command: ["python3"' in fixed


def test_suppress_in_a_folded_scalar_goes_above_the_key():
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n  - name: s\n"
            "    command: [\"bash\", \"-c\"]\n"
            "    args:\n"
            "    - >\n"
            "      python3 -m sglang.launch_server --model-path /models/x\n"
            "      --bogus 1\n")
    r = result(text, "pod.yaml")
    f = next(f for f in r.findings if f.code == "SGL001")
    titles = [fx.title for fx in suppression_fixes(r, f)]
    assert titles == ["Suppress SGL001 for this launch command"]  # no trailing comment inside `>`
    fixed = suppress_and_recheck(text, "pod.yaml", "SGL001", "for this launch command")
    assert "    # sglang-lsp: ignore[SGL001] reason\n    - >\n" in fixed


def test_suppress_in_a_literal_block_goes_inside_the_script():
    text = ("services:\n  s:\n    image: lmsysorg/sglang\n    command:\n    - bash\n    - -c\n    - |\n"
            "      echo start\n"
            "      python3 -m sglang.launch_server --model-path /models/x --bogus 1\n")
    fixed = suppress_and_recheck(text, "compose.yaml", "SGL001", "for this launch command")
    assert "      echo start\n      # sglang-lsp: ignore[SGL001] reason\n      python3" in fixed


def test_findings_in_other_files_get_no_suppression_edit(tmp_path):
    cfg = tmp_path / "server.yaml"
    cfg.write_text("model_path: /m\nbogus-key: 1\n")
    script = tmp_path / "run.sh"
    text = f"python -m sglang.launch_server --config {cfg.name}\n"
    r = result(text, str(script))
    elsewhere = [f for f in r.findings if f.span.path is not None]
    assert elsewhere and all(suppression_fixes(r, f) == [] for f in elsewhere)


def test_no_unused_report_when_the_check_failed(monkeypatch):
    import sglang_lsp.engine.check as engine

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(engine, "kb_findings", broken)
    r = result("# sglang-lsp: gpu=MI300X\n# sglang-lsp: ignore[SGL107] patched\n" + AMD_ONLY)
    assert r.errors and "SGL041" not in [f.code for f in r.findings]
