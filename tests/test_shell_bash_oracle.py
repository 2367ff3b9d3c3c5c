"""The argv that shell extraction reads from a launch line is the argv bash itself builds.

Random argument lists (quotes, escapes, `$'…'`, `${…}` with defaults, arrays, expansions side by
side in double quotes, `\\`-newline …) follow a few literal assignments; the launch line is run
by the real bash with the launch replaced by a function that prints its arguments, and the words
extraction reads must be those. Words extraction cannot know are left out of the comparison,
but never a known word: when the number of words is known, each known one must match.

The generated text has no command substitution and no glob character outside quotes: bash only
assigns variables and calls `printf`. Skipped where there is no bash.
"""

from __future__ import annotations

import random
import shutil
import subprocess

import pytest

from sglang_lsp.shell import Source, extract

BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="no bash on this machine")

ASSIGNMENTS = "A=alpha\nB='b c'\nE=\nN=8\nARR=(one 'two three' four)\nexport X=--tp\n"
PIECES = ["--tp", "8", "x", "$A", "${A}", '"$A"', '"${A}"', "$B", '"$B"', '"$A $B"', '"$A ${B}"', '"$A\t$N"',
          "${E:-dflt}", "${U:-d e}", '"${U:-d e}"', "${A:-no}", "${E-emp}", "'q s'", '"d q"', "a'b'c", 'a"b"c',
          "\\$A", '"\\$A"', '"a\\"b"', "a\\ b", "$'t\\tx'", "$'a\\'b'", '"${ARR[@]}"', "${ARR[@]}", '"${ARR[1]}"',
          '"x${A}y"', "x${A}y", "$A$N", '"$A""$N"', "''", '""', '"$E"', "$E", "=", "--k=$A", "--k=\"$B\"",
          '"$N $N $N"', '" $A"', '"$A "', '"a  $A  ${N}  b"', "\\\n", '"\\\\"', "'\\\\'", '"${#A}"', "${A/ph/PH}",
          '"${A:1:2}"', '"$X"', "$X", '"$A\\ ${B}"', "'$A'", "$U", '"$U"']
LAUNCH = "python3 -m sglang.launch_server"


def _bash_argv(text: str) -> list[str]:
    script = "f() { printf '%s\\0' \"$#\" \"$@\"; }\n" + text.replace(LAUNCH, "f", 1)
    out = subprocess.run([BASH, "--norc", "--noprofile", "-c", script], capture_output=True, timeout=10,
                         env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"}).stdout
    parts = out.decode("utf-8", "surrogateescape").split("\0")[:-1]
    assert int(parts[0]) == len(parts) - 1, parts
    return parts[1:]


@pytest.mark.parametrize("seed", range(3))
def test_launch_argv_is_the_one_bash_builds(seed):
    rng = random.Random(seed)
    compared = 0
    for _ in range(120):
        args = " ".join(rng.choice(PIECES) for _ in range(rng.randint(1, 6)))
        text = f"{ASSIGNMENTS}{LAUNCH} {args}\n"
        invocations = extract(Source(text.encode(), None)).invocations
        assert invocations, args
        inv = invocations[-1]
        words = [w.text for w in inv.args]
        real = _bash_argv(text)
        if inv.open or len(words) != len(real):
            assert inv.open, (args, words, real)  # a different count only where it is unknown
            continue
        assert [w if w is not None else r for w, r in zip(words, real)] == real, args
        compared += None not in words
    assert compared > 60  # most lists (of 120) are known word for word
