"""`sglang-lsp resolve` against sglang 0.5.23's own resolution, field by field (issue 21's proof).

Every accepted case of the labelled oracle sets has its full resolved configuration in
``tests/data/oracle_resolved_<set>.jsonl.gz`` (``tools/oracle/README.md``). Each case is replayed
as a one-line launch with its GPU and checkpoint, resolved, and compared with sglang's values
(``tools/oracle/score_resolve.py``). The test holds

* the proof's bars on every set: of the values sglang picks itself, at least 95% given right
  (an unknown counts as missed), and at most 0.5% of the values ``resolve`` gives wrong;
* a per-field ratchet (``tests/data/resolve_field_scores.json``, written by
  ``score_resolve.py --write-pins``): no field may give fewer right values, or more wrong ones,
  than when it was pinned.

The sets: ``g1301``/``g1401`` (``gen_cases.py``), ``w2101``/``w2201`` (``gen_cases2.py``, the
independent generator) and ``clusters21`` (grids around issue 21's clusters). ``g1401`` and
``w2201`` were generated and labelled after the model was written (fresh seeds, held out); so were
``w2301``, ``g1501``, ``w2401``, ``w2501``, ``w2601`` and ``g1601``, later (see tests/test_kb_oracle.py).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
sys.path.insert(0, str(ROOT / "tools" / "oracle"))

import score_resolve  # noqa: E402

SETS = ("g1301", "g1401", "w2101", "w2201", "clusters21", "w2301", "g1501", "w2401", "w2501", "w2601", "g1601")
PINS = json.loads((DATA / "resolve_field_scores.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def scores():
    out = {}
    for name in SETS:
        n, fields = score_resolve.score(str(DATA / f"oracle_resolved_{name}.jsonl.gz"))
        out[name] = (n, fields)
    return out


def test_every_set_is_pinned():
    assert set(PINS) == {f"oracle_resolved_{name}.jsonl.gz" for name in SETS}


@pytest.mark.parametrize("name", SETS)
def test_picked_values_right_and_wrong_values_rare(scores, name):
    n, fields = scores[name]
    assert n >= 1000, f"{name}: only {n} accepted launches replayed"
    picked = sum(f.picked for f in fields.values())
    right = sum(f.picked_correct for f in fields.values())
    given = sum(f.correct + f.wrong for f in fields.values())
    wrong = sum(f.wrong for f in fields.values())
    assert picked > 20 * n  # sglang picks some twenty values of every launch itself
    assert right >= 0.95 * picked, f"{name}: {right}/{picked} of sglang's picks right"
    assert wrong <= 0.005 * given, f"{name}: {wrong} wrong of {given} values given"


@pytest.mark.parametrize("name", SETS)
def test_no_field_falls_below_its_pin(scores, name):
    n, fields = scores[name]
    pinned = PINS[f"oracle_resolved_{name}.jsonl.gz"]
    assert n == pinned["launches"]
    worse = []
    for field_name, pin in pinned["fields"].items():
        f = fields.get(field_name)
        if f is None:
            worse.append(f"{field_name}: not scored any more")
            continue
        if f.picked_correct < pin["picked_correct"]:
            worse.append(f"{field_name}: {f.picked_correct} of sglang's picks right, pinned {pin['picked_correct']}")
        if f.picked_wrong > pin["picked_wrong"] or f.wrong > pin["wrong"]:
            worse.append(f"{field_name}: {f.picked_wrong}/{f.wrong} wrong, pinned {pin['picked_wrong']}/{pin['wrong']}")
    assert not worse, f"{name}: " + "; ".join(worse[:20])
