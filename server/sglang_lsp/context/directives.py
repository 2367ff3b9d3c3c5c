"""In-file directives: ``# sglang-lsp: …`` comments in a script or YAML file.

Two kinds (docs/configuration.md has the user's version):

* **settings** — ``# sglang-lsp: gpu=B200 sglang=0.5.23 model=/models/x model.is_moe=true``,
  on a line of their own. ``model=`` names the checkpoint directory whose ``config.json`` is read;
  ``model.<fact>=<JSON or word>`` declares one fact of a checkpoint that is not available
  locally (the names of ``kb_engine.MODEL_FACT_NAMES``).
* **suppressions** — ``# sglang-lsp: ignore[SGL101,SGL008] reason`` (exact codes) and
  ``# sglang-lsp: ignore-file[SGL101,SGL2] reason`` (codes or prefixes, anywhere in the file).

Where a comment applies ("right before"): an own-line comment belongs to the block of comment
lines it is in; the line right after that block is its *target*. With a blank line (or the end
of the file) after the block there is no target. Then:

* a settings directive applies to the launch commands that start on the target line, or, in
  YAML, start inside the block node that begins on the target line (a container item, an
  ``args:`` key …), or to the whole YAML document when the target is the document's first node
  or its ``---`` line; otherwise (no target, or nothing launches there) to the whole file;
* an own-line ``ignore[…]`` covers the target line, the lines of every launch command starting
  on it and, in YAML, the block node that begins there; a trailing ``ignore[…]`` (after code on
  the same line) covers that line only.

Comments are found line by line: an own-line comment is a line whose first non-blank character
is ``#``; a trailing one is `` #`` after code (a ``#`` that does not start a word is no comment
in shell, nor in YAML). Inside YAML block scalars these are the embedded script's own comments,
which is what a suppression there should be.

Everything here is pure: text in, directives and problems (byte ranges) out.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..base.document import Document

SETTING_KEYS = ("gpu", "sglang", "model")
KEY_ALIASES = {"sglang-version": "sglang", "sglang_version": "sglang", "model-path": "model"}
SUPPRESSION_KINDS = ("ignore", "ignore-file")

_OWN_LINE = re.compile(rb"^[ \t]*#+[ \t]*sglang-lsp:")
_TRAILING = re.compile(rb"[ \t]#+[ \t]*sglang-lsp:")
_MARKER = re.compile(rb"#+[ \t]*sglang-lsp:[ \t]*")
_COMMENT_LINE = re.compile(rb"^[ \t]*#")
_SUPPRESSION = re.compile(rb"(?P<kind>ignore-file|ignore)(?P<open>\[)(?P<codes>[^\]\n]*)(?P<close>\])?")
_CODE = re.compile(r"^SGL\d{3}$")
_CODE_PREFIX = re.compile(r"^SGL\d{0,3}$")
_ITEM = re.compile(rb"\S+")


@dataclass(frozen=True)
class Problem:
    """A directive the checker cannot use (reported as SGL040)."""

    start: int
    end: int
    message: str


@dataclass(frozen=True)
class Setting:
    key: str  # gpu | sglang | model | model.<fact>
    value: Any
    line: int  # 0-based line of the comment
    start: int  # byte range of the `key=value` item
    end: int
    scope: tuple[int, int] | None  # 0-based inclusive line range it applies to; None = the whole file


@dataclass
class Suppression:
    kind: str  # ignore | ignore-file
    codes: list[tuple[str, int, int]]  # (code, start, end) as written (upper-cased)
    reason: str
    line: int  # 0-based line of the comment
    comment_start: int  # byte range of the whole comment (from its `#` to the line end)
    comment_end: int
    own_line: bool
    lines: set[int] = field(default_factory=set)  # 0-based lines it covers (ignore only)
    used: set[str] = field(default_factory=set)  # codes (as written) that suppressed a finding

    def covers(self, code: str, line: int) -> str | None:
        """The written code that suppresses ``code`` at ``line``, or None."""
        if self.kind == "ignore" and line not in self.lines:
            return None
        for written, _, _ in self.codes:
            if code == written or (self.kind == "ignore-file" and code.startswith(written)):
                return written
        return None


@dataclass
class Directives:
    settings: list[Setting] = field(default_factory=list)
    suppressions: list[Suppression] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def file_value(self, key: str) -> Setting | None:
        """The last file-wide setting of ``key``."""
        found = [s for s in self.settings if s.key == key and s.scope is None]
        return found[-1] if found else None


# ---------------------------------------------------------------------------------------------


def _suggest(word: str, choices) -> str:
    import difflib

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean `{close[0]}`?" if close else ""


def _target(doc: Document, line: int) -> int | None:
    """The line right after the comment block holding ``line`` (None: blank line or end)."""
    n = doc.line_count
    i = line + 1
    while i < n:
        start, end = doc.line_span(i)
        raw = doc.data[start:end]
        if not raw.strip():
            return None
        if not _COMMENT_LINE.match(raw):
            return i
        i += 1
    return None


def _indent(raw: bytes) -> int:
    return len(raw) - len(raw.lstrip(b" \t"))


def yaml_node_end(doc: Document, line: int) -> int:
    """Last line of the YAML block node that starts on ``line``: the lines after it up to the
    next non-blank, non-comment line indented no deeper (a sibling, a parent, a document
    marker). A list item's content (``- name: x`` then ``  image: y``) is deeper than its dash."""
    start, end = doc.line_span(line)
    own = _indent(doc.data[start:end])
    last = line
    for i in range(line + 1, doc.line_count):
        s, e = doc.line_span(i)
        raw = doc.data[s:e]
        if not raw.strip() or _COMMENT_LINE.match(raw):
            continue
        if _indent(raw) <= own:
            break
        last = i
    return last


