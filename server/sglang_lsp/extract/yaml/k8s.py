"""Kubernetes containers → launches: ``command`` + ``args`` of every container of any workload
(pod templates, LeaderWorkerSet leader/worker, ``kind: List`` items, custom resources with a
``container:``/``runner:``/``mainContainer:``), ``$(VAR)`` expanded from the container's ``env``
as the kubelet does, and the argument pitfalls found on the way: an undefined ``$(VAR)``
(SGL023), a list item YAML reads as a number or boolean (SGL025), several words in one item
(SGL026)."""

from __future__ import annotations

import bisect
import re

import tree_sitter as ts

from ...rules import finding
from ...base.findings import Applicability, Edit, Finding, Fix, Span
from ...base.invocation import Word, match_launch
from .scalars import Scalar, resolve_plain
from .tree import (CharSpans, LAUNCH_TEXT, SCALAR_TYPES, KIND_KEY, KIND_TEXT, DOC_SEPARATOR, DOC_SEPARATOR_TEXT,
                   QUOTE_OF_STYLE, Text, owned, line_matches)


class KubernetesReader:
    def container(self, node: ts.Node) -> bool:
        """The launch of a container (its mapping): ``command`` + ``args``."""
        if not self.mentions_sglang(node):
            return False
        fields = self.fields(node)
        return self.command_args(node, fields, fields.get("command"), fields.get("args"), fields.get("env"))

    def holder(self, node: ts.Node) -> bool:
        """The launches of an object with a ``command`` list that is no container (see
        :mod:`.operators`): an llmaz ``BackendRuntime``'s command with each recommended config's args,
        or ``command`` + ``args`` of any other."""
        fields = self.fields(node)
        env = fields.get("env", fields.get("envs"))
        configs = self.recommended_args(node)
        if configs is None:
            return self.command_args(node, fields, fields.get("command"), fields.get("args"), env, holder=True)
        found = [self.command_args(node, fields, fields.get("command"), args, env, holder=True) for args in configs]
        return any(found)

    def command_args(self, node: ts.Node, fields: dict, cmd_node: ts.Node | None, args_node: ts.Node | None,
                     env_node: ts.Node | None, holder: bool = False) -> bool:
        """A launch from ``command`` and ``args`` lists (a container's, or those of a launch
        holder: then a string ``command`` is left to the scan of shell in YAML, and an item that
        is no string is reported only in a Kubernetes object)."""
        if cmd_node is None and args_node is None:
            return False
        kind = self._kind_of(node)
        group = self.group_of(node) if b"GROUP_SIZE" in self.data[node.start_byte : node.end_byte] else None
        injected = {group.size_variable: group.size} if group is not None and group.size and group.size_variable \
            else None
        env_from = self.resolve(fields.get("envFrom"))
        env_from_open = env_from is not None and bool(self.items(env_from) if "sequence" in env_from.type else True)
        env, env_open, env_problems = self._k8s_env(env_node, env_from_open or
                                                    self.overlaps_template(node.start_byte, node.end_byte), kind)
        typed = not holder or kind is not None  # (an item that is no string: the API server's schema refuses it)
        items: list[tuple[ts.Node, Scalar | None]] = []
        problems: list[Finding] = []
        for key, value in (("command", cmd_node), ("args", args_node)):
            if value is None:
                continue
            target = self.resolve(value)
            if target is None:
                continue
            if target.type in ("block_sequence", "flow_sequence"):
                for item in self.items(target):
                    inner = self.resolve(item)
                    items.append((item, self.scalar_of(inner)))
                    if typed and inner is not None and inner.type != "double_quote_scalar":  # (the usual quoted item)
                        problems += self._non_string_item(inner, key)
            elif holder:
                return False
            elif target.type in SCALAR_TYPES:
                # kubectl refuses a string here; the generic scan still reads it as a shell command
                sc = self.node_scalar(target)
                first = re.search(r"\S+", sc.text) if sc is not None else None
                span = Span(sc.spans[first.start()][0], sc.spans[first.end() - 1][1]) if first \
                    else Span(target.start_byte, target.end_byte)
                problems.append(finding(
                    "SGL025", f"Kubernetes `{key}` must be a list of strings, not one string; the API server "
                    f"rejects the manifest (write `{key}: [\"sh\", \"-c\", …]` or one item per word)", span,
                ))
                return self.report(problems)
        if not items:
            return False
        refs: list[tuple[str, Span, bool]] = []
        words: list[Word] = []
        for item, sc in items:
            if sc is None:
                words.append(Word(None, Span(item.start_byte, item.end_byte), None, None, "", "yaml", whole=True))
                continue
            a, b = sc.content_span if sc.style != "plain" else sc.span
            t = sc if "$" not in sc.text else \
                self._k8s_expand(Text(sc.text, sc.spans), env, env_open, kind, refs, shell=False, injected=injected)
            words.append(Word(t.text, Span(a, b), owned(t.spans), QUOTE_OF_STYLE.get(sc.style), "", "yaml", whole=True))
        match = match_launch(words)
        if match is None:
            return self.report(self.whole_command_items(words, "command")) if typed else False
        self.consumed += [(n.start_byte, n.end_byte) for n in (cmd_node, args_node) if n is not None]
        self.consumed += [(t.start_byte, t.end_byte) for t in (self.resolve(cmd_node), self.resolve(args_node))
                          if t is not None]
        problems += env_problems
        env_words = {k: (None if v is None else Word(v.text, Span(*(v.spans[0][0], v.spans[-1][1]) if v.spans else (0, 0)), owned(v.spans)))
                     for k, v in env.items()}
        env_text = {k: (None if v is None or self.in_hole(v.spans) is not None else v.text) for k, v in env.items()}
        if match.kind == "shell":
            script = words[match.end]
            item, sc = items[match.end]
            if script.text is None or sc is None:
                return self.report(problems)
            # `$(VAR)` was expanded above with list-word rules; a script wants shell-aware reporting
            refs = [r for r in refs if not (item.start_byte <= r[1].start < item.end_byte)]
            t = self._k8s_expand(Text(sc.text, sc.spans), env, env_open, kind, refs, shell=True, injected=injected)
            script = Word(t.text, script.span, owned(t.spans), script.quote, "", "yaml")
            self.shell(script, sc, env_words, env_text)
        else:
            words, split = self.split_items(words, match.end)
            problems += split
            self.launch(match, words, env_text)
        problems += self._undefined_refs(refs)
        return self.report(problems) or True

    def split_items(self, words: list[Word], start: int, only: set[int] | None = None) -> tuple[list[Word], list[Finding]]:
        """SGL026: list items (no shell splits them) that hold several words, e.g. `- --port 30000`.
        The launch is then checked as its author meant it: one word per token."""
        out: list[Word] = words[:start]
        findings: list[Finding] = []
        for i in range(start, len(words)):
            w = words[i]
            tokens = [] if w.text is None or not w.char_spans or (only is not None and i not in only) \
                or len(w.text.split(None, 1)) < 2 else list(re.finditer(r"\S+", w.text))
            if len(tokens) < 2 or not tokens[0].group().startswith("-"):
                out.append(w)
                continue
            fixes = []
            first = tokens[0].group().split("=", 1)[0]
            opt = self.cat.lookup(first)
            if len(tokens) == 2 and w.text == w.text.strip() and "=" not in tokens[0].group() and opt is not None \
                    and not opt.is_switch and not tokens[1].group().startswith("-"):
                gap = Span(w.char_spans[tokens[0].end() - 1][1], w.char_spans[tokens[1].start()][0], w.span.path)
                if w.span.start <= gap.start <= gap.end <= w.span.end:
                    # (not when the second word comes from a `$(VAR)` defined elsewhere in the file)
                    joined = f"{tokens[0].group()}={tokens[1].group()}"
                    fixes.append(Fix(f"Write it as one word: `{joined}`", Applicability.SAFE, (Edit(gap, "="),)))
            findings.append(finding(
                "SGL026", f"`{w.text.strip()}` is one list item, so sglang receives it as a single argument "
                f"(not {len(tokens)} words) and rejects it; write one item per word", w.sub_span(0, tokens[0].end()),
                flag=first, fixes=fixes, sglang_error=r"unrecognized arguments: .*" + re.escape(w.text.strip()).replace("\\-", "-"),
            ))
            for m in tokens:
                a, b = m.span()
                out.append(Word(m.group(), Span(w.char_spans[a][0], w.char_spans[b - 1][1], w.span.path),
                                w.char_spans[a:b], w.quote, "", w.origin))
        return out, findings

    def whole_command_items(self, words: list[Word], key: str) -> list[Finding]:
        """SGL026: a list item holding a whole launch command line, which nothing splits."""
        out = []
        for w in words:
            if w.text is None or " " not in w.text.strip() or not LAUNCH_TEXT.search(w.text):
                continue
            lead = len(w.text) - len(w.text.lstrip())
            first = w.text.split()[0]
            shown = w.text.strip() if len(w.text.strip()) <= 48 else w.text.strip()[:47] + "…"
            out.append(finding(
                "SGL026", f"this `{key}` item is a whole command line, but list items are passed on as they are, "
                f"without a shell to split them: the container looks for a program named `{shown}`; write one "
                "item per word, or run it with `sh -c`", w.sub_span(lead, lead + len(first)),
            ))
        return out

    def report(self, findings: list[Finding]) -> bool:
        self.scan.findings += findings
        return bool(findings)

    def _kind_of(self, node: ts.Node) -> str | None:
        """``kind`` of the innermost object around ``node`` that has one (the workload, or the
        item of a ``kind: List``)."""
        window = self._window
        if window is not None and not (window[0] <= node.start_byte and node.end_byte <= window[1]):
            self._window = window = None  # a node elsewhere (a reader of the file): every `kind:` key
            self._kinds = self._kind_matches = None
        if self._kinds is None:
            self._kinds = {m.start(1): m for m in self.kind_keys()}  # (in byte order)
            self._kind_starts = list(self._kinds)
            lo, hi = window if window is not None else (0, None)
            self._doc_starts = [lo] + [m.start() for m in
                                       line_matches(DOC_SEPARATOR, DOC_SEPARATOR_TEXT, self.data, lo, hi)]
        doc_start = self._doc_starts[bisect.bisect_right(self._doc_starts, node.start_byte) - 1]
        starts = self._kind_starts
        # only the `kind:` keys of this document up to the node's end can belong to an object around
        # it; looked at backwards from the node, the first whose object holds the node is the
        # innermost one's (an outer object's keys lie outside the inner object, and before it).
        # (Forwards, an item far down a `kind: List` went through every item's key before it.)
        found = None
        for k in range(bisect.bisect_right(starts, node.end_byte) - 1, bisect.bisect_left(starts, doc_start) - 1, -1):
            pos = starts[k]
            m = self._kinds[pos]
            if isinstance(m, re.Match):  # the object this `kind:` belongs to, found once
                n = self.around(self.node_at(m.start(1), m.end(1)), ("block_mapping", "flow_mapping"))
                m = self._kinds[pos] = (n.start_byte, n.end_byte, m.group(1).decode()) if n is not None else None
            if found is not None:
                if pos < found[0]:
                    break
                if m is not None and m[:2] == found[:2]:
                    found = m  # a repeated `kind:` of the same object: the first one counts
            elif m is not None and m[0] <= node.start_byte and node.end_byte <= m[1]:
                found = m
        return found[2] if found is not None else None

    def kind_keys(self) -> list[re.Match]:
        """Every ``kind:`` key of the file, or of its window (a byte match each). (The objects of
        the keys outside the window cannot hold a node inside it: the window is whole documents.)"""
        if self._kind_matches is None:
            lo, hi = self._window if self._window is not None else (0, None)
            self._kind_matches = line_matches(KIND_KEY, KIND_TEXT, self.data, lo, hi)
        return self._kind_matches

    def _k8s_env(self, env_node: ts.Node | None, open_: bool, kind: str | None
                 ) -> tuple[dict[str, Text | None], bool, list[Finding]]:
        """The container's ``env`` in order: name → value (``None`` = from ``valueFrom``), whether
        other names may be defined too, and SGL023 for a value's ``$(VAR)`` that no earlier
        variable defines (the kubelet expands a value with the variables listed before it)."""
        env: dict[str, Text | None] = {}
        target = self.resolve(env_node)
        if target is None:
            return env, open_ or (env_node is not None and self.overlaps_template(env_node.start_byte, env_node.end_byte)), []
        if target.type not in ("block_sequence", "flow_sequence"):
            return env, True, []
        refs: list[tuple[str, Span, bool]] = []
        for item in self.items(target):
            mapping = self.resolve(item)
            if mapping is None or mapping.type not in ("block_mapping", "flow_mapping"):
                open_ = True
                continue
            f = self.fields(mapping)
            name = self.scalar_text(f.get("name"))
            if not name:
                open_ = True
                continue
            if "value" in f:
                sc = self.node_scalar(f["value"])
                if sc is None:
                    env[name] = None
                    continue
                env[name] = self._k8s_expand(Text(sc.text, sc.spans), env, open_, kind, refs, shell=False)
            elif "valueFrom" in f:
                env[name] = None
            else:
                env[name] = Text("", [])
        problems = []
        for name, span, _ in refs:
            if name in env:
                problems.append(finding(
                    "SGL023", f"`$({name})` is used in `env` before `{name}` is defined: the kubelet expands a value "
                    "only with the variables listed above it, so it stays unexpanded", span))
            elif not open_:
                problems.append(finding(
                    "SGL023", f"`$({name})` is not defined in this container's `env:`, so Kubernetes leaves it "
                    "unexpanded in this value", span))
        return env, open_, problems

    def _k8s_expand(self, t: Text, env: dict[str, Text | None], env_open: bool, kind: str | None,
                    refs: list[tuple[str, Span, bool]], shell: bool, injected: dict[str, str] | None = None) -> Text:
        """The kubelet's ``$(VAR)`` expansion of one command/args string (``$$`` → ``$``; an
        unknown or undefined reference is kept literally and its range marked unknown).
        ``injected``: variables the controller sets to a value the file says (a LeaderWorkerSet's
        ``LWS_GROUP_SIZE``), each character placed on the reference."""
        text, spans = t.text, t.spans
        if "$" not in text:
            return t
        out: list[str] = []
        out_spans: CharSpans = []
        i, n = 0, len(text)
        while i < n:
            j = text.find("$", i, n - 1)  # (a `$` at the very end is a character like any other)
            if j != i:  # the text up to the next `$`, as it is
                j = n if j == -1 else j
                out.append(text[i:j])
                out_spans.extend(spans[i:j])
                i = j
                continue
            ch, nxt = "$", text[i + 1]
            if nxt == "$":
                out.append("$")
                out_spans.append((spans[i][0], spans[i + 1][1]))
                i += 2
                continue
            close = text.find(")", i + 2) if nxt == "(" else -1
            if close == -1:  # not a reference: `$x` and an unterminated `$(` stay as written
                out += [ch, nxt]
                out_spans += [spans[i], spans[i + 1]]
                i += 2
                continue
            name = text[i + 2 : close]
            ref_span = Span(spans[i][0], spans[close][1])
            value = env.get(name, ...)
            if value is ... and injected and name in injected:
                out.append(injected[name])
                out_spans.extend([(ref_span.start, ref_span.end)] * len(injected[name]))
            elif value is not ... and value is not None:
                out.append(value.text)
                out_spans.extend(value.spans)
            else:
                out.append(text[i : close + 1])
                out_spans.extend(spans[i : close + 1])
                self.hole(ref_span.start, ref_span.end)
                defined_elsewhere = value is None or env_open or kind not in _BUILTIN_WORKLOADS \
                    or _SERVICE_LINK.match(name) or (kind in _INJECTED and _INJECTED[kind].match(name)) \
                    or (name.endswith("_PORT") and name[: -len("_PORT")] in self._service_names())
                looks_like_var = (_ENV_LIKE if shell else _VAR_NAME).match(name)
                if not defined_elsewhere and looks_like_var:
                    refs.append((name, ref_span, shell))
            i = close + 1
        # a substituted value may be several characters per source span: keep one span per char
        flat_text = "".join(out)
        if len(out_spans) != len(flat_text):  # pragma: no cover - defensive
            out_spans = (out_spans + [out_spans[-1]] * len(flat_text))[: len(flat_text)]
        return Text(flat_text, out_spans)

    def _service_names(self) -> set[str]:
        """Services defined in this file, spelled as the prefix of their link variables."""
        if self._services is None:
            self._services = self.services_in(0, len(self.data)) if b"Service" in self.data else set()
        return self._services

    def services_in(self, start: int, end: int) -> set[str]:
        """:meth:`_service_names` of the documents that lie in ``[start, end)``."""
        out = set()
        for top in self.documents(start, end):
            f = self.fields(top)
            if self.scalar_text(f.get("kind")) == "Service":
                name = self.scalar_text(self.fields(self.resolve(f.get("metadata"))).get("name"))
                if name:
                    out.add(name.upper().replace("-", "_").replace(".", "_"))
        return out

    def _undefined_refs(self, refs: list[tuple[str, Span, bool]]) -> list[Finding]:
        out = []
        seen = set()
        for name, span, shell in refs:
            if (span.start, span.end) in seen:
                continue
            seen.add((span.start, span.end))
            tail = (f"; the shell then runs `{name}` as a command" if shell else "; sglang receives the text "
                    f"`$({name})` itself")
            out.append(finding(
                "SGL023", f"`$({name})` is not defined in this container's `env:`, so Kubernetes leaves it "
                f"unexpanded{tail}", span,
            ))
        return out

    def _non_string_item(self, inner: ts.Node | None, key: str) -> list[Finding]:
        """SGL025 for a ``command``/``args`` item (its content node) that is not a string."""
        if inner is None or inner.type != "plain_scalar":
            if inner is not None and inner.type in ("block_mapping", "flow_mapping", "block_sequence", "flow_sequence"):
                return [finding("SGL025", f"Kubernetes `{key}` items must be strings; this one is a "
                                      f"{'list' if 'sequence' in inner.type else 'mapping'}, and the API server rejects "
                                      "the manifest", Span(inner.start_byte, inner.start_byte + 1))]
            return []
        text = self.text_of(inner)
        value = resolve_plain(text)
        if value is None or (isinstance(value, str) and text not in _K8S_BOOL_ONLY):
            return []
        what = "a boolean" if isinstance(value, bool) or text in _K8S_BOOL_ONLY else "a number"
        span = Span(inner.start_byte, inner.end_byte)
        quoted = '"' + text + '"'
        return [finding(
            "SGL025", f"`{text}` in `{key}` is {what} in YAML, but Kubernetes `{key}` items must be strings: "
            f"the API server rejects the manifest; quote it (`{quoted}`)", span,
            fixes=[Fix(f"Quote it: `{quoted}`", Applicability.SAFE, (Edit(span, quoted),))],
        )]


