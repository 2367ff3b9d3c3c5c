"""Version-aware checking: catalogs for every release of the flag history, the version-aware
findings SGL031–SGL033, `migrate`, user-built catalogs (`catalog build`) and their precedence."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest
from sglang_lsp.catalog import catalog as catalog_mod
from sglang_lsp.catalog import versions
from sglang_lsp.base.unknown import UNKNOWN
from sglang_lsp.catalog.argv import resolve
from sglang_lsp.catalog.catalog import Catalog, catalog_for
from sglang_lsp.cli.main import main
from sglang_lsp.engine.check import Options, check
from sglang_lsp.base.findings import Applicability, CheckError, Span
from sglang_lsp.base.invocation import Word

ORACLE_PYTHON = Path("/tmp/sglang-oracle-venv/bin/python")


def words(*args: str) -> list[Word]:
    return [Word(a, Span(0, 0)) for a in args]


def codes_at(text: str, version: str, needle: str) -> list[str]:
    start = text.index(needle)
    return [f.code for f in check(text, "x.sh", Options(sglang_version=version))
            if f.span.start <= start < max(f.span.end, f.span.start + 1)]


@pytest.fixture
def user_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(catalog_mod.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache" / "catalogs"


# --- version strings ---------------------------------------------------------------------------

@pytest.mark.parametrize(("given", "release"), [
    ("0.5.23", "0.5.23"), ("v0.5.23", "0.5.23"), (" V0.4.3 ", "0.4.3"),
    ("0.4.0.post1", "0.4.0.post1"), ("0.4.0-post1", "0.4.0.post1"), ("0.4.0post2", "0.4.0.post2"),
    ("0.5.23.post1", "0.5.23"),  # not published: read as its base release
    ("0.5.10+cu124", "0.5.10"),
])
def test_version_strings_are_normalised(given, release):
    assert versions.normalize(given) == release
    assert catalog_for(given).sglang_version == release


@pytest.mark.parametrize("bad", ["0.5.0", "0.3.9", "latest", "", "0.5.23rc1", "1.0"])
def test_unknown_versions_name_the_known_range(bad):
    with pytest.raises(CheckError, match=r"0\.4\.0 – 0\.5\.23"):
        catalog_for(bad)


def test_release_order_is_pep440():
    rel = list(versions.releases())
    assert sorted(rel, key=versions.release_key) == rel
    assert versions.release_key("0.4.10.post2") < versions.release_key("0.5.1")


# --- catalogs from the history -----------------------------------------------------------------

@pytest.mark.parametrize("release", versions.releases())
def test_every_release_has_a_catalog_with_its_flags(release):
    cat = catalog_for(release)
    assert cat.sglang_version == release
    assert cat.source == ("bundled" if release in catalog_mod.available_versions() else "history")
    expected = {f for f in versions.history()["flags"] if versions.segment(f, release) is not None}
    missing = sorted(f for f in expected if cat.lookup(f) is None)
    assert not missing
    # a launch with the model path only resolves without findings
    parsed = resolve(cat, words("--model-path", "m"), anchor=Span(0, 0))
    assert [f.code for f in parsed.findings] == []


def test_history_catalog_of_the_bundled_release_agrees_with_the_real_parser():
    real = catalog_for("0.5.23")
    derived = Catalog(versions.catalog_data("0.5.23"))
    assert set(real.by_string) == set(derived.by_string)
    switch_diff = [s for s, o in real.by_string.items() if o.is_switch != derived.by_string[s].is_switch]
    assert not switch_diff
    choice_diff = [s for s, o in real.by_string.items()
                   if s not in ("-h", "--help") and derived.by_string[s].choices is not None
                   and set(map(str, o.choices or ())) != set(map(str, derived.by_string[s].choices))]
    assert not choice_diff
    for s, o in real.by_string.items():
        other = derived.by_string[s]
        if o.dest == "help":
            continue
        assert o.is_switch or o.nargs == other.nargs, s
        assert o.type == other.type or other.type.startswith("custom:"), s
        assert o.default == other.default or other.dest in derived.unknown_defaults, s
        assert (o.deprecated, o.replacement, o.rejects) == (other.deprecated, other.replacement, other.rejects), s


def _segments(pred):
    for flag, entry in versions.history()["flags"].items():
        for seg in entry["segments"]:
            if pred(seg):
                yield flag, seg


def test_unknown_default_is_unknown_not_none():
    _, seg = next(_segments(lambda s: s.get("default_unknown")))
    cat = catalog_for(seg["until"])
    parsed = resolve(cat, words("--model-path", "m"), anchor=Span(0, 0))
    assert parsed.get(seg["dest"]) is UNKNOWN


def test_unknown_choices_are_not_judged():
    flag, seg = next(_segments(lambda s: "choices" in s and s["choices"] is None and s["action"] == "store"))
    cat = catalog_for(seg["until"])
    parsed = resolve(cat, words("--model-path", "m", flag, "surely-not-a-choice"), anchor=Span(0, 0))
    assert not [f for f in parsed.findings if f.code in ("SGL002", "SGL033")]


def test_unknown_value_types_are_not_judged():
    flag, seg = next(_segments(lambda s: s.get("type") == "human_readable_int" and s.get("action") == "store"))
    cat = catalog_for(seg["until"]) if seg["until"] not in catalog_mod.available_versions() else \
        Catalog(versions.catalog_data(seg["until"]))
    parsed = resolve(cat, words("--model-path", "m", flag, "12 parsecs"), anchor=Span(0, 0))
    assert not [f for f in parsed.findings if f.code == "SGL003"]
    # int stays judged
    parsed = resolve(cat, words("--model-path", "m", "--tp-size", "two"), anchor=Span(0, 0))
    assert [f.code for f in parsed.findings] == ["SGL003"]


def test_custom_action_without_recorded_nargs_takes_any_number_of_values():
    cat = catalog_for("0.5.14")
    assert cat.lookup("--lora-paths").nargs == "*"
    parsed = resolve(cat, words("--model-path", "m", "--lora-paths", "a=x", "b=y"), anchor=Span(0, 0))
    assert [f.code for f in parsed.findings] == []


# --- SGL031 / SGL032 / SGL033: one finding per token -------------------------------------------

LAUNCH = ("python -m sglang.launch_server --model-path m --enable-ep-moe --cuda-graph-max-bs 8 "
          "--attention-backend cutlass_mla --moe-a2a-backend deepep\n")


def test_removed_flag_replaces_unknown_flag():
    assert codes_at(LAUNCH, "0.5.23", "--enable-ep-moe") == ["SGL031"]
    f = next(f for f in check(LAUNCH, "x.sh") if f.code == "SGL031" and f.flag == "--enable-ep-moe")
    assert "after 0.5.4" in f.message and "--ep-size" in f.message


def test_removed_flag_that_is_now_an_ambiguous_prefix():
    assert codes_at(LAUNCH, "0.5.23", "--cuda-graph-max-bs") == ["SGL031"]
    f = next(f for f in check(LAUNCH, "x.sh") if f.flag == "--cuda-graph-max-bs")
    assert f.sglang_error.startswith("ambiguous option")
    assert [(x.title, x.applicability) for x in f.fixes] == [
        ("Rename to `--cuda-graph-max-bs-decode`", Applicability.SAFE)]


def test_removed_choice_replaces_invalid_choice():
    assert codes_at(LAUNCH, "0.5.23", "cutlass_mla") == ["SGL033"]


def test_newer_flag_and_newer_choice_on_an_old_target():
    assert codes_at(LAUNCH, "0.4.3", "--moe-a2a-backend") == ["SGL032"]
    text = "python -m sglang.launch_server --model-path m --attention-backend fa3\n"
    assert codes_at(text, "0.4.3", "fa3") == ["SGL033"]
    assert codes_at(text, "0.4.5", "fa3") == []


def test_flags_no_release_has_stay_sgl001():
    text = "python -m sglang.launch_server --model-path m --no-such-flag-anywhere 1 --attention-backend nope\n"
    assert codes_at(text, "0.4.3", "--no-such-flag-anywhere") == ["SGL001"]
    assert codes_at(text, "0.4.3", "nope") == ["SGL002"]


def test_config_key_of_a_removed_flag_is_renamed(tmp_path):
    (tmp_path / "cfg.yaml").write_text("model-path: m\ncuda-graph-max-bs: 8\n")
    script = tmp_path / "run.sh"
    script.write_text("python -m sglang.launch_server --config cfg.yaml\n")
    found = [f for f in check(script.read_text(), str(script)) if f.code == "SGL031"]
    assert len(found) == 1 and found[0].fixes[0].title == "Write the key as `cuda-graph-max-bs-decode`"


# --- KB rules only inside their release range --------------------------------------------------

def test_kb_rules_hold_only_inside_their_range_and_their_names_exist_there():
    from sglang_lsp.checks.kb.rule import kb_rules
    from sglang_lsp.checks.kb.index import validate_rule_names

    problems = []
    for rule in kb_rules():
        inside = [r for r in versions.releases() if rule.applies_to(r)]
        assert inside, f"{rule.code}: its range {rule.versions} holds no release of the history"
        for release in inside:
            problems += [f"{release}: {p}" for p in validate_rule_names(rule, catalog_for(release))]
    assert not problems


def _compared_choices(tree) -> list[tuple[str, str]]:
    """(dest, string literal) pairs a condition compares an `args.` name with."""
    out: list[tuple[str, str]] = []

    def lits(n):
        if n[0] == "lit" and isinstance(n[1], str):
            return [n[1]]
        if n[0] == "list":
            return [x[1] for x in n[1] if x[0] == "lit" and isinstance(x[1], str)]
        return []

    def walk(n):
        if not isinstance(n, tuple):
            return
        if n[0] == "cmp" and n[1] in ("==", "!=", "in", "not in"):
            for a, b in ((n[2], n[3]), (n[3], n[2])):
                if a[0] == "name" and a[1].startswith("args."):
                    out.extend((a[1][5:], v) for v in lits(b))
        for child in n[1:]:
            if isinstance(child, tuple):
                walk(child)
            elif isinstance(child, list):
                for x in child:
                    walk(x)

    walk(tree)
    return out


def test_kb_rule_choice_literals_are_choices_in_every_release_of_their_range():
    from sglang_lsp.checks.kb.rule import kb_rules

    problems = []
    checked = 0
    for rule in kb_rules():
        for release in (r for r in versions.releases() if rule.applies_to(r)):
            cat = catalog_for(release)
            for dest, value in _compared_choices(rule.condition.tree):
                for opt in cat.by_dest.get(dest, []):
                    if opt.choices is not None:
                        checked += 1
                        if value not in (str(c) for c in opt.choices):
                            problems.append(f"{rule.code} {release}: {value!r} is no choice of {opt.name}")
    assert checked > 50
    assert not problems


def test_kb_rules_do_not_fire_outside_their_range():
    text = ("python -m sglang.launch_server --model-path m --attention-backend flex_attention "
            "--speculative-algorithm EAGLE\n")
    assert "SGL120" in [f.code for f in check(text, "x.sh")]
    assert "SGL120" not in [f.code for f in check(text, "x.sh", Options(sglang_version="0.5.22"))]


# --- CLI: check --sglang-version, migrate --------------------------------------------------------

def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_check_accepts_any_history_release(tmp_path, capsys):
    f = tmp_path / "a.sh"
    f.write_text("python -m sglang.launch_server --model-path m --enable-ep-moe\n")
    code, out, _ = run(capsys, "check", "--format", "json", "--sglang-version", "v0.4.3", str(f))
    assert code == 0 and json.loads(out)["sglang_version"] == "0.4.3"
    code, out, _ = run(capsys, "check", "--format", "json", str(f))
    assert code == 1 and [d["code"] for d in json.loads(out)["diagnostics"]] == ["SGL031"]
    code, _, err = run(capsys, "check", "--sglang-version", "0.3.0", str(f))
    assert code == 2 and "0.4.0 – 0.5.23" in err


UPGRADE = textwrap.dedent("""\
    #!/bin/bash
    python3 -m sglang.launch_server \\
      --model-path m \\
      --cuda-graph-max-bs 256 \\
      --nsa-decode-backend flashmla_kv \\
      --enable-ep-moe
    """)


def test_migrate_proposes_a_diff_and_writes_nothing(tmp_path, capsys):
    f = tmp_path / "a.sh"
    f.write_text(UPGRADE)
    code, out, err = run(capsys, "migrate", "--to", "0.5.23", str(f))
    assert code == 1
    assert "+  --cuda-graph-max-bs-decode 256 \\" in out and "dsa" not in out  # unsafe: not proposed
    assert "3 migrations from 0.5.4 (inferred from its flags)" in err
    assert f.read_text() == UPGRADE
    code, out, _ = run(capsys, "migrate", "--to", "0.5.23", "--unsafe-fixes", str(f))
    assert "+  --dsa-decode-backend flashmla_kv \\" in out


def test_migrate_fix_applies_safe_then_unsafe(tmp_path, capsys):
    f = tmp_path / "a.sh"
    f.write_text(UPGRADE)
    code, _, err = run(capsys, "migrate", "--to", "0.5.23", "--fix", str(f))
    assert code == 1 and "Applied 1 migration fix; 2 migrations left" in err
    assert "--cuda-graph-max-bs-decode 256" in f.read_text() and "--nsa-decode-backend" in f.read_text()
    code, _, err = run(capsys, "migrate", "--to", "0.5.23", "--fix", "--unsafe-fixes", str(f))
    assert "--dsa-decode-backend flashmla_kv" in f.read_text()
    assert code == 1 and "1 migration left" in err  # --enable-ep-moe needs a value: by hand


def test_migrate_from_filters_what_was_already_wrong(tmp_path, capsys):
    f = tmp_path / "a.sh"
    f.write_text(UPGRADE)
    _, _, err = run(capsys, "migrate", "--to", "0.5.23", "--from", "0.5.13", str(f))
    assert "2 migrations from 0.5.13 (--from)" in err and "--enable-ep-moe" not in err
    f.write_text("# sglang-lsp: sglang=0.5.13\n" + UPGRADE)
    _, _, err = run(capsys, "migrate", "--to", "0.5.23", str(f))
    assert "2 migrations from 0.5.13 (declared in the file)" in err


def test_migrate_clean_file_and_bad_versions(tmp_path, capsys):
    f = tmp_path / "a.sh"
    f.write_text("python -m sglang.launch_server --model-path m --tp-size 2\n")
    assert run(capsys, "migrate", "--to", "0.5.23", str(f))[0] == 0
    code, _, err = run(capsys, "migrate", "--to", "9.9", str(f))
    assert code == 2 and "known releases" in err
    code, _, err = run(capsys, "migrate", "--to", "0.5.23", "--from", "nope", str(f))
    assert code == 2 and "known releases" in err


# --- user-built catalogs ------------------------------------------------------------------------

FAKE_SERVER_ARGS = '''
import argparse


class ServerArgs:
    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--model-path", "--model", required=True, help="Where the weights are.")
        parser.add_argument("--fake-batch", type=int, default=3, help="Fake batch size (default %(default)s).")
        parser.add_argument("--fake-mode", choices=["a", "b"], default="a", help="A mode.")
        parser.add_argument("--fake-switch", action="store_true", help=argparse.SUPPRESS)
'''


@pytest.fixture
def fake_sglang(tmp_path, monkeypatch):
    """A tiny importable "sglang" 0.5.10 with a dist-info, put on PYTHONPATH for subprocesses."""
    root = tmp_path / "site"
    pkg = root / "sglang"
    (pkg / "srt").mkdir(parents=True)
    (pkg / "__init__.py").write_text('__version__ = "0.5.10"\n')
    (pkg / "srt" / "__init__.py").write_text("")
    (pkg / "srt" / "server_args.py").write_text(FAKE_SERVER_ARGS)
    dist = root / "sglang-0.5.10.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.10\n\n")
    monkeypatch.setenv("PYTHONPATH", str(root))
    return root


def test_catalog_build_runs_the_extractor_in_the_given_interpreter(fake_sglang, user_cache, capsys, tmp_path):
    code, out, _ = run(capsys, "catalog", "build", "--python", sys.executable)
    assert code == 0 and "sglang 0.5.10: 5 options" in out
    data = json.loads((user_cache / "0.5.10.json").read_text())
    by = {o["option_strings"][0]: o for o in data["options"]}
    assert data["source"] == "user" and by["--fake-batch"]["help"] == "Fake batch size (default 3)."
    assert "help" not in by["--fake-switch"]
    assert "sglang" not in sys.modules  # nothing of the installation was imported here

    # the user catalog wins over the history's 0.5.10
    cat = catalog_for("0.5.10")
    assert cat.source == "user" and cat.lookup("--fake-batch").help.startswith("Fake batch")
    script = tmp_path / "run.sh"
    script.write_text("python -m sglang.launch_server --model-path m --fake-batch 4 --fake-mode c\n")
    code, out, _ = run(capsys, "check", "--format", "json", "--python", sys.executable, str(script))
    report = json.loads(out)
    assert report["sglang_version"] == "0.5.10"
    assert [(d["code"], d["flag"]) for d in report["diagnostics"]] == [("SGL002", "--fake-mode")]

    from sglang_lsp.lsp.features.hover import option_facts

    assert any("Fake batch size (default 3)." in line for line in option_facts(cat.lookup("--fake-batch"), cat))
    code, out, _ = run(capsys, "catalog", "list")
    assert "user catalogs" in out and "0.5.10" in out


def test_check_with_python_builds_the_missing_catalog(fake_sglang, user_cache, capsys, tmp_path):
    script = tmp_path / "run.sh"
    script.write_text("python -m sglang.launch_server --model-path m --fake-batch x\n")
    code, out, err = run(capsys, "check", "--format", "concise", "--python", sys.executable, str(script))
    assert (user_cache / "0.5.10.json").is_file() and "building the flag catalog of sglang 0.5.10" in err
    assert code == 1 and "SGL003" in out


def test_catalog_build_errors_are_usage_errors(tmp_path, user_cache, capsys, monkeypatch):
    code, _, err = run(capsys, "catalog", "build", "--python", str(tmp_path / "nope"))
    assert code == 2 and "no such Python interpreter" in err
    code, _, err = run(capsys, "check", "--python", str(tmp_path / "nope"), str(tmp_path))
    assert code == 2 and "no such Python interpreter" in err
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # nothing called sglang there
    import importlib.util

    if importlib.util.find_spec("sglang") is None:
        code, _, err = run(capsys, "catalog", "build", "--python", sys.executable)
        assert code == 2 and "sglang is not installed" in err
        code, _, err = run(capsys, "check", "--python", sys.executable, str(tmp_path))
        assert code == 2 and "sglang is not installed" in err
    broken = tmp_path / "sglang"
    (broken / "srt").mkdir(parents=True)
    (broken / "__init__.py").write_text("raise RuntimeError('broken install')\n")
    code, _, err = run(capsys, "catalog", "build", "--python", sys.executable)
    assert code == 2 and "broken install" in err
    assert not user_cache.exists() or not list(user_cache.iterdir())


def test_a_broken_user_catalog_falls_back_to_the_bundled_one(user_cache):
    user_cache.mkdir(parents=True)
    (user_cache / "0.5.23.json").write_text("{not json")
    assert catalog_for("0.5.23").source == "bundled"
    data = json.loads((catalog_mod.CATALOG_DIR / "sglang-0.5.23.json").read_text())
    data["options"].append({**data["options"][1], "dest": "extra", "option_strings": ["--only-here"]})
    (user_cache / "0.5.23.json").write_text(json.dumps(data))
    cat = catalog_for("v0.5.23")
    assert cat.source == "user" and cat.lookup("--only-here") is not None


def test_cache_dir_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv(catalog_mod.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert catalog_mod.user_catalog_path("0.5.23") == tmp_path / "sglang-lsp" / "catalogs" / "0.5.23.json"


def test_lsp_settings_pick_the_workspace_environment(tmp_path, user_cache):
    from sglang_lsp.lsp.settings import parse

    assert parse({"sglangVersion": "v0.4.3"}).settings.sglang_version == "0.4.3"
    bad = parse({"sglangVersion": "0.3"})
    assert bad.settings.sglang_version is None and "0.4.0 – 0.5.23" in bad.problems[0]
    venv = tmp_path / "ws" / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("")
    meta = venv / "lib" / "python3.11" / "site-packages" / "sglang-0.5.4.post2.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.4.post2\n\n")
    settings = parse({}).settings
    found = settings.options((str(tmp_path / "ws"),))
    # the workspace's installation is a guess at the inferred level: a directive in a file beats it
    assert found.sglang_version is None and found.environment_version == "0.5.4.post2"
    from sglang_lsp.base.document import Document
    from sglang_lsp.engine.check import check_document

    launch = "python -m sglang.launch_server --model-path m\n"
    assert check_document(Document(launch, "/tmp/a.sh", "shell"), found).parsed[0].catalog.sglang_version == "0.5.4.post2"
    pinned = "# sglang-lsp: sglang=0.4.3\n" + launch
    assert check_document(Document(pinned, "/tmp/a.sh", "shell"), found).parsed[0].catalog.sglang_version == "0.4.3"
    # an explicit python setting is a setting: above the directive
    explicit = parse({"python": str(venv / "bin" / "python")}).settings.options()
    assert explicit.sglang_version == "0.5.4.post2"
    assert check_document(Document(pinned, "/tmp/a.sh", "shell"), explicit).parsed[0].catalog.sglang_version == "0.5.4.post2"
    assert parse({"python": str(venv / "bin" / "python")}).settings.target_version() == "0.5.4.post2"
    missing = parse({"python": str(tmp_path / "nowhere" / "python")})
    assert missing.problems and "no sglang is installed" in missing.problems[0]
    assert parse({"sglangVersion": "0.5.23"}).settings.options((str(tmp_path / "ws"),)).sglang_version == "0.5.23"


@pytest.mark.skipif(not ORACLE_PYTHON.exists(), reason="no sglang venv at /tmp/sglang-oracle-venv (optional)")
def test_real_installation_builds_the_bundled_facts(user_cache, capsys, monkeypatch):
    monkeypatch.delenv("PYTHONPATH", raising=False)
    code, _, _ = run(capsys, "catalog", "build", "--python", str(ORACLE_PYTHON))
    assert code == 0
    built = json.loads(next(user_cache.glob("*.json")).read_text())
    bundled = json.loads((catalog_mod.CATALOG_DIR / f"sglang-{built['sglang_version']}.json").read_text()) \
        if (catalog_mod.CATALOG_DIR / f"sglang-{built['sglang_version']}.json").exists() else None
    assert sum(1 for o in built["options"] if o.get("help")) > len(built["options"]) * 0.9
    if bundled is not None:
        strip = [{k: v for k, v in o.items() if k != "help"} for o in built["options"]]
        assert strip == bundled["options"]
    assert os.path.isfile(user_cache / f"{built['sglang_version']}.json")


def test_a_launch_may_name_its_own_release(monkeypatch):
    """The engine checks a launch against its invocation's ``sglang_version`` when one is set
    (what image-tag inference provides), else against the file's target."""
    from sglang_lsp.engine import check as engine

    real = engine.extract

    def with_versions(*args, **kw):
        script = real(*args, **kw)
        script.invocations[0].sglang_version = "0.5.4"
        script.invocations[1].sglang_version = "0.1.0"  # unknown: the file's catalog is kept
        return script

    monkeypatch.setattr(engine, "extract", with_versions)
    text = ("python -m sglang.launch_server --model-path m --enable-ep-moe\n"
            "python -m sglang.launch_server --model-path m --enable-ep-moe\n"
            "python -m sglang.launch_server --model-path m --enable-ep-moe\n")
    found = [(f.code, text.count("\n", 0, f.span.start)) for f in check(text, "x.sh")]
    assert found == [("SGL015", 0), ("SGL031", 1), ("SGL031", 2)]


