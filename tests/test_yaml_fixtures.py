"""The realistic YAML fixtures under ``tests/fixtures/yaml/`` pin the checker's output end to end.

Every ``.yaml``/``.yml``/``.sh`` file there has a ``.out`` next to it (``x.yaml`` → ``x.out``)
holding exactly what ``sglang-lsp check --format concise --ignore SGL1 <path>`` prints when run
from the repository root (knowledge-base rules, SGL100 and up, have fixtures of their own). An
empty ``.out`` means the file must produce nothing (the unrelated manifest, the Helm values).

Regenerate after a deliberate change, then read every diff and check each line:column by eye
(the column must be the flag or value token itself)::

    PYTHONPATH=server python tests/test_yaml_fixtures.py --regen

The YAML ``ok`` cases of the YAML rules (``tests/fixtures/rules/SGL02x/ok/*.yaml``) are checked
here too, since the per-rule runner only collects shell scripts as ok cases.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sglang_lsp.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "yaml"
RULE_FIXTURES = ROOT / "tests" / "fixtures" / "rules"
YAML_RULES = ["SGL022", "SGL023", "SGL024", "SGL025", "SGL026"]
ARGS = ["check", "--format", "concise", "--ignore", "SGL1,SGL2"]


def _inputs() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".yaml", ".yml", ".sh"))


INPUTS = _inputs()


def _rel(p: Path) -> str:
    return p.relative_to(ROOT).as_posix()


def _run(argv: list[str], capsys) -> tuple[str, str]:
    capsys.readouterr()
    main(argv)
    captured = capsys.readouterr()
    return captured.out, captured.err


@pytest.fixture
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_the_fixture_set_covers_every_form():
    names = {_rel(p) for p in INPUTS}
    for required in (
        "tests/fixtures/yaml/lws_deepseek.yaml",  # LeaderWorkerSet leader + worker
        "tests/fixtures/yaml/statefulset_bash_c.yaml",  # bash -c block scalar, $(POD_INDEX)
        "tests/fixtures/yaml/docker-compose.yml",  # folded multi-line command
        "tests/fixtures/yaml/config_beside/serve-config.yaml",  # --config file …
        "tests/fixtures/yaml/config_beside/launch.sh",  # … with a launch script beside it
        "tests/fixtures/yaml/helm/templates/deployment.yaml",  # Helm template
        "tests/fixtures/yaml/github/smoke-test.yml",  # GitHub Actions
        "tests/fixtures/yaml/skypilot-task.yaml",  # SkyPilot
        "tests/fixtures/yaml/unrelated_nginx.yaml",  # must produce nothing
    ):
        assert required in names


@pytest.mark.parametrize("path", INPUTS, ids=[_rel(p) for p in INPUTS])
def test_fixture_output(path, capsys, at_root):
    expected_file = path.with_suffix(".out")
    assert expected_file.is_file(), f"write {_rel(expected_file)} (see the module docs)"
    out, err = _run(ARGS + [_rel(path)], capsys)
    assert "internal error" not in err, err
    assert out == expected_file.read_text(encoding="utf-8")


def test_unrelated_files_produce_nothing(capsys, at_root):
    for name in ("unrelated_nginx.yaml", "sglang_image_no_launch.yaml", "helm/values.yaml", "helm/Chart.yaml",
                 "config_beside/kustomization.yaml"):
        assert (FIXTURES / name).with_suffix(".out").read_text(encoding="utf-8") == ""


def test_every_pinned_finding_sits_on_a_token(capsys, at_root):
    """The column of every pinned finding is the start of a token (a flag, a value, a key, a
    marker), never indentation or the `- ` of a list item (SGL012 marks whitespace itself)."""
    for out_file in sorted(FIXTURES.rglob("*.out")):
        for line in out_file.read_text(encoding="utf-8").splitlines():
            path, lineno, col, rest = line.split(":", 3)
            if " SGL012 " in rest:
                continue
            text = (ROOT / path).read_text(encoding="utf-8").splitlines()[int(lineno) - 1]
            ch = text[int(col) - 1]
            assert not ch.isspace() and not text[int(col) - 1 :].startswith("- "), (line, text)


@pytest.mark.parametrize("code", YAML_RULES)
def test_yaml_ok_cases_of_the_yaml_rules(code, capsys, at_root):
    cases = sorted([*(RULE_FIXTURES / code / "ok").glob("*.yaml"), *(RULE_FIXTURES / code / "ok").glob("*.yml")])
    assert cases, f"{code} has no YAML ok case"
    for case in cases:
        out, err = _run(["check", "--format", "concise", "--select", code, _rel(case)], capsys)
        assert "internal error" not in err, err
        assert out == "", f"{_rel(case)} should produce no {code}:\n{out}"


def _regenerate() -> int:  # pragma: no cover - maintenance helper
    import contextlib
    import io
    import os

    os.chdir(ROOT)
    for path in INPUTS:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            main(ARGS + [_rel(path)])
        target = path.with_suffix(".out")
        if not target.is_file() or target.read_text(encoding="utf-8") != buf.getvalue():
            target.write_text(buf.getvalue(), encoding="utf-8")
            print(f"wrote {_rel(target)}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    if sys.argv[1:] == ["--regen"]:
        sys.exit(_regenerate())
    print(__doc__)
