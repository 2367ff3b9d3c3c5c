"""`sglang-lsp kb import`: both seed forms → rule files with every documentary field filled."""

from __future__ import annotations

import json
import re
from pathlib import Path

from sglang_lsp.catalog.catalog import load_catalog
from sglang_lsp.cli.main import main
from sglang_lsp.kb import RECORD_FIELDS, validate
from sglang_lsp.kb.importer import draft_fixes, parse_text_record, read_records, to_rule

SEEDS = Path(__file__).resolve().parent / "fixtures" / "kb_seeds"
TEXT_SEED = SEEDS / "003_4d45f14e14d10a7e.txt"


def test_json_form_keeps_every_field():
    for path in sorted(SEEDS.glob("00[012]_*.txt")):
        (rec,) = read_records(str(path))
        raw = json.loads(path.read_text())
        for k, v in raw["record"].items():
            assert rec[k] == v
        assert rec["datasetVersion"] == raw["datasetVersion"]


def test_text_form_is_parsed_into_record_fields():
    rec = parse_text_record(TEXT_SEED.read_text())
    assert rec["id"] == "a5a9144b79b0cc5b"
    assert rec["repo"] == "sgl-project/sglang"
    assert rec["severity"] == "error" and rec["errorClass"] == "ValueError"
    assert rec["errorMessage"].startswith("The Triton WNA16 MoE backend only supports symmetric INT4")
    assert re.search(rec["messagePattern"], rec["errorMessage"])
    assert rec["documentation"].startswith("Raised when the Triton WNA16 MoE backend")
    assert rec["filePath"].endswith("compressed_tensors/compressed_tensors.py") and rec["lineNumber"] == 845
    assert "CompressedTensorsWNA16TritonMoE" in rec["sourceCode"]
    assert len(rec["solutions"]) == 3
    assert rec["exampleFix"].startswith("# before") and "# after" in rec["exampleFix"]
    assert rec["validationCode"].startswith("from compressed_tensors import QuantConfig")
    assert rec["triggerScenarios"].startswith("Server args set")
    assert rec["commonSituations"].startswith("User forces the Triton MoE backend")
    assert len(rec["relatedErrors"]) == 5
    assert rec["analyzedSha"] == "0132848349" and rec["analyzedAt"] == "2026-08-28"
    assert rec["githubUrl"].startswith("https://github.com/sgl-project/sglang/blob/0132848349/")


def test_message_placeholders_become_wildcards():
    rec = json.loads((SEEDS / "001_53f6d9b23dda92d0.txt").read_text())["record"]
    rule = to_rule({**rec, "messagePattern": None}, "SGL900")
    msg = ("The hpc_ops MoE runner backend only supports FP8-quantized MoE models (Fp8MoEMethod); got quant info "
           "TritonMoeQuantInfo. Note that with expert parallelism this backend also expects global top-k ids, so "
           "other quant methods must not run with --moe-runner-backend hpc_ops.")
    assert re.search(rule["record"]["messagePattern"], msg)


def test_drafted_fixes_come_from_the_example():
    cat = load_catalog(None)
    fixes = draft_fixes("# before\n--quantization nvfp4_online --moe-runner-backend triton\n# after\n"
                        "--quantization nvfp4_online --moe-runner-backend flashinfer_trtllm", cat)
    assert fixes == [{"kind": "set", "flag": "--moe-runner-backend", "value": "flashinfer_trtllm",
                      "applicability": "display", "title": "Set `--moe-runner-backend flashinfer_trtllm`"}]
    fixes = draft_fixes("# before\npython -m sglang.launch_server --model m --moe-runner-backend hpc_ops\n# after\n"
                        "python -m sglang.launch_server --model m", cat)
    assert [f["kind"] for f in fixes] == ["remove"]
    # flags sglang does not have (the text seed's `--moe-backend-type`) are not turned into fixes
    assert draft_fixes("# before\nx --moe-backend-type triton\n# after\nx", cat) == []


def test_cli_import_writes_valid_rule_files(tmp_path, capsys):
    assert main(["kb", "import", *map(str, sorted(SEEDS.glob("*.txt"))), "--out", str(tmp_path)]) == 0
    written = sorted(tmp_path.glob("SGL*.json"))
    assert len(written) == 4
    assert len(list(tmp_path.glob("SGL*.md"))) == 4
    ids = set()
    for p in written:
        rule = json.loads(p.read_text())
        validate(rule, p.name)
        assert rule["condition"] is None  # written by a human
        rec = rule["record"]
        ids.add(rule["kb_id"])
        for field in ("id", "errorMessage", "messagePattern", "errorClass", "severity", "documentation",
                      "triggerScenarios", "commonSituations", "solutions", "exampleFix", "githubUrl", "filePath"):
            assert rec.get(field), (p.name, field)
        assert set(rec) <= set(RECORD_FIELDS)
    assert ids == {"51240749c376f000", "717c9f910850c412", "5f16a94740f6bf7e", "a5a9144b79b0cc5b"}
    # the first free code after the bundled rules
    codes = sorted(int(p.stem[3:]) for p in written)
    assert codes == list(range(codes[0], codes[0] + 4)) and codes[0] > 100
    nv = json.loads(next(p for p in written if "51240749c376f000" in p.read_text()).read_text())
    assert nv["anchor"] == ["--quantization", "--moe-runner-backend"]
    assert {f["kind"] for f in nv["fixes"]} == {"set"}


def test_cli_import_rejects_garbage(tmp_path, capsys):
    bad = tmp_path / "x.txt"
    bad.write_text("hello\nworld\n")
    assert main(["kb", "import", str(bad), "--out", str(tmp_path / "o")]) == 2
