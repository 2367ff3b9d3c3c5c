"""Python files (and notebook code cells) → sglang launches (tree-sitter-python,
``python/launches.scm``).

What is read as a launch:

* **An argv list**: a list literal whose elements hold ``-m``, ``sglang.launch_server`` (or
  ``sglang``, ``serve``), wherever it is written (``subprocess.Popen([...])``, ``cmd = [...]``,
  ``cmd.extend([...])``). Each element is one argv word (origin ``list``): a string literal is
  known, ``sys.executable`` is the interpreter, a name bound once to a string (or to one of two
  strings) is that string, anything else is unknown. A list that is later extended, added to, or
  holds ``*splat`` elements is open (it may get more words); ``name.extend([...])`` /
  ``name.append(...)`` / ``name += [...]`` right in the block that built it add their words.
* **A command string**: a string (f-strings and implicitly concatenated strings included; a list
  of strings whose first one is a whole command, as ``" ".join`` makes one) whose text launches
  sglang, read as shell (``os.system``, ``shell=True``, ``bash -c``, a script written to a file).
  An f-string field ``{expr}`` and a ``str.format`` field ``{name}`` are unknown text.
* **sglang's Python API**: ``sglang.Engine(...)`` / ``sgl.Engine(...)`` / ``ServerArgs(...)`` (the
  names imported from sglang, or reached through ``sgl.``/``sglang.``): each keyword is a
  ``ServerArgs`` field, given to the server as its flag (origin ``kwarg``); ``**{…}``,
  ``**dict(…)`` and ``**name`` with ``name`` a dict literal (plus ``name["k"] = v`` after it) are
  read the same; a keyword that is no field is SGL001 (sglang raises ``TypeError``). A value that
  is not a literal is unknown. ``Engine(server_args=…)`` ignores the other keywords: not read.
* **sglang's test helper** ``popen_launch_server(model, base_url, other_args=[…])``: ``--model-path``
  and the ``other_args`` list (a literal, or a name bound to one).
"""

from __future__ import annotations

import difflib
import json
import re

import tree_sitter as ts

from ..base import queries
from ..base.findings import Applicability, Edit, Finding, Fix, Record, Span
from ..base.invocation import (ROUTER_MODULES, SERVER_MODULES, Invocation, LaunchMatch, Word,
                               match_launch)
from ..catalog import release_findings
from ..catalog.catalog import Catalog
from ..catalog.server_fields import field_names, field_options
from ..rules import finding
from .docs import PLACEHOLDER_TEXT
from .python_literals import UNKNOWN, PyText, literal, string_text
from .shell.expansion import HOLE_PREFIX
from .shell.scripts import forget_holes
from .shell.script import extract as extract_shell
from .shell.source import Source

# (``dynamo.sglang``: NVIDIA Dynamo's sglang worker, whose argv is mostly sglang's)
_LAUNCH_TEXT = re.compile(r"sglang(?:\.launch_server|_router\.launch_(?:server|router)|[ \t]+serve\b)|dynamo\.sglang\b")
# a hole that starts a command and is followed by `-m sglang…` stands for the interpreter
_INTERPRETER_AFTER = re.compile(r"[ \t]+-m[ \t]*sglang")
_COMMAND_START = re.compile(r"(?:\A|[\n;&|(]|&&|\|\|)[ \t]*\Z")
_SUBPROCESS = frozenset({"run", "Popen", "call", "check_call", "check_output", "system", "popen", "split",
                         "create_subprocess_exec", "create_subprocess_shell"})
# sglang's LLM server API: the names (reached through any module of the `sglang` package, which
# re-exports them: `sglang.Engine`, `sglang.srt.entrypoints.http_server.ServerArgs` …) and what a
# call of each is; the diffusion server's package has classes of the same names
_API = {"Engine": "engine", "ServerArgs": "server_args", "popen_launch_server": "popen"}
_OTHER_SERVERS = ("sglang.multimodal_gen",)
# keywords whose string is a message or documentation, not a command (`usage="sglang serve …"`)
_PROSE_KEYWORDS = frozenset({"help", "usage", "description", "epilog", "msg", "message", "doc", "docstring"})
_SCOPES = ("function_definition", "module")


