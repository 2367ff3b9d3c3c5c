"""The shortcuts of the per-launch path give the answers of the slow way they replace.

Each test compares a precomputed or narrowed computation with the plain one on many inputs
(real flags, their typos, and arbitrary text), so a shortcut that drifts from what it stands
for fails here before it changes a finding.
"""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from sglang_lsp import argv
from sglang_lsp.catalog import load_catalog

CAT = load_catalog()
LONG = CAT.long_names()


def _typo(draw_flag: str, cut: int, insert: str) -> str:
    cut = cut % max(len(draw_flag), 1)
    return draw_flag[:cut] + insert + draw_flag[cut + 1:]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(LONG), st.integers(0, 60), st.text("abcdefghijklmnopqrstuvwxyz-_=", max_size=3),
       st.sampled_from([0.6, 0.75, 0.9]))
def test_close_candidates_keep_every_close_match(flag, cut, insert, cutoff):
    word = _typo(flag, cut, insert)
    narrowed = argv._close_candidates(CAT, word, cutoff)
    assert set(narrowed) <= set(LONG)
    assert difflib.get_close_matches(word, narrowed, n=5, cutoff=cutoff) == \
        difflib.get_close_matches(word, LONG, n=5, cutoff=cutoff)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=30))
def test_close_candidates_on_arbitrary_text(word):
    assert difflib.get_close_matches(word, argv._close_candidates(CAT, word, 0.75), n=5, cutoff=0.75) == \
        difflib.get_close_matches(word, LONG, n=5, cutoff=0.75)
