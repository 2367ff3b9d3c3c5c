"""Finding launch commands in shell scripts and mapping every argv word back to the file."""

from __future__ import annotations

import pytest

from sglang_lsp.base.document import Document
from sglang_lsp.extract.shell.source import Source
from sglang_lsp.extract.shell.script import extract


def invocations(text: str):
    doc = Document(text)
    return doc, extract(Source(doc.data, None)).invocations


def args_of(text: str, index: int = 0):
    doc, invs = invocations(text)
    return doc, invs[index]


def src(doc: Document, word) -> str:
    return doc.slice(word.span.start, word.span.end)


@pytest.mark.parametrize(
    "line",
    [
        "python -m sglang.launch_server --model-path m",
        "python3 -m sglang.launch_server --model-path m",
        "python3.11 -m sglang.launch_server --model-path m",
        "/opt/venv/bin/python3 -m sglang.launch_server --model-path m",
        "python -u -m sglang.launch_server --model-path m",
        "python -X dev -W ignore -m sglang.launch_server --model-path m",
        "sglang serve --model-path m",
        "/usr/local/bin/sglang serve --model-path m",
        "uv run -m sglang.launch_server --model-path m",
        "uv run python -m sglang.launch_server --model-path m",
        "CUDA_VISIBLE_DEVICES=0,1 python3 -m sglang.launch_server --model-path m",
        "exec python3 -m sglang.launch_server --model-path m",
        "nohup python3 -m sglang.launch_server --model-path m > log 2>&1 &",
        "env HF_HOME=/x NCCL_DEBUG=INFO python3 -m sglang.launch_server --model-path m",
        "setsid python3 -m sglang.launch_server --model-path m",
        "timeout 600 python3 -m sglang.launch_server --model-path m",
        "numactl --cpunodebind=0 --membind=0 python3 -m sglang.launch_server --model-path m",
        "srun --nodes=2 --ntasks-per-node=1 python3 -m sglang.launch_server --model-path m",
        "docker run --gpus all --shm-size 32g -p 30000:30000 lmsysorg/sglang:latest python3 -m sglang.launch_server --model-path m",
        "f() { python3 -m sglang.launch_server --model-path m; }",
        "if true; then python3 -m sglang.launch_server --model-path m; fi",
        "for i in 1 2; do python3 -m sglang.launch_server --model-path m; done",
        "case $X in a) python3 -m sglang.launch_server --model-path m ;; esac",
        "true && python3 -m sglang.launch_server --model-path m || echo failed",
        "python3 -m sglang.launch_server --model-path m 2>&1 | tee log",
        "(cd /srv && python3 -m sglang.launch_server --model-path m)",
        "bash -c 'python3 -m sglang.launch_server --model-path m'",
        "sh -c \"python3 -m sglang.launch_server --model-path m\"",
        "srun bash -lc 'python3 -m sglang.launch_server --model-path m'",
    ],
)
def test_recognised_launches(line):
    doc, invs = invocations(line + "\n")
    assert [i.kind for i in invs] == ["server"], line
    inv = invs[0]
    assert [w.text for w in inv.args] == ["--model-path", "m"]
    # every arg range covers exactly the word in the file
    assert [src(doc, w) for w in inv.args] == ["--model-path", "m"]


@pytest.mark.parametrize(
    "line",
    [
        "echo python -m sglang.launch_server --model-path m",
        "python -m sglang_router.launch_server --model-path m --dp 2",
        "python -m sglang_router.launch_router --pd-disaggregation --prefill http://a",
        "pip install sglang",
        "python -c 'import sglang'",
        "# python -m sglang.launch_server --model-path m",
        "grep -r sglang.launch_server .",
    ],
)
def test_not_server_launches(line):
    _, invs = invocations(line + "\n")
    assert [i for i in invs if i.kind == "server"] == []


def test_router_is_recognised_as_router():
    _, invs = invocations("python -m sglang_router.launch_server --model-path m --dp-size 2\n")
    assert [i.kind for i in invs] == ["router"]