def yaml_documents(doc: Document) -> list[tuple[int, int, int | None, int | None]]:
    """YAML documents as (first line, last line, ``---`` line or None, first node line or None)."""
    out = []
    start, marker, first = 0, None, None
    for i in range(doc.line_count):
        s, e = doc.line_span(i)
        raw = doc.data[s:e]
        is_marker = raw.startswith(b"---") and (len(raw) == 3 or raw[3:4] in b" \t#")
        is_end = raw.startswith(b"...") and (len(raw) == 3 or raw[3:4] in b" \t#")
        if is_marker or is_end:
            if marker is not None or first is not None:
                out.append((start, i if is_end else i - 1, marker, first))
            if is_end:
                start, marker, first = i + 1, None, None
            else:
                inline = raw[3:].split(b"#", 1)[0].strip()  # `--- !tag` or `--- value`
                start, marker, first = i, i, (i if inline else None)
        elif first is None and raw.strip() and not _COMMENT_LINE.match(raw) and not raw.startswith(b"%"):
            first = i
    if marker is not None or first is not None:
        out.append((start, doc.line_count - 1, marker, first))
    return out


@dataclass(frozen=True)
class LaunchLines:
    """What the directives need of a launch command: its first and last line (0-based)."""

    first: int
    last: int


def _attached(doc: Document, target: int, launches: list[LaunchLines]) -> tuple[list[tuple[int, int]], bool]:
    """Line ranges an own-line comment before ``target`` reaches, and whether it reaches a launch
    or a YAML document (for settings: otherwise they apply to the whole file)."""
    if doc.language == "yaml":
        for first, last, marker, node in yaml_documents(doc):
            if target in (marker, node):
                return [(first, last)], True
        node_end = yaml_node_end(doc, target)
        ranges = [(target, node_end)]
        inside = [l for l in launches if target <= l.first <= node_end]
    else:
        ranges = [(target, target)]
        inside = [l for l in launches if l.first == target]
    ranges += [(l.first, l.last) for l in inside]
    return ranges, bool(inside)


def parse(doc: Document, launches: list[LaunchLines] | None = None, *, gpu_known=None, versions=None,
          model_facts=None, is_comment=None) -> Directives:
    """All directives of ``doc``. ``launches``: the launch commands found in it (for "right
    before"); ``gpu_known(name) -> bool``, ``versions`` (bundled sglang versions) and
    ``model_facts`` (declarable fact names) validate values; ``is_comment(byte) -> bool`` tells
    whether a ``#`` at that offset starts a comment (from the syntax tree: not inside a string
    or a heredoc); ``None`` skips that check."""
    launches = launches or []
    out = Directives()
    data = doc.data
    if b"sglang-lsp:" not in data:
        return out
    for line in range(doc.line_count):
        ls, le = doc.line_span(line)
        raw = data[ls:le]
        if b"sglang-lsp:" not in raw:
            continue
        own = _OWN_LINE.match(raw)
        m = own or _TRAILING.search(raw)
        if m is None:
            continue
        hash_at = ls + (raw.index(b"#") if own else m.start() + 1)
        if is_comment is not None and not is_comment(hash_at):
            continue
        marker = _MARKER.match(data, hash_at)
        body_start = marker.end()
        body = data[body_start:le]
        sup = _SUPPRESSION.match(body)
        if sup is not None:
            _suppression(doc, out, sup, body_start, line, hash_at, le, own is not None, launches)
            continue
        if re.match(rb"ignore(-file)?\b", body):
            out.problems.append(Problem(body_start, le, "a suppression needs its codes in brackets: "
                                        "`ignore[SGL101]` or `ignore-file[SGL101]`"))
            continue
        if own is None:
            out.problems.append(Problem(hash_at, le, "settings directives (`gpu=`, `sglang=`, `model=`) must be "
                                        "on a line of their own, before the command or at the top of the file"))
            continue
        if not body.strip():
            out.problems.append(Problem(hash_at, le, "empty `# sglang-lsp:` directive: give `key=value` settings "
                                        "or `ignore[CODES] reason`"))
            continue
        target = _target(doc, line)
        scope: tuple[int, int] | None = None
        if target is not None:
            ranges, reached = _attached(doc, target, launches)
            if reached:
                scope = (min(a for a, _ in ranges), max(b for _, b in ranges))
        for item in _ITEM.finditer(body):
            start, end = body_start + item.start(), body_start + item.end()
            _setting(out, item.group().decode("utf-8", "surrogateescape"), start, end, line, scope,
                     gpu_known, versions, model_facts)
    return out