def test_flag_with_a_spaced_explicit_value_of_another_release():
    text = """python -m sglang.launch_server --model-path m '--kv-events-config={"publisher": "zmq"}'\n"""
    assert codes_at(text, "0.4.0", "--kv-events-config") == ["SGL032"]
    assert codes_at(text, "0.5.23", "--kv-events-config") == []


def test_migrate_reports_config_file_keys_without_rewriting_them(tmp_path, capsys):
    (tmp_path / "cfg.yaml").write_text("model-path: m\ncuda-graph-max-bs: 256\n")
    script = tmp_path / "run.sh"
    script.write_text("python -m sglang.launch_server --config cfg.yaml\n")
    code, out, err = run(capsys, "migrate", "--to", "0.5.23", "--fix", str(script))
    assert code == 1 and "cfg.yaml:2:1: SGL031" in err and "not rewritten from here" in err
    assert "from 0.5.19 (inferred from its flags)" in err  # the config's flags count for the source
    assert (tmp_path / "cfg.yaml").read_text() == "model-path: m\ncuda-graph-max-bs: 256\n"


def test_old_name_read_as_an_abbreviation():
    # `--return-hidden-states` (a switch until 0.5.x) is now a prefix of a valued flag
    text = "python -m sglang.launch_server --model-path m --return-hidden-states --tp-size 2\n"
    found = [f for f in check(text, "x.sh") if f.flag == "--return-hidden-states"]
    assert [f.code for f in found] == ["SGL031"]
    assert "abbreviation of `--return-hidden-states-mode`" in found[0].message
    # sglang's complaint about the flag it took it for is this finding's, not a second one
    assert found[0].sglang_error == "argument --return-hidden-states-mode: expected one argument"
    assert codes_at(text, "0.5.23", "--return-hidden-states") == ["SGL031"]
    # a later alias of the same setting, abbreviating it in an old release, is only the hint
    text = "python -m sglang.launch_server --model Qwen/Qwen2.5-7B-Instruct\n"
    assert codes_at(text, "0.4.3", "--model") == ["SGL007"]