class PythonScan(Record):
    """The launches of one Python text and what reading them found wrong (unknown keywords).
    (A plain class, see :class:`~sglang_lsp.base.findings.Record`.)"""

    __slots__ = _fields = ("invocations", "findings")

    def __init__(self, invocations: list[Invocation] | None = None, findings: list[Finding] | None = None):
        self.invocations = [] if invocations is None else invocations
        self.findings = [] if findings is None else findings


def extract_python(data: bytes, cat: Catalog, base_dir: str | None = None) -> PythonScan:
    """The launches of a Python text (its ``!`` lines and cell magics already blanked)."""
    if b"sglang" not in data:
        return PythonScan()
    return _Reader(data, cat, base_dir).run()


class _Reader:
    def __init__(self, data: bytes, cat: Catalog, base_dir: str | None):
        self.data = data
        self.cat = cat
        self.base_dir = base_dir
        self.tree = queries.parser("python").parse(data)
        self.scan = PythonScan()
        self.consumed: list[tuple[int, int]] = []
        # a name an import binds → the full name it stands for (`sgl` → `sglang`, `ServerArgs` →
        # `sglang.srt.server_args.ServerArgs`); `sgl` and `sglang` without an import too (a doc's
        # snippet often leaves the import out)
        self.names: dict[str, str] = {"sgl": "sglang", "sglang": "sglang"}
        self._assignments: dict[int, dict[str, list[ts.Node]]] = {}

    def text(self, node: ts.Node) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8", "surrogateescape")

    def is_consumed(self, node: ts.Node) -> bool:
        return any(a <= node.start_byte and node.end_byte <= b for a, b in self.consumed)

    # --- driver ----------------------------------------------------------------------------

    def run(self) -> PythonScan:
        calls, lists, strings = [], [], []
        for _, caps in queries.matches("python", "launches", self.tree.root_node):
            if "import" in caps:
                self.imports(caps["import"][0])
            elif "call" in caps:
                calls.append(caps)
            elif "argv" in caps:
                lists.append(caps["argv"][0])
            elif "string" in caps:
                strings.append(caps["string"][0])
        for caps in calls:
            self.call(caps["call"][0], caps["call.function"][0], caps["call.arguments"][0])
        for node in lists:
            if not self.is_consumed(node):
                self.argv_list(node)
        for node in strings:
            if node.parent is not None and node.parent.type == "concatenated_string":
                continue
            if self.is_consumed(node) or _is_bare_statement(node) or self.is_prose(node):
                continue
            self.command_string(node)
        self.scan.invocations.sort(key=lambda inv: inv.span.start)
        return self.scan

    def imports(self, node: ts.Node) -> None:
        if node.type == "import_statement":
            for child in node.named_children:
                if child.type == "aliased_import":
                    name, alias = child.child_by_field_name("name"), child.child_by_field_name("alias")
                    if name is not None and alias is not None:
                        self.names[self.text(alias)] = self.text(name)
            return
        module = node.child_by_field_name("module_name")
        if module is None or module.type != "dotted_name":
            return
        base = self.text(module)
        for child in node.children_by_field_name("name"):
            if child.type == "aliased_import":
                name, alias = self.text(child.child_by_field_name("name")), self.text(child.child_by_field_name("alias"))
            else:
                name = alias = self.text(child)
            self.names[alias] = f"{base}.{name}"

    def full_name(self, callee: str) -> str:
        """The dotted name a callee stands for, through the imports (``sgl.Engine`` → ``sglang.Engine``)."""
        head, _, rest = callee.partition(".")
        base = self.names.get(head)
        if base is None:
            return callee
        return f"{base}.{rest}" if rest else base

    def is_prose(self, node: ts.Node) -> bool:
        """A string given as a message or documentation (``usage="…"``, ``help="…"``)."""
        up = node.parent
        if up is not None and up.type == "keyword_argument":
            name = up.child_by_field_name("name")
            return name is not None and self.text(name) in _PROSE_KEYWORDS
        return False

    def call(self, node: ts.Node, function: ts.Node, arguments: ts.Node) -> None:
        callee = self.text(function)
        last = callee.rsplit(".", 1)[-1]
        kind = None
        if last in _API:
            full = self.full_name(callee)
            if full.startswith("sglang.") and not full.startswith(_OTHER_SERVERS):
                kind = _API[last]
        if kind is None and callee == "popen_launch_server":
            kind = "popen"  # sglang's test helper, also where a project copied it
        if kind in ("engine", "server_args"):
            self.kwargs_launch(node, function, arguments, callee)
        elif kind == "popen":
            self.popen_launch(node, function, arguments)
        elif last in _SUBPROCESS:
            first = next((c for c in arguments.named_children if c.type not in ("keyword_argument", "comment")), None)
            if first is not None and first.type in ("string", "concatenated_string") and not self.is_consumed(first):
                self.command_string(first, complete=True)
            elif first is not None and first.type == "identifier":
                value = self.value_of(first.text.decode("utf-8", "surrogateescape"), first)
                if value is not None and value.type in ("list", "string", "concatenated_string") \
                        and not self.is_consumed(value):
                    if value.type == "list":
                        self.argv_list(value)
                    else:
                        self.command_string(value)

    # --- names ------------------------------------------------------------------------------

    @staticmethod
    def statement_of(node: ts.Node | None) -> ts.Node | None:
        """The statement holding ``node``: its ancestor (or itself) whose parent is a block or
        the module."""
        while node is not None and node.parent is not None and node.parent.type not in ("block", "module"):
            node = node.parent
        return node

    def scope_of(self, node: ts.Node) -> ts.Node:
        up = node.parent
        while up is not None and up.type not in _SCOPES:
            up = up.parent
        return up if up is not None else self.tree.root_node

    def assignments(self, scope: ts.Node) -> dict[str, list[ts.Node]]:
        """``name = value`` statements of a scope (not of the functions and classes in it), by name."""
        found = self._assignments.get(scope.id)
        if found is None:
            found = self._assignments[scope.id] = {}
            stack = list(reversed(scope.named_children))
            while stack:
                n = stack.pop()
                if n.type in ("function_definition", "class_definition", "lambda"):
                    continue
                if n.type == "assignment":
                    left = n.child_by_field_name("left")
                    if left is not None and left.type == "identifier":
                        found.setdefault(self.text(left), []).append(n)
                stack.extend(reversed(n.named_children))
        return found

    def value_of(self, name: str, use: ts.Node) -> ts.Node | None:
        """The value of the last ``name = value`` before ``use`` in its function (or the module)."""
        for scope in (self.scope_of(use), self.tree.root_node):
            before = [a for a in self.assignments(scope).get(name, ()) if a.end_byte <= use.start_byte]
            if before:
                return before[-1].child_by_field_name("right")
            if scope.type == "module":
                break
        return None

    def string_values(self, node: ts.Node) -> list[str] | None:
        """The strings an expression may be: a literal, a name bound to one, one of two (``a if c
        else b``); ``None`` when not known."""
        if node.type in ("string", "concatenated_string"):
            text = string_text(self.data, node)
            return [text.text] if text is not None and text.known else None
        if node.type == "conditional_expression":
            parts = [self.string_values(c) for c in node.named_children[::2]]
            return None if any(p is None for p in parts) else [s for p in parts for s in p]
        if node.type == "identifier":
            value = self.value_of(self.text(node), node)
            return self.string_values(value) if value is not None and value.type != "identifier" else None
        return None

    # --- argv lists -------------------------------------------------------------------------

    def element_word(self, node: ts.Node, module_slot: bool = False) -> Word | None:
        """The argv word of a list element (``None``: a ``*splat``, any number of words)."""
        span = Span(node.start_byte, node.end_byte)
        if node.type in ("list_splat", "dictionary_splat"):
            return None
        if node.type in ("string", "concatenated_string"):
            text = string_text(self.data, node)
            if text is not None and text.known:
                a, b = (text.spans[0][0], text.spans[-1][1]) if text.spans else (span.start, span.start)
                quote = self.data[a - 1:a].decode() if a > node.start_byte else None
                return Word(text.text, Span(a, b), list(text.spans), quote if quote in ("'", '"') else None, "",
                            "list", whole=True)
            prefix = text.known_prefix if text is not None else ""
            return Word(None, span, None, None, prefix, "list", whole=True)
        if self.text(node) == "sys.executable":
            return Word("python", span, None, None, "", "list", whole=True)
        if node.type in ("integer", "float"):
            return Word(self.text(node), span, None, None, "", "list", whole=True)
        if module_slot:
            values = self.string_values(node)
            if values and any(v in SERVER_MODULES for v in values):
                return Word(next(v for v in values if v in SERVER_MODULES), span, None, None, "", "list", whole=True)
        return Word(None, span, None, None, "", "list", whole=True)

    def list_words(self, node: ts.Node) -> tuple[list[Word], bool]:
        """The words of a list literal's elements, and whether it holds ``*splat`` elements."""
        words: list[Word] = []
        splat = False
        elements = [c for c in node.named_children if c.type != "comment"]
        for i, child in enumerate(elements):
            prev = elements[i - 1] if i else None
            slot = prev is not None and self.data[prev.start_byte:prev.end_byte] in (b'"-m"', b"'-m'")
            w = self.element_word(child, module_slot=slot)
            if w is None:
                splat = True
                continue
            words.append(w)
        return words, splat

    def argv_list(self, node: ts.Node) -> None:
        words, splat = self.list_words(node)
        match = _launch_in(words)
        if match is None:
            self.joined_command(node, words)
            return
        self.consumed.append((node.start_byte, node.end_byte))
        if match.kind == "shell":
            self.nested_script(words[match.end], {})
            return
        extra, open_ = self.later_words(node)
        args = words[match.end:] + extra
        self.add(Invocation(match.kind, words[match.start:match.end], args, Span(node.start_byte, node.end_byte),
                            open=splat or open_, base_dir=self.base_dir))

    def later_words(self, node: ts.Node) -> tuple[list[Word], bool]:
        """Words a list gets after it is written, as far as the block that builds it says, and
        whether it may get others (see the module docs)."""
        up = node.parent
        if up is not None and up.type == "binary_operator":
            return [], True  # `[...] + more`
        if up is not None and up.type == "argument_list":
            call = up.parent
            function = call.child_by_field_name("function") if call is not None else None
            attribute = function.child_by_field_name("attribute") if function is not None and \
                function.type == "attribute" else None
            if attribute is not None and self.text(attribute) in ("extend", "append", "insert"):
                # `cmd.extend([...])`: what `cmd` gets next
                target = function.child_by_field_name("object")
                return self.mutations(self.text(target), call, call) if target is not None else ([], True)
            return [], False  # the argv of a call (`subprocess.Popen([...])`): as written
        if up is not None and up.type == "assignment" and up.child_by_field_name("right") == node:
            left = up.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                return self.mutations(self.text(left), up, up)
            return [], True
        return [], False

    def mutations(self, name: str, after: ts.Node, statement: ts.Node) -> tuple[list[Word], bool]:
        """``name.extend([...])``, ``name.append(x)`` and ``name += [...]`` after ``statement``:
        the words of those in the same block as it, and whether any other change (in a branch, a
        loop, of another kind, or a use that may add to it) follows."""
        block = self.statement_of(statement).parent
        scope = self.scope_of(statement)
        words: list[Word] = []
        open_ = False
        pattern = re.compile(rb"\b" + re.escape(name.encode()) + rb"\s*(?:\.\s*(?:append|extend|insert)\b|\+=|\+|\[)")
        for m in pattern.finditer(self.data, after.end_byte, scope.end_byte):
            top = self.statement_of(self.tree.root_node.descendant_for_byte_range(m.start(), m.start() + len(name)))
            if top is None or block is None or top.parent is None or top.parent.id != block.id:
                open_ = True
                continue
            added = self.added_words(name, top)
            if added is None:
                open_ = True
            else:
                words += added
        return words, open_

    def added_words(self, name: str, stmt: ts.Node) -> list[Word] | None:
        """The words a statement ``name.extend([...])`` / ``name.append(x)`` / ``name += [...]``
        adds; ``None`` for anything else."""
        expr = stmt.named_children[0] if stmt.type == "expression_statement" and stmt.named_children else None
        if expr is None:
            return None
        if expr.type == "augmented_assignment" and self.text(expr.child_by_field_name("left")) == name \
                and self.data[expr.child_by_field_name("operator").start_byte:][:2] == b"+=":
            value = expr.child_by_field_name("right")
            if value is not None and value.type in ("list", "tuple"):
                words, splat = self.list_words(value)
                return None if splat else words
            return None
        if expr.type == "call":
            function = expr.child_by_field_name("function")
            args = expr.child_by_field_name("arguments")
            if function is None or args is None or self.text(function) not in (f"{name}.append", f"{name}.extend"):
                return None
            items = [c for c in args.named_children if c.type != "comment"]
            if len(items) != 1:
                return None
            if self.text(function).endswith(".append"):
                w = self.element_word(items[0])
                return None if w is None else [w]
            if items[0].type in ("list", "tuple"):
                self.consumed.append((items[0].start_byte, items[0].end_byte))
                words, splat = self.list_words(items[0])
                return None if splat else words
        return None

    def joined_command(self, node: ts.Node, words: list[Word]) -> None:
        """A list of strings whose first one is a whole launch command (`["python3 -m
        sglang.launch_server", f"--port {p}", …]`, for `" ".join`): read as one command."""
        elements = [c for c in node.named_children if c.type != "comment"]
        texts = [string_text(self.data, c) if c.type in ("string", "concatenated_string") else None for c in elements]
        first = next((i for i, t in enumerate(texts) if t is not None and _LAUNCH_TEXT.search(t.text)), None)
        if first is None:
            return
        sep = "\n" if texts[first].text.rstrip().endswith("\\") else " "
        pieces: list[PyText] = []
        for child, text in zip(elements, texts):
            if text is None:
                hole = (0, 0, child.start_byte, child.end_byte)
                text = PyText("", [], [hole])
            pieces.append(text)
        self.consumed.append((node.start_byte, node.end_byte))
        self.shell_text(_with_placeholders(_joined(pieces, sep)))

    # --- command strings --------------------------------------------------------------------

    def command_string(self, node: ts.Node, complete: bool = False) -> None:
        """A string whose text launches sglang. ``complete``: the string is run as it is (the
        command of ``os.system(…)``); any other is a piece a program may add words to."""
        text = string_text(self.data, node)
        if text is None or not _LAUNCH_TEXT.search(text.text):
            return
        self.consumed.append((node.start_byte, node.end_byte))
        self.shell_text(_with_placeholders(text), complete)

    def shell_text(self, text: PyText, complete: bool = False) -> None:
        """Read a command text as shell; its holes are unknown words. Unless ``complete``, the
        launches found may get more words (open)."""
        chars = list(text.text)
        spans = list(text.spans)
        names: dict[str, None] = {}
        for k, (a, b, s, e) in enumerate(reversed(text.holes)):
            name = f"{HOLE_PREFIX}py{len(text.holes) - 1 - k}"
            if _INTERPRETER_AFTER.match(text.text, b) and _COMMAND_START.search(text.text[:a]):
                marker = "python"  # `f"{PYTHON} -m sglang.launch_server …"`: whatever it is, an interpreter
            else:
                names[name] = None
                marker = "${" + name + "}"
            chars[a:b] = list(marker)
            spans[a:b] = [(s, e)] * len(marker)
        word = Word("".join(chars), Span(spans[0][0], spans[-1][1]) if spans else Span(0, 0), spans)
        self.nested_script(word, names, complete)

    def nested_script(self, script: Word, env: dict, complete: bool = True) -> None:
        if script.text is None:
            return
        found = extract_shell(Source.from_word(script), self.base_dir, 1, env).invocations
        forget_holes(found)
        for inv in found:
            inv.nested = True
            inv.open = inv.open or not complete
            self.add(inv)

    # --- sglang's Python API ------------------------------------------------------------------

    def kwargs_launch(self, node: ts.Node, function: ts.Node, arguments: ts.Node, callee: str) -> None:
        pairs: list[tuple[str, Span, ts.Node | None, bool]] = []  # (key, its range, value, set on every path)
        open_ = False
        for child in arguments.named_children:
            if child.type == "keyword_argument":
                name = child.child_by_field_name("name")
                key = self.text(name)
                if key == "server_args":
                    return  # sglang takes the ServerArgs given and ignores the other keywords
                pairs.append((key, Span(name.start_byte, name.end_byte), child.child_by_field_name("value"), True))
            elif child.type == "dictionary_splat":
                inner = child.named_children[0] if child.named_children else None
                found, more = self.dict_pairs(inner) if inner is not None else ([], True)
                pairs += found
                open_ |= more
            elif child.type != "comment":
                open_ = True  # a positional argument, `*args`
        self.consumed.append((node.start_byte, node.end_byte))
        program = [Word(callee, Span(function.start_byte, function.end_byte), None, None, "", "kwarg")]
        # the value each key has when the call runs: the last one set on every path; a key set
        # again in a branch has an unknown value, one set only in a branch may be missing
        final: dict[str, tuple[Span, ts.Node | None, bool]] = {}
        for key, span, value, sure in pairs:
            if field_options(self.cat, key) is None:
                self.scan.findings.append(self.unknown_keyword(key, span, callee))
                continue
            if sure:
                final[key] = (span, value, True)
            elif key in final:
                final[key] = (final[key][0], None, False)
            else:
                open_ = True
        args: list[Word] = []
        for key, (span, value, known) in final.items():
            words, unknown = self.kwarg_words(key, span, value, known)
            args += words
            open_ |= unknown
        self.add(Invocation("server", program, args, Span(node.start_byte, node.end_byte), open=open_,
                            base_dir=self.base_dir))

    def dict_pairs(self, node: ts.Node) -> tuple[list[tuple[str, Span, ts.Node | None]], bool]:
        """The keys of a ``**`` argument with their values, and whether it may hold others."""
        if node.type == "dictionary":
            return self.dictionary_pairs(node)
        if node.type == "call" and self.text(node.child_by_field_name("function")) == "dict":
            out = []
            more = False
            for child in node.child_by_field_name("arguments").named_children:
                if child.type == "keyword_argument":
                    name = child.child_by_field_name("name")
                    out.append((self.text(name), Span(name.start_byte, name.end_byte),
                                child.child_by_field_name("value"), True))
                elif child.type != "comment":
                    more = True
            return out, more
        if node.type == "identifier":
            name = self.text(node)
            value = self.value_of(name, node)
            if value is None or value.type not in ("dictionary", "call") or value.id == node.id:
                return [], True
            pairs, more = self.dict_pairs(value)
            assign = value.parent
            later, changed = self.dict_updates(name, assign, node)
            return pairs + later, more or changed
        return [], True

    def dictionary_pairs(self, node: ts.Node) -> tuple[list[tuple[str, Span, ts.Node | None]], bool]:
        out = []
        more = False
        for pair in node.named_children:
            if pair.type == "pair":
                key = pair.child_by_field_name("key")
                text = string_text(self.data, key) if key is not None and key.type == "string" else None
                if text is None or not text.known or not text.spans:
                    more = True
                    continue
                out.append((text.text, Span(text.spans[0][0], text.spans[-1][1]), pair.child_by_field_name("value"), True))
            elif pair.type == "dictionary_splat":
                more = True
        return out, more

    def dict_updates(self, name: str, assign: ts.Node, use: ts.Node) -> tuple[list, bool]:
        """``name["key"] = value`` between a dict's assignment and its use: the keys written in
        the same block as the assignment; whether any other change (in a branch, ``update``,
        ``pop`` …) happens."""
        out = []
        changed = False
        block = assign.parent.parent if assign.parent is not None else None  # assignment → statement → block
        pattern = re.compile(rb"\b" + re.escape(name.encode()) + rb"\s*(?:\[|\.\s*(?:update|pop|setdefault)\b)")
        for m in pattern.finditer(self.data, assign.end_byte, use.start_byte):
            stmt = self.statement_of(self.tree.root_node.descendant_for_byte_range(m.start(), m.start() + len(name)))
            expr = stmt.named_children[0] if stmt is not None and stmt.type == "expression_statement" \
                and stmt.named_children else None
            left = expr.child_by_field_name("left") if expr is not None and expr.type == "assignment" else None
            key = left.child_by_field_name("subscript") if left is not None and left.type == "subscript" else None
            text = string_text(self.data, key) if key is not None and key.type == "string" else None
            if text is None or not text.known or not text.spans:
                changed = True
                continue
            sure = block is not None and stmt.parent is not None and stmt.parent.id == block.id
            out.append((text.text, Span(text.spans[0][0], text.spans[-1][1]), expr.child_by_field_name("right"), sure))
        return out, changed

    def kwarg_words(self, key: str, span: Span, value: ts.Node | None, known: bool = True) -> tuple[list[Word], bool]:
        """The argv words of one ``ServerArgs`` field, and whether the launch is then open (a
        switch whose value is not known). ``known``: the value is ``value``'s (else unknown)."""
        options = field_options(self.cat, key) or []
        if not options:
            return [], False  # a field no flag sets (e.g. `stat_loggers`)
        vspan = Span(value.start_byte, value.end_byte) if value is not None else span
        v = literal(self.data, value) if known else UNKNOWN
        opt = options[0]
        if isinstance(v, bool):
            for o in options:
                if o.action in ("store_true", "store_false"):
                    if (o.action == "store_true") == v:
                        return [self.flag_word(o.name, span, key)], False
                elif o.action == "boolean_optional":
                    name = o.name if v else next((s for s in o.option_strings if s.startswith("--no-")), o.name)
                    return [self.flag_word(name, span, key)], False
            if all(o.is_switch for o in options):
                # a switch of another kind (a deprecated one): given when true, the default when false
                return ([self.flag_word(opt.name, span, key)] if v else []), False
            return [self.flag_word(opt.name, span, key), Word(str(v), vspan, None, None, "", "kwarg", key)], False
        if v is None:
            return [], False
        if v is UNKNOWN:
            if all(o.is_switch for o in options):
                return [], True  # present or not: unknown
            return [self.flag_word(opt.name, span, key), Word(None, vspan, None, None, "", "kwarg", key, True)], False
        flag = self.flag_word(opt.name, span, key)
        if isinstance(v, (list, tuple)):
            return [flag] + [Word(_py_str(x), vspan, None, None, "", "kwarg", key) for x in v], False
        if isinstance(v, dict):
            return [flag, Word(json.dumps(v), vspan, None, None, "", "kwarg", key)], False
        text = _py_str(v)
        if value is not None and value.type == "string":
            st = string_text(self.data, value)
            start = value.children[0] if value.children else None
            if st is not None and st.text == text and st.spans and start is not None and start.type == "string_start" \
                    and start.end_byte - start.start_byte == 1:
                # a plain one-quote string: the word is its inside (a choice replaces it in place)
                content = Span(st.spans[0][0], st.spans[-1][1])
                quote = self.data[start.start_byte:start.end_byte].decode()
                return [flag, Word(text, content, list(st.spans), quote, "", "kwarg", key)], False
        return [flag, Word(text, vspan, None, None, "", "kwarg", key)], False

    def flag_word(self, flag: str, span: Span, key: str) -> Word:
        """The flag of a keyword: its range is the keyword's name (inside the quotes of a dict
        key, whose quote the word keeps)."""
        before = self.data[span.start - 1:span.start].decode("latin-1")
        return Word(flag, span, None, before if before in ("'", '"') else None, "", "kwarg", key)

    def unknown_keyword(self, key: str, span: Span, callee: str) -> Finding:
        error = r"Unexpected keyword argument '" + re.escape(key) + "'"
        flag = "--" + key.replace("_", "-")
        moved = release_findings.flag_finding(self.cat, Word(flag, span, None, None, "", "kwarg", key), flag, span,
                                              error)
        if moved is not None:
            moved.message = f"keyword `{key}`: {moved.message}"
            return moved
        spelled = self.cat.lookup(flag)  # `tensor_parallel_size`: a flag's spelling, not its field
        guess = [spelled.dest] if spelled is not None and field_options(self.cat, spelled.dest) is not None else \
            difflib.get_close_matches(key, field_names(self.cat), n=1, cutoff=0.75)
        msg = (f"`{key}` is not a server argument of sglang {self.cat.sglang_version}: `ServerArgs` has no such field, "
               f"so `{callee}(…)` raises TypeError")
        fixes = []
        if guess:
            msg += f"; did you mean `{guess[0]}`?"
            fixes.append(Fix(f"Use `{guess[0]}`", Applicability.UNSAFE, (Edit(span, guess[0]),)))
        return finding("SGL001", msg, span, flag=key, sglang_error=error, fixes=fixes)

    def popen_launch(self, node: ts.Node, function: ts.Node, arguments: ts.Node) -> None:
        """sglang's test helper: `python3 -m sglang.launch_server --model-path MODEL --host … --port …`
        followed by ``other_args`` (sglang/test/test_utils.py: popen_launch_server)."""
        positional = [c for c in arguments.named_children if c.type not in ("keyword_argument", "comment")]
        keywords = {self.text(c.child_by_field_name("name")): c.child_by_field_name("value")
                    for c in arguments.named_children if c.type == "keyword_argument"}
        for flag in ("pd_separated", "num_replicas"):
            if flag in keywords and literal(self.data, keywords[flag]) not in (False, None):
                return  # another launcher (sglang.launch_pd_server)
        model = positional[0] if positional else keywords.get("model")
        self.consumed.append((node.start_byte, node.end_byte))
        program = [Word("popen_launch_server", Span(function.start_byte, function.end_byte), None, None, "", "kwarg")]
        args: list[Word] = []
        open_ = False
        if model is not None:
            at = Span(model.start_byte, model.start_byte)
            args.append(Word("--model-path", at, None, None, "", "implied"))
            w = self.element_word(model)
            args.append(w if w is not None else Word(None, Span(model.start_byte, model.end_byte), None, None, "", "list"))
        other = keywords.get("other_args")
        if other is None and len(positional) > 4:
            other = positional[4]
        if other is not None:
            target = other
            if other.type == "identifier":
                target = self.value_of(self.text(other), other)
            if target is not None and target.type in ("list", "tuple"):
                words, splat = self.list_words(target)
                self.consumed.append((target.start_byte, target.end_byte))
                extra, more = self.later_words(target) if target is not other else ([], False)
                args += words + extra
                open_ = splat or more
            elif literal(self.data, other) is not None:
                open_ = True
        self.add(Invocation("server", program, args, Span(node.start_byte, node.end_byte), open=open_,
                            base_dir=self.base_dir))

    def add(self, inv: Invocation) -> None:
        self.scan.invocations.append(inv)


