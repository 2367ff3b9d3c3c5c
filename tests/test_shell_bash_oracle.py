"""The argv that shell extraction reads from a launch line is the argv bash itself builds.

Random argument lists (quotes, escapes, `$'…'`, `${…}` with defaults, arrays, expansions side by
side in double quotes, field splitting, `\\`-newline …) follow a few literal assignments, or random
assignments of every kind the scope follows (plain, `+=`, arrays, `export`, `declare`, `unset`,
`${X:=…}`, in an `if`); the launch line is run by the real bash with the launch replaced by a
function that prints its arguments, and the words extraction reads must be those. Words extraction cannot know are left out of the comparison,
but never a known word: when the number of words is known, each known one must match.

Launches kept for later are compared the same way: an array built in branches (`if`, `&&`, `||`,
`case`, nested) and run as `"${CMD[@]}"`, whose every path must be an argv bash builds for some
setting of the conditions and the other way round; a command string run by `eval`, `bash -c` or
`$cmd`; a here-document a shell reads (`bash <<EOF`, `bash <<'EOF'`).

The generated text has no command substitution and no glob character outside quotes: bash only
assigns variables and calls `printf`. Skipped where there is no bash.
"""

from __future__ import annotations

import random
import shutil
import subprocess

import pytest

from sglang_lsp.extract.shell.source import Source
from sglang_lsp.extract.shell.script import extract

BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="no bash on this machine")

ASSIGNMENTS = "A=alpha\nB='b c'\nE=\nN=8\nARR=(one 'two three' four)\nexport X=--tp\n"
PIECES = ["--tp", "8", "x", "$A", "${A}", '"$A"', '"${A}"', "$B", '"$B"', '"$A $B"', '"$A ${B}"', '"$A\t$N"',
          "${E:-dflt}", "${U:-d e}", '"${U:-d e}"', "${A:-no}", "${E-emp}", "'q s'", '"d q"', "a'b'c", 'a"b"c',
          "\\$A", '"\\$A"', '"a\\"b"', "a\\ b", "$'t\\tx'", "$'a\\'b'", '"${ARR[@]}"', "${ARR[@]}", '"${ARR[1]}"',
          '"x${A}y"', "x${A}y", "$A$N", '"$A""$N"', "''", '""', '"$E"', "$E", "=", "--k=$A", "--k=\"$B\"",
          '"$N $N $N"', '" $A"', '"$A "', '"a  $A  ${N}  b"', "\\\n", '"\\\\"', "'\\\\'", '"${#A}"', "${A/ph/PH}",
          '"${A:1:2}"', '"$X"', "$X", '"$A\\ ${B}"', "'$A'", "$U", '"$U"', '"${ARR[*]}"', "${ARR[*]}", "--x=$B",
          "--x=$B-$A", "pre${B}", "${B}post", '"${NOPE[@]}"', "a${ARR[@]}b", "$B$B", "x$E", "$E$E"]
LAUNCH = "python3 -m sglang.launch_server"