def test_continuations_quotes_and_equals():
    text = (
        "python3 -m sglang.launch_server \\\n"
        "  --model-path 'my model' \\\n"
        '  --served-model-name "a\\"b" --tp=4 \\\n'
        "  --chat-template=$'x\\ty'\n"
    )
    doc, inv = args_of(text)
    assert [w.text for w in inv.args] == ["--model-path", "my model", "--served-model-name", 'a"b', "--tp=4",
                                          "--chat-template=x\ty"]
    assert src(doc, inv.args[1]) == "'my model'"
    assert inv.args[1].quote == "'"
    # the value part of --tp=4 maps to the 4
    tp = inv.args[4]
    sub = tp.sub_span(len("--tp="), len("--tp=4"))
    assert doc.slice(sub.start, sub.end) == "4"
    assert doc.byte_to_linecol(sub.start) == (3, text.split("\n")[2].index("4") + 1)
    # an escaped quote inside double quotes maps to the two source characters
    esc = inv.args[3].sub_span(1, 2)
    assert doc.slice(esc.start, esc.end) == '\\"'


def test_backslash_newline_inside_a_word_joins_it():
    # bash drops `\`-newline wherever it stands, also inside a word (tree-sitter splits there)
    text = (
        "M=/models\n"
        "python3 -m sglang.launch_server --model-path /public/hf/\\\n"
        "Qwen/Qwen3-8B/ --port 3\\\n"
        "0000 --served-model-name $M\\\n"
        "/x \\\n"
        "  --host 0.0.0.0\n"
    )
    doc, inv = args_of(text)
    assert [w.text for w in inv.args] == ["--model-path", "/public/hf/Qwen/Qwen3-8B/", "--port", "30000",
                                          "--served-model-name", "/models/x", "--host", "0.0.0.0"]
    assert src(doc, inv.args[1]) == "/public/hf/\\\nQwen/Qwen3-8B/"
    # a character of the second part maps to its own line
    q = inv.args[1].sub_span(len("/public/hf/"), len("/public/hf/Q"))
    assert doc.slice(q.start, q.end) == "Q" and doc.byte_to_linecol(q.start) == (3, 1)
    # a `\`-newline after a blank still separates words
    assert src(doc, inv.args[6]) == "--host"


def test_words_after_a_redirection_are_arguments():
    # bash passes `--port 1` to the command; tree-sitter-bash files it under the redirection
    text = "nohup python -m sglang.launch_server > log.txt --model-path m 2>&1 --port 1 &\n"
    doc, inv = args_of(text)
    assert [w.text for w in inv.args] == ["--model-path", "m", "--port", "1"]
    assert [src(doc, w) for w in inv.args] == ["--model-path", "m", "--port", "1"]


def test_variables_resolved_from_the_same_file():
    text = (
        "MODEL=/models/llama\n"
        "export TP=4\n"
        'PORT=${PORT:-30000}\n'
        "python3 -m sglang.launch_server --model-path \"$MODEL\" --tp-size ${TP} --port $PORT --host ${HOST:-0.0.0.0}\n"
    )
    doc, inv = args_of(text)
    assert [w.text for w in inv.args] == ["--model-path", "/models/llama", "--tp-size", "4", "--port", "30000",
                                          "--host", "0.0.0.0"]
    # a single word from a variable keeps its place in the command
    assert src(doc, inv.args[1]) == '"$MODEL"'
    assert inv.args[1].origin == "variable"
    # …while its characters map to the definition
    assert doc.slice(*inv.args[1].char_spans[0]) == "/"
    assert doc.line_of(inv.args[1].char_spans[0][0]) == 0


def test_unknown_values_are_unknown_not_guessed():
    text = (
        "python3 -m sglang.launch_server --model-path $1 --tp-size $(nproc) --port \"$PORT\" "
        "--host x${SUFFIX}y --dp-size ${UNSET_VAR}\n"
    )
    _, inv = args_of(text)
    values = [w for w in inv.args if not (w.text or "").startswith("--")]
    assert all(w.text is None for w in values)
    assert values[3].known_prefix == "x"


def test_last_straight_line_assignment_wins_and_branches_are_unknown():
    text = (
        "TP=2\n"
        "TP=8\n"
        "python3 -m sglang.launch_server --model-path m --tp-size $TP\n"
        "if [ -n \"$BIG\" ]; then TP=16; fi\n"
        "python3 -m sglang.launch_server --model-path m --tp-size $TP\n"
        "X=1 python3 -m sglang.launch_server --model-path m --port $X\n"
        "for P in 1 2; do python3 -m sglang.launch_server --model-path m --port $P; done\n"
        "source ./env.sh\n"
        "python3 -m sglang.launch_server --model-path m --tp-size $TP\n"
    )
    _, invs = invocations(text)
    tp = [inv.args[3].text for inv in invs]
    assert tp[0] == "8"
    assert tp[1] is None  # assigned in a branch that may not run
    assert tp[2] is None  # `X=1 cmd` does not set $X for cmd's own words
    assert tp[3] is None  # loop variable
    assert tp[4] is None  # `source` may change anything
    assert invs[2].env == {"X": "1"}


