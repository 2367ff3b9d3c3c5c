"""Knowledge-base rules over one resolved launch: ParsedArgs + Context → Findings.

Each rule (``kb/rules/*.json``, schema in ``docs/kb-format.md``) has a three-valued condition
(:mod:`sglang_lsp.checks.kb.conditions`); it fires only when the condition is TRUE. A finding carries
the rule's code, its record id (``kb_id``), the regular expression of the message sglang
prints (``sglang_error``), a range on the offending flag, related ranges on the other flags
involved, and the rule's structured fixes rendered as edits for the syntax of the launch
(:mod:`sglang_lsp.fixes.edits`).

Verdicts are memoised on the values a condition reads, and per launch context only the rules
reading a value the launch changes are evaluated again (:class:`_Plan`, :class:`_Unset`).

Nothing from a record is executed: ``validationCode``, ``typeGuard`` and ``tryCatchPattern``
are documentation. A model configuration the launch names that was not read (a FIFO, a device,
a file of gigabytes: :mod:`sglang_lsp.base.workspace_files`) is reported here as SGL071.
"""

from __future__ import annotations

import operator
from typing import Any, Callable

from . import conditions
from .effective import LaunchResolver
from .messages import render, render_value
from .rule import KbRule, kb_rules
from ... import logger
from ...rules import finding
from ...base.findings import Applicability, Edit, Finding, Fix, Span, contain_failure
from ...base.invocation import Invocation
from ...base.unknown import UNKNOWN
from ...catalog.parsed import FlagUse, ParsedArgs
from ...catalog.argv import defaults
from ...catalog.catalog import Catalog
from ...context.facts import Context
from ...context.launch import launch_setup

log = logger(__name__)


def evaluate(parsed: ParsedArgs, ctx: Context, inv: Invocation | None = None, *, anchor: Span | None = None,
             text_of: Callable[[str | None], str | None] | None = None,
             declared_model: dict[str, Any] | None = None,
             rules: tuple[KbRule, ...] | None = None) -> list[Finding]:
    """The knowledge-base findings for one resolved launch."""
    resolver = LaunchResolver(parsed, ctx, declared_model)
    version = ctx.sglang_version or parsed.catalog.sglang_version
    rules = rules if rules is not None else kb_rules()
    fired = _plan(rules).fired(resolver, version, ctx, declared_model)
    return [_rule_finding(rules[i], parsed, resolver, inv, anchor, text_of) for i in fired]


def _applies(rule: KbRule, version: str, ctx: Context) -> bool:
    return rule.applies_to(version) and not (rule.skip_for_dummy_model and ctx.model_dummy)


def _fires(rule: KbRule, slots: tuple[int, ...], vector: tuple, resolver: "LaunchResolver", version: str,
           ctx: Context) -> bool:
    return _applies(rule, version, ctx) and _holds(rule, tuple([vector[i] for i in slots]), resolver)


def _holds(rule: KbRule, key: tuple, resolver: "LaunchResolver") -> bool:
    """Whether the condition of a rule that applies is TRUE, given its inputs' frozen values."""
    try:
        return _verdict(rule, key, resolver) is True
    except conditions.ConditionError:
        log.exception("rule %s has a bad condition", rule.code)
    except Exception:  # pragma: no cover - one broken rule must not stop the others
        log.exception("rule %s failed", rule.code)
    return False


# A condition is a pure function of the values of the names it reads (and of given() for the
# flags it asks about), so its verdict is memoised on those inputs: launches of one file, of
# a directory of similar scripts, and every re-check of an edited buffer share most of them.
_VERDICTS: dict[tuple, Any] = {}
_VERDICTS_MAX = 1 << 16
_UNHASHABLE = object()
_SCALARS = frozenset({str, int, float, bool})


def _freeze(v: Any) -> Any:
    """A hashable, type-exact stand-in for a value (``1``, ``1.0`` and ``True`` stay apart)."""
    if v is None or v is UNKNOWN:
        return v
    if v.__class__ in _SCALARS:
        return (v.__class__, v)
    if isinstance(v, (list, tuple)):
        return (list, tuple(_freeze(x) for x in v))
    if isinstance(v, dict):
        return (dict, tuple(sorted((str(k), _freeze(x)) for k, x in v.items())))
    try:
        hash(v)
    except TypeError:
        return _UNHASHABLE
    return (v.__class__, v)


