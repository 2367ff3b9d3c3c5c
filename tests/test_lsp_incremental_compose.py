"""The language server's re-check of a Compose file below the document: an edit inside one
service re-checks that service (sglang_lsp.engine.incremental.yaml_compose), and gives what a check
from scratch gives (random edit storms, as in tests/test_lsp_incremental_yaml.py)."""

from __future__ import annotations

import os
import random

import pytest

from sglang_lsp.base.document import Document
from sglang_lsp.engine.check import Options, check_document, launch_parse
from sglang_lsp.engine.incremental import recheck
from sglang_lsp.engine.incremental.yaml_compose import ComposeState

pytest.importorskip("pygls")

from sglang_lsp.lsp.documents import open_snapshot, with_tree  # noqa: E402
from test_lsp_incremental_yaml import SEEDS, _edit, _random_walk, _replace, bench_lsp  # noqa: E402

# shared fields merged into services (`<<:`), `$VAR` that only `environment:` sets (SGL060),
# GPU reservations, published ports, a router, an image for the other vendor (SGL061), a service
# that others merge (`&base`: an edit in it, or in one merging it, is checked from scratch)
COMPOSE = """# sglang behind a router, with shared defaults
x-defaults: &defaults
  image: lmsysorg/sglang:v0.5.23-cu129
  ipc: host
  environment:
    - HF_TOKEN=${HF_TOKEN}
    - MODEL=meta-llama/Llama-3.1-8B-Instruct
  deploy:
    resources:
      reservations:
        devices:
          - driver: nvidia
            count: 2
            capabilities: [gpu]

x-shm: &shm
  shm_size: 16g

services:
  router:
    image: lmsysorg/sglang:latest
    command: python3 -m sglang_router.launch_router --worker-urls http://llama:30000
    depends_on: [llama, qwen]
  llama:
    <<: *defaults
    ports:
      - "30000:30000"
    command:
      - python3
      - -m
      - sglang.launch_server
      - --model-path
      - $MODEL
      - --tp
      - "4"
      - --host
      - 127.0.0.1
  qwen:
    <<: [*defaults, *shm]
    environment:
      PORT: "30001"
    command: >
      bash -c 'python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct
      --port $PORT --tp 2 --quantization FP8'
  base: &base
    image: lmsysorg/sglang:v0.5.23-rocm700-mi30x
    command: ["python3", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3", "--tp", "8"]
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: 8
              capabilities: [gpu]
  derived:
    <<: *base
    command: ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "16", "--port", "30002"]
  plain:
    image: lmsysorg/sglang:v0.5.9
    entrypoint: ["python3", "-m", "sglang.launch_server"]
    command: ["--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--mem-fraction-static", "1.5", "--tp", "2"]
    environment:
      TP: "2"
    deploy:
      resources:
        reservations:
          devices:
            - capabilities: [gpu]
              device_ids: ["0", "1", "2"]
volumes:
  cache: {}
"""

# what an edit inserts: flags and values, list items, line breaks, keys a service reads (ports,
# GPUs, ipc, environment, volumes), `$VAR`, anchors and aliases (merge keys and others), a new
# service, container keys, `--config`, ConfigMaps, quotes and brackets that break the YAML
PIECES = [" --tp 4", "😀", "日本 ", "\n", "  ", "8", "0", "", "x", '"', "'", "#", "# c\n", ": ", "- ", "{", "[",
          "\\", " \\\n  --dp-size 2", "- --dtype\n", '- "half"\n', " --quantization awq", "--port=1 ", "$MODEL ",
          "${HF_TOKEN}", "$$HOME ", "$PORT", "&a ", "*a", "*defaults", "*base", "<<: *defaults\n", "<<: *shm\n",
          "<<: *base\n", "count: 4\n", "driver: amd\n", "amd.com", "rocm", "ipc: host\n", "shm_size: 1g\n",
          'ports: ["1:1"]\n', "network_mode: host\n", "--host 127.0.0.1 ", "127.0.0.1", "environment:\n",
          "  - MODEL=x\n", "PORT: 1\n", "volumes:\n  - ./serve.yaml:/etc/serve.yaml\n", "--config /etc/serve.yaml ",
          "containers:\n", "runner: ", "kind: ConfigMap\n", "python -m sglang.launch_server --tp 2 ", "sglang ",
          "  new:\n    image: lmsysorg/sglang:latest\n    command: [python3, -m, sglang.launch_server, --tp, '2']\n",
          "  x:\n", "x-more: &more\n  ipc: host\n", "---\n", "{{ .Values.x }}", "sglang-lsp: ignore[SGL007]",
          "healthcheck:\n  test: [CMD, python3, -m, sglang.launch_server]\n"]


