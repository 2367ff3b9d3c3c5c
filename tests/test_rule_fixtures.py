"""One runner for the per-rule fixtures (actionlint's testdata/ok + testdata/err, Ruff's
fixture + snapshot).

Layout, for every registered code::

    tests/fixtures/rules/<CODE>/ok/*.sh        no finding of <CODE>
    tests/fixtures/rules/<CODE>/err/<case>.sh  `.out` = the exact output of
    tests/fixtures/rules/<CODE>/err/<case>.out   sglang-lsp check --format concise --select <CODE> <path>
                                                 run from the repository root, with <path> relative to it

A case may have ``<case>.args``: extra `check` options, one per line (e.g. ``--sglang-version``
and a release, for the version-aware rules), added before ``<path>``.

YAML files next to a case are the `--config` files its script names. A YAML file is a case of
its own in an ``err`` directory when it has a ``.out`` and no script of the same name, and in an
``ok`` directory when no script there names it.

Regenerate the expected outputs after a deliberate change with
``PYTHONPATH=server python tests/test_rule_fixtures.py --regen`` and read every diff: the cases
in ``KNOWN_ENGINE_BUGS`` hold hand-written expectations and are never regenerated.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

from sglang_lsp import rules
from sglang_lsp.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "rules"
MIN_CASES = 2

# Codes that cannot have err cases with the bundled catalogs, and why.
NO_ERR_CASES: dict[str, str] = {}

# Cases whose expectation (the .out, or "no finding" for ok cases) is what sglang does and the
# engine does not do yet. strict: when the engine is fixed the test fails until the entry goes.
KNOWN_ENGINE_BUGS: dict[str, str] = {}


@dataclasses.dataclass(frozen=True)
class Case:
    code: str
    kind: str  # "ok" | "err"
    path: Path

    @property
    def rel(self) -> str:
        return self.path.relative_to(ROOT).as_posix()

    @property
    def key(self) -> str:
        return self.path.relative_to(FIXTURES).as_posix()

    @property
    def out(self) -> Path:
        return self.path.with_suffix(".out")

    @property
    def extra_args(self) -> list[str]:
        args = self.path.with_suffix(".args")
        return args.read_text(encoding="utf-8").split() if args.is_file() else []


def collect_cases() -> list[Case]:
    cases = []
    if not FIXTURES.is_dir():
        return cases
    for code_dir in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        code = code_dir.name
        for kind in ("ok", "err"):
            directory = code_dir / kind
            if not directory.is_dir():
                continue
            scripts = sorted(directory.glob("*.sh"))
            cases += [Case(code, kind, p) for p in scripts]
            yamls = sorted([*directory.glob("*.yaml"), *directory.glob("*.yml")])
            if kind == "ok":
                # a YAML file no script of the directory names (as its --config) is a case of its own
                named = "\n".join(p.read_text(encoding="utf-8") for p in scripts)
                cases += [Case(code, kind, p) for p in yamls if p.name not in named]
            if kind == "err":
                stems = {p.stem for p in scripts}
                cases += [
                    Case(code, kind, p)
                    for p in sorted([*directory.glob("*.yaml"), *directory.glob("*.yml")])
                    if p.stem not in stems and p.with_suffix(".out").is_file()
                ]
    return cases


CASES = collect_cases()


def _param(case: Case):
    marks = []
    if case.key in KNOWN_ENGINE_BUGS:
        marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_ENGINE_BUGS[case.key]))
    return pytest.param(case, id=case.key, marks=marks)


def run_check(case: Case, capsys) -> tuple[str, str]:
    capsys.readouterr()
    main(["check", "--format", "concise", "--select", case.code, *case.extra_args, case.rel])
    captured = capsys.readouterr()
    return captured.out, captured.err


@pytest.fixture
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


@pytest.mark.parametrize("case", [_param(c) for c in CASES if c.kind == "ok"])
def test_ok_case_has_no_finding(case, capsys, at_root):
    out, err = run_check(case, capsys)
    assert "internal error" not in err, err
    assert out == "", f"{case.rel} should produce no {case.code}:\n{out}"


@pytest.mark.parametrize("case", [_param(c) for c in CASES if c.kind == "err"])
def test_err_case_matches_expected_output(case, capsys, at_root):
    assert case.out.is_file(), f"{case.rel} has no expected output {case.out.name}"
    out, err = run_check(case, capsys)
    assert "internal error" not in err, err
    expected = case.out.read_text(encoding="utf-8")
    assert expected.strip(), f"{case.out.name} is empty: an err case must produce {case.code}"
    assert all(f" {case.code} " in line for line in expected.splitlines()), case.out.name
    assert out == expected


def test_fixture_dirs_are_registered_codes():
    unknown = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and p.name not in rules.registry())
    assert not unknown, f"fixture directories for unregistered codes: {unknown}"


@pytest.mark.parametrize("code", [r.code for r in rules.RULES])
def test_every_rule_has_fixtures(code):
    ok = [c for c in CASES if c.code == code and c.kind == "ok"]
    err = [c for c in CASES if c.code == code and c.kind == "err"]
    assert len(ok) >= MIN_CASES, f"{code}: {len(ok)} ok cases"
    if code in NO_ERR_CASES:
        assert not err, f"{code} has err cases now: remove it from NO_ERR_CASES"
        return
    assert len(err) >= MIN_CASES, f"{code}: {len(err)} err cases"


def test_no_stray_expected_outputs():
    cases = {c.path.with_suffix("") for c in CASES}
    stray = [p.relative_to(ROOT).as_posix() for p in FIXTURES.rglob("*.out") if p.with_suffix("") not in cases]
    assert not stray, f".out files without a case: {stray}"


def test_known_engine_bugs_name_existing_cases():
    keys = {c.key for c in CASES}
    assert not sorted(set(KNOWN_ENGINE_BUGS) - keys)


def test_retired_flag_with_a_patched_catalog(monkeypatch, tmp_path):
    """SGL015 cannot fire with the bundled 0.5.23 catalog; check its code path with a copy of the
    catalog in which one deprecated flag refuses itself, as sglang's DeprecatedAction with
    ``error_message=`` does."""
    from sglang_lsp.catalog import catalog as catalog_mod
    from sglang_lsp.engine import check as engine

    data = json.loads((catalog_mod.CATALOG_DIR / "sglang-0.5.23.json").read_text(encoding="utf-8"))
    for opt in data["options"]:
        if "--enable-dp-attention" in opt["option_strings"]:
            opt["rejects"] = True
    patched = catalog_mod.Catalog(data)
    monkeypatch.setattr(engine, "load_catalog", lambda version=None: patched)
    text = "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --dp-size 8 --enable-dp-attention\n"
    findings = engine.check(text, str(tmp_path / "launch.sh"))
    retired = [f for f in findings if f.code == "SGL015"]
    assert len(retired) == 1
    start = text.index("--enable-dp-attention")
    assert (retired[0].span.start, retired[0].span.end) == (start, start + len("--enable-dp-attention"))
    assert "--attn-dp-size" in retired[0].message
    assert not [f for f in findings if f.code == "SGL008"], "a retired flag is not also reported as deprecated"


def _regenerate() -> int:  # pragma: no cover - maintenance helper
    import contextlib
    import io
    import os

    os.chdir(ROOT)
    for case in CASES:
        if case.kind != "err" or case.key in KNOWN_ENGINE_BUGS:
            continue
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            main(["check", "--format", "concise", "--select", case.code, *case.extra_args, case.rel])
        if not case.out.is_file() or case.out.read_text(encoding="utf-8") != buf.getvalue():
            case.out.write_text(buf.getvalue(), encoding="utf-8")
            print(f"wrote {case.out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    if sys.argv[1:] == ["--regen"]:
        sys.exit(_regenerate())
    print(__doc__)
