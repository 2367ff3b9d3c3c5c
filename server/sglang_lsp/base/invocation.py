"""Launch commands found in a file: the argv words with their exact source ranges, and the
recognizer that decides whether a word list starts sglang's server (or its router).

A :class:`Word` is one argv element after shell (or YAML) processing. Its ``text`` is ``None``
when the value cannot be known statically; ``char_spans`` maps every character of ``text`` back
to the source bytes it came from, so that the flag part and the value part of ``--x=v`` (or a
word expanded from a variable defined elsewhere) each get their own exact range.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .findings import Record, Span


class CharRun(Sequence):
    """The ``char_spans`` of a word whose characters are consecutive one-byte characters of
    the source: ``(start + i, start + i + 1)`` for character ``i``, without a list per word."""

    __slots__ = ("start", "n")

    def __init__(self, start: int, n: int):
        self.start = start
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            a, b, step = i.indices(self.n)
            if step != 1:
                return [self[k] for k in range(a, b, step)]
            return CharRun(self.start + a, max(0, b - a))
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError("character index out of range")
        return (self.start + i, self.start + i + 1)

    def __iter__(self):
        end = self.start + self.n
        return zip(range(self.start, end), range(self.start + 1, end + 1))

    def __eq__(self, other) -> bool:
        if isinstance(other, CharRun):
            return (self.start, self.n) == (other.start, other.n) or self.n == other.n == 0
        return isinstance(other, Sequence) and list(self) == list(other)

    def __repr__(self) -> str:
        return f"CharRun({self.start}, {self.n})"


class Word(Record):
    """One argument of a launch: its text after shell or YAML evaluation (``None``: unknown),
    where it is written, and where each of its characters comes from. (A plain class, see
    :class:`~sglang_lsp.base.findings.Record`; with a ``__dict__``, which the incremental re-check
    copies.)"""

    _fields = ("text", "span", "char_spans", "quote", "known_prefix", "origin", "config_key", "whole")

    def __init__(self, text: str | None, span: Span, char_spans: Sequence[tuple[int, int]] | None = None,
                 quote: str | None = None, known_prefix: str = "", origin: str = "shell",
                 config_key: str | None = None, whole: bool = False):
        self.text = text
        self.span = span
        self.char_spans = char_spans  # a list, or a CharRun
        self.quote = quote  # the quoting of the source word: None, "'" or '"'
        self.known_prefix = known_prefix  # literal start of an unknown word, e.g. "--tp=" for --tp=$TP
        # shell (written here, in the command), array (an element written as it is in an array's
        # definition in the file: the word can be edited there, but has no neighbours there that
        # are its argv neighbours), variable (from a variable's value), yaml, config
        self.origin = origin
        self.config_key = config_key  # for words that come from a --config YAML key
        # one argv word whatever its unknown part expands to (a Kubernetes / compose list item: the
        # kubelet's `$(VAR)` and Compose's `${VAR}` never split a list item into several words)
        self.whole = whole

    @property
    def known(self) -> bool:
        return self.text is not None

    def sub_span(self, start: int, end: int) -> Span:
        """Source range of characters ``[start, end)`` of :attr:`text`."""
        spans = self.char_spans
        if not spans or self.text is None:
            return self.span
        start = max(0, min(start, len(spans)))
        end = max(start, min(end, len(spans)))
        if start == end:
            pos = spans[start][0] if start < len(spans) else spans[-1][1]
            return Span(pos, pos, self.span.path)
        first, last = spans[start][0], spans[end - 1][1]
        if last < first or any(b < a for (_, a), (b, _) in zip(spans[start:end - 1], spans[start + 1:end])):
            # the characters come from several places (literal text and a variable defined
            # elsewhere): no single range covers exactly them, so name the whole word
            return self.span
        return Span(first, last, self.span.path)

    @property
    def display(self) -> str:
        if self.text is not None:
            return self.text
        return self.known_prefix + "…"


# origins whose words are written as they are read (inside their quotes, if any): a flag name or a
# choice replaces one in place (``array``: an element of a bash array's definition; ``list``: an
# element of a JSON array or a Python list literal)
IN_PLACE_ORIGINS = frozenset({"shell", "array", "yaml", "list"})


def replaceable(word: Word) -> bool:
    """Whether a flag name or a choice can replace ``word``'s text in place: a shell word, a YAML
    item, a list element, or a Python keyword's string value (``kwarg`` with a quote; a keyword's
    own name is a field name, not a flag)."""
    return word.origin in IN_PLACE_ORIGINS or (word.origin == "kwarg" and word.quote is not None
                                                and not (word.text or "").startswith("--"))


class Invocation:
    """One launch of sglang found in a file. (A plain class: it is never compared or hashed (the
    language server's incremental re-check copies it with ``copy.copy``), and a dataclass costs a
    cold ``sglang-lsp check`` about half a millisecond to build.
    Without ``__slots__``: a launch may be given an ``sglang_version`` of its own, which the
    engine reads with ``getattr``.)"""

    def __init__(self, kind: str, program: list[Word], args: list[Word], span: Span, open: bool = False,
                 env: dict[str, str | None] | None = None, base_dir: str | None = None, nested: bool = False,
                 unassigned: list[tuple[str, Span]] | None = None, dialect: str = "sglang",
                 alternatives: list["Invocation"] | None = None):
        self.kind = kind  # "server" | "router"
        self.program = program  # the words that start sglang, e.g. python3 -m sglang.launch_server
        self.args = args  # everything after them
        self.span = span  # the whole command
        self.open = open  # an unknown expansion may hide further arguments
        self.env = {} if env is None else env  # prefix / exported variables
        self.base_dir = base_dir  # directory relative paths (e.g. --config) resolve against
        self.nested = nested  # found inside an `sh -c` string
        # `$name` / `${name}` expansions in the command that the file never assigns: (name, range)
        self.unassigned = [] if unassigned is None else unassigned
        # whose parser reads the argv: "sglang" (sglang's own), or "dynamo" (NVIDIA Dynamo's sglang
        # worker, `python -m dynamo.sglang`: its own flags first, the rest is sglang's; see
        # catalog/data/dynamo_flags.json)
        self.dialect = dialect
        # the argvs this one launch may have when the script builds it in branches (an array
        # appended to in an `if`, a command string run in several places …): each a launch of its
        # own, with the same program words. ``args`` then holds every word of them in order, a
        # word that differs between them unknown (see extract.shell.alternatives).
        self.alternatives = alternatives

    @property
    def label(self) -> str:
        return " ".join(w.display for w in self.program)


# --- recognizing the launcher ------------------------------------------------------------

_PYTHON = re.compile(r"^(?:.*/)?python(?:\d+(?:\.\d+)*)?[tw]?$")
SERVER_MODULES = {"sglang.launch_server"}
ROUTER_MODULES = {"sglang_router.launch_server", "sglang_router.launch_router"}
# NVIDIA Dynamo's sglang worker: sglang's server arguments plus Dynamo's own (ai-dynamo/dynamo,
# components/src/dynamo/sglang/args.py: parse_args)
DYNAMO_MODULES = {"dynamo.sglang"}
# Python interpreter options that take a separate value.
_PY_OPTS_WITH_VALUE = {"-W", "-X", "-Q", "--check-hash-based-pycs"}
# Commands that run another command given later on their command line (any other command whose
# words hold a launch is a wrapper too: see match_launch; these also start a command in a string)
WRAPPERS = {
    "exec", "nohup", "env", "setsid", "timeout", "numactl", "srun", "docker", "podman", "uv",
    "uvx", "taskset", "nice", "ionice", "stdbuf", "time", "sudo", "chrt", "nsys", "ncu",
    "apptainer", "singularity", "mpirun", "mpiexec", "conda", "micromamba", "mamba", "pixi",
    "poetry", "pipenv", "hatch", "rye", "kubectl", "stdbuf", "caffeinate", "flock", "xargs",
    "ssh", "pdm", "unbuffer", "dumb-init", "tini", "gosu", "su-exec", "catchsegv", "strace",
    "ltrace", "valgrind", "perf", "py-spy", "watchmedo", "command", "builtin", "torchrun",
    "accelerate", "deepspeed", "ray",
}
SHELLS = {"sh", "bash", "zsh", "dash", "ksh"}
# Commands that print, search, signal or store their arguments rather than run them: words after
# them that read like a launch (`echo python -m sglang.launch_server …`, `pkill -f …`) are not one
NOT_RUNNING = {
    "echo", "printf", "print", "grep", "egrep", "fgrep", "rg", "ag", "ack", "pkill", "pgrep", "kill",
    "killall", "ps", "logger", "test", "[", "[[", "sed", "awk", "cat", "tee", "which", "type", "whereis",
    "alias", "export", "declare", "typeset", "local", "readonly", "read", "set", "unset", "trap", "exit",
    "return", "log", "info", "warn", "error", "die", "debug", "pip", "pip3", "wget", "curl", "git", "cp",
    "mv", "rm", "ls", "touch", "mkdir", "head", "tail", "less", "more", "wc", "sort", "cut", "tr", "jq",
    "yq", "envsubst", "eval",
}


class LaunchMatch:
    """Where the launcher is in a command's words (a plain class: it needs no generated methods,
    and each dataclass costs a cold ``sglang-lsp check`` about half a millisecond to build)."""

    __slots__ = ("kind", "start", "end", "dialect")

    def __init__(self, kind: str, start: int, end: int, dialect: str = "sglang"):
        self.kind = kind  # server | router | shell
        self.start = start  # index of the first launcher word
        self.end = end  # index of the first argument after the launcher (for shell: the script word)
        self.dialect = dialect  # sglang | dynamo: see Invocation.dialect


def _base(word: Word) -> str | None:
    return None if word.text is None else word.text.rsplit("/", 1)[-1]


def may_start_launch(word: Word) -> bool:
    """Whether a command named ``word`` can be a launch (the launcher, a shell or a wrapper)
    without naming sglang elsewhere in its words."""
    return word.text is not None and may_be_launcher(word.text)


def may_be_launcher(name: str) -> bool:
    """Whether a command name (``/opt/venv/bin/python3``, ``nohup``, ``bash`` …) is one."""
    base = name.rsplit("/", 1)[-1]
    return base in WRAPPERS or base in SHELLS or base == "sglang" or bool(_PYTHON.match(base))


def is_python(name: str) -> bool:
    """Whether a command name (``python3``, ``/opt/venv/bin/python3.11`` …) is a Python interpreter."""
    return bool(_PYTHON.match(name.rsplit("/", 1)[-1]))


def never_runs_its_words(name: str) -> bool:
    """Whether a command named ``name`` prints, searches or stores its words (see NOT_RUNNING)."""
    return name.rsplit("/", 1)[-1] in NOT_RUNNING


_LAUNCH_HINT = re.compile(rb"sglang|[$`]")
_QUOTING = re.compile(rb"[\\\"']")


def may_contain_launch(data: bytes) -> bool:
    """False only when the source text of a command cannot denote an sglang launch: no
    ``sglang`` once quotes and backslashes are dropped, and no expansion that could supply it."""
    return _LAUNCH_HINT.search(data) is not None or b"sglang" in _QUOTING.sub(b"", data)


def names_sglang(data: bytes) -> bool:
    """Whether a text names sglang's launcher (``sglang.launch_server``, ``sglang serve``, the
    router, Dynamo's sglang worker) outright, quotes and backslashes aside: a command of any name
    whose text does may be a wrapper of a launch, a variable whose value does may hold one."""
    if b"sglang" not in data:
        return False
    text = _QUOTING.sub(b"", data)
    return b"launch_server" in text or b"launch_router" in text or b"dynamo.sglang" in text \
        or (b"serve" in text and re.search(rb"sglang\s+serve", text) is not None)


def _module_kind(module: str | None) -> tuple[str, str] | None:
    if module in SERVER_MODULES:
        return "server", "sglang"
    if module in ROUTER_MODULES:
        return "router", "sglang"
    if module in DYNAMO_MODULES:
        return "server", "dynamo"
    return None


def match_launch(words: list[Word]) -> LaunchMatch | None:
    """Find where sglang (or a nested ``sh -c`` script) starts in a command's words.

    Any command whose words hold ``<python> -m sglang.launch_server`` (a module run with
    ``-m`` after a launcher such as ``torchrun … -m``, an interpreter in a variable such as
    ``$PYTHON -m …``) or ``sglang serve`` is a launch: the words before it are a wrapper
    (``nsys profile``, ``numactl …``, ``/opt/run-with-env.sh``). A command that prints or
    searches its words (``echo``, ``grep``, ``pkill -f`` …: NOT_RUNNING) is never one.
    """
    if not words or words[0].text is not None and never_runs_its_words(words[0].text):
        return None
    for i, word in enumerate(words):
        base = _base(word)
        if base is None:
            continue
        if base == "sglang" and i + 1 < len(words) and words[i + 1].text == "serve":
            return LaunchMatch("server", i, i + 2)
        if _PYTHON.match(base):
            j = i + 1
            while j < len(words) and words[j].text is not None and words[j].text.startswith("-"):
                opt = words[j].text
                if opt == "-m" or opt.startswith("-m") and len(opt) > 2:
                    module = opt[2:] if len(opt) > 2 else (words[j + 1].text if j + 1 < len(words) else None)
                    nxt = j + 1 if len(opt) > 2 else j + 2
                    found = _module_kind(module)
                    if found is not None:
                        return LaunchMatch(found[0], i, nxt, found[1])
                    break  # another module (`python -m torch.distributed.run … -m sglang…`): look on
                if opt in ("-c",):
                    return None
                j += 2 if opt in _PY_OPTS_WITH_VALUE else 1
            continue
        if base == "-m" and i + 1 < len(words):
            found = _module_kind(words[i + 1].text)
            if found is not None:
                # `uv run -m …`, `torchrun --nproc-per-node 8 -m …`, `$PYTHON -m …` (the
                # interpreter in a variable the file does not set: the unknown word before)
                start = i - 1 if i > 0 and words[i - 1].text is None else i
                return LaunchMatch(found[0], start, i + 2, found[1])
        if base in SHELLS and i + 2 < len(words):
            opt = words[i + 1].text
            if opt is not None and re.fullmatch(r"-[a-z]*c[a-z]*", opt):
                # the script is the first operand: `bash -lc -- 'script'`, `sh -c -e 'script'`
                k = i + 2
                while k + 1 < len(words) and words[k].text is not None and (
                        words[k].text == "--" or re.fullmatch(r"-[a-z]+", words[k].text)):
                    k += 1
                    if words[k - 1].text == "--":
                        break
                return LaunchMatch("shell", i, k)
    return None
