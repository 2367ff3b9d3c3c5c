"""Issue 19, §1 and the shell parts of §2: where scripts keep their launches, and what partial
knowledge may switch off. One test per construct (§1) and per case (§2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sglang_lsp.base.document import Document
from sglang_lsp.catalog.catalog import load_catalog
from sglang_lsp.catalog import dialects
from sglang_lsp.catalog.dialects import dynamo_flags
from sglang_lsp.engine.check import check, check_document
from sglang_lsp.engine.fixing import apply_fix
from sglang_lsp.extract.shell.branches import MAX_PATHS
from sglang_lsp.extract.shell.script import extract
from sglang_lsp.extract.shell.source import Source


def _launches(text: str):
    doc = Document(text)
    return doc, extract(Source(doc.data, None)).invocations


def _found(text: str, path: str = "run.sh", skip: tuple[str, ...] = ("SGL007", "SGL008")) -> list[tuple]:
    """(code, line, column, the source text of the range) of each finding."""
    doc = Document(text, path)
    out = []
    for f in check(text, path):
        if f.code in skip:
            continue
        line, col = doc.byte_to_linecol(f.span.start)
        out.append((f.code, line, col, doc.slice(f.span.start, f.span.end)))
    return out


def _codes(text: str) -> list[str]:
    return [code for code, *_ in _found(text)]


# --- §1: a wrapper program in front of the interpreter ----------------------------------------

@pytest.mark.parametrize("line", [
    "/opt/x/run-with-new-libstdc.sh /app/venv/bin/python3 -m sglang.launch_server --model-path m --bogus",
    "loadTracer.sh python3 -m sglang.launch_server --model-path m --bogus",
    "nsys profile -o trace --trace cuda python -m sglang.launch_server --model-path m --bogus",
    "torchrun --nproc-per-node 8 -m sglang.launch_server --model-path m --bogus",
    "accelerate launch -m sglang.launch_server --model-path m --bogus",
    "$PYTHON -m sglang.launch_server --model-path m --bogus",
    "${PYTHON:-python3} -m sglang.launch_server --model-path m --bogus",
    "numactl --cpunodebind=0 --membind=0 python3 -m sglang.launch_server --model-path m --bogus",
    "timeout 600 python3 -m sglang.launch_server --model-path m --bogus",
    "python -m torch.distributed.run --nproc-per-node 2 -m sglang.launch_server --model-path m --bogus",
])
def test_a_wrapper_in_front_of_the_launch(line):
    doc, invs = _launches(line + "\n")
    assert [i.kind for i in invs] == ["server"], line
    assert [w.text for w in invs[0].args] == ["--model-path", "m", "--bogus"]
    assert [(code, src) for code, _, _, src in _found(line + "\n")] == [("SGL001", "--bogus")]


@pytest.mark.parametrize("line", [
    "echo python -m sglang.launch_server --model-path m --bogus",
    "printf '%s ' python3 -m sglang.launch_server --bogus",
    "pkill -f python -m sglang.launch_server",
    "grep -e python -m sglang.launch_server run.log",
    "log_info python -m sglang.launch_server_helper --bogus",
    "python script.py --m sglang.launch_server",
])
def test_words_that_only_mention_a_launch_are_none(line):
    assert _launches(line + "\n")[1] == []


# --- §1: here-documents -----------------------------------------------------------------------

HEREDOC = """\
MODEL=/models/x
cat > entry.sh <<EOF
#!/bin/bash
exec python3 -m sglang.launch_server --model-path $MODEL --port \\$PORT --bogus-a "\\$X"
EOF
cat > entry2.sh <<'EOF'
exec python3 -m sglang.launch_server --model-path $MODEL --bogus-b
EOF
"""


def test_a_here_document_writing_a_script():
    """An unquoted delimiter: the outer shell expands the body (``$MODEL`` is the file's value,
    ``\\$PORT`` stays an expansion for the script); a quoted one: the body as written."""
    doc, invs = _launches(HEREDOC)
    assert len(invs) == 2 and all(i.nested for i in invs)
    first, second = invs
    assert [w.text for w in first.args[:2]] == ["--model-path", "/models/x"]
    assert first.args[3].text is None  # `$PORT` of the script's own environment
    assert [w.text for w in second.args] == ["--model-path", None, "--bogus-b"]
    # positions map back into the file
    assert _found(HEREDOC) == [("SGL001", 4, 72, "--bogus-a"), ("SGL001", 7, 58, "--bogus-b")]


def test_a_here_document_held_in_a_variable():
    text = ("cmd=$(cat <<-EOF\n"
            "\tpython3 -m sglang.launch_server --model-path /m --tp-size 8 \\\n"
            "\t  --bogus\n"
            "\tEOF\n"
            ")\n"
            'eval "$cmd"\n')
    doc, invs = _launches(text)
    assert len(invs) == 1  # the body, run through `eval`: one launch
    assert [w.text for w in invs[0].args] == ["--model-path", "/m", "--tp-size", "8", "--bogus"]
    assert _found(text) == [("SGL001", 3, 4, "--bogus")]


@pytest.mark.parametrize("text", [
    "cat > config.yaml <<EOF\ncommand: python3 -m sglang.launch_server --bogus\nEOF\n",
    "cat <<EOF\nUsage: run.sh\n  python3 -m sglang.launch_server --bogus\nEOF\n",
    "python3 - <<'EOF'\nimport os\nos.system('python3 -m sglang.launch_server --bogus')\nEOF\n",
])
def test_a_here_document_that_is_no_script(text):
    assert _launches(text)[1] == []


def test_a_here_document_a_shell_runs():
    text = "ssh node1 bash <<EOF\npython3 -m sglang.launch_server --model-path m --bogus\nEOF\n"
    assert _found(text) == [("SGL001", 2, 48, "--bogus")]


# --- §1: a launch kept in an array or a string, run later ------------------------------------

def test_an_array_run_later_twice_is_one_launch_at_its_definition():
    text = ("CMD=(python -m sglang.launch_server --model-path /m --tp-size 8 --bogus)\n"
            '"${CMD[@]}" &\n'
            '"${CMD[@]}" &\n')
    doc, invs = _launches(text)
    assert len(invs) == 1 and not invs[0].alternatives
    assert doc.line_of(invs[0].program[0].span.start) == 0
    assert _found(text) == [("SGL001", 1, 65, "--bogus")]


def test_a_local_array_in_a_function():
    text = ("start() {\n"
            "  local -a server_cmd=(python3 -m sglang.launch_server --model-path /m\n"
            "      --dtype bf16)\n"
            '  nohup "${server_cmd[@]}" > log 2>&1 &\n'
            "}\n")
    assert _found(text) == [("SGL002", 3, 15, "bf16")]


@pytest.mark.parametrize("run", ['eval "$cmd"', 'bash -c "$cmd"', "$cmd", 'docker exec c bash -c "$cmd"',
                                 'run_logged "$cmd"'])
def test_a_string_run_later(run):
    text = f'cmd="python -m sglang.launch_server --model-path /m --bogus"\n{run}\n'
    assert _found(text) == [("SGL001", 1, text.index("--bogus") + 1, "--bogus")], run


def test_a_string_handed_to_a_function_that_evals_it():
    """`run() { eval "$1"; }` runs the command its caller hands it (Mooncake's tone tests): the
    `eval` may change variables inside that function's body from there on, not the variables a
    later command elsewhere reads (`$EXEC` here). An `eval` outside a function still leaves every
    variable unknown after it."""
    text = ('EXEC="docker exec c bash -c"\n'
            'run() {\n  local full="$1"\n  eval "$full"\n}\n'
            'start() {\n'
            '  local cmd="${EXEC} \\"python -m sglang.launch_server --model-path $1 --bogus > log 2>&1 &\\""\n'
            '  run "$cmd" "python -m sglang.launch_server.*$1"\n}\n')
    assert [(code, line, src) for code, line, _, src in _found(text)] == [("SGL001", 7, "--bogus")]
    inside = 'f() {\n  M=/m\n  eval "$1"\n  python3 -m sglang.launch_server --model-path $M --dtype bf16\n}\n'
    assert _launches(inside)[1][0].args[1].text is None
    outside = 'M=/m\neval "$SETUP"\npython3 -m sglang.launch_server --model-path $M\n'
    assert _launches(outside)[1][0].args[1].text is None
    assert _launches(outside.replace('eval "$SETUP"', 'f() { eval "$1"; }'))[1][0].args[1].text == "/m"


def test_a_string_run_in_several_ways_is_one_launch():
    text = ('cmd="python -m sglang.launch_server --model-path /m --bogus"\n'
            'eval "$cmd"\nbash -c "$cmd"\n$cmd\necho "$cmd"\n')
    assert len(_launches(text)[1]) == 1
    assert _codes(text) == ["SGL001"]


def test_a_string_with_unknown_parts_run_by_bash_c():
    """The value is built from variables the file does not set, and appended to in an `if`: the
    script bash -c reads has holes where they are, and the launch is read around them."""
    text = ('CMD="SGLANG_X=${X} ${PREFIX:-} python3 -m sglang.launch_server --model-path $M --bogus ${CONF} "\n'
            'if [ "$N" -gt 1 ]; then\n'
            '  CMD="$CMD --nnodes ${N} --node-rank 0"\n'
            'fi\n'
            'setsid bash -c "$CMD" > log 2>&1 &\n')
    doc, invs = _launches(text)
    assert len(invs) == 1 and len(invs[0].alternatives) == 2
    assert _found(text) == [("SGL001", 1, text.index("--bogus") + 1, "--bogus")]


def test_an_array_defined_and_never_used_is_no_launch():
    assert _launches("UNUSED=(python -m sglang.launch_server --bogus)\n")[1] == []
    assert _launches('IMG=lmsysorg/sglang:latest\ndocker pull "$IMG"\n')[1] == []


# --- §1: NVIDIA Dynamo's sglang worker --------------------------------------------------------

def test_dynamo_flags_are_dynamos_and_sglangs_are_checked():
    text = ("python3 -m dynamo.sglang --model-path /m --endpoint dyn://ns.backend.generate \\\n"
            "  --migration-limit 3 --use-sglang-tokenizer --dyn-reasoning-parser deepseek_r1 --tp-size 2 \\\n"
            "  --connector nixl kvbm --dtype bf16 --bogus\n")
    doc, invs = _launches(text)
    assert invs[0].dialect == "dynamo"
    assert [(code, src) for code, _, _, src in _found(text)] == [("SGL002", "bf16"), ("SGL001", "--bogus")]


def test_dynamo_in_a_yaml_argv_list():
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: w}\nspec:\n  containers:\n  - name: w\n"
            "    image: nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.0.1\n"
            "    command: [python3, -m, dynamo.sglang]\n"
            "    args: [--model-path, Qwen/Qwen3-0.6B, --namespace, dynamo, --disagg-config, d.yaml,"
            " --disagg-config-key, prefill, --bogus]\n")
    found = [(f.code, Document(text).slice(f.span.start, f.span.end)) for f in check(text, "pod.yaml")
             if f.code.startswith("SGL00")]
    assert found == [("SGL001", "--bogus")]


def test_dynamo_flags_are_none_of_sglangs():
    """The data file's flags (facts from Dynamo's source, see its `sources`) are neither sglang
    flags nor abbreviations of one: sglang's parser would read those itself."""
    data = json.loads((Path(dialects.__file__).parent / "data" / "dynamo_flags.json").read_text())
    assert all(s["commit"] and s["path"] for s in data["sources"])
    cat = load_catalog()
    for flag in dynamo_flags():
        assert cat.lookup(flag) is None and not cat.prefix_matches(flag), flag


