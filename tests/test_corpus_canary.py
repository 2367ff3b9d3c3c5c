"""The corpus of real launch files (tests/corpus/) and its canary ratchet (issue 19, "Proof").

* The manifest fits the files: every copy is byte-exact (its git blob id is the recorded one), every
  copied file has a licence and every file under files/ is listed, every plant's anchor is where the
  manifest says and the canary lands on the expected line, and a plant keeps a file that parsed
  before parsable (YAML, JSON notebooks, Python, bash -n).
* The ratchet: every launch recorded as caught in tests/corpus/caught.json is still caught, and no
  kind's share drops below the recorded one. After an engine change that catches more launches,
  run ``python tools/corpus/canary.py --update`` and commit caught.json.
"""

from __future__ import annotations

import ast
import hashlib
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "corpus"))

import canary  # noqa: E402

MANIFEST = canary.load_manifest()
FILES = canary.FILES
PERMISSIVE = {"Apache-2.0", "MIT", "MIT-0", "BSD-3-Clause", "UPL-1.0"}


def _blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _licence_ids(text: str) -> set[str]:
    return {word.strip("(),") for word in text.replace("/", " ").split()} & PERMISSIVE


def test_every_copy_is_exact_licensed_and_listed():
    listed = set()
    for entry in MANIFEST["files"]:
        path = FILES / entry["file"]
        assert path.is_file(), entry["file"]
        assert _blob_id(path.read_bytes()) == entry["blob"], f"{entry['file']} differs from {entry['repo']}@{entry['commit']}"
        assert _licence_ids(entry["license"]), f"{entry['file']}: licence {entry['license']!r} is not a permissive one"
        assert entry["kind"] in canary.KINDS and entry["file"].startswith(entry["kind"] + "/")
        assert len(entry["commit"]) == 40 and entry["repo"].count("/") == 1 and entry["path"]
        assert not entry["repo"].lower().endswith("/sglang"), "no files from sglang itself or its forks"
        listed.add(entry["file"])
    on_disk = {p.relative_to(FILES).as_posix() for p in FILES.rglob("*") if p.is_file()}
    assert on_disk == listed


def test_every_source_repository_has_its_licence_text():
    licences = canary.CORPUS / "LICENSES"
    for entry in MANIFEST["files"]:
        folder = licences / entry["repo"].replace("/", "__")
        if entry["source"] == "git":
            assert any(p.name.upper().startswith("LICEN") for p in folder.iterdir()), entry["repo"]
        else:  # read through the code index: Apache-2.0, whose text NOTICE.md points to
            assert entry["license"] == "Apache-2.0", entry["repo"]
    assert (licences / "kubernetes-sigs__lws" / "LICENSE").is_file()


def test_references_are_not_copied():
    copied = {(e["repo"], e["path"]) for e in MANIFEST["files"]}
    for ref in MANIFEST["references"]:
        assert ref["repo"] and len(ref["commit"]) == 40 and ref["path"] and ref["reason"] and ref["kind"] in canary.KINDS
        assert (ref["repo"], ref["path"]) not in copied


def test_launch_ids_are_unique_and_every_launching_kind_is_represented():
    launches = canary.launches_of(MANIFEST)
    ids = [launch.id for launch in launches]
    assert len(ids) == len(set(ids))
    assert {launch.kind for launch in launches} == set(canary.KINDS)
    files_with_launches = {launch.file for launch in launches}
    assert len(files_with_launches) >= 150


def _planted(entry: dict) -> tuple[str, str, dict[str, int], list]:
    plants = [launch for launch in canary.launches_of({"files": [entry]})]
    original = (FILES / entry["file"]).read_bytes().decode("utf-8")
    planted, expected = canary.plant(original, plants)
    return original, planted, expected, plants


