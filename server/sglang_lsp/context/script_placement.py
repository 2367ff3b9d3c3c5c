"""Placements of launches in shell scripts: ``CUDA_VISIBLE_DEVICES`` before the launch, a
``docker run`` wrapper (image, ``--gpus``, ``-p``, ``--shm-size``/``--ipc``), Slurm ``#SBATCH``
GPU requests; and how what a previous check read is carried over an edit elsewhere."""

from __future__ import annotations

import bisect
import functools
import re
import shlex
from collections.abc import Callable
from typing import Any

from .. import logger
from ..base.document import Document
from ..base.findings import Span
from ..base.invocation import Invocation
from .hardware_names import IMAGE_REFERENCE
from .placement import FileScalar, Matches, Mover, Placement, VISIBLE_DEVICE_VARIABLES, same_moved

log = logger(__name__)


def shell_view(doc: Document) -> ShellView:
    """The view of a script, built once per checked document (every launch of it asks)."""
    view = doc.derived.get("shell_view")
    if view is None:
        view = doc.derived["shell_view"] = ShellView(doc)
    return view


_GRES = re.compile(r"^#SBATCH[ \t]+--(?P<option>gres[= ]gpu|gpus(?:-per-node|-per-task)?[= ])(?::|)"
                   r"(?:(?P<type>[A-Za-z][\w-]*):)?(?P<count>\d+)[ \t]*(?:#.*)?$", re.MULTILINE)


_IMAGE_BYTES = re.compile(rb"sglang[\w.-]*[:@]")


_VARIABLE_WORD = re.compile(r"\$(?:\{(\w+)\}|(\w+))")


def carry_matches(found: Matches, old: Document, new: Document, mover: Mover,
                  search: Callable[[bytes, int, int], Matches]) -> Matches | None:
    """``found``, the matches of ``search`` in ``old`` (``search(data, lo, hi)``: those in
    ``[lo, hi)``), in ``new``, or ``None`` when they differ there. For a search whose matches
    each lie on one line and read nothing outside it but the line break before it: the lines
    the edit touched are searched again, the matches on the other lines moved."""
    data = old.data
    lo = data.rfind(b"\n", 0, mover.start) + 1
    hi = data.find(b"\n", mover.stop)
    hi = len(data) if hi < 0 else hi
    ends, spans = found
    i, j = bisect.bisect_right(ends, lo), bisect.bisect_right(ends, hi)  # the matches in [lo, hi)
    now_ends, now_spans = search(new.data, lo, hi + mover.delta)
    if not same_moved(mover, ends[i:j], now_ends) or not same_moved(mover, spans[i:j], now_spans):
        return None
    if not mover.delta:
        return found
    delta = mover.delta  # (the matches after those lines start after the stretch: they move)
    return (ends[:i] + now_ends + [e + delta for e in ends[j:]],
            spans[:i] + now_spans + [Span(x.start + delta, x.end + delta, x.path) for x in spans[j:]])


def carry_placements(old: Document, new: Document, mover: Mover) -> bool:
    """Give the view of ``new`` — an edited version of the script ``old``, the same text and
    tree outside an edited stretch of whole statements that assigns no variable — the
    placements ``old``'s view read, moved (the language server's incremental re-check). Returns
    whether it did: only when every part of the whole script a placement reads (see
    :class:`ShellView`) is the same, moved, in ``new``; the placements of the launches in the
    stretch are not carried (:meth:`Mover.moved_start`)."""
    view = old.derived.get("shell_view")
    if view is None or "shell_view" in new.derived or old.language != "shell" or new.language != "shell":
        return False
    fresh = shell_view(new)
    if not fresh.reads_the_same(view, mover):
        return False
    if not mover.delta:  # the same parts read, at the same offsets: the same placements
        fresh._memo = {key: where for key, where in view._memo.items() if mover.moved_start(key[0]) is not None}
        return True
    for (start, env), where in view._memo.items():
        at = mover.moved_start(start)
        if at is not None:
            moved = where.moved(mover.moved_span)
            if moved is not None:
                fresh._memo[(at, env)] = moved
    return True