def _bench_compose(lines: int = 400) -> str:
    return bench_lsp().make_compose(lines)


def _texts():
    yield COMPOSE
    yield _bench_compose()
    yield COMPOSE.replace("# sglang behind", "# 模型 😀 behind").replace("\n", "\r\n")
    more = _bench_compose(200).split("services:\n", 1)[1]  # (the bench's services after those of COMPOSE)
    yield COMPOSE.replace("volumes:\n  cache: {}\n", more + "volumes:\n  cache: {}\n")


def _random_edit(rng: random.Random, doc: Document, result) -> tuple[int, int, str]:
    if rng.random() < 0.75:  # in a launch's service: what typing mostly is
        where = rng.choice([(i.span.start, i.span.end) for i in result.invocations] or [(0, len(doc.data))])
        a = rng.randint(max(0, where[0] - 200), min(len(doc.data), where[1] + 200))
    else:
        a = rng.randint(0, len(doc.data))
    b = min(len(doc.data), a + rng.choice([0, 0, 1, 2, 5, 30]))
    return a, b, rng.choice(PIECES)


@pytest.mark.parametrize("seed", range(SEEDS))
def test_incremental_compose_rechecks_equal_a_check_from_scratch(seed):
    """Random edits of Compose services (flags, values, line breaks, merge keys, anchors and
    aliases, `$VAR`, GPU reservations, ports, new services, container keys, `--config` …), each
    version re-checked from the previous one and equal to a check from scratch; a good share of
    them re-checked one service (the only incremental path of a Compose file)."""
    rng = random.Random(seed)
    texts = list(_texts())
    text = texts[seed % len(texts)]
    options = Options()
    snap = open_snapshot("file:///tmp/inc/compose.yaml", 1, text, "yaml")
    done = recheck(snap.doc, options, None, None)
    assert isinstance(done.state, ComposeState)
    taken = _random_walk(snap, options, done, rng, 60, 0.6, _random_edit)
    assert taken > 10


def test_an_edit_in_one_service_reuses_the_other_services():
    """A flag's value changed in one service: the launches of the other services are the
    previous ones (those after it moved by the length change), not extracted again."""
    text = _bench_compose(2000)
    first, second = _replace(text, "--port 30040\n", "--port 300401\n")
    assert isinstance(first.state, ComposeState) and second.incremental
    assert isinstance(second.state, ComposeState)
    old = {inv.span.start: inv for inv in first.result.invocations}
    new = second.result.invocations
    at = len(text[:text.index("--port 30040\n")].encode())
    edited = [inv for inv in new if inv.span.start < at < inv.span.end]
    before = [inv for inv in new if inv.span.end < at and inv not in edited]
    after = [inv for inv in new if inv.span.start > at and inv not in edited]
    assert len(edited) == 1 and len(before) > 10 and len(after) > 10
    assert all(old.get(inv.span.start) is inv for inv in before)  # the very same objects
    assert all(old.get(inv.span.start - 1) is not None and old[inv.span.start - 1] is not inv
               for inv in after)  # moved by one byte
    assert all(launch_parse(second.result, inv) is launch_parse(first.result, inv) for inv in before)
    assert old.get(edited[0].span.start) is not edited[0]  # extracted again


