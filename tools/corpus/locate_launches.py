"""Draft the canary plants of a corpus file: where does it launch sglang?

This is the corpus's own locator, deliberately independent of sglang-lsp's extractors (using them
would make the canary measurement circular). It is plain text search: it finds the words that start
sglang (``sglang.launch_server``, ``sglang serve``, ``dynamo.sglang``, ``sgl.Engine(``,
``ServerArgs(``, ``popen_launch_server(... other_args=[``), throws away the occurrences that are
obviously not launches (prose outside code blocks, comments, ``pkill``/``grep`` patterns, imports,
``--help`` runs) and says for each remaining one where the canary goes in that file's own syntax:

* ``word``      insert `` --sglang-lsp-canary`` right after the launching word (shell, a shell string
                in YAML/Markdown/Dockerfile/Python, a notebook ``!`` line);
* ``element``   the launching word is a whole quoted list element (JSON/Python/YAML flow list):
                insert ``, "--sglang-lsp-canary"`` after its closing quote;
* ``item``      the launching word is a YAML block-sequence item: add a new item
                ``- --sglang-lsp-canary`` on the next line, same indentation;
* ``kwarg``     a Python call taking server arguments as keywords: insert ``sglang_lsp_canary=1, ``
                right after the opening parenthesis;
* ``other-args`` ``popen_launch_server(..., other_args=[``: insert ``"--sglang-lsp-canary", ``
                after the bracket.

The output is a draft: every file was then reviewed by eye and the manifest corrected by hand
(``tests/corpus/manifest.json`` is the reference, not this script's output).

    python tools/corpus/locate_launches.py tests/corpus/files/shell/x.sh   # print the draft plants
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

CANARY_FLAG = "--sglang-lsp-canary"
CANARY_KWARG = "sglang_lsp_canary=1"

LAUNCH_WORD = re.compile(r"sglang\.launch_server\b(?!\.py)|\bsglang serve\b|\bdynamo\.sglang\b(?![.\w])")
KWARG_CALL = re.compile(r"(?<![\w.])(?:sgl\.Engine|sglang\.Engine|Engine|ServerArgs)\(")
OTHER_ARGS = re.compile(r"other_args\s*=\s*\[")
POPEN = re.compile(r"\bpopen_launch_server\(")
NOT_A_LAUNCH_LINE = re.compile(
    r"\b(pkill|pgrep|grep|ps aux|killall)\b|^\s*(from|import)\s+\S*sglang|"
    r"sglang\.launch_server\s+--help|launch_server\s*\.\s*py"
)
FENCE = re.compile(r"^\s*(```+|~~~+)")
RST_BLOCK = re.compile(r"^(\s*)(\.\. (code-block|code|sourcecode|prompt)::.*|.*::\s*)$")


@dataclass
class Plant:
    line: int  # 1-based line of the insertion point
    col: int  # 0-based code-point column of the insertion point in that line
    anchor: str  # text immediately before the insertion point (the launching word or call)
    text: str  # inserted text
    expect_line: int  # 1-based line of the planted file on which the finding is expected
    form: str
    construct: str


def _kind_of(path: Path) -> str:
    parts = path.resolve().parts
    if "files" in parts:
        return parts[parts.index("files") + 1]
    raise SystemExit(f"{path}: not under tests/corpus/files/<kind>/")


def _comment_prefix(kind: str) -> str | None:
    return {"shell": "#", "yaml": "#", "helm": "#", "dockerfile": "#", "python": "#"}.get(kind)


def _code_lines_markdown(lines: list[str]) -> set[int]:
    """0-based indices of lines inside fenced code blocks."""
    inside: set[int] = set()
    fence = None
    for i, line in enumerate(lines):
        m = FENCE.match(line)
        if m:
            marker = m.group(1)[0] * 3
            if fence is None:
                fence = marker
                continue
            if line.strip().startswith(fence):
                fence = None
                continue
        if fence is not None:
            inside.add(i)
    return inside


def _code_lines_rst(lines: list[str]) -> set[int]:
    """0-based indices of lines inside literal / code-block directives (indented bodies)."""
    inside: set[int] = set()
    i = 0
    while i < len(lines):
        m = RST_BLOCK.match(lines[i])
        if not m:
            i += 1
            continue
        base = len(m.group(1))
        j = i + 1
        while j < len(lines):
            text = lines[j]
            if text.strip() == "":
                j += 1
                continue
            indent = len(text) - len(text.lstrip())
            if indent <= base:
                break
            inside.add(j)
            j += 1
        i = j
    return inside


def _construct(kind: str, lines: list[str], i: int, start: int, form: str) -> str:
    """A short, heuristic name of the construct around a launch (corrected by hand in review)."""
    line = lines[i]
    before = line[:start]
    window = "\n".join(lines[max(0, i - 12) : i + 1])
    tags = []
    word = line[start:]
    if word.startswith("sglang serve"):
        tags.append("sglang-serve")
    elif word.startswith("dynamo.sglang"):
        tags.append("dynamo")
    if form == "kwarg":
        tags.append("kwargs")
    if form == "other-args":
        tags.append("popen-other-args")
    if form in ("element", "item"):
        tags.append("argv-list")
    if re.search(r"\b(nsys|torchrun|accelerate|numactl|srun|mpirun|taskset)\b", before):
        tags.append("wrapper")
    if re.search(r"(^|\s)[A-Z_][A-Z0-9_]*=\S*\s", before) and form == "word":
        tags.append("env-prefix")
    if re.search(r"docker (run|exec)", window):
        tags.append("docker")
    if re.search(r"<<-?\s*['\"]?\w+", window):
        tags.append("heredoc")
    if re.search(r"\b(bash|sh)\s+-c\b", window):
        tags.append("bash-c")
    if re.search(r"^\s*(local\s+(-a\s+)?)?[A-Za-z_]\w*\+?=\(", "\n".join(lines[max(0, i - 2) : i + 1]), re.M):
        tags.append("array")
    elif re.search(r"^\s*(local\s+)?[A-Za-z_]\w*\+?=[\"']", line):
        tags.append("string-var")
    if "#SBATCH" in "\n".join(lines[:60]):
        tags.append("slurm")
    if re.search(r"\bexec\s+\S*python|\bexec\s+sglang", before):
        tags.append("exec")
    if kind == "notebook" and before.lstrip().startswith('"!'):
        tags.append("bang")
    return "+".join(dict.fromkeys(tags)) or "plain"


def _plant_for_word(lines: list[str], i: int, m: re.Match, kind: str) -> Plant:
    line = lines[i]
    start, end = m.start(), m.end()
    token = m.group(0)
    before = line[:start]
    after = line[end:]
    # a YAML block-sequence item that is exactly the word
    item = re.match(r"^(\s*)-\s+([\"']?)" + re.escape(token) + r"\2\s*$", line)
    if item:
        indent = item.group(1)
        return Plant(i + 1, len(line), line[start:], f"\n{indent}- {CANARY_FLAG}", i + 2, "item",
                     _construct(kind, lines, i, start, "item"))
    # a whole quoted list element: "sglang.launch_server" (possibly JSON-escaped in a notebook)
    for quote in ('\\"', '"', "'"):
        if before.endswith(quote) and after.startswith(quote):
            anchor_end = end + len(quote)
            return Plant(i + 1, anchor_end, line[start - len(quote) : anchor_end], f", {quote}{CANARY_FLAG}{quote}", i + 1,
                         "element", _construct(kind, lines, i, start, "element"))
    return Plant(i + 1, end, token, f" {CANARY_FLAG}", i + 1, "word",
                 _construct(kind, lines, i, start, "word"))


def locate(path: Path, text: str | None = None) -> list[Plant]:
    kind = _kind_of(path)
    if text is None:
        text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    if kind in ("markdown",):
        allowed = _code_lines_markdown(lines)
    elif kind == "rst":
        allowed = _code_lines_rst(lines)
    else:
        allowed = set(range(len(lines)))
    comment = _comment_prefix(kind)
    plants: list[Plant] = []
    for i, line in enumerate(lines):
        if i not in allowed:
            continue
        stripped = line.lstrip()
        if comment and stripped.startswith(comment) and not stripped.startswith("#!"):
            continue
        if kind == "notebook" and re.match(r'^\s*"#', line):
            continue
        if NOT_A_LAUNCH_LINE.search(line):
            continue
        for m in LAUNCH_WORD.finditer(line):
            plants.append(_plant_for_word(lines, i, m, kind))
        if kind in ("python", "notebook", "markdown", "rst"):
            for m in KWARG_CALL.finditer(line):
                head = line[: m.start()]
                if re.search(r"\b(class|def)\s+$", head) or re.search(r"\w$", head):
                    continue
                col = m.end()
                plants.append(Plant(i + 1, col, line[m.start() : col], f"{CANARY_KWARG}, ", i + 1, "kwarg",
                                    _construct(kind, lines, i, m.start(), "kwarg")))
            if POPEN.search(line) or (i and any(POPEN.search(x) for x in lines[max(0, i - 6) : i])):
                for m in OTHER_ARGS.finditer(line):
                    col = m.end()
                    plants.append(Plant(i + 1, col, line[m.start() : col], f'"{CANARY_FLAG}", ', i + 1, "other-args",
                                        _construct(kind, lines, i, m.start(), "other-args")))
    return plants


def main(argv: list[str]) -> int:
    for name in argv:
        path = Path(name)
        print(json.dumps({"file": name, "launches": [asdict(p) for p in locate(path)]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