class ShellView:
    """What a script says around its launches. The placement of a launch reads:

    * the words of its own command before the launch (``docker run …``, ``srun
      --container-image=…``), found in the tree: its command's own text;
    * the script's ``#SBATCH`` GPU lines (:attr:`gres`, :attr:`per_node`);
    * the last ``NAME=value`` written before it, for a ``$NAME`` image word and for a
      ``CUDA_VISIBLE_DEVICES``-like variable of its prefix (:attr:`_assignments`, by name);
    * its prefix's variables (``inv.env``) and where it starts (the memo's key).

    :func:`carry_placements` relies on this list: keep it up to date."""

    def __init__(self, doc: Document):
        self.doc = doc
        self.tree: Any = None
        self._outermost: tuple[list[int], list[Any]] | None = None  # of self.tree: see _outer_command
        self.gres: list[tuple[str | None, FileScalar]] = []
        self.per_node: tuple[FileScalar, str] | None = None
        self._memo: dict[tuple, Placement] = {}  # (launch start, its visible-devices prefixes) → placement
        self._assignments: dict[str, tuple[list[int], list[Span]]] = {}  # NAME → (match ends, value ranges)
        # (the anchored pattern is tried at every line start: most scripts have no `#SBATCH` at all)
        for m in _GRES.finditer(doc.text) if "#SBATCH" in doc.text else ():
            a = len(doc.text[: m.start("count")].encode("utf-8", "surrogateescape"))
            span = Span(a, a + len(m.group("count")))
            self.gres.append((m.group("type"), FileScalar(m.group("count"), span)))
            option = re.split(r"[= ]", m.group("option"))[0]
            if option in ("gres", "gpus-per-node"):
                shown = m.group(0).split(None, 1)[1].split("#", 1)[0].strip()
                self.per_node = (FileScalar(m.group("count"), span), shown)

    def reads_the_same(self, other: ShellView, mover: Mover) -> bool:
        """Whether the parts of the whole script a placement reads are in this view what they
        are in ``other`` (the view of an earlier version of the script), moved."""
        if [(typ, v.text) for typ, v in other.gres] != [(typ, v.text) for typ, v in self.gres] \
                or not same_moved(mover, [v.span for _, v in other.gres], [v.span for _, v in self.gres]):
            return False
        if (other.per_node is None) != (self.per_node is None) or (other.per_node is not None and (
                (other.per_node[0].text, other.per_node[1]) != (self.per_node[0].text, self.per_node[1])
                or not same_moved(mover, [other.per_node[0].span], [self.per_node[0].span]))):
            return False
        for name, found in other._assignments.items():
            now = carry_matches(found, other.doc, self.doc, mover, functools.partial(_assignments, name))
            if now is None:
                return False
            self._assignments[name] = now
        return True

    def placement(self, inv: Invocation, tree: Any = None) -> Placement:
        """What surrounds the launch starting at ``inv``'s first program word; read once per
        launch (the inference and the deployment checks both ask), shared: callers copy
        before changing it."""
        start = inv.program[0].span.start
        env = inv.env
        key = (start, (env.get(VISIBLE_DEVICE_VARIABLES[0]), env.get(VISIBLE_DEVICE_VARIABLES[1]), env.get(VISIBLE_DEVICE_VARIABLES[2])) if env else _NO_ENV)
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = self._placement(inv, start, tree)
        return hit

    def _placement(self, inv: Invocation, start: int, tree: Any) -> Placement:
        out = Placement("script")
        out.gres = list(self.gres)
        if self.tree is None:
            if tree is None and self._needs_tree():
                from ..base.queries import parser

                tree = parser("bash").parse(self.doc.data)
            self.tree = tree
        command = self._outer_command(start) if self.tree is not None else None
        if command is not None:
            words = self.doc.data[command.start_byte:start].decode("utf-8", "surrogateescape")
            offset = command.start_byte
            if re.match(r"\s*(?:\S*/)?(?:docker|podman)\s+(?:container\s+)?run\s", words):
                out.containerized = True
                pm = re.search(r"\s(-p|--publish)[= ]\S", words)
                if pm is not None and not re.search(r"\s--(?:network|net)[= ]", words):
                    a = offset + len(words[: pm.start(1)].encode("utf-8", "surrogateescape"))
                    out.published = Span(a, a + len(pm.group(1)))
                if re.search(r"\s--(?:ipc[= ]host|shm-size)\b", words):
                    out.shm = True
                elif not re.search(r"\s--ipc[= ]|\$", words):
                    out.shm = False
                gpus = self._docker_gpus(command, start)
                count = _docker_gpu_count(gpus[0]) if gpus else None
                if gpus is not None and count is not None:
                    value = FileScalar(str(count), gpus[2])
                    out.gpu_limits = out.gpu_values = [(f"docker run --gpus {gpus[1]}", value)]
            for m in re.finditer(r"\S+", words):
                token, a = m.group(), offset + len(words[: m.start()].encode("utf-8", "surrogateescape"))
                if token.startswith("--container-image="):  # srun with pyxis/enroot
                    token, a = token[len("--container-image="):], a + len("--container-image=")
                elif token.startswith("-"):
                    continue
                image = self._image_word(token, a, start)
                if image is not None:
                    out.image = image
        if out.containerized:
            return out
        if self.per_node is not None:
            out.gres_per_node, out.gres_option = self.per_node
        for name in VISIBLE_DEVICE_VARIABLES:
            if name in inv.env and inv.env[name] is not None:
                span = self._assignment_span(name, start)
                if span is not None:
                    out.visible_devices, out.visible_name = FileScalar(inv.env[name] or "", span, None), name
                    break
        return out

    def _outer_command(self, start: int) -> Any:
        """The outermost ``command`` node around byte ``start``. The outermost commands of the
        tree do not overlap; they are found once, walking down from the root without entering a
        command, and looked up by position (a walk up ``.parent`` from each launch, which
        tree-sitter answers by searching down from the root, cost the cube of the depth: 1,000
        launches joined by ``&&``, each one level deeper, took 15 s)."""
        if self._outermost is None:
            found, stack = [], [self.tree.root_node]
            while stack:
                node = stack.pop()
                if node.type == "command":
                    found.append(node)
                else:
                    stack.extend(node.children)
            found.sort(key=lambda n: n.start_byte)
            self._outermost = ([n.start_byte for n in found], found)
        starts, commands = self._outermost
        i = bisect.bisect_right(starts, start) - 1
        if i >= 0 and commands[i].end_byte > start:
            return commands[i]
        return None

    def _needs_tree(self) -> bool:
        """Whether a launch's command may say more than its own words: a script that names an
        sglang image or runs docker (asked only when the caller has no tree at hand)."""
        data = self.doc.data
        return bool(_IMAGE_BYTES.search(data)) or b"docker" in data or b"podman" in data

    def _image_word(self, token: str, a: int, before: int) -> FileScalar | None:
        """``token`` (at byte ``a``) as an sglang image reference: written as is, quoted, or a
        `$NAME` whose last plain assignment before byte ``before`` names one (`IMG=lmsysorg/…`)."""
        if "sglang" not in token and "$" not in token:
            return None  # (most words: neither an sglang image nor a variable that may hold one)
        if len(token) > 1 and token[0] == token[-1] and token[0] in "'\"":
            token, a = token[1:-1], a + 1
        name = _VARIABLE_WORD.fullmatch(token)
        if name is not None:
            span = self._assignment_span(name.group(1) or name.group(2), before)
            if span is None:
                return None
            token, a = self.doc.data[span.start:span.end].decode("utf-8", "surrogateescape"), span.start
        reference = token.removeprefix("docker://").replace("#", "/", 1)  # pyxis writes registry#image
        if IMAGE_REFERENCE.match(reference) and ("/" in reference or ":" in reference):
            return FileScalar(reference, Span(a, a + len(token.encode("utf-8", "surrogateescape"))))
        return None

    def _docker_gpus(self, command: Any, before: int) -> tuple[str, str, Span] | None:
        """`--gpus` among the words of ``command`` before byte ``before``: value, shown text, span.

        The value is what the shell hands docker (`'"device=0, 1"'` → `"device=0, 1"`); the shown
        text and the span are the word without its quotes (`device=0, 1`). ``None`` when absent
        or not a literal.
        """
        data = self.doc.data
        args = []  # the command's words before the launch (the launch's own follow: not visited)
        cursor = command.walk()
        more = cursor.goto_first_child()
        while more and (node := cursor.node).end_byte <= before:
            if node.type != "variable_assignment":
                args.append(node)
            more = cursor.goto_next_sibling()
        for i, node in enumerate(args):
            raw = data[node.start_byte:node.end_byte].decode("utf-8", "surrogateescape")
            if raw == "--gpus" and i + 1 < len(args):
                node = args[i + 1]
                raw, lead = data[node.start_byte:node.end_byte].decode("utf-8", "surrogateescape"), 0
            elif raw.startswith("--gpus="):
                lead = len("--gpus=")
            else:
                continue
            word = _shell_literal(raw)
            if word is None:
                return None
            value = word[lead:]
            inner = raw[lead:]
            strip = len(inner) - len(inner.lstrip("'\""))
            inner = inner.strip("'\"")
            a = node.start_byte + len(raw[: lead + strip].encode("utf-8", "surrogateescape"))
            return value, inner, Span(a, a + len(inner.encode("utf-8", "surrogateescape")))
        return None

    def _assignment_span(self, name: str, before: int) -> Span | None:
        """The value range of the last `NAME=value` written before byte ``before`` (the script's
        assignments of NAME are found in one pass: each launch asks)."""
        ends, spans = self._assignments_of(name)
        k = bisect.bisect_right(ends, before)
        return spans[k - 1] if k else None

    def _assignments_of(self, name: str) -> Matches:
        found = self._assignments.get(name)
        if found is None:
            found = self._assignments[name] = _assignments(name, self.doc.data, 0, len(self.doc.data))
        return found


