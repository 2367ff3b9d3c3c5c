"""Hover: what a flag is (catalog facts of the target sglang release), what it is set to in
this launch where the file tells, and the findings on it; on a value, which choice it is."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from ... import rules
from ...base.unknown import UNKNOWN
from ...catalog.catalog import Catalog, Option
from ...engine.check import Result, launch_parse
from ...base.findings import Finding, Span
from ...catalog.valuetypes import describe
from .. import convert
from .context import contains, findings_at, is_local, server_invocations, use_at

SERVER_ARGS_DOCS = "https://docs.sglang.ai/advanced_features/server_arguments.html"
MAX_CHOICES = 24


def _code(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return "`" + text.replace("`", "'") + "`"


def value_kind(opt: Option) -> str:
    """A short description of what the flag takes."""
    if opt.action == "boolean_optional":
        neg = next((s for s in opt.option_strings if s.startswith("--no-")), None)
        return "switch" + (f" (turn off with `{neg}`)" if neg else "")
    if opt.is_switch:
        return "switch (takes no value)"
    what = describe(opt.type)
    if opt.nargs == "+":
        return f"one or more values ({what})"
    if opt.nargs == "*":
        return f"any number of values ({what})"
    if opt.nargs == "?":
        return f"optional value ({what})"
    if opt.action == "append":
        return f"{what}; may be given several times"
    return what


def default_text(opt: Option) -> str:
    if opt.is_switch and opt.action in ("store_true", "boolean_optional") and opt.default in (None, False):
        return "off"
    if opt.default is None:
        return "none (unset)"
    if opt.default == "auto":
        return "`auto` (sglang chooses at start-up from the model and the GPU)"
    return _code(opt.default)


def option_facts(opt: Option, cat: Catalog) -> list[str]:
    """Markdown lines describing a catalog option."""
    lines = [f"**`{opt.name}`** — {value_kind(opt)}"]
    if opt.help:
        # sglang's own help text, from a catalog built from the installation in use
        lines.append(f"sglang {cat.sglang_version}: {opt.help}")
    if (not opt.is_switch or opt.action == "boolean_optional") and opt.dest not in cat.unknown_defaults:
        lines.append(f"Default: {default_text(opt)}")
    others = [s for s in opt.option_strings if s != opt.name]
    if others:
        lines.append("Also written: " + ", ".join(f"`{s}`" for s in others))
    if opt.choices is not None:
        shown = ", ".join(_code(c) for c in opt.choices[:MAX_CHOICES])
        more = f" … ({len(opt.choices)} in all)" if len(opt.choices) > MAX_CHOICES else ""
        lines.append(f"Choices: {shown}{more}")
    if opt.required:
        lines.append("Required: sglang refuses to start without it.")
    if opt.rejects:
        lines.append(f"**Retired**: sglang {cat.sglang_version} still parses it only to refuse it"
                     + (f"; use `{opt.replacement}`." if opt.replacement else "."))
    elif opt.deprecated:
        lines.append(f"**Deprecated** in sglang {cat.sglang_version}"
                     + (f"; use `{opt.replacement}`." if opt.replacement else "."))
    if not opt.config:
        lines.append("Cannot be set from a `--config` YAML file.")
    return lines


MAX_SOLUTIONS = 4


def _finding_lines(findings: list[Finding]) -> list[str]:
    out = []
    for f in findings:
        rule = rules.registry().get(f.code)
        head = f"**{f.code}**" + (f" {rule.name} — {rule.summary}" if rule else "")
        link = f" ([rule docs]({rule.url}))" if rule else ""
        out.append(f"{head}{link}  \n{f.message}")
        out += _kb_lines(f)
        if f.fixes:
            out.append("Fix: " + "; ".join(fix.title for fix in f.fixes))
    return out


def _kb_lines(f: Finding) -> list[str]:
    """The knowledge-base record's explanation and solutions for a finding of a KB rule."""
    if not f.kb_id:
        return []
    from ...checks.kb.rule import rule_by_code

    rule = rule_by_code(f.code)
    if rule is None:
        return []
    record = rule.record
    out = []
    if record.get("documentation"):
        out.append(str(record["documentation"]))
    solutions = [str(s) for s in record.get("solutions") or []][:MAX_SOLUTIONS]
    if solutions:
        out.append("Solutions:  \n" + "  \n".join(f"{i}. {s}" for i, s in enumerate(solutions, 1)))
    out.append(f"Knowledge base record `{f.kb_id}` (sglang {rule.versions})")
    return out


