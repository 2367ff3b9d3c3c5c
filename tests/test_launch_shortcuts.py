"""The shortcuts of the per-launch path give the answers of the slow way they replace.

Each test compares a precomputed or narrowed computation with the plain one on many inputs
(real flags, their typos, and arbitrary text), so a shortcut that drifts from what it stands
for fails here before it changes a finding.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sglang_lsp.catalog import argv, argv_words
from sglang_lsp.context.script_placement import ShellView
from sglang_lsp.checks.kb import evaluate as kb_evaluate
from sglang_lsp.checks.kb.effective import LaunchResolver
from sglang_lsp.checks.kb.rule import kb_rules
from sglang_lsp.base.unknown import UNKNOWN
from sglang_lsp.context.facts import Context
from sglang_lsp.catalog.catalog import load_catalog
from sglang_lsp.base.document import Document, decode
from sglang_lsp.engine.check import Options, check_document, detect_language
from sglang_lsp.base.findings import Span
from sglang_lsp.base.invocation import Word
from sglang_lsp.context.precedence import KIND_RANK, LaunchContext, Origin

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
    narrowed = argv_words.close_candidates(CAT, word, cutoff)
    assert set(narrowed) <= set(LONG)
    assert difflib.get_close_matches(word, narrowed, n=5, cutoff=cutoff) == \
        difflib.get_close_matches(word, LONG, n=5, cutoff=cutoff)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=30))
def test_close_candidates_on_arbitrary_text(word):
    assert difflib.get_close_matches(word, argv_words.close_candidates(CAT, word, 0.75), n=5, cutoff=0.75) == \
        difflib.get_close_matches(word, LONG, n=5, cutoff=0.75)


# --- knowledge-base rules: only the rules a launch's inputs can change are evaluated ----------

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted(p for p in [*(ROOT / "tests" / "fixtures" / "rules").rglob("*"), *(ROOT / "examples").rglob("*")]
               if p.suffix in (".sh", ".yaml", ".yml"))


def _every_rule(parsed, ctx, declared) -> list[str]:
    """The rules that fire, each condition evaluated in full, nothing memoised or skipped: TRUE
    for the launch, or, its GPU not named, UNKNOWN for it and TRUE on each GPU profile it may
    run on (issue 19 §2)."""
    resolver = LaunchResolver(parsed, ctx, declared)
    _, candidates = kb_evaluate._candidates(ctx, parsed)
    on_each = [LaunchResolver(parsed, Context(gpu=gpu, model=ctx.model, model_dummy=ctx.model_dummy, env=ctx.env,
                                              sglang_version=ctx.sglang_version, draft_model=ctx.draft_model),
                              declared) for gpu in candidates or ()]
    version = ctx.sglang_version or parsed.catalog.sglang_version
    out = []
    for rule in kb_rules():
        if not rule.applies_to(version) or (rule.skip_for_dummy_model and ctx.model_dummy):
            continue
        try:
            verdict = rule.condition.evaluate(resolver)
            if verdict is UNKNOWN and on_each:
                verdict = all(rule.condition.evaluate(r) is True for r in on_each)
        except Exception:  # a broken rule fires nowhere
            continue
        if verdict is True:
            out.append(rule.code)
    return out


@pytest.mark.parametrize("gpu", [None, "B200", "MI300X"])
def test_rules_fire_as_if_every_condition_were_evaluated(gpu, monkeypatch):
    """Every fixture and example, on no GPU and on two: each launch's inputs are those read one by
    one, and its findings name the rules a plain evaluation of every condition fires, in the
    rules' order."""
    compared = 0
    original = kb_evaluate.evaluate_launch

    def both(parsed, ctx, inv=None, **kw):
        nonlocal compared
        found, undecided = original(parsed, ctx, inv, **kw)
        assert [f.code for f in found] == _every_rule(parsed, ctx, kw.get("declared_model"))
        compared += 1
        return found, undecided

    compare = kb_evaluate._Unset.compare

    def checked_compare(self, plan, resolver):
        out = compare(self, plan, resolver)
        vector, changed = out[0], out[1]
        plain = plan.inputs(resolver)
        assert tuple(vector) == plain, [(plan.names[i] if i < len(plan.names) else i, v, plain[i])
                                        for i, v in enumerate(vector) if v != plain[i]][:5]  # every input read the plain way
        assert set(changed) >= {i for i, v in enumerate(vector) if v != self.vector[i]}
        return out

    monkeypatch.setattr(kb_evaluate, "evaluate_launch", both)
    monkeypatch.setattr(kb_evaluate._Unset, "compare", checked_compare)
    for path in FILES:
        text = decode(path.read_bytes())
        language = detect_language(str(path), text) or "shell"
        check_document(Document(text, str(path), language), Options(gpu=gpu))
    assert compared > 500