class _Plan:
    """For a set of rules: every name they read, in one order, and for each rule the positions
    of its inputs in that order; which rules read each position; and, per launch context, the
    inputs and verdicts of a launch that gives no flag (:class:`_Unset`)."""

    def __init__(self, rules: tuple[KbRule, ...]):
        names: dict[str, int] = {}
        given: dict[str, int] = {}
        per_rule: list[tuple[int, ...]] = []
        for rule in rules:
            n, g = rule.reads
            per_rule.append(tuple(names.setdefault(x, len(names)) for x in n)
                            + tuple(-1 - given.setdefault(x, len(given)) for x in g))
        self.rules = rules
        self.names = tuple(names)
        self.given = tuple(given)
        offset = len(self.names)
        self.slots = tuple(tuple(i if i >= 0 else offset + (-1 - i) for i in idx) for idx in per_rule)
        self.keys = tuple(_key_of(slots) for slots in self.slots)  # each rule's inputs out of a vector
        readers: dict[int, list[int]] = {}
        for r, slots in enumerate(self.slots):
            for i in slots:
                readers.setdefault(i, []).append(r)
        self.readers = {i: tuple(rs) for i, rs in readers.items()}
        # what a launch can change: its flags (and given() of them), its variables, and the
        # auto-selections computed from them; the other names are fixed by the context
        self.flag_slots = tuple((i, name[5:]) for i, name in enumerate(self.names) if name.startswith("args."))
        self.flag_slots += tuple((offset + k, name[5:]) for k, name in enumerate(self.given)
                                 if name.startswith("args."))
        self.env_slots = tuple((i, name[4:]) for i, name in enumerate(self.names) if name.startswith("env."))
        self.effective_slots = tuple(i for i, name in enumerate(self.names) if name.startswith("effective."))
        self._unset: dict[tuple, _Unset] = {}

    def inputs(self, resolver: "LaunchResolver") -> tuple:
        """The frozen value of every name, read one by one."""
        value = resolver.value
        out = [_frozen(value, name) for name in self.names]
        out += [_frozen(resolver.given, n) for n in self.given]
        return tuple(out)

    def fired(self, resolver: "LaunchResolver", version: str, ctx: Context,
              declared: dict[str, Any] | None) -> list[int]:
        """The positions of the rules that fire for ``resolver``'s launch. Only the rules that
        read an input the launch sets differently from a launch giving no flag in the same
        context are evaluated; the others have that launch's verdict."""
        unset = self._unset_for(resolver, version, ctx, declared)
        if unset is None:  # a context that cannot be told apart from others: every rule, every input
            vector = self.inputs(resolver)
            return [r for r, (rule, slots) in enumerate(zip(self.rules, self.slots))
                    if _fires(rule, slots, vector, resolver, version, ctx)]
        vector, changed = unset.compare(self, resolver)
        touched = set(unset.always)
        readers = self.readers
        for i in changed:
            touched.update(readers.get(i, ()))
        touched &= unset.applicable
        rules, keys = self.rules, self.keys
        fired = {r for r in unset.fired if r not in touched}
        fired.update(r for r in touched if _holds(rules[r], keys[r](vector), resolver))
        return sorted(fired)

    def _unset_for(self, resolver: "LaunchResolver", version: str, ctx: Context,
                   declared: dict[str, Any] | None) -> "_Unset | None":
        parsed = resolver.parsed
        frozen_declared = _freeze(declared) if declared else None
        key = (id(parsed.catalog), parsed.open, bool(ctx.model_dummy), version, ctx.gpu, ctx.gpu_class,
               id(ctx.model), id(ctx.draft_model), frozen_declared)
        try:
            hit = self._unset.get(key)
        except TypeError:  # an unhashable GPU description
            return None
        if frozen_declared is _UNHASHABLE:
            return None
        if hit is None or not hit.same_objects(parsed.catalog, ctx):
            if len(self._unset) >= _UNSET_MAX:
                self._unset.clear()
            hit = self._unset[key] = _Unset(self, parsed, version, ctx, declared)
        return hit


