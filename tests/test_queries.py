"""The tree-sitter queries in grammar_queries/: they compile, carry their header, and catch
what their caret fixtures say they catch.

Caret fixtures live in ``tests/fixtures/queries/<lang>/<purpose>.<ext>`` (``.sh`` for bash,
``.yaml`` for yaml, ``.md``, ``.rst``, ``.py`` and ``.Dockerfile`` for the others), one per query. A comment line of the form ::

    #     ^^^^^^^ @command.name

asserts that the query captures, as ``@command.name``, exactly the characters under the
carets on the nearest line above that is not itself an assertion (tree-sitter's own test
style). ``# <- @name`` asserts a capture that starts at the column of the ``#``. A ``!`` in
front of the name (``!@comment``) asserts the opposite: no capture of that name overlaps the
marked range (for ``<-``: none starts there). Every capture a query documents in its header
(helpers starting with ``@_`` excepted) must be asserted positively at least once.
"""

from __future__ import annotations

import importlib.metadata
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from sglang_lsp.base import queries

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "queries"
FIXTURE_EXT = {"bash": ".sh", "yaml": ".yaml", "markdown": ".md", "rst": ".rst", "python": ".py",
               "dockerfile": ".Dockerfile"}
GRAMMAR_PACKAGE = {"bash": "tree-sitter-bash", "yaml": "tree-sitter-yaml", "markdown": "tree-sitter-markdown",
                   "rst": "tree-sitter-rst", "python": "tree-sitter-python", "dockerfile": "tree-sitter-containerfile"}
# predicates py-tree-sitter evaluates itself (design notes, house style 4)
EVALUATED_PREDICATES = {
    "eq?", "not-eq?", "any-eq?", "any-not-eq?", "match?", "not-match?", "any-match?",
    "any-not-match?", "any-of?", "not-any-of?",
}

QUERY_FILES = sorted(queries.queries_dir().glob("*/*.scm"))
QUERY_IDS = [f"{p.parent.name}/{p.stem}" for p in QUERY_FILES]


def _header(text: str) -> str:
    lines = []
    for line in text.splitlines():
        if not line.startswith(";"):
            break
        lines.append(line)
    return "\n".join(lines)


def _body(text: str) -> str:
    # drop comments (a `;` outside a string starts one; queries here keep `;` out of strings)
    return "\n".join(line.split(";", 1)[0] if '"' not in line else line for line in text.splitlines())


def _documented_captures(text: str) -> set[str]:
    return set(re.findall(r"@([A-Za-z][\w.]*)", _header(text)))


def _used_captures(text: str) -> set[str]:
    return set(re.findall(r"@([A-Za-z_][\w.]*)", _body(text)))


# --- the queries themselves ---------------------------------------------------------------


def test_there_are_queries():
    assert QUERY_IDS, f"no .scm files under {queries.queries_dir()}"
    assert "bash/script" in QUERY_IDS


@pytest.mark.parametrize("path", QUERY_FILES, ids=QUERY_IDS)
def test_query_compiles_against_pinned_grammar(path: Path):
    lang, purpose = path.parent.name, path.stem
    compiled = queries.query(lang, purpose)
    assert compiled.pattern_count > 0


@pytest.mark.parametrize("path", QUERY_FILES, ids=QUERY_IDS)
def test_query_header(path: Path):
    text = path.read_text(encoding="utf-8")
    assert text.startswith(";"), f"{path.name} must open with a `;` comment header"
    header = _header(text)
    for section in ("Purpose:", "Captures:", "Grammar:"):
        assert section in header, f"{path.name}: header lacks {section!r}"


@pytest.mark.parametrize("path", QUERY_FILES, ids=QUERY_IDS)
def test_query_header_names_the_installed_grammar(path: Path):
    lang = path.parent.name
    header = _header(path.read_text(encoding="utf-8"))
    grammar_line = next(line for line in header.splitlines() if "Grammar:" in line)
    package = GRAMMAR_PACKAGE[lang]
    m = re.search(re.escape(package) + r"\s+(\d+)\.(\d+)", grammar_line)
    assert m, f"{path.name}: the Grammar line should name {package} and its version: {grammar_line!r}"
    installed = importlib.metadata.version(package).split(".")
    assert (m.group(1), m.group(2)) == (installed[0], installed[1]), (
        f"{path.name} was written for {package} {m.group(1)}.{m.group(2)}, installed is "
        f"{'.'.join(installed)}"
    )
    abi = re.search(r"ABI\s+(\d+)", grammar_line)
    if abi:
        assert int(abi.group(1)) == queries.language(lang).abi_version


@pytest.mark.parametrize("path", QUERY_FILES, ids=QUERY_IDS)
def test_query_captures_are_documented(path: Path):
    text = path.read_text(encoding="utf-8")
    used = {c for c in _used_captures(text) if not c.startswith("_")}
    documented = _documented_captures(text)
    assert used <= documented, f"{path.name}: undocumented captures {sorted(used - documented)}"
    compiled = queries.query(path.parent.name, path.stem)
    names = {compiled.capture_name(i) for i in range(compiled.capture_count)}
    assert used == {n for n in names if not n.startswith("_")}


@pytest.mark.parametrize("path", QUERY_FILES, ids=QUERY_IDS)
def test_query_uses_only_evaluated_predicates(path: Path):
    predicates = set(re.findall(r"\(#([\w-]+[?!])", _body(path.read_text(encoding="utf-8"))))
    assert predicates <= EVALUATED_PREDICATES, f"{path.name}: {sorted(predicates - EVALUATED_PREDICATES)}"


