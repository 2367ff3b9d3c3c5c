"""Fixes users expected (issue 20): a did-you-mean for other servers' names of a choice
(`--attention-backend flash_attn`), removing the value of a switch (`--enable-torch-compile
true`) and a vLLM switch sglang does not need (`--enable-prefix-caching`), and the rewrites a
shell command gets (`bf16` → `bfloat16`, a misspelt flag) in every syntax a launch is written in
(`ARGS+=(…)` included), and the GPU count of a Compose service or a `docker run --gpus` for SGL050."""

from __future__ import annotations

import textwrap

import pytest

from sglang_lsp.base.document import Document
from sglang_lsp.catalog.argv_findings import CHOICE_ALIASES, FOREIGN_SWITCHES_TO_DROP
from sglang_lsp.catalog.catalog import load_catalog
from sglang_lsp.engine.check import check, detect_language
from sglang_lsp.engine.fixing import fix_document

CAT = load_catalog(None)


def fixed(text: str, path: str, unsafe: bool = False, code: str | None = None) -> str:
    language = detect_language(path, text) or "shell"
    outcome = fix_document(Document(text, path, language), unsafe=unsafe,
                           keep=(lambda f: f.code == code) if code else None)
    return outcome.text


def only(text: str, path: str, code: str):
    found = [f for f in check(text, path) if f.code == code]
    assert len(found) == 1, [(f.code, f.message) for f in check(text, path)]
    return found[0]


# --- choices other servers spell differently ----------------------------------------------------


@pytest.mark.parametrize("dest, aliases", sorted(CHOICE_ALIASES.items()))
def test_every_alias_names_choices_the_flag_has(dest, aliases):
    choices = {str(c) for o in CAT.by_dest[dest] for c in (o.choices or ())}
    for alias, targets in aliases.items():
        assert targets and set(targets) <= choices, (dest, alias, targets)


@pytest.mark.parametrize("flag", ["--attention-backend", "--prefill-attention-backend", "--decode-attention-backend"])
@pytest.mark.parametrize("value, hint", [
    ("flash_attn", "did you mean one of `fa3`, `flashinfer`, `triton`?"),
    ("FLASH_ATTN", "did you mean one of `fa3`, `flashinfer`, `triton`?"),  # vLLM's VLLM_ATTENTION_BACKEND
    ("flash_attention_2", "did you mean one of `fa3`, `flashinfer`, `triton`?"),  # Hugging Face
    ("sdpa", "did you mean `torch_native`?"),
    ("xformers", "did you mean one of `triton`, `flashinfer`?"),
    ("flash-attn-3", "did you mean `fa3`?"),
    ("flash-infer", "did you mean `flashinfer`?"),  # a spelling variant, as before
])
def test_other_servers_backend_names_get_a_did_you_mean(flag, value, hint):
    f = only(f"python -m sglang.launch_server --model-path m {flag} {value}\n", "a.sh", "SGL002")
    assert hint in f.message


def test_a_single_alias_is_an_unsafe_fix_several_are_named_only():
    f = only("python -m sglang.launch_server --model-path m --attention-backend sdpa\n", "a.sh", "SGL002")
    assert [(x.title, x.applicability.value) for x in f.fixes] == [("Use `torch_native`", "unsafe")]
    f = only("python -m sglang.launch_server --model-path m --attention-backend flash_attn\n", "a.sh", "SGL002")
    assert f.fixes == []


# --- removing words: every syntax ----------------------------------------------------------------

K8S_BLOCK = textwrap.dedent("""\
    apiVersion: v1
    kind: Pod
    metadata: {{name: s}}
    spec:
      containers:
      - name: s
        image: lmsysorg/sglang:latest
        args:
        - python3
        - -m
        - sglang.launch_server
        - --model-path
        - m
    {words}
        - --port
        - "30000"
    """)
K8S_FLOW = ('apiVersion: v1\nkind: Pod\nmetadata: {{name: s}}\nspec:\n  containers:\n  - name: s\n'
            '    image: lmsysorg/sglang:latest\n'
            '    args: ["python3", "-m", "sglang.launch_server", "--model-path", "m", {words}, "--port", "30000"]\n')
COMPOSE = ('services:\n  s:\n    image: lmsysorg/sglang:latest\n    ipc: host\n'
           '    command: [python3, -m, sglang.launch_server, --model-path, m, {words}, --port, "30000"]\n')
