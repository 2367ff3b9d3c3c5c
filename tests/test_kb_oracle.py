"""The knowledge base against sglang itself, without sglang: every case of
``tests/data/oracle_cases.jsonl`` was labelled by sglang 0.5.23's own argument resolution (and
layer construction) with a simulated GPU (``tools/oracle/``, ``../shared/oracle/``). Replaying
the launch through ``check`` must

* report an error whose ``sglang_error`` matches sglang's message for every rejection in the
  scope of a knowledge-base rule (a rule's regex matches the message; a bare ``assert`` counts at
  the rule's own raise site), except the documented gaps in ``oracle_known_gaps.json``;
* report no error at all for any launch sglang accepts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "oracle"))

import replay  # noqa: E402

CASES = replay.load(str(ROOT / "tests" / "data" / "oracle_cases.jsonl"))
GAPS = {k: v for k, v in json.loads((ROOT / "tests" / "data" / "oracle_known_gaps.json").read_text()).items()
        if not k.startswith("_")}


@pytest.fixture(scope="module")
def verdicts():
    summary, vs = replay.replay(CASES)
    return summary, {v.case["id"]: v for v in vs}


def _show(v) -> str:
    return (f"{v.case['id']} on {v.case.get('hardware')} with {v.case.get('model')}: "
            f"{' '.join(map(str, v.case.get('argv') or []))} -> sglang: {(v.case.get('message') or '')[:160]!r}; "
            f"check: {[(f.code, f.message[:80]) for f in v.errors]}")


def test_corpus_is_large_and_varied():
    assert len(CASES) >= 5000
    assert len({c["hardware"] for c in CASES}) == 13
    assert len({c.get("model") for c in CASES}) >= 14
    assert sum(1 for c in CASES if c.get("env")) >= 200
    outcomes = {c["outcome"] for c in CASES}
    assert {"ok", "error"} <= outcomes


def test_no_false_error_on_accepted_launches(verdicts):
    summary, _ = verdicts
    assert summary.accepted > 2000
    assert not summary.false, "\n".join(_show(v) for v in summary.false[:20])


def test_rejections_in_scope_are_reported_and_explained(verdicts):
    summary, _ = verdicts
    assert summary.scope_rejected > 2000
    missed = [v for v in summary.scope_misses if v.case["id"] not in GAPS]
    assert not missed, "\n".join(_show(v) for v in missed[:20])


def test_known_gaps_are_still_gaps(verdicts):
    _, by_id = verdicts
    fixed = [cid for cid in GAPS if cid in by_id and by_id[cid].errors and by_id[cid].explained]
    assert not fixed, f"now detected, remove from oracle_known_gaps.json: {fixed}"


def test_every_rule_is_exercised_by_the_corpus(verdicts):
    from sglang_lsp.checks.kb.rule import kb_rules

    summary, _ = verdicts
    unlabelled = [r.code for r in kb_rules() if summary.per_rule.get(r.code, [0, 0, 0])[0] == 0]
    assert not unlabelled, f"rules without a labelled rejection in the corpus: {unlabelled}"


def test_overall_share(verdicts):
    summary, _ = verdicts
    d = summary.as_dict()
    assert d["detected_pct"] >= 90, d
    assert d["scope_explained_pct"] >= 99, d
