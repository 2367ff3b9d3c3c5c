"""Knowledge-base rules over one resolved launch: ParsedArgs + Context → Findings.

Each rule (``kb/rules/*.json``, schema in ``docs/kb-format.md``) has a three-valued condition
(:mod:`sglang_lsp.checks.kb.conditions`); it fires only when the condition is TRUE. A finding carries
the rule's code, its record id (``kb_id``), the regular expression of the message sglang
prints (``sglang_error``), a range on the offending flag, related ranges on the other flags
involved, and the rule's structured fixes rendered as edits for the syntax of the launch
(:mod:`sglang_lsp.fixes.edits`).

A launch whose GPU is not named exactly may run on several GPU profiles (every GPU profile, or
a GPU class's candidates: :func:`sglang_lsp.context.facts.gpu_candidates`). A rule whose
condition is UNKNOWN there is tried on each of them (:class:`_Over`): TRUE on every one, it
fires; FALSE on every one, it stays quiet; otherwise it is undecided
(:mod:`sglang_lsp.checks.kb.undecided`), as is any other rule left UNKNOWN.

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
from .effective import LaunchResolver, MemorylessRun
from .messages import render, render_on_gpus, render_value, render_value_on_gpus
from .rule import KbRule, kb_rules
from .undecided import LaunchUndecided, explain
from .watch import GpuWatchingResolver
from ... import logger
from ...rules import finding
from ...base.findings import Applicability, Edit, Finding, Fix, Span, contain_failure
from ...base.invocation import Invocation
from ...base.unknown import UNKNOWN
from ...catalog.parsed import FlagUse, ParsedArgs
from ...catalog.argv import defaults
from ...catalog.catalog import Catalog
from ...context.facts import PROFILES, Context, GpuProfile, gpu_candidates
from ...context.launch import launch_setup

log = logger(__name__)


def evaluate(parsed: ParsedArgs, ctx: Context, inv: Invocation | None = None, *, anchor: Span | None = None,
             text_of: Callable[[str | None], str | None] | None = None,
             declared_model: dict[str, Any] | None = None,
             rules: tuple[KbRule, ...] | None = None) -> list[Finding]:
    """The knowledge-base findings for one resolved launch."""
    return evaluate_launch(parsed, ctx, inv, anchor=anchor, text_of=text_of, declared_model=declared_model,
                           rules=rules)[0]


def evaluate_launch(parsed: ParsedArgs, ctx: Context, inv: Invocation | None = None, *, anchor: Span | None = None,
                    text_of: Callable[[str | None], str | None] | None = None,
                    declared_model: dict[str, Any] | None = None, rules: tuple[KbRule, ...] | None = None,
                    at: int | None = None) -> tuple[list[Finding], LaunchUndecided]:
    """The knowledge-base findings for one resolved launch, and the checks it leaves undecided
    (worked out when asked). ``at``: where a launch without an invocation starts."""
    version = ctx.sglang_version or parsed.catalog.sglang_version
    rules = rules if rules is not None else kb_rules()
    plan = _plan(rules)
    kind, candidates = _candidates(ctx, parsed)
    resolver = GpuWatchingResolver(parsed, ctx, declared_model) if candidates else LaunchResolver(parsed, ctx, declared_model)
    verdicts = plan.verdicts(resolver, version, ctx, declared_model, kind, candidates)
    over = verdicts.over
    findings = [_rule_finding(rules[i], parsed, resolver, inv, anchor, text_of, over) for i in verdicts.fired]
    return findings, LaunchUndecided(inv, at, lambda: explain(rules, verdicts.undecided(), verdicts.over, resolver,
                                                              declared_model))


_CPU = (PROFILES["CPU"],)


def _candidates(ctx: Context, parsed: ParsedArgs) -> tuple[str | None, tuple[GpuProfile, ...] | None]:
    """The GPU profiles a launch may run on when its GPU is not named exactly (``None``: it is
    named), with a tag that, with the context's GPU and GPU class, tells the set apart: a launch
    given `--device cpu` runs on the CPU profile, one given another device than `cuda` (or a
    device not known) on none of the GPU profiles."""
    if ctx.gpu is not None:
        return None, None
    if "device" in parsed.explicit or parsed.is_explicit("device"):
        device = parsed.get("device")
        kind = device.partition(":")[0].strip().lower() if isinstance(device, str) else None
        if kind == "cpu":
            return "cpu", _CPU
        if kind != "cuda":
            return "none", ()
    return "gpus", gpu_candidates(None, ctx.gpu_class)


def _applies(rule: KbRule, version: str, ctx: Context) -> bool:
    return rule.applies_to(version) and not (rule.skip_for_dummy_model and ctx.model_dummy)


def _three(rule: KbRule, key: tuple, resolver: "LaunchResolver | Callable[[], LaunchResolver]") -> Any:
    """The verdict (TRUE, FALSE or UNKNOWN) of a rule that applies, given its inputs' frozen
    values; a condition that fails is logged and counts as FALSE. ``resolver`` may be a function
    making it, called only when the verdict is not memoised."""
    try:
        return _verdict(rule, key, resolver)
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
# the input of a flag written with a value not known that cannot be null: a condition's null
# test of it is decided (conditions.Resolver.written_unknown), so its key differs from UNKNOWN's
_WRITTEN_UNKNOWN = ("written", UNKNOWN)
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
        # what the GPU may decide: its facts and the auto-selections (those that read it for a
        # launch: GpuWatchingResolver); per rule, (position in its inputs, slot) of each such input
        self.gpu_slots = tuple((i, name[4:]) for i, name in enumerate(self.names) if name.startswith("gpu."))
        on_gpu = {i for i, _ in self.gpu_slots} | set(self.effective_slots)
        self.varying = tuple(tuple((k, i) for k, i in enumerate(slots) if i in on_gpu) for slots in self.slots)
        self._unset: dict[tuple, _Unset] = {}
        # contexts of which one launch was evaluated rule by rule: the base launch of a context
        # (_Unset: the launch giving no flag, resolved on every GPU it may run on) is built for its
        # second launch. A process that checks one launch (`sglang-lsp check run.sh`) does not pay
        # for a base that only later launches use (a third of a cold one-file check)
        self._seen_once: set[tuple] = set()
        self._on_profile: dict[int, tuple[GpuProfile, dict[int, Any]]] = {}
        self._context_parts: dict[int, tuple[conditions.Condition, ...]] = {}

    def gpu_inputs(self, profile: GpuProfile) -> dict[int, Any]:
        """The frozen value of every ``gpu.*`` input on ``profile``."""
        hit = self._on_profile.get(id(profile))
        if hit is None or hit[0] is not profile:
            facts = profile.facts()
            hit = self._on_profile[id(profile)] = (profile, {i: _freeze(facts[f]) if f in facts else _UNHASHABLE
                                                            for i, f in self.gpu_slots})
        return hit[1]

    def inputs(self, resolver: "LaunchResolver") -> tuple:
        """The frozen value of every name, read one by one."""
        value = resolver.value
        out = [_frozen(value, name) for name in self.names]
        for i, dest in self.flag_slots:
            if i < len(out) and out[i] is UNKNOWN and resolver.written_unknown(self.names[i]):
                out[i] = _WRITTEN_UNKNOWN
        out += [_frozen(resolver.given, n) for n in self.given]
        return tuple(out)

    def verdicts(self, resolver: "LaunchResolver", version: str, ctx: Context, declared: dict[str, Any] | None,
                 kind: str | None, candidates: tuple[GpuProfile, ...] | None) -> "_Verdicts":
        """Which rules fire for ``resolver``'s launch, on the GPUs it may run on (``candidates``,
        tagged ``kind``; ``None``: its GPU is named), and how to tell which it leaves undecided.
        Only the rules that read an input the launch sets differently from a launch giving no
        flag in the same context are evaluated; the others have that launch's verdict."""
        unset = self._unset_for(resolver, version, ctx, declared, kind, candidates)
        if unset is None:  # a context that cannot be told apart from others: every rule, every input
            vector = self.inputs(resolver)
            over = _Over(self, resolver, declared, candidates, vector, self.gpu_dependent(resolver)) \
                if candidates else None
            applicable = [r for r, rule in enumerate(self.rules) if _applies(rule, version, ctx)]
            fired = [r for r in applicable if self.fires(r, _three(self.rules[r], self.keys[r](vector), resolver), over)]
            return _Verdicts(fired, over, lambda: self.undecided_of(applicable, vector, resolver, over))
        vector, changed, computed, rechecked = unset.compare(self, resolver)
        readers = self.readers
        touched = set(unset.always)
        for i in changed:
            touched.update(readers.get(i, ()))
        touched &= unset.applicable
        over = None
        again: set[int] = set()
        if unset.candidates:
            dependent = unset.dependent_for(self, resolver, computed)
            over = _Over(self, resolver, declared, unset.candidates, vector, dependent, unset.over, frozenset(rechecked),
                         unset.varying if dependent is unset.dependent else None)
            # rules UNKNOWN with the inputs of the launch giving no flag, that may fire, but read an
            # auto-selection that on some GPU reads a flag or variable this launch sets: settled
            # on the GPUs again
            unknown_live = unset.unknown_live
            for i in unset.watched.intersection(rechecked):
                again.update(unknown_live[i])
            again -= touched
        rules, keys = self.rules, self.keys
        fired = set(unset.fired)
        fired -= touched
        fired -= again
        fired.update(r for r in touched & unset.live if self.fires(r, _three(rules[r], keys[r](vector), resolver), over))
        fired.update(r for r in again if over.varies(r) and over.everywhere(r))

        def undecided() -> list[int]:
            others: set[int] = set()  # as `again`, of all the rules that apply
            for i in rechecked:
                others.update(readers.get(i, ()))
            others = (others & unset.unknown) - touched
            kept = [r for r in unset.undecided() if r not in touched and r not in others]
            return sorted(kept + self.undecided_of(touched | others, vector, resolver, over))

        return _Verdicts(sorted(fired), over, undecided)

    def fires(self, r: int, verdict: Any, over: "_Over | None") -> bool:
        """Whether rule ``r`` fires given its ``verdict`` on the launch as the file tells it: when
        TRUE, or when UNKNOWN and it may depend on the GPU, TRUE on every GPU the launch may run on."""
        if verdict is True:
            return True
        return verdict is UNKNOWN and over is not None and over.varies(r) and over.everywhere(r)

    def undecided_of(self, rs: Any, vector: Any, resolver: "LaunchResolver", over: "_Over | None") -> list[int]:
        """Those of rules ``rs`` (that apply) the launch leaves undecided: UNKNOWN, and, when that
        may depend on the GPU, neither TRUE nor FALSE on every GPU it may run on."""
        rules, keys = self.rules, self.keys
        out = []
        for r in rs:
            if _three(rules[r], keys[r](vector), resolver) is UNKNOWN and \
                    (over is None or not over.varies(r) or over.outcome(r) is UNKNOWN):
                out.append(r)
        return out

    def gpu_dependent(self, resolver: "LaunchResolver") -> frozenset[int]:
        """The inputs that may differ between GPUs for ``resolver``'s launch: every ``gpu.*`` one,
        and the auto-selections that read the GPU while it was unknown (one that did not has the
        same value on every GPU; without a :class:`GpuWatchingResolver` resolver, every one)."""
        read = resolver.read_gpu if isinstance(resolver, GpuWatchingResolver) else None
        names = self.names
        return frozenset([i for i, _ in self.gpu_slots] + [
            i for i in self.effective_slots if read is None or read.get(names[i], True)])

    def context_parts(self, r: int) -> tuple[conditions.Condition, ...]:
        """The parts of rule ``r``'s conjunction that read only names a launch's context fixes
        (the GPU, the model, the draft model, the release)."""
        hit = self._context_parts.get(r)
        if hit is None:
            tree = self.rules[r].condition.tree
            hit = self._context_parts[r] = tuple(
                part for part in (conditions.Condition("", p) for p in (tree[1] if tree[0] == "and" else ()))
                if (names := part.names()) and all(n.partition(".")[0] in _CONTEXT_NAMESPACES for n in names))
        return hit

    def _unset_for(self, resolver: "LaunchResolver", version: str, ctx: Context, declared: dict[str, Any] | None,
                   kind: str | None, candidates: tuple[GpuProfile, ...] | None) -> "_Unset | None":
        parsed = resolver.parsed
        frozen_declared = _freeze(declared) if declared else None
        key = (id(parsed.catalog), parsed.open, bool(ctx.model_dummy), version, ctx.gpu, ctx.gpu_class, kind,
               id(ctx.model), id(ctx.draft_model), frozen_declared)
        try:
            hit = self._unset.get(key)
        except TypeError:  # an unhashable GPU description
            return None
        if frozen_declared is _UNHASHABLE:
            return None
        if hit is None or not hit.same_objects(parsed.catalog, ctx):
            if key not in self._seen_once:
                if len(self._seen_once) >= _UNSET_MAX:
                    self._seen_once.clear()
                self._seen_once.add(key)
                return None  # the first launch of this context: every rule evaluated on it
            if len(self._unset) >= _UNSET_MAX:
                self._unset.clear()
            hit = self._unset[key] = _Unset(self, parsed, version, ctx, declared, candidates)
        return hit


