"""The condition language of knowledge-base rules: small, parsed (never ``eval``-ed) and
three-valued (TRUE / FALSE / UNKNOWN). The grammar and every name are documented in
``docs/kb-format.md``.

    expr       := or
    or         := and ("or" and)*
    and        := not ("and" not)*
    not        := "not" not | comparison
    comparison := sum (("==" | "!=" | "<" | "<=" | ">" | ">=" | "in" | "not" "in" | "matches") sum)?
    sum        := product (("+" | "-") product)*
    product    := unary (("*" | "/" | "%") unary)*
    unary      := "-" unary | primary
    primary    := NUMBER | STRING | "true" | "false" | "null" | "[" [expr ("," expr)*] "]"
                | NAME "(" [expr ("," expr)*] ")" | NAME ("." NAME)* | "(" expr ")"

Names are dotted: ``args.<dest>`` (the flag value after argparse resolution, defaults
included), ``gpu.<fact>``, ``model.<fact>``, ``draft.<fact>``, ``env.<VAR>``,
``effective.<field>`` (sglang's auto-selection where the engine models it), ``sglang.version``.
A name whose value cannot be known statically evaluates to UNKNOWN, and UNKNOWN propagates:
``UNKNOWN == "x"`` is UNKNOWN, ``FALSE and UNKNOWN`` is FALSE, ``TRUE or UNKNOWN`` is TRUE.
A rule fires only when its condition is TRUE.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable, NamedTuple

from ...base.unknown import UNKNOWN

NAMESPACES = ("args", "gpu", "model", "draft", "env", "effective", "sglang")


class ConditionError(ValueError):
    """A condition that does not parse (or names something that does not exist)."""


@functools.cache
def _token() -> re.Pattern:
    """The token pattern, compiled at the first parse (the bundled rules come parsed, see
    :func:`from_tree`: a check parses no condition)."""
    return re.compile(
        r"""\s*(?:
            (?P<num>\d+(?:\.\d+)?)
          | (?P<str>"[^"\\]*(?:\\.[^"\\]*)*"|'[^'\\]*(?:\\.[^'\\]*)*')
          | (?P<op>[=!<>]=|[<>()\[\],.+\-*/%])
          | (?P<name>[A-Za-z_]\w*)
        )""",
        re.VERBOSE | re.ASCII,  # string bodies unrolled, operators as classes: tokenizing is the parse's hot loop
    )

KEYWORDS = {"and", "or", "not", "in", "matches", "true", "false", "null"}


class Tok(NamedTuple):  # a tuple: thousands are made while the rules load
    kind: str  # num | str | op | name | kw | end
    text: str
    pos: int


def _tokens(src: str) -> list[Tok]:
    out: list[Tok] = []
    i = 0
    n = len(src.rstrip())
    match = _token().match
    while i < n:
        m = match(src, i)
        if not m or m.end() == i:
            raise ConditionError(f"unexpected character {src[i:].lstrip()[:1]!r} at {i}")
        group = m.lastgroup or ""
        text = m.group(group)
        kind = "kw" if group == "name" and text in KEYWORDS else group
        out.append(Tok(kind, text, m.start(group)))
        i = m.end()
    out.append(Tok("end", "", len(src)))
    return out


def _unquote(s: str) -> str:
    body = s[1:-1]
    return re.sub(r"\\(.)", r"\1", body)


# AST: tuples ("lit", v) ("name", "args.x") ("list", [..]) ("call", f, [..]) ("not", e) ("and", [..])
# ("or", [..]) ("cmp", op, a, b) ("arith", op, a, b) ("neg", e)


class _Parser:
    def __init__(self, src: str):
        self.src = src
        self.toks = _tokens(src)
        self.i = 0

    def peek(self) -> Tok:
        return self.toks[self.i]

    def take(self) -> Tok:
        t = self.toks[self.i]
        self.i += 1
        return t

    def accept(self, kind: str, text: str | None = None) -> Tok | None:
        t = self.peek()
        if t.kind == kind and (text is None or t.text == text):
            self.i += 1
            return t
        return None

    def expect(self, kind: str, text: str | None = None) -> Tok:
        t = self.accept(kind, text)
        if t is None:
            got = self.peek()
            raise ConditionError(f"expected {text or kind} at {got.pos}, found {got.text or 'end'!r} in {self.src!r}")
        return t

    def parse(self):
        e = self.or_()
        if self.peek().kind != "end":
            t = self.peek()
            raise ConditionError(f"unexpected {t.text!r} at {t.pos} in {self.src!r}")
        return e

    def or_(self):
        parts = [self.and_()]
        while self.accept("kw", "or"):
            parts.append(self.and_())
        return parts[0] if len(parts) == 1 else ("or", parts)

    def and_(self):
        parts = [self.not_()]
        while self.accept("kw", "and"):
            parts.append(self.not_())
        return parts[0] if len(parts) == 1 else ("and", parts)

    def not_(self):
        if self.peek().kind == "kw" and self.peek().text == "not" and not (
            self.toks[self.i + 1].kind == "kw" and self.toks[self.i + 1].text == "in"
        ):
            self.take()
            return ("not", self.not_())
        return self.cmp()

    def cmp(self):
        left = self.sum()
        t = self.peek()
        if t.kind == "op" and t.text in ("==", "!=", "<", "<=", ">", ">="):
            self.take()
            return ("cmp", t.text, left, self.sum())
        if t.kind == "kw" and t.text in ("in", "matches"):
            self.take()
            return ("cmp", t.text, left, self.sum())
        if t.kind == "kw" and t.text == "not" and self.toks[self.i + 1].text == "in":
            self.take()
            self.take()
            return ("cmp", "not in", left, self.sum())
        return left

    def sum(self):
        e = self.product()
        while self.peek().kind == "op" and self.peek().text in ("+", "-"):
            op = self.take().text
            e = ("arith", op, e, self.product())
        return e

    def product(self):
        e = self.unary()
        while self.peek().kind == "op" and self.peek().text in ("*", "/", "%"):
            op = self.take().text
            e = ("arith", op, e, self.unary())
        return e

    def unary(self):
        if self.accept("op", "-"):
            return ("neg", self.unary())
        return self.primary()

    def primary(self):
        t = self.take()
        if t.kind == "num":
            return ("lit", float(t.text) if "." in t.text else int(t.text))
        if t.kind == "str":
            return ("lit", _unquote(t.text))
        if t.kind == "kw" and t.text in ("true", "false", "null"):
            return ("lit", {"true": True, "false": False, "null": None}[t.text])
        if t.kind == "op" and t.text == "(":
            e = self.or_()
            self.expect("op", ")")
            return e
        if t.kind == "op" and t.text == "[":
            items = []
            if not self.accept("op", "]"):
                items.append(self.or_())
                while self.accept("op", ","):
                    items.append(self.or_())
                self.expect("op", "]")
            return ("list", items)
        if t.kind == "name":
            if self.accept("op", "("):
                if t.text not in FUNCTIONS:
                    raise ConditionError(f"unknown function {t.text!r} in {self.src!r}")
                args = []
                if not self.accept("op", ")"):
                    args.append(self.or_())
                    while self.accept("op", ","):
                        args.append(self.or_())
                    self.expect("op", ")")
                lo, hi = FUNCTIONS[t.text][1]
                if not lo <= len(args) <= hi:
                    raise ConditionError(f"{t.text}() takes {lo}..{hi} arguments in {self.src!r}")
                return ("call", t.text, args)
            parts = [t.text]
            while self.accept("op", "."):
                parts.append(self.expect("name").text)
            if parts[0] not in NAMESPACES:
                raise ConditionError(f"unknown name {'.'.join(parts)!r} (namespaces: {', '.join(NAMESPACES)}) "
                                     f"in {self.src!r}")
            if len(parts) != 2:
                raise ConditionError(f"names have the form namespace.field, not {'.'.join(parts)!r} in {self.src!r}")
            return ("name", ".".join(parts))
        raise ConditionError(f"unexpected {t.text or 'end'!r} at {t.pos} in {self.src!r}")


# ---------------------------------------------------------------------------------------------
# evaluation (Kleene logic)


def _truth(v: Any) -> Any:
    """A value in boolean position: True / False / UNKNOWN."""
    if v is UNKNOWN:
        return UNKNOWN
    if isinstance(v, bool):
        return v
    return v not in (None, 0, "", [], {})


def _norm_eq(v: Any) -> Any:
    # argparse values are already typed; compare strings case-sensitively like sglang does
    return v


def _cmp(op: str, a: Any, b: Any) -> Any:
    if op in ("in", "not in"):
        if a is UNKNOWN or b is UNKNOWN:
            return UNKNOWN
        if isinstance(b, str):
            if not isinstance(a, str):
                return False if op == "in" else True
            r = a in b
            return r if op == "in" else not r
        if not isinstance(b, (list, tuple)):
            return False if op == "in" else True
        known = [x for x in b if x is not UNKNOWN]
        if a in known:
            return op == "in"
        if len(known) != len(b):
            return UNKNOWN
        return op != "in"
    if a is UNKNOWN or b is UNKNOWN:
        return UNKNOWN
    if op == "==":
        return _norm_eq(a) == _norm_eq(b)
    if op == "!=":
        return _norm_eq(a) != _norm_eq(b)
    if op == "matches":
        if not isinstance(a, str) or not isinstance(b, str):
            return False
        return re.search(b, a) is not None
    # ordering: only numbers with numbers, strings with strings; anything else (e.g. None) is FALSE
    if isinstance(a, bool) or isinstance(b, bool):
        return False
    if not (isinstance(a, (int, float)) and isinstance(b, (int, float))) and not (
        isinstance(a, str) and isinstance(b, str)
    ):
        return False
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def _arith(op: str, a: Any, b: Any) -> Any:
    if a is UNKNOWN or b is UNKNOWN:
        return UNKNOWN
    if not (isinstance(a, (int, float)) and isinstance(b, (int, float))) or isinstance(a, bool) or isinstance(b, bool):
        return None
    if op in ("/", "%") and b == 0:
        return None
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return a / b
    return a % b


# functions: name -> (implementation(resolver, *evaluated-or-raw args), (min, max) arity)
# ``given`` and ``known`` see their argument unevaluated (they ask about a name, not a value).


def _fn_lower(x):
    if x is UNKNOWN:
        return UNKNOWN
    return x.lower() if isinstance(x, str) else x


def _fn_startswith(x, prefix):
    if x is UNKNOWN or prefix is UNKNOWN:
        return UNKNOWN
    return isinstance(x, str) and isinstance(prefix, str) and x.startswith(prefix)


def truthy(x):
    """sglang's boolean environment variables: "1", "true", "yes", "on" (any case) are true."""
    if x is UNKNOWN:
        return UNKNOWN
    if x is None:
        return False
    return str(x).strip().lower() in ("1", "true", "yes", "on", "y")


def _fn_len(x):
    if x is UNKNOWN:
        return UNKNOWN
    if isinstance(x, (list, tuple, str, dict)):
        return len(x)
    return 0 if x is None else 1


def _fn_coalesce(*xs):
    for x in xs:
        if x is UNKNOWN:
            return UNKNOWN
        if x is not None:
            return x
    return None


def _fn_is_power_of_two(x):
    if x is UNKNOWN:
        return UNKNOWN
    return isinstance(x, int) and not isinstance(x, bool) and x > 0 and (x & (x - 1)) == 0


def _fn_is_null(x):
    if x is UNKNOWN:
        return UNKNOWN
    return x is None


def _fn_upper(x):
    if x is UNKNOWN:
        return UNKNOWN
    return x.upper() if isinstance(x, str) else x


def _fn_int(x, default=None):
    """An integer from a number or a numeric string (environment variables are strings);
    ``default`` when ``x`` is null; UNKNOWN when it is not a number."""
    if x is UNKNOWN:
        return UNKNOWN
    if x is None:
        return default
    if isinstance(x, bool):
        return int(x)
    if isinstance(x, (int, float)):
        return int(x)
    try:
        return int(str(x).strip(), 0)
    except ValueError:
        return UNKNOWN


def _fn_at(xs, i):
    if xs is UNKNOWN or i is UNKNOWN:
        return UNKNOWN
    if isinstance(xs, (list, tuple)) and isinstance(i, int) and -len(xs) <= i < len(xs):
        return xs[i]
    return None


FUNCTIONS: dict[str, tuple[Callable | None, tuple[int, int]]] = {
    "int": (_fn_int, (1, 2)),
    "at": (_fn_at, (2, 2)),
    "given": (None, (1, 1)),  # given(args.x): the flag is written in the launch (not a default)
    "known": (None, (1, 1)),  # known(expr): the value can be known statically
    "lower": (_fn_lower, (1, 1)),
    "upper": (_fn_upper, (1, 1)),
    "startswith": (_fn_startswith, (2, 2)),
    "truthy": (truthy, (1, 1)),
    "len": (_fn_len, (1, 1)),
    "coalesce": (_fn_coalesce, (1, 8)),
    "is_null": (_fn_is_null, (1, 1)),
    "is_power_of_two": (_fn_is_power_of_two, (1, 1)),
}


class Resolver:
    """What a condition's names mean for one launch. Subclassed by the engine."""

    def value(self, name: str) -> Any:  # pragma: no cover - interface
        return UNKNOWN

    def given(self, name: str) -> Any:  # pragma: no cover - interface
        return UNKNOWN

    def written_unknown(self, name: str) -> bool:  # pragma: no cover - interface
        """Whether ``name`` is a flag the launch writes with a value not known, which argparse
        cannot store as null: compared with null, it is not null whatever the value."""
        return False


def _null_test(node) -> str | None:
    """The ``args.*`` name of a condition node ``args.x == null`` / ``null != args.x`` /
    ``is_null(args.x)``, else None."""
    kind = node[0]
    if kind == "cmp" and node[1] in ("==", "!="):
        a, b = node[2], node[3]
        if b == ("lit", None) and a[0] == "name":
            name = a[1]
        elif a == ("lit", None) and b[0] == "name":
            name = b[1]
        else:
            return None
    elif kind == "call" and node[1] == "is_null" and len(node[2]) == 1 and node[2][0][0] == "name":
        name = node[2][0][1]
    else:
        return None
    return name if name.startswith("args.") else None


def _unknown_null_test(node, r: Resolver) -> Any:
    """A comparison or call that came out UNKNOWN: when it is a null test of a flag the launch
    writes with a value not known, decided (`--speculative-num-steps "$STEPS"` is given,
    whatever its value); else UNKNOWN."""
    name = _null_test(node)
    if name is not None and r.written_unknown(name):
        return node[0] == "cmp" and node[1] == "!="
    return UNKNOWN


def _eval(node, r: Resolver) -> Any:
    kind = node[0]
    if kind == "lit":
        return node[1]
    if kind == "name":
        return r.value(node[1])
    if kind == "list":
        return [_eval(x, r) for x in node[1]]
    if kind == "not":
        t = _truth(_eval(node[1], r))
        return UNKNOWN if t is UNKNOWN else not t
    if kind in ("and", "or"):
        # Kleene logic: the deciding value (FALSE for and, TRUE for or) wins at once; otherwise
        # any UNKNOWN operand makes the result UNKNOWN
        deciding = kind == "or"
        unknown = False
        for x in node[1]:
            t = _truth(_eval(x, r))
            if t is deciding:
                return deciding
            if t is UNKNOWN:
                unknown = True
        return UNKNOWN if unknown else not deciding
    if kind == "cmp":
        out = _cmp(node[1], _eval(node[2], r), _eval(node[3], r))
        return _unknown_null_test(node, r) if out is UNKNOWN else out
    if kind == "arith":
        return _arith(node[1], _eval(node[2], r), _eval(node[3], r))
    if kind == "neg":
        v = _eval(node[1], r)
        if v is UNKNOWN:
            return UNKNOWN
        return -v if isinstance(v, (int, float)) and not isinstance(v, bool) else None
    if kind == "call":
        name, args = node[1], node[2]
        if name == "given":
            if args[0][0] != "name":
                raise ConditionError("given() takes a name")
            return r.given(args[0][1])
        if name == "known":
            return _eval(args[0], r) is not UNKNOWN
        fn = FUNCTIONS[name][0]
        assert fn is not None
        out = fn(*[_eval(a, r) for a in args])
        return _unknown_null_test(node, r) if out is UNKNOWN else out
    raise ConditionError(f"bad node {node!r}")  # pragma: no cover


class Condition(NamedTuple):
    """A parsed condition: its source text and its tree (a named tuple rather than a frozen
    dataclass: one costs a cold ``sglang-lsp check`` about a millisecond to build)."""

    source: str
    tree: Any

    def evaluate(self, resolver: Resolver) -> Any:
        """TRUE, FALSE or UNKNOWN."""
        return _truth(_eval(self.tree, resolver))

    def names(self) -> set[str]:
        out: set[str] = set()

        def walk(n):
            if n[0] == "name":
                out.add(n[1])
            elif n[0] in ("list",):
                for x in n[1]:
                    walk(x)
            elif n[0] in ("and", "or"):
                for x in n[1]:
                    walk(x)
            elif n[0] == "not" or n[0] == "neg":
                walk(n[1])
            elif n[0] in ("cmp", "arith"):
                walk(n[2])
                walk(n[3])
            elif n[0] == "call":
                for x in n[2]:
                    walk(x)

        walk(self.tree)
        return out


def parse(source: str) -> Condition:
    if not isinstance(source, str) or not source.strip():
        raise ConditionError("empty condition")
    return Condition(source, _Parser(source).parse())


def tree_to_data(node) -> Any:
    """A parsed tree as JSON data (nodes become lists); :func:`from_tree` reads it back."""
    if isinstance(node, (tuple, list)):
        return [tree_to_data(x) for x in node]
    return node


def from_tree(source: str, data: Any) -> Condition:
    """The condition ``parse(source)`` gives, from its tree stored with :func:`tree_to_data`
    (``kb/index.json``: the knowledge base's conditions are not parsed again at every start)."""
    return Condition(source, _node(data))


def _node(n: list) -> tuple:
    kind = n[0]
    if kind in ("lit", "name"):
        return (kind, n[1])
    if kind in ("list", "and", "or"):
        return (kind, [_node(x) for x in n[1]])
    if kind == "call":
        return (kind, n[1], [_node(x) for x in n[2]])
    if kind in ("not", "neg"):
        return (kind, _node(n[1]))
    if kind in ("cmp", "arith"):
        return (kind, n[1], _node(n[2]), _node(n[3]))
    raise ConditionError(f"bad node {n!r}")


def condition_reads(condition: Condition) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the names whose values ``condition`` reads, the names it asks ``given()`` about), from its
    tree (``kb/index.json`` keeps them, so a check does not walk the trees)."""
    given: set[str] = set()

    def walk(n) -> None:
        if n[0] == "call":
            if n[1] == "given" and n[2] and n[2][0][0] == "name":
                given.add(n[2][0][1])
            for x in n[2]:
                walk(x)
        elif n[0] in ("list", "and", "or"):
            for x in n[1]:
                walk(x)
        elif n[0] in ("not", "neg"):
            walk(n[1])
        elif n[0] in ("cmp", "arith"):
            walk(n[2])
            walk(n[3])

    walk(condition.tree)
    return tuple(sorted(condition.names())), tuple(sorted(given))