def test_replacement_whose_value_the_target_dropped_is_not_proposed():
    text = "python -m sglang.launch_server --model-path m --enable-piecewise-cuda-graph\n"
    (f,) = [f for f in check(text, "x.sh") if f.code == "SGL031"]
    assert "no longer accepts `tc_piecewise` either" in f.message and f.fixes == []


def test_config_files_are_not_read_for_releases_without_config(tmp_path):
    (tmp_path / "cfg.yaml").write_text("model-path: m\nno-such-key: 1\n")
    script = tmp_path / "run.sh"
    script.write_text("python -m sglang.launch_server --model-path m --config cfg.yaml\n")
    old = [(f.code, f.flag) for f in check(script.read_text(), str(script), Options(sglang_version="0.5.2"))]
    assert old == [("SGL032", "--config")]
    assert ("SGL001", "--no-such-key") in [(f.code, f.flag) for f in check(script.read_text(), str(script))]


@pytest.mark.parametrize("release", ["0.4.0", "0.5.10", "0.5.13.post1"])
def test_old_releases_answer_for_the_server_args_fields(release):
    """Up to 0.5.13.post1 `--tp-size` is parsed into `tensor_parallel_size` and copied to the
    ServerArgs field `tp_size` by ServerArgs.from_cli_args; rules read the field names."""
    from sglang_lsp.catalog.argv import resolve
    from sglang_lsp.base.findings import Span
    from sglang_lsp.base.invocation import Word

    cat = catalog_for(release)
    assert cat.lookup("--tp-size").dest == "tensor_parallel_size"
    assert cat.field_dests["tp_size"] == "tensor_parallel_size"
    parsed = resolve(cat, [Word(w, Span(0, 0)) for w in ("--model-path", "m", "--tp", "4")], anchor=Span(0, 0))
    assert parsed.get("tp_size") == 4 and parsed.is_explicit("tp_size")
    assert parsed.last_use("tp_size").spelling == "--tp-size"
    assert parsed.get("dp_size") == 1 and not parsed.is_explicit("dp_size")
    assert catalog_for("0.5.14").field_dests == {}