def test_arrays_expand_with_ranges_into_the_definition():
    text = (
        "ARGS=(--model-path /m \\\n"
        "  --tp-size 8)\n"
        "ARGS+=(--port 30000)\n"
        "python3 -m sglang.launch_server \"${ARGS[@]}\" --host 0.0.0.0\n"
    )
    doc, inv = args_of(text)
    assert [w.text for w in inv.args] == ["--model-path", "/m", "--tp-size", "8", "--port", "30000", "--host",
                                          "0.0.0.0"]
    assert doc.byte_to_linecol(inv.args[2].span.start) == (2, 3)
    assert doc.byte_to_linecol(inv.args[4].span.start) == (3, 8)
    # each written as it is in the array's definition: a fix of the word is an edit there
    assert all(w.origin == "array" for w in inv.args[:6])
    assert [src(doc, w) for w in inv.args[:6]] == ["--model-path", "/m", "--tp-size", "8", "--port", "30000"]
    assert not inv.open


def test_unknown_expansion_makes_argv_open():
    _, inv = args_of('python3 -m sglang.launch_server --model-path m $EXTRA_ARGS "$@"\n')
    assert inv.open


def test_split_of_unquoted_variable():
    text = 'EXTRA="--tp-size 2 --dp-size 2"\npython3 -m sglang.launch_server --model-path m $EXTRA\n'
    doc, inv = args_of(text)
    assert [w.text for w in inv.args][2:] == ["--tp-size", "2", "--dp-size", "2"]
    assert src(doc, inv.args[4]) == "--dp-size"


def test_nested_sh_c_positions_map_back_into_the_file():
    text = "srun bash -c \"python3 -m sglang.launch_server --model-path /m --tp-size \\\"8\\\" --bogus\"\n"
    doc, inv = args_of(text)
    assert inv.nested
    assert [w.text for w in inv.args] == ["--model-path", "/m", "--tp-size", "8", "--bogus"]
    assert src(doc, inv.args[4]) == "--bogus"
    assert src(doc, inv.args[3]) == '\\"8\\"'


def test_sh_c_script_with_unknown_expansions_is_still_read():
    """The outer shell expands `$M`, `${X}` and `$(cmd)` inside a double-quoted `bash -c` script
    before the inner shell reads it: an expansion the file does not assign is unknown text in the
    script, and the rest of the script is read and mapped back into the file as usual."""
    text = ('# é 😀\nbash -c "cd $(dirname $0) && exec python3 -m sglang.launch_server --model-path \\"$M\\" '
            '--tp $TP --served-model-name \'$NAME\' --port ${PORT} --dp-size 2x"\n')
    doc, inv = args_of(text)
    assert inv.nested and inv.kind == "server"
    texts = [w.text for w in inv.args]
    assert texts == ["--model-path", None, "--tp", None, "--served-model-name", None, "--port", None, "--dp-size", "2x"]
    # an unknown word points at what the outer shell expands
    assert [src(doc, inv.args[k]) for k in (1, 3, 5, 7)] == ['\\"$M\\"', "$TP", "'$NAME'", "${PORT}"]
    assert src(doc, inv.args[8]) == "--dp-size" and src(doc, inv.args[9]) == "2x"
    assert not inv.open  # the unquoted `$TP` is the value of `--tp` (an option of one value)
    # none of the stand-ins for the unknown parts is ever seen as text
    assert "unknown" not in repr([(w.text, w.known_prefix) for w in inv.program + inv.args])


def test_sh_c_script_with_known_and_unknown_expansions():
    text = 'TP=4\nsh -c "python3 -m sglang.launch_server --model-path $MODEL --tp-size $TP --enable-metrics=$X"\n'
    doc, inv = args_of(text)
    assert [w.text for w in inv.args] == ["--model-path", None, "--tp-size", "4", None]
    assert inv.args[4].known_prefix == "--enable-metrics="
    # a known value's characters come from its assignment, as in a script without unknown parts
    assert src(doc, inv.args[3]) == "4" and doc.byte_to_linecol(inv.args[3].span.start) == (1, 4)
    assert src(doc, inv.args[4]) == "--enable-metrics=$X"


def test_sh_c_script_that_is_unknown_as_a_whole_is_not_read():
    for text in ('bash -c "$SCRIPT"\n', "bash -c $(cat run.sh)\n", 'bash -c "$@"\n'):
        assert invocations(text)[1] == []