@pytest.mark.parametrize("entry", [e for e in MANIFEST["files"] if e["launches"]], ids=lambda e: e["file"])
def test_plants_land_on_their_expected_lines(entry):
    original, planted, expected, plants = _planted(entry)
    lines = planted.split("\n")
    canary_words = (MANIFEST["canary"]["flag"], MANIFEST["canary"]["kwarg"])
    per_line = Counter(expected.values())
    for launch in plants:
        line = lines[expected[launch.id] - 1]
        assert sum(line.count(w) for w in canary_words) == per_line[expected[launch.id]], (launch.id, line)
        # planted alone, the canary is on the manifest's own expect_line
        alone, where = canary.plant(original, [launch])
        assert where[launch.id] == launch.expect_line
        assert any(w in alone.split("\n")[launch.expect_line - 1] for w in canary_words)
    assert planted.count("sglang-lsp-canary") + planted.count("sglang_lsp_canary") == (
        original.count("sglang-lsp-canary") + original.count("sglang_lsp_canary") + len(plants)
    )


def _parses(kind: str, name: str, text: str) -> bool:
    if kind == "notebook":
        json.loads(text)
    elif kind == "python":
        ast.parse(text)
    elif kind == "yaml":
        list(yaml.safe_load_all(text))
    elif kind == "shell":
        bash = shutil.which("bash")
        if bash is None:
            return True
        if subprocess.run([bash, "-n"], input=text, text=True, capture_output=True).returncode != 0:
            raise SyntaxError(name)
    return True


@pytest.mark.parametrize(
    "entry",
    [e for e in MANIFEST["files"] if e["launches"] and e["kind"] in ("notebook", "python", "yaml", "shell")],
    ids=lambda e: e["file"],
)
def test_plants_keep_a_parsable_file_parsable(entry):
    original, planted, _, _ = _planted(entry)
    try:
        _parses(entry["kind"], entry["file"], original)
    except Exception:  # noqa: BLE001 - a file its consumer parses differently (none today) is not checked
        pytest.skip("the original does not parse with this parser")
    _parses(entry["kind"], entry["file"], planted)


def test_plant_refuses_a_misplaced_anchor():
    entry = next(e for e in MANIFEST["files"] if e["launches"])
    launch = canary.launches_of({"files": [entry]})[0]
    moved = canary.Launch(**{**launch.__dict__, "col": launch.col + 1})
    with pytest.raises(canary.CorpusError):
        canary.plant((FILES / entry["file"]).read_text(encoding="utf-8"), [moved])


@pytest.fixture(scope="module")
def outcome():
    return canary.measure(MANIFEST)


def test_findings_of_another_rule_catch_nothing():
    # the caught set comes from the CLI's canary findings: counting a rule that never names an
    # unknown flag (SGL002, invalid choice) catches no launch
    other = {**MANIFEST, "canary": {**MANIFEST["canary"], "finding_code": "SGL002"}}
    result = canary.measure(other)
    assert result.cli_errors == {} and result.caught == set()


def test_cli_reads_every_kind_it_is_given(outcome):
    assert outcome.cli_errors == {}


def test_no_canary_finding_lands_where_no_plant_is(outcome):
    assert outcome.stray == []


def test_launches_recorded_as_caught_are_still_caught(outcome):
    recorded = json.loads(canary.CAUGHT.read_text(encoding="utf-8"))
    known = {launch.id for launch in outcome.launches}
    assert set(recorded["caught"]) <= known, "caught.json names launches the manifest no longer has"
    lost = sorted(set(recorded["caught"]) - outcome.caught)
    assert not lost, f"{len(lost)} launches are no longer caught, e.g. {lost[:5]}"


def test_no_kind_catches_a_smaller_share_than_recorded(outcome):
    recorded = json.loads(canary.CAUGHT.read_text(encoding="utf-8"))["per_kind"]
    now = outcome.per_kind()
    for kind, row in recorded.items():
        if row["share"] is not None:
            assert now[kind]["share"] >= row["share"], f"{kind}: {now[kind]['share']} < recorded {row['share']}"