_UNSET_MAX = 256
_CONTEXT_NAMESPACES = frozenset({"gpu", "model", "draft", "sglang"})  # fixed by a launch's context


def _key_of(slots: tuple[int, ...]) -> Callable[[Any], tuple]:
    """A function taking the tuple of the values at ``slots`` out of an input vector."""
    if len(slots) > 1:
        return operator.itemgetter(*slots)
    if slots:
        i = slots[0]
        return lambda vector: (vector[i],)
    return lambda vector: ()


class _Unset:
    """A launch that gives no flag and sets no variable, in one context (catalog, open argv or
    not, release, GPU, model, draft model, dummy model, model facts declared by directives):
    its inputs, the rules that fire for it, and for each auto-selection (``effective.*``) the
    flags and variables its computation read.

    Every input is a pure function of the names it reads (a condition's of its names and
    given(); an auto-selection's of the flags and variables it reads, the context fixed): a
    launch in the same context whose flags and variables give a rule the same inputs gets the
    same verdict, so only the rules reading an input the launch changes are evaluated again."""

    def __init__(self, plan: _Plan, parsed: ParsedArgs, version: str, ctx: Context, declared: dict[str, Any] | None):
        cat = parsed.catalog
        self.cat, self.model, self.draft = cat, ctx.model, ctx.draft_model
        self.ctx = Context(gpu=ctx.gpu, gpu_class=ctx.gpu_class, model=ctx.model, model_dummy=ctx.model_dummy,
                           env={}, sglang_version=ctx.sglang_version, draft_model=ctx.draft_model)
        self.open = parsed.open
        self.declared = declared
        self.resolver = LaunchResolver(self._empty(), self.ctx, declared)
        self.vector = plan.inputs(self.resolver)
        self.applicable = frozenset(r for r, rule in enumerate(plan.rules)
                                    if _applies(rule, version, ctx) and not self._excluded(rule))
        self.fired = frozenset(r for r in self.applicable
                               if _holds(plan.rules[r], plan.keys[r](self.vector), self.resolver))
        # an input that cannot be frozen cannot be compared: its readers are always evaluated
        unhashable = [i for i, v in enumerate(self.vector) if v is _UNHASHABLE]
        self.always = frozenset(r for i in unhashable for r in plan.readers.get(i, ()))
        # which positions each destination the parser stores to fills (`args.tp_size` reads
        # `tensor_parallel_size` in the releases that parse into it)
        slots_of: dict[str, list[int]] = {}
        for i, dest in plan.flag_slots:
            slots_of.setdefault(cat.field_dests.get(dest, dest), []).append(i)
        self.flag_slots = {dest: tuple(slots) for dest, slots in slots_of.items()}
        self.effective = tuple((i, *self._reads_of(plan.names[i])) for i in plan.effective_slots)

    def _excluded(self, rule: KbRule) -> bool:
        """Whether the context alone keeps ``rule`` from firing: a part of its conjunction that
        reads only the GPU, the model, the draft model and the release is not TRUE here, and so
        is not for any launch in this context (a condition is TRUE only when every part is)."""
        tree = rule.condition.tree
        for part in tree[1] if tree[0] == "and" else ():
            names = conditions.Condition("", part).names()
            if not names or any(n.partition(".")[0] not in _CONTEXT_NAMESPACES for n in names):
                continue
            try:
                if conditions.Condition("", part).evaluate(self.resolver) is not True:
                    return True
            except Exception:  # left to the evaluation of the whole condition, which reports it
                continue
        return False

    def _empty(self) -> ParsedArgs:
        return ParsedArgs(self.cat, [], defaults(self.cat, {}), set(), self.open, [])

    def _reads_of(self, name: str) -> tuple[frozenset[str], frozenset[str]]:
        """The destinations (flags read or asked given() about) and the variables the
        auto-selection ``name`` reads here, through the other auto-selections it uses too."""
        recorder = _Recorder(self._empty(), self.ctx, self.declared)
        _frozen(recorder.value, name)
        field_dests = self.cat.field_dests
        dests = {field_dests.get(d, d) for d in recorder.dests}
        return frozenset(dests), frozenset(recorder.variables)

    def same_objects(self, cat: Catalog, ctx: Context) -> bool:
        return self.cat is cat and self.model is ctx.model and self.draft is ctx.draft_model

    def compare(self, plan: _Plan, resolver: "LaunchResolver") -> tuple[list[Any], list[int]]:
        """``resolver``'s input vector, and the positions where it differs from this one's: a
        flag or given() of a flag the launch gives, a variable it sets, and an auto-selection
        that reads one of them."""
        base = self.vector
        vector = list(base)
        changed: list[int] = []
        names, n_names = plan.names, len(plan.names)
        explicit = resolver.parsed.explicit
        arg, given = resolver.arg, resolver.given
        for dest in explicit:
            for i in self.flag_slots.get(dest, ()):
                now = _frozen(arg, names[i][5:]) if i < n_names else _frozen(given, plan.given[i - n_names])
                if now != base[i]:
                    vector[i] = now
                    changed.append(i)
        env = resolver.ctx.env
        if env:
            for i, variable in plan.env_slots:
                if variable in env:
                    now = _frozen(resolver.value, names[i])
                    if now != base[i]:
                        vector[i] = now
                        changed.append(i)
        for i, dests, variables in self.effective:
            if base[i] is _UNHASHABLE or not dests.isdisjoint(explicit) or (env and not variables.isdisjoint(env)):
                now = _frozen(resolver.value, names[i])
                if now != base[i] or now is _UNHASHABLE:
                    vector[i] = now
                    changed.append(i)
        return vector, changed