def _effective(parsed, opt: Option, use) -> str | None:
    value = parsed.get(opt.dest)
    if value is UNKNOWN:
        if use.values and all(w.text is not None for w in use.values):
            return "none that sglang accepts (see below)"
        return "not known from this file (it comes from a variable or command the file does not define)"
    if value is None:
        return None
    if isinstance(value, bool):
        return "on" if value else "off"
    return _code(value)


# the flags whose hover shows the launch's memory plan (issue 22)
MEMORY_FLAG_DESTS = ("model_path", "tp_size")


def _memory_lines(result: Result, parsed) -> list[str]:
    """The memory plan of the launch ``parsed`` belongs to: weights per GPU, KV cache per token and
    in tokens, each with how it was obtained; nothing when the checkpoint's config is not read."""
    from ...engine.resolve import launch_memory_view

    for inv in result.invocations:
        if launch_parse(result, inv) is parsed:
            try:
                _, lines = launch_memory_view(result, inv, parsed)
            except Exception:  # pragma: no cover - a modelling bug must not break the hover
                return []
            return ["", "**Memory plan** (sglang 0.5.23's sizing):"] + [f"- {line}" for line in lines] if lines else []
    return []


def _refused_flag_at(result: Result, offset: int):
    """(word, option, catalog) for a flag word under the cursor that the parse recorded no use
    of, because sglang refuses it as written (a value glued to a switch …)."""
    doc = result.document
    for inv, parsed in server_invocations(result):
        if parsed is None:
            continue
        for w in inv.args:
            if w.text and w.text.startswith("--") and is_local(w.span, doc) and contains(w.span, offset):
                opt = parsed.catalog.lookup(w.text.split("=", 1)[0])
                if opt is not None:
                    return w, opt, parsed.catalog
    return None


_SOURCE_TEXT = {"setting": "from the editor/CLI setting", "directive": "from a `# sglang-lsp:` directive in this file",
                "config": "from the sglang-lsp configuration file"}


def _launch_at(result: Result, offset: int) -> tuple[Any, list[str]] | None:
    """On the program words of a server launch: what it runs on (GPU, sglang version) and where
    each value came from: a setting, a directive, or the file itself (node selector, image …)."""
    from ...context.launch import launch_target

    doc = result.document
    for inv in result.invocations:
        if inv.kind != "server" or not inv.program:
            continue
        first, last = inv.program[0].span, inv.program[-1].span
        if not (is_local(first, doc) and first.path == last.path and first.start <= offset <= last.end):
            continue
        target = launch_target(result, inv)
        lines = ["**sglang launch** — what the checks assume"]
        gpu_source = target.sources.get("gpu")
        if target.gpu is not None:
            lines.append(f"GPU: `{target.gpu}` — {_origin_text(gpu_source, target.inferred.get('gpu'), doc, target.origins.get('gpu'))}")
        elif target.gpu_class is not None:
            cls = target.gpu_class
            members = ", ".join(c.name for c in cls.candidates) if cls.exhaustive else ""
            lines.append(f"GPU: {cls.name}" + (f" ({members})" if members and len(cls.candidates) > 1 else "")
                         + f" — {_origin_text(gpu_source, target.inferred.get('gpu_class'), doc, target.origins.get('gpu'))}; "
                         "rules that need the exact GPU stay quiet")
        else:
            lines.append("GPU: not known (set one with `--gpu`, the `gpu` setting, or a node selector in the "
                         "manifest); GPU-dependent rules stay quiet")
        for key in ("gpu", "gpu_class"):
            overridden = target.inferred.get(key)
            if overridden is not None and gpu_source != "inferred":
                lines.append(f"(the file suggests `{_value_name(overridden.value)}` — "
                             f"{overridden.origin.describe(doc)} — but the {gpu_source} wins)")
        version = target.sglang_version or (result.parsed[0].catalog.sglang_version if result.parsed else None)
        if target.sglang_version is not None:
            origin = _origin_text(target.sources.get("sglang_version"), target.inferred.get("sglang_version"), doc,
                                  target.origins.get("sglang_version"))
            lines.append(f"sglang: `{version}` — {origin}")
        elif version is not None:
            lines.append(f"sglang: `{version}` (the bundled catalog; the file does not say)")
        parsed = launch_parse(result, inv)
        if parsed is not None:
            from ...checks.kb.resolution import HOVER_FIELDS, auto_selected

            picks = [f"`{c.flag}` → `{_pick_text(c.value)}`" for c in auto_selected(parsed, inv, result, HOVER_FIELDS)]
            if picks:
                lines.append("sglang picks at start-up: " + ", ".join(picks)
                             + " (every field: *Show effective configuration*)")
        return Span(first.start, last.end, first.path), lines
    return None