@pytest.mark.parametrize("old, new", [
    ('      - "4"\n      - --host', '      - "8"\n      - --host'),  # a value in a list of args
    ("--port $PORT --tp 2", "--port $PORT --tp 4 --enable-metrics"),  # a flag in a `bash -c` string
    ("      PORT: \"30001\"\n", "      PORT: \"30001\"\n      OTHER: x\n"),  # an environment entry
    ("    <<: [*defaults, *shm]\n", "    <<: *defaults\n"),  # a merge key, naming fields outside services
    ("    depends_on: [llama, qwen]\n", ""),  # depends_on: read by nothing
    ('      - "30000:30000"\n', '      - "30005:30000"\n'),  # a published port
    ('device_ids: ["0", "1", "2"]', 'device_ids: ["0", "1"]'),  # GPUs reserved
    ("    image: lmsysorg/sglang:v0.5.9\n", "    image: lmsysorg/sglang:v0.5.9-rocm700-mi30x\n"),  # another vendor
    ("      - 127.0.0.1\n", "      - 0.0.0.0\n"),  # a host
    ("--model-path\n      - $MODEL", "--model-path\n      - ${MODEL:-m}"),  # an interpolation with a default
])
def test_common_edits_are_rechecked_by_service(old, new):
    """Edits users make all the time inside one service re-check that service only, and give
    what a check from scratch gives."""
    first, second = _replace(COMPOSE, old, new)
    assert isinstance(first.state, ComposeState)
    assert second.incremental


@pytest.mark.parametrize("old, new", [
    ("    image: lmsysorg/sglang:v0.5.23-rocm700-mi30x\n",
     "    image: lmsysorg/sglang:v0.5.23-cu129\n"),  # `base`: others merge it (its anchor)
    ('"--tp", "16"', '"--tp", "4"'),  # `derived`: it merges a service
    ("            count: 2\n", "            count: 4\n"),  # x-defaults: outside the services
    ("  derived:\n", "  derived2:\n  derived:\n"),  # a new service: the entries around change
    ("  plain:\n    image", "  plain:\n  other:\n    image"),  # one service split in two
    ("    ports:\n      - \"30000:30000\"\n", "    ports: &p\n      - \"30000:30000\"\n"),  # an anchor
    ("    <<: *defaults\n    ports", "    <<: *base\n    ports"),  # an alias of a service's anchor
    ("      - python3\n      - -m\n", "      - *defaults\n      - python3\n      - -m\n"),  # an alias, no merge
    ('      - "4"\n      - --host', '      - "4"\n      - --config\n      - /etc/s.yaml\n      - --host'),
    ("    environment:\n      PORT", "    containers:\n      - x\n    environment:\n      PORT"),  # a container key
    ("    depends_on: [llama, qwen]\n", "    healthcheck:\n      test: python -m sglang.launch_server --tp 2\n"),
    ("    depends_on: [llama, qwen]\n", "    depends_on: [llama, qwen\n"),  # the YAML breaks
])
def test_what_other_services_read_is_checked_from_scratch(old, new):
    """An edit another service reads (a service others merge, shared fields), one that changes
    which services there are, or one that adds what the file reads as a whole (an anchor, an alias
    other than a merge key, a `--config` path resolved against every service's bind mounts, a
    container key, a launch read after every service's) is checked from scratch. Either way the
    result equals a check from scratch."""
    first, second = _replace(COMPOSE, old, new)
    assert isinstance(first.state, ComposeState)
    assert not second.incremental


