"""YAML deployment files → sglang launches (:mod:`sglang_lsp.extract.yaml.scan`): which launches are
found in Kubernetes manifests, compose files, shell embedded in YAML, Helm templates and sglang
``--config`` files, what their argv words are, and that every word points at its exact bytes."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from sglang_lsp.base import queries
from sglang_lsp.base.document import Document
from sglang_lsp.engine.check import Options, check_document
from sglang_lsp.extract.yaml.scan import extract_yaml
from sglang_lsp.extract.yaml.tree import mask_templates


def scan(text: str, path: str = "deploy.yaml", base_dir: str | None = None):
    doc = Document(textwrap.dedent(text), path, "yaml")
    return doc, extract_yaml(doc, base_dir)


def argv(inv) -> list[str | None]:
    return [w.text for w in inv.args]


def src(doc: Document, span) -> str:
    return doc.slice(span.start, span.end)


def check(text: str, path: str = "deploy.yaml"):
    doc = Document(textwrap.dedent(text), path, "yaml")
    # (the deployment checks SGL050–SGL060 have tests of their own: test_deployment_checks.py)
    result = check_document(doc, Options(ignore=("SGL05", "SGL06")))
    assert not result.errors
    return doc, result.findings


def codes(findings) -> list[str]:
    return [f.code for f in findings]


def at(doc: Document, finding) -> str:
    return src(doc, finding.span)


POD = """\
apiVersion: v1
kind: {kind}
metadata:
  name: x