@pytest.mark.parametrize("release", ["0.4.0", "0.5.13.post1", "0.5.23"])
def test_catalog_views_are_those_of_every_option_built_at_once(release):
    """Catalog makes an Option when it is first asked for; its views must be what building
    every option up front gives (argparse: a spelling names the last option registered with it)."""
    cat = catalog_for(release)
    first = cat.lookup("--tp-size")
    raws = [dict(zip(cat._keys, row)) for row in cat._rows]
    eager = [catalog_mod.option_from_raw(r) for r in raws]
    assert cat.options == eager
    by_string = {s: o for o in eager for s in o.option_strings}
    assert list(cat.by_string.items()) == list(by_string.items())
    assert all(cat.lookup(s) is cat.by_string[s] for s in by_string) and cat.lookup("--no-such-flag") is None
    assert first is cat.by_string["--tp-size"]  # one object per option, however it was first asked for
    by_dest: dict = {}
    for o in eager:
        by_dest.setdefault(o.dest, []).append(o)
    for field_name, dest in cat.field_dests.items():
        by_dest[field_name] = by_dest[dest]
    assert list(cat.by_dest.items()) == list(by_dest.items())
    assert all(cat.by_dest[f] is cat.by_dest[d] for f, d in cat.field_dests.items())
    assert all(cat.has_dest(d) for d in by_dest) and not cat.has_dest("no_such_dest")
    assert cat.required == [o for o in eager if o.required]
    assert cat.defaults == {d: opts[0].default for d, opts in by_dest.items()}


