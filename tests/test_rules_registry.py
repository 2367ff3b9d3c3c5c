"""The rule registry and the rule docs agree with each other and with the code.

* codes are unique and look like ``SGL000``; names are unique kebab-case;
* every registered rule has ``rules/docs/<CODE>.md`` with the five sections, in order, and no
  doc exists without a rule;
* every code the engine's source emits is registered;
* the examples in the docs are linted: the bad example produces the doc's code, the
  "Use instead:" example does not.

Doc example format (the ``## Example`` section): the fenced blocks before the line
``Use instead:`` are the bad example, the fenced blocks after it the good one. A ```bash block
is checked as a shell script; a ```yaml block is written to the file its first line names
(``# name.yaml``, else ``config.yaml``) so that a ```bash block beside it can pass it to
``--config``; a ```yaml block alone is checked as a config file. A doc whose example cannot be
checked says so with ``<!-- example: not-checked: reason -->`` in its Example section.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from sglang_lsp import rules
from sglang_lsp.engine.check import check

ROOT = Path(__file__).resolve().parents[1]
SOURCE_DIR = ROOT / "server" / "sglang_lsp"
REPO_DOCS_DIR = SOURCE_DIR / "rules" / "docs"

CODE_RE = re.compile(r"^SGL\d{3}$")
NAME_RE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
EMITTED_RE = re.compile(r"""["'](SGL\d{3})["']""")
NOT_CHECKED_RE = re.compile(r"<!--\s*example:\s*not-checked:\s*(?P<reason>.+?)\s*-->", re.S)
FENCE_RE = re.compile(r"^```(?P<lang>[A-Za-z0-9_-]*)[ \t]*\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)
YAML_NAME_RE = re.compile(r"^#\s*(?P<name>[\w.-]+\.ya?ml)\s*$")

CODES = [r.code for r in rules.RULES]


def _docs_dir() -> Path:
    """The docs in the checkout; fall back to the installed package's copy."""
    return REPO_DOCS_DIR if REPO_DOCS_DIR.is_dir() else rules.DOCS_DIR


def _doc_text(code: str) -> str:
    return (_docs_dir() / f"{code}.md").read_text(encoding="utf-8")


def _sections(text: str) -> dict[str, str]:
    """``## `` heading → body, outside fenced blocks."""
    out: dict[str, str] = {}
    current = None
    in_fence = False
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            in_fence = not in_fence
        if not in_fence and line.startswith("## "):
            current = line[3:].strip()
            out[current] = ""
            continue
        if current is not None:
            out[current] += line
    return out


def _headings(text: str) -> list[str]:
    return list(_sections(text))


# --- registry ---------------------------------------------------------------------------


def test_codes_are_unique_and_well_formed():
    assert len(CODES) == len(set(CODES)), [c for c in CODES if CODES.count(c) > 1]
    bad = [c for c in CODES if not CODE_RE.match(c)]
    assert not bad, f"codes not of the form SGL000: {bad}"


def test_names_are_unique_kebab_case():
    names = [r.name for r in rules.RULES]
    assert len(names) == len(set(names)), [n for n in names if names.count(n) > 1]
    bad = [n for n in names if not NAME_RE.match(n)]
    assert not bad, f"names not in kebab-case: {bad}"


def test_registry_lookup_matches_list():
    assert list(rules.registry()) == CODES
    for r in rules.RULES:
        assert rules.get(r.code) is r
        assert r.summary.strip(), r.code
        assert r.code in r.url


def test_every_emitted_code_is_registered():
    emitted: dict[str, set[str]] = {}
    for path in sorted(SOURCE_DIR.rglob("*.py")):
        for code in EMITTED_RE.findall(path.read_text(encoding="utf-8")):
            emitted.setdefault(code, set()).add(str(path.relative_to(ROOT)))
    assert emitted, "no code literals found: has the source moved?"
    unregistered = {c: sorted(p) for c, p in emitted.items() if c not in rules.registry()}
    assert not unregistered, f"codes emitted but not registered: {unregistered}"


# --- docs -------------------------------------------------------------------------------


@pytest.mark.parametrize("code", CODES)
def test_rule_has_doc_with_sections_in_order(code):
    path = _docs_dir() / f"{code}.md"
    assert path.is_file(), f"{code} has no doc at {path}"
    headings = _headings(path.read_text(encoding="utf-8"))
    assert headings == list(rules.DOC_SECTIONS), f"{code}: sections {headings}"


@pytest.mark.parametrize("code", CODES)
def test_registered_doc_path_exists(code):
    # what `sglang-lsp rule CODE` reads (the installed package when tests run against one)
    assert rules.get(code).doc_path.is_file()


def test_no_doc_without_rule():
    docs = {p.stem for p in _docs_dir().glob("*.md")}
    orphans = sorted(docs - set(CODES))
    assert not orphans, f"docs without a registered rule: {orphans}"


# --- doc examples -----------------------------------------------------------------------


@dataclass
class Block:
    lang: str
    body: str


def _example(code: str) -> tuple[list[Block], list[Block], str | None]:
    """(bad blocks, good blocks, not-checked reason) of a doc's Example section."""
    section = _sections(_doc_text(code))["Example"]
    skip = NOT_CHECKED_RE.search(section)
    parts = re.split(r"^Use instead:\s*$", section, maxsplit=1, flags=re.M)
    assert len(parts) == 2, f"{code}: the Example section needs a 'Use instead:' line"

    def blocks(text: str) -> list[Block]:
        return [Block(m["lang"].lower(), m["body"]) for m in FENCE_RE.finditer(text)]

    return blocks(parts[0]), blocks(parts[1]), skip["reason"] if skip else None


def _lint_blocks(blocks: list[Block], directory: Path, tag: str) -> list[str]:
    """Write the blocks like files of one project and check them; codes found."""
    directory.mkdir(parents=True)
    shells = [b for b in blocks if b.lang in ("bash", "sh", "shell")]
    yamls = [b for b in blocks if b.lang in ("yaml", "yml")]
    assert len(shells) + len(yamls) == len(blocks), f"{tag}: unexpected block languages {[b.lang for b in blocks]}"
    yaml_paths = []
    for i, block in enumerate(yamls):
        first = block.body.split("\n", 1)[0]
        m = YAML_NAME_RE.match(first)
        name = m["name"] if m else ("config.yaml" if i == 0 else f"config{i}.yaml")
        path = directory / name
        path.write_text(block.body, encoding="utf-8")
        yaml_paths.append(path)
    codes: list[str] = []
    if shells:
        for i, block in enumerate(shells):
            path = directory / f"example{i}.sh"
            path.write_text(block.body, encoding="utf-8")
            codes += [f.code for f in check(block.body, str(path))]
    else:
        for path in yaml_paths:
            codes += [f.code for f in check(path.read_text(encoding="utf-8"), str(path))]
    return codes


@pytest.mark.parametrize("code", CODES)
def test_doc_example_shape(code):
    bad, good, _ = _example(code)
    assert bad, f"{code}: no fenced block before 'Use instead:'"
    assert good, f"{code}: no fenced block after 'Use instead:'"
    for block in bad + good:
        assert block.lang in ("bash", "yaml"), f"{code}: example blocks are ```bash or ```yaml, not {block.lang!r}"


@pytest.mark.parametrize("code", CODES)
def test_doc_bad_example_is_reported(code, tmp_path):
    bad, _, skip = _example(code)
    if skip:
        pytest.skip(f"{code}: example not checked: {skip}")
    codes = _lint_blocks(bad, tmp_path / "bad", code)
    assert code in codes, f"{code}: the bad example produces {sorted(set(codes))}"


@pytest.mark.parametrize("code", CODES)
def test_doc_good_example_is_clean(code, tmp_path):
    _, good, skip = _example(code)
    if skip:
        pytest.skip(f"{code}: example not checked: {skip}")
    codes = _lint_blocks(good, tmp_path / "good", code)
    assert code not in codes, f"{code}: the 'Use instead' example still produces {code}"


def test_not_checked_examples_stay_rare():
    skipped = [c for c in CODES if _example(c)[2]]
    assert len(skipped) <= 2, f"too many docs with unchecked examples: {skipped}"


# --- which module emits each code, and the safety of its fixes ---------------------------------


def _emitters() -> tuple[dict[str, set[str]], list[str]]:
    """Code → the modules whose source calls ``finding(code, …)`` with it (a literal, a module
    constant, or either branch of a conditional expression), and the calls whose code is neither
    (only the knowledge-base evaluation, which emits its rules' codes, may make those)."""
    import ast

    out: dict[str, set[str]] = {}
    dynamic = []
    for path in sorted(SOURCE_DIR.rglob("*.py")):
        module = ".".join(path.relative_to(SOURCE_DIR).with_suffix("").parts).removesuffix(".__init__")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        consts = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
                  and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
                  for t in n.targets if isinstance(t, ast.Name)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and node.args and (
                    (isinstance(node.func, ast.Name) and node.func.id == "finding")
                    or (isinstance(node.func, ast.Attribute) and node.func.attr == "finding"
                        and isinstance(node.func.value, ast.Name) and node.func.value.id == "rules"))):
                continue
            arg = node.args[0]
            options = [arg.body, arg.orelse] if isinstance(arg, ast.IfExp) else [arg]
            for option in options:
                if isinstance(option, ast.Constant):
                    out.setdefault(option.value, set()).add(module)
                elif isinstance(option, ast.Name) and option.id in consts:
                    out.setdefault(consts[option.id], set()).add(module)
                else:
                    dynamic.append(f"{module}:{node.lineno}")
    return out, dynamic


def test_registry_names_the_modules_that_emit_each_code():
    emitters, dynamic = _emitters()
    assert all(where.startswith("checks.kb.evaluate:") for where in dynamic), dynamic
    assert dynamic, "the knowledge-base evaluation emits its rules' codes"
    kb = {r.code for r in rules.RULES if r.code >= "SGL100"}
    for rule in rules.RULES:
        expected = {"checks.kb.evaluate"} if rule.code in kb else emitters.get(rule.code, set())
        assert set(rule.emitted_by) == expected, rule.code
    assert set(emitters) <= set(CODES)


def test_the_emitter_scan_finds_calls():
    """The scan above on the module it is most sure of (it would pass vacuously on none)."""
    emitters, _ = _emitters()
    assert emitters["SGL001"] == {"catalog.argv_findings", "extract.python"} and len(emitters) >= 40


def _fixture_findings():
    import json
    import subprocess
    import sys

    paths = [str(ROOT / "tests" / "fixtures" / "rules"), str(ROOT / "examples")]
    proc = subprocess.run([sys.executable, "-m", "sglang_lsp.cli.main", "check", "--isolated", "--format", "json",
                           "--exit-zero", *paths], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["diagnostics"]


@pytest.fixture(scope="module")
def fixture_findings():
    return _fixture_findings()


def test_fix_safety_is_declared_for_what_each_rule_offers(fixture_findings):
    """Every fix a rule offers on the fixtures and examples has a safety its registry entry
    declares (a rule that declares none offers none), and each declared safety is seen."""
    seen: dict[str, set[str]] = {}
    for d in fixture_findings:
        seen.setdefault(d["code"], set()).update(f["applicability"] for f in d["fixes"])
    for code, safeties in sorted(seen.items()):
        assert safeties <= set(rules.get(code).fixes), (code, sorted(safeties), rules.get(code).fixes)
    unseen = [(r.code, s) for r in rules.RULES if r.code < "SGL100" and r.code in seen
              for s in r.fixes if s not in seen[r.code]]
    assert not unseen, f"declared fix safeties no fixture shows: {unseen}"


@pytest.mark.parametrize("code", CODES)
def test_fix_safety_section_agrees_with_the_registry(code):
    section = _sections(_doc_text(code)).get("Fix safety", "").strip()
    says_none = bool(re.match(r"(No|There is no)( automatic)? fix\b", section))
    assert says_none == (not rules.get(code).fixes), (code, section[:80], rules.get(code).fixes)