def test_text_between_expansions_in_double_quotes_is_kept():
    """tree-sitter-bash gives the text between two expansions of a double-quoted string to the
    second one's node (`"$A ${B}"`: the node of `${B}` starts at the space); it is literal text
    of the word all the same."""
    text = ('A=x\nB=y\npython3 -m sglang.launch_server --model-path "$A ${B}" --served-model-name "$A\t$B"'
            ' --chat-template "$A\\ ${B}-$(date) $((1)) `id`"\n')
    doc, inv = args_of(text)
    assert [w.text for w in inv.args[:4]] == ["--model-path", "x y", "--served-model-name", "x\ty"]
    assert inv.args[5].text is None and inv.args[5].known_prefix == "x\\ y-"
    # each character still comes from where it is written
    value = inv.args[1]
    assert [doc.slice(a, b) for a, b in value.char_spans] == ["x", " ", "y"]


def test_an_unknown_part_of_a_concatenation_is_read_once():
    """`--x=$port a${A[@]}b$port` with `port` never assigned: each word is the known text up to
    the unknown part, and each unassigned use is recorded once (SGL062 and hover read them)."""
    text = "A=(x y)\npython3 -m sglang.launch_server --model-path m --x=$port a${A[@]}b$port\n"
    doc, inv = args_of(text)
    assert [(w.text, w.known_prefix) for w in inv.args[2:]] == [(None, "--x="), (None, "ax yb")]
    assert [(name, doc.slice(span.start, span.end)) for name, span in inv.unassigned] == [("port", "port")] * 2
    assert len({span for _, span in inv.unassigned}) == 2


def test_non_ascii_before_flag():
    text = "# 模型 🚀\nMODEL='/models/é'\npython3 -m sglang.launch_server --model-path \"$MODEL\" --bogus-é\n"
    doc, inv = args_of(text)
    bogus = inv.args[-1]
    assert src(doc, bogus) == "--bogus-é"
    assert doc.byte_to_linecol(bogus.span.start) == (3, text.split("\n")[2].index("--bogus") + 1)
    assert inv.args[1].text == "/models/é"


def test_sourcing_scan_agrees_with_its_regex():
    """SGL062 stays silent in a script that sources, `.`-includes or evals anything; the scan
    that decides it (word first, then what precedes it on its line) says the same as the plain
    regex it replaces, on generated lines built from the pieces that matter."""
    import random
    import re

    from sglang_lsp.checks.shell import _sources_or_evals

    regex = re.compile(rb"(?m)(?:^|[;&|({]|\bthen\b|\bdo\b)[ \t]*(?:source|\.|eval)[ \t]")
    pieces = [b"source", b".", b"eval", b" ", b"\t", b"\n", b"\r", b";", b"&", b"|", b"(", b"{", b"then",
              b"do", b"x", b"_", b"9", b"-", b"#", b"\xc3\xa9", b"done", b"then.", b"sources", b"/"]
    rng = random.Random(62)
    texts = [b"", b"source a", b". ./env.sh", b"if x; then . a; fi", b"undo . a", b"do.  a", b"x=1 source a",
             b"echo e.g. this", b"eval \"$X\"", b"  eval\tx", b"(source a)", b"{ . a; }", b"cmd && . a"]
    texts += [b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 10))) for _ in range(20000)]
    hits = 0
    for text in texts:
        expected = regex.search(text) is not None
        assert _sources_or_evals(text) == expected, text
        hits += expected
    assert 0 < hits < len(texts)


def _whole_file_captures(root):
    from sglang_lsp.base import queries

    commands, assignments, loops = [], [], []
    for _, caps in queries.matches("bash", "script", root):
        if "command" in caps:
            commands.append((caps["command"][0].byte_range, caps["command.name"][0].byte_range))
        elif "assignment" in caps:
            assignments.append(caps["assignment"][0].byte_range)
        elif "clobber.name" in caps:
            loops.append(caps["clobber.name"][0].byte_range)
    return sorted(commands), sorted(assignments), sorted(loops)