def test_deployment_checks_on_an_image_of_an_old_release():
    from sglang_lsp.base.document import Document
    from sglang_lsp.engine.check import check_document

    manifest = """apiVersion: v1
kind: Pod
metadata: {name: s}
spec:
  containers:
  - name: s
    image: lmsysorg/sglang:v0.5.10-cu129
    command: ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp-size", "8"]
    resources:
      limits:
        nvidia.com/gpu: "4"
"""
    result = check_document(Document(manifest, "/tmp/pod.yaml", "yaml"))
    assert result.parsed[0].catalog.sglang_version == "0.5.10"
    assert "SGL050" in [f.code for f in result.findings]


def test_check_guesses_the_release_from_the_working_directorys_virtualenv(tmp_path, capsys, monkeypatch):
    """Like the editor: the sglang installed in ./.venv is the target when nothing else says,
    below what the file says (a directive wins); nothing is run to find it."""
    venv = tmp_path / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("")  # never executed: the metadata is read
    meta = venv / "lib" / "python3.11" / "site-packages" / "sglang-0.4.3.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: sglang\nVersion: 0.4.3\n\n")
    script = tmp_path / "run.sh"
    script.write_text("python -m sglang.launch_server --model-path m --moe-a2a-backend deepep\n")
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "check", "--format", "concise", "run.sh")
    assert code == 1 and "SGL032" in out  # --moe-a2a-backend is newer than 0.4.3
    script.write_text("# sglang-lsp: sglang=0.5.23\n" + script.read_text())
    assert run(capsys, "check", "run.sh")[0] == 0  # the file's own word wins
    assert run(capsys, "check", "--sglang-version", "0.5.23", "run.sh")[0] == 0


