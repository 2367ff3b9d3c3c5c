"""Compose services → launches: ``command`` / ``entrypoint`` as a list or a string split the way
Compose splits it (go-shellwords: quotes and backslashes, no shell), ``$VAR`` interpolation
(unknown; ``$$`` is a ``$``), ``environment`` as the launch's environment, and bind mounts (what a
``--config`` path inside the container names on the host)."""

from __future__ import annotations

import re

import tree_sitter as ts

from ...base.findings import Span
from ...base.invocation import Word, match_launch
from .scalars import Scalar
from .tree import CharSpans, MENTIONS_SGLANG, QUOTE_OF_STYLE, Text, owned


class ComposeReader:
    def service(self, node: ts.Node) -> bool:
        fields = self.fields(node)
        cmd_node, entry_node = fields.get("command"), fields.get("entrypoint")
        if cmd_node is None and entry_node is None:
            return False
        region = [n for n in (cmd_node, entry_node) if n is not None]
        region += [t for t in (self.resolve(n) for n in region) if t is not None]
        if not any(MENTIONS_SGLANG in self.data[n.start_byte : n.end_byte] for n in region):
            return False
        env_text, env_words = self.compose_env(fields.get("environment"))
        words: list[Word] = []
        open_ = False
        texts: list[Text] = []  # strings split into words
        scalars: list[Scalar | None] = []  # the scalar of a list item (None: a word split from a string)
        for value in (entry_node, cmd_node):
            target = self.resolve(value)
            if target is None:
                continue
            if target.type in ("block_sequence", "flow_sequence"):
                for item in self.items(target):
                    sc = self.node_scalar(item)
                    if sc is None:
                        words.append(Word(None, Span(item.start_byte, item.end_byte), None, None, "", "yaml", whole=True))
                        scalars.append(None)
                        continue
                    a, b = sc.content_span if sc.style != "plain" else sc.span
                    t = self._interpolate(Text(sc.text, sc.spans))
                    words.append(Word(t.text, Span(a, b), owned(t.spans), QUOTE_OF_STYLE.get(sc.style), "", "yaml", whole=True))
                    scalars.append(sc)
            else:
                sc = self.node_scalar(target)
                if sc is None:
                    continue
                t = self._interpolate(Text(sc.text, sc.spans))
                split, had_hole = self._shellwords(t, sc)
                texts.append(t)
                open_ |= had_hole
                words += split
                scalars += [None] * len(split)
        if not words:
            return False
        match = match_launch(words)
        if match is None:
            return self.report(self.whole_command_items([w for w, sc in zip(words, scalars) if sc is not None],
                                                          "command"))
        self.consumed += [(n.start_byte, n.end_byte) for n in region]
        self.command_texts += [(t, True) for t in texts]
        self._config_mounts(fields.get("volumes"))
        if match.kind == "shell":
            script = words[match.end]
            if script.text is not None:
                self.shell(script, scalars[match.end], env_words, env_text)
            return True
        listed = [i for i, sc in enumerate(scalars) if sc is not None and i >= match.end]
        if listed:
            words, split = self.split_items(words, match.end, set(listed))
            self.scan.findings += split
        self.launch(match, words, env_text, open_)
        return True

    def compose_env(self, node: ts.Node | None) -> tuple[dict[str, str | None], dict[str, Word | None]]:
        text: dict[str, str | None] = {}
        words: dict[str, Word | None] = {}
        target = self.resolve(node)
        if target is None:
            return text, words
        entries: list[tuple[str, Text | None]] = []
        if target.type in ("block_mapping", "flow_mapping"):
            for key, value in self.fields(target).items():
                sc = self.node_scalar(value)
                entries.append((key, None if sc is None else self._interpolate(Text(sc.text, sc.spans))))
        elif target.type in ("block_sequence", "flow_sequence"):
            for item in self.items(target):
                sc = self.node_scalar(item)
                if sc is None:
                    continue
                name, eq, _ = sc.text.partition("=")
                value = Text(sc.text[len(name) + 1 :], sc.spans[len(name) + 1 :]) if eq else None
                entries.append((name, None if value is None else self._interpolate(value)))
        for name, value in entries:
            if value is None or self.in_hole(value.spans) is not None:
                text[name], words[name] = None, None
            else:
                text[name] = value.text
                sp = Span(value.spans[0][0], value.spans[-1][1]) if value.spans else Span(0, 0)
                words[name] = Word(value.text, sp, owned(value.spans))
        return text, words

    def _interpolate(self, t: Text) -> Text:
        """Compose interpolation: ``$$`` is a ``$``; ``$VAR`` / ``${VAR…}`` come from the host's
        environment or ``.env`` file, so their value is unknown (kept as written, range marked)."""
        text, spans = t.text, t.spans
        if "$" not in text:
            return t
        out: list[str] = []
        out_spans: CharSpans = []
        i, n = 0, len(text)
        while i < n:
            ch = text[i]
            if ch == "$" and i + 1 < n:
                nxt = text[i + 1]
                if nxt == "$":
                    out.append("$")
                    out_spans.append((spans[i][0], spans[i + 1][1]))
                    i += 2
                    continue
                end = None
                if nxt == "{":
                    depth, j = 0, i + 1
                    while j < n:
                        if text[j] == "{":
                            depth += 1
                        elif text[j] == "}":
                            depth -= 1
                            if depth == 0:
                                end = j + 1
                                break
                        j += 1
                else:
                    m = re.match(r"[A-Za-z_][A-Za-z0-9_]*", text[i + 1 :])
                    if m:
                        end = i + 1 + m.end()
                if end is not None:
                    self.hole(spans[i][0], spans[end - 1][1])
                    out.append(text[i:end])
                    out_spans.extend(spans[i:end])
                    i = end
                    continue
            out.append(ch)
            out_spans.append(spans[i])
            i += 1
        return Text("".join(out), out_spans)

    def _shellwords(self, t: Text, sc: Scalar) -> tuple[list[Word], bool]:
        """Split a compose command string like go-shellwords (what Compose uses): whitespace
        separates words, quotes group, ``\\`` escapes the next character (also inside double
        quotes; ``\\t``/``\\n`` become tab/newline); parsing stops at an unquoted ``;&|<>``.
        Returns the words and whether one of them holds an unknown interpolation."""
        words: list[Word] = []
        cur: list[str] = []
        cur_spans: CharSpans = []
        got = False  # a word is in progress (possibly empty: "")
        start = end = 0  # source range of the word in progress, quotes included
        single = double = escaped = False
        esc_start = 0
        quote = QUOTE_OF_STYLE.get(sc.style)
        had_hole = False

        def flush() -> None:
            nonlocal cur, cur_spans, got, had_hole
            if got:
                w = Word("".join(cur), Span(start, end), list(cur_spans), quote, "", "yaml")
                had_hole |= self.in_hole(cur_spans) is not None
                words.append(w)
            cur, cur_spans, got = [], [], False

        for ch, (s, e) in zip(t.text, t.spans):
            if not got and not escaped:
                start = s
            if escaped:
                escaped = False
                cur.append({"t": "\t", "n": "\n"}.get(ch, ch))
                cur_spans.append((esc_start, e))
                got, end = True, e
                continue
            if ch == "\\" and not single:
                escaped, esc_start = True, s
                continue
            if ch in " \t\r\n" and not (single or double):
                flush()
                continue
            if ch == '"' and not single:
                double = not double
                got, end = True, e
                continue
            if ch == "'" and not double:
                single = not single
                got, end = True, e
                continue
            if ch in ";&|<>" and not (single or double):
                break
            cur.append(ch)
            cur_spans.append((s, e))
            got, end = True, e
        flush()
        return words, had_hole

    def _config_mounts(self, node: ts.Node | None) -> None:
        """Compose bind mounts (``./serve.yaml:/etc/sglang/serve.yaml``) → host files for ``--config``."""
        target = self.resolve(node)
        if target is None or target.type not in ("block_sequence", "flow_sequence"):
            return
        for item in self.items(target):
            inner = self.resolve(item)
            if inner is None:
                continue
            if inner.type in ("block_mapping", "flow_mapping"):
                f = self.fields(inner)
                src, dst = self.scalar_text(f.get("source")), self.scalar_text(f.get("target"))
            else:
                parts = (self.scalar_text(item) or "").split(":")
                src, dst = (parts[0], parts[1]) if len(parts) >= 2 else (None, None)
            if src and dst and (src.startswith((".", "/", "~"))):
                self.mounts[dst] = src