# --- §2: a quoted word in a value position cannot change how many GPUs a launch uses ----------

SLURM = "#!/bin/bash\n#SBATCH --gres=gpu:4\n"


@pytest.mark.parametrize("value", ['--model-path "$MODEL"', '--model-path /m --port "$PORT"',
                                   '--model-path /m --node-rank $SLURM_NODEID', '--model-path "${MODEL:?}"',
                                   '--model-path /m --host "$HOST"', '--model-path /m --host $HOST',
                                   '--model-path $MODEL --port ${PORT}', '--model-path /m --tp $TP'])
def test_an_unknown_value_does_not_silence_the_gpu_count(value):
    """Quoted, a scheduler's one-word variable, or a plain variable right after an option that
    takes one value (`--host $HOST`, also an abbreviation: `--tp $TP` then `--tp-size 8` wins)."""
    text = SLURM + f"python3 -m sglang.launch_server {value} --tp-size 8\n"
    assert "SGL050" in _codes(text), value
    assert not _launches(text)[1][0].open, value


@pytest.mark.parametrize("extra", ["--enable-metrics $EXTRA", "$EXTRA_ARGS", "--not-an-option $X"])
def test_an_unquoted_unknown_word_that_is_no_value_may_add_flags(extra):
    """bash splits an unquoted expansion at blanks: after a switch, alone, or after an option
    sglang does not know, it may be several words (`--nnodes 2` halves the GPUs per node), so the
    argv is open and the GPU count, which unwritten flags change, stays quiet."""
    text = SLURM + f"python3 -m sglang.launch_server --model-path /m {extra} --tp-size 8\n"
    assert "SGL050" not in _codes(text), extra
    assert _launches(text)[1][0].open, extra