@pytest.mark.parametrize(
    "script",
    [
        "A=1 B=2 python -m sglang.launch_server --tp 2\nX=$(hostname -i) python3 -m sglang.launch_server --port 1\n",
        "python -m sglang.launch_server --model-path \"$(cat m.txt)\" --tp `nproc`\necho done\n",
        "cat > c.yaml <<EOF\nport: $(echo 1)\nEOF\npython -m sglang.launch_server --config c.yaml\n",
        "for tp in 1 2; do python -m sglang.launch_server --tp $tp; done\nARGS=(--tp 2)\nA[1]=x\n",
        "set -e\n;; esac\nnohup python -m sglang.launch_server --tp 2 > log 2>&1 &\n; fi\nX=1\n",
        "if true; then Y=2 python -m sglang.launch_server; fi\ncmd <(ls) >(cat)\n{ a; b; }\n(sub)\n",
        "# setup\nexport A=1 B=2\nM=x # why\nN=\"$M\"; O=$(id -u)\nlocal L=1\nP=1 Q=2\n",
    ],
)
def test_pass_captures_what_the_query_captures_over_the_whole_file(script):
    """_Pass reads plain top-level commands itself and queries only the rest of the file: it
    must capture exactly what one query over the whole tree captures, each node once (error
    recovery leaves empty commands between statements, where two query ranges touch)."""
    from sglang_lsp.base import queries
    from sglang_lsp.extract.shell.script import CommandWalk as _Pass

    data = script.encode()
    root = queries.parser("bash").parse(data).root_node
    got = _Pass(root, data)
    assert (
        sorted((c.byte_range, n.byte_range) for c, n in got.commands),
        sorted(n.byte_range for n in got.assignments),
        sorted(n.byte_range for n in got.for_variables),
    ) == _whole_file_captures(root)
    assert [c.start_byte for c, _ in got.commands] == sorted(c.start_byte for c, _ in got.commands)


def test_pass_captures_what_the_query_captures_in_every_shell_fixture():
    """The same comparison over every shell script of the test fixtures and examples (the
    walk of _Pass stands in for the query, whose compilation a cold check cannot afford)."""
    from pathlib import Path

    from sglang_lsp.base import queries
    from sglang_lsp.extract.shell.script import CommandWalk as _Pass

    root_dir = Path(__file__).resolve().parent.parent
    scripts = sorted(p for d in ("tests/fixtures", "examples") for p in (root_dir / d).rglob("*.sh"))
    assert len(scripts) > 100
    parser = queries.parser("bash")
    for script in scripts:
        data = script.read_bytes()
        root = parser.parse(data).root_node
        got = _Pass(root, data)
        assert (
            sorted((c.byte_range, n.byte_range) for c, n in got.commands),
            sorted(n.byte_range for n in got.assignments),
            sorted(n.byte_range for n in got.for_variables),
        ) == _whole_file_captures(root), script


_SCRIPT_PIECES = ["--tp-size", "--dp-size", "--port", "--quantization", "--enable-metrics", "--tp", "--model-path",
                  "--mem-fraction-static", "--bogus-flag", "4", "2x", "fp8", "fp9", "0.8", "m", "$X", "${Y}",
                  "${Z}", "$(hostname -i)", "--port=$P", "--tp-size=${TP}", "&&", "cd $D", "echo $W", ";", "$X $Y",
                  "$X ${Y}", "$(hostname)\t${Z}"]


def test_unknown_parts_of_an_sh_c_script_read_as_the_inner_shell_would():
    """`bash -c "S"` (the outer shell expands `$X` in S) and `bash -c 'S'` (the inner shell
    does) launch the same command when the file assigns none of the variables: for scripts S
    built from flags, values, expansions and substitutions (no quotes, no backslashes), the
    two give the same findings, at the same places. (Not `${Z:-8}`: a default the outer shell
    puts in is placed on its own text, one the inner shell puts in on the whole expansion.)"""
    import random

    from sglang_lsp.engine.check import check_document

    rng = random.Random(2026)
    checked = findings = 0
    for _ in range(300):
        words = [rng.choice(_SCRIPT_PIECES) for _ in range(rng.randint(1, 12))]
        script = "exec python3 -m sglang.launch_server " + " ".join(words)
        results = []
        for quote in ('"', "'"):
            text = f"#!/bin/bash\nbash -c {quote}{script}{quote}\n"
            result = check_document(Document(text, "/tmp/run.sh", "shell"))
            assert result.errors == []
            results.append(([(f.code, f.span, f.message, [x.edits for x in f.fixes]) for f in result.findings],
                            [[w.text for w in inv.args] for inv in result.invocations]))
        assert results[0] == results[1], script
        checked += bool(results[0][1])
        findings += len(results[0][0])
    assert checked > 100 and findings > 100  # launches were read, and findings made, in most scripts
