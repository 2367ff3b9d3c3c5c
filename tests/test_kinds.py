"""ok/err fixtures per kind of file (issue 19 §3): Markdown/MDX, reStructuredText, Dockerfile,
Python, Jupyter notebooks and Helm charts, checked with every rule, as ``sglang-lsp check`` reads them.

Layout::

    tests/fixtures/kinds/<kind>/ok/<file>         no finding at all
    tests/fixtures/kinds/<kind>/err/<file>        `<file>.out` = the exact output of
                                                  sglang-lsp check --isolated --format concise <path>
                                                  run from the repository root
    tests/fixtures/kinds/<kind>/err/<file>.fixed  (optional) the file after --fix --unsafe-fixes

A Helm case is a chart directory (``Chart.yaml``, ``values.yaml``, ``templates/``); its cases are
the template files. Regenerate the expected outputs after a deliberate change with
``PYTHONPATH=server python tests/test_kinds.py --regen`` and read every diff.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from sglang_lsp.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "kinds"
KINDS = ("markdown", "rst", "dockerfile", "python", "notebook", "helm")


def _cases(kind: str, outcome: str) -> list[Path]:
    directory = FIXTURES / kind / outcome
    if kind == "helm":
        return sorted(p for p in directory.glob("*/templates/*") if p.suffix in (".yaml", ".tpl"))
    return sorted(p for p in directory.iterdir() if p.is_file() and p.suffix not in (".out", ".fixed"))


CASES = [(kind, outcome, path) for kind in KINDS for outcome in ("ok", "err") for path in _cases(kind, outcome)]


def _id(case) -> str:
    return case[2].relative_to(FIXTURES).as_posix()


def run_check(path: Path, capsys, *extra: str) -> tuple[str, str]:
    capsys.readouterr()
    main(["check", "--isolated", "--format", "concise", *extra, path.relative_to(ROOT).as_posix()])
    captured = capsys.readouterr()
    return captured.out, captured.err


@pytest.fixture
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_every_kind_has_ok_and_err_cases():
    for kind in KINDS:
        assert _cases(kind, "ok"), f"no ok case for {kind}"
        assert _cases(kind, "err"), f"no err case for {kind}"


@pytest.mark.parametrize("case", [c for c in CASES if c[1] == "ok"], ids=_id)
def test_ok_case_has_no_finding(case, capsys, at_root):
    out, err = run_check(case[2], capsys)
    assert "internal error" not in err, err
    assert out == "", f"{case[2].name} should produce nothing:\n{out}"


@pytest.mark.parametrize("case", [c for c in CASES if c[1] == "err"], ids=_id)
def test_err_case_matches_expected_output(case, capsys, at_root):
    path = case[2]
    expected_file = path.with_name(path.name + ".out")
    assert expected_file.is_file(), f"{path.name} has no expected output {expected_file.name}"
    out, err = run_check(path, capsys)
    assert "internal error" not in err, err
    expected = expected_file.read_text(encoding="utf-8")
    assert expected.strip(), f"{expected_file.name} is empty: an err case must produce findings"
    assert out == expected


@pytest.mark.parametrize("case", [c for c in CASES if c[2].with_name(c[2].name + ".fixed").is_file()], ids=_id)
def test_err_case_fixed(case, capsys, tmp_path, monkeypatch):
    path = case[2]
    copy = tmp_path / path.name
    shutil.copyfile(path, copy)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    main(["check", "--isolated", "--fix", "--unsafe-fixes", "--quiet", copy.name])
    assert copy.read_bytes() == path.with_name(path.name + ".fixed").read_bytes()


def _regenerate() -> int:  # pragma: no cover - maintenance helper
    import contextlib
    import io
    import os

    os.chdir(ROOT)
    for kind, outcome, path in CASES:
        if outcome != "err":
            continue
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
            main(["check", "--isolated", "--format", "concise", path.relative_to(ROOT).as_posix()])
        target = path.with_name(path.name + ".out")
        if not target.is_file() or target.read_text(encoding="utf-8") != buf.getvalue():
            target.write_text(buf.getvalue(), encoding="utf-8")
            print(f"wrote {target.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(_regenerate() if "--regen" in sys.argv else 0)