SHELL = "python -m sglang.launch_server --model-path m {words} --port 30000\n"
CONTINUED = "python -m sglang.launch_server \\\n  --model-path m \\\n  {words} \\\n  --port 30000\n"
ARRAY = "ARGS=(\n  --model-path m\n  {words}\n  --port 30000\n)\npython -m sglang.launch_server \"${{ARGS[@]}}\"\n"
APPEND = 'ARGS=(--model-path m)\nARGS+=({words} --port 30000)\npython -m sglang.launch_server "${{ARGS[@]}}"\n'
STRING = 'FLAGS="--model-path m {words} --port 30000"\npython -m sglang.launch_server $FLAGS\n'
SYNTAXES = {"shell": (SHELL, "a.sh"), "continued": (CONTINUED, "a.sh"), "array": (ARRAY, "a.sh"),
            "array-append": (APPEND, "a.sh"),
            "string": (STRING, "a.sh"), "k8s-block": (K8S_BLOCK, "pod.yaml"), "k8s-flow": (K8S_FLOW, "pod.yaml"),
            "compose": (COMPOSE, "compose.yaml")}


def launch(syntax: str, words: list[str]) -> tuple[str, str]:
    """A launch written in ``syntax`` with ``words`` between `--model-path m` and `--port 30000`
    (YAML list items quoted, as a manifest must write `true`)."""
    template, path = SYNTAXES[syntax]
    if syntax == "k8s-block":
        joined = "\n".join(f'    - "{w}"' for w in words)
        text = template.format(words=joined)
        return (text if words else text.replace("\n\n", "\n")), path
    if syntax in ("k8s-flow", "compose"):
        joined = ", ".join(f'"{w}"' for w in words)
        text = template.format(words=joined)
        return (text if words else text.replace('"m", , ', '"m", ').replace("m, , ", "m, ")), path
    text = template.format(words=" ".join(words))
    if not words:
        text = text.replace("m  --port", "m --port").replace("  \\\n  --port", "  --port") \
            .replace("m\n  \n", "m\n").replace("m \\\n   \\\n", "m \\\n")
    return text, path


@pytest.mark.parametrize("syntax", sorted(SYNTAXES))
def test_a_value_given_to_a_switch_is_removed(syntax):
    text, path = launch(syntax, ["--enable-torch-compile", "true"])
    f = only(text, path, "SGL005")
    assert [(x.title, x.applicability.value) for x in f.fixes] == [("Remove the value `true`", "safe")]
    assert fixed(text, path, code="SGL005") == launch(syntax, ["--enable-torch-compile"])[0]


@pytest.mark.parametrize("syntax", sorted(SYNTAXES))
def test_a_false_value_removes_the_switch_with_an_unsafe_fix(syntax):
    text, path = launch(syntax, ["--enable-torch-compile", "false"])
    f = only(text, path, "SGL005")
    assert [x.applicability.value for x in f.fixes] == ["unsafe"]
    assert fixed(text, path, code="SGL005") == text  # not without --unsafe-fixes
    after = fixed(text, path, unsafe=True, code="SGL005")
    assert "--enable-torch-compile" not in after and not check(after, path)


@pytest.mark.parametrize("flag", sorted(FOREIGN_SWITCHES_TO_DROP))
@pytest.mark.parametrize("syntax", sorted(SYNTAXES))
def test_a_vllm_switch_sglang_does_not_need_is_removed(syntax, flag):
    text, path = launch(syntax, [flag])
    f = only(text, path, "SGL001")
    assert "vLLM flag" in f.message and FOREIGN_SWITCHES_TO_DROP[flag] in f.message
    assert [(x.title, x.applicability.value) for x in f.fixes] == [(f"Remove `{flag}`", "safe")]
    after = fixed(text, path, code="SGL001")
    assert flag not in after and not check(after, path)


# --- rewriting words: every syntax ---------------------------------------------------------------

# (code, the words written, the words the fix writes, its applicability)
REWRITES = {
    "value did-you-mean": ("SGL002", ["--dtype", "bf16"], ["--dtype", "bfloat16"], "unsafe"),
    "backend did-you-mean": ("SGL002", ["--attention-backend", "flashinfr"], ["--attention-backend", "flashinfer"],
                             "unsafe"),
    "misspelt flag": ("SGL001", ["--mem-fraction-statik", "0.8"], ["--mem-fraction-static", "0.8"], "unsafe"),
    "underscores": ("SGL010", ["--tensor_parallel_size", "2"], ["--tensor-parallel-size", "2"], "safe"),
    "one dash": ("SGL001", ["-tp-size", "2"], ["--tp-size", "2"], "safe"),
    "value in the flag's word": ("SGL002", ["--dtype=bf16"], ["--dtype=bfloat16"], "unsafe"),
}