class _Recorder(LaunchResolver):
    """A resolver that notes the flags, given() and variables read through it."""

    def __init__(self, *args: Any):
        super().__init__(*args)
        self.dests: set[str] = set()
        self.variables: set[str] = set()

    def arg(self, dest: str) -> Any:
        self.dests.add(dest)
        return super().arg(dest)

    def given(self, name: str) -> Any:
        self.dests.add(name.partition(".")[2])
        return super().given(name)

    def value(self, name: str) -> Any:
        if name.startswith("env."):
            self.variables.add(name[4:])
        return super().value(name)


def _frozen(fn, name: str) -> Any:
    try:
        return _freeze(fn(name))
    except conditions.ConditionError:
        return _UNHASHABLE  # evaluated directly, where the error is reported if reached


_PLANS: dict[int, tuple[tuple[KbRule, ...], _Plan]] = {}


def _plan(rules: tuple[KbRule, ...]) -> _Plan:
    hit = _PLANS.get(id(rules))
    if hit is not None and hit[0] is rules:
        return hit[1]
    if len(_PLANS) > 64:
        _PLANS.clear()
    plan = _Plan(rules)
    _PLANS[id(rules)] = (rules, plan)  # the rules are kept alive, so their id stays theirs
    return plan


def _verdict(rule: KbRule, key: tuple, resolver: "LaunchResolver") -> Any:
    if _UNHASHABLE in key:
        return rule.condition.evaluate(resolver)
    memo_key = (rule.condition.source, key)  # the source determines the parsed tree
    try:
        return _VERDICTS[memo_key]
    except KeyError:
        pass
    verdict = rule.condition.evaluate(resolver)
    if len(_VERDICTS) >= _VERDICTS_MAX:
        _VERDICTS.clear()
    _VERDICTS[memo_key] = verdict
    return verdict


def _use_of(parsed: ParsedArgs, flag: str) -> FlagUse | None:
    opt = parsed.catalog.lookup(flag)
    if opt is None:
        return None
    return parsed.last_use(opt.dest)