def _findings_and_undecided(files, gpu) -> list:
    out = []
    for path in files:
        text = decode(path.read_bytes())
        result = check_document(Document(text, str(path), detect_language(str(path), text) or "shell"), Options(gpu=gpu))
        out.append(([(f.code, f.message, f.span) for f in result.findings],
                    sorted(tuple((c.code, c.causes) for c in u.checks()) for u in result.undecided.values())))
    return out


@pytest.mark.parametrize("gpu", [None, "H100"])
def test_the_first_launch_of_a_context_is_told_as_a_later_one(gpu, monkeypatch):
    """The first launch of a context is evaluated rule by rule; later ones against the launch
    giving no flag in that context (built for the second). Findings and undecided checks are
    the same either way: every launch rule by rule, every launch against the base."""
    files = [p for p in FILES if p.suffix == ".sh"][::3]
    assert len(files) > 150
    plan_of = kb_evaluate._Plan._unset_for
    mixed = _findings_and_undecided(files, gpu)  # (each context's first launch rule by rule)
    assert any(undecided for _, undecided in mixed)
    monkeypatch.setattr(kb_evaluate._Plan, "_unset_for", lambda self, *a, **k: None)
    one_by_one = _findings_and_undecided(files, gpu)
    seen_key = []

    def always_base(self, resolver, version, ctx, declared, kind, candidates):
        hit = plan_of(self, resolver, version, ctx, declared, kind, candidates)
        if hit is None:  # a first launch: build the base now, as for a second one
            hit = plan_of(self, resolver, version, ctx, declared, kind, candidates)
            seen_key.append(hit is not None)
        return hit

    monkeypatch.setattr(kb_evaluate._Plan, "_unset_for", always_base)
    kb_evaluate._PLANS.clear()
    against_base = _findings_and_undecided(files, gpu)
    assert seen_key and all(seen_key)
    assert one_by_one == mixed
    assert against_base == mixed


# --- argv: a value that passed every check of its flag is not converted again ----------------

VALUED = [o for o in CAT.options if o.option_strings and o.option_strings[0].startswith("--") and o.nargs is None
          and not o.is_switch and o.action in ("store", "append")]


def _resolved(words: list[str]):
    parsed = argv.resolve(CAT, [Word(w, Span(i * 100, i * 100 + len(w))) for i, w in enumerate(words)],
                          open_argv=True)
    return ([(f.code, f.message, f.span) for f in parsed.findings],
            [(u.spelling, u.converted) for u in parsed.uses], parsed.values)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(VALUED), st.one_of(st.text(max_size=12), st.sampled_from(["1", "0", "-1", "2.5", "auto", "fp8",
                                                                                  "[1, 2]", "{}", "true", "None"])))
def test_a_remembered_value_resolves_as_a_new_one(option, text):
    flag = option.option_strings[0]
    words = [f"{flag}={text}"] if text.startswith("-") else [flag, text]
    argv_words.readings.cache_clear()
    first = _resolved(words)
    assert _resolved(words) == first  # the second time remembered with the flag's reading where it passed
    if option.choices:
        words = [flag, str(option.choices[0])]
        argv_words.readings.cache_clear()
        assert _resolved(words) == _resolved(words)


# --- deployment: a script's `NAME=value` assignments found from the name ----------------------


def _assignments_plainly(data: bytes, name: str) -> list[tuple[int, int, int]]:
    """(match end, value start, value end) of every `NAME=value` after a blank, `;` or the
    start, `export` allowed: the one regex the shortcut stands for."""
    pattern = re.compile(rb"(?:^|[\s;])(?:export[ \t]+)?" + re.escape(name.encode()) + rb"=([\"']?)([^\s\"';]*)\1")
    return [(m.end(), m.start(2), m.end(2)) for m in pattern.finditer(data)]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["A", "A=", "=", " ", "\n", ";", "export ", "'", '"', "x", "XA=", "\t", "$A", "A=1",
                                 "_", "é"]), max_size=14))
def test_assignment_spans_as_the_plain_regex_finds_them(pieces):
    text = "".join(pieces)
    data = text.encode()
    view = ShellView(Document(text, "x.sh", "shell"))
    view._assignment_span("A", len(data) + 1)  # finds (and keeps) every assignment of A in the script
    ends, spans = view._assignments["A"]
    found = [(end, span.start, span.end) for end, span in zip(ends, spans)]
    assert found == _assignments_plainly(data, "A")


# --- precedence: the winning value is the first candidate ------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["gpu", "model", "gpu-class"]), st.sampled_from(list(KIND_RANK)),
                          st.one_of(st.none(), st.tuples(st.integers(0, 50), st.integers(0, 50)))), max_size=8),
       st.sampled_from(["gpu", "model"]), st.one_of(st.none(), st.integers(0, 60)))
def test_the_resolved_value_is_the_best_candidate(entries, key, at):
    context = LaunchContext()
    for n, (k, kind, scope) in enumerate(entries):
        context.add(k, n, Origin(kind), Span(min(scope), max(scope)) if scope else None)
    candidates = context.candidates(key, at)
    assert context.resolve(key, at) is (candidates[0] if candidates else None)