def test_release_key_of_a_plain_release_is_what_the_version_pattern_reads():
    # release_key reads plain release numbers without the pattern (start-up time): same keys
    pattern = versions._version_pattern()

    def by_pattern(v: str) -> tuple:
        m = pattern.match(v)
        if not m:
            return ((), 0, v)
        nums = tuple(int(x) for x in m.group("base").split("."))
        return (nums + (0,) * (4 - len(nums)), int(m.group("n")) if m.group("post") else -1, "")

    samples = [*versions.releases(), "0.5", "1.2.3.4", "1.2.3.4.5", "7", "0.5.23\n", "\u0660.\u0665", "\u00b2.1",
               "0.5.x", "v0.5.1", "0.5.1.post2", "0.5.1-post2", "0.5.1+cu124", "", ".", "0..1", "0.5.", " 0.5"]
    for v in samples:
        assert versions.release_key(v) == by_pattern(v), v


def test_the_version_probe_ignores_modules_in_its_working_directory(fake_sglang, tmp_path, monkeypatch):
    """The probe runs in the temporary directory; a stray ``random.py`` or ``bisect.py`` there
    (which the standard library imports on the way to importlib.metadata) must not shadow it."""
    import tempfile

    from sglang_lsp.catalog import user_catalogs

    stray = tmp_path / "stray"
    stray.mkdir()
    for name in ("bisect", "random", "email"):
        (stray / f"{name}.py").write_text("raise SystemExit('a stray module was imported')\n")
    monkeypatch.setattr(tempfile, "tempdir", str(stray))
    assert user_catalogs.installed_version(sys.executable) == "0.5.10"