def _setting(out: Directives, text: str, start: int, end: int, line: int, scope, gpu_known, versions,
             model_facts) -> None:
    key, eq, value = text.partition("=")
    if not eq:
        out.problems.append(Problem(start, end, f"`{text}` is not a `key=value` directive setting"
                                    f" (known: {', '.join(SETTING_KEYS)}, model.<fact>)"))
        return
    key = KEY_ALIASES.get(key, key)
    if value == "":
        out.problems.append(Problem(start, end, f"`{key}=` has no value"))
        return
    parsed: Any = value
    if key == "gpu":
        if gpu_known is not None and not gpu_known(value):
            from .facts import gpu_names

            out.problems.append(Problem(start, end, f"unknown GPU `{value}`{_suggest(value.upper(), gpu_names())}"
                                        f" (known: {', '.join(gpu_names())})"))
            return
    elif key == "sglang":
        if versions is not None:
            from ..catalog.catalog import resolve_version
            from ..base.findings import CheckError

            try:
                value = resolve_version(value)
            except CheckError as exc:
                out.problems.append(Problem(start, end, f"{exc}{_suggest(value.lstrip('v'), versions)}"))
                return
        parsed = value
    elif key == "model":
        parsed = value
    elif key.startswith("model."):
        fact = key[len("model."):]
        if model_facts is not None and fact not in model_facts:
            out.problems.append(Problem(start, end, f"unknown model fact `{fact}`{_suggest(fact, model_facts)}"))
            return
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = value
    else:
        out.problems.append(Problem(start, end, f"unknown directive setting `{key}`"
                                    f"{_suggest(key, SETTING_KEYS + tuple(SUPPRESSION_KINDS))}"
                                    f" (known: {', '.join(SETTING_KEYS)}, model.<fact>, ignore[…], ignore-file[…])"))
        return
    out.settings.append(Setting(key, parsed, line, start, end, scope))


def _suppression(doc: Document, out: Directives, m: re.Match, base: int, line: int, hash_at: int, line_end: int,
                 own_line: bool, launches: list[LaunchLines]) -> None:
    kind = m.group("kind").decode()
    if m.group("close") is None:
        out.problems.append(Problem(base + m.start(), line_end, f"`{kind}[` is not closed with `]`"))
        return
    codes = []
    codes_at = base + m.start("codes")
    for cm in re.finditer(rb"[^,\s]+", m.group("codes")):
        code = cm.group().decode("utf-8", "surrogateescape").upper()
        start, end = codes_at + cm.start(), codes_at + cm.end()
        pattern = _CODE_PREFIX if kind == "ignore-file" else _CODE
        if not pattern.match(code):
            what = "rule code or prefix (SGL1, SGL101 …)" if kind == "ignore-file" else "rule code (e.g. SGL101)"
            hint = "; use ignore-file[…] for a prefix" if kind == "ignore" and _CODE_PREFIX.match(code) else ""
            if code == "ALL":
                hint = "; name the codes to suppress"
            out.problems.append(Problem(start, end, f"`{code}` is not a {what}{hint}"))
            continue
        if not _known_code(code, prefix=kind == "ignore-file"):
            out.problems.append(Problem(start, end, f"no rule has the code `{code}`"))
            continue
        codes.append((code, start, end))
    if not codes:
        if not out.problems or out.problems[-1].start < codes_at:
            out.problems.append(Problem(base + m.start(), base + m.end(), f"`{kind}[]` names no rule code"))
        return
    reason = doc.data[base + m.end():line_end].decode("utf-8", "surrogateescape").strip()
    sup = Suppression(kind, codes, reason, line, hash_at, line_end, own_line)
    if kind == "ignore":
        if own_line:
            target = _target(doc, line)
            if target is not None:
                ranges, _ = _attached(doc, target, launches)
                for a, b in ranges:
                    sup.lines.update(range(a, b + 1))
        else:
            sup.lines.add(line)
    out.suppressions.append(sup)


def _known_code(code: str, prefix: bool) -> bool:
    from .. import rules

    codes = rules.registry()
    return code in codes or (prefix and any(c.startswith(code) for c in codes))