@pytest.mark.parametrize("text", [
    COMPOSE.replace("    command:\n      - python3\n      - -m\n      - sglang.launch_server\n",
                    "    command: &cmd\n      - python3\n      - -m\n      - sglang.launch_server\n")
    .replace("  plain:\n", "  again:\n    command: *cmd\n  plain:\n"),  # an alias that is no merge key
    COMPOSE.replace("x-defaults: &defaults\n  image: lmsysorg/sglang:v0.5.23-cu129",
                    "x-defaults: &defaults\n  image: lmsysorg/sglang:v0.5.23-rocm700-mi30x"),  # SGL061 in x-defaults
    COMPOSE + "---\nservices: {}\n",  # two documents
    COMPOSE.replace("services:\n", "services: &all\n"),  # an anchor on the services
    COMPOSE.replace("      - 127.0.0.1\n", "      - 127.0.0.1\n      - --config\n      - /etc/s.yaml\n"),  # --config
    COMPOSE.replace("x-shm: &shm\n", "x-shm: &shm\n  containers: []\n"),  # a container key
    COMPOSE.replace("    depends_on: [llama, qwen]\n", "    labels:\n      run: python -m sglang.launch_server\n"),
])
def test_files_whose_services_read_each_other_are_checked_whole(text):
    """A Compose file where a service may read another one's text, or a finding lies outside every
    service, gets no state for re-checking by service: its next edit is checked from scratch."""
    done = recheck(Document(text, "/tmp/inc/compose.yaml", "yaml"), Options(), None, None)
    assert not isinstance(done.state, ComposeState)


def test_dot_env_next_to_the_file(tmp_path):
    """SGL060 reads the `.env` file next to the Compose file: the edited service reads it again
    (as a check from scratch does), the others keep what they read; a `.env` the server refuses
    (SGL071, on the first interpolation of the file) leaves the file to checks from scratch."""
    (tmp_path / ".env").write_text("MODEL=x\n", encoding="utf-8")
    path = tmp_path / "compose.yaml"
    uri = path.as_uri()
    options = Options()
    snap = open_snapshot(uri, 1, COMPOSE, "yaml")
    first = recheck(snap.doc, options, None, None)
    assert isinstance(first.state, ComposeState)
    assert [f.code for f in first.result.findings].count("SGL060") == 1  # `$PORT` only: `.env` sets MODEL
    snap = with_tree(snap, first.result.tree, "yaml")
    at = len(COMPOSE[:COMPOSE.index("--port $PORT")].encode())
    snap = _edit(snap, at, at, "--dtype half ", 2)
    second = recheck(snap.doc, options, first.result, first.state, old_tree=snap.tree)
    assert second.incremental
    fresh = check_document(Document(snap.doc.text, snap.doc.path, "yaml"), options)
    assert [(f.code, f.span) for f in second.result.findings] == [(f.code, f.span) for f in fresh.findings]
    if hasattr(os, "mkfifo"):
        os.remove(tmp_path / ".env")
        os.mkfifo(tmp_path / ".env")
        refused = recheck(Document(COMPOSE, str(path), "yaml"), options, None, None)
        assert "SGL071" in [f.code for f in refused.result.findings]
        assert not isinstance(refused.state, ComposeState)


@pytest.mark.parametrize("old, new", [
    ('    depends_on: [llama, qwen]\n', ''),  # the last line of a service
    ('              device_ids: ["0", "1", "2"]\n', ''),  # the last line of the last service
    ('              device_ids: ["0", "1", "2"]\n', '              device_ids: ["0", "1", "2"]\n  # c\n'),
])
def test_the_line_break_after_a_service_belongs_to_it(old, new):
    """Deleting a service's last line (its line break, up to the next service or top-level key)
    is an edit of that service."""
    first, second = _replace(COMPOSE, old, new)
    assert second.incremental


def test_what_follows_the_last_service_is_checked_from_scratch():
    """Text typed after the last service, outside ``services:`` (a top-level key, which may hold
    containers or launches read before or after every service): from scratch."""
    for new in ("x-tail: {containers: [{command: [python3, -m, sglang.launch_server]}]}\n",
                "x-run: python -m sglang.launch_server --tp 2\n"):
        first, second = _replace(COMPOSE, "volumes:\n", new + "volumes:\n")
        assert not second.incremental