# kinds whose pods get no environment variables from a controller (beyond the ones below)
_BUILTIN_WORKLOADS = {"Pod", "PodTemplate", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet",
                      "ReplicationController", "Job", "CronJob", "LeaderWorkerSet"}


_INJECTED = {
    "LeaderWorkerSet": re.compile(r"^LWS_"),  # LWS_LEADER_ADDRESS, LWS_GROUP_SIZE, LWS_WORKER_INDEX …
    "Job": re.compile(r"^JOB_COMPLETION_INDEX$"),
    "CronJob": re.compile(r"^JOB_COMPLETION_INDEX$"),
}


# docker-link style variables the kubelet adds for every service in the namespace; a bare `X_PORT`
# counts only when a Service `x` is defined in the same file (it is too common a name otherwise)
_SERVICE_LINK = re.compile(r"^[A-Z0-9_]+_(?:SERVICE_HOST|SERVICE_PORT(?:_[A-Z0-9_]+)?|PORT_\d+_(?:TCP|UDP|SCTP)(?:_(?:PROTO|PORT|ADDR))?)$")


_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


_ENV_LIKE = re.compile(r"^[A-Z_][A-Z0-9_]*$")


_K8S_BOOL_ONLY = {"y", "Y", "n", "N"}  # YAML 1.1 booleans for kubectl's YAML reader, strings for PyYAML