def _launch_in(words: list[Word]) -> LaunchMatch | None:
    """Where sglang starts in an argv list: as in a shell command, or after any interpreter word
    (``[str(python), "-m", "sglang.launch_server", …]``)."""
    match = match_launch(words)
    if match is not None:
        return match
    for i, w in enumerate(words[:-1]):
        nxt = words[i + 1].text
        if w.text == "-m" and nxt in SERVER_MODULES | ROUTER_MODULES:
            return LaunchMatch("server" if nxt in SERVER_MODULES else "router", max(i - 1, 0), i + 2)
        if w.text is not None and w.text.rsplit("/", 1)[-1] == "sglang" and nxt == "serve":
            return LaunchMatch("server", i, i + 2)
    return None


# a word a template names for the program to replace (`SGLANG_ARGS_PLACEHOLDER`), or a
# documentation placeholder (`<model>`, `[OPTIONS]`, `...`: see extract.docs)
_PLACEHOLDER_WORD = re.compile(r"(?<![\w$])[A-Z][A-Z0-9_]*PLACEHOLDER[A-Z0-9_]*(?!\w)|" + PLACEHOLDER_TEXT.pattern)


def _with_placeholders(text: PyText) -> PyText:
    """``text`` with each placeholder word a hole too."""
    found = [m.span() for m in _PLACEHOLDER_WORD.finditer(text.text)]
    if not found:
        return text
    holes = list(text.holes) + [(a, b, text.spans[a][0], text.spans[b - 1][1]) for a, b in found]
    return PyText(text.text, text.spans, sorted(holes))


def _joined(pieces: list[PyText], sep: str) -> PyText:
    text, spans, holes = "", [], []
    for k, piece in enumerate(pieces):
        if k:
            at = spans[-1][1] if spans else 0
            text += sep
            spans.append((at, at))
        base = len(text)
        text += piece.text
        spans += piece.spans
        holes += [(a + base, b + base, s, e) for a, b, s, e in piece.holes]
    return PyText(text, spans, holes)


def _is_bare_statement(node: ts.Node) -> bool:
    """A string that is a statement of its own (a docstring, a comment written as a string)."""
    up = node.parent
    return up is not None and up.type == "expression_statement" and up.named_child_count == 1


def _py_str(value) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    return str(value)