@pytest.mark.parametrize("syntax", sorted(SYNTAXES))
@pytest.mark.parametrize("case", sorted(REWRITES))
def test_a_word_is_rewritten_in_every_syntax(syntax, case):
    """The did-you-mean and rename fixes a shell command gets are offered in a bash array
    (`ARGS+=(--dtype bf16)`), a variable's value and a YAML list too, and rewrite the word
    where it is written."""
    code, words, expected, applicability = REWRITES[case]
    if syntax in ("k8s-block", "k8s-flow", "compose") and case == "one dash":
        words, expected = ["-tp-size=2"], ["--tp-size=2"]  # (a YAML list item is one word)
    text, path = launch(syntax, words)
    f = only(text, path, code)
    assert [x.applicability.value for x in f.fixes] == [applicability], (f.message, f.fixes)
    after = fixed(text, path, unsafe=True, code=code)
    assert after == launch(syntax, expected)[0]
    assert not [g for g in check(after, path) if g.code == code]


@pytest.mark.parametrize("text, code", [
    # the characters of the word are not written as themselves at one place: no rewrite
    ('ARGS=(--model-path m --dtype bf1\\6)\n', "SGL002"),  # an escape
    ("ARGS=(--model-path m --dtype $'bf\\x316')\n", "SGL002"),  # an ANSI-C escape (\\x31 is 1)
    ('DT=bf\nARGS=(--model-path m --dtype "${DT}16")\n', "SGL002"),  # half from a variable
    ('P=statik\nARGS=(--model-path m --mem-fraction-$P 0.8)\n', "SGL001"),
    ('P=parallel\nFLAGS="--model-path m --tensor_${P}_size 2"\nARGS=($FLAGS)\n', "SGL010"),
])
def test_a_word_not_written_literally_is_not_rewritten(text, code):
    text += 'python -m sglang.launch_server "${ARGS[@]}"\n'
    f = only(text, "a.sh", code)
    assert f.fixes == []
    assert fixed(text, "a.sh", unsafe=True) == text


@pytest.mark.parametrize("text, path", [
    # a comment between the words would go with them: no edit
    ("ARGS=(\n  --model-path m\n  --enable-torch-compile\n  # on\n  true\n)\n"
     "python -m sglang.launch_server \"${ARGS[@]}\"\n", "a.sh"),
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: s}\nspec:\n  containers:\n  - name: s\n    image: lmsysorg/sglang\n"
     "    args:\n    - python3\n    - -m\n    - sglang.launch_server\n    - --model-path\n    - m\n"
     "    - --enable-torch-compile  # on\n    - \"true\"\n", "pod.yaml"),
])
def test_no_removal_takes_a_comment_along(text, path):
    assert only(text, path, "SGL005").fixes == []


# --- SGL050: the GPU count where it is written ------------------------------------------------------

COMPOSE_GPUS = textwrap.dedent("""\
    services:
      sglang:
        image: lmsysorg/sglang:latest
        ipc: host
        command: python3 -m sglang.launch_server --model-path m --tp-size 8
        deploy:
          resources:
            reservations:
              devices:
                - driver: nvidia
                  count: 4
                  capabilities: [gpu]
    """)
DOCKER = "docker run --gpus {gpus} --ipc=host lmsysorg/sglang:latest python3 -m sglang.launch_server --model-path m --tp-size 4\n"
CI_DOCKER = ("jobs:\n  serve:\n    runs-on: gpu\n    steps:\n      - run: |\n"
             "          docker run --gpus 2 --ipc=host lmsysorg/sglang:latest python3 -m sglang.launch_server --model-path m --tp-size 4\n")


@pytest.mark.parametrize("text, path, title, before, after", [
    (COMPOSE_GPUS, "compose.yaml", "Give the service 8 GPUs", "count: 4", "count: 8"),
    (DOCKER.format(gpus="2"), "run.sh", "Give the container 4 GPUs", "--gpus 2", "--gpus 4"),
    (DOCKER.format(gpus="count=2"), "run.sh", "Give the container 4 GPUs", "--gpus count=2", "--gpus count=4"),
    (DOCKER.format(gpus="'\"count=2\"'"), "run.sh", "Give the container 4 GPUs", "count=2", "count=4"),
    (CI_DOCKER, "ci.yaml", "Give the container 4 GPUs", "--gpus 2", "--gpus 4"),
])
def test_not_enough_gpus_is_fixed_where_the_count_is_written(text, path, title, before, after):
    f = only(text, path, "SGL050")
    assert [(x.title, x.applicability.value) for x in f.fixes] == [(title, "unsafe")]
    result = fixed(text, path, unsafe=True, code="SGL050")
    assert result == text.replace(before, after, 1)
    assert not [g for g in check(result, path) if g.code == "SGL050"]


def test_named_devices_get_no_count_fix():
    """`--gpus '"device=0,1"'` names the GPUs: which ones to add is the author's choice."""
    text = DOCKER.format(gpus="'\"device=0,1\"'")
    assert only(text, "run.sh", "SGL050").fixes == []