def _bash_argv(text: str, export: bool = False) -> list[str]:
    """The arguments bash passes to the launch (a function of the same script, exported to
    the shells it starts with ``export``)."""
    script = "f() { printf '%s\\0' \"$#\" \"$@\"; }\n" + ("export -f f\n" if export else "") \
        + text.replace(LAUNCH, "f", 1)
    out = subprocess.run([BASH, "--norc", "--noprofile", "-c", script], capture_output=True, timeout=10,
                         env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"}).stdout
    parts = out.decode("utf-8", "surrogateescape").split("\0")[:-1]
    assert int(parts[0]) == len(parts) - 1, parts
    return parts[1:]


def _agrees(text: str, nested: bool = False, open_only: bool = False) -> bool:
    """Asserts that the words of the last launch in ``text`` (of a ``bash -c`` script: ``nested``)
    are those bash passes to it, unknown words aside, and that the number of words differs only
    where it is unknown (``open_only``: only for a launch with an unknown number of words).
    Whether every word was known."""
    invocations = [i for i in extract(Source(text.encode(), None)).invocations if i.nested or not nested]
    assert invocations, text
    inv = invocations[-1]
    words = [w.text for w in inv.args]
    real = _bash_argv(text, export=nested)
    if inv.open or len(words) != len(real):
        assert inv.open or (None in words and not open_only), (text, words, real)
        return False
    assert [w if w is not None else r for w, r in zip(words, real)] == real, text
    return None not in words


@pytest.mark.parametrize("seed", range(3))
def test_launch_argv_is_the_one_bash_builds(seed):
    rng = random.Random(seed)
    compared = 0
    for _ in range(120):
        args = " ".join(rng.choice(PIECES) for _ in range(rng.randint(1, 6)))
        compared += _agrees(f"{ASSIGNMENTS}{LAUNCH} {args}\n", open_only=True)
    assert compared > 60  # most lists (of 120) are known word for word


NAMES = ["A", "B", "C"]
VALUES = ["x", "'y z'", '"$A"', '"${B}-q"', "$C", "${A:-d}", "''", '"a b"', "pre$A", "$'t\\tq'", "'$A'", '"$A $B"',
          "${B}${A}"]
ARGS = ["--x=$C", "$A", '"$A"', "${B}", '"$B"', '"$C"', "$C", '"${A:-z}"', '"${ARR[@]}"', '"$A$B"', '"${A}_${B}"',
        '"${B[1]}"', '"${A[@]}"', "${C[0]}"]


# the ways a script sets a variable, each with the share of statements below its bound
FORMS = [(0.45, "{n}={v}"), (0.55, "export {n}={v}"), (0.62, "{n}+={v}"), (0.68, "unset {n}"),
         (0.74, "if true; then {n}={v}; fi"), (0.80, "{n}=({v} {w})"), (0.87, ": ${{{n}:={v}}}"),
         (0.94, "declare {n}={v}"), (1.0, "{n}={v}; {m}={w}")]


def _statement(rng: random.Random) -> str:
    k = rng.random()
    form = next(f for bound, f in FORMS if k < bound)
    return form.format(n=rng.choice(NAMES), v=rng.choice(VALUES), w=rng.choice(VALUES), m=rng.choice(NAMES))


@pytest.mark.parametrize("seed", range(3))
def test_variables_have_the_values_bash_gives_them(seed):
    rng = random.Random(100 + seed)
    compared = 0
    for _ in range(200):
        body = "\n".join(_statement(rng) for _ in range(rng.randint(1, 5)))
        compared += _agrees(f"{body}\n{LAUNCH} " + " ".join(rng.choice(ARGS) for _ in range(rng.randint(1, 4))) + "\n")
    assert compared > 8  # (most scripts leave some word unknown: an `if`, `unset`, an unset name)


NESTED = ["--tp", "8", "$A", "${A}", '\\"$A\\"', "$B", '\\"$B\\"', "'$B'", "\\$X", '\\"\\$Y\\"', "\\$Y", "${U:-d}", "$U",
          '\\"$U\\"', "'q s'", "$'a b'", "x$A", "\\$A", "$N$N", "\\\\\\\\", "'\\$X'", '\\"${A} ${B}\\"', "${E:-dflt}", "=",
          "--k=$A", "$((1+2))", '\\"$((N+1))\\"']


@pytest.mark.parametrize("seed", range(2))
def test_a_bash_c_launch_reads_the_argv_the_inner_bash_builds(seed):
    """`bash -c "…"`: the outer shell expands the string (its `$A`, not its `\\$X`), the inner
    one parses and expands the script; the launch's words are those of the inner bash (with
    `export`ed variables passed on), unknown ones aside."""
    rng = random.Random(200 + seed)
    compared = 0
    assignments = ASSIGNMENTS + "export Y='y z'\n"
    for _ in range(150):
        args = " ".join(rng.choice(NESTED) for _ in range(rng.randint(1, 6)))
        compared += _agrees(f'{assignments}bash -c "{LAUNCH} {args}"\n', nested=True)
    assert compared > 40


def _bash_argvs(text: str, conditions: list[str], export: bool = False) -> list[list[str]]:
    """The argvs bash passes to the launch with each combination of the ``conditions``
    variables set (to 1) or not (one bash, each combination in a subshell of its own)."""
    runs = []
    for mask in range(1 << len(conditions)):
        sets = "".join(f"{name}=1\n" for k, name in enumerate(conditions) if mask >> k & 1)
        runs.append("(\n" + sets + text.replace(LAUNCH, "f", 1) + "\n)\n")
    script = "f() { printf '%s\\0' \"$#\" \"$@\"; }\n" + ("export -f f\n" if export else "") \
        + "printf '\\1\\0'\n".join(runs)
    out = subprocess.run([BASH, "--norc", "--noprofile", "-c", script], capture_output=True, timeout=60,
                         env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"}).stdout
    argvs = []
    for part in out.decode("utf-8", "surrogateescape").split("\1\0"):
        fields = part.split("\0")[:-1]
        assert fields and int(fields[0]) == len(fields) - 1, fields
        argvs.append(fields[1:])
    assert len(argvs) == len(runs)
    return argvs


def _matches(words: list[str | None], real: list[str]) -> bool:
    return len(words) == len(real) and all(w is None or w == r for w, r in zip(words, real))


ELEMENTS = ["--tp", "8", "x", "$A", '"$B"', "$B", "'q s'", '"${ARR[@]}"', "${A:-d}", '"$E"', "--k=$A", "a\\ b"]
# each with a condition of its own (a variable set or not): bash can take every combination of
# branches, so every path the extraction reads is one bash can build
APPENDS = ['if [ -n "${c}" ]; then ARGS+=({e}); fi', '[[ -n ${c} ]] && ARGS+=({e})',
           'if [ -n "${c}" ]; then ARGS+=({e}); else ARGS+=({f}); fi', 'case "${c}" in 1) ARGS+=({e}) ;; esac',
           '[ -z "${c}" ] || ARGS=({e})', 'if [ -n "${c}" ]; then\n  ARGS+=({e})\n  [ -n "${c}B" ] && ARGS+=({f})\nfi']


def _elements(rng: random.Random) -> str:
    return " ".join(rng.choice(ELEMENTS) for _ in range(rng.randint(1, 3)))


@pytest.mark.parametrize("seed", range(2))
def test_an_array_built_in_branches_and_run_later_has_the_argvs_bash_builds(seed):
    """`ARGS=(…)`, appended to (or set again) in `if`s, `&&`, `case`; a command array holding the
    launch and `"${ARGS[@]}"`, run later: each argv bash builds, for every combination of the
    conditions, is one of the launch's paths, and each fully known path is one bash builds."""
    rng = random.Random(300 + seed)
    compared = 0
    for _ in range(40):
        appends = [rng.choice(APPENDS).format(c=f"C{k}", e=_elements(rng), f=_elements(rng))
                   for k in range(rng.randint(1, 3))]
        text = (f"{ASSIGNMENTS}ARGS=({_elements(rng)})\n" + "\n".join(appends) + "\n"
                f'CMD=({LAUNCH} "${{ARGS[@]}}" --last)\n"${{CMD[@]}}"\n')
        invs = extract(Source(text.encode(), None)).invocations
        assert len(invs) == 1, text
        paths = [[w.text for w in inv.args] for inv in invs[0].alternatives or invs]
        real = _bash_argvs(text, ["C0", "C1", "C2", "C0B", "C1B", "C2B"])
        for argv in real:
            assert any(_matches(p, argv) for p in paths), (text, argv, paths)
        for p in paths:
            if None not in p:
                assert p in real, (text, p, real)
                compared += 1
    assert compared > 40


@pytest.mark.parametrize("seed", range(2))
def test_a_command_string_run_later_reads_the_argv_bash_builds(seed):
    """`cmd="…"`, appended to in an `if`, run by `eval "$cmd"`, `bash -c "$cmd"` or `$cmd`."""
    rng = random.Random(400 + seed)
    runs = ['eval "$cmd"', 'bash -c "$cmd"', "$cmd"]
    pieces = ["--tp", "8", "x", "$A", "${A:-d}", "--k=$A", "'q s'", '\\"$B\\"', "\\$Y"]
    compared = 0
    for _ in range(40):
        args = " ".join(rng.choice(pieces) for _ in range(rng.randint(1, 4)))
        more = " ".join(rng.choice(pieces) for _ in range(rng.randint(1, 2)))
        run = rng.choice(runs)
        text = (f'{ASSIGNMENTS}export Y=y\ncmd="{LAUNCH} {args}"\n'
                f'if [ -n "$C1" ]; then cmd="$cmd {more}"; fi\n{run}\n')
        invs = extract(Source(text.encode(), None)).invocations
        assert len(invs) == 1, text
        paths = [[w.text for w in inv.args] for inv in invs[0].alternatives or invs]
        real = _bash_argvs(text, ["C1"], export=True)
        for argv in real:
            assert any(_matches(p, argv) for p in paths), (text, argv, paths)
        compared += sum(None not in p for p in paths)
    assert compared > 30


HEREDOC = ["--tp", "8", "$A", "${A}", '"$B"', "'$B'", "\\$Y", "\\$A", "${U:-d}", "'q s'", "x\\\\y", '"a b"', "--k=$A",
           "$'t\\tq'"]


@pytest.mark.parametrize("quoted", [False, True])
def test_a_here_document_bash_runs_reads_the_argv_bash_builds(quoted):
    """`bash <<EOF … EOF` (the outer shell expands the body) and `bash <<'EOF'` (it does not):
    the launch in the body gets the words the inner bash builds (exported variables are the inner
    shell's too)."""
    rng = random.Random(500 + quoted)
    compared = 0
    delimiter = "'EOF'" if quoted else "EOF"
    for _ in range(60):
        args = " ".join(rng.choice(HEREDOC) for _ in range(rng.randint(1, 5)))
        text = f"{ASSIGNMENTS}export Y='y z'\nbash <<{delimiter}\n{LAUNCH} {args}\nEOF\n"
        compared += _agrees(text, nested=True)
    assert compared > 20
