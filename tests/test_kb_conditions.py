"""The condition language: parsing (never eval), Kleene three-valued logic, functions, names."""

from __future__ import annotations

import pytest

from sglang_lsp.base.unknown import UNKNOWN
from sglang_lsp.checks.kb.conditions import ConditionError, Resolver, parse


class Facts(Resolver):
    def __init__(self, values: dict, given: dict | None = None):
        self.values = values
        self.given_ = given or {}

    def value(self, name):
        return self.values.get(name, UNKNOWN)

    def given(self, name):
        return self.given_.get(name, UNKNOWN)


def ev(src: str, **values):
    return parse(src).evaluate(Facts({k.replace("__", "."): v for k, v in values.items()}))


def test_comparisons_and_literals():
    assert ev('args.x == "a"', args__x="a") is True
    assert ev('args.x != "a"', args__x="a") is False
    assert ev("args.n > 1 and args.n <= 8", args__n=4) is True
    assert ev("args.n % 3 == 1", args__n=4) is True
    assert ev("args.n * 2 - 1 == 7", args__n=4) is True
    assert ev("-args.n < 0", args__n=4) is True
    assert ev("args.x == null", args__x=None) is True
    assert ev("args.b == true", args__b=True) is True
    assert ev("args.f >= 0.5", args__f=0.75) is True
    assert ev("'single' == 'single'") is True
    assert ev(r'"a \"q\"" == args.x', args__x='a "q"') is True


def test_in_and_matches():
    assert ev('args.x in ["a", "b"]', args__x="b") is True
    assert ev('args.x not in ["a", "b"]', args__x="c") is True
    assert ev('args.x matches "^fp[48]"', args__x="fp8_e4m3") is True
    assert ev('"e4m3" in args.x', args__x="fp8_e4m3") is True
    assert ev('args.x in "abc"', args__x=3) is False


def test_precedence():
    # and binds tighter than or; not binds tighter than and
    assert ev("args.a or args.b and args.c", args__a=True, args__b=False, args__c=False) is True
    assert ev("not args.a and args.b", args__a=False, args__b=True) is True
    assert ev("not (args.a and args.b)", args__a=True, args__b=False) is True
    assert ev("args.n + 1 * 2 == 5", args__n=3) is True


def test_kleene_logic():
    assert ev("args.u == 1") is UNKNOWN
    assert ev("args.u == 1 and args.f", args__f=False) is False
    assert ev("args.u == 1 or args.t", args__t=True) is True
    assert ev("args.u == 1 or args.f", args__f=False) is UNKNOWN
    assert ev("not args.u") is UNKNOWN
    assert ev("args.u + 1 > 2") is UNKNOWN
    assert ev('args.x in ["a", args.u]', args__x="a") is True
    assert ev('args.x in ["a", args.u]', args__x="b") is UNKNOWN
    assert ev('args.x in ["a", "c"]', args__x="b") is False


def test_ordering_with_null_is_false_not_an_error():
    assert ev("args.n > 1", args__n=None) is False
    assert ev('args.n > "x"', args__n=3) is False
    assert ev("args.b > 0", args__b=True) is False


def test_functions():
    assert ev('truthy(env.X)', env__X="1") is True
    assert ev('truthy(env.X)', env__X="True") is True
    assert ev('truthy(env.X)', env__X="0") is False
    assert ev('truthy(env.X)', env__X=None) is False
    assert ev('truthy(env.X)') is UNKNOWN
    assert ev('upper(args.x) == "MTP"', args__x="mtp") is True
    assert ev('lower(args.x) == "fp8"', args__x="FP8") is True
    assert ev('startswith(args.x, "fp8")', args__x="fp8_e5m2") is True
    assert ev("len(args.l) == 2", args__l=["a", "b"]) is True
    assert ev('coalesce(args.a, args.b) == "b"', args__a=None, args__b="b") is True
    assert ev('coalesce(args.u, "b") == "b"') is UNKNOWN
    assert ev("is_null(args.a)", args__a=None) is True
    assert ev("is_power_of_two(args.n)", args__n=8) is True
    assert ev("is_power_of_two(args.n)", args__n=6) is False
    assert ev("known(args.u)") is False
    assert ev("known(args.a)", args__a=1) is True


def test_given_asks_the_resolver_about_the_name():
    cond = parse("given(args.tp_size)")
    assert cond.evaluate(Facts({}, {"args.tp_size": True})) is True
    assert cond.evaluate(Facts({}, {"args.tp_size": False})) is False
    assert cond.evaluate(Facts({})) is UNKNOWN
    with pytest.raises(ConditionError):
        parse('given("x")').evaluate(Facts({}))


class WrittenUnknown(Facts):
    """Every name UNKNOWN; those in ``written`` are flags written with a value not known."""

    def __init__(self, written: set[str]):
        super().__init__({})
        self.written = written

    def written_unknown(self, name):
        return name in self.written


def test_a_flag_written_with_an_unknown_value_is_not_null():
    """Issue 19 §2: `--speculative-num-steps "$STEPS"` is given whatever `$STEPS` holds; a null
    test of it is decided, a test of its value is not."""
    written = WrittenUnknown({"args.x"})
    assert parse("args.x != null").evaluate(written) is True
    assert parse("null != args.x").evaluate(written) is True
    assert parse("args.x == null").evaluate(written) is False
    assert parse("is_null(args.x)").evaluate(written) is False
    assert parse("not is_null(args.x) and args.y == null").evaluate(WrittenUnknown({"args.x", "args.y"})) is False
    assert parse("args.x == 4").evaluate(written) is UNKNOWN
    assert parse("args.x > 1").evaluate(written) is UNKNOWN
    assert parse("args.x").evaluate(written) is UNKNOWN  # (an empty text is false)
    # a flag not written, or not known to be: still UNKNOWN
    assert parse("args.y != null").evaluate(written) is UNKNOWN
    assert parse("effective.x != null").evaluate(WrittenUnknown({"effective.x"})) is UNKNOWN


@pytest.mark.parametrize("src", [
    "", "   ", "args.x ==", "(args.x", "args.x == 1)", "foo.x == 1", "args == 1", "args.x.y == 1",
    "__import__('os').system('true')", "args.x == 1; args.y", "unknownfn(args.x)", "lower()",
    "args.x = 1", "args.x == 1 and", "[1, 2", "args.x @ 2",
])
def test_malformed_or_foreign_code_is_rejected(src):
    with pytest.raises(ConditionError):
        parse(src)


def test_names_lists_every_name():
    cond = parse('args.a == 1 and (gpu.is_sm90 or model.quant_method in [env.X, "y"]) and truthy(env.Z) '
                 'and -args.n < effective.attn_dp_size')
    assert cond.names() == {"args.a", "gpu.is_sm90", "model.quant_method", "env.X", "env.Z", "args.n",
                            "effective.attn_dp_size"}