spec:
{body}
"""


def _pod_spec(indent: int) -> str:
    pad = " " * indent
    return textwrap.indent(textwrap.dedent("""\
        containers:
          - name: sglang
            image: lmsysorg/sglang:latest
            command: ["python3", "-m", "sglang.launch_server"]
            args: ["--model-path", "m", "--tp-size", "2"]
        """), pad)


WORKLOADS = {
    "Pod": _pod_spec(2),
    "Deployment": "  template:\n    spec:\n" + _pod_spec(6),
    "StatefulSet": "  template:\n    spec:\n" + _pod_spec(6),
    "DaemonSet": "  template:\n    spec:\n" + _pod_spec(6),
    "ReplicaSet": "  template:\n    spec:\n" + _pod_spec(6),
    "Job": "  template:\n    spec:\n" + _pod_spec(6),
    "CronJob": "  jobTemplate:\n    spec:\n      template:\n        spec:\n" + _pod_spec(10),
    "InferenceService": "  predictor:\n" + _pod_spec(4),
}


@pytest.mark.parametrize("kind", sorted(WORKLOADS))
def test_every_workload_kind(kind):
    doc, s = scan(POD.format(kind=kind, body=WORKLOADS[kind]))
    assert len(s.invocations) == 1
    inv = s.invocations[0]
    assert [w.text for w in inv.program] == ["python3", "-m", "sglang.launch_server"]
    assert argv(inv) == ["--model-path", "m", "--tp-size", "2"]
    assert all(w.origin == "yaml" for w in inv.program + inv.args)


def test_leader_worker_set_and_list_items():
    doc, s = scan("""\
        apiVersion: v1
        kind: List
        items:
          - apiVersion: leaderworkerset.x-k8s.io/v1
            kind: LeaderWorkerSet
            spec:
              leaderWorkerTemplate:
                leaderTemplate:
                  spec:
                    containers:
                      - name: leader
                        command: [sglang, serve, --model-path, m, --node-rank, "0"]
                workerTemplate:
                  spec:
                    initContainers:
                      - name: wait
                        command: [sh, -c, "sleep 5"]
                    containers:
                      - name: worker
                        command: [sglang, serve, --model-path, m, --node-rank, $(LWS_WORKER_INDEX)]
        """)
    assert [argv(i) for i in s.invocations] == [["--model-path", "m", "--node-rank", "0"],
                                              ["--model-path", "m", "--node-rank", None]]
    assert not s.findings  # LWS_WORKER_INDEX is injected by the LeaderWorkerSet controller


def test_exact_spans_for_every_scalar_style():
    doc, s = scan("""\
        kind: Pod
        spec:
          containers:
            - name: a
              command:
                - python3
                - '-m'
                - "sglang.launch_server"
              args:
                - --tp-size
                - 8
                - '--host'
                - "0.0.0.0"
                - "--served-model-name"
                - "it\\u00e9m"
                - 'it''s'
        """)
    inv = s.invocations[0]
    words = inv.program + inv.args
    assert [src(doc, w.span) for w in words] == [
        "python3", "-m", "sglang.launch_server", "--tp-size", "8", "--host", "0.0.0.0", "--served-model-name",
        "it\\u00e9m", "it''s"]
    assert [w.quote for w in words] == [None, "'", '"', None, None, "'", '"', '"', '"', "'"]
    assert argv(inv)[-2:] == ["itém", "it's"]
    item = inv.args[-2]
    assert src(doc, item.sub_span(2, 3)) == "\\u00e9"


def test_flow_sequences_and_numbers():
    doc, s = scan("""\
        kind: Pod
        spec:
          containers:
          - {name: a, command: [python3, -m, sglang.launch_server], args: [--tp, 2, --enable-metrics, --port,
                                                                          "30000"]}
        """)
    inv = s.invocations[0]
    assert argv(inv) == ["--tp", "2", "--enable-metrics", "--port", "30000"]
    assert src(doc, inv.args[-1].span) == "30000"
    assert codes(s.findings) == ["SGL025"]  # the unquoted 2
    assert at(doc, s.findings[0]) == "2"


def test_kubernetes_variables():
    doc, s = scan("""\
        kind: StatefulSet
        spec:
          template:
            spec:
              containers:
                - name: a
                  env:
                    - name: MODEL
                      value: /models/llama
                    - name: RANK
                      valueFrom: {fieldRef: {fieldPath: "metadata.labels['apps.kubernetes.io/pod-index']"}}
                    - name: ADDR
                      value: "$(HOST):5000"
                    - name: HOST
                      value: head-0
                  command: [python3, -m, sglang.launch_server]
                  args: [--model-path, $(MODEL), --node-rank, $(RANK), --dist-init-addr, $(ADDR),
                         --served-model-name, "$$(MODEL)", --api-key, $(MISSING), --host, $(HOST)x]
        """)
    inv = s.invocations[0]
    assert argv(inv) == ["--model-path", "/models/llama", "--node-rank", None, "--dist-init-addr", None,
                         "--served-model-name", "$(MODEL)", "--api-key", None, "--host", "head-0x"]
    model = inv.args[1]
    assert src(doc, model.span) == "$(MODEL)"  # the word sits where it is used …
    assert doc.slice(model.char_spans[0][0], model.char_spans[-1][1]) == "/models/llama"  # … its text came from env
    assert inv.env["MODEL"] == "/models/llama" and inv.env["RANK"] is None
    assert codes(s.findings) == ["SGL023", "SGL023"]
    assert [at(doc, f) for f in s.findings] == ["$(HOST)", "$(MISSING)"]
    assert "before `HOST` is defined" in s.findings[0].message


def test_bash_c_block_scalar_positions():
    doc, s = scan("""\
        kind: StatefulSet
        spec:
          template:
            spec:
              containers:
                - name: a
                  env:
                    - {name: TP, value: "16"}
                    - name: POD_INDEX
                      valueFrom: {fieldRef: {fieldPath: metadata.name}}
                  command: ["/bin/bash", "-c"]
                  args:
                    - |
                      set -e
                      exec python3 -m sglang.launch_server \\
                        --model-path "$MODEL" \\
                        --tp-size $(TP) --node-rank $(POD_INDEX) \\
                        --port "$PORT"
        """)
    assert len(s.invocations) == 1
    inv = s.invocations[0]
    assert argv(inv) == ["--model-path", None, "--tp-size", "16", "--node-rank", None, "--port", None]
    flags = [w for w in inv.args if w.text and w.text.startswith("--")]
    assert [src(doc, w.span) for w in flags] == ["--model-path", "--tp-size", "--node-rank", "--port"]
    line, col = doc.byte_to_linecol(flags[1].span.start)
    assert doc.line_text(line - 1)[col - 1 :].startswith("--tp-size $(TP)")
    assert not s.findings


@pytest.mark.parametrize("header", ["|", "|-", "|+", "|2", ">", ">-", ">2-"])
def test_block_scalar_styles_in_scripts(header):
    indicator = header[1:2].isdigit()
    body_pad = " " * (8 + (2 if indicator else 4))
    lines = ["python3 -m sglang.launch_server", "--model-path m", "--tp-size 4"]
    sep = " \\" if header.startswith("|") else ""
    body = "\n".join(body_pad + line + (sep if i < 2 else "") for i, line in enumerate(lines))
    text = f"kind: Pod\nspec:\n  containers:\n    - name: a\n      command: [sh, -c]\n      args:\n        - {header}\n{body}\n"
    doc = Document(text, "p.yaml", "yaml")
    s = extract_yaml(doc)
    inv = s.invocations[0]
    assert argv(inv) == ["--model-path", "m", "--tp-size", "4"]
    for w in inv.args:
        assert src(doc, w.span) == w.text


def test_compose_string_list_environment_and_entrypoint():
    doc, s = scan("""\
        services:
          a:
            image: lmsysorg/sglang
            environment:
              - MODEL=Qwen/Qwen2.5-7B-Instruct
              - TOKEN=${HF_TOKEN}
            command: python3 -m sglang.launch_server --model-path "Qwen/Qwen2.5 7B" --port ${PORT:-30000} --tp 2 --api-key a\\ b
          b:
            environment: {TP: "4"}
            entrypoint: [python3, -m]
            command: [sglang.launch_server, --model-path, m, --api-key, "$$ecret"]
          c:
            entrypoint: ["/bin/sh", "-c"]
            environment:
              TP: 4
            command: ["exec python3 -m sglang.launch_server --model-path m --tp-size $$TP"]
          d:
            image: postgres
            command: postgres -c max_connections=200
        """, "docker-compose.yml")
    a, b, c = s.invocations
    assert argv(a) == ["--model-path", "Qwen/Qwen2.5 7B", "--port", None, "--tp", "2", "--api-key", "a b"]
    assert a.open  # an interpolation could be several words
    assert a.env == {"MODEL": "Qwen/Qwen2.5-7B-Instruct", "TOKEN": None}
    assert src(doc, a.args[1].span) == '"Qwen/Qwen2.5 7B"'
    assert argv(b) == ["--model-path", "m", "--api-key", "$ecret"]
    assert b.env == {"TP": "4"}
    assert argv(c) == ["--model-path", "m", "--tp-size", "4"]
    assert src(doc, c.args[-1].span) == "$$TP"


def test_compose_merge_keys_and_aliases():
    doc, s = scan("""\
        x-sglang: &sglang
          image: lmsysorg/sglang
          command: &cmd [python3, -m, sglang.launch_server, --model-path, m, --tp-size, eight]
        services:
          a:
            <<: *sglang
          b:
            command: *cmd
        """, "compose.yaml")
    assert len(s.invocations) == 2
    doc, findings = check(doc.text, "compose.yaml")
    assert codes(findings) == ["SGL003"]  # one place in the file, reported once
    assert at(doc, findings[0]) == "eight"


def test_github_actions_skypilot_gitlab():
    doc, s = scan("""\
        envs:
          MODEL_NAME: meta-llama/Llama-3.1-8B-Instruct
        run: |
          python -m sglang.launch_server --model-path $MODEL_NAME --port 8000
        jobs:
          serve:
            env:
              TP: ${{ matrix.tp }}
            steps:
              - run: python -m sglang.launch_server --model-path m --tp-size $TP
        serve-job:
          script:
            - pip install sglang
            - sglang serve --model-path m --port 30000
        """, "ci.yaml")
    assert [argv(i) for i in s.invocations] == [
        ["--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--port", "8000"],
        ["--model-path", "m", "--tp-size", None],
        ["--model-path", "m", "--port", "30000"],
    ]
    model = s.invocations[0].args[1]
    assert src(doc, model.span) == "$MODEL_NAME"
    assert doc.slice(model.char_spans[0][0], model.char_spans[-1][1]) == "meta-llama/Llama-3.1-8B-Instruct"


def test_helm_template_is_masked_at_the_same_positions():
    text = 'a: {{ .Values.x }}\n{{- if .Values.y }}\nb: "{{ .Values.z }}"\n{{- end }}\n'
    masked, ranges = mask_templates(text.encode())
    assert len(masked) == len(text.encode())
    assert masked.decode().splitlines() == ["a: xxxxxxxxxxxxxxx", " " * 19, 'b: "xxxxxxxxxxxxxxx"', " " * 10]
    assert len(ranges) == 4


def test_helm_template_values_are_unknown_and_nothing_else_is_reported():
    doc, findings = check("""\
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: {{ include "x.fullname" . }}
        spec:
          template:
            spec:
              {{- with .Values.tolerations }}
              tolerations: {{ toYaml . | nindent 8 }}
              {{- end }}
              containers:
                - name: {{ .Chart.Name }}
                  command: ["python3", "-m", "sglang.launch_server"]
                  args:
                    - --model-path
                    - {{ .Values.model | quote }}
                    - --tp-size={{ .Values.tp }}
                    - --quantization
                    - FP8
                    {{- range .Values.extraArgs }}
                    - {{ . }}
                    {{- end }}
        """, "templates/deployment.yaml")
    assert codes(findings) == ["SGL002"]
    assert at(doc, findings[0]) == "FP8"
    doc, s = scan(doc.text, "templates/deployment.yaml")
    inv = s.invocations[0]
    assert argv(inv)[:3] == ["--model-path", None, None]
    assert inv.args[2].known_prefix == "--tp-size="
    assert inv.open


def test_config_file_detected_by_content():
    doc, s = scan("model-path: m\ntp-size: 2\nmem-fraction-static: 0.8\n", "whatever.yaml")
    assert len(s.configs) == 1 and not s.invocations
    doc, s = scan("host: 0.0.0.0\nport: 8080\nlog-level: info\n", "app-settings.yaml")
    assert not s.configs  # only generic keys: not evidence of an sglang config


def test_config_key_with_underscores_is_refused_like_sglang_does():
    doc, findings = check("model-path: m\ntp_size: 4\n", "serve.yaml")
    assert codes(findings) == ["SGL010"]
    assert at(doc, findings[0]) == "tp_size"


def test_configmap_config_merged_into_its_launch():
    doc, findings = check("""\
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: cfg}
        data:
          serve.yaml: |
            model-path: m
            tp-size: 8
            quantization: FP8
        ---
        kind: Pod
        spec:
          containers:
            - name: a
              command: [python3, -m, sglang.launch_server, --config, /etc/sglang/serve.yaml, --tp-size, "4"]
        """)
    assert codes(findings) == ["SGL019", "SGL002"]
    assert at(doc, findings[0]) == "tp-size"
    assert at(doc, findings[1]) == "FP8"


def test_config_only_inside_the_container_is_unknown_not_missing():
    doc, findings = check("""\
        kind: Pod
        spec:
          containers:
            - name: a
              command: [python3, -m, sglang.launch_server, --config, /etc/sglang/serve.yaml]
        """)
    assert findings == []  # no SGL016 (not ours to find) and no SGL014 (the file may set --model-path)


def test_compose_bind_mounted_config(tmp_path: Path):
    (tmp_path / "serve.yaml").write_text("model-path: m\ntp_size: 2\n", encoding="utf-8")
    compose = tmp_path / "compose.yaml"
    compose.write_text(textwrap.dedent("""\
        services:
          a:
            volumes: ["./serve.yaml:/config/serve.yaml:ro"]
            command: [python3, -m, sglang.launch_server, --config, /config/serve.yaml]
        """), encoding="utf-8")
    doc = Document(compose.read_text(encoding="utf-8"), str(compose), "yaml")
    result = check_document(doc)
    assert codes(result.findings) == ["SGL010"]
    assert result.findings[0].span.path.endswith("serve.yaml")


def test_yaml_syntax_problems():
    doc, findings = check("kind: Pod\nspec:\n  containers:\n  - name: a\n\tcommand: [python3, -m, sglang.launch_server]\n")
    assert codes(findings) == ["SGL022"] and "tab" in findings[0].message
    doc, findings = check("run: |\n  python -m sglang.launch_server --model-path m\n<<<<<<< HEAD\nx: 1\n=======\nx: 2\n>>>>>>> b\n")
    assert "SGL022" in codes(findings) and at(doc, findings[codes(findings).index("SGL022")]) == "<<<<<<<"
    doc, findings = check('a: "python -m sglang.launch_server\nb: [unclosed\n')
    assert "SGL022" in codes(findings)


def test_broken_yaml_without_sglang_is_silent():
    doc, findings = check("a: [unclosed\n\tb: <<<<<<< x\n", "other.yaml")
    assert findings == []


def test_unrelated_yaml_is_not_even_parsed(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("parsed a file that has nothing to do with sglang")

    monkeypatch.setattr(queries, "parser", boom)
    doc, s = scan("apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  ports: [{port: 80}]\n")
    assert not s.invocations and not s.configs and not s.findings


def test_several_words_in_one_list_item():
    doc, findings = check("""\
        kind: Pod
        spec:
          containers:
            - name: a
              command: [python3, -m, sglang.launch_server]
              args: ["--model-path m", "--quantization FP8"]
        """)
    assert codes(findings) == ["SGL026", "SGL026", "SGL002"]
    assert at(doc, findings[0]) == "--model-path"
    assert at(doc, findings[2]) == "FP8"
    fix = findings[1].fixes[0]
    assert fix.edits[0].new_text == "=" and src(doc, fix.edits[0].span) == " "


def test_folded_backslash_is_reported_once_and_the_rest_checked_as_meant():
    doc, findings = check("""\
        services:
          a:
            command: >
              python3 -m sglang.launch_server \\
              --model-path m \\
              --tp-size x
        """, "compose.yaml")
    assert codes(findings) == ["SGL024", "SGL024", "SGL003"]
    assert [at(doc, f) for f in findings] == ["\\", "\\", "x"]


def test_non_string_args_fix_quotes_the_item():
    doc, findings = check("""\
        kind: Pod
        spec:
          containers:
            - name: a
              command: [python3, -m, sglang.launch_server, --model-path, m, --enable-metrics, "--tp-size", 2]
        """)
    assert codes(findings) == ["SGL025"]
    assert findings[0].fixes[0].edits[0].new_text == '"2"'


def test_helm_values_holding_a_command_string():
    doc, findings = check("""\
        replicaCount: 1
        sglang:
          command: "python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --quantization FP8"
          extra: |
            sglang serve --model-path m --port abc
        """, "values.yaml")
    assert codes(findings) == ["SGL002", "SGL003"]
    assert [at(doc, f) for f in findings] == ["FP8", "abc"]


def test_untitled_yaml_is_recognised_by_content():
    from sglang_lsp.engine.check import detect_language

    assert detect_language(None, "apiVersion: v1\nkind: Pod\n") == "yaml"
    assert detect_language(None, "# settings\n---\nservices:\n  a: {}\n") == "yaml"
    assert detect_language(None, "model-path: m\ntp-size: 2\n") == "yaml"
    assert detect_language(None, "python -m sglang.launch_server --model-path m\n") == "shell"


def test_single_container_keys_of_serving_crds():
    # OME's ClusterServingRuntime inlines a container as `runner:`, Dynamo's graph services as
    # `extraPodSpec.mainContainer:`; both were skipped, so their launches went unchecked
    doc, found = scan("""\
        apiVersion: ome.io/v1beta1
        kind: ClusterServingRuntime
        spec:
          engineConfig:
            runner:
              name: ome-container
              image: lmsysorg/sglang:v0.5.5
              command: [python3, -m, sglang.launch_server, --tp-size, "2"]
        ---
        apiVersion: nvidia.com/v1alpha1
        kind: DynamoGraphDeployment
        spec:
          services:
            Worker:
              extraPodSpec:
                mainContainer:
                  image: lmsysorg/sglang:latest
                  args: [python3, -m, sglang.launch_server, --port, "8000"]
        """)
    assert [argv(inv) for inv in found.invocations] == [["--tp-size", "2"], ["--port", "8000"]]


@pytest.mark.parametrize("options", ["--", "-e", "-e --"])
def test_shell_options_between_dash_c_and_the_script(options):
    # `bash -lc -- 'script'`: bash takes the first operand after its options as the script
    cmd = ", ".join(f'"{o}"' for o in ["/bin/bash", "-lc", *options.split()])
    doc, found = scan(POD.format(kind="Pod", body=f"""\
  containers:
    - name: s
      command: [{cmd}]
      args:
        - python3 -m sglang.launch_server --tp-size 2