def _assignments(name: str, data: bytes, lo: int, hi: int) -> Matches:
    """`NAME=value` in ``data[lo:hi]``: at the start of the script or after a blank or `;`
    (`export NAME=` included); the regex looks for the name itself, the character before it is
    checked here. (Each match lies on one line: see :func:`carry_matches`.)"""
    pattern = re.compile(re.escape(name.encode()) + rb"=([\"']?)([^\s\"';]*)\1")
    matches = [m for m in pattern.finditer(data, lo, hi) if m.start() == 0 or data[m.start() - 1] in _BEFORE_NAME]
    return [m.end() for m in matches], [Span(m.start(2), m.end(2)) for m in matches]


_NO_ENV = (None,) * len(VISIBLE_DEVICE_VARIABLES)


_BEFORE_NAME = frozenset(b" \t\n\r\x0b\x0c;")  # what may precede an assignment's name (regex `[\s;]`)


def _shell_literal(raw: str) -> str | None:
    """The single word the shell makes of ``raw``, or ``None`` when it expands anything."""
    if "$" in raw or "`" in raw:
        return None
    try:
        words = shlex.split(raw)
    except ValueError:
        return None
    return words[0] if len(words) == 1 else None


def _docker_gpu_count(value: str) -> int | None:
    """GPUs of `docker run --gpus VALUE`: a number, `count=N`, or `device=0,1` (`all`: not known).

    docker reads VALUE as one CSV record (docker/cli `opts/gpus.go`), so a device list with
    commas has to be quoted inside it: `'"device=0,1"'`.
    """
    import csv

    try:
        fields = next(csv.reader([value]), [])
    except csv.Error:
        return None
    counts: list[int] = []
    devices: list[int] = []
    for item in fields:
        key, eq, val = item.partition("=")
        if not eq and key.strip().isdigit():
            counts.append(int(key))
        elif key == "count" and val.strip().isdigit():
            counts.append(int(val))
        elif key == "device":
            devices.append(len([d for d in val.split(",") if d.strip()]))
    if len(counts) + len(devices) != 1:
        return None  # `all`, nothing, or a request docker itself refuses (`device=0,1` unquoted)
    return (counts or devices)[0]