def _rule_finding(rule: KbRule, parsed: ParsedArgs, r: LaunchResolver, inv: Invocation | None, anchor: Span | None,
             text_of) -> Finding:
    span = None
    flag = None
    related: list[tuple[Span, str]] = []
    for a in rule.anchor:
        use = _use_of(parsed, a)
        if use is None:
            continue
        if span is None:
            span, flag = use.span, use.spelling
        else:
            related.append((use.span, f"`{use.written}` is part of this combination"))
    for rel in rule.related:
        use = _use_of(parsed, rel["flag"])
        if use is not None and all(s != use.span for s, _ in related) and use.span != span:
            related.append((use.span, render(rel["message"], r)))
    if span is None:
        # nothing of the combination is written here: the model (or the launch) is the cause
        use = _use_of(parsed, "--model-path")
        if use is not None and any(n.startswith(("model.", "effective.")) for n in rule.condition.names()):
            span, flag = use.span, use.spelling
        else:
            span = anchor or (inv.span if inv is not None else Span(0, 0))
    fixes = [f for f in (_render_fix(fx, parsed, r, inv, text_of) for fx in rule.fixes) if f is not None]
    return finding(rule.code, render(rule.message, r), span, flag=flag, sglang_error=rule.sglang_error,
                   kb_id=rule.kb_id, fixes=fixes, related=related, tags=rule.tags)


def _render_fix(fx: dict, parsed: ParsedArgs, r: LaunchResolver, inv: Invocation | None, text_of) -> Fix | None:
    from ...fixes.edits import add_flag_edits, remove_flag_edits, set_value_edits  # (only a rule with fixes)

    title = render(fx["title"], r)
    appl = Applicability(fx["applicability"])
    opt = parsed.catalog.lookup(fx["flag"])
    if opt is None:
        return None
    flag = opt.name
    use = parsed.last_use(opt.dest)
    kind = fx["kind"]
    value = fx.get("value")
    if isinstance(value, str) and "{" in value:
        value = render_value(value, r)
        if value is None:
            return None  # the value depends on something unknown
    if kind == "set" and opt.is_switch:
        kind, value = ("add", None) if value not in (False, "false") else ("remove", None)
        if kind == "add" and use is not None:
            return None  # already on
    edits: tuple[Edit, ...] | None = None
    if kind == "set" and use is not None:
        edits = set_value_edits(use, str(value), text_of)
    elif kind in ("set", "add"):
        if use is not None and kind == "add":
            edits = set_value_edits(use, str(value), text_of) if value is not None else ()
        else:
            edits = add_flag_edits(inv, parsed, flag, None if value is None else str(value), text_of)
    elif kind == "remove":
        if use is None:
            return None
        uses = [u for u in parsed.uses if u.option.dest == opt.dest]
        edits = tuple(e for u in uses for e in (remove_flag_edits(u, parsed, inv, text_of) or ()))
        if not edits and any(remove_flag_edits(u, parsed, inv, text_of) is None for u in uses):
            edits = None
    if edits is None:
        return Fix(title, Applicability.DISPLAY, ())
    return Fix(title, appl, edits)


def kb_findings(parsed: ParsedArgs, inv: Invocation | None, result: Any, anchor: Span | None,
                at: int | None = None) -> list[Finding]:
    """Knowledge-base findings for one launch of a checked file (called by the engine after the
    argv is resolved). ``result`` is the engine's Result: its options, document and the other
    documents findings may point into. ``at``: the byte offset of a launch without an invocation
    (a ``--config`` mapping checked on its own), for the settings scoped to where it is. An
    internal failure is recorded, never raised."""
    try:
        doc = result.document
        ctx, declared = launch_setup(parsed, inv, result, at)

        def text_of(path: str | None) -> str | None:
            if path is None or path == doc.path:
                return doc.text
            other = result.documents.get(path)
            return other.text if other is not None else None

        return (unread_model_findings(parsed, ctx, inv, anchor)
                + evaluate(parsed, ctx, inv, anchor=anchor, text_of=text_of, declared_model=declared))
    except Exception as exc:  # pragma: no cover - defensive
        contain_failure(result, "knowledge-base rules", log, exc)
        return []


def unread_model_findings(parsed: ParsedArgs, ctx: Context, inv: Invocation | None, anchor: Span | None) -> list[Finding]:
    """SGL071 for each model configuration the check refused to read (a FIFO, a device, a file of
    gigabytes: :mod:`sglang_lsp.base.workspace_files`), on the flag that names the model."""
    out = []
    for dest, message in ctx.unread:
        use = parsed.last_use(dest)
        span = use.span if use is not None else anchor or (inv.span if inv is not None else Span(0, 0))
        out.append(finding("SGL071", message, span, flag=use.spelling if use is not None else None))
    return out
