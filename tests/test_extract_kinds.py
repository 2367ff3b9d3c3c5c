"""The readers of the new kinds of files (issue 19 §3), one behaviour per test: what each reads as
a launch, what it leaves unknown, and where its findings land."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sglang_lsp.base.document import Document
from sglang_lsp.base.findings import Span
from sglang_lsp.catalog.catalog import load_catalog
from sglang_lsp.cli.files import is_candidate
from sglang_lsp.cli.main import main
from sglang_lsp.engine.check import check, check_document, detect_language
from sglang_lsp.extract.dockerfile import extract_dockerfile, stage_image
from sglang_lsp.extract.docs import block_document
from sglang_lsp.extract.markdown import code_blocks
from sglang_lsp.extract.notebook import cell_magic, read_notebook
from sglang_lsp.extract.python import extract_python
from sglang_lsp.extract import rst

CANARY = "--sglang-lsp-canary"


def codes(text: str, path: str) -> list[tuple[str, str]]:
    """(code, the text of its range) of each finding."""
    data = text.encode()
    return [(f.code, data[f.span.start:f.span.end].decode()) for f in check(text, path)]


def args_of(inv) -> list[str | None]:
    return [w.text for w in inv.args]


# --- file kinds ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("path", "language"), [
    ("Dockerfile", "dockerfile"), ("Dockerfile.cuda", "dockerfile"), ("cuda.Dockerfile", "dockerfile"),
    ("Containerfile", "dockerfile"), ("docs/README.md", "markdown"), ("page.mdx", "markdown"),
    ("index.rst", "rst"), ("serve.py", "python"), ("demo.ipynb", "notebook"),
    ("chart/templates/_helpers.tpl", "yaml"), ("notes.tpl", None),
])
def test_detect_language_by_name(path, language):
    assert detect_language(path, "") == language


def test_directory_walk_reads_docs_and_python_only_when_they_mention_sglang(tmp_path: Path):
    (tmp_path / "a.py").write_text("import os\n")
    (tmp_path / "b.py").write_text("import sglang\n")
    (tmp_path / "README.md").write_text("# nothing here\n")
    (tmp_path / "Dockerfile").write_text("FROM x\n")
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "_helpers.tpl").write_text("{{- define \"x\" -}}{{- end }}\n")
    found = {p.name for p in tmp_path.rglob("*") if p.is_file() and is_candidate(p)}
    assert found == {"b.py", "Dockerfile", "_helpers.tpl"}


# --- Markdown and reStructuredText ------------------------------------------------------------------------


def test_markdown_block_findings_are_at_the_file_offsets():
    text = "# Title — ünïcode\n\n```bash\npython -m sglang.launch_server --model-path /m --dtype bf16\n```\n"
    found = check(text, "x.md")
    assert [f.code for f in found] == ["SGL002"]
    line, col = Document(text, "x.md", "markdown").byte_to_linecol(found[0].span.start)
    assert (line, col) == (4, text.split("\n")[3].index("bf16") + 1)


def test_unassigned_lower_case_variables_are_not_reported_in_docs():
    text = "```bash\npython -m sglang.launch_server --model-path ${model_path}\n```\n"
    assert codes(text, "x.md") == []
    assert [c for c, _ in codes(text.split("\n", 1)[1].rsplit("```", 1)[0], "x.sh")] == ["SGL062"]


def test_one_blocks_variables_do_not_leak_into_the_next():
    text = ("```bash\nDTYPE=bf16\n```\n\n"
            "```bash\npython -m sglang.launch_server --model-path /m --dtype $DTYPE\n```\n")
    assert codes(text, "x.md") == []
    assert codes(text.replace("```\n\n```bash\n", ""), "x.md") == [("SGL002", "$DTYPE")]


def test_console_block_reads_commands_after_prompts_and_skips_output():
    text = ("```console\n$ python -m sglang.launch_server --model-path /m \\\n>   --dtype bf16\n"
            "--not-a-flag printed by the server\n# sglang serve --model-path /m --quantization FP8\n```\n")
    assert codes(text, "x.md") == [("SGL002", "bf16"), ("SGL002", "FP8")]


def test_doc_placeholders_are_unknown_words():
    text = "```bash\npython -m sglang.launch_server --model-path <your model> --port 30000 [other OPTIONS] ...\n```\n"
    assert codes(text, "x.md") == []


def test_ignore_directive_leaves_the_next_block_out():
    block = "```bash\npython -m sglang.launch_server --model-path /m --dtype bf16\n```\n"
    assert codes("<!-- sglang-lsp: ignore -->\n\n" + block, "x.md") == []
    assert codes("<!-- sglang-lsp: ignore -->\n\ntext\n\n" + block, "x.md") == [("SGL002", "bf16")]


def test_untagged_block_is_read_only_when_it_launches():
    data = b"```\npython3 -m sglang.launch_server --model-path /m\n```\n\n```\nls -l sglang\n```\n"
    assert [b.language for b in code_blocks(data)] == ["shell"]


def test_block_in_a_quote_and_a_list_item_drops_the_prefixes():
    text = ("> ```bash\n> python -m sglang.launch_server --model-path /m --dtype bf16\n> ```\n\n"
            "1. step\n\n   ```bash\n   python -m sglang.launch_server --model-path /m --dtype fp9\n   ```\n")
    assert codes(text, "x.md") == [("SGL002", "bf16"), ("SGL002", "fp9")]


def test_block_document_keeps_offsets_and_blanks_the_rest():
    data = b"intro\n```yaml\na: 1\n```\n"
    (block,) = code_blocks(data + b"sglang")
    doc = block_document(Document((data + b"sglang").decode(), "x.md", "markdown"), block)
    assert doc.language == "yaml" and doc.data == b"#            \na: 1"  # the lines before: one comment


def test_rst_heredoc_in_an_indented_block_ends_where_written():
    text = (".. code-block:: bash\n\n   cat > c.yaml <<EOF\n   tp-size: 2\n   EOF\n"
            "   python -m sglang.launch_server --model-path /m --dtype bf16\n")
    assert codes(text, "x.rst") == [("SGL002", "bf16")]


def test_rst_blocks_inside_other_directives_are_read():
    data = (b".. tab:: Python\n\n    .. code-block:: bash\n\n        python -m sglang.launch_server --model-path /m\n")
    assert [b.language for b in rst.code_blocks(data)] == ["shell"]


# --- Python -----------------------------------------------------------------------------------------------


def _launches(source: str):
    return extract_python(source.encode(), load_catalog()).invocations


def test_python_argv_list_words_and_unknowns():
    (inv,) = _launches('import sys\ncmd = [sys.executable, "-m", "sglang.launch_server", "--model-path", model, '
                       'f"--port={port}", "--tp-size", "2"]\n')
    assert [w.text for w in inv.program] == ["python", "-m", "sglang.launch_server"]
    assert args_of(inv) == ["--model-path", None, None, "--tp-size", "2"]
    assert inv.args[2].known_prefix == "--port=" and not inv.open


def test_python_argv_list_extended_in_its_block_gets_the_words_and_in_a_branch_is_open():
    (inv,) = _launches('cmd = ["python", "-m", "sglang.launch_server"]\ncmd.extend(["--tp-size", "2"])\n'
                       'cmd += ["--port", "1"]\nrun(cmd)\n')
    assert args_of(inv) == ["--tp-size", "2", "--port", "1"] and not inv.open
    (inv,) = _launches('cmd = ["python", "-m", "sglang.launch_server"]\nif x:\n    cmd.append("--tp-size")\n')
    assert args_of(inv) == [] and inv.open


def test_python_module_word_bound_to_one_of_two_strings():
    (inv,) = _launches('m = "sglang.launch_server" if plain else "dynamo.sglang"\n'
                       'cmd = ["python3", "-m", m, "--port", "1"]\n')
    assert args_of(inv) == ["--port", "1"]


def test_python_command_string_with_fstring_holes():
    (inv,) = _launches('os.system(f"python3 -m sglang.launch_server --model-path \'{m}\' --tp-size 2")\n')
    assert args_of(inv) == ["--model-path", None, "--tp-size", "2"] and not inv.open
    (inv,) = _launches('os.system(f"python3 -m sglang.launch_server --model-path {m} --tp-size 2")\n')
    assert not inv.open  # an unquoted field right after an option of one value is that value (issue 19 §2)
    (inv,) = _launches('os.system(f"python3 -m sglang.launch_server --model-path /m {extra} --tp-size 2")\n')
    assert inv.open  # an unquoted field anywhere else: any number of words, as the shell splits it
    (inv,) = _launches('cmd = "python3 -m sglang.launch_server --port 1"\n')
    assert inv.open  # a piece of a command a program may add to


def test_python_dynamo_worker_command_pieces_are_read():
    text = ('parts = ["python3 -m dynamo.sglang", f"--model-path {m}", "--host 0.0.0.0 %s"]\n'
            'cmd = " ".join(parts)\n' % CANARY)
    assert codes(text, "gen.py") == [("SGL001", CANARY)]


def test_python_interpreter_in_a_field_and_joined_lines():
    (inv,) = _launches('lines = [f"{PY} -m sglang.launch_server \\\\", "    --model-path {path} \\\\", '
                       '"    --port 30000"]\n')
    assert args_of(inv) == ["--model-path", None, "--port", "30000"]


def test_python_engine_keywords_are_fields():
    text = "import sglang as sgl\nllm = sgl.Engine(model_path='/m', tp_size=2, enable_torch_compile=True, log_level=None)\n"
    (inv,) = _launches(text)
    assert args_of(inv) == ["--model-path", "/m", "--tp-size", "2", "--enable-torch-compile"]
    assert codes(text.replace("tp_size", "tensor_parallel_size"), "a.py") == [("SGL001", "tensor_parallel_size")]


def test_python_engine_dict_splat_and_updates():
    text = ("from sglang import Engine\nkw = {'model_path': '/m', 'tp_size': 2}\nkw['dtype'] = 'bf16'\n"
            "if fast:\n    kw['tp_size'] = 4\n    kw['no_such_field'] = 1\nEngine(**kw)\n")
    (inv,) = _launches(text)
    assert args_of(inv) == ["--model-path", "/m", "--tp-size", None, "--dtype", "bf16"]
    assert sorted(codes(text, "a.py")) == [("SGL001", "no_such_field"), ("SGL002", "bf16")]


def test_python_engine_with_server_args_and_foreign_engines_are_not_read():
    assert _launches("import sglang as sgl\nsgl.Engine(server_args=sa, tp_size=99)\n") == []
    assert _launches("from vllm import Engine\nEngine(model_path='sglang', nonsense=1)\n") == []


def test_python_api_names_are_sglangs_llm_server_only():
    assert _launches("from sglang.srt.entrypoints.http_server import ServerArgs\nServerArgs(model_path='/m')\n")
    # the diffusion server's ServerArgs takes other keywords
    assert _launches("from sglang.multimodal_gen.runtime.server_args import ServerArgs\n"
                     "ServerArgs(model_path='/m', num_gpus=2)\n") == []


def test_python_usage_text_and_placeholders_are_not_commands():
    assert _launches('p.add_parser("serve", usage="sglang serve --model-path MODEL [OPTIONS]")\n') == []
    (inv,) = _launches('cmd = "python -m sglang.launch_server --model-path <model> [OPTIONS] ..."\n')
    assert args_of(inv) == ["--model-path", None, None, None] and inv.open


def test_python_popen_launch_server_with_other_args_variable():
    text = ("from sglang.test.test_utils import popen_launch_server\n"
            "def f(m, url):\n    other = ['--tp-size', '2']\n    other.extend(['--dtype', 'bf16'])\n"
            "    return popen_launch_server(m, url, timeout=9, other_args=other)\n")
    (inv,) = _launches(text)
    assert args_of(inv) == ["--model-path", None, "--tp-size", "2", "--dtype", "bf16"]
    assert codes(text, "a.py") == [("SGL002", "bf16")]


# --- Dockerfile -------------------------------------------------------------------------------------------


def test_dockerfile_entrypoint_and_cmd_make_one_command():
    data = (b'FROM x\nENV M=/models/llama\nENTRYPOINT ["python3", "-m", "sglang.launch_server"]\n'
            b'CMD ["--model-path", "/m", "--tp-size", "2"]\n')
    (inv,) = extract_dockerfile(data)
    assert args_of(inv) == ["--model-path", "/m", "--tp-size", "2"]


def test_dockerfile_bash_c_entrypoint_reads_the_cmd_string_as_script_with_env():
    data = (b'FROM x\nENV TP=2\nENTRYPOINT ["/bin/bash", "-c"]\n'
            b'CMD ["python3 -m sglang.launch_server --model-path ${MODEL} --tp-size $TP"]\n')
    (inv,) = extract_dockerfile(data)
    assert args_of(inv) == ["--model-path", None, "--tp-size", "2"]


def test_dockerfile_shell_form_drops_comment_lines_and_build_args_stay_out_of_cmd():
    data = (b"FROM x\nARG TP=2\nRUN python3 -m sglang.launch_server --tp-size $TP \\\n    # a comment\n    --port 1\n"
            b"CMD python3 -m sglang.launch_server --tp-size $TP\n")
    run, cmd = extract_dockerfile(data)
    assert args_of(run) == ["--tp-size", "2", "--port", "1"]
    assert args_of(cmd) == ["--tp-size", None]  # a build argument is not in the container's environment


def test_dockerfile_from_tag_is_the_release():
    data = b"ARG TAG=v0.5.9-cu129\nFROM lmsysorg/sglang:${TAG} AS base\nFROM base\nCMD sglang serve --model-path /m\n"
    assert stage_image(data, data.index(b"CMD"))[0] == "lmsysorg/sglang:v0.5.9-cu129"
    text = data.decode().replace("--model-path /m", "--model-path /m --cuda-graph-backend-decode disabled")
    assert [c for c, _ in codes(text, "Dockerfile")] == ["SGL032"]


def test_dockerfile_fragment_without_from_is_read():
    """A doc's ``dockerfile`` block often shows a CMD alone: its commands are read (the image is unknown)."""
    data = b'ARG M=/m\nRUN python3 -m sglang.launch_server --model-path $M\nCMD ["python3", "-m", "sglang.launch_server", "--tp-size", "2"]\n'
    run, cmd = extract_dockerfile(data)
    assert args_of(run) == ["--model-path", "/m"] and args_of(cmd) == ["--tp-size", "2"]
    assert stage_image(data, data.index(b"CMD")) is None
    doc = "```dockerfile\nCMD [\"python3\", \"-m\", \"sglang.launch_server\", \"--model-path\", \"/m\", \"%s\"]\n```\n" % CANARY
    assert codes(doc, "README.md") == [("SGL001", CANARY)]


