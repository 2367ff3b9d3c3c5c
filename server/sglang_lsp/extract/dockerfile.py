"""Dockerfiles and Containerfiles → sglang launches (tree-sitter-containerfile,
``dockerfile/instructions.scm``).

* ``RUN``, ``CMD`` and ``ENTRYPOINT`` in shell form run their text with ``/bin/sh -c``: it is read
  as a shell script (a comment line inside a `\\`-continued instruction is dropped first, as
  Docker drops it). ``RUN <<EOF … EOF`` runs the here-document's body.
* In exec form (a JSON array) each string is one argv word (origin ``list``); ``["bash", "-c",
  "…"]`` runs its script as shell.
* A stage's ``ENTRYPOINT`` and ``CMD`` make one command when the entrypoint is in exec form: the
  container runs ``ENTRYPOINT + CMD`` (``ENTRYPOINT ["/bin/bash", "-c"]`` with ``CMD ["python3 -m
  sglang.launch_server …"]`` runs the CMD's string as a script); a shell-form entrypoint ignores
  ``CMD``. Any other ``CMD``/``ENTRYPOINT`` of a stage (one a later one replaces) is read alone.
* Variables: ``ENV`` (with ``ARG`` values substituted into it, as Docker does at build time) holds
  for the commands of its stage and of stages built ``FROM`` it; ``ARG`` defaults hold for ``RUN``
  only (a build argument is not in the running container's environment). An ``ARG`` without a
  default, or a value Docker would take from elsewhere, is unknown.
* The base image of each stage (``FROM``, with global ``ARG`` defaults substituted) is what the
  placement reads for the sglang release and the GPU vendor (see :func:`stage_image`).
* Instructions before any ``FROM`` (a fragment: a doc's ``dockerfile`` block showing a ``CMD``)
  make a stage of an unknown image; the ``ARG`` defaults above them hold for its ``RUN`` lines.
"""

from __future__ import annotations

import functools
import re

import tree_sitter as ts

from ..base import queries
from ..base.findings import Span
from ..base.invocation import CharRun, Invocation, Word, match_launch
from .notebook import json_chars
from .shell.script import extract as extract_shell
from .shell.source import Source

_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")
_MENTIONS = re.compile(rb"sglang")


class _Stage:
    __slots__ = ("start", "image", "alias", "build_env", "run_env", "entrypoint", "cmd", "own_entrypoint", "others")

    def __init__(self, start: int, image: tuple[str, Span] | None, alias: str | None, parent: _Stage | None):
        self.start = start
        self.image = image  # (reference with ARGs substituted, its range) or None when unknown
        self.alias = alias
        self.build_env: dict[str, Word | None] = dict(parent.run_env) if parent else {}
        self.run_env: dict[str, Word | None] = dict(parent.run_env) if parent else {}
        self.entrypoint = parent.entrypoint if parent else None  # (node, kind)
        self.cmd = parent.cmd if parent else None
        self.own_entrypoint = False
        self.others: list[tuple[ts.Node, str, dict]] = []  # CMD/ENTRYPOINT a later one replaces


def stage_image(data: bytes, offset: int) -> tuple[str, Span] | None:
    """The base image of the stage whose instructions hold ``offset`` (ARGs substituted), with the
    range of its reference; ``None`` when unknown."""
    found = None
    for start, image in _stage_images(data):
        if start <= offset:
            found = image
    return found


# the stage images of the last texts whose launches were read (the placement asks for them once per
# launch, right after): text → ((stage start, image), …)
_STAGE_IMAGES: dict[bytes, tuple[tuple[int, tuple[str, Span] | None], ...]] = {}


def _stage_images(data: bytes) -> tuple[tuple[int, tuple[str, Span] | None], ...]:
    images = _STAGE_IMAGES.get(data)
    if images is None:
        images = _remember_stages(data, _Reader(data, None).stages())
    return images


