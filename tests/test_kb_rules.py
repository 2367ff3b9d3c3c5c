"""The knowledge-base rule files: schema, names against the catalog, seed records kept, docs in
sync with the files, registry integration."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sglang_lsp import rules
from sglang_lsp.catalog.catalog import load_catalog
from sglang_lsp.kb import RECORD_FIELDS, load_rule_files, validate, KbError
from sglang_lsp.checks.kb.conditions import parse
from sglang_lsp.checks.kb.rule import kb_rules
from sglang_lsp.checks.kb.index import validate_rule_names

ROOT = Path(__file__).resolve().parents[1]
SHARED_SEEDS = ROOT.parent / "shared" / "seeds"
# the shared seed records when they sit next to the checkout, else the copy kept with the tests
# (tests/fixtures/kb_seeds), so the check never skips silently; the copy is held equal below
SEEDS = SHARED_SEEDS if SHARED_SEEDS.is_dir() else Path(__file__).resolve().parent / "fixtures" / "kb_seeds"
SEED_IDS = {"51240749c376f000", "717c9f910850c412", "5f16a94740f6bf7e", "a5a9144b79b0cc5b"}
FILES = load_rule_files()
CODES = [r["code"] for r in FILES]
RULES = kb_rules()


def test_there_are_rules_and_codes_are_sgl1xx_or_sgl2xx_and_unique():
    assert len(FILES) >= 30
    assert len(set(CODES)) == len(CODES)
    assert all(re.fullmatch(r"SGL[12]\d\d", c) for c in CODES)
    assert len({r["kb_id"] for r in FILES}) == len(FILES)


def test_seed_records_are_rules_with_their_ids():
    assert SEED_IDS <= {r["kb_id"] for r in FILES}


@pytest.mark.skipif(not SHARED_SEEDS.is_dir(), reason="the shared seed records are not next to the checkout")
def test_the_seed_copy_kept_with_the_tests_is_the_shared_one():
    copy = Path(__file__).resolve().parent / "fixtures" / "kb_seeds"
    shared = {p.name: p.read_bytes() for p in SHARED_SEEDS.glob("*.txt")}
    assert shared
    assert {p.name: p.read_bytes() for p in copy.glob("*.txt")} == shared


def test_json_seed_records_are_kept_verbatim():
    by_id = {r["kb_id"]: r for r in FILES}
    paths = sorted(SEEDS.glob("*.txt"))
    assert paths, SEEDS
    for path in paths:
        text = path.read_text()
        if not text.lstrip().startswith("{"):
            continue
        data = json.loads(text)
        rec = data["record"]
        kept = by_id[rec["id"]]["record"]
        for k, v in rec.items():
            assert kept[k] == v, (rec["id"], k)
        assert kept["datasetVersion"] == data["datasetVersion"]


def test_record_pattern_rewrites_match_what_the_record_pattern_matches():
    """A ``record_pattern`` stands in for the record's ``messagePattern`` in explain (which stays
    verbatim): on the record's own message, each interpolation filled with a class name or a
    number, both match, and capture the same text."""
    rewritten = [r for r in FILES if "record_pattern" in r]
    assert rewritten, "no rule file has a record_pattern; drop this test or the field"
    for r in rewritten:
        rec = r["record"]
        assert r["record_pattern"] != rec["messagePattern"], r["code"]
        for filler in ("TritonMoeQuantInfo", "NoneType", "42"):
            message = re.sub(r"\{[^{}]*\}", filler, rec["errorMessage"])
            verbatim = re.search(rec["messagePattern"], message)
            linear = re.search(r["record_pattern"], message)
            assert verbatim and linear, (r["code"], filler)
            assert verbatim.groups() == linear.groups(), (r["code"], filler)


@pytest.mark.parametrize("code", CODES)
def test_rule_file_is_complete(code):
    r = next(x for x in FILES if x["code"] == code)
    assert r["condition"], f"{code} has no condition"
    assert set(r["record"]) <= set(RECORD_FIELDS)
    assert r["record"]["messagePattern"]
    for p in [r.get("sglang_error"), r["record"]["messagePattern"]]:
        if p:
            re.compile(p)
    assert r["doc"]["what"] and r["doc"]["why"] and r["doc"]["fix_safety"]
    assert r["example"]["bad"] and r["example"]["good"]
    for ref in r["raised_at"]:
        assert ref["file"].startswith("sglang/") and ref["function"] and ref["line"]
    assert r["tags"]
    assert r["sglang_versions"]


@pytest.mark.parametrize("rule", kb_rules(), ids=lambda r: r.code)
def test_condition_names_exist(rule):
    assert validate_rule_names(rule, load_catalog(None)) == []


def test_registry_lists_kb_rules_with_tags_and_docs():
    reg = rules.registry()
    for code in CODES:
        assert code in reg
        assert reg[code].doc_path.is_file()
        assert reg[code].tags


def test_docs_are_generated_from_the_rule_files():
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "kb_docs.py"), "--check"], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr


def test_index_is_generated_from_the_rule_files():
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "kb_index.py"), "--check"], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("rule", kb_rules(), ids=lambda r: r.code)
def test_indexed_condition_is_the_parsed_one(rule):
    # repr tells 1 from 1.0 and a tuple from a list, which == does not
    assert repr(rule.condition) == repr(parse(rule.condition.source))
    data = next(x for x in FILES if x["code"] == rule.code)
    assert rule.data is data and rule.record is data["record"]
    assert rule.condition.source == (data["condition"] or "false")
    assert rule.sglang_error == (data.get("sglang_error") or data["record"]["messagePattern"])
    # the names the engine plans with are read from the index: those of the parsed condition
    from sglang_lsp.checks.kb.conditions import condition_reads

    assert rule.reads == condition_reads(parse(rule.condition.source))


def test_without_the_index_the_rule_files_are_read(monkeypatch, tmp_path):
    from sglang_lsp import kb
    from sglang_lsp.checks.kb import rule as kb_rule

    monkeypatch.setattr(kb, "INDEX_PATH", tmp_path / "missing.json")
    kb.load_index.cache_clear()
    kb_rule.kb_rules.cache_clear()
    try:
        fresh = kb_rule.kb_rules()
        assert all(r.condition.tree is not None for r in fresh)
        assert [repr(r) for r in fresh] == [repr(r) for r in RULES]  # parsed at load = read from the index
    finally:
        kb.load_index.cache_clear()
        kb_rule.kb_rules.cache_clear()


def test_validation_rejects_bad_files():
    good = dict(next(iter(FILES)))
    good.pop("_file", None)
    validate(good)
    for mutate in [
        lambda d: d.update(severity="fatal"),
        lambda d: d.update(anchor=["quantization"]),
        lambda d: d.update(fixes=[{"kind": "replace", "flag": "--x", "title": "t", "applicability": "safe"}]),
        lambda d: d.update(fixes=[{"kind": "set", "flag": "--x", "title": "t", "applicability": "safe"}]),
        lambda d: d.update(kb_id="other"),
        lambda d: d.update(surprise=1),
        lambda d: d["record"].update(sneaky=1),
        lambda d: d.pop("raised_at"),
        lambda d: d.update(condition=3),
    ]:
        bad = json.loads(json.dumps(good))
        mutate(bad)
        with pytest.raises(KbError):
            validate(bad)


def test_record_code_is_never_executed():
    # no module of the package evaluates or compiles text (from records or anything else)
    for path in sorted((ROOT / "server" / "sglang_lsp").rglob("*.py")):
        src = path.read_text(encoding="utf-8")
        assert not re.search(r"(?<![.\w])(eval|exec|compile)\(", src), path
