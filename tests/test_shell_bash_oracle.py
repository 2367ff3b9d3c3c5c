"""The argv that shell extraction reads from a launch line is the argv bash itself builds.

Random argument lists (quotes, escapes, `$'…'`, `${…}` with defaults, arrays, expansions side by
side in double quotes, field splitting, `\\`-newline …) follow a few literal assignments, or random
assignments of every kind the scope follows (plain, `+=`, arrays, `export`, `declare`, `unset`,
`${X:=…}`, in an `if`); the launch line is run by the real bash with the launch replaced by a
function that prints its arguments, and the words extraction reads must be those. Words extraction cannot know are left out of the comparison,
but never a known word: when the number of words is known, each known one must match.

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