# --- notebooks --------------------------------------------------------------------------------------------


def _notebook(*cells: tuple[str, str]) -> str:
    return json.dumps({"cells": [{"cell_type": t, "metadata": {}, "source": s.splitlines(keepends=True)}
                                 for t, s in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def test_notebook_cells_and_positions():
    text = _notebook(("markdown", "# “t”\n```bash\npython -m sglang.launch_server --model-path /m --dtype bf16\n```\n"),
                     ("code", "x = 1\n!python -m sglang.launch_server --model-path {x} --quantization FP8\n"))
    result = check_document(Document(text, "n.ipynb", "notebook"))
    positions = [result.notebook.position(f.span.start) for f in result.findings]
    assert positions == [(1, 3, 56), (2, 2, 65)]
    assert [text.encode()[f.span.start:f.span.end] for f in result.findings] == [b"bf16", b"FP8"]


def test_notebook_cell_magics():
    assert cell_magic(b"%%bash\nls\n", detect_language) == ("shell", 7)
    assert cell_magic(b"%%writefile serve\n#!/bin/bash\nexec x\n", detect_language) == ("shell", 18)
    assert cell_magic(b"%%writefile Dockerfile\nFROM x\n", detect_language) == ("dockerfile", 23)
    assert cell_magic(b"%%time\nx = 1\n", detect_language) is None


def test_notebook_source_as_one_string_and_escapes():
    data = b'{"cells": [{"cell_type": "code", "source": "a = \\"\\u00e9\\"\\n"}], "metadata": {}}'
    (cell,) = read_notebook(data).cells
    assert cell.text == 'a = "\u00e9"\n' and cell.language == "python"
    quote = data.index(b'\\"')
    assert cell.file_span(Span(4, 5)) == Span(quote, quote + 2)  # the escaped quote: two bytes of the JSON text
    assert cell.file_span(Span(5, 7)) == Span(quote + 2, quote + 8)  # é: two bytes of text, one `\\u` escape


def test_notebook_outputs_are_stepped_over_and_the_next_cells_keep_their_positions():
    outputs = [{"output_type": "stream", "name": "stdout", "text": ['{"a": [1, "]}", "\\"{"]}\n', "x]]}}\n"]},
               {"output_type": "display_data", "data": {"text/plain": ["[{"]}, "metadata": {}}]
    cells = [{"cell_type": "code", "metadata": {}, "outputs": outputs, "source": ["print(1)\n"]},
             {"cell_type": "code", "metadata": {}, "outputs": [],
              "source": ["!python -m sglang.launch_server --model-path /m --quantization FP8\n"]}]
    text = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
    first, second = read_notebook(text.encode()).cells
    assert first.text == "print(1)\n" and second.text.startswith("!python")
    result = check_document(Document(text, "n.ipynb", "notebook"))
    assert [(f.code, text.encode()[f.span.start:f.span.end]) for f in result.findings] == [("SGL002", b"FP8")]
    assert result.notebook.position(result.findings[0].span.start) == (2, 1, second.text.index("FP8") + 1)
    with pytest.raises(ValueError):  # broken JSON inside the outputs is still no notebook
        read_notebook(text.replace('"x]]}}', '"x]]}}" 1', 1).encode())


def test_notebook_that_is_not_json_is_an_error_not_a_traceback(tmp_path: Path, capsys):
    path = tmp_path / "broken.ipynb"
    path.write_text("{not json")
    assert main(["check", "--isolated", str(path)]) == 2
    assert "not a notebook" in capsys.readouterr().err


def test_notebook_json_output_has_cell_and_in_cell_lines(tmp_path: Path, capsys):
    path = tmp_path / "n.ipynb"
    path.write_text(_notebook(("code", "import sglang as sgl\n\nsgl.Engine(model_path='/m', dtype='bf16')\n")))
    main(["check", "--isolated", "--format", "json", str(path)])
    (diag,) = json.loads(capsys.readouterr().out)["diagnostics"]
    assert (diag["cell"], diag["start"], diag["code"]) == (1, {"line": 3, "column": 36}, "SGL002")


# --- Helm ---------------------------------------------------------------------------------------------------


def test_helm_values_fill_simple_references_only(tmp_path: Path):
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: x\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("dtype: bf16\nlist: [a]\n")
    template = chart / "templates" / "d.yaml"
    text = ("containers:\n  - name: s\n    command: [python3, -m, sglang.launch_server, --model-path, /m,\n"
            "              --dtype, '{{ .Values.dtype }}', --quantization, '{{ .Values.dtype | quote }}',\n"
            "              --load-format, '{{ .Values.list }}']\n")
    template.write_text(text)
    assert [(f.code, f.message[:6]) for f in check(text, str(template))] == [("SGL002", "`bf16`")]
    assert check(text, str(tmp_path / "d.yaml")) == []  # not in a chart: every template is unknown


def test_notebook_every_character_maps_to_the_json_bytes_it_is_decoded_from():
    text = _notebook(("code", 'print("tab\\t, quote \\", é, 😀, \\\\ and / ")\n'), ("markdown", "`x` </b> ünï\n"))
    data = json.dumps(json.loads(text), indent=1).encode()  # json.dumps escapes é and 😀 as \\u…
    paths = sorted((Path(__file__).parent / "fixtures" / "kinds" / "notebook").rglob("*.ipynb"))
    for raw in [data, text.encode()] + [p.read_bytes() for p in paths]:
        reference = json.loads(raw)["cells"]
        for cell, ref in zip(read_notebook(raw).cells, reference):
            assert cell.text == "".join(ref["source"])
            i = 0
            for ch in cell.text:
                n = len(ch.encode())
                start, end = cell.starts[i], cell.ends[i + n - 1]
                assert json.loads(b'"' + raw[start:end] + b'"') == ch
                i += n
