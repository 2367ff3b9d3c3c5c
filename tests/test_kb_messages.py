"""Knowledge-base messages never show a placeholder or a ``?`` (issue 20): an ``effective`` value
that cannot be derived is taken from the flag the launch writes, and what nobody knows is worded
around (:mod:`sglang_lsp.checks.kb.messages`)."""

from __future__ import annotations

import re

import pytest

from sglang_lsp.base.findings import Span
from sglang_lsp.base.invocation import Word
from sglang_lsp.catalog.argv import resolve
from sglang_lsp.catalog.catalog import load_catalog
from sglang_lsp.checks.kb.effective import LaunchResolver
from sglang_lsp.checks.kb.messages import render, render_on_gpus, render_value, render_value_on_gpus
from sglang_lsp.checks.kb.rule import kb_rules
from sglang_lsp.context.facts import PROFILES, Context, gpu_profile
from sglang_lsp.engine.check import check

CAT = load_catalog(None)
RULES = kb_rules()


def resolver(argv: list[str], gpu: str | None = None, open_argv: bool = False) -> LaunchResolver:
    parsed = resolve(CAT, [Word(a, Span(0, 0)) for a in argv], open_argv=open_argv, anchor=Span(0, 0))
    return LaunchResolver(parsed, Context(gpu=gpu_profile(gpu) if gpu else None))


def texts(rule) -> list[str]:
    return [rule.message] + [rel["message"] for rel in rule.related] + [fx["title"] for fx in rule.fixes]


def leaks(text: str) -> list[str]:
    return re.findall(r"\{[a-z]+\.\w+\}|\?|`\s*`|``", text)


# nothing known: no GPU, no model, an argv an unknown expansion may extend (every flag unknown)
NOTHING_KNOWN = [
    pytest.param(lambda: resolver(["--model-path", "m"], open_argv=True), id="open-argv"),
    pytest.param(lambda: resolver(["--model-path", "m"]), id="defaults-only"),
]


@pytest.mark.parametrize("make", NOTHING_KNOWN)
@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_no_placeholder_leaks_with_unknown_facts(rule, make):
    r = make()
    for text in texts(rule):
        shown = render(text, r)
        assert not leaks(shown), f"{rule.code}: {shown!r}"
        assert "  " not in shown and not shown.startswith(" ") and " ;" not in shown, f"{rule.code}: {shown!r}"


@pytest.mark.parametrize("gpus", [("H100",), ("H100", "MI300X", "L40S"), tuple(sorted(PROFILES))],
                         ids=["one", "mixed", "every"])
@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_no_placeholder_leaks_on_gpus_the_launch_may_run_on(rule, gpus):
    """A launch whose GPU is not named, of a rule that holds on every GPU it may run on: what
    those GPUs agree on is shown, what differs is listed, the rest is worded around; a fix's
    value is one agreed value or no fix."""
    base = resolver(["--model-path", "m"])
    on_gpus = lambda: [resolver(["--model-path", "m"], gpu=g) for g in gpus]  # noqa: E731
    for text in texts(rule):
        shown = render_on_gpus(text, base, on_gpus)
        assert not leaks(shown), f"{rule.code}: {shown!r}"
        assert "  " not in shown and not shown.startswith(" ") and " ;" not in shown, f"{rule.code}: {shown!r}"
    for fx in rule.fixes:
        value = fx.get("value")
        if isinstance(value, str) and "{" in value:
            rendered = render_value_on_gpus(value, base, on_gpus)
            assert rendered is None or not leaks(rendered) and " or " not in rendered, (rule.code, rendered)


def test_the_flag_gives_the_value_the_checkpoint_cannot():
    """`--quantization w8a8_int8` on an MI300X without a known checkpoint (the issue's example)."""
    rule = next(r for r in RULES if r.code == "SGL107")
    shown = render(rule.message, resolver(["--model-path", "m", "--quantization", "w8a8_int8"], gpu="MI300X"))
    assert shown == "sglang does not support `w8a8_int8` quantization on ROCm (MI300X)"
    # the same through a check
    text = "# sglang-lsp: gpu=MI300X\npython -m sglang.launch_server --model-path m --quantization w8a8_int8\n"
    assert [f.message for f in check(text, "run.sh") if f.code == "SGL107"] == [shown]


def test_unknown_values_are_worded_around():
    r = resolver(["--model-path", "m"], open_argv=True)
    assert render("sglang does not support `{effective.quantization}` quantization on ROCm ({gpu.name})", r) == \
        "sglang does not support the chosen quantization on ROCm"
    assert render("`--ep-size {args.ep_size}` must divide `--tp-size {args.tp_size}`: they split", r) == \
        "`--ep-size` must divide `--tp-size`: they split"
    assert render("needs a Blackwell GPU; the target is {gpu.name}", r) == "needs a Blackwell GPU"
    assert render("deterministic inference on `{model.arch}` needs fa3", r) == \
        "deterministic inference on this architecture needs fa3"


def test_known_values_are_shown_as_before():
    r = resolver(["--model-path", "m", "--tp-size", "4", "--ep-size", "3"], gpu="H100")
    assert render("`--ep-size {args.ep_size}` must divide `--tp-size {args.tp_size}` on {gpu.name}", r) == \
        "`--ep-size 3` must divide `--tp-size 4` on H100"
    assert render("{args.enable_torch_compile} / {args.kv_cache_dtype}", r) == "false / auto"


def test_a_fix_value_is_none_when_a_placeholder_is_unknown():
    assert render_value("{args.tp_size}", resolver(["--model-path", "m"], open_argv=True)) is None
    assert render_value("{args.tp_size}", resolver(["--model-path", "m", "--tp-size", "8"])) == "8"