# --- caret fixtures -------------------------------------------------------------------------

_ASSERTION = re.compile(r"^(?P<indent>[ \t]*)#(?P<gap>[ \t]*)(?P<mark>\^+|<-)[ \t]+(?P<neg>!?)@(?P<name>[\w.]+)[ \t]*$")


@dataclass(frozen=True)
class Assertion:
    line: int  # 0-based source line the carets point at
    start: int  # byte column
    end: int  # byte column (exclusive); == start for `<-`
    name: str
    negative: bool
    arrow: bool
    fixture_line: int  # 1-based line of the assertion itself (for messages)


def parse_assertions(text: str) -> list[Assertion]:
    out: list[Assertion] = []
    target: int | None = None
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = _ASSERTION.match(line)
        if not m:
            target = i
            continue
        assert target is not None, f"assertion on line {i + 1} has no source line above it"
        src = lines[target]
        if m.group("mark") == "<-":
            c_start = c_end = len(m.group("indent"))
        else:
            c_start = m.start("mark")
            c_end = m.end("mark")
        assert c_end <= len(src), f"line {i + 1}: carets run past the end of line {target + 1}"
        b_start = len(src[:c_start].encode("utf-8"))
        b_end = len(src[:c_end].encode("utf-8"))
        out.append(Assertion(target, b_start, b_end, m.group("name"), bool(m.group("neg")),
                             m.group("mark") == "<-", i + 1))
    return out


def _fixture_for(path: Path) -> Path:
    lang = path.parent.name
    return FIXTURES / lang / f"{path.stem}{FIXTURE_EXT[lang]}"


def _captures(lang: str, purpose: str, data: bytes) -> dict[str, list[tuple[tuple[int, int], tuple[int, int]]]]:
    tree = queries.parser(lang).parse(data)
    caps = queries.captures(lang, purpose, tree.root_node)
    return {name: [(tuple(n.start_point), tuple(n.end_point)) for n in nodes] for name, nodes in caps.items()}


def test_parse_assertions_reads_columns():
    text = "  python3 -m x\n# ^^^^^^^ @command.name\n#  <- nothing\nX=1\n# <- !@command.name\n"
    got = parse_assertions(text)
    assert got[0] == Assertion(0, 2, 9, "command.name", False, False, 2)
    assert got[1] == Assertion(3, 0, 0, "command.name", True, True, 5)
    assert len(got) == 2


# queries whose caret fixture must exist; a query outside this set without a fixture is
# reported as skipped (add it here once its fixture is written)
REQUIRED_FIXTURES = {"bash/script", "bash/comments", "markdown/code_blocks", "rst/code_blocks",
                     "python/launches", "dockerfile/instructions"}


@pytest.mark.parametrize("path", QUERY_FILES, ids=QUERY_IDS)
def test_every_query_has_a_caret_fixture(path: Path):
    fixture = _fixture_for(path)
    if not fixture.is_file() and f"{path.parent.name}/{path.stem}" not in REQUIRED_FIXTURES:
        pytest.skip(f"no caret fixture yet: write {fixture.relative_to(ROOT)} for {path.parent.name}/{path.name}")
    assert fixture.is_file(), f"write {fixture.relative_to(ROOT)} for {path.name}"


def test_required_fixtures_name_existing_queries():
    assert REQUIRED_FIXTURES <= set(QUERY_IDS)


@pytest.mark.parametrize("path", QUERY_FILES, ids=QUERY_IDS)
def test_caret_fixture(path: Path):
    fixture = _fixture_for(path)
    if not fixture.is_file():
        pytest.skip(f"no fixture for {path.name} (reported by test_every_query_has_a_caret_fixture)")
    lang, purpose = path.parent.name, path.stem
    data = fixture.read_bytes()
    assertions = parse_assertions(data.decode("utf-8"))
    assert assertions, f"{fixture.name} has no assertions"
    caps = _captures(lang, purpose, data)
    failures = []
    for a in assertions:
        ranges = caps.get(a.name, [])
        if a.arrow:
            hit = any(s == (a.line, a.start) for s, _ in ranges)
        elif a.negative:
            hit = any(s < (a.line, a.end) and (a.line, a.start) < e for s, e in ranges)  # overlap
        else:
            hit = ((a.line, a.start), (a.line, a.end)) in ranges
        if hit == a.negative:
            where = f"{fixture.name}:{a.fixture_line}"
            what = f"line {a.line + 1}, bytes {a.start}-{a.end}"
            near = [f"{s[0] + 1}:{s[1]}-{e[0] + 1}:{e[1]}" for s, e in sorted(ranges) if s[0] <= a.line <= e[0]]
            failures.append(
                f"{where}: expected {'no ' if a.negative else ''}@{a.name} at {what}; "
                f"@{a.name} captures there (line:byte-line:byte): {near}"
            )
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("path", QUERY_FILES, ids=QUERY_IDS)
def test_caret_fixture_covers_every_documented_capture(path: Path):
    fixture = _fixture_for(path)
    if not fixture.is_file():
        pytest.skip(f"no fixture for {path.name} (reported by test_every_query_has_a_caret_fixture)")
    documented = {c for c in _documented_captures(path.read_text(encoding="utf-8")) if not c.startswith("_")}
    asserted = {a.name for a in parse_assertions(fixture.read_text(encoding="utf-8")) if not a.negative}
    assert documented <= asserted, f"{fixture.name} never shows {sorted(documented - asserted)}"
    unknown = asserted - documented
    assert not unknown, f"{fixture.name} asserts captures the query does not document: {sorted(unknown)}"