def test_docker_gpus_with_an_unset_model():
    text = ('docker run --gpus 2 --shm-size 16g lmsysorg/sglang:latest python3 -m sglang.launch_server'
            ' --model-path "$MODEL" --tp-size 4\n')
    assert _codes(text) == ["SGL050"]


# --- §2: a conditional append does not switch the whole array off ------------------------------

@pytest.mark.parametrize("append", [
    'if [ -n "$SPEC" ]; then ARGS+=(--speculative-algorithm EAGLE); fi',
    "[[ -n $SPEC ]] && ARGS+=(--speculative-algorithm EAGLE)",
    'case "$MODE" in spec) ARGS+=(--speculative-algorithm EAGLE) ;; esac',
    'if [ -n "$SPEC" ]; then ARGS+=(--speculative-algorithm EAGLE); else ARGS+=(--enable-metrics); fi',
])
def test_a_conditional_append_keeps_the_rest_checked(append):
    text = ("ARGS=(--model-path /m --dtype bf16 --disable-cuda-graphs)\n"
            f"{append}\n"
            'python3 -m sglang.launch_server "${ARGS[@]}"\n')
    assert _found(text) == [("SGL002", 1, 31, "bf16"), ("SGL001", 1, 36, "--disable-cuda-graphs")]


def test_a_wrong_flag_inside_a_branch_is_reported_there():
    text = ("ARGS=(--model-path /m)\n"
            'if [ -n "$SPEC" ]; then ARGS+=(--speculative-algo EAGLE --bogus); fi\n'
            'python3 -m sglang.launch_server "${ARGS[@]}"\n')
    assert [(code, line, src) for code, line, _, src in _found(text)] == [("SGL001", 2, "--bogus")]


