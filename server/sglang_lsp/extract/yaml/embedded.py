"""Shell inside YAML anywhere else (SkyPilot ``run:``/``setup:``, CI ``run:``/``script:``, Helm
values …): a string whose text launches sglang is read as a shell script, with the
``env``/``envs``/``environment``/``variables`` mappings around it as its environment."""

from __future__ import annotations

import re

import tree_sitter as ts

from ...base.findings import Span
from ...base.invocation import Invocation, Word
from .scalars import Scalar, scalar
from .tree import LAUNCH_TEXT, QUOTE_OF_STYLE, owned


class EmbeddedShellReader:
    def embedded(self, node: ts.Node) -> bool:
        if self.is_consumed(node):
            return False
        up = self.parents(node)
        parent = up[0] if up else None
        if len(up) > 1 and up[1].type in ("block_mapping_pair", "flow_pair"):
            pair = up[1]
            if pair.child_by_field_name("key") is not None and pair.child_by_field_name("key").id == parent.id:
                return False  # a mapping key
        sc = scalar(self.data, node, self.indent(node))
        if sc is None or not LAUNCH_TEXT.search(sc.text):
            return False
        a, b = sc.content_span if sc.style != "plain" else sc.span
        word = Word(sc.text, Span(a, b), owned(sc.spans), QUOTE_OF_STYLE.get(sc.style), "", "yaml")
        env_text, env_words = self._inherited_env(node)
        before = len(self.scan.invocations)
        self.shell(word, sc, env_words, env_text)
        found = self.scan.invocations[before:]
        self._format_placeholders(sc, found)
        if sc.style in ("plain", "single", "double") and "\n" not in sc.text.strip():
            for inv in found:
                if not inv.args:
                    # a bare launcher in a one-line value (`server_command: python -m
                    # sglang.launch_server`): a command prefix the tool that reads it completes
                    inv.open = True
        return len(self.scan.invocations) > before

    def _format_placeholders(self, sc: Scalar, found: list[Invocation]) -> None:
        """A command string with ``{name}`` fields (``str.format`` / Jinja-less harness configs:
        ``server_cmd: python3 -m sglang.launch_server --attention-backend {backend}``) is a
        template of a command: each field is unknown, and the harness may add words to it."""
        if not found:
            return
        for m in _FORMAT_FIELD.finditer(sc.text):
            a, b = sc.spans[m.start()][0], sc.spans[m.end() - 1][1]
            self.hole(a, b)
            for inv in found:
                if inv.span.start <= a:  # a field after the launch's start may add words to it
                    inv.open = True

    def _inherited_env(self, node: ts.Node) -> tuple[dict[str, str | None], dict[str, Word | None]]:
        """``env``/``envs``/``environment``/``variables`` mappings of the enclosing mappings
        (GitHub Actions step/job/workflow, SkyPilot task, GitLab job); the nearest wins."""
        text: dict[str, str | None] = {}
        words: dict[str, Word | None] = {}
        for n in self.parents(node):
            if n.type in ("block_mapping", "flow_mapping"):
                f = self.fields(n)
                for key in _ENV_KEYS:
                    if key in f:
                        t, w = self.compose_env(f[key]) if key == "environment" else self._mapping_env(f[key])
                        for k in t:
                            text.setdefault(k, t[k])
                            words.setdefault(k, w[k])
        return text, words

    def _mapping_env(self, node: ts.Node | None) -> tuple[dict[str, str | None], dict[str, Word | None]]:
        text: dict[str, str | None] = {}
        words: dict[str, Word | None] = {}
        target = self.resolve(node)
        if target is None or target.type not in ("block_mapping", "flow_mapping"):
            return text, words
        for key, value in self.fields(target).items():
            sc = self.node_scalar(value)
            if sc is None or self.in_hole(sc.spans) is not None:
                text[key], words[key] = None, None
                continue
            text[key] = sc.text
            sp = Span(sc.spans[0][0], sc.spans[-1][1]) if sc.spans else Span(sc.span[0], sc.span[0])
            words[key] = Word(sc.text, sp, owned(sc.spans))
        return text, words


# a `str.format` field in a command string of a harness config (`{attention_backend}`); not `${VAR}`,
# not `{{ … }}`, not a shell brace expansion (`{a,b}`, `{1..3}`)
_FORMAT_FIELD = re.compile(r"(?<![{$\\])\{[A-Za-z_][A-Za-z0-9_]*\}(?!\})")


_ENV_KEYS = ("env", "envs", "environment", "variables")