class _Verdicts:
    """The rules that fire for one launch (positions in the plan), the launch on each GPU it may
    run on (``None``: its GPU is named), and the rules it leaves undecided, worked out when first
    asked (:meth:`undecided`)."""

    __slots__ = ("fired", "over", "_undecided", "_found")

    def __init__(self, fired: list[int], over: "_Over | None", undecided: Callable[[], list[int]]):
        self.fired = fired
        self.over = over
        self._undecided = undecided
        self._found: list[int] | None = None

    def undecided(self) -> list[int]:
        if self._found is None:
            self._found = self._undecided()
        return self._found


class _Over:
    """One launch on each of the GPUs it may run on: each rule's inputs there (the launch's own,
    with the GPU's facts and the auto-selections on that GPU in place of the unknown ones) and
    its verdicts, each GPU's resolver made when first needed. ``dependent``: the inputs that may
    differ between GPUs (:meth:`_Plan.gpu_dependent`); the others are the launch's own.
    ``fallback``: the launch giving no flag in the same context, whose auto-selections on each
    GPU this launch shares but for those ``rechecked`` (the ones reading a flag or variable
    this launch sets)."""

    def __init__(self, plan: _Plan, resolver: "LaunchResolver", declared: dict[str, Any] | None,
                 candidates: tuple[GpuProfile, ...], vector: Any, dependent: frozenset[int],
                 fallback: "_Over | None" = None, rechecked: frozenset[int] = frozenset(),
                 varying: frozenset[int] | None = None):
        self.plan, self.base, self.declared, self.candidates, self.vector = plan, resolver, declared, candidates, vector
        self.dependent, self.fallback, self.rechecked = dependent, fallback, rechecked
        self.varying = varying  # the rules with an input in ``dependent``, when known
        self._resolvers: list[LaunchResolver | None] = [None] * len(candidates)
        self._memoryless: list[MemorylessRun] = []  # shared by the GPUs each answers for
        self._inputs: list[dict[int, Any] | None] = [None] * len(candidates)
        self._outcomes: dict[int, Any] = {}
        self._everywhere: dict[int, bool] = {}

    def context(self, k: int) -> Context:
        ctx = self.base.ctx
        return Context(gpu=self.candidates[k], model=ctx.model, model_dummy=ctx.model_dummy, env=ctx.env,
                       sglang_version=ctx.sglang_version, draft_model=ctx.draft_model)

    def resolver(self, k: int) -> "LaunchResolver":
        r = self._resolvers[k]
        if r is None:
            ctx = self.context(k)
            r = self._resolvers[k] = LaunchResolver(self.base.parsed, ctx, self.declared)
            r.memoryless = self._memoryless_run(ctx)
        return r

    def _memoryless_run(self, ctx: Context) -> MemorylessRun | None:
        """The launch's run with the memory unknown that answers for ``ctx``'s GPU: one already
        made for another GPU when it does, else a new one (None when even that one cannot)."""
        gpu = ctx.gpu
        for run in self._memoryless:
            if run.answers_for(gpu):
                return run
        run = MemorylessRun(self.base.parsed, ctx, self.declared)
        self._memoryless.append(run)
        return run if run.answers_for(gpu) else None

    def resolvers(self) -> list["LaunchResolver"]:
        return [self.resolver(k) for k in range(len(self.candidates))]

    def input(self, k: int, i: int) -> Any:
        """The frozen value of input ``i`` (a ``gpu.*`` or ``effective.*`` name) on GPU ``k``."""
        on = self._inputs[k]
        if on is None:
            on = self._inputs[k] = dict(self.plan.gpu_inputs(self.candidates[k]))
        v = on.get(i, _NOT_GPU)
        if v is _NOT_GPU:
            if self.fallback is not None and i not in self.rechecked:
                v = self.fallback.input(k, i)
            else:
                v = _frozen(self.resolver(k).value, self.plan.names[i])
            on[i] = v
        return v

    def varies(self, r: int) -> bool:
        """Whether an input of rule ``r`` may differ between the GPUs."""
        if self.varying is not None:
            return r in self.varying
        dependent = self.dependent
        return any(i in dependent for _, i in self.plan.varying[r])

    def key(self, r: int, k: int) -> tuple:
        plan, dependent = self.plan, self.dependent
        key = list(plan.keys[r](self.vector))
        for pos, i in plan.varying[r]:
            if i in dependent:
                key[pos] = self.input(k, i)
        return tuple(key)

    def verdict(self, r: int, k: int) -> Any:
        return _three(self.plan.rules[r], self.key(r, k), lambda: self.resolver(k))

    def everywhere(self, r: int) -> bool:
        """Whether rule ``r`` holds on every GPU (tried until one where it does not)."""
        hit = self._everywhere.get(r)
        if hit is None:
            hit = self._everywhere[r] = all(self.verdict(r, k) is True for k in range(len(self.candidates)))
        return hit

    def outcome(self, r: int) -> Any:
        """TRUE when rule ``r`` holds on every GPU, FALSE when on none, else UNKNOWN (tried
        until that is known)."""
        hit = self._outcomes.get(r, _NOT_GPU)
        if hit is not _NOT_GPU:
            return hit
        seen: set = set()
        out: Any = UNKNOWN
        for k in range(len(self.candidates)):
            v = self.verdict(r, k)
            if v is UNKNOWN:
                break
            seen.add(v)
            if len(seen) > 1:
                break
        else:
            out = seen.pop() if seen else UNKNOWN
        self._outcomes[r] = out
        return out