def test_a_combination_fires_only_on_one_path_for_certain():
    """SGL125 (the attention DP size must divide the TP size) about flags always there and flags
    a branch adds fires; about flags from two different `if`s it does not (bash may never take
    both); about flags always there that another branch would put right, it does not either."""
    base = "ARGS=(--model-path /m --enable-dp-attention --tp-size 2)\n"
    run = 'python3 -m sglang.launch_server "${ARGS[@]}"\n'
    one_branch = base + 'if [ -n "$A" ]; then ARGS+=(--dp-size 4); fi\n' + run
    assert "SGL125" in _codes(one_branch)
    two_ifs = ("ARGS=(--model-path /m --enable-dp-attention --tp-size 8)\n"
               'if [ -n "$A" ]; then ARGS+=(--dp-size 4); fi\n'
               'if [ -n "$B" ]; then ARGS+=(--tp-size 2); fi\n' + run)
    assert "SGL125" not in _codes(two_ifs)
    put_right = (base.replace("--tp-size 2", "--tp-size 2 --dp-size 4")
                 + 'if [ -n "$A" ]; then ARGS+=(--tp-size 4); fi\n' + run)
    assert "SGL125" not in _codes(put_right)


def test_a_required_flag_added_in_a_branch_is_not_missing():
    text = ('ARGS=(--tp-size 2)\nif [ -n "$M" ]; then ARGS+=(--model-path "$M"); fi\n'
            'python3 -m sglang.launch_server "${ARGS[@]}"\n')
    assert "SGL014" not in _codes(text)
    assert "SGL014" in _codes('ARGS=(--tp-size 2)\npython3 -m sglang.launch_server "${ARGS[@]}"\n')


def test_a_value_chosen_in_branches():
    text = ('if [ -n "$BIG" ]; then DTYPE=bf16; else DTYPE=float16; fi\n'
            'python3 -m sglang.launch_server --model-path /m --dtype "$DTYPE"\n')
    doc, invs = _launches(text)
    assert sorted(alt.args[3].text for alt in invs[0].alternatives) == ["bf16", "float16"]
    assert invs[0].args[3].text is None  # the word standing for both
    assert _codes(text) == ["SGL002"]


def test_too_many_paths_leave_the_rest_unknown():
    """Past MAX_PATHS argvs, a branch is left undecided: what depends on it is unknown, the rest is
    still read and checked."""
    ifs = "".join(f'if [ -n "$C{k}" ]; then ARGS+=(--port {30000 + k}); fi\n' for k in range(6))
    text = "ARGS=(--model-path /m --bogus)\n" + ifs + 'python3 -m sglang.launch_server "${ARGS[@]}"\n'
    doc, invs = _launches(text)
    assert len(invs) == 1 and len(invs[0].alternatives) <= MAX_PATHS
    assert any(alt.open or None in [w.text for w in alt.args] for alt in invs[0].alternatives)
    assert _codes(text) == ["SGL001"]


def test_fixes_are_offered_inside_an_array():
    """Issue 20: `bf16` → `bfloat16` and a misspelt flag's fix apply to the element where it is
    written in the array (appended in a branch, too)."""
    text = ("ARGS=(--model-path /m --dtype bf16)\n"
            'if [ -n "$X" ]; then ARGS+=(--disable-cuda-graphs); fi\n'
            'python3 -m sglang.launch_server "${ARGS[@]}"\n')
    result = check_document(Document(text, "run.sh"))
    fixed = text.encode()
    for f in sorted(result.findings, key=lambda f: -f.span.start):  # (from the end: spans stay right)
        if f.code in ("SGL001", "SGL002") and f.fixes:
            fixed = apply_fix(fixed, f.fixes[0])
    assert fixed.decode() == text.replace("bf16", "bfloat16").replace("--disable-cuda-graphs", "--disable-cuda-graph")