def _remember_stages(data: bytes, stages: list[_Stage]) -> tuple[tuple[int, tuple[str, Span] | None], ...]:
    images = tuple((stage.start, stage.image) for stage in stages)
    while len(_STAGE_IMAGES) >= 2:
        _STAGE_IMAGES.pop(next(iter(_STAGE_IMAGES)), None)
    _STAGE_IMAGES[data] = images
    return images


@functools.lru_cache(maxsize=2)
def _parse(data: bytes) -> ts.Tree:
    # the launches and the stages of one text are read from one parse (trees are not changed)
    return queries.parser("dockerfile").parse(data)


def extract_dockerfile(data: bytes, base_dir: str | None = None) -> list[Invocation]:
    """The launches of a Dockerfile's bytes, in order."""
    if not _MENTIONS.search(data):
        return []
    return _Reader(data, base_dir).launches()


class _Reader:
    def __init__(self, data: bytes, base_dir: str | None):
        self.data = data
        self.base_dir = base_dir
        self.tree = _parse(data)
        self.global_args: dict[str, Word | None] = {}
        self.found: list[Invocation] = []

    def text(self, node: ts.Node) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8", "surrogateescape")

    def _events(self) -> list[tuple[int, str, dict]]:
        events: dict[int, tuple[int, str, dict]] = {}
        for _, caps in queries.matches("dockerfile", "instructions", self.tree.root_node):
            for name in ("from", "variables", "command"):
                if name in caps:
                    node = caps[name][0]
                    events.setdefault(node.id, (node.start_byte, name, {"node": node}))[2].update(caps)
            for name in ("command.shell", "command.exec", "command.heredoc"):
                if name in caps:
                    part = caps[name][0]
                    owner = part.parent if name != "command.heredoc" else part.parent.parent
                    events.setdefault(owner.id, (owner.start_byte, "command", {"node": owner}))[2][name] = caps[name]
        return sorted(events.values(), key=lambda e: e[0])

    def stages(self) -> list[_Stage]:
        return self._walk(read_commands=False)

    def launches(self) -> list[Invocation]:
        _remember_stages(self.data, self._walk(read_commands=True))
        return sorted(self.found, key=lambda inv: inv.span.start)

    def _walk(self, read_commands: bool) -> list[_Stage]:
        stages: list[_Stage] = []
        stage: _Stage | None = None
        for _, kind, caps in self._events():
            node = caps["node"]
            if kind == "from":
                if stage is not None and read_commands:
                    self._finish(stage)
                image = caps["from.image"][0]
                ref = self.expand(image, self.global_args, keep_unknown=False)
                alias = self.text(caps["from.alias"][0]).lower() if "from.alias" in caps else None
                parent = next((s for s in reversed(stages) if s.alias and ref and s.alias == ref[0].lower()), None)
                image = parent.image if parent is not None else (ref[0], ref[1]) if ref else None
                stage = _Stage(node.start_byte, image, alias, parent)
                stages.append(stage)
            else:
                if stage is None and (kind == "command" or node.type == "env_instruction"):
                    stage = self._fragment_stage(node.start_byte)  # no FROM before it
                    stages.append(stage)
                if kind == "variables":
                    self.variables(node, stage)
                elif read_commands:
                    self.command(node, caps, stage)
        if stage is not None and read_commands:
            self._finish(stage)
        return stages

    def _fragment_stage(self, start: int) -> _Stage:
        """The stage of instructions written before any ``FROM``: a fragment (a doc's code block,
        a Dockerfile part that is concatenated to a base one) whose image is unknown; the
        ``ARG`` defaults above hold for its ``RUN`` lines."""
        stage = _Stage(start, None, None, None)
        stage.build_env.update(self.global_args)
        return stage

    # --- variables -----------------------------------------------------------------------------

    def variables(self, node: ts.Node, stage: _Stage | None) -> None:
        is_arg = node.type == "arg_instruction"
        for pair in node.named_children:
            if pair.type not in ("arg_pair", "env_pair"):
                continue
            name_node = pair.child_by_field_name("name")
            value = pair.child_by_field_name("default" if is_arg else "value")
            if name_node is None:
                continue
            name = self.text(name_node)
            if stage is None:  # a global ARG (usable in FROM, and by an ARG of the same name in a stage)
                self.global_args[name] = self.value(value, {}) if value is not None else None
                continue
            if is_arg:
                word = self.value(value, stage.build_env) if value is not None else self.global_args.get(name)
                stage.build_env[name] = word
            else:
                word = self.value(value, stage.build_env) if value is not None else None
                stage.build_env[name] = word
                stage.run_env[name] = word

    def value(self, node: ts.Node, env: dict[str, Word | None]) -> Word | None:
        """The value Docker gives a variable (quotes removed, ``$X`` / ``${X:-d}`` substituted)."""
        text = self.data[node.start_byte:node.end_byte].decode("utf-8", "surrogateescape")
        if node.type in ("double_quoted_string", "single_quoted_string") and len(text) >= 2:
            found = self.expand(node, env, inner=True, keep_unknown=False, substitute=node.type != "single_quoted_string")
        else:
            found = self.expand(node, env, keep_unknown=False)
        if found is None:
            return None
        text, span, spans = found[0], found[1], found[2]
        return Word(text, span, spans)

    def expand(self, node: ts.Node, env: dict[str, Word | None], inner: bool = False, keep_unknown: bool = True,
               substitute: bool = True):
        """The text of ``node`` with variables substituted from ``env`` (``inner``: without its
        quotes): (text, range, character ranges); ``None`` when a variable is unknown."""
        a, b = node.start_byte, node.end_byte
        if inner:
            a, b = a + 1, b - 1
        raw = self.data[a:b].decode("utf-8", "surrogateescape")
        if len(raw) == b - a and (not substitute or "$" not in raw):  # one byte a character, as written
            return raw, Span(a, b), CharRun(a, b - a)
        spans: list[tuple[int, int]] = []
        out = []
        pos = a
        char_pos = []
        for ch in raw:
            n = len(ch.encode("utf-8", "surrogateescape"))
            char_pos.append((pos, pos + n))
            pos += n
        i = 0
        for m in (_VARIABLE.finditer(raw) if substitute else ()):
            for k in range(i, m.start()):
                out.append(raw[k])
                spans.append(char_pos[k])
            name = m.group(1) or m.group(4)
            op, default = m.group(2), m.group(3)
            word = env.get(name)
            here = (char_pos[m.start()][0], char_pos[m.end() - 1][1])
            if word is None or word.text is None:
                if op in (":-", "-") and default is not None and "$" not in default:
                    value = default
                elif op in (":+", "+"):
                    value = ""
                else:
                    return None
            else:
                value = word.text if op not in (":+", "+") else (default or "")
            out.append(value)
            spans += [here] * len(value)
            i = m.end()
        for k in range(i, len(raw)):
            out.append(raw[k])
            spans.append(char_pos[k])
        return "".join(out), Span(a, b), spans

    # --- commands ------------------------------------------------------------------------------

    def command(self, node: ts.Node, caps: dict, stage: _Stage) -> None:
        keyword = node.type
        if keyword == "run_instruction":
            self.read(node, caps, stage.build_env, None)
            return
        slot = "entrypoint" if keyword == "entrypoint_instruction" else "cmd"
        previous = getattr(stage, slot)
        if previous is not None and previous[0].start_byte >= stage.start:
            stage.others.append(previous)  # replaced by this one
        setattr(stage, slot, (node, caps, stage.run_env))
        if slot == "entrypoint":
            stage.own_entrypoint = True
            if stage.cmd is not None and stage.cmd[0].start_byte < stage.start:
                stage.cmd = None  # an ENTRYPOINT resets the CMD a stage inherits

    def _finish(self, stage: _Stage) -> None:
        for node, caps, env in stage.others:
            if node.start_byte >= stage.start:
                self.read(node, caps, env, None)
        entry, cmd = stage.entrypoint, stage.cmd
        if entry is not None and cmd is not None and "command.exec" in entry[1] \
                and (entry[0].start_byte >= stage.start or cmd[0].start_byte >= stage.start):
            self.read(cmd[0], cmd[1], cmd[2], entry)
        else:
            for item in (entry, cmd):
                if item is not None and item[0].start_byte >= stage.start:
                    self.read(item[0], item[1], item[2], None)

    def read(self, node: ts.Node, caps: dict, env: dict[str, Word | None], entry) -> None:
        """The launches of one instruction (``entry``: the exec-form ENTRYPOINT its words follow)."""
        prefix: list[Word] = self.exec_words(entry[1]["command.exec"][0]) if entry is not None else []
        if entry is not None and not (_MENTIONS.search(self.data, node.start_byte, node.end_byte)
                                      or _MENTIONS.search(self.data, entry[0].start_byte, entry[0].end_byte)):
            return
        if entry is None and not _MENTIONS.search(self.data, node.start_byte, node.end_byte):
            return
        if "command.exec" in caps:
            words = prefix + self.exec_words(caps["command.exec"][0])
            span = Span(min(w.span.start for w in words) if words else node.start_byte, node.end_byte)
            self.argv(words, env, span)
        elif "command.heredoc" in caps:
            body = caps["command.heredoc"][0]
            self.script(self.script_word(body, ()), env)
        elif "command.shell" in caps:
            shell = caps["command.shell"][0]
            comments = [c for c in shell.children if c.type == "comment"]
            script = self.script_word(shell, comments)
            if prefix:
                at = Span(shell.start_byte, shell.start_byte)
                self.argv(prefix + [Word("/bin/sh", at, None, None, "", "list"), Word("-c", at, None, None, "", "list"),
                                    script], env, Span(prefix[0].span.start, node.end_byte))
            else:
                self.script(script, env)

    def exec_words(self, array: ts.Node) -> list[Word]:
        words = []
        for item in array.named_children:
            if item.type != "json_string":
                continue
            raw = self.data[item.start_byte + 1:item.end_byte - 1]
            if raw.isascii() and b"\\" not in raw:  # each character its own byte
                text, spans = raw.decode("ascii"), CharRun(item.start_byte + 1, len(raw))
            else:
                text, spans = json_chars(raw, item.start_byte + 1)
            span = Span(item.start_byte + 1, item.end_byte - 1)
            words.append(Word(text, span, spans, '"', "", "list", whole=True))
        return words

    def script_word(self, node: ts.Node, skip: list[ts.Node] | tuple) -> Word:
        """The text of a shell-form command (the lines of ``skip`` left out) with each character's range."""
        chars: list[str] = []
        spans: list[tuple[int, int]] = []
        pos = node.start_byte
        cuts = [(c.start_byte, c.end_byte) for c in skip] + [(node.end_byte, node.end_byte)]
        for cut_start, cut_end in cuts:
            # the comment's line, with its indentation
            line_start = self.data.rfind(b"\n", pos, cut_start) + 1 if cut_start < node.end_byte else cut_start
            stop = max(pos, line_start)
            for ch in self.data[pos:stop].decode("utf-8", "surrogateescape"):
                n = len(ch.encode("utf-8", "surrogateescape"))
                chars.append(ch)
                spans.append((pos, pos + n))
                pos += n
            pos = max(pos, cut_end)
        return Word("".join(chars), Span(node.start_byte, node.end_byte), spans)

    def script(self, script: Word, env: dict[str, Word | None]) -> None:
        if not script.text:
            return
        for inv in extract_shell(Source.from_word(script), self.base_dir, 1, env).invocations:
            inv.nested = True
            self.found.append(inv)

    def argv(self, words: list[Word], env: dict[str, Word | None], span: Span) -> None:
        match = match_launch(words)
        if match is None:
            return
        if match.kind == "shell":
            self.script(words[match.end], env)
            return
        self.found.append(Invocation(match.kind, words[match.start:match.end], words[match.end:], span,
                                     env={k: (v.text if v is not None else None) for k, v in env.items()},
                                     base_dir=self.base_dir))