_NOT_GPU = object()


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
    not, release, GPU or the GPUs it may run on, model, draft model, dummy model, model facts
    declared by directives): its inputs, the rules that fire for it and those left undecided,
    and for each auto-selection (``effective.*``) the flags and variables its computation read
    (on any of the GPUs the launch may run on).

    Every input is a pure function of the names it reads (a condition's of its names and
    given(); an auto-selection's of the flags and variables it reads, the context fixed): a
    launch in the same context whose flags and variables give a rule the same inputs gets the
    same verdict, so only the rules reading an input the launch changes are evaluated again."""

    def __init__(self, plan: _Plan, parsed: ParsedArgs, version: str, ctx: Context, declared: dict[str, Any] | None,
                 candidates: tuple[GpuProfile, ...] | None):
        cat = parsed.catalog
        self.cat, self.model, self.draft = cat, ctx.model, ctx.draft_model
        self.ctx = Context(gpu=ctx.gpu, gpu_class=ctx.gpu_class, model=ctx.model, model_dummy=ctx.model_dummy,
                           env={}, sglang_version=ctx.sglang_version, draft_model=ctx.draft_model)
        self.open = parsed.open
        self.declared = declared
        self.candidates = candidates
        self.resolver = (GpuWatchingResolver if candidates else LaunchResolver)(self._empty(), self.ctx, declared)
        self.vector = plan.inputs(self.resolver)
        self.dependent = dependent = plan.gpu_dependent(self.resolver)
        self.varying = frozenset(r for r, inputs in enumerate(plan.varying) if any(i in dependent for _, i in inputs))
        self.over = over = _Over(plan, self.resolver, declared, candidates, self.vector, dependent,
                                 varying=self.varying) if candidates else None
        # the rules that apply: none of the parts of their conjunction the context alone decides
        # is FALSE (on any GPU the launch may run on, as one FALSE while the GPU is unknown is);
        # those that may fire: each such part is TRUE (on every GPU the launch may run on)
        applicable, live = [], []
        for r, rule in enumerate(plan.rules):
            if not _applies(rule, version, ctx):
                continue
            parts = [_part_verdict(part, self.resolver) for part in plan.context_parts(r)]
            if False in parts:
                continue
            applicable.append(r)
            if all(v is True for v in parts) or (over is not None and all(
                    v is True or _part_verdict(part, over.resolver(k)) is True
                    for part, v in zip(plan.context_parts(r), parts) for k in range(len(candidates)))):
                live.append(r)
        self.applicable, self.live = frozenset(applicable), frozenset(live)
        verdicts = {r: _three(plan.rules[r], plan.keys[r](self.vector), self.resolver) for r in applicable}
        self.unknown = frozenset(r for r, v in verdicts.items() if v is UNKNOWN)
        self.fired = frozenset(r for r in live if plan.fires(r, verdicts[r], over))
        # each input → the rules UNKNOWN here that may fire and read it
        unknown_live: dict[int, list[int]] = {}
        for r in self.unknown & self.live:
            for i in plan.slots[r]:
                unknown_live.setdefault(i, []).append(r)
        self.unknown_live = unknown_live
        self.watched = frozenset(unknown_live)
        self._undecided = lambda: plan.undecided_of(self.unknown, self.vector, self.resolver, over)
        self._found: list[int] | None = None
        # an input that cannot be frozen cannot be compared: its readers are always evaluated
        unhashable = [i for i, v in enumerate(self.vector) if v is _UNHASHABLE]
        self.always = frozenset(r for i in unhashable for r in plan.readers.get(i, ()))
        # which positions each destination the parser stores to fills (`args.tp_size` reads
        # `tensor_parallel_size` in the releases that parse into it)
        slots_of: dict[str, list[int]] = {}
        for i, dest in plan.flag_slots:
            slots_of.setdefault(cat.field_dests.get(dest, dest), []).append(i)
        self.flag_slots = {dest: tuple(slots) for dest, slots in slots_of.items()}
        self.effective = self._reads(plan, over)

    def dependent_for(self, plan: _Plan, resolver: "LaunchResolver", computed: list[int]) -> frozenset[int]:
        """The inputs that may differ between GPUs for a launch in this context whose
        auto-selections ``computed`` were computed again (this launch's own when that changed
        one of them)."""
        dependent = self.dependent
        if not computed:
            return dependent
        read, names = resolver.read_gpu, plan.names
        flipped = [i for i in computed if read.get(names[i], True) != (i in dependent)]
        return dependent.symmetric_difference(flipped) if flipped else dependent

    def undecided(self) -> list[int]:
        """The rules this launch leaves undecided (worked out when first asked)."""
        if self._found is None:
            self._found = self._undecided()
        return self._found

    def _empty(self) -> ParsedArgs:
        return ParsedArgs(self.cat, [], defaults(self.cat, {}), set(), self.open, [])

    def _reads(self, plan: _Plan, over: "_Over | None") -> tuple[tuple[int, frozenset[str], frozenset[str],
                                                                       frozenset[str], frozenset[str]], ...]:
        """For each auto-selection: the destinations (flags read or asked given() about) and the
        variables it reads here, through the other auto-selections it uses too; and those it reads
        only on some of the GPUs the launch may run on."""
        contexts = [self.ctx] + ([over.context(k) for k in range(len(over.candidates))] if over else [])
        field_dests = self.cat.field_dests
        out: dict[int, list[frozenset[str]]] = {}
        dests: dict[int, set[str]] = {i: set() for i in plan.effective_slots}
        variables: dict[int, set[str]] = {i: set() for i in plan.effective_slots}
        for ctx in contexts:
            recorder = _Recorder(self._empty(), ctx, self.declared)
            for i in plan.effective_slots:
                _frozen(recorder.value, plan.names[i])
                d, v = recorder.reads[plan.names[i]]
                dests[i].update(field_dests.get(x, x) for x in d)
                variables[i].update(v)
                if ctx is self.ctx:
                    out[i] = [frozenset(dests[i]), frozenset(variables[i])]
        return tuple((i, *out[i], frozenset(dests[i]) - out[i][0], frozenset(variables[i]) - out[i][1])
                     for i in plan.effective_slots)

    def same_objects(self, cat: Catalog, ctx: Context) -> bool:
        return self.cat is cat and self.model is ctx.model and self.draft is ctx.draft_model

    def compare(self, plan: _Plan, resolver: "LaunchResolver") -> tuple[list[Any], list[int], list[int], list[int]]:
        """``resolver``'s input vector; the positions where it differs from this one's: a flag or
        given() of a flag the launch gives, a variable it sets, and an auto-selection that reads
        one of them; the auto-selections computed again; and those that read one of them here or
        on some GPU the launch may run on (their values there may differ even where they do not
        here)."""
        base = self.vector
        vector = list(base)
        changed: list[int] = []
        computed: list[int] = []
        rechecked: list[int] = []
        names, n_names = plan.names, len(plan.names)
        explicit = resolver.parsed.explicit
        arg, given = resolver.arg, resolver.given
        for dest in explicit:
            for i in self.flag_slots.get(dest, ()):
                now = _frozen(arg, names[i][5:]) if i < n_names else _frozen(given, plan.given[i - n_names])
                if now is UNKNOWN and i < n_names and resolver.written_unknown(names[i]):
                    now = _WRITTEN_UNKNOWN
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
        for i, dests, variables, gpu_dests, gpu_variables in self.effective:
            if base[i] is _UNHASHABLE or not dests.isdisjoint(explicit) or (env and not variables.isdisjoint(env)):
                computed.append(i)
                rechecked.append(i)
                now = _frozen(resolver.value, names[i])
                if now != base[i] or now is _UNHASHABLE:
                    vector[i] = now
                    changed.append(i)
            elif (gpu_dests and not gpu_dests.isdisjoint(explicit)) or \
                    (env and gpu_variables and not gpu_variables.isdisjoint(env)):
                rechecked.append(i)
        return vector, changed, computed, rechecked


class _Recorder(LaunchResolver):
    """A resolver that notes the flags, given() and variables read through it for each
    auto-selection (``reads``: ``effective.<field>`` → (destinations, variables)), with those of
    the auto-selections it uses."""

    def __init__(self, *args: Any):
        super().__init__(*args)
        self._reading: list[tuple[set[str], set[str]]] = [(set(), set())]
        self.reads: dict[str, tuple[set[str], set[str]]] = {}

    # sglang's resolution pipeline, run once: every auto-selection that uses it reads what the
    # whole run read (LaunchResolver.pipeline)
    records_reads = True

    def run_starts(self) -> None:
        self._reading.append((set(), set()))

    def run_ends(self) -> tuple[set[str], set[str]]:
        reads = self._reading.pop()
        self.run_reused(reads)
        return reads

    def run_reused(self, reads: tuple[set[str], set[str]]) -> None:
        self._reading[-1][0].update(reads[0])
        self._reading[-1][1].update(reads[1])

    def arg(self, dest: str) -> Any:
        self._reading[-1][0].add(dest)
        return super().arg(dest)

    def given(self, name: str) -> Any:
        self._reading[-1][0].add(name.partition(".")[2])
        return super().given(name)

    def value(self, name: str) -> Any:
        if name.startswith("env."):
            self._reading[-1][1].add(name[4:])
        elif name.startswith("effective."):
            hit = self.reads.get(name)
            if hit is None:
                self._reading.append((set(), set()))
                try:
                    return super().value(name)
                finally:
                    hit = self.reads[name] = self._reading.pop()
                    self._reading[-1][0].update(hit[0])
                    self._reading[-1][1].update(hit[1])
            self._reading[-1][0].update(hit[0])
            self._reading[-1][1].update(hit[1])
        return super().value(name)


def _part_verdict(part: conditions.Condition, resolver: "LaunchResolver") -> Any:
    """A part of a condition's conjunction on ``resolver``; UNKNOWN when it fails (the evaluation of
    the whole condition reports it)."""
    try:
        return part.evaluate(resolver)
    except Exception:
        return UNKNOWN


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


def _verdict(rule: KbRule, key: tuple, resolver: "LaunchResolver | Callable[[], LaunchResolver]") -> Any:
    if _UNHASHABLE in key:
        return rule.condition.evaluate(resolver if isinstance(resolver, LaunchResolver) else resolver())
    memo_key = (rule.condition.source, key)  # the source determines the parsed tree
    try:
        return _VERDICTS[memo_key]
    except KeyError:
        pass
    verdict = rule.condition.evaluate(resolver if isinstance(resolver, LaunchResolver) else resolver())
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
                  text_of, over: _Over | None = None) -> Finding:
    """The finding of a rule that fires. ``over``: the launch on each GPU it may run on, when its
    GPU is not named (names in the message the GPU decides are shown as they are on those GPUs)."""
    if over is None:
        def show(text: str) -> str:
            return render(text, r)

        def value_of(text: str) -> str | None:
            return render_value(text, r)
    else:
        def show(text: str) -> str:
            return render_on_gpus(text, r, over.resolvers)

        def value_of(text: str) -> str | None:
            return render_value_on_gpus(text, r, over.resolvers)
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
            related.append((use.span, show(rel["message"])))
    if span is None:
        # nothing of the combination is written here: the model (or the launch) is the cause
        use = _use_of(parsed, "--model-path")
        if use is not None and any(n.startswith(("model.", "effective.")) for n in rule.condition.names()):
            span, flag = use.span, use.spelling
        else:
            span = anchor or (inv.span if inv is not None else Span(0, 0))
    fixes = [f for f in (_render_fix(fx, parsed, show, value_of, inv, text_of) for fx in rule.fixes) if f is not None]
    return finding(rule.code, show(rule.message), span, flag=flag, sglang_error=rule.sglang_error,
                   kb_id=rule.kb_id, fixes=fixes, related=related, tags=rule.tags)


def _render_fix(fx: dict, parsed: ParsedArgs, show: Callable[[str], str], value_of: Callable[[str], str | None],
                inv: Invocation | None, text_of) -> Fix | None:
    from ...fixes.edits import add_flag_edits, remove_flag_edits, set_value_edits  # (only a rule with fixes)

    title = show(fx["title"])
    appl = Applicability(fx["applicability"])
    opt = parsed.catalog.lookup(fx["flag"])
    if opt is None:
        return None
    flag = opt.name
    use = parsed.last_use(opt.dest)
    kind = fx["kind"]
    value = fx.get("value")
    if isinstance(value, str) and "{" in value:
        value = value_of(value)
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
    documents findings may point into; the checks the launch leaves undecided are kept in its
    ``undecided``. ``at``: the byte offset of a launch without an invocation (a ``--config``
    mapping checked on its own), for the settings scoped to where it is. An internal failure is
    recorded, never raised."""
    try:
        doc = result.document
        ctx, declared = launch_setup(parsed, inv, result, at)

        def text_of(path: str | None) -> str | None:
            if path is None or path == doc.path:
                return doc.text
            other = result.documents.get(path)
            return other.text if other is not None else None

        found, undecided = evaluate_launch(parsed, ctx, inv, anchor=anchor, text_of=text_of,
                                           declared_model=declared, at=at)
        result.undecided[id(inv) if inv is not None else id(parsed)] = undecided
        return unread_model_findings(parsed, ctx, inv, anchor) + found
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