def _pick_text(value: Any) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value).lower() if isinstance(value, bool) else str(value)


def _value_name(value: Any) -> str:
    return getattr(value, "name", value)


def _origin_text(source: str | None, inferred: Any, doc: Any, origin: Any = None) -> str:
    if source == "inferred" and inferred is not None:
        return "inferred from " + inferred.origin.describe(doc)
    if origin is not None and source in ("directive", "config"):
        return "from the " + origin.describe()  # with the file and line it is written on
    return _SOURCE_TEXT.get(source or "", "unknown")


def hover(result: Result, offset: int, encoding: str, markdown: bool = True) -> types.Hover | None:
    doc = result.document
    at = use_at(result, offset)
    sections: list[list[str]] = []
    hover_span = None
    findings: list[Finding] = []
    if at is not None:
        use, opt = at.use, at.use.option
        cat = at.parsed.catalog
        lines: list[str] = []
        if at.value_index is not None:
            word = use.values[at.value_index]
            hover_span = use.value_spans[at.value_index]
            text = word.text
            if opt.choices is not None and text is not None:
                valid = any(str(c) == text for c in opt.choices)
                default = " (the default)" if str(opt.default) == text else ""
                lines.append(f"`{text}` — " + (f"one of the {len(opt.choices)} choices of `{opt.name}`{default}"
                                               if valid else f"**not** a choice of `{opt.name}`"))
            elif text is not None:
                lines.append(f"`{text}` — value of `{opt.name}`")
            else:
                lines.append(f"value of `{opt.name}`, not known from this file")
            lines.append("")
        else:
            hover_span = use.flag_span
            if use.written != use.spelling:
                lines.append(f"`{use.written}` abbreviates `{use.spelling}`.")
                lines.append("")
        lines += option_facts(opt, cat)
        effective = _effective(at.parsed, opt, use)
        if effective is not None and at.parsed.last_use(opt.dest) is use:
            lines.append(f"Value in this launch: {effective}")
        if opt.dest in MEMORY_FLAG_DESTS and at.parsed.last_use(opt.dest) is use:
            lines += _memory_lines(result, at.parsed)
        sections.append(lines)
        # the findings on this flag use: on the flag word and on its values
        parts = [hover_span] if at.value_index is not None else \
            [use.flag_span] + [vs for vs in use.value_spans if is_local(vs, doc)]
        findings = []
        for part in parts:
            for f in findings_at(result, part.start, part.end):
                if f not in findings and (f.flag in (None, use.spelling, use.written, opt.name) or f.span == part):
                    findings.append(f)
        origin = {"user": " (built from the installed sglang)", "history": " (from the flag history)"}.get(cat.source, "")
        footer = [f"Flag catalog of sglang {cat.sglang_version}{origin} · [server arguments]({SERVER_ARGS_DOCS})"]
    else:
        findings = [f for f in findings_at(result, offset) if f.span.start <= offset <= f.span.end]
        launch = _launch_at(result, offset)
        flag = _refused_flag_at(result, offset) if launch is None else None
        if launch is not None:
            hover_span, lines = launch
            sections.append(lines)
            findings = [f for f in findings if f.span.start <= hover_span.end and hover_span.start <= f.span.end]
        elif flag is not None:
            # a flag sglang refuses as written (`--enable-metrics=true`): still say what it is
            word, opt, cat = flag
            hover_span = word.span
            sections.append(option_facts(opt, cat))
            findings += [f for f in findings_at(result, word.span.start, word.span.end) if f not in findings]
        elif not findings:
            return None
        else:
            hover_span = min((f.span for f in findings), key=lambda s: s.end - s.start)
        footer = [f"[sglang server arguments]({SERVER_ARGS_DOCS})"]
    if findings:
        sections.append(_finding_lines(findings))
    sections.append(footer)
    text = "\n\n---\n\n".join("  \n".join(s).replace("  \n  \n", "\n\n") for s in sections)
    rng = convert.span_range(doc, hover_span, encoding) if hover_span is not None and is_local(hover_span, doc) else None
    return types.Hover(contents=convert.markup(text, markdown), range=rng)