"""))
    assert [argv(inv) for inv in found.invocations] == [["--tp-size", "2"]]
    assert src(doc, found.invocations[0].args[1].span) == "2"


def test_format_fields_in_a_harness_command_string_are_unknown():
    # a benchmark harness fills `{attention_backend}` and appends the model's arguments itself
    doc, findings = check("""\
        global:
          server_cmd: python3 -m sglang.launch_server --attention-backend {attention_backend}
        attention_backend: [fa3, flashinfer]
        """)
    assert findings == []
    # a real value next to a field is still checked; `${VAR}` stays a shell expansion
    doc, findings = check("""\
        server_cmd: python3 -m sglang.launch_server --model-path ${MODEL} --attention-backend fa9 --tp {tp}
        """)
    assert codes(findings) == ["SGL002", "SGL007"]
    assert at(doc, findings[0]) == "fa9"


def test_bare_launcher_in_a_one_line_value_is_a_command_prefix():
    # benchmark harnesses keep the launcher apart from the flags they add to it
    doc, findings = check("""\
        frameworks:
          sglang:
            server_command: python -m sglang.launch_server
            base_server_flags: {tp_size: 8, model_path: deepseek-ai/DeepSeek-V3}
        """)
    assert findings == []
    # a script that runs the launcher alone still misses its model
    doc, findings = check("""\
        run: |
          python -m sglang.launch_server
        """)
    assert codes(findings) == ["SGL014"]


LINE_PATTERNS = {  # module: pattern → the anchor texts of its matches
    "scan": {"_CONTAINERS_KEY": "_CONTAINERS_TEXT", "SERVICES_KEY": "_SERVICES_TEXT"},
    "tree": {"KIND_KEY": "KIND_TEXT", "DOC_SEPARATOR": "DOC_SEPARATOR_TEXT"},
    "syntax": {"_CONFLICT_MARKER": "_CONFLICT_TEXT"},
}


@pytest.mark.parametrize("module,name", sorted((m, n) for m, names in LINE_PATTERNS.items() for n in names))
def test_line_matches_equal_a_scan_of_every_line(module, name):
    """The anchored line search finds exactly what the pattern finds over the whole file (every
    match holds one of the pattern's anchor texts), on every YAML file of the test data."""
    import importlib

    from sglang_lsp.extract.yaml.tree import line_matches

    mod = importlib.import_module(f"sglang_lsp.extract.yaml.{module}")
    pattern = getattr(mod, name)
    anchors = getattr(mod, LINE_PATTERNS[module][name])
    root = Path(__file__).parent
    files = sorted(root.glob("fixtures/**/*.y*ml")) + sorted(root.glob("../examples/**/*.y*ml"))
    extra = [b"kind: Pod\n- - container: x\n'runner' : y\n  \"kind\":\tList\r\n---\r\n...\n<<<<<<< HEAD\n=======\n"
             b"services:\nspec: {containers: []}\nkind:Pod\n---x\n"]
    assert files
    found = 0
    for data in [f.read_bytes() for f in files] + extra:
        expected = [m.span() for m in pattern.finditer(data)]
        assert [m.span() for m in line_matches(pattern, anchors, data)] == expected
        found += len(expected)
    assert found


def test_node_at_is_the_descendant_tree_sitter_finds_from_the_root():
    """The search from the top-level node around a range gives the node a search from the root
    gives, at every byte of multi-document files (also between documents, in comments and in a
    file that does not parse)."""
    from sglang_lsp.extract.yaml.scan import _Extractor
    from sglang_lsp.catalog.catalog import load_catalog

    texts = [Path(__file__).parent.joinpath("fixtures/yaml/lws_deepseek.yaml").read_text(encoding="utf-8"),
             "# head\n---\na: 1\n# between\n---\n- x\n- [y, z]\n...\n---\nk: {a: b\n---\nc: 'd'\n"]
    for text in texts:
        ex = _Extractor(Document(text, "x.yaml", "yaml"), None, load_catalog())
        root = ex.tree.root_node
        n = len(ex.data)
        for a in range(n):
            for b in (a + 1, min(a + 7, n)):
                assert ex.node_at(a, b).id == root.descendant_for_byte_range(a, b).id, (a, b)


def test_ascii_bounds_map_bytes_like_the_shell_source():
    """The ASCII fast path of remap_config places every byte range where Source.from_word does
    (characters spread over the file, zero-width ranges, the end of the word)."""
    from sglang_lsp.base.findings import Span
    from sglang_lsp.base.invocation import Word
    from sglang_lsp.extract.shell.source import Source
    from sglang_lsp.extract.yaml.configs import _ascii_bounds

    text = "tp-size: 8\nmodel: x"
    spans = [(100 + 2 * i, 101 + 2 * i) if i % 3 else (100 + 2 * i, 100 + 2 * i) for i in range(len(text))]
    host = Word(text, Span(100, 140), spans)
    starts, ends = _ascii_bounds(host)
    src = Source.from_word(host)
    for a in range(len(text) + 1):
        for b in range(a - 1, len(text) + 1):
            mapped = src.span(a, b)
            assert ((starts[a], ends[b - 1]) if b > a else (starts[a], starts[a])) == (mapped.start, mapped.end)
    assert _ascii_bounds(Word("é", Span(0, 2), [(0, 2)])) is None


def test_parents_are_the_nodes_a_walk_up_visits():
    """parents (found down from the document) lists what walking ``.parent`` lists, for the node
    at every byte of multi-document files, one of them broken."""
    from sglang_lsp.extract.yaml.scan import _Extractor
    from sglang_lsp.catalog.catalog import load_catalog

    texts = [Path(__file__).parent.joinpath("fixtures/yaml/lws_deepseek.yaml").read_text(encoding="utf-8"),
             "# head\n---\na: 1\n# between\n---\n- x\n- [y, z]\n...\n---\nk: {a: b\n---\nc: 'd'\n"]
    for text in texts:
        ex = _Extractor(Document(text, "x.yaml", "yaml"), None, load_catalog())
        for a in range(len(ex.data)):
            node = ex.node_at(a, a + 1)
            walk = []
            up = node.parent
            while up is not None:
                walk.append(up.id)
                up = up.parent
            assert [n.id for n in ex.parents(node)] == walk, a
